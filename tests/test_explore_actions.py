"""The Explore page's decisions (rnnlab.session.explore_actions): every request and outcome, as plain values."""

from __future__ import annotations

from dataclasses import replace

import pytest

from rnnlab.config import Config
from rnnlab.session import (
    ActionState,
    Asked,
    Compiled,
    Cost,
    Deferred,
    Effect,
    Facts,
    Loaded,
    PendingSeen,
    Question,
    RunFacts,
    RunFailed,
    RunStarted,
    StepBegun,
    TrainingEnded,
    decide,
)
from rnnlab.training.estimate import CONFIRM_S

QUICK = Cost(5.0, "about 5 s")
LONG = Cost(CONFIRM_S + 30, "about 1.5 min")
REFUSED = Cost(3600.0, "about 1 h", refusal="This run would take about 1 h, more than this server's limit")
PARTWAY = RunFacts(matches=True, done=False, reached=False, stopped=False)
FINISHED = RunFacts(matches=True, done=True, reached=True, stopped=False)
RAISED = RunFacts(matches=True, done=True, reached=False, stopped=False)  # finished, then the steps were raised
STOPPED = RunFacts(matches=True, done=True, reached=False, stopped=True)  # diverged
STALE = RunFacts(matches=False, done=False, reached=False, stopped=False)
IDLE = ActionState()
TRAINING = ActionState(training=True)


def facts(run: RunFacts | None = PARTWAY, train: Cost = QUICK, step: Cost = QUICK, errors: bool = False) -> Facts:
    return Facts(errors=True, run=run) if errors else Facts(run=run, train=train, step=step)


def ask(state: ActionState, action: str | None = None, **given) -> tuple[ActionState, tuple[Effect, ...]]:
    confirmed, autorun = given.pop("confirmed", False), given.pop("autorun", False)
    return decide(state, Asked(facts(**given), action, confirmed, autorun))


# ---- Train and Step -------------------------------------------------------------------------------------------

def test_train_continues_a_run_the_settings_continue():
    assert ask(IDLE, "train") == (TRAINING, ())
    state, effects = ask(IDLE, "train", run=RAISED)  # finished at the old number of steps: more to train
    assert state.training and effects == ()


@pytest.mark.parametrize("run", [None, FINISHED, STOPPED, STALE], ids=["no run", "finished", "stopped", "stale"])
def test_train_starts_a_new_run_without_one_on_a_finished_or_stopped_run_and_after_a_static_change(run):
    state, effects = ask(ActionState(error="an old refusal"), "train", run=run)
    assert effects == (Effect.NEW_RUN,) and state.training and state.error is None


def test_step_does_one_chunk_of_the_run_or_of_a_new_one():
    assert ask(TRAINING, "step") == (ActionState(step_once=True), ())  # Train's loop gives way
    for run in (None, FINISHED, RAISED, STOPPED, STALE):
        state, effects = ask(IDLE, "step", run=run)
        assert effects == (Effect.NEW_RUN,) and state == ActionState(step_once=True), run


def test_a_new_run_that_cannot_be_built_trains_nothing_and_says_why():
    for action in ("train", "step"):
        state, _ = ask(IDLE, action, run=None)
        assert decide(state, RunFailed("bad")) == (ActionState(error="bad"), ())


def test_train_and_step_clear_the_upload_message():
    loaded = ActionState(load_message=("success", "Loaded"))
    assert ask(loaded, "train")[0].load_message is None and ask(loaded, "step")[0].load_message is None


def test_nothing_is_started_while_the_settings_have_errors():
    for action in ("train", "step"):
        state, effects = ask(ActionState(question=Question("train", "long")), action, errors=True)
        assert (state, effects) == (IDLE, ()), action  # the click still withdraws the question


# ---- Stop, Reset, Load, Cancel -------------------------------------------------------------------------------

def test_stop_ends_training_and_a_step():
    assert ask(TRAINING, "stop") == (IDLE, ())
    assert ask(ActionState(step_once=True), "stop") == (IDLE, ())
    assert ask(ActionState(load_message=("error", "x")), "stop")[0].load_message == ("error", "x")


