"""Heavy work from a page, through the executor (:mod:`rnnlab.server.executor`): the gate admits jobs, a job holds
a slot. The script thread submits the work and polls it, drawing the queue position and the progress between
polls (that is where Streamlit delivers Stop, a page change and a closed tab); leaving the loop in any way
cancels the job, so nothing runs that nobody waits for.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from rnnlab.server.clients import client_key
from rnnlab.server.embedded import EmbeddedExecutor
from rnnlab.server.executor import Executor, Job, Lease, QueueInfo, Work
from rnnlab.server.executors import current_executor
from ui.progress import job_progress

POLL_S = 0.25


def client_id() -> str:
    """Who is asking, for fair shares (:func:`rnnlab.server.clients.client_key`): this tab's address, session and
    websocket headers, read here and judged there."""
    try:
        address, headers = st.context.ip_address, dict(st.context.headers)
    except Exception:  # noqa: BLE001 - outside a running server
        address, headers = None, {}
    ctx = get_script_run_ctx()
    return client_key(address, ctx.session_id if ctx is not None else "", headers)


def executor_of(gate=None) -> Executor:
    """The server's executor; one on a given gate (a :class:`rnnlab.server.gate.JobGate`) when ``gate``."""
    return current_executor() if gate is None else EmbeddedExecutor(gate=gate)


def show_queue(placeholder, info: QueueInfo | None) -> None:
    """Where a job or lease is in the queue, and why it waits (nothing once it runs)."""
    if info is None:
        placeholder.empty()
    else:
        placeholder.info(str(info.message), icon=":material/hourglass_top:")  # a message: in the reader's language


def wait(job: Job, placeholder=None, draw: Callable[[Job], None] | None = None) -> Any:
    """Poll ``job`` until it finishes, drawing it between polls (``draw``, else its queue place and progress in
    ``placeholder``); its value, or its exception raised. Leaving in any other way cancels it."""
    placeholder = placeholder if placeholder is not None else st.empty()
    draw = draw or job_progress(job.work.label or job.work.kind, placeholder)
    try:
        while not job.poll(POLL_S):
            draw(job)
        placeholder.empty()
    finally:
        job.cancel()
    return job.result()


def run_job(work: Work, placeholder=None, lease: Lease | None = None, progress: str | None = None,
            executor: Executor | None = None) -> Any:
    """``work`` through the executor (inside ``lease``'s slot when given), waited for on the page with the queue
    place and (``progress``: what to call it) a progress bar; its value."""
    job = (executor or current_executor()).submit(work, lease=lease)
    placeholder = placeholder if placeholder is not None else st.empty()
    return wait(job, placeholder, job_progress(progress, placeholder) if progress else None)


@contextmanager
def job_slot(memory_bytes: int, placeholder=None, label: str = "", gate=None) -> Iterator[Lease]:
    """Hold one slot of the gate for the ``with`` body (a lease: pass it to :func:`run_job` for work inside it),
    showing the queue position while waiting. Leaving the body in any way frees the slot or the place."""
    placeholder = placeholder if placeholder is not None else st.empty()
    lease = executor_of(gate).lease(memory_bytes, label, client_id())
    try:
        while not lease.poll(POLL_S):
            show_queue(placeholder, lease.queue)
        placeholder.empty()
        yield lease
    finally:
        lease.release()
