"""Heavy work from a page, through the executor (:mod:`rnnlab.server.work.executor`): the gate admits jobs, a job holds
a slot. The script thread submits the work and polls it, drawing the queue position and the progress between
polls (that is where Streamlit delivers Stop, a page change and a closed tab); leaving the loop in any way
cancels the job, so nothing runs that nobody waits for.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Protocol

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from rnnlab.i18n import Msg
from rnnlab.server.access import PAGE_TURNS, client_key
from rnnlab.server.work import Job, Lease, QueueInfo, Work, current_executor
from ui.progress import job_progress

POLL_S = 0.25


def client_id() -> str:
    """Who is asking, for fair shares (:func:`rnnlab.server.access.clients.client_key`): this tab's address, session and
    websocket headers, read here and judged there."""
    try:
        address, headers = st.context.ip_address, dict(st.context.headers)
    except Exception:  # noqa: BLE001 - outside a running server
        address, headers = None, {}
    ctx = get_script_run_ctx()
    return client_key(address, ctx.session_id if ctx is not None else "", headers)


class Polled(Protocol):
    """A job or a lease: polled until it is ready (the job finished, the lease admitted)."""

    def poll(self, timeout_s: float = 0.0) -> bool: ...


def poll_until_ready(handle: Polled, draw: Callable[[float], None]) -> None:
    """The one waiting loop of the pages: poll ``handle`` every :data:`POLL_S` until it is ready, calling
    ``draw(seconds waited)`` between polls. Drawing is where Streamlit delivers Stop, a page change or a closed tab:
    the caller's ``finally`` then cancels the job or releases the lease."""
    began = time.monotonic()
    if handle.poll(0):
        return
    draw(0.0)  # at once: what it waits for is on the page before the first poll's wait
    while not handle.poll(POLL_S):
        PAGE_TURNS.step_aside()  # a page that waits longer lets the next page be drawn meanwhile
        draw(time.monotonic() - began)


def show_queue(placeholder, info: QueueInfo | None) -> None:
    """Where a job or lease is in the queue, and why it waits (nothing once it runs)."""
    if info is None:
        placeholder.empty()
    else:
        placeholder.info(str(info.message), icon=":material/hourglass_top:")  # a message: in the reader's language


def submit(work: Work, lease: Lease | None = None) -> Job:
    """``work`` submitted to the server's executor (inside ``lease``'s slot when given): the job to wait for."""
    return current_executor().submit(work, lease=lease)


def wait(job: Job, placeholder=None, draw: Callable[[Job, float], None] | None = None) -> Any:
    """Wait for ``job``, drawing it between polls (``draw(job, seconds waited)``, else its queue place, what it does
    and its progress in ``placeholder``); its value, or its exception raised. Leaving in any other way cancels it."""
    placeholder = placeholder if placeholder is not None else st.empty()
    draw = draw or job_progress(job.work.label or job.work.kind, placeholder)
    try:
        poll_until_ready(job, lambda waited: draw(job, waited))
        placeholder.empty()
    finally:
        job.cancel()
    return job.result()


def run_job(work: Work, placeholder=None, lease: Lease | None = None, progress: Msg | str | None = None,
            expected_s: float | None = None, quiet_s: float = 0.0) -> Any:
    """``work`` through the executor (inside ``lease``'s slot when given), waited for on the page: its queue place,
    then what it does (``progress``, else its label) with the time so far (and ``expected_s``, about how long it
    takes; said once it has taken ``quiet_s``) or the share it reports done; its value."""
    job = submit(work, lease)
    placeholder = placeholder if placeholder is not None else st.empty()
    return wait(job, placeholder, job_progress(progress or work.label or work.kind, placeholder, expected_s, quiet_s))


@contextmanager
def job_slot(memory_bytes: int, placeholder=None, label: str = "") -> Iterator[Lease]:
    """Hold one slot of the gate for the ``with`` body (a lease: pass it to :func:`run_job` for work inside it),
    showing the queue position while waiting. Leaving the body in any way frees the slot or the place."""
    placeholder = placeholder if placeholder is not None else st.empty()
    lease = current_executor().lease(memory_bytes, label, client_id())
    try:
        poll_until_ready(lease, lambda _waited: show_queue(placeholder, lease.queue))
        placeholder.empty()
        yield lease
    finally:
        lease.release()