def test_reset_forgets_the_run_the_error_and_the_upload_message():
    state = ActionState(training=True, error="refused", load_message=("error", "bad file"))
    assert ask(state, "reset") == (IDLE, (Effect.FORGET_RUN,))


def test_reset_also_forgets_a_step_waiting_for_its_compile():
    waiting = ActionState(step_once=True, pending=Config(seq_len=30))
    assert ask(waiting, "reset") == (IDLE, (Effect.FORGET_RUN,))


@pytest.mark.parametrize("action", ["train", "step"])
def test_a_request_that_goes_ahead_on_the_same_run_clears_an_earlier_refusal(action):
    state, _ = ask(ActionState(error=REFUSED.refusal), action)
    assert state.error is None and state.busy


def test_load_loads_the_file_and_its_outcome_is_told():
    state, effects = ask(TRAINING, "load")
    assert effects == (Effect.LOAD_FILE,) and state == TRAINING  # training goes on until a file is loaded
    refused = ActionState(error="refused")
    assert decide(replace(TRAINING, error="refused"), Loaded(True, "Loaded it")) == (
        ActionState(load_message=("success", "Loaded it")), ())
    assert decide(TRAINING, Loaded(False, "not loaded")) == (replace(TRAINING, load_message=("error", "not loaded")),
                                                              ())
    assert decide(refused, Loaded(False, "no"))[0].error == "refused"


def test_cancel_withdraws_the_question_and_nothing_else():
    asked = ActionState(question=Question("train", "long"), load_message=("error", "x"))
    assert ask(asked, "cancel") == (ActionState(load_message=("error", "x")), ())


# ---- long work is asked about, work over the limits refused ---------------------------------------------------

@pytest.mark.parametrize("action", ["train", "step"])
def test_long_work_asks_first_and_starts_when_confirmed(action):
    state, effects = ask(IDLE, action, train=LONG, step=LONG)
    assert effects == () and state == ActionState(question=Question(action, LONG.described))
    assert state.question.answer == action
    state, effects = ask(state, state.question.answer, train=LONG, step=LONG, confirmed=True)
    assert state.question is None and (state.training or state.step_once)


def test_the_cost_asked_about_is_the_requests_own():
    assert ask(IDLE, "step", train=LONG, step=QUICK)[0] == ActionState(step_once=True)
    assert ask(IDLE, "train", train=QUICK, step=LONG)[0] == TRAINING


@pytest.mark.parametrize("other", ["stop", "reset", "load", "step"])
def test_a_click_on_another_button_withdraws_the_question(other):
    asked = ActionState(question=Question("train", LONG.described))
    assert ask(asked, other)[0].question is None


def test_a_refusal_over_the_limit_is_never_asked_not_even_when_confirmed():
    for action in ("train", "step"):
        for confirmed in (False, True):
            state, effects = ask(ActionState(question=Question(action, "long")), action, train=REFUSED,
                                 step=REFUSED, confirmed=confirmed)
            assert (state, effects) == (ActionState(error=REFUSED.refusal), ())


# ---- a class link's autorun -----------------------------------------------------------------------------------

def test_autorun_trains_in_a_second_script_run():
    assert ask(IDLE, autorun=True, run=None) == (TRAINING, (Effect.NEW_RUN, Effect.RERUN_TO_TRAIN))


def test_a_run_that_arrives_finished_is_not_trained_so_a_class_link_needs_one_script_run():
    assert decide(TRAINING, RunStarted(done=True)) == (IDLE, ())  # RERUN_TO_TRAIN then does nothing
    assert decide(TRAINING, RunStarted(done=False)) == (TRAINING, ())
    assert decide(ActionState(step_once=True), RunStarted(done=True)) == (ActionState(step_once=True), ())


