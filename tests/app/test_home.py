"""The home page: what the app teaches, the JAX backend, and one-click presets."""

import jax

from rnnlab.sharing.presets import PRESETS
from rnnlab.sharing.urlstate import parse_query
from tests.app.conftest import open_page
from tests.app_pages import PAGE_NAMES
from tests.app_pages import PAGES as APP_PAGES


def test_home_shows_backend_and_presets():
    at = open_page("home")
    caption = " ".join(c.value for c in at.caption)
    assert f"Runs on this server's {jax.default_backend().upper()} (" in caption
    intro = " ".join(m.value for m in at.markdown)
    for term in ("**carry**", "**initial carry**", "||dL/dh_t||"):  # each explained where it first appears
        assert term in intro
    links = at.main.get("page_link")
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


def test_each_preset_asks_for_a_prediction_then_explains():
    at = open_page("home")
    for preset in PRESETS:
        assert preset.question and 2 <= len(preset.choices) <= 4 and 0 <= preset.answer < len(preset.choices)
        radio = at.radio(key=f"predict_{preset.key}")
        assert radio.value is None and list(radio.options) == list(preset.choices)
    first, second = PRESETS[0], PRESETS[1]
    at.radio(key=f"predict_{first.key}").set_value(first.choices[first.answer]).run()
    wrong = next(c for i, c in enumerate(second.choices) if i != second.answer)
    at.radio(key=f"predict_{second.key}").set_value(wrong).run()
    text = [m.value for m in at.markdown]
    assert f"You predicted: *{first.choices[first.answer]}*, right. What the run shows: " \
           f"*{first.choices[first.answer]}*." in text
    assert f"You predicted: *{wrong}*, not what happens. What the run shows: *{second.choices[second.answer]}*." in text
    assert first.lesson in text



def test_the_sidebar_links_every_page_of_the_navigation_by_its_title():
    """app.py draws the sidebar's page links itself (Streamlit's own list names files on a fresh server)."""
    for page in PAGE_NAMES:
        at = open_page(page)
        links = at.sidebar.get("page_link")
        assert [link.proto.label for link in links] == [p.title for p in APP_PAGES], page
        assert [link.proto.page for link in links] == [p.url_path for p in APP_PAGES], page
