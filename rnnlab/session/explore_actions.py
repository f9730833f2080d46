"""What the Explore page's buttons do, as a pure function: :func:`decide` maps the page's :class:`ActionState` and
an event to the new state and the :class:`Effect` s the page carries out.

Buttons only record what was asked; once per script run the page sends :class:`Asked` with that request and the
facts it depends on (the settings' validation errors, the run's progress, the estimates), as plain values. The
effects that have an outcome answer with another event: a new run built (:class:`RunStarted`), one that cannot be
built (:class:`RunFailed`) or waits for a worker's compile (:class:`Deferred`), that compile
(:class:`PendingSeen`, :class:`Compiled`), a parameter file (:class:`Loaded`), the end of training
(:class:`TrainingEnded`, :class:`StepBegun`).

What the page tells later (a question, a refusal, an error, an upload's outcome) is kept as a :class:`~rnnlab.i18n.Msg`
(:data:`Text`), rendered in the language of whoever reads it when shown: switching the language shows it in the new one.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum

from rnnlab.config import Config
from rnnlab.i18n import Msg
from rnnlab.training.estimate import CONFIRM_S

Text = Msg | str  # something to tell: a message rendered when shown (``str(text)``), or text already in words

COSTLY = ("train", "step", "autorun")  # the requests that start work, so may be refused or asked about first


class Effect(StrEnum):
    """What the page does after a decision."""

    NEW_RUN = "new run"  # a new run of the settings: now, or after its first compile in a worker (Deferred)
    FORGET_RUN = "forget run"  # no run, and no zero-carry twins
    LOAD_FILE = "load file"  # a run from the uploaded parameter file, answered by Loaded
    COMPILE = "compile"  # compile the pending configuration in a worker, answered by Compiled
    BUILD_PENDING = "build pending"  # the run of the pending configuration, now compiled
    SAY_STOPPED = "say stopped"  # tell that the pending compile was stopped
    RERUN = "rerun"  # run the page's script again
    RERUN_TO_TRAIN = "rerun to train"  # run it again if training is still asked for then (a run built finished is not)


@dataclass(frozen=True)
class Question:
    """Long work waiting for "Start anyway": what was asked and how long it will take."""

    action: str  # train, step or autorun
    described: Text

    @property
    def answer(self) -> str:
        """The request "Start anyway" makes: a class link's autorun is a Train."""
        return "train" if self.action == "autorun" else self.action


@dataclass(frozen=True)
class ActionState:
    """What the page's buttons have set going."""

    training: bool = False  # Train: the page trains until the run is done or this is off
    step_once: bool = False  # Step: the page trains one chunk
    pending: Config | None = None  # a new run waiting for its first compile in a worker
    question: Question | None = None  # "this will take over a minute, start anyway?"
    error: Text | None = None  # why the last request did nothing (over the server's limits, a bad config)
    load_message: tuple[str, Text] | None = None  # ("success" or "error", text) of the last parameter upload

    @property
    def busy(self) -> bool:
        """Whether training is asked for (Stop is on; a pending compile goes on)."""
        return self.training or self.step_once


@dataclass(frozen=True)
class RunFacts:
    """The session's run, as far as decisions need it."""

    matches: bool  # the settings continue it (same compiled settings and seed)
    done: bool  # at its number of steps, or stopped
    reached: bool  # its step is at least the settings' number of steps
    stopped: bool  # stopped early (it diverged): Train starts again


@dataclass(frozen=True)
class Cost:
    """An estimate of some work: seconds, in words, and why the server refuses it (None: it does not)."""

    seconds: float
    described: Text
    refusal: Text | None = None


@dataclass(frozen=True)
class Facts:
    """What a decision reads besides the state; the costs are None when the settings have errors."""

    errors: bool = False
    run: RunFacts | None = None
    train: Cost | None = None  # the rest of the run (or a new one)
    step: Cost | None = None  # one chunk


@dataclass(frozen=True)
class Asked:
    """A script run of the page, with what its buttons asked: train, step, stop, reset, load, cancel or None;
    ``confirmed``: from "Start anyway"; ``autorun``: a class link asks to train."""

    facts: Facts
    action: str | None = None
    confirmed: bool = False
    autorun: bool = False


@dataclass(frozen=True)
class RunFailed:
    """Effect.NEW_RUN could not build the run."""

    message: Text


@dataclass(frozen=True)
class RunStarted:
    """Effect.NEW_RUN built the run; ``done``: it arrived finished (a class link's run that another session
    trained), so there is nothing to train."""

    done: bool


@dataclass(frozen=True)
class Deferred:
    """Effect.NEW_RUN left the run of ``config`` to be built after its first compile, in a worker."""

    config: Config


@dataclass(frozen=True)
class PendingSeen:
    """A script run found a pending configuration; ``matches``: the settings are still that configuration's."""

    matches: bool


