"""The home page: what the app teaches, the JAX backend, and one-click presets."""

import jax

from rnnlab.presets import PRESETS
from rnnlab.urlstate import parse_query
from tests.app.conftest import open_page


def test_home_shows_backend_and_presets():
    at = open_page("home")
    caption = " ".join(c.value for c in at.caption)
    assert f"Runs on this server's {jax.default_backend().upper()} (" in caption
    intro = " ".join(m.value for m in at.markdown)
    for term in ("**carry**", "**initial carry**", "||dL/dh_t||"):  # each explained where it first appears
        assert term in intro
    links = at.get("page_link")
    assert len(links) == len(PRESETS) >= 5
    for link, preset in zip(links, PRESETS):
        assert preset.title in link.proto.label
        assert link.proto.page.endswith(preset.page) or preset.page in link.proto.page


def test_every_preset_parses_to_its_configuration_and_starts():
    for preset in PRESETS:
        shared = parse_query(preset.query())
        assert shared.notes == [] and shared.autorun
        assert shared.config == preset.config and shared.config.validate() == []


def test_a_bad_link_to_home_says_what_was_not_used():
    at = open_page("home", cell="foo", features="abc")
    warning = " ".join(w.value for w in at.warning)
    assert "could not be used" in warning and "foo" in warning and "abc" in warning
    assert not at.exception
