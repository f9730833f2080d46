"""The Explore page's buttons, its question before long work, its notes, the parameter loader and the downloads.
Buttons only record what was asked (``st.session_state.action``); the page decides it in its next script run."""

from __future__ import annotations

import streamlit as st

from rnnlab.config import STATIC_FIELDS, Config
from rnnlab.files import export
from rnnlab.session.explore_actions import Question
from rnnlab.sharing.urlstate import UrlState
from rnnlab.text import escape_markdown
from rnnlab.training.train import Run
from ui.explore_state import ExploreState
from ui.share import share_dialog

UPLOAD_MB = export.MAX_PARAMS_BYTES // 2**20  # as the server's maxUploadSize in .streamlit/config.toml
WELCOME = ("Choose settings in the sidebar and press **Train**, or start from a preset on the Home page. The "
           "default trains a GRU with a learnable initial carry on the adding problem (T = 100).")


def draw_buttons(chunk: int, errors: list[str], busy: bool) -> None:
    """Train, Stop, Step and Reset; Stop only while something trains."""
    buttons = [  # label, action, icon, help, disabled
        ("Train", "train", "play_arrow", "Train to the number of steps (continues a stopped run).", bool(errors)),
        ("Stop", "stop", "stop", "Stop within about a second; every step trained so far stays.", not busy),
        ("Step", "step", "skip_next", f"Train one chunk ({chunk} steps).", bool(errors)),
        ("Reset", "reset", "restart_alt", "Forget the run.", False),
    ]
    for col, (label, name, icon, help_text, disabled) in zip(st.columns(4), buttons):
        col.button(label, type="primary" if name == "train" else "secondary", on_click=st.session_state.update,
                   kwargs={"action": name}, disabled=disabled, icon=f":material/{icon}:", help=help_text,
                   use_container_width=True)


def draw_pin_and_share(state: ExploreState, url: UrlState) -> None:
    """Pin the run as A, unpin it, and the "Share with the class" dialog."""
    run = state.run
    pin, unpin, share = st.columns([1, 1, 1])
    pin.button("Pin this run as A", key="ab_pin", icon=":material/push_pin:", disabled=run is None or not run.step,
               on_click=state.pin,
               help="Keep this run on the charts as A: change the settings and train B to compare both on the same "
                    "axes (GRU against simple RNN, zero against learned carry, two lengths T).")
    unpin.button("Unpin A", key="ab_unpin", icon=":material/close:", disabled=state.pinned is None,
                 on_click=state.unpin, help="Take run A off the charts.")
    if share.button("Share with the class", key="share_class", icon=":material/qr_code_2:",
                    help="A link and a QR code to project: choose which controls the class may not change and "
                         "whether training starts when the link opens."):
        share_dialog(url)


def draw_question(notes, question: Question) -> None:
    """'This will take ..., start it anyway?' with Start anyway and Cancel, in the ``notes`` container."""
    notes().warning(f"This will take {question.described}, longer than a minute. Start it anyway? (Stop ends it "
                    "within about a second and keeps every step trained.)", icon=":material/schedule:")
    go, cancel = notes().columns(2)
    go.button("Start anyway", key="confirm_go", icon=":material/play_arrow:",
              on_click=st.session_state.update, kwargs={"action": question.answer, "confirmed": True})
    cancel.button("Cancel", key="confirm_cancel", on_click=st.session_state.update, kwargs={"action": "cancel"})


def restored_note(run: Run, restored: int) -> str:
    """What a reload that found the run tells."""
    if run.history.stop_reason:
        then = "It had stopped (see below); Train starts a new run."
    elif run.step >= run.config.steps:
        then = "It had finished: raise the training steps and press Train to continue it."
    else:
        then = "Press Train to continue it."
    return (f"Your run is back after the page was reloaded, at step {restored} (the last step it finished). "
            f"{then}")


def stale_note(old: Config, new: Config) -> str:
    """What a run whose settings changed since it was trained tells."""
    changed = [k for k in STATIC_FIELDS + ("seed",) if getattr(old, k) != getattr(new, k)]
    return (f"The charts show the previous run; you changed {', '.join(changed)}. Press Train or Step to start a "
            "new run with the new settings.")


def draw_loader(key: str, message: tuple[str, str] | None) -> None:
    """The sidebar's parameter uploader (widget ``key``), open with the last upload's ``message`` when there is."""
    with st.sidebar.expander("Load parameters (.msgpack)", expanded=message is not None):
        # No type= filter: Streamlit would answer another extension with an exception box; the content decides.
        st.file_uploader("Load parameters (.msgpack)", key=key,
                         on_change=st.session_state.update, kwargs={"action": "load"}, max_upload_size=UPLOAD_MB,
                         help=f"A file from the Parameters download (at most {UPLOAD_MB} MB) for the current "
                              "settings: same cell, features, task and carry mode. A new run starts from it.")
        if message:
            kind, text = message
            (st.error if kind == "error" else st.success)(escape_markdown(text), icon=":material/data_object:")


def draw_downloads(run: Run) -> None:
    """The run's history, parameters and reproduction script, and where its parameters came from."""
    st.subheader("Download")
    stem = export.filename_stem(run.config)
    cols = st.columns(3)
    cols[0].download_button("History (CSV)", export.history_csv(run.history), f"{stem}_history.csv", "text/csv",
                            icon=":material/table:", on_click="ignore")
    cols[1].download_button("Parameters (msgpack)", export.params_msgpack(run.params), f"{stem}_params.msgpack",
                            "application/octet-stream", icon=":material/data_object:", on_click="ignore")
    cols[2].download_button("Reproduction script (.py)", export.reproduce_script(run.config), f"{stem}.py",
                            "text/x-python", icon=":material/code:", on_click="ignore")
    if run.origin:
        st.caption(f"This run started from the parameters in {run.origin}; the reproduction script starts from "
                   "the seed's parameters.")
