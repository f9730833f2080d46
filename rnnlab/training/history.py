"""What a run produced: its :class:`History` (per-step rows, evaluations, carry snapshots), appended call by call,
and the :class:`CallProgress` a caller sees after each compiled call."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from rnnlab.norms import combine_norms


@dataclass
class CallProgress:
    """What a callback sees after each compiled call."""

    step: int
    total: int
    loss: float
    steps_per_second: float
    call_seconds: float


@dataclass
class History:
    """Everything a run produced, appended call by call.

    ``steps``: one row per optimiser step (step, loss, metric, grad_norm, h0_grad_norm and per carry leaf).
    ``chunks``: one row per evaluation (step, eval_loss, eval_metric), at each chunk's end and the first at step 0
    before training.
    ``carry``: per leaf, an array (evaluations, *leaf_shape) of the initial carry at each evaluation.
    ``per_step_loss``: (evaluations, sequence steps), the loss at every time step of the evaluation batch.
    """

    leaves: tuple[str, ...]
    steps: list[dict] = field(default_factory=list)
    chunks: list[dict] = field(default_factory=list)
    carry: dict[str, list[np.ndarray]] = field(default_factory=dict)
    per_step_loss: list[np.ndarray] = field(default_factory=list)
    stop_reason: str | None = None
    diverged_at: int | None = None  # the step whose loss, gradient or update was not finite (not applied)

    def add_records(self, first_step: int, records: dict[str, np.ndarray]) -> int:
        """Append the applied steps of one call; returns how many were applied."""
        n = int(records["applied"].sum())
        for i in range(n):
            row: dict[str, float] = {"step": first_step + i + 1}
            for key in ("loss", "metric", "grad_norm"):
                row[key] = float(records[key][i])
            leaf_norms = [float(records[f"h0_grad_{name}"][i]) for name in self.leaves]
            row["h0_grad_norm"] = combine_norms(leaf_norms)
            for name, value in zip(self.leaves, leaf_norms):
                row[f"h0_grad_{name}"] = value
            self.steps.append(row)
        return n

    def add_evaluation(self, step: int, evaluation: dict) -> None:
        self.chunks.append({"step": step, "eval_loss": float(evaluation["loss"]),
                            "eval_metric": float(evaluation["metric"])})
        for name, leaf in zip(self.leaves, evaluation["carry0"]):
            self.carry.setdefault(name, []).append(np.asarray(leaf))
        self.per_step_loss.append(np.asarray(evaluation["per_step_loss"]))

    # ---- tables ----------------------------------------------------------------------------------
    def steps_df(self) -> pd.DataFrame:
        cols = ["step", "loss", "metric", "grad_norm", "h0_grad_norm"] + [f"h0_grad_{n}" for n in self.leaves]
        return pd.DataFrame(self.steps, columns=cols)

    def chunks_df(self) -> pd.DataFrame:
        return pd.DataFrame(self.chunks, columns=["step", "eval_loss", "eval_metric"])

    def carry_snapshots(self, leaf: str) -> np.ndarray:
        """(evaluations, units) for ``leaf`` ('c' or 'h'); spatial carries are flattened."""
        snaps = self.carry.get(leaf, [])
        return np.stack([s.reshape(-1) for s in snaps]) if snaps else np.zeros((0, 0))

    def per_step_loss_df(self) -> pd.DataFrame:
        """Long table: step (training step of the evaluation), t (time step), loss."""
        rows = [{"step": c["step"], "t": t, "loss": float(v)}
                for c, losses in zip(self.chunks, self.per_step_loss) for t, v in enumerate(losses)]
        return pd.DataFrame(rows, columns=["step", "t", "loss"])

    @property
    def last_step(self) -> int:
        return self.steps[-1]["step"] if self.steps else 0

    @property
    def evaluated_step(self) -> int:
        """The training step of the latest evaluation (the carry snapshots and per-step losses are of it): behind
        :attr:`last_step` between the end of a chunk and the next, e.g. after a Stop in the middle of one."""
        return self.chunks[-1]["step"] if self.chunks else 0

    def copy(self) -> History:
        """An independent copy (rows and arrays are never changed once appended, so they are shared)."""
        return History(self.leaves, list(self.steps), list(self.chunks),
                       {name: list(snaps) for name, snaps in self.carry.items()}, list(self.per_step_loss),
                       self.stop_reason, self.diverged_at)

    def nbytes(self) -> int:
        """Rough memory held: the per-step rows, the carry snapshots and the per-time-step losses."""
        row = 100 + 60 * (len(self.steps[0]) if self.steps else 0)
        arrays = [a for snaps in self.carry.values() for a in snaps] + list(self.per_step_loss)
        return row * len(self.steps) + 200 * len(self.chunks) + sum(np.asarray(a).nbytes for a in arrays)
