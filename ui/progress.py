"""Progress of long work on a page: what runs, how far it is and about how long is left."""

from __future__ import annotations

import time
from collections.abc import Callable

import streamlit as st

from rnnlab.estimate import format_seconds

SHOW_LEFT_AFTER = 0.05  # the time left is guessed once this fraction is done


def progress_bar(what: str, placeholder=None) -> Callable[[float], None]:
    """A ``progress(fraction)`` for :mod:`rnnlab` work that reports between pieces: a bar with ``what``, the
    share done and the time left at the pace so far.

    Each call writes to the page, which is where a click, a page change or a closed tab (Streamlit asks the
    script to stop when its connection closes) ends the work.
    """
    slot = placeholder if placeholder is not None else st.empty()
    started = time.monotonic()

    def update(fraction: float) -> None:
        fraction = min(1.0, max(0.0, float(fraction)))
        elapsed = time.monotonic() - started
        text = f"{what}: {fraction:.0%} done"
        if SHOW_LEFT_AFTER <= fraction < 1:
            text += f", about {format_seconds(elapsed * (1 - fraction) / fraction)} left"
        slot.progress(fraction, text=text)

    return update
