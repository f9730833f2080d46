"""The Explore page driven with AppTest: training, buttons, charts' data, URL round trips, bad input,
divergence, interruption, the server's training slots, parameter uploads and a reload's new session."""

import io
import threading
import time
from dataclasses import replace

import jax
import numpy as np
import pandas as pd
import pytest
from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage

from rnnlab.config import Config
from rnnlab.figures.shared import VIEWS
from rnnlab.files import export
from rnnlab.model.tasks import TASKS
from rnnlab.probing import probes
from rnnlab.server.storage.session_store import valid_token
from rnnlab.server.work import gate as gates
from rnnlab.server.work import jobs
from rnnlab.server.work.shared_runs import RUNS
from rnnlab.text import error_text
from rnnlab.training.compiled import compile_count
from rnnlab.training.program import get_program
from rnnlab.training.train import Run
from tests.app.conftest import SMALL, button, figures, open_page, trace, unescaped, values

SMALL_CONFIG = Config.from_dict(SMALL)[0]


@pytest.fixture
def downloads(monkeypatch):
    """``get(at, label)``: the bytes a download button on the page serves (made when clicked, for a deferred one)."""
    from streamlit.runtime.media_file_manager import MediaFileManager

    stored: dict[str, bytes] = {}
    deferred: dict[str, object] = {}
    real, real_deferred = MemoryMediaFileStorage.load_and_get_id, MediaFileManager.add_deferred

    def spy(self, path_or_data, mimetype, kind, filename=None):
        file_id = real(self, path_or_data, mimetype, kind, filename)
        stored[file_id] = path_or_data
        return file_id

    def spy_deferred(self, data_callable, *args, **kwargs):
        file_id = real_deferred(self, data_callable, *args, **kwargs)
        deferred[file_id] = data_callable
        return file_id

    monkeypatch.setattr(MemoryMediaFileStorage, "load_and_get_id", spy)
    monkeypatch.setattr(MediaFileManager, "add_deferred", spy_deferred)

    def get(at, label: str) -> bytes:
        proto = next(b for b in at.get("download_button") if b.label == label).proto
        if proto.deferred_file_id:
            data = deferred[proto.deferred_file_id]()  # what a click makes
            return data.encode() if isinstance(data, str) else data
        return stored[proto.url.rsplit("/", 1)[-1].split(".")[0]]

    return get


def no_exception(at) -> None:
    assert not at.exception, [e.value for e in at.exception]


def test_default_preset_beats_the_baseline_and_charts_show_the_history():
    at = open_page("explore", run="1")  # the default preset: GRU, adding problem, T = 100
    run = at.session_state.run
    assert run.step == 300 and run.history.stop_reason is None
    assert "Finished 300 steps." in [s.value for s in at.success]
    figs = figures(at)
    loss = figs["Loss"]
    steps = run.history.steps_df()
    np.testing.assert_array_equal(values(trace(loss, "training loss"), "x"), steps["step"])
    np.testing.assert_allclose(values(trace(loss, "training loss"), "y"), steps["loss"], rtol=1e-6)
    evals = values(trace(loss, "evaluation loss"), "y")
    np.testing.assert_allclose(evals, run.history.chunks_df()["eval_loss"], rtol=1e-6)
    baseline = TASKS["adding"].baseline(100)  # 1/6, less 1/12 for the one sequence in 50 marked at its end
    assert values(trace(loss, f"memoryless baseline {baseline:.4g}"), "y")[0] == pytest.approx(baseline)
    assert baseline == pytest.approx(1 / 6 - 1 / 600) and evals[-1] < 0.1 * baseline
    heat = figs["Initial carry, hidden state h: units against training step"]
    z = values(heat["data"][0], "z")
    assert z.shape == (64, len(run.history.chunks))
    np.testing.assert_allclose(z[:, -1], run.history.carry_snapshots("h")[-1], rtol=1e-6)
    per_step = figures(at)["Loss at each time step of the sequence"]
    np.testing.assert_allclose(values(per_step["data"][0], "y"), run.history.per_step_loss[-1], rtol=1e-6)
    scored = trace(per_step, "memoryless baseline (scored step)")  # adding scores only the last step
    assert values(scored, "x").tolist() == [100] and values(scored, "y")[0] == pytest.approx(baseline)  # step T
    assert set(at.query_params) == {"sid"}  # defaults need no query parameters; sid is the tab's token
    assert valid_token(at.query_params["sid"])
    assert [b.label for b in at.get("download_button")] == ["History (CSV)", "Parameters (msgpack)",
                                                            "Reproduction script (.py)"]


