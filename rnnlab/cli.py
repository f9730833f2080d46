"""Command line: ``python -m rnnlab train ...`` and ``python -m rnnlab grad ...``.

Every configuration field is an option (with its default and the registry's choices), so a new cell, task or
optimiser appears here without touching this file.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import fields
from pathlib import Path

from rnnlab.config import CHOICES, HELP, Config, ConfigError
from rnnlab.grids import DEFAULT_SWEEP_CELLS, DEFAULT_SWEEP_LENGTHS
from rnnlab.model.cells import CELLS
from rnnlab.probing.probes import (
    F32_LOG10_FLOOR,
    decay_sweep,
    describe_fit,
    describe_zero,
    fit_decay,
    format_log10,
)
from rnnlab.training.compiled import enable_persistent_cache
from rnnlab.training.train import ChunkProgress, Run


def _add_config_options(parser: argparse.ArgumentParser, skip: tuple[str, ...] = ()) -> None:
    defaults = Config()
    for f in fields(Config):
        if f.name in skip:
            continue
        default = getattr(defaults, f.name)
        kwargs = dict(default=default, help=HELP.get(f.name, ""))
        if f.name in CHOICES:
            kwargs["choices"] = list(CHOICES[f.name])
        else:
            kwargs["type"] = type(default)
        parser.add_argument(f"--{f.name.replace('_', '-')}", dest=f.name, **kwargs)


def _config_from(args: argparse.Namespace) -> Config:
    return Config(**{f.name: getattr(args, f.name) for f in fields(Config) if hasattr(args, f.name)})


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m rnnlab", description="Train recurrent cells and probe "
                                     "how their gradients flow back to the initial carry.")
    sub = parser.add_subparsers(dest="command", required=True)
    train = sub.add_parser("train", help="train one configuration and write its history",
                           formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    _add_config_options(train)
    train.add_argument("--out", default="history.csv",
                       help="where to write the per-step history (.csv or .json)")
    train.add_argument("--quiet", action="store_true", help="no progress bar")
    grad = sub.add_parser("grad", help="print ||dL/dh_0|| against sequence length T for several cells",
                          formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    _add_config_options(grad, skip=("cell", "seq_len", "steps", "chunk", "lr", "clip", "optimizer"))
    grad.add_argument("--cells", default=",".join(DEFAULT_SWEEP_CELLS),
                      help=f"comma-separated cells, from: {', '.join(CELLS)}")
    grad.add_argument("--lengths", default=",".join(map(str, DEFAULT_SWEEP_LENGTHS)),
                      help="comma-separated sequence lengths T")
    return parser


def _progress_bar(progress: ChunkProgress, width: int = 30) -> None:
    done = int(width * progress.step / max(progress.total, 1))
    sys.stderr.write(f"\r[{'#' * done}{'.' * (width - done)}] step {progress.step}/{progress.total} "
                     f"loss {progress.loss:.4g}  {progress.steps_per_second:.0f} steps/s")
    sys.stderr.flush()


def run_train(args: argparse.Namespace) -> int:
    config = _config_from(args)
    run = Run(config)
    run.train(None if args.quiet else _progress_bar)
    if not args.quiet:
        sys.stderr.write("\n")
    history = run.history
    out = Path(args.out)
    df = history.steps_df()
    if out.suffix == ".json":
        out.write_text(json.dumps({"config": config.to_dict(), "steps": df.to_dict("records"),
                                   "evaluations": history.chunks_df().to_dict("records"),
                                   "stop_reason": history.stop_reason}, indent=1))
    else:
        df.to_csv(out, index=False)
    final = df.iloc[-1] if len(df) else None
    baseline = run.program.task.baseline(config.seq_len)
    if final is not None:
        print(f"{len(df)} steps; final loss {final['loss']:.4g} (baseline {baseline:.4g}); "
              f"history written to {out}")
    if history.stop_reason:
        print(history.stop_reason)
        return 1
    return 0


def run_grad(args: argparse.Namespace) -> int:
    config = _config_from(args)
    cells = [c.strip() for c in args.cells.split(",") if c.strip()]
    unknown = [c for c in cells if c not in CELLS]
    if unknown:
        raise ConfigError([f"Unknown cell(s): {', '.join(unknown)}; choose from {', '.join(CELLS)}."])
    try:
        lengths = [int(t) for t in args.lengths.split(",") if t.strip()]
    except ValueError as e:
        raise ConfigError([f"--lengths must be whole numbers separated by commas ({e})."]) from e
    for cell in cells:
        for T in lengths:
            errors = Config(**{**config.__dict__, "cell": cell, "seq_len": T}).validate()
            if errors:
                raise ConfigError(errors)
    sweep = decay_sweep(config, cells, lengths)
    table = sweep.pivot(index="T", columns="cell", values="log10")[cells]
    print(f"||dL/dh_0|| on the {config.task} task (untrained weights, seed {config.seed}), at its true size:")
    print(table.map(format_log10).to_string())
    for row in sweep[sweep["zero_cause"] != ""].itertuples():
        print(f"{row.cell} at T = {row.T}: {describe_zero(row.zero_cause, row.zero_at, 'h', 0)}")
    below = sweep[sweep["log10"].map(math.isfinite) & (sweep["log10"] < F32_LOG10_FLOOR)]
    if len(below):
        verb = "is" if len(below) == 1 else "are"
        print(f"({len(below)} of these {verb} below float32's smallest normal number, "
              f"{format_log10(F32_LOG10_FLOOR, 1)}: a float32 backward pass gives 0 there)")
    print()
    for row in fit_decay(sweep).itertuples():
        print(f"{row.cell:>16}: {describe_fit(row.rate_per_step, row.halving_steps)}")
    return 0


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    enable_persistent_cache()
    try:
        return run_train(args) if args.command == "train" else run_grad(args)
    except ConfigError as e:
        for message in e.messages:
            print(f"error: {message}", file=sys.stderr)
        return 2
