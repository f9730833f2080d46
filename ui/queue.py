"""Waiting for a server-wide training slot, with the queue position on screen."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from rnnlab.server.gate import GATE, JobGate, Ticket, client_of
from rnnlab.server.results import RESULTS, Results
from rnnlab.server.shared_runs import Watch
from rnnlab.text import format_bytes

POLL_S = 0.5


def queue_message(ticket: Ticket, scheduler: JobGate) -> str:
    """What a waiting user reads: why it waits, its place, and that it starts by itself."""
    running, waiting = scheduler.counts()
    reason = scheduler.waiting_reason(ticket)
    if reason == "share":
        return (f"You already have {scheduler.per_client} job(s) running on this server, your share while others "
                f"may be waiting ({running} running, {waiting} waiting in all). This one starts by itself when "
                "one of yours ends (Stop it in its tab to start this one sooner).")
    if reason == "memory":
        return (f"Waiting for memory: this needs about {format_bytes(ticket.memory_bytes)} and "
                f"{format_bytes(max(0, scheduler.available_bytes()))} of the server's budget is free while "
                f"{running} job(s) run. It starts by itself when enough is freed; smaller settings (T, batch, "
                "features) need less.")
    return (f"All {scheduler.limit} slots of this server are busy ({running} running, {waiting} waiting). You are "
            f"number {ticket.position} in the queue; your job starts by itself.")


def client_id() -> str:
    """Who is asking, for fair shares (:func:`rnnlab.server.gate.client_of`): the browser's machine, so that
    more tabs do not get more; per tab for a browser on the server's own machine."""
    try:
        address, headers = st.context.ip_address, dict(st.context.headers)
    except Exception:  # noqa: BLE001 - outside a running server
        address, headers = None, {}
    ctx = get_script_run_ctx()
    return client_of(address, ctx.session_id if ctx is not None else "", headers)


@contextmanager
def training_slot(memory_bytes: int, placeholder=None, label: str = "",
                  scheduler: JobGate = GATE) -> Iterator[Ticket]:
    """Hold a server-wide training slot for the ``with`` body, showing the queue position while waiting.

    Leaving the body in any way (finished, Stop, a widget change, the tab closed) frees the slot or the place
    in the queue.
    """
    placeholder = placeholder if placeholder is not None else st.empty()
    ticket = scheduler.ticket(memory_bytes, label, client_id())
    try:
        while not ticket.wait(POLL_S):
            placeholder.info(queue_message(ticket, scheduler), icon=":material/hourglass_top:")
        placeholder.empty()
        yield ticket
    finally:
        ticket.release()


@contextmanager
def lead_slot(watch: Watch, placeholder=None, label: str = "training", scheduler: JobGate = GATE) -> Iterator[None]:
    """Watch a shared run (``rnnlab.server.shared_runs``) for the ``with`` body, with one server slot for it.

    Its watchers wait on one place in the queue (the position on screen) and the first to see it admitted gives
    the slot to the run; later watchers start at once. The slot (or the place) is freed when the last watcher
    leaves, however it leaves.
    """
    placeholder = placeholder if placeholder is not None else st.empty()
    with watch:
        while watch.needs_slot():
            ticket = watch.waiting_ticket(
                lambda: scheduler.ticket(watch.lead.config.memory_bytes(), label, client_id()))
            if ticket.wait(POLL_S):
                if not watch.hold(ticket):
                    ticket.release()
            else:
                placeholder.info(queue_message(ticket, scheduler), icon=":material/hourglass_top:")
        placeholder.empty()
        yield


def shared_result(key: Hashable | None, make: Callable[[], Any], gate: Callable[[], AbstractContextManager],
                  placeholder=None, results: Results = RESULTS) -> Any:
    """``make()``'s result, computed once per server for ``key`` (``rnnlab.server.results``; None: not shared).

    Kept: at once. Being computed for another session: this one waits for it (saying so), holding no slot.
    Else computed here inside ``gate()`` (a server slot).
    """
    if key is None:
        with gate():
            return make()
    placeholder = placeholder if placeholder is not None else st.empty()
    value = results.get(key)
    while value is None and results.computing(key):
        placeholder.info("Someone else on this server is computing exactly this; waiting for their result…",
                         icon=":material/hourglass_top:")
        value = results.get(key, wait_s=POLL_S)
    placeholder.empty()
    if value is None:
        with gate():
            value = results.compute(key, make)
    return value