def test_step_stop_reset_and_url_round_trip(small):
    at = open_page("explore", **small)
    assert at.session_state.run is None
    button(at, "Step").click().run()
    run = at.session_state.run
    assert run.step == 10 and not run.done
    assert {k: at.query_params[k] for k in small} == small  # the URL holds the experiment
    at.sidebar.number_input(key="w_lr").set_value(0.05).run()
    assert at.query_params["lr"] == "0.05"
    button(at, "Step").click().run()
    assert at.session_state.run is run and run.step == 20 and run.config.lr == 0.05
    assert compile_count(run.program.train_steps) == 1  # changing the learning rate did not recompile
    button(at, "Train").click().run()
    assert run.step == 50 and run.done
    button(at, "Reset").click().run()
    assert at.session_state.run is None


def test_loading_a_link_sets_every_control(small):
    at = open_page("explore", **small, cell="lstm", carry_mode="fixed", carry_init="normal", carry_scale="0.3")
    sidebar = at.sidebar
    assert sidebar.selectbox(key="w_cell").value == "lstm"
    assert sidebar.radio(key="w_carry_mode").value == "fixed"
    assert sidebar.number_input(key="w_carry_scale").value == pytest.approx(0.3)
    assert sidebar.number_input(key="w_seq_len").value == 20
    assert at.session_state.url_state.config == Config.from_dict({**small, "cell": "lstm", "carry_mode": "fixed",
                                                               "carry_init": "normal", "carry_scale": "0.3"})[0]


def test_bad_url_values_fall_back_with_a_visible_note(small):
    at = open_page("explore", **{**small, "features": "-4"}, lr="abc", cell="transformer", bogus="1")
    note = unescaped(at.warning[0].value)
    assert "Ignored lr='abc'" in note and "Ignored features='-4'" in note
    assert "Unknown cell 'transformer'" in note and "unknown setting 'bogus'" in note
    config = at.session_state.url_state.config
    assert (config.lr, config.features, config.cell, config.seq_len) == (0.01, 64, "gru", 20)
    assert not at.exception


def test_incompatible_choice_is_explained_and_train_disabled(small):
    at = open_page("explore", **small)
    at.sidebar.selectbox(key="w_cell").set_value("conv_lstm").run()  # brings a task it can run
    at.sidebar.selectbox(key="w_task").set_value("adding").run()  # then a task it cannot
    assert any("ConvLSTM cannot run Adding problem" in e.value for e in at.error)
    assert button(at, "Train").disabled and button(at, "Step").disabled
    at.sidebar.selectbox(key="w_task").set_value("moving_dot").run()
    assert not at.error and not button(at, "Train").disabled


def test_hidden_controls_are_not_drawn(small):
    at = open_page("explore", **small, hide="lr,clip", seed_hide="1")
    labels = [w.label for w in at.sidebar.number_input]
    assert "Learning rate" not in labels and "Clip (global norm)" not in labels and "Seed" not in labels
    assert "Batch size" in labels
    assert at.query_params["hide"] == "clip,lr,seed"


def test_changed_settings_keep_the_previous_run_on_screen(small):
    at = open_page("explore", **small, run="1")
    run = at.session_state.run
    assert run.done
    at.sidebar.selectbox(key="w_cell").set_value("mgu").run()
    assert at.session_state.run is run  # nothing lost
    assert any("The charts show the previous run; you changed cell" in i.value for i in at.info)
    assert "Loss" in figures(at)


