"""Streamlit glue shared by the pages: the session's experiment, kept in step with the URL, and its controls."""

from __future__ import annotations

from dataclasses import fields, replace
from urllib.parse import urlencode

import streamlit as st
from streamlit.runtime import Runtime
from streamlit.runtime.pages_manager import PagesManager
from streamlit.runtime.scriptrunner import get_script_run_ctx

from rnnlab import session_store
from rnnlab.cells import CARRY_INITS, CELLS
from rnnlab.config import CONTROL_RANGES, HELP, LIMITS, Config
from rnnlab.model import CARRY_MODES
from rnnlab.optimizers import OPTIMIZERS
from rnnlab.sharing import CONFIG_KEYS, Shared, parse_query, to_query
from rnnlab.tasks import TASKS

LABELS = {"task": "Task", "cell": "Cell", "features": "Hidden features", "carry_mode": "Carry mode",
          "carry_init": "carry_init", "carry_scale": "Initialiser parameter", "seq_len": "Sequence length T",
          "batch": "Batch size", "optimizer": "Optimiser", "lr": "Learning rate", "clip": "Clip (global norm)",
          "steps": "Training steps", "seed": "Seed", "chunk": "Steps per chunk", "kernel_size": "Kernel size"}
NAMES = {"task": TASKS, "cell": CELLS, "carry_init": CARRY_INITS, "optimizer": OPTIMIZERS}
TOKEN = session_store.TOKEN_PARAM  # the tab's token in the URL: never part of a link to share
RELOAD_GRACE_S = 2.0  # how long a reload waits for the old page's connection to close


def use_app_navigation() -> None:
    """Run through app.py's ``st.navigation`` even when a shared link is the server's first request.

    Streamlit treats a folder named ``pages/`` next to the main script as an old-style multipage app until
    ``st.navigation`` has run once, so a deep link (``/explore?...``) on a fresh server would run the page
    file alone, without app.py. Clearing that flag and rerunning hands the request to app.py. (AppTest
    starts every run in that mode, so buttons act through ``on_click`` callbacks, which run before it.)
    """
    if PagesManager.uses_pages_directory:
        PagesManager.uses_pages_directory = False
        st.rerun()


def shared_state() -> Shared:
    """The session's experiment; re-read from the URL when the URL changed from outside (a link, a preset).

    On a session's first run this also gives the tab its token (``sid`` in the URL) and, after a browser
    reload, takes back the run saved under it (see :func:`attach_session`).
    """
    use_app_navigation()
    ss = st.session_state
    url = st.query_params.to_dict()
    token = url.pop(TOKEN, None)
    if "sid" not in ss:
        attach_session(token)
    if "shared" not in ss or (url and url != ss.get("url_written")):
        shared = parse_query(url)
        ss.shared = shared
        ss.url_notes = list(shared.notes)
        ss.autorun_pending = shared.autorun
        for key in CONFIG_KEYS + ("compare_zero",):
            ss.pop(f"w_{key}", None)
    if token != ss.sid:
        st.query_params[TOKEN] = ss.sid
    return ss.shared


def session_id() -> str:
    """This Streamlit session's id."""
    ctx = get_script_run_ctx()
    return ctx.session_id if ctx is not None else "no session"


def connected(session: str) -> bool:
    """Whether Streamlit ``session`` still has its browser connection (False outside a real server)."""
    try:
        return Runtime.exists() and Runtime.instance().is_active_session(session) is True
    except Exception:  # a server shutting down: nobody is connected
        return False


def attach_session(token: str | None) -> None:
    """Once per session: the run kept under the URL's ``token`` when its session has gone (a reload), else a
    new token. A copy of the address opened while the owner is connected gets a new token and no run."""
    ss, me = st.session_state, session_id()
    kept = session_store.STORE.claim(token, me, connected, grace_s=RELOAD_GRACE_S)
    if kept is not None:
        ss.run = kept.fork()  # its own copy: the old session's thread may still be finishing a chunk
        ss.sid, ss.restored_step = token, ss.run.step
        session_store.STORE.save(token, me, ss.run)
    else:
        ss.sid = session_store.new_token()


