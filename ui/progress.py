"""Progress of long work on a page: what runs, how far it is and about how long is left."""

from __future__ import annotations

import time
from collections.abc import Callable

import streamlit as st

from rnnlab.i18n import Msg, t, text
from rnnlab.server.access import PAGE_TURNS
from rnnlab.server.work import Job
from rnnlab.training.estimate import format_seconds

SHOW_LEFT_AFTER = 0.05  # the time left is guessed once this fraction is done
SETTLE_QUIET_S = 0.75  # longer than this, the page says what it waits for
SETTLE_LONGEST_S = 120.0  # a first call compiles first, which cannot be cut short


def progress_bar(what: Msg | str, placeholder=None) -> Callable[..., None]:
    """A ``progress(fraction)`` for :mod:`rnnlab` work that reports between pieces: a bar with ``what``, the
    share done and the time left at the pace so far. ``what`` and a note are messages or marked text (``N_``):
    they are shown in the reader's language.

    Each call writes to the page, which is where a click, a page change or a closed tab (Streamlit asks the
    script to stop when its connection closes) ends the work.
    """
    slot = placeholder if placeholder is not None else st.empty()
    started = time.monotonic()

    def update(fraction: float, note: Msg | str = "") -> None:
        fraction = min(1.0, max(0.0, float(fraction)))
        elapsed = time.monotonic() - started
        doing = text(note or what)
        if SHOW_LEFT_AFTER <= fraction < 1:
            left = format_seconds(elapsed * (1 - fraction) / fraction)
            # TRANSLATORS: a progress bar; {what} is what runs (e.g. "training"), {share} the part done (45%),
            # {left} a duration such as "12 s"
            said = t("{what}: {share:.0%} done, about {left} left", what=doing, share=fraction, left=left)
        else:
            said = t("{what}: {share:.0%} done", what=doing, share=fraction)
        slot.progress(fraction, text=said)

    return update


def job_progress(what: Msg | str, placeholder=None, expected_s: float | None = None,
                 quiet_s: float = 0.0) -> Callable[[Job, float], None]:
    """A drawing of a job for its waiting loop, ``draw(job, seconds waited)`` (the work itself never draws: it runs
    in another thread): its place in the queue while it waits, then a bar of the fraction it reports (with what it
    says it does), and before its first report what it does and for how long so far (about ``expected_s`` in all,
    when known), once it has taken ``quiet_s`` (work the page already shows, such as a training call, says nothing
    unless it is long). The page is never left blank while it waits."""
    slot = placeholder if placeholder is not None else st.empty()
    bar = progress_bar(what, slot)

    def draw(job: Job, waited: float) -> None:
        info = job.queue
        if info is not None:
            slot.info(str(info.message), icon=":material/hourglass_top:")  # in the reader's language
        elif job.progress is not None:
            bar(job.progress, job.note)
        elif waited >= quiet_s:
            slot.info(doing(what, waited, expected_s), icon=":material/hourglass_top:")
        else:
            slot.empty()  # still written: the page is where Stop, a page change or a closed tab arrive

    return draw


def doing(what: Msg | str, waited: float, expected_s: float | None = None) -> str:
    """"{what}… {elapsed} so far" (with "about {expected} in all" while that is ahead), in the reader's language."""
    elapsed = t("{s:.0f} s", s=int(waited))
    if expected_s and waited < expected_s:
        # TRANSLATORS: {what} says what runs (e.g. "Starting a run"); {elapsed} and {expected} are durations
        return t("{what}… {elapsed} so far, about {expected} in all.", what=text(what), elapsed=elapsed,
                 expected=format_seconds(max(1.0, expected_s)))
    # TRANSLATORS: {what} says what runs (e.g. "Starting a run"); {elapsed} is a duration such as "3 s"
    return t("{what}… {elapsed} so far.", what=text(what), elapsed=elapsed)


def settle(wait: Callable[[float], bool]) -> bool:
    """Wait for work that an interrupted script run (a click, a reload) left in progress, so that the page draws
    what it ended with. ``wait(seconds)`` returns True once that work is done. It waits quietly for under a second
    (a compiled call's end), then says in the page why it is still waiting, up to :data:`SETTLE_LONGEST_S`; True
    once the work is done."""
    if wait(SETTLE_QUIET_S):
        return True
    PAGE_TURNS.step_aside()  # a page that waits lets the next page be drawn meanwhile
    note = st.empty()
    note.info(t("Finishing the computation still in progress: a first call compiles before it runs, which cannot be "
                "cut short. The page shows what it trained when it ends."), icon=":material/hourglass_top:")
    done = wait(SETTLE_LONGEST_S)
    note.empty()
    return done
