"""The heavy work a user can start, as module-level functions of plain arguments for
:class:`rnnlab.server.work.executor.Work`: runs started, trained and loaded, first compiles, probes, sweeps and example
looks.

Each reports between its pieces with :func:`rnnlab.server.work.reporting.report` (where a cancel stops it) and never
draws: it may run in another thread or process than the page that asked. A probe reads a :class:`Model` (a
run's configuration, parameters and key: data only), never a live :class:`~rnnlab.training.train.Run`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import jax
import pandas as pd

from rnnlab import sweep
from rnnlab.config import Config
from rnnlab.files import export
from rnnlab.i18n import Msg
from rnnlab.model.cells import CELLS
from rnnlab.probing import example, probes
from rnnlab.server.storage import run_files
from rnnlab.server.work import precompile, reporting
from rnnlab.server.work.shared_runs import RUNS
from rnnlab.training import calls
from rnnlab.training.history import CallProgress
from rnnlab.training.program import Program, get_program, hyper_args
from rnnlab.training.train import CALL_SECONDS, Run, RunView, spread


@dataclass(frozen=True)
class Model:
    """What a probe reads of a run: its configuration, key, current parameters and kept snapshots."""

    config: Config
    root: jax.Array
    params: dict
    snapshots: tuple = ()

    @classmethod
    def of(cls, run: Run) -> Model:
        with run.between_calls():
            return cls(run.config, run.root, run.params, tuple(run.snapshots))

    @property
    def program(self) -> Program:
        return get_program(self.config)

    @property
    def scale(self):
        return hyper_args(self.config)[2]

    def snapshots_at(self, count: int = 3) -> list[tuple[int, dict]]:
        return spread(list(self.snapshots), count)


# ---- runs -----------------------------------------------------------------------------------------------------
def start_run(config: Config) -> Run:
    """A run of ``config``: a copy of the one another session trained (or is training), else an initialisation
    and one evaluation."""
    return RUNS.copy_of(config) or Run(config)


def untrained_run_bytes(config: Config) -> bytes:
    """A new run of ``config`` (an initialisation and one evaluation) as a run file's bytes: made on a worker, read
    back without computing (:func:`rnnlab.server.storage.run_files.run_from_bytes`)."""
    return run_files.run_to_bytes(Run(config))


def untrained_run(config: Config) -> Run:
    """A new run of ``config`` (an initialisation and one evaluation), never another session's trained run."""
    return Run(config)


def load_run(data: bytes, name: str, config: Config) -> Run:
    """A new run of ``config`` from the parameters in a file's ``data``."""
    return Run(config, params=export.load_params(data, config), origin=name)


def call_job(run: Run, max_seconds: float | None, compute: Callable = calls.compute_call) -> CallProgress | None:
    """One compiled call of ``run`` bounded by ``max_seconds``, or (while another call on it is in progress) a wait
    for that call, up to a few calls long; None then. ``compute`` computes the steps (elsewhere, e.g. on a cluster)."""
    progress = run.run_call(max_seconds, wait=False, compute=compute)
    if progress is None:
        for _ in range(20):
            if run.settle(0.25 * (max_seconds or 1.0)) or reporting.should_stop():
                break
    reporting.report(run.step / max(1, run.config.steps))
    return progress


def finished_run(config: Config) -> RunView:
    """``config``'s pristine run trained to its end, as a view (a class's result, revealed to everyone at once): the
    shared run of ``config`` when a session has trained it (finished, or continued from where it is), else a new one,
    one compiled call at a time (a cancel stops it between two); offered to the sessions that start it afterwards."""
    return _trained(config).view()


def _trained(config: Config) -> Run:
    run = RUNS.copy_of(config) or Run(config)
    while not run.done:
        run.run_call(CALL_SECONDS)
        # TRANSLATORS: progress of the run a class's question is settled by
        reporting.report(run.step / max(1, config.steps), Msg("Training the question's run: step {step} / {total}",
                                                              step=run.step, total=config.steps))
    RUNS.offer(run)
    return run


def finished_twins(config: Config) -> tuple[RunView, RunView, tuple[float, float, float] | None]:
    """What settles a question on a zero-carry comparison: ``config``'s finished run and its twin trained as long
    from a fixed zero carry (the Explore page's comparison), as views, and for a drawn carry the fresh starts'
    standard deviation with both runs' evaluation losses from fresh carries (the mean of
    :data:`rnnlab.probing.probes.ROBUSTNESS_DRAWS` draws); None for a learned carry."""
    runs = [_trained(c) for c in (config, replace(config, carry_mode="fixed", carry_init="zeros"))]
    fresh = None
    if config.carry_mode != "learnable":
        mine, theirs = (float(robustness(Model.of(run)).set_index("start")["loss"].iloc[1]) for run in runs)
        fresh = (probes.start_sigma(config), mine, theirs)
    return runs[0].view(), runs[1].view(), fresh


