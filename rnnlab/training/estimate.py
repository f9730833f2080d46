"""How long a configuration will take before it starts: a compile estimate and a time per training step.

The step time comes from the arithmetic of a step (forward and backward through every time step), divided
by a speed in FLOP/s, plus a fixed cost per scanned time step. The speed starts from a cautious guess for a
small CPU and is replaced by what this process measured: every finished compiled call reports its time
(:func:`record_call`) per compiled configuration, and the speed of the measured configurations is used for
the ones not yet run.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass

from rnnlab.config import Config
from rnnlab.device import env_float
from rnnlab.i18n import Msg, MsgN, t
from rnnlab.model.cells import CELLS
from rnnlab.model.tasks import TASKS

DEFAULT_FLOPS = 1.1e11  # FLOP/s a wide recurrent training step's matmuls approach on a 2-core CPU (measured here)
HALF_SPEED_FEATURES = 150  # a cell this wide runs at half that speed, narrower ones slower (smaller matmuls):
# measured here 3-3.7e10 FLOP/s at 64 features, 5-5.6e10 at 128, 6.4e10 at 256, 0.65-1.04e11 at 512
PER_TIME_STEP_S = 4.5e-5  # plus this per scanned time step of a training step, forward and backward (the
# scan's own work: measured here 40-60 us, the bulk of a step with few features or a small batch)
MIN_LEARNING_FLOPS = 1e8  # smaller steps are all overhead: their speed says nothing about larger ones
SPATIAL_SPEED = 0.065  # a ConvLSTM step runs at this share of DEFAULT_FLOPS (measured here: 7e9 FLOP/s)
DEFAULT_COMPILE_S = 6.0  # seconds, with the initialisation and evaluation (measured here: 5-6 s, ConvLSTM too);
# a cell that takes longer says so in its spec (rnnlab.model.cells.CellSpec.compile_s)
CONFIRM_S = 60.0  # longer than this: the page asks before it starts
ENV_MAX_JOB = "RNNLAB_MAX_JOB_MINUTES"
DEFAULT_MAX_JOB_MINUTES = 20.0  # longer than this: refused (a teacher raises it with the variable above)
ENV_MAX_STEP = "RNNLAB_MAX_STEP_SECONDS"
DEFAULT_MAX_STEP_S = 10.0  # one training step longer than this: refused (Stop acts between steps, not within one)
MAX_MEASURED = 2000  # configurations whose step time is remembered (a few hundred KB at most)

_lock = threading.Lock()
_step_seconds: dict[tuple, float] = {}  # static key -> measured seconds per step
_flops_rate: list[float] = []  # full speeds measured by finished calls: FLOP/s / efficiency (recent first)
_compiled: set[tuple] = set()


def step_flops(config: Config) -> float:
    """Arithmetic of one optimiser step: forward and backward (x3) of every gate's matmuls at every time step."""
    task, spec = TASKS[config.task], CELLS[config.cell]
    steps, h, gates = task.steps(config.seq_len), config.features, spec.matmuls
    if spec.spatial:
        positions, kernel = 36, config.kernel_size**2
        per_step = 2 * positions * gates * h * kernel * (h + task.in_features)
    else:
        per_step = 2 * gates * h * (h + task.in_features) + 2 * h * task.out_features
    return 3.0 * config.batch * steps * per_step


@dataclass(frozen=True)
class Estimate:
    """Seconds to compile (0 when compiled already) and per training step; the total for ``steps`` steps."""

    compile_s: float
    step_s: float
    steps: int
    measured: bool  # the step time was measured on this configuration (not derived from its size)

    @property
    def total_s(self) -> float:
        return self.compile_s + self.step_s * self.steps

    def describe(self) -> str:
        """'about 12 s (compiling about 6 s, then 300 steps at about 20 ms each)', in the reader's language."""
        return str(self.described())

    def described(self) -> Msg:
        """:meth:`describe` kept as a message (in session state), rendered in the language of whoever reads it."""
        total, step, n = Duration(self.total_s), Duration(self.step_s), self.steps
        if self.compile_s and self.measured:
            # TRANSLATORS: a time estimate; {total}, {compile} and {step} are durations such as "12 s" or "2.5 min"
            return MsgN("about {total} (compiling about {compile}, then {n:,} step at about {step} each)",
                        "about {total} (compiling about {compile}, then {n:,} steps at about {step} each)", n,
                        total=total, compile=Duration(self.compile_s), step=step)
        if self.compile_s:
            # TRANSLATORS: "from its size": the step time is guessed from the configuration's size, not measured
            return MsgN("about {total} (compiling about {compile}, then {n:,} step at about {step} each, from its "
                        "size)",
                        "about {total} (compiling about {compile}, then {n:,} steps at about {step} each, from its "
                        "size)", n, total=total, compile=Duration(self.compile_s), step=step)
        if self.measured:
            return MsgN("about {total} ({n:,} step at about {step} each)",
                        "about {total} ({n:,} steps at about {step} each)", n, total=total, step=step)
        return MsgN("about {total} ({n:,} step at about {step} each, from its size)",
                    "about {total} ({n:,} steps at about {step} each, from its size)", n, total=total, step=step)