def test_fixed_carry_says_it_does_not_learn_and_zero_overlay(small):
    at = open_page("explore", **small, task="sine", carry_mode="fixed", carry_init="normal", run="1")
    assert any("does not learn" in i.value for i in at.info)
    at.sidebar.checkbox(key="w_compare_zero").check().run()
    per_step = figures(at)["Loss at each time step of the sequence"]
    names = [t["name"] for t in per_step["data"]]
    assert names[:2] == ["fixed carry (normal)", "fixed zero carry"]
    steps = at.session_state.run.step  # training the overlay's run leaves the run's own status on screen
    assert f"Finished {steps} steps." in [s.value for s in at.success]
    zero = next(iter(at.session_state.explore.zero_runs.values()))
    assert zero.step == at.session_state.run.step and zero.config.carry_init == "zeros"
    np.testing.assert_allclose(values(per_step["data"][1], "y"), zero.history.per_step_loss[-1], rtol=1e-6)
    baseline = per_step["data"][2]  # the memoryless loss of each step, as the task computes it
    assert baseline["name"] == "memoryless baseline" and len(per_step["data"]) == 3
    steps = TASKS["sine"].step_baselines(at.session_state.run.config.seq_len)
    np.testing.assert_allclose(values(baseline, "y"), np.where(steps > 0, steps, np.nan), rtol=1e-6)


def test_divergence_is_reported_marked_and_history_kept(small, downloads):
    at = open_page("explore", **small, lr="1000000", clip="0", optimizer="sgd", run="1")
    no_exception(at)
    run = at.session_state.run
    history = run.history
    last = history.diverged_at - 1  # the last finite step
    assert last >= 1 and run.step == last and run.done
    reason = history.stop_reason
    assert [e.value for e in at.error] == [f"{reason} Then press Train for a new run."]  # one message
    assert reason.startswith(f"Stopped at step {last + 1}: the ")  # where, and why
    assert f"Steps 1 to {last} are kept" in reason
    assert "lower the learning rate (try lr=100000; now 1e+06)" in reason and "(try clip=1; now 0, off)" in reason
    assert f"step {last} / 50" in at.get("progress")[0].proto.text
    loss = figures(at)["Loss"]
    x, y = values(trace(loss, "training loss"), "x"), values(trace(loss, "training loss"), "y")
    assert list(x) == list(range(1, last + 1)) and np.isfinite(y).all()  # up to the last finite step
    marks = loss["layout"]["shapes"]
    assert len(marks) == 1 and marks[0]["x0"] == marks[0]["x1"] == last + 1  # the divergence step, marked
    assert loss["layout"]["annotations"][0]["text"] == f"diverged at step {last + 1}"
    csv = pd.read_csv(io.BytesIO(downloads(at, "History (CSV)")))
    assert list(csv["step"]) == list(range(1, last + 1)) and np.isfinite(csv["loss"]).all()
    pd.testing.assert_frame_equal(csv, history.steps_df(), check_exact=True)
    params = export.load_params(downloads(at, "Parameters (msgpack)"), run.config)  # finite, so loadable
    assert all(np.isfinite(np.asarray(leaf)).all() for leaf in jax.tree_util.tree_leaves(params))
    button(at, "Train").click().run()  # a diverged run does not continue: Train starts again
    assert at.session_state.run is not run and at.session_state.run.history.diverged_at is not None


def test_step_step_then_train_equals_one_train_through_page_switches_and_widget_changes(small):
    whole = open_page("explore", **small, run="1").session_state.run.history
    RUNS.clear()  # as on another server: the run is not shared, this session computes it step by step
    at = open_page("explore", **small)
    button(at, "Step").click().run()
    run = at.session_state.run
    at.switch_page("app_pages/gradients.py").run()  # another page: the run stays in the session
    no_exception(at)
    at.switch_page("app_pages/explore.py").run()
    assert at.session_state.run is run and run.step == 10
    button(at, "Step").click().run()
    at.sidebar.selectbox(key="w_cell").set_value("mgu").run()  # a static change: the old run stays on screen
    assert any("The charts show the previous run; you changed cell" in i.value for i in at.info)
    assert at.session_state.run is run and run.step == 20 and "Loss" in figures(at)
    at.sidebar.selectbox(key="w_cell").set_value("gru").run()  # back: the same run again, not stale
    assert not any("previous run" in i.value for i in at.info)
    button(at, "Train").click().run()
    no_exception(at)
    assert at.session_state.run is run and run.done
    pd.testing.assert_frame_equal(run.history.steps_df(), whole.steps_df(), check_exact=True)
    pd.testing.assert_frame_equal(run.history.chunks_df(), whole.chunks_df(), check_exact=True)


