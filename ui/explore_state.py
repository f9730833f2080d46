"""The Explore page's state in one object (:class:`ExploreState`, under the session key ``explore``), the facts its
decisions read, and the effects it carries out (:mod:`rnnlab.session.explore_actions` decides)."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd
import streamlit as st

from rnnlab.config import Config, ConfigError
from rnnlab.i18n import sentences
from rnnlab.session.explore_actions import (
    ActionState,
    Cost,
    Deferred,
    Effect,
    Event,
    Facts,
    Loaded,
    RunFacts,
    RunFailed,
    RunStarted,
    decide,
)
from rnnlab.training import estimate
from rnnlab.training.train import Run, RunView
from ui.compiling import compiles_in_worker
from ui.explore_training import load_run
from ui.work import start_run

KEY = "explore"
RUN_KEY = "run"  # the session's run: the Gradients page reads it and a browser reload restores it (ui.session)


@dataclass
class ExploreState:
    """What the Explore page keeps between script runs (the widgets keep their own values under their keys)."""

    actions: ActionState = field(default_factory=ActionState)  # what the buttons set going
    zero_runs: dict[tuple, Run] = field(default_factory=dict)  # the zero-carry twin, by zero_key of its run
    robust: dict[tuple, pd.DataFrame] = field(default_factory=dict)  # robustness tables by (id(run), step)
    pinned: RunView | None = None  # run A of an A/B comparison
    upload_n: int = 0  # a new uploader after each upload, so that the same file can be loaded again

    @property
    def run(self) -> Run | None:
        """The session's run, kept under its own session key (:data:`RUN_KEY`)."""
        return st.session_state.get(RUN_KEY)

    @run.setter
    def run(self, run: Run | None) -> None:
        st.session_state[RUN_KEY] = run

    @property
    def training(self) -> bool:
        return self.actions.training

    @property
    def uploader_key(self) -> str:
        return f"w_params_file_{self.upload_n}"

    def apply(self, event: Event) -> tuple[Effect, ...]:
        """Decide ``event``: keep the new action state, return the effects to carry out."""
        self.actions, effects = decide(self.actions, event)
        return effects

    def pin(self) -> None:
        if self.run is not None:
            self.pinned = self.run.view()

    def unpin(self) -> None:
        self.pinned = None


def explore_state() -> ExploreState:
    """This session's Explore state (a new one on its first visit)."""
    st.session_state.setdefault(RUN_KEY, None)
    return st.session_state.setdefault(KEY, ExploreState())


def costs(run: Run | None, config: Config) -> tuple[estimate.Estimate, estimate.Estimate]:
    """How long Train (the remaining steps, or all of a new run) and Step (one chunk) will take."""
    continues = run is not None and run.matches(config) and not run.history.stop_reason
    left = config.steps - run.step if continues and run is not None else config.steps
    return estimate.estimate(config, steps=max(left, 0) or config.steps), estimate.estimate(config, config.chunk)


def facts(run: Run | None, config: Config, errors: list[str]) -> Facts:
    """What a decision on ``config`` reads: its errors, the run's progress and (without errors) the costs."""
    known = None if run is None else RunFacts(matches=run.matches(config), done=run.done,
                                              reached=run.step >= config.steps,
                                              stopped=bool(run.history.stop_reason))
    if errors:
        return Facts(errors=True, run=known)
    train, step = (Cost(guess.total_s, guess.described(), estimate.refusal(guess)) for guess in costs(run, config))
    return Facts(run=known, train=train, step=step)


def carry_out(state: ExploreState, effects: tuple[Effect, ...], config: Config) -> None:
    """Do what a decision asked for (the pending compile's effects are the page's: they draw)."""
    for effect in effects:
        if effect is Effect.NEW_RUN:
            start_new_run(state, config)
        elif effect is Effect.FORGET_RUN:
            state.run, state.zero_runs = None, {}
        elif effect is Effect.LOAD_FILE:
            file = st.session_state.get(state.uploader_key)
            state.upload_n += 1
            if file is not None:
                loaded, message = load_run(file, config)
                if loaded is not None:
                    state.run, state.zero_runs = loaded, {}
                carry_out(state, state.apply(Loaded(loaded is not None, message)), config)
        elif effect is Effect.RERUN or (effect is Effect.RERUN_TO_TRAIN and state.actions.training):
            st.rerun()


def start_new_run(state: ExploreState, config: Config) -> None:
    """A new run of ``config``: built now, or (a long first compile) once a worker compiled it, where Stop acts."""
    if compiles_in_worker(config):
        state.run = None
        state.apply(Deferred(config))
        return
    try:
        state.run = start_run(config)
    except ConfigError as e:
        state.run = None
        state.apply(RunFailed(sentences(*e.messages)))
    else:
        state.apply(RunStarted(state.run.done))