def long_compile(config: Config) -> bool:
    """Whether ``config``'s first compile is long enough for a worker process (:func:`compile_program`) and not
    done yet."""
    return precompile.use_worker(config) and not get_program(config).is_compiled()


def compile_program(config: Config, timeout_s: float | None = None) -> bool:
    """Compile ``config``'s training program in a worker process (:func:`rnnlab.server.work.precompile.
    compile_in_worker`); False when it was stopped. A forced cancel kills the worker at once; a worker that failed
    leaves the compile to the first call in this process."""
    def started(worker) -> None:
        reporting.on_force(lambda: precompile.stop_worker(worker))

    return precompile.compile_in_worker(config, reporting.should_stop, timeout_s, started) != precompile.STOPPED


# ---- probes -----------------------------------------------------------------------------------------------------
def grad_through_time(model: Model) -> pd.DataFrame:
    """||dL/dh_t|| through time at the start, middle and end of training (:func:`rnnlab.probing.probes.
    run_grad_through_time`)."""
    return probes.run_grad_through_time(model, progress=reporting.report)


def connectivity(model: Model) -> pd.DataFrame:
    """How much the last output depends on each input step (:func:`rnnlab.probing.probes.run_connectivity`)."""
    return probes.run_connectivity(model, progress=reporting.report)


def robustness(model: Model) -> pd.DataFrame:
    """The model's losses from other starts (:func:`rnnlab.probing.probes.start_robustness`)."""
    return probes.start_robustness(model, progress=reporting.report)


def example_looks(model: Model, frames: list[tuple[int, dict]], index: int) -> list[example.Look]:
    """Example ``index`` under each of ``frames`` (step, parameters)."""
    out = []
    for i, (step, params) in enumerate(frames):
        out.append(example.look(model.program, params, model.root, model.scale, index, step))
        reporting.report((i + 1) / len(frames))
    return out


# ---- sweeps -----------------------------------------------------------------------------------------------------
def decay_sweep(base: Config, cells: list[str], lengths: list[int], weights: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The gradient reaching h_0 against T for each cell, trained briefly first for ``weights == 'trained'``
    (:func:`rnnlab.probing.probes.decay_sweep`), and its exponential fits. Half the progress is the training."""
    params = None
    share = 0.5 if weights == "trained" else 0.0
    if weights == "trained":
        params = {}
        for i, cell in enumerate(cells):
            # Messages, not text: the page renders them in its reader's language (this runs in a worker thread).
            name = Msg(CELLS[cell].label)  # the cell's label, translated where it is shown
            # TRANSLATORS: progress of a sweep that first trains each cell a little; {cell} is a cell's name
            # (GRU, LSTM, Simple RNN), {i} of {n} counts the cells
            label = Msg("Training the {cell} briefly ({i} of {n}; once per server)", cell=name, i=i + 1,
                        n=len(cells))
            reporting.report(share * i / len(cells), Msg("{what}…", what=label))

            def trained(p: CallProgress, i: int = i, label: Msg = label) -> None:
                # TRANSLATORS: {what} says what is trained, e.g. "Training the GRU briefly (1 of 2; once per server)"
                reporting.report(share * (i + p.step / p.total) / len(cells),
                                Msg("{what}: step {step} / {total}", what=label, step=p.step, total=p.total))

            params[cell] = probes.trained_params(probes.sweep_training_config(base, cell), trained,
                                                 max_seconds=1.0)

    def probed(done: float, total: int, text: Msg) -> None:
        reporting.report(share + (1 - share) * done / total, text)  # a message: shown with str()

    table = probes.decay_sweep(base, list(cells), list(lengths), params=params, callback=probed)
    return table, probes.fit_decay(table)


def compare_sweep(configs: list[Config], max_seconds: float | None) -> sweep.SweepResult:
    """The Compare page's grid trained together (:func:`rnnlab.sweep.run_sweep`); a gentle cancel stops it
    after its current call and returns what it trained."""
    return sweep.run_sweep(configs, reporting.keep_going, max_seconds=max_seconds)



# ---- how each kind of work runs on a cluster -------------------------------------------------------------------
# The Ray executor (rnnlab.server.on_ray.executor) gives each form its cluster's shape; work this table does not name
# runs whole on a worker, from its plain arguments. A new kind of work takes a row here, not a branch there.
SHARED_CALL = "shared call"  # a run's compiled call: on a worker, computed once for every web process (pristine run)
SHARED_START = "shared start"  # a run started: made on a worker, a pristine one's finished run kept for every process
MADE_ON_WORKER = "made on a worker"  # a new run made on a worker and read back here from bytes
IN_PROCESS = "in this process"  # reads what only this process has (an uploaded file), as in embedded mode
CLUSTER_FORMS: dict[Callable, str] = {call_job: SHARED_CALL, start_run: SHARED_START, untrained_run: MADE_ON_WORKER,
                                      load_run: IN_PROCESS}
