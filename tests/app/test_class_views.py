"""A class on a Gradient flow or Compare link: every figure, table and sentence a student receives from the shared
views is what a lone student's page builds for itself (the views forgotten first), each language on one of the two
pages (a view is kept per language, built by one code path); the second student's page builds nothing, and a link
whose result is kept takes no slot of the server."""

from __future__ import annotations

import json

import pytest

from rnnlab.config import Config
from rnnlab.figures.shared import VIEWS
from rnnlab.probing import probes
from rnnlab.server.work import gate as gates
from rnnlab.server.work import jobs
from rnnlab.training import program
from tests.app.conftest import SMALL, open_page

GRADIENT_LINK = {**SMALL, "sweep_cells": "simple,gru", "sweep_lengths": "5,10", "sweep_weights": "untrained",
                 "run": "1"}
COMPARE_LINK = {**SMALL, "steps": "20", "run": "1"}


def page_content(at) -> dict:
    """What the student receives: every chart's spec, the Markdown, captions, alerts and tables, in order."""
    return {"charts": [json.loads(c.proto.spec) for c in at.get("plotly_chart")],
            "markdown": [m.value for m in at.markdown], "captions": [c.value for c in at.caption],
            "alerts": [a.value for a in (*at.success, *at.info, *at.warning, *at.error)],
            "tables": [d.value.to_json(orient="split", default_handler=str) for d in at.dataframe]}


def lone_and_shared(page: str, link: dict, lang: str) -> tuple[dict, dict, int]:
    """The page as a lone student receives it (its result computed before, no view kept: the page builds its own)
    and as the next student does (from the views the first one built), and how many views the next one built."""
    open_page(page, **link, lang=lang)  # the teacher's: the result computed (and the page's estimates settled)
    VIEWS.clear()
    lone = page_content(open_page(page, **link, lang=lang))
    builds = VIEWS.stats()["builds"]
    shared = page_content(open_page(page, **link, lang=lang))
    return lone, shared, VIEWS.stats()["builds"] - builds


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_gradient_flow_shared_views_are_what_a_lone_student_sees(lang):
    lone, shared, built_again = lone_and_shared("gradients", GRADIENT_LINK, lang)
    assert len(lone["charts"]) == 3 and lone["tables"]  # parts 1-3 and the sweep's table
    assert shared == lone
    assert built_again == 0


@pytest.mark.parametrize("lang", ["ru"])
def test_compare_shared_views_are_what_a_lone_student_sees(lang):
    lone, shared, built_again = lone_and_shared("compare", COMPARE_LINK, lang)
    assert len(lone["charts"]) == 3 and lone["tables"]  # the curves, the two bars and the table
    assert shared == lone
    assert built_again == 0


def test_a_kept_result_takes_no_slot(monkeypatch):
    tickets: list = []
    real = gates.JobGate.ticket

    def counting(self, *args, **kwargs):
        tickets.append(args)
        return real(self, *args, **kwargs)

    for page, link in (("gradients", GRADIENT_LINK), ("compare", COMPARE_LINK)):
        open_page(page, **link)  # computed (and kept) once
        monkeypatch.setattr(gates.JobGate, "ticket", counting)
        open_page(page, **link)
        monkeypatch.undo()
        assert tickets == [], page


def test_the_untrained_model_is_built_once_for_everyone(monkeypatch):
    built = []
    real = jobs.Run
    monkeypatch.setattr(jobs, "Run", lambda config, **kwargs: built.append(config) or real(config, **kwargs))
    link = {**SMALL, "seed": "41"}
    first, second = (open_page("gradients", **link) for _ in range(2))
    assert len(built) == 1 and first.session_state.untrained is second.session_state.untrained


def test_the_sweep_estimate_sets_up_no_program(monkeypatch):
    monkeypatch.setattr(program, "Program", lambda static: pytest.fail(f"set up a program for {static}"))
    said = probes.estimate_decay_sweep(Config(seed=43), ["gru", "lstm", "simple"], [10, 20, 40, 80, 160], "trained")
    assert said