def test_same_configuration_and_seed_give_the_same_history_in_two_sessions(small):
    query = {**small, "cell": "lstm", "carry_mode": "noisy", "carry_init": "normal", "seed": "7", "run": "1"}
    a, b = (open_page("explore", **query).session_state.run for _ in range(2))
    assert a is not b and a.done and b.done
    pd.testing.assert_frame_equal(a.history.steps_df(), b.history.steps_df(), check_exact=True)
    pd.testing.assert_frame_equal(a.history.chunks_df(), b.history.chunks_df(), check_exact=True)
    for leaf in ("c", "h"):
        np.testing.assert_array_equal(a.history.carry_snapshots(leaf), b.history.carry_snapshots(leaf))


def test_a_second_session_on_the_same_link_gets_the_finished_run_without_computing_it(small, monkeypatch):
    first = open_page("explore", **small, run="1").session_state.run
    program = get_program(first.config)
    real, computed = program.train_steps, []

    def counting(*args):
        computed.append(int(args[-1]))
        return real(*args)

    counting._cache_size = real._cache_size
    monkeypatch.setattr(program, "train_steps", counting)
    at = open_page("explore", **small, run="1")  # a student opening the teacher's link
    no_exception(at)
    second = at.session_state.run
    assert computed == [] and second is not first and second.done
    pd.testing.assert_frame_equal(second.history.steps_df(), first.history.steps_df(), check_exact=True)
    assert any(p.proto.text.startswith("step 50 / 50") for p in at.get("progress")) and "Loss" in figures(at)
    at.sidebar.number_input(key="w_steps").set_value(60).run()  # their own continuation, computed for them
    button(at, "Train").click().run()
    assert at.session_state.run.step == 60 and sum(computed) == 10 and first.step == 50


def test_a_class_on_one_link_is_served_the_charts_built_for_the_first_student(small):
    first = open_page("explore", **small, run="1")
    no_exception(first)
    builds = VIEWS.stats()["builds"]
    second = open_page("explore", **small, run="1")
    no_exception(second)
    assert VIEWS.stats()["builds"] == builds  # every figure and sentence came from the first student's build
    assert second.session_state.explore.training is False  # a finished run: nothing asked to train, no rerun
    assert figures(second) == figures(first) and [m.value for m in second.markdown] == [m.value for m in first.markdown]
    second.slider(key="w_example_mark").set_value(5).run()  # the student's own marked step: built for it
    assert VIEWS.stats()["builds"] > builds
    marked = figures(second)["Loss at each time step of the sequence"]
    assert any(a.get("text") == "t = 5" for a in marked["layout"]["annotations"])
    assert all(a.get("text") != "t = 5" for a in figures(first)["Loss at each time step of the sequence"]["layout"]
               .get("annotations", []))


NO_WORKER = "No Ray worker is available: every worker node of the cluster has stopped."
CALLS: list[int] = []
REAL_CALL_JOB = jobs.call_job


def call_then_no_worker(run, max_seconds):
    """A training call that works once, then fails as a cluster left without workers does."""
    CALLS.append(run.step)
    if len(CALLS) > 1:
        raise RuntimeError(NO_WORKER)
    return REAL_CALL_JOB(run, max_seconds)


def test_a_failed_training_call_is_a_message_and_the_run_and_its_slot_are_kept(small, monkeypatch):
    slots = gates.JobGate(limit=2, budget=lambda: 2**40)
    monkeypatch.setattr(gates, "GATE", slots)
    monkeypatch.setattr(jobs, "call_job", call_then_no_worker)
    CALLS.clear()
    at = open_page("explore", **{**small, "steps": "200"}, run="1")  # several chunks, never "start anyway"
    no_exception(at)
    run = at.session_state.run
    assert len(CALLS) == 2 and 0 < run.step < 200 and len(run.history.steps) == run.step
    said = f"Training stopped at step {run.step}: {error_text(RuntimeError(NO_WORKER))} The run is kept; press Train"
    assert [unescaped(e.value) for e in at.error] == [f"{said} to go on."]
    assert slots.counts() == (0, 0) and at.session_state.explore.training is False


