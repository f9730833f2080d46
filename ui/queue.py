"""Waiting for a server-wide training slot, with the queue position on screen."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import streamlit as st

from rnnlab.server.scheduler import SLOTS, Scheduler, Ticket
from rnnlab.text import format_bytes

POLL_S = 0.5


def queue_message(ticket: Ticket, scheduler: Scheduler) -> str:
    """What a waiting user reads."""
    running, waiting = scheduler.counts()
    text = (f"All {scheduler.limit} training slots of this server are busy ({running} running, {waiting} "
            f"waiting). You are number {ticket.position} in the queue; your training starts by itself.")
    if ticket.position == 1 and running < scheduler.limit:
        text += (f" It is waiting for memory: it needs about {format_bytes(ticket.memory_bytes)} and "
                 f"{format_bytes(max(0, scheduler.available_bytes()))} is free.")
    return text


@contextmanager
def training_slot(memory_bytes: int, placeholder=None, label: str = "",
                  scheduler: Scheduler = SLOTS) -> Iterator[Ticket]:
    """Hold a server-wide training slot for the ``with`` body, showing the queue position while waiting.

    Leaving the body in any way (finished, Stop, a widget change, the tab closed) frees the slot or the place
    in the queue.
    """
    placeholder = placeholder if placeholder is not None else st.empty()
    ticket = scheduler.ticket(memory_bytes, label)
    try:
        while not ticket.wait(POLL_S):
            placeholder.info(queue_message(ticket, scheduler), icon=":material/hourglass_top:")
        placeholder.empty()
        yield ticket
    finally:
        ticket.release()
