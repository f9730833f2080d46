"""A fresh server's first seconds on a page: what it is loading, said in the main area until the pages' libraries are
imported. Imports nothing heavy itself, so that it is drawn within a second of the link opening."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import streamlit as st

from rnnlab.i18n import t
from rnnlab.server.access import PAGE_TURNS

POLL_S = 0.25
USUAL_S = 8  # how long the imports usually take on a 2-core machine (JAX, Flax, Optax, pandas, Plotly)


def wait_for_start(imported: Callable[[float], bool]) -> None:
    """Wait until ``imported(timeout_s)`` is True (the server's start-up imports are done), saying meanwhile, in the
    main area, what the server is loading and for how long so far; nothing is drawn once they are done."""
    if imported(0):
        return
    note, began, shown = st.empty(), time.monotonic(), -1
    while not imported(POLL_S):
        elapsed = int(time.monotonic() - began)
        if elapsed != shown:  # once a second; also where a page change or a closed tab ends the wait
            shown = elapsed
            # TRANSLATORS: {elapsed} and {usual} are whole seconds
            note.info(t("The server has just started and is loading its libraries (JAX, Flax, Optax, pandas, "
                        "Plotly), once per start: {elapsed} s so far, usually about {usual} s.",
                        elapsed=elapsed, usual=USUAL_S), icon=":material/hourglass_top:")
    note.empty()


def waiting_words(place: int, waited: float) -> str:
    """What a page waiting for its turn says: its ``place`` in line (1: next) and the seconds ``waited``, rounded, at
    least 1 (the note first shows after half a second)."""
    # TRANSLATORS: {place} is a whole number (1: this page is next); {elapsed} a whole number of seconds (1 or more)
    return t("Many pages are opening at once (a class on one link?). They are drawn one at a time, in the order they "
             "came: yours is number {place} in line, {elapsed} s so far.", place=place, elapsed=max(1, round(waited)))


@contextmanager
def page_turn() -> Iterator[None]:
    """The page's run as one turn of :data:`rnnlab.server.access.turns.PAGE_TURNS`: when many pages open at once (a
    class on one link), they are drawn one at a time in the order they came. A page that waits over half a second for
    its turn says so in the main area, with its place in line, until its turn comes."""
    note = None

    def waiting(place: int, waited: float) -> None:
        nonlocal note
        note = note or st.empty()
        note.info(waiting_words(place, waited), icon=":material/hourglass_top:")

    with PAGE_TURNS.turn(waiting):
        if note is not None:
            note.empty()
        yield


def import_helpers() -> None:
    """Every helper module the pages use (they import the heavy libraries): imported by the server's warm-up in one
    thread, so that a page's first run after the start draws at once and no two pages import one package at once
    (tests/server/test_compilation.py checks that the list is every module of ui/)."""
    import ui.charts
    import ui.class_student
    import ui.class_teacher
    import ui.classroom
    import ui.compiling
    import ui.controls
    import ui.example_view
    import ui.explore_charts
    import ui.explore_controls
    import ui.explore_state
    import ui.explore_training
    import ui.language
    import ui.marks
    import ui.navigation
    import ui.notices
    import ui.progress
    import ui.queue
    import ui.session
    import ui.share
    import ui.slots
    import ui.work  # noqa: F401