def test_over_the_server_limit_the_queue_position_shows_and_training_starts_by_itself(small, monkeypatch):
    slots = gates.JobGate(limit=1, budget=lambda: 2**40)
    monkeypatch.setattr(gates, "GATE", slots)
    shown: list[str] = []
    real = gates.queue_message
    monkeypatch.setattr(gates, "queue_message", lambda ticket, s: shown.append(real(ticket, s)) or shown[-1])
    at = open_page("explore", **small)
    held = slots.ticket(0, "another session")  # the only slot is taken
    assert held.wait(0)

    def release_once_queued() -> None:
        deadline = time.monotonic() + 120
        while slots.counts()[1] == 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(1.2)  # long enough for the page to show its place
        held.release()

    threading.Thread(target=release_once_queued, daemon=True).start()
    button(at, "Train").click().run()
    no_exception(at)
    assert shown, "the queue position was never shown"
    assert str(shown[0]).startswith("All 1 slots of this server are busy (1 running, 1 waiting). "
                                    "You are number 1 in the queue; your job starts by itself.")
    assert at.session_state.run.done  # it started by itself once the slot was free
    assert slots.counts() == (0, 0)  # and gave its slot back
    button(at, "Reset").click().run()
    RUNS.clear()  # else Step would get the finished run at once, computing nothing
    button(at, "Step").click().run()  # Step takes a slot too, and frees it
    assert at.session_state.run.step == 10 and slots.counts() == (0, 0)


def test_a_reload_gets_the_finished_run_back_and_can_continue(small):
    """A reload is a new session with the tab's token in the URL (AppTest has no live server connections, so
    the owner counts as gone; a connected owner is tested in tests/test_session_store.py and in the browser)."""
    at = open_page("explore", **small)
    button(at, "Step").click().run()
    token = at.query_params["sid"]
    assert valid_token(token)
    share = next(c.value for c in at.caption if "Link to this experiment" in c.value)
    assert "sid" not in share and "seq_len=20" in share  # the link to share leaves the token out
    again = open_page("explore", **small, sid=token)
    run = again.session_state.run
    assert run is not None and run is not at.session_state.run and run.step == 10
    assert again.query_params["sid"] == token
    assert any(i.value.startswith("Your run is back after the page was reloaded, at step 10 (the last step it "
                                  "finished). Press Train to continue it.") for i in again.info)
    pd.testing.assert_frame_equal(run.history.steps_df(), at.session_state.run.history.steps_df())
    button(again, "Train").click().run()
    no_exception(again)
    assert again.session_state.run is run and run.done
    whole = Run(SMALL_CONFIG)
    whole.train()
    pd.testing.assert_frame_equal(run.history.steps_df(), whole.history.steps_df(), check_exact=True)
    assert at.session_state.run.step == 10  # the other session's run was not touched
    third = open_page("explore", **small, sid=token)  # reloaded once more, now finished
    assert third.session_state.run.step == 50
    assert any("It had finished: raise the training steps and press Train to continue it." in i.value
               for i in third.info)

    for token in ("x" * 22, "not a token!", ""):  # unknown or malformed: a fresh session with a new token
        fresh = open_page("explore", **small, sid=token)
        assert fresh.session_state.run is None and fresh.query_params["sid"] != token
        assert valid_token(fresh.query_params["sid"])