def keep_run(run) -> None:
    """Keep the session's run on the server under the tab's token (or forget it), for a browser reload."""
    ss, me, store = st.session_state, session_id(), session_store.STORE
    if "sid" not in ss:
        return
    if run is None:
        store.discard(ss.sid, me)
    elif not store.save(ss.sid, me, run):  # a copy of the address took the token while this tab was away
        ss.sid = session_store.new_token()
        store.save(ss.sid, me, run)
        st.query_params[TOKEN] = ss.sid


def write_url(shared: Shared) -> None:
    """Put the experiment in the URL (without the one-shot ``run=1``), with the tab's token."""
    ss = st.session_state
    query = to_query(replace(shared, autorun=False))
    full = {**query, TOKEN: ss.sid} if "sid" in ss else query
    if st.query_params.to_dict() != full:
        st.query_params.from_dict(full)
    ss.url_written = query


def share_link(shared: Shared) -> str:
    """A link to this page's experiment for someone else: the settings, without the tab's token or autorun."""
    query = urlencode(to_query(replace(shared, autorun=False)))
    try:
        base = (st.context.url or "").split("?")[0].split("#")[0]
    except Exception:  # no browser context: a link relative to the page
        base = ""
    return f"{base}?{query}" if query else (base or "?")


def show_url_notes() -> None:
    """What the URL asked for that could not be used."""
    notes = st.session_state.get("url_notes")
    if notes:
        st.warning("Some settings in the link could not be used; defaults were kept:\n\n"
                   + "\n".join(f"- {n}" for n in notes), icon=":material/link_off:")


def _widget(name: str, value, config: Config):
    key = f"w_{name}"
    if key not in st.session_state:
        st.session_state[key] = value
    label, help_text = LABELS[name], HELP[name]
    if name in NAMES:
        options = list(NAMES[name])
        if name == "task":
            help_text += ". " + " ".join(f"{t.label}: {t.description}" for t in TASKS.values())
        return st.selectbox(label, options, key=key, help=help_text,
                            format_func=lambda n, reg=NAMES[name]: getattr(reg[n], "label", n))
    if name == "carry_mode":
        return st.radio(label, list(CARRY_MODES), key=key, horizontal=True,
                        help=" ".join(f"{k}: {v}." for k, v in CARRY_MODES.items()))
    if name in LIMITS:
        lo, hi = LIMITS[name]
        return int(st.number_input(label, min_value=lo, max_value=hi, step=1, key=key, help=help_text))
    if name == "seed":
        return int(st.number_input(label, min_value=0, max_value=2**31 - 1, step=1, key=key, help=help_text))
    if name in CONTROL_RANGES:
        lo, hi = CONTROL_RANGES[name]
        step, disabled = {"lr": 1e-3, "clip": 0.5, "carry_scale": 0.05}[name], False
        if name == "carry_scale":
            spec = CARRY_INITS[config.carry_init]
            label = f"carry_init {spec.param}" if spec.param else label
            disabled = spec.param is None
        return float(st.number_input(label, min_value=lo, max_value=hi, key=key, format="%g", step=step,
                                     help=help_text, disabled=disabled))
    raise KeyError(name)


def config_controls(shared: Shared) -> Config:
    """The experiment's controls in the sidebar (hidden ones keep their URL value); returns the new config."""
    current = shared.config
    values = {}
    advanced = ("chunk", "kernel_size")
    with st.sidebar:
        st.subheader("Experiment")
        for f in fields(Config):
            if f.name in shared.hidden or f.name in advanced:
                continue
            partial = replace(current, **values)
            if f.name == "carry_scale" and CARRY_INITS[partial.carry_init].param is None:
                continue
            values[f.name] = _widget(f.name, getattr(current, f.name), partial)
        shown = [a for a in advanced if a not in shared.hidden]
        if shown:
            with st.expander("Advanced"):
                for name in shown:
                    values[name] = _widget(name, getattr(current, name), replace(current, **values))
    return replace(current, **values)