@dataclass(frozen=True)
class Compiled:
    """The pending compile ended: ``finished``, or stopped."""

    finished: bool


@dataclass(frozen=True)
class Loaded:
    """Effect.LOAD_FILE's outcome: ``ok`` (a new run from the file) or not, and what to tell."""

    ok: bool
    message: Text


@dataclass(frozen=True)
class TrainingEnded:
    """The Train loop ended (done, stopped, or its compile stopped); ``error``: a part failed, and why."""

    error: Text | None = None


@dataclass(frozen=True)
class StepBegun:
    """The page starts the chunk that Step asked for."""


Event = Asked | RunFailed | RunStarted | Deferred | PendingSeen | Compiled | Loaded | TrainingEnded | StepBegun


def decide(state: ActionState, event: Event) -> tuple[ActionState, tuple[Effect, ...]]:
    """The state after ``event`` and what the page does, in order."""
    match event:
        case Asked():
            return asked(state, event)
        case RunFailed(message=message):
            return replace(state, training=False, step_once=False, pending=None, error=message), ()
        case RunStarted(done=True):
            return replace(state, training=False), ()
        case RunStarted():
            return state, ()
        case Deferred(config=config):
            return replace(state, pending=config), ()
        case PendingSeen(matches=matches):
            return (state, (Effect.COMPILE,)) if state.busy and matches else compile_stopped(state)
        case Compiled(finished=True):
            return replace(state, pending=None), (Effect.BUILD_PENDING,)
        case Compiled():
            return compile_stopped(state)
        case Loaded(ok=True, message=message):
            return replace(state, training=False, error=None, load_message=("success", message)), ()
        case Loaded(message=message):
            return replace(state, load_message=("error", message)), ()
        case TrainingEnded(error=error):
            return replace(state, training=False, error=error or state.error), (Effect.RERUN,)
        case StepBegun():
            return replace(state, step_once=False), ()
    raise TypeError(f"not an event: {event!r}")


def asked(state: ActionState, event: Asked) -> tuple[ActionState, tuple[Effect, ...]]:
    """A script run's request. Long work is asked about first and work over the server's limits refused; any
    other request withdraws the question; a run whose settings changed (stale) stops training."""
    facts, action = event.facts, event.action
    if event.autorun and not facts.errors:
        action = "autorun"
    if action in COSTLY and not facts.errors:
        cost = facts.step if action == "step" else facts.train
        if cost is None:
            raise ValueError("the costs of train and step are given whenever the settings are valid")
        if cost.refusal:  # too long for this server: not even asked
            state, action = replace(state, error=cost.refusal, question=None), None
        elif cost.seconds > CONFIRM_S and not event.confirmed:  # long work starts only when asked twice
            state, action = replace(state, question=Question(action, cost.described)), None
    if action is not None:
        state = replace(state, question=None)
    if action in ("train", "step", "reset"):
        state = replace(state, load_message=None)
    effects: tuple[Effect, ...] = ()
    if action in ("train", "autorun") and not facts.errors:
        state, effects = train(state, facts.run)
    elif action == "step" and not facts.errors:
        state, effects = step(state, facts.run)
    elif action == "stop":
        state = replace(state, training=False, step_once=False)
    elif action == "reset":
        state = replace(state, training=False, step_once=False, pending=None, error=None, load_message=None)
        effects = (Effect.FORGET_RUN,)
    elif action == "load":
        effects = (Effect.LOAD_FILE,)
    if action == "autorun":
        effects += (Effect.RERUN_TO_TRAIN,)  # train in a second run: in a session's first the widgets stay inactive
    run_stays = not {Effect.NEW_RUN, Effect.FORGET_RUN} & set(effects)
    if run_stays and facts.run is not None and not facts.run.matches:
        state = replace(state, training=False)  # the charts show the previous run; nothing trains it
    return state, effects


def train(state: ActionState, run: RunFacts | None) -> tuple[ActionState, tuple[Effect, ...]]:
    """Train: continue the run, or start a new one when the settings changed or it has finished or stopped."""
    if run is None or not run.matches or (run.done and run.reached) or run.stopped:
        return replace(state, training=True, pending=None, error=None), (Effect.NEW_RUN,)
    return replace(state, training=True, error=None), ()


def step(state: ActionState, run: RunFacts | None) -> tuple[ActionState, tuple[Effect, ...]]:
    """Step: one chunk, on the run or on a new one when the settings changed or it is done."""
    state = replace(state, training=False, step_once=True, error=None)
    if run is None or not run.matches or run.done:
        return replace(state, pending=None, error=None), (Effect.NEW_RUN,)
    return state, ()


def compile_stopped(state: ActionState) -> tuple[ActionState, tuple[Effect, ...]]:
    """The pending compile was stopped (Stop, or the settings changed meanwhile): nothing trains."""
    return replace(state, training=False, step_once=False, pending=None), (Effect.SAY_STOPPED,)