@pytest.fixture(scope="module")
def param_files() -> dict[str, bytes]:
    """Parameter files: for the small configuration and for ones that do not fit it (untrained, so quick)."""
    def params(**change) -> bytes:
        return export.params_msgpack(Run(replace(SMALL_CONFIG, **change)).params)

    good = params()
    return {"good": good, "lstm": params(cell="lstm"), "8 features": params(features=8),
            "fixed carry": params(carry_mode="fixed"), "truncated": good[: len(good) // 2],
            "nan": export.params_msgpack(jax.tree_util.tree_map(lambda a: np.full_like(a, np.nan),
                                                                Run(SMALL_CONFIG).params))}


BAD_FILES = [  # (what, file name, content: a key of param_files or bytes, expected fragment of the message)
    ("empty", "params.msgpack", b"", "the file is empty"),
    ("truncated", "params.msgpack", "truncated", "the file ends too early"),
    ("random bytes", "params.msgpack", bytes(range(256)) * 4, "not a msgpack parameter file"),
    ("a history CSV", "history.msgpack", b"step,loss,metric\n1,0.5,0.1\n", "it looks like a history CSV"),
    ("another file type", "history.csv", b"step,loss,metric\n1,0.5,0.1\n", "it looks like a history CSV"),
    ("a script", "run.py", b"import os\nos.remove('x')\n", "it looks like text ('import os'"),
    ("a PNG image", "image.msgpack", b"\x89PNG\r\n\x1a\n" + bytes(32), "it looks like a PNG image"),
    ("msgpack, not a tree", "list.msgpack", b"\x93\x01\x02\x03", "not a tree of arrays"),
    ("another cell", "lstm.msgpack", "lstm", "missing params/GRUCell_0"),
    ("another cell, said", "lstm.msgpack", "lstm", "seems to hold LSTM parameters (16 features"),
    ("other features", "f8.msgpack", "8 features", "expected params/GRUCell_0/hn/kernel of shape (16, 16), got (8, 8)"),
    ("other carry mode", "fixed.msgpack", "fixed carry", "missing params/h0"),
    ("non-finite values", "nan.msgpack", "nan", "NaN or infinite values"),
    ("too large", "big.msgpack", b"\x00" * (21 * 2**20), "the file is 21 MB, more than the 20 MB"),
]


@pytest.mark.parametrize("what, name, content, expected", BAD_FILES, ids=[row[0] for row in BAD_FILES])
def test_a_bad_parameter_file_is_refused_and_the_run_stays(small, param_files, what, name, content, expected):
    at = open_page("explore", **small)
    button(at, "Step").click().run()
    run = at.session_state.run
    before = run.history.steps_df()
    data = param_files[content] if isinstance(content, str) else content
    uploader = at.get("file_uploader")[0]
    assert uploader.label == "Load parameters (.msgpack)" and uploader.allowed_type == []  # the content decides
    uploader.set_value((name, data, "application/octet-stream")).run()
    no_exception(at)
    messages = [unescaped(e.value) for e in at.error]
    assert len(messages) == 1, messages
    assert messages[0].startswith(f"{name} was not loaded: ") and expected in messages[0], messages[0]
    assert messages[0].endswith("The current run is unchanged.")
    assert at.session_state.run is run and run.history.steps_df().equals(before)  # the last good state
    button(at, "Step").click().run()  # and it goes on as before
    assert at.session_state.run is run and run.step == 20 and not at.error


def test_a_good_parameter_file_starts_a_run_from_it(small, downloads):
    at = open_page("explore", **small, run="1")
    trained = at.session_state.run
    data = downloads(at, "Parameters (msgpack)")
    button(at, "Reset").click().run()
    at.get("file_uploader")[0].set_value(("trained.msgpack", data, "application/octet-stream")).run()
    no_exception(at)
    run = at.session_state.run
    assert run is not None and run.origin == "trained.msgpack" and run.step == 0
    assert run.history.chunks[0]["eval_loss"] == trained.history.chunks[-1]["eval_loss"]  # the loaded params
    message = unescaped(at.success[0].value)
    assert message.startswith("Loaded the parameters in trained.msgpack. A new run starts from them at step 0")
    assert "the optimiser's state (adam's running averages, if it keeps any) starts fresh" in message
    assert "Loss" in figures(at)
    button(at, "Train").click().run()
    assert at.session_state.run is run and run.done and run.step == 50
    assert any("started from the parameters in trained.msgpack" in c.value for c in at.caption)


def test_noisy_preset_shows_robustness_against_its_zero_trained_twin_as_numbers():
    from rnnlab.sharing.presets import PRESETS_BY_KEY

    at = open_page("explore", **PRESETS_BY_KEY["noisy_carry_adding"].query())
    no_exception(at)
    run = at.session_state.run
    zero = next(iter(at.session_state.explore.zero_runs.values()))
    mine = probes.start_robustness(run).set_index("start")["loss"]
    theirs = probes.start_robustness(zero).set_index("start")["loss"]
    claim = next(m.value for m in at.markdown if m.value.startswith("From fresh N(0, 0.5) carries"))
    assert f"this run's loss is {mine.iloc[1]:.3g} and the zero-trained twin's {theirs.iloc[1]:.3g}" in claim
    assert f"{theirs.iloc[1] / mine.iloc[1]:.3g} times as large" in claim and theirs.iloc[1] > 5 * mine.iloc[1]


def test_a_second_student_on_the_noisy_preset_computes_neither_run_nor_twin_nor_robustness(monkeypatch):
    from rnnlab.sharing.presets import PRESETS_BY_KEY

    query = PRESETS_BY_KEY["noisy_carry_adding"].query()
    first = open_page("explore", **query)
    computed: list[str] = []
    for config in (first.session_state.run.config, next(iter(first.session_state.explore.zero_runs.values())).config):
        program = get_program(config)
        real = program.train_steps

        def counting(*args, real=real, mode=config.carry_init):
            computed.append(mode)
            return real(*args)

        counting._cache_size = real._cache_size
        monkeypatch.setattr(program, "train_steps", counting)
    monkeypatch.setattr(probes, "start_robustness", lambda run, **_: computed.append("robustness"))
    second = open_page("explore", **query)
    no_exception(second)
    assert computed == []
    assert figures(second) == figures(first) and second.session_state.explore.robust.keys()


def test_work_estimated_over_a_minute_asks_before_it_starts(monkeypatch):
    from rnnlab.training import estimate

    monkeypatch.setenv(estimate.ENV_MAX_JOB, "1e9")  # a busy machine's measured speed must not make it refused
    monkeypatch.setenv(estimate.ENV_MAX_STEP, "1e9")
    query = {"seq_len": "2000", "steps": "1500", "run": "1"}
    guess = estimate.estimate(Config.from_dict(query)[0])
    assert estimate.CONFIRM_S < guess.total_s < estimate.max_job_seconds()  # long, but within the server's limit
    at = open_page("explore", **query)
    no_exception(at)
    assert at.session_state.run is None  # the link asked to start; nothing started yet
    warning = next(w.value for w in at.warning if "longer than a minute" in w.value)
    assert warning.startswith(f"This will take {guess.describe()}")
    assert any(c.value.startswith("Train: about ") for c in at.caption)
    button(at, "Cancel").click().run()
    assert not any("longer than a minute" in w.value for w in at.warning) and at.session_state.run is None


def test_a_run_over_the_servers_time_limit_is_refused_with_the_numbers(small, monkeypatch):
    monkeypatch.setenv("RNNLAB_MAX_JOB_MINUTES", "0.00001")  # 0.6 ms: every run is over it, measured or not
    at = open_page("explore", **small)
    button(at, "Train").click().run()
    no_exception(at)
    assert at.session_state.run is None and not at.session_state.explore.training
    refused = [unescaped(e.value) for e in at.error]
    assert any("more than this server's limit of 0.6 ms per job" in e and "RNNLAB_MAX_JOB_MINUTES" in e
               for e in refused), refused


def test_choosing_convlstm_switches_to_a_task_and_size_it_can_run():
    at = open_page("explore")
    at.sidebar.selectbox(key="w_cell").set_value("conv_lstm").run()
    no_exception(at)
    assert [at.sidebar.selectbox(key="w_task").value, at.sidebar.number_input(key="w_features").value,
            at.sidebar.number_input(key="w_batch").value, at.sidebar.number_input(key="w_seq_len").value] == [
        "moving_dot", 16, 16, 20]
    assert any(i.value.startswith("ConvLSTM needs other settings to run") for i in at.sidebar.info)
    assert not at.error and at.query_params["cell"] == "conv_lstm" and at.query_params["task"] == "moving_dot"
    at.sidebar.selectbox(key="w_cell").set_value("gru").run()
    assert at.sidebar.selectbox(key="w_task").value == "adding" and not at.error


def test_a_new_run_whose_first_compile_runs_in_a_worker_is_built_after_it_and_a_stopped_compile_says_so(
        small, monkeypatch):
    import ui.explore_state
    import ui.explore_training

    compiles: list[bool] = []
    monkeypatch.setattr(ui.explore_state, "compiles_in_worker", lambda config: True)
    monkeypatch.setattr(ui.explore_training, "compile_first", lambda config, status, keep_going: compiles.pop(0))
    at = open_page("explore", **small)
    compiles[:] = [False]  # the worker's compile is stopped
    button(at, "Train").click().run()
    no_exception(at)
    assert at.session_state.run is None and not at.session_state.explore.actions.busy
    assert any(i.value.startswith("Stopped while compiling") for i in at.info)
    compiles[:] = [True, True]  # the worker's compile, then the training loop's check
    button(at, "Train").click().run()
    no_exception(at)
    assert at.session_state.run.done and at.session_state.explore.actions.pending is None