class Duration:
    """A number of seconds that a message shows as :func:`format_seconds` writes it in the reader's language (a
    value of a kept :class:`~rnnlab.i18n.Msg`: rendered when the message is)."""

    __slots__ = ("seconds",)

    def __init__(self, seconds: float):
        self.seconds = float(seconds)

    def __str__(self) -> str:
        return format_seconds(self.seconds)

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)

    def __repr__(self) -> str:
        return f"Duration({self.seconds!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Duration) and other.seconds == self.seconds

    def __hash__(self) -> int:
        return hash(self.seconds)


def compile_seconds(cell: str) -> float:
    """Seconds a first compile of ``cell``'s training program takes here (its spec's, else the default)."""
    own = CELLS[cell].compile_s
    return DEFAULT_COMPILE_S if own is None else own


def efficiency(config: Config) -> float:
    """The share of the full speed (``DEFAULT_FLOPS``, or the measured one) a step of ``config`` runs at: wider
    cells multiply larger matrices, which run faster per FLOP; a ConvLSTM's convolutions run at a fixed share."""
    if CELLS[config.cell].spatial:
        return SPATIAL_SPEED
    return config.features / (config.features + HALF_SPEED_FEATURES)


def estimate(config: Config, steps: int | None = None) -> Estimate:
    """How long ``steps`` (default: all of ``config.steps``) training steps of ``config`` will take here."""
    key = config.static_key()
    steps = config.steps if steps is None else steps
    with _lock:
        measured = _step_seconds.get(key)
        rate = sorted(_flops_rate)[len(_flops_rate) // 2] if _flops_rate else DEFAULT_FLOPS
        compiled = key in _compiled
    speed = rate * efficiency(config)
    overhead = PER_TIME_STEP_S * TASKS[config.task].steps(config.seq_len)
    step_s = measured if measured is not None else overhead + step_flops(config) / speed
    compile_s = 0.0 if compiled else compile_seconds(config.cell)
    return Estimate(compile_s, step_s, steps, measured is not None)


def forget_measurements() -> None:
    """Estimate from sizes alone again, as a fresh server does: forget every measured step time and speed."""
    with _lock:
        _step_seconds.clear()
        _flops_rate.clear()


def max_job_seconds() -> float:
    """The longest job this server starts: ``$RNNLAB_MAX_JOB_MINUTES`` (default 20) in seconds."""
    return env_float(ENV_MAX_JOB, DEFAULT_MAX_JOB_MINUTES) * 60


def max_step_seconds() -> float:
    """The longest single training step this server starts: ``$RNNLAB_MAX_STEP_SECONDS`` (default 10)."""
    return env_float(ENV_MAX_STEP, DEFAULT_MAX_STEP_S)


def over_limit(guess: Estimate, what: str = "This run") -> str | None:
    """Why a job estimated at ``guess`` is refused (one step longer than :func:`max_step_seconds`, or all of it
    longer than :func:`max_job_seconds`), else None; ``what``: "This run" or "This sweep". In the reader's
    language; :func:`refusal` keeps it as a message."""
    why = refusal(guess, what)
    return None if why is None else str(why)


def refusal(guess: Estimate, what: str = "This run") -> Msg | None:
    """:func:`over_limit` as a message, rendered in the language of whoever reads it (kept in session state)."""
    sweep = what == "This sweep"
    step_limit = max_step_seconds()
    if guess.step_s > step_limit:
        values = dict(step=Duration(guess.step_s), limit=Duration(step_limit), variable=ENV_MAX_STEP)
        if sweep:
            return Msg("This sweep would take {step} per training step, more than this server's limit of {limit} "
                       "per step: a step cannot be stopped midway, so Stop would wait that long. Fewer features, a "
                       "smaller batch or a shorter sequence make each step shorter; whoever runs the server can "
                       "raise the limit ({variable}).", **values)
        # TRANSLATORS: {variable} is the name of an environment variable, e.g. RNNLAB_MAX_STEP_SECONDS
        return Msg("This run would take {step} per training step, more than this server's limit of {limit} per "
                   "step: a step cannot be stopped midway, so Stop would wait that long. Fewer features, a smaller "
                   "batch or a shorter sequence make each step shorter; whoever runs the server can raise the "
                   "limit ({variable}).", **values)
    limit = max_job_seconds()
    if guess.total_s <= limit:
        return None
    values = dict(time=guess.described(), limit=Duration(limit), variable=ENV_MAX_JOB)
    if sweep:
        return Msg("This sweep would take {time}, more than this server's limit of {limit} per job, so it was not "
                   "started. Fewer steps, a shorter sequence, a smaller batch or fewer features make it shorter; "
                   "whoever runs the server can raise the limit ({variable}).", **values)
    # TRANSLATORS: {time} is an estimate such as "about 25 min (compiling about 6 s, then 3,000 steps at about
    # 0.5 s each)"; {variable} is the name of an environment variable
    return Msg("This run would take {time}, more than this server's limit of {limit} per job, so it was not "
               "started. Fewer steps, a shorter sequence, a smaller batch or fewer features make it shorter; whoever "
               "runs the server can raise the limit ({variable}).", **values)


def describe_work(compile_s: float, work_s: float) -> str:
    """'about 40 s (compiling about 35 s, then about 5 s of computing)' for work that is not training steps, in
    the reader's language; :func:`work_described` keeps it as a message."""
    return str(work_described(compile_s, work_s))


def work_described(compile_s: float, work_s: float) -> Msg:
    """:func:`describe_work` as a message, rendered in the language of whoever reads it."""
    total = Duration(compile_s + work_s)
    if not compile_s:
        # TRANSLATORS: a time estimate; {total} is a duration such as "40 s"
        return Msg("about {total}", total=total)
    return Msg("about {total} (compiling about {compile}, then about {work} of computing)",
               total=total, compile=Duration(compile_s), work=Duration(work_s))


def together(parts: list[tuple[Config, int, bool]], steps: int) -> Estimate:
    """``steps`` steps of several programs trained in turn, each ``(config, runs, compiled)``: ``runs`` runs of
    ``config`` vmapped into one program (their arithmetic adds up; the scan's per-time-step work is shared)."""
    compile_s = step_s = 0.0
    for config, runs, compiled in parts:
        one = estimate(config, steps)
        overhead = PER_TIME_STEP_S * TASKS[config.task].steps(config.seq_len)
        step_s += overhead + max(one.step_s - overhead, 0.0) * runs
        compile_s += 0.0 if compiled else compile_seconds(config.cell)
    return Estimate(compile_s, step_s, steps, False)


def record_call(config: Config, steps: int, seconds: float) -> None:
    """A finished compiled call of ``steps`` steps that took ``seconds`` (compiled already): refines the estimates."""
    if steps <= 0 or seconds <= 0 or not math.isfinite(seconds):
        return
    key, per_step = config.static_key(), seconds / steps
    with _lock:
        old = _step_seconds.pop(key, None)
        _step_seconds[key] = per_step if old is None else 0.7 * old + 0.3 * per_step
        while len(_step_seconds) > MAX_MEASURED:  # the oldest measurements go first
            del _step_seconds[next(iter(_step_seconds))]
        flops = step_flops(config)
        if flops >= MIN_LEARNING_FLOPS:
            compute_s = max(per_step - PER_TIME_STEP_S * TASKS[config.task].steps(config.seq_len), 0.2 * per_step)
            _flops_rate.insert(0, flops / compute_s / efficiency(config))
            del _flops_rate[50:]
        if len(_compiled) >= MAX_MEASURED:
            _compiled.clear()
        _compiled.add(key)


def record_compiled(config: Config) -> None:
    """``config``'s program is compiled in this process: later estimates leave the compile out."""
    with _lock:
        if len(_compiled) >= MAX_MEASURED:
            _compiled.clear()  # forgetting only makes later estimates include a compile again
        _compiled.add(config.static_key())


def format_seconds(seconds: float) -> str:
    """0.0123 -> '12 ms', 42 -> '42 s', 150 -> '2.5 min', 7200 -> '2 h' (ru '42 с', '2,5 мин'; zh '42 秒')."""
    # TRANSLATORS: durations; keep the number's placeholder as it is and translate the unit's abbreviation
    if seconds < 1:
        ms = seconds * 1000
        return t("{ms:.0f} ms", ms=ms) if seconds >= 0.01 else t("{ms:.2g} ms", ms=ms)
    if seconds < 90:
        return t("{s:.2g} s", s=seconds) if seconds < 10 else t("{s:.0f} s", s=seconds)
    if seconds < 5400:
        return t("{min:.2g} min", min=seconds / 60)
    return t("{h:.2g} h", h=seconds / 3600)


def format_rate(steps_per_second: float) -> str:
    """A training speed as people read it: '1,234 steps/s', '3.4 steps/s', or '26 s per step' when slower."""
    if steps_per_second >= 10:
        # TRANSLATORS: a training speed in training steps per second
        return t("{rate:,.0f} steps/s", rate=steps_per_second)
    if steps_per_second >= 1:
        return t("{rate:.2g} steps/s", rate=steps_per_second)
    # TRANSLATORS: a training speed slower than a step a second; {time} is a duration such as "26 s"
    return t("{time} per step", time=format_seconds(1 / steps_per_second))
