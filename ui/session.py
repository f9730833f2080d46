"""The session's experiment, kept in step with the URL both ways, and the tab's reload token."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from urllib.parse import urlencode

import streamlit as st
from streamlit.runtime import Runtime
from streamlit.runtime.scriptrunner import get_script_run_ctx

from rnnlab.i18n import _
from rnnlab.server.storage import session_store
from rnnlab.sharing.urlstate import CONFIG_KEYS, UrlState, parse_query, to_query
from rnnlab.text import escape_markdown
from ui.queue import client_id

TOKEN = session_store.TOKEN_PARAM  # the tab's token in the URL: never part of a link to share
RELOAD_GRACE_S = 2.0  # how long a reload waits for the old page's connection to close


def url_state() -> UrlState:
    """The session's experiment; re-read from the URL when the URL changed from outside (a link, a preset).

    On a session's first run this also gives the tab its token (``sid`` in the URL) and, after a browser
    reload, takes back the run saved under it (see :func:`attach_session`).
    """
    ss = st.session_state
    url = st.query_params.to_dict()
    token = url.pop(TOKEN, None)
    if "sid" not in ss:
        attach_session(token)
    if "url_state" not in ss or (url and url != ss.get("url_written")):
        parsed = parse_query(url)
        ss.url_state = parsed
        ss.url_notes = list(parsed.notes)
        ss.url_read = url  # read again in the reader's language when the notes are shown
        ss.autorun_pending = parsed.autorun
        for key in (CONFIG_KEYS + ("compare_zero", "sweep_cells", "sweep_lengths", "sweep_weights")
                    + tuple(f"cmp_{name}" for name in parsed.compare)):
            ss.pop(f"w_{key}", None)  # the controls show the link's values
            ss.pop(f"kept_w_{key}", None)
    if token != ss.sid:
        st.query_params[TOKEN] = ss.sid
    return ss.url_state


def session_id() -> str:
    """This Streamlit session's id."""
    ctx = get_script_run_ctx()
    return ctx.session_id if ctx is not None else "no session"


def connected(session: str) -> bool:
    """Whether Streamlit ``session`` still has its browser connection (False outside a real server)."""
    try:
        return Runtime.exists() and Runtime.instance().is_active_session(session) is True
    except Exception:  # noqa: BLE001 - a server shutting down: nobody is connected
        return False


def tab_open(session: str) -> Callable[[], bool]:
    """A check that ``session``'s tab, connected now, is still open. Streamlit keeps running a script whose
    browser has gone, so loops of heavy work ask this between their pieces. A session with no connection now
    (outside a real server, e.g. in a test) has none to lose: the check is then always True."""
    if not connected(session):
        return lambda: True
    return lambda: connected(session)


session_store.STORE.is_connected = connected  # runs of tabs that are gone are kept as bytes


def attach_session(token: str | None) -> None:
    """Once per session: the run kept under the URL's ``token`` when its session has gone (a reload), else a
    new token. A copy of the address opened while the owner is connected (in this process or another) gets a new
    token and a copy of the run of its own (a fork): it never writes the owner's run."""
    ss, me, store = st.session_state, session_id(), session_store.STORE
    kept = store.claim(token, me, connected, grace_s=RELOAD_GRACE_S)
    if token is not None and kept is not None:
        ss.run = kept.fork()  # its own copy: the old session's thread may still be finishing a call
        ss.sid, ss.restored_step = token, ss.run.step
        store.save(token, me, ss.run, client_id())
        return
    ss.sid = session_store.new_token()
    copied = store.copy(token) if token is not None else None
    if copied is not None:
        ss.run = copied.fork()
        ss.forked_step = ss.run.step
        store.save(ss.sid, me, ss.run, client_id())


def keep_run(run, throttle: bool = False) -> None:
    """Keep the session's run on the server under the tab's token (or forget it), for a browser reload.

    While training (``throttle``), a run is kept again at most every few seconds; otherwise whenever it changed.
    """
    ss, me, store = st.session_state, session_id(), session_store.STORE
    if "sid" not in ss:
        return
    if run is None:
        store.discard(ss.sid, me)
    elif not store.save(ss.sid, me, run, client_id(), throttle):  # a copy of the address took the token
        ss.sid = session_store.new_token()
        store.save(ss.sid, me, run, client_id())
        st.query_params[TOKEN] = ss.sid


def write_url(parsed: UrlState) -> None:
    """Put the experiment in the URL (without the one-shot ``run=1``), with the tab's token."""
    ss = st.session_state
    query = to_query(replace(parsed, autorun=False))
    full = {**query, TOKEN: ss.sid} if "sid" in ss else query
    if st.query_params.to_dict() != full:
        st.query_params.from_dict(full)
    ss.url_written = query


def share_link(parsed: UrlState) -> str:
    """A link to this page's experiment for someone else: the settings, without the tab's token or autorun."""
    query = urlencode(to_query(replace(parsed, autorun=False)))
    try:
        base = (st.context.url or "").split("?")[0].split("#")[0]
    except Exception:  # noqa: BLE001 - no browser context: a link relative to the page
        base = ""
    return f"{base}?{query}" if query else (base or "?")


def show_url_notes() -> None:
    """What the URL asked for that could not be used."""
    ss = st.session_state
    if not ss.get("url_notes"):
        return
    notes = parse_query(ss.url_read).notes if "url_read" in ss else ss.url_notes
    if notes:
        st.warning(_("Some settings in the link could not be used; defaults were kept:") + "\n\n"
                   + "\n".join(f"- {escape_markdown(n)}" for n in notes), icon=":material/link_off:")


def kept(key: str, default) -> None:
    """Give the widget ``key`` (created right after this) its last value, even after a visit to a page
    without it: Streamlit forgets the state of a widget that a run did not draw."""
    ss, shadow = st.session_state, f"kept_{key}"
    if key in ss:
        ss[shadow] = ss[key]
    ss[key] = ss.get(shadow, default)
