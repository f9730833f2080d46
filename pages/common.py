"""Streamlit glue shared by the pages: the session's experiment, kept in step with the URL, and its controls."""

from __future__ import annotations

from dataclasses import fields, replace

import streamlit as st
from streamlit.runtime.pages_manager import PagesManager

from rnnlab.cells import CARRY_INITS, CELLS
from rnnlab.config import HELP, LIMITS, Config
from rnnlab.model import CARRY_MODES
from rnnlab.optimizers import OPTIMIZERS
from rnnlab.sharing import CONFIG_KEYS, Shared, parse_query, to_query
from rnnlab.tasks import TASKS

LABELS = {"task": "Task", "cell": "Cell", "features": "Hidden features", "carry_mode": "Carry mode",
          "carry_init": "carry_init", "carry_scale": "Initialiser parameter", "seq_len": "Sequence length T",
          "batch": "Batch size", "optimizer": "Optimiser", "lr": "Learning rate", "clip": "Clip (global norm)",
          "steps": "Training steps", "seed": "Seed", "chunk": "Steps per chunk", "kernel_size": "Kernel size"}
NAMES = {"task": TASKS, "cell": CELLS, "carry_init": CARRY_INITS, "optimizer": OPTIMIZERS}


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
    """The session's experiment; re-read from the URL when the URL changed from outside (a link, a preset)."""
    use_app_navigation()
    ss = st.session_state
    url = st.query_params.to_dict()
    if "shared" not in ss or (url and url != ss.get("url_written")):
        shared = parse_query(url)
        ss.shared = shared
        ss.url_notes = list(shared.notes)
        ss.autorun_pending = shared.autorun
        for key in CONFIG_KEYS + ("compare_zero",):
            ss.pop(f"w_{key}", None)
    return ss.shared


def write_url(shared: Shared) -> None:
    """Put the experiment in the URL (without the one-shot ``run=1``)."""
    query = to_query(replace(shared, autorun=False))
    if st.query_params.to_dict() != query:
        st.query_params.from_dict(query)
    st.session_state.url_written = query


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
    if name == "lr":
        return float(st.number_input(label, min_value=1e-6, max_value=1e6, key=key, format="%g", step=1e-3,
                                     help=help_text))
    if name == "clip":
        return float(st.number_input(label, min_value=0.0, max_value=1e6, key=key, format="%g", step=0.5,
                                     help=help_text))
    if name == "carry_scale":
        spec = CARRY_INITS[config.carry_init]
        label = f"carry_init {spec.param}" if spec.param else label
        return float(st.number_input(label, min_value=-100.0, max_value=100.0, key=key, format="%g", step=0.05,
                                     help=help_text, disabled=spec.param is None))
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
