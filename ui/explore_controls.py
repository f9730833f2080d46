"""The Explore page's buttons, its question before long work, its notes, the parameter loader and the downloads.
Buttons only record what was asked (``st.session_state.action``); the page decides it in its next script run."""

from __future__ import annotations

import streamlit as st

from rnnlab.config import STATIC_FIELDS, Config
from rnnlab.files import export
from rnnlab.i18n import N_, Msg, join_list, t, tn, tp
from rnnlab.session.explore_actions import Question
from rnnlab.sharing.urlstate import UrlState
from rnnlab.text import escape_markdown
from rnnlab.training.train import Run
from ui.explore_state import ExploreState
from ui.share import share_dialog

UPLOAD_MB = export.MAX_PARAMS_BYTES // 2**20  # as the server's maxUploadSize in .streamlit/config.toml
WELCOME = N_("Choose settings in the sidebar and press **Train**, or start from a preset on the Home page. The "
             "default trains a GRU with a learnable initial carry on the adding problem (T = 100).")  # shown: _()


def draw_buttons(chunk: int, errors: list[str], busy: bool) -> None:
    """Train, Stop, Step and Reset; Stop only while something trains."""
    buttons = [  # label, action, icon, help, disabled
        (tp("Explore button", "Train"), "train", "play_arrow",
         t("Train to the number of steps (continues a stopped run)."), bool(errors)),
        (tp("Explore button", "Stop"), "stop", "stop",
         t("Stop within about a second; every step trained so far stays."), not busy),
        (tp("Explore button", "Step"), "step", "skip_next",
         tn("Train one chunk ({n} step).", "Train one chunk ({n} steps).", chunk), bool(errors)),
        (tp("Explore button", "Reset"), "reset", "restart_alt", t("Forget the run."), False),
    ]
    for col, (label, name, icon, help_text, disabled) in zip(st.columns(4), buttons):
        col.button(label, type="primary" if name == "train" else "secondary", on_click=st.session_state.update,
                   kwargs={"action": name}, disabled=disabled, icon=f":material/{icon}:", help=help_text,
                   use_container_width=True)


def draw_pin_and_share(state: ExploreState, url: UrlState) -> None:
    """Pin the run as A, unpin it, and the "Share with the class" dialog."""
    run = state.run
    pin, unpin, share = st.columns([1, 1, 1])
    pin.button(t("Pin this run as A"), key="ab_pin", icon=":material/push_pin:",
               disabled=run is None or not run.step, on_click=state.pin,
               help=t("Keep this run on the charts as A: change the settings and train B to compare both on the same "
                      "axes (GRU against simple RNN, zero against learned carry, two lengths T)."))
    unpin.button(t("Unpin A"), key="ab_unpin", icon=":material/close:", disabled=state.pinned is None,
                 on_click=state.unpin, help=t("Take run A off the charts."))
    if share.button(t("Share with the class"), key="share_class", icon=":material/qr_code_2:",
                    help=t("A link and a QR code to project: choose which controls the class may not change and "
                           "whether training starts when the link opens.")):
        share_dialog(url)


def draw_question(notes, question: Question) -> None:
    """'This will take ..., start it anyway?' with Start anyway and Cancel, in the ``notes`` container."""
    # TRANSLATORS: {time} is an estimate such as "about 1.5 min (compiling about 6 s, then 3,000 steps at about
    # 28 ms each)"; "Stop" is the Stop button
    notes().warning(t("This will take {time}, longer than a minute. Start it anyway? (Stop ends it within about a "
                      "second and keeps every step trained.)", time=question.described), icon=":material/schedule:")
    go, cancel = notes().columns(2)
    go.button(t("Start anyway"), key="confirm_go", icon=":material/play_arrow:",
              on_click=st.session_state.update, kwargs={"action": question.answer, "confirmed": True})
    cancel.button(t("Cancel"), key="confirm_cancel", on_click=st.session_state.update, kwargs={"action": "cancel"})


def restored_note(run: Run, restored: int) -> str:
    """What a reload that found the run tells."""
    # TRANSLATORS: {step} is a training step; "Train" is the Train button
    if run.history.stop_reason:
        return t("Your run is back after the page was reloaded, at step {step} (the last step it finished). It had "
                 "stopped (see below); Train starts a new run.", step=restored)
    if run.step >= run.config.steps:
        return t("Your run is back after the page was reloaded, at step {step} (the last step it finished). It had "
                 "finished: raise the training steps and press Train to continue it.", step=restored)
    return t("Your run is back after the page was reloaded, at step {step} (the last step it finished). Press Train "
             "to continue it.", step=restored)


def stale_note(old: Config, new: Config) -> str:
    """What a run whose settings changed since it was trained tells."""
    changed = [k for k in STATIC_FIELDS + ("seed",) if getattr(old, k) != getattr(new, k)]
    # TRANSLATORS: {changed} lists the settings' names as in the link, e.g. "cell, seq_len"
    return t("The charts show the previous run; you changed {changed}. Press Train or Step to start a new run with "
             "the new settings.", changed=join_list(changed))


def draw_loader(key: str, message: tuple[str, Msg | str] | None) -> None:
    """The sidebar's parameter uploader (widget ``key``), open with the last upload's ``message`` when there is."""
    with st.sidebar.expander(t("Load parameters (.msgpack)"), expanded=message is not None):
        # No type= filter: Streamlit would answer another extension with an exception box; the content decides.
        st.file_uploader(t("Load parameters (.msgpack)"), key=key,
                         on_change=st.session_state.update, kwargs={"action": "load"}, max_upload_size=UPLOAD_MB,
                         # TRANSLATORS: "Parameters" is the label of the Parameters (msgpack) download button
                         help=t("A file from the Parameters download (at most {mb} MB) for the current settings: "
                                "same cell, features, task and carry mode. A new run starts from it.", mb=UPLOAD_MB))
        if message:
            kind, said = message  # kept: rendered in the reader's language now
            (st.error if kind == "error" else st.success)(escape_markdown(str(said)), icon=":material/data_object:")


def draw_downloads(run: Run) -> None:
    """The run's history, parameters and reproduction script, and where its parameters came from."""
    st.subheader(t("Download"))
    stem = export.filename_stem(run.config)
    cols = st.columns(3)
    # The files are made when clicked (a class on one link would otherwise make them for every student on every
    # script run), from the run as shown now.
    history, params = run.view().history, run.params
    cols[0].download_button(t("History (CSV)"), lambda: export.history_csv(history), f"{stem}_history.csv",
                            "text/csv", icon=":material/table:", on_click="ignore")
    cols[1].download_button(t("Parameters (msgpack)"), lambda: export.params_msgpack(params),
                            f"{stem}_params.msgpack", "application/octet-stream", icon=":material/data_object:",
                            on_click="ignore")
    cols[2].download_button(t("Reproduction script (.py)"), export.reproduce_script(run.config), f"{stem}.py",
                            "text/x-python", icon=":material/code:", on_click="ignore")
    if run.origin:
        # TRANSLATORS: {file} is the name of the parameter file the run was loaded from
        st.caption(t("This run started from the parameters in {file}; the reproduction script starts from the "
                     "seed's parameters.", file=run.origin))


def forked_note(step: int) -> str:
    """What a copied address, opened while its tab is still open, tells: this tab has a copy of its own."""
    # TRANSLATORS: {step} is a training step; the "other tab" is the one whose address (with its sid) was copied
    return t("This address belongs to a tab that is still open, so this tab has a copy of its run, at step {step}. "
             "Training here changes only this copy; the other tab's run stays as it is.", step=step)
