"""The migration checker on real old code: recall and false alarms on the corpus, and every rewrite run.

The corpus (``corpus/``) is code nobody on this project wrote, cut verbatim from public repositories' releases on
PyPI; ``corpus_sites.py`` lists every site in it that breaks or silently changes on current Flax. The harness
(``corpus_harness.py``) runs each snippet; ``old_flax/flax_0_6_11.json`` holds what the originals gave on a real
flax 0.6.11 / jax 0.4.13 install (``old_flax/record.py`` rebuilds it).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from corpus_harness import read, run_snippet, runnable, snippet_ids
from corpus_sites import NEEDS_A_PERSON, SITES

from rnnlab.flaxapi import migrate
from rnnlab.flaxapi.migrate.report import VERIFIED_REWRITES

RECORDED = json.loads((Path(__file__).parent / "old_flax" / "flax_0_6_11.json").read_text())
HEADER = re.compile(r"^# repository: (https://\S+)\n# file: (\S+) in the (\S+) (\S+) source distribution on PyPI")


def test_every_snippet_names_its_repository_and_file():
    for snippet in snippet_ids():
        match = HEADER.match(read(snippet))
        assert match, f"{snippet}: the header must name its repository and file"
        assert "# ---- verbatim excerpt" in read(snippet)


def test_the_corpus_size():
    repositories = {HEADER.match(read(s)).group(1) for s in snippet_ids()}  # type: ignore[union-attr]
    assert len(snippet_ids()) >= 30
    assert len(repositories) >= 6
    assert sum(len(sites) for sites in SITES.values()) >= 80


def test_every_snippet_has_its_sites_listed():
    assert set(SITES) == set(snippet_ids())


def test_recall_and_false_alarms():
    expected = {(s, line, rule) for s, sites in SITES.items() for line, rule in sites}
    got = {(s, f.line, f.rule) for s in snippet_ids() for f in migrate.check(read(s)).findings}
    missed, false_alarms = expected - got, got - expected
    recall = 1 - len(missed) / len(expected)
    assert recall >= 0.95, f"recall {recall:.1%}; missed: {sorted(missed)}"
    assert not false_alarms, f"false alarms: {sorted(false_alarms)}"


def test_the_recording_covers_every_runnable_snippet():
    """Adding or editing a snippet means running old_flax/record.py again."""
    assert set(RECORDED["corpus"]) == {s for s in snippet_ids() if runnable(s)}
    assert all(result["ok"] for result in RECORDED["corpus"].values()), "every original ran on flax 0.6.11"


@pytest.mark.parametrize("snippet", [s for s in snippet_ids() if runnable(s)])
def test_original_fails_on_the_pinned_flax(snippet):
    """The listed sites are real: as written, each snippet fails on today's Flax."""
    assert not run_snippet(snippet, read(snippet))["ok"]


@pytest.mark.parametrize("snippet", [s for s in snippet_ids() if runnable(s)])
def test_rewrite_runs_with_flax_0_6_11_shapes(snippet):
    """Pasted code is never run by the app; here the test runs the corpus, which is trusted."""
    result = migrate.rewrite(read(snippet))
    assert result.problems == ()
    if snippet in NEEDS_A_PERSON:
        assert result.remaining, f"{snippet}: {NEEDS_A_PERSON[snippet]}"
        return
    assert result.remaining == ()
    ran = run_snippet(snippet, result.source)
    assert ran["ok"], ran.get("error")
    assert ran["shapes"] == RECORDED["corpus"][snippet]["shapes"]


def test_what_is_left_for_a_person_says_why_and_where():
    for snippet, why in NEEDS_A_PERSON.items():
        result = migrate.rewrite(read(snippet))
        assert result.remaining, why
        for finding in result.remaining:
            assert not finding.fixable and finding.line > 0 and len(str(finding.message)) > 80


def test_only_verified_kinds_are_rewritten():
    """Every kind of rewrite the app applies was run above on real code (and nothing else is applied)."""
    applied = {c.rule for s in snippet_ids() for c in migrate.rewrite(read(s)).changes}
    assert applied == {kind.split("+")[0] for kind in VERIFIED_REWRITES}
    source = "import flax.linen as nn\nb = nn.ConvLSTM(features=4, kernel_size=(3, 3))\n"
    assert migrate.rewrite(source).changes == ()  # a rename nothing in the corpus needed: left to a person
