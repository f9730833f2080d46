"""Tables the charts draw, computed from a History: how the initial carry moved during training."""

from __future__ import annotations

import numpy as np
import pandas as pd

from rnnlab.i18n import join_clauses, t
from rnnlab.training.history import History


def carry_units_df(history: History, leaf: str) -> pd.DataFrame:
    """Long table of the initial carry at every evaluation: step, unit, value (for the heatmap)."""
    snaps = history.carry_snapshots(leaf)
    steps = [c["step"] for c in history.chunks]
    rows = [{"step": s, "unit": u, "value": float(v)} for s, snap in zip(steps, snaps) for u, v in enumerate(snap)]
    return pd.DataFrame(rows, columns=["step", "unit", "value"])


def carry_distance_df(history: History) -> pd.DataFrame:
    """step, leaf, distance: the Euclidean distance of the initial carry from where it started."""
    steps = [c["step"] for c in history.chunks]
    rows = []
    for leaf in history.leaves:
        snaps = history.carry_snapshots(leaf).astype(np.float64)  # float32 squares overflow when a run diverges
        for s, d in zip(steps, np.linalg.norm(snaps - snaps[:1], axis=1) if len(snaps) else []):
            rows.append({"step": s, "leaf": leaf, "distance": float(d)})
    return pd.DataFrame(rows, columns=["step", "leaf", "distance"])


def carry_movement(history: History) -> dict[str, dict[str, float]]:
    """Per carry leaf: how far the initial carry moved from step 0 to the last evaluation (Euclidean distance),
    the largest change of one unit, and the size of the start (float64: a diverged run may be huge)."""
    out = {}
    for leaf in history.leaves:
        snaps = history.carry_snapshots(leaf).astype(np.float64)
        if not len(snaps):
            continue
        change = snaps[-1] - snaps[0]
        out[leaf] = {"distance": float(np.linalg.norm(change)), "largest_unit": float(np.max(np.abs(change))),
                     "start_size": float(np.linalg.norm(snaps[0]))}
    return out


def _moved_clause(leaf: str, m: dict[str, float]) -> str:
    values = dict(distance=m["distance"], largest=m["largest_unit"], start=m["start_size"])
    if leaf == "c":
        # TRANSLATORS: a clause (no capital, no full stop) after "By step N:"; the numbers are Euclidean distances.
        return t("the cell state c moved {distance:.2g} in all (no unit by more than {largest:.2g}; its size at "
                 "the start was {start:.2g})", **values)
    if leaf == "h":
        # TRANSLATORS: a clause (no capital, no full stop) after "By step N:"; the numbers are Euclidean distances.
        return t("the hidden state h moved {distance:.2g} in all (no unit by more than {largest:.2g}; its size at "
                 "the start was {start:.2g})", **values)
    # TRANSLATORS: {leaf} is the name of a carry leaf (code); a clause after "By step N:".
    return t("{leaf} moved {distance:.2g} in all (no unit by more than {largest:.2g}; its size at the start was "
             "{start:.2g})", leaf=leaf, **values)


def describe_movement(history: History) -> str:
    """'h moved 6.2e-06 in all (no unit by more than 1.9e-06) ...' for the page, one clause per leaf, in the
    reader's language."""
    return join_clauses([_moved_clause(leaf, m) for leaf, m in carry_movement(history).items()])


def carry_pca_df(history: History) -> pd.DataFrame:
    """step, leaf, pc1, pc2, explained: the carry's path projected on the snapshots' two principal axes.

    ``explained`` is the fraction of the path's variance the two axes hold (1.0 when the path is flat).
    """
    steps = [c["step"] for c in history.chunks]
    rows = []
    for leaf in history.leaves:
        snaps = history.carry_snapshots(leaf).astype(np.float64)
        if not len(snaps):
            continue
        centred = snaps - snaps.mean(axis=0)
        _, s, vt = np.linalg.svd(centred, full_matrices=False)
        axes = np.zeros((2, snaps.shape[1]))
        axes[: min(2, len(vt))] = vt[:2]
        # fix each axis's sign so the first point has a non-positive coordinate: stable across reruns
        signs = np.where(centred[0] @ axes.T > 0, -1.0, 1.0)
        proj = centred @ axes.T * signs
        total = float(np.sum(s**2))
        explained = float(np.sum(s[:2] ** 2) / total) if total > 0 else 1.0
        for step, (p1, p2) in zip(steps, proj):
            rows.append({"step": step, "leaf": leaf, "pc1": float(p1), "pc2": float(p2), "explained": explained})
    return pd.DataFrame(rows, columns=["step", "leaf", "pc1", "pc2", "explained"])


def per_step_loss_table(history: History, label: str) -> pd.DataFrame:
    """t, loss, run: the loss at every time step at the last evaluation, labelled for overlays. Step t = 1..T
    reads input t (t = 0 is the initial carry, which has no output)."""
    if not history.per_step_loss:
        return pd.DataFrame(columns=["t", "loss", "run"])
    losses = history.per_step_loss[-1]
    return pd.DataFrame({"t": np.arange(1, len(losses) + 1), "loss": losses.astype(float), "run": label})


FIRST_STEPS = 3  # how many opening time steps the zero-carry comparison sums up


def first_steps_gap(history: History, zero: History, k: int = FIRST_STEPS) -> dict[str, float]:
    """The mean loss over the first ``k`` time steps of a run and of its zero-carry twin (last evaluations),
    and how many times larger the zero carry's is: where a learned start shows."""
    mine, theirs = float(np.mean(history.per_step_loss[-1][:k])), float(np.mean(zero.per_step_loss[-1][:k]))
    return {"steps": k, "run": mine, "zero": theirs, "ratio": theirs / mine if mine > 0 else float("inf")}


def thin(df: pd.DataFrame, max_points: int = 2000, keep_last: bool = True) -> pd.DataFrame:
    """Every k-th row so at most ``max_points`` remain (the last row always kept): charts stay light."""
    if len(df) <= max_points:
        return df
    k = -(-len(df) // max_points)
    picked = df.iloc[::k]
    if keep_last and picked.index[-1] != df.index[-1]:
        picked = pd.concat([picked, df.iloc[-1:]])
    return picked


def thin_evaluations(units: pd.DataFrame, max_columns: int = 200) -> pd.DataFrame:
    """Keep at most ``max_columns`` evaluation steps of a carry-units table (first and last included)."""
    steps = units["step"].unique()
    if len(steps) <= max_columns:
        return units
    keep = set(steps[:: -(-len(steps) // max_columns)]) | {steps[-1]}
    return units[units["step"].isin(keep)]