def test_autorun_with_errors_does_nothing():
    assert ask(IDLE, autorun=True, run=None, errors=True) == (IDLE, ())
    assert ask(IDLE, "stop", autorun=True, errors=True) == (IDLE, ())  # a click in the same run still counts


def test_long_autorun_asks_and_start_anyway_is_a_train():
    state, effects = ask(IDLE, autorun=True, run=None, train=LONG)
    assert effects == () and state.question == Question("autorun", LONG.described)  # no rerun: it waits
    assert state.question.answer == "train"
    state, effects = ask(state, "train", run=None, train=LONG, confirmed=True)
    assert state == TRAINING and effects == (Effect.NEW_RUN,)


def test_autorun_over_the_limit_is_refused():
    assert ask(IDLE, autorun=True, run=None, train=REFUSED) == (ActionState(error=REFUSED.refusal), ())


def test_autorun_keeps_the_upload_message():
    loaded = ActionState(load_message=("success", "Loaded"))
    assert ask(loaded, autorun=True)[0].load_message == ("success", "Loaded")


# ---- a stale run (its settings changed) -----------------------------------------------------------------------

def test_a_stale_run_stops_training_whatever_was_asked_that_keeps_it():
    for action in (None, "stop", "load", "cancel"):
        assert not ask(TRAINING, action, run=STALE)[0].training, action
    assert not ask(TRAINING, "train", run=STALE, errors=True)[0].training


def test_training_goes_on_through_a_script_run_without_a_request():
    assert ask(TRAINING) == (TRAINING, ())
    assert ask(ActionState(step_once=True)) == (ActionState(step_once=True), ())


# ---- a new run whose long first compile runs in a worker -----------------------------------------------------

def test_a_deferred_run_compiles_in_a_later_script_run_then_is_built():
    config = Config()
    state, _ = ask(IDLE, "train", run=None)
    state, effects = decide(state, Deferred(config))
    assert state.pending == config and effects == ()
    assert decide(state, PendingSeen(matches=True)) == (state, (Effect.COMPILE,))
    state, effects = decide(state, Compiled(finished=True))
    assert state == TRAINING and effects == (Effect.BUILD_PENDING,)


def test_stop_during_a_pending_compile_ends_it():
    waiting = ActionState(training=True, pending=Config())
    state, effects = ask(waiting, "stop", run=None)
    assert not state.busy and state.pending == Config() and effects == ()
    assert decide(state, PendingSeen(matches=True)) == (IDLE, (Effect.SAY_STOPPED,))
    assert decide(waiting, Compiled(finished=False)) == (IDLE, (Effect.SAY_STOPPED,))  # stopped within the compile


def test_a_pending_compile_whose_settings_changed_is_dropped():
    for waiting in (ActionState(training=True, pending=Config()), ActionState(step_once=True, pending=Config())):
        assert decide(waiting, PendingSeen(matches=False)) == (IDLE, (Effect.SAY_STOPPED,))


def test_a_new_request_replaces_a_pending_configuration():
    state, effects = ask(ActionState(pending=Config()), "step", run=None)
    assert state.pending is None and effects == (Effect.NEW_RUN,)


# ---- the loops' ends ------------------------------------------------------------------------------------------

def test_the_end_of_training_reruns_the_page_and_a_step_is_taken_once():
    assert decide(TRAINING, TrainingEnded()) == (IDLE, (Effect.RERUN,))
    assert decide(ActionState(step_once=True), StepBegun()) == (IDLE, ())
    assert TRAINING.busy and ActionState(step_once=True).busy and not IDLE.busy


def test_anything_else_is_not_an_event():
    with pytest.raises(TypeError):
        decide(IDLE, "train")


def test_a_failed_training_call_ends_training_and_says_why():
    assert decide(TRAINING, TrainingEnded("Training stopped at step 10: no worker.")) == (
        ActionState(error="Training stopped at step 10: no worker."), (Effect.RERUN,))
    refused = ActionState(training=True, error="earlier")
    assert decide(refused, TrainingEnded()) == (ActionState(error="earlier"), (Effect.RERUN,))
