"""Command line: ``python -m rnnlab train ...`` and ``python -m rnnlab grad ...``.

Every configuration field is an option (with its default and the registry's choices), so a new cell, task or
optimiser appears here without touching this file. ``--lang zh|ru|en`` (before or after the subcommand) chooses the
language of the help and of the sentences printed; tables, files and ids stay as they are.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import fields
from pathlib import Path

from rnnlab.config import CHOICES, SETTING, Config, ConfigError
from rnnlab.figures.size_words import describe_zero
from rnnlab.grids import DEFAULT_SWEEP_CELLS, DEFAULT_SWEEP_LENGTHS
from rnnlab.i18n import ENGLISH, LANGUAGES, _, localize_number, t, tn, using
from rnnlab.model.cells import CELLS
from rnnlab.model.tasks import TASKS
from rnnlab.probing.probes import decay_sweep, describe_fit, fit_decay
from rnnlab.server.work import fill_cache
from rnnlab.training.compiled import enable_persistent_cache
from rnnlab.training.history import CallProgress
from rnnlab.training.train import Run
from rnnlab.true_sizes import F32_LOG10_FLOOR, format_log10


def _add_config_options(parser: argparse.ArgumentParser, skip: tuple[str, ...] = ()) -> None:
    defaults = Config()
    for f in fields(Config):
        if f.name in skip:
            continue
        default = getattr(defaults, f.name)
        kwargs = dict(default=default, help=SETTING[f.name].help if f.name in SETTING else "")
        if f.name in CHOICES:
            kwargs["choices"] = list(CHOICES[f.name])
        else:
            kwargs["type"] = type(default)
        parser.add_argument(f"--{f.name.replace('_', '-')}", dest=f.name, **kwargs)


def _config_from(args: argparse.Namespace) -> Config:
    return Config(**{f.name: getattr(args, f.name) for f in fields(Config) if hasattr(args, f.name)})


def _add_lang_option(parser: argparse.ArgumentParser, default: object) -> None:
    # TRANSLATORS: the help of the command line's --lang option; en, zh and ru are the values to type.
    parser.add_argument("--lang", choices=list(LANGUAGES), default=default,
                        help=_("the language of the help and of the messages: en, zh or ru (default: en)"))


def build_parser() -> argparse.ArgumentParser:
    """The command line's parser, its help in the current language (``main`` sets it from ``--lang`` first)."""
    parser = argparse.ArgumentParser(prog="python -m rnnlab", description=_(
        "Train recurrent cells and probe how their gradients flow back to the initial carry."))
    _add_lang_option(parser, None)
    sub = parser.add_subparsers(dest="command", required=True)
    train = sub.add_parser("train", help=_("train one configuration and write its history"),
                           formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    _add_config_options(train)
    train.add_argument("--out", default="history.csv",
                       help=_("where to write the per-step history (.csv or .json)"))
    train.add_argument("--quiet", action="store_true", help=_("no progress bar"))
    grad = sub.add_parser("grad", help=_("print ||dL/dh_0|| against sequence length T for several cells"),
                          formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    _add_config_options(grad, skip=("cell", "seq_len", "steps", "chunk", "lr", "clip", "optimizer"))
    grad.add_argument("--cells", default=",".join(DEFAULT_SWEEP_CELLS),
                      # TRANSLATORS: {cells} lists the cells' ids (gru, lstm, ...).
                      help=t("comma-separated cells, from: {cells}", cells=", ".join(CELLS)))
    grad.add_argument("--lengths", default=",".join(map(str, DEFAULT_SWEEP_LENGTHS)),
                      help=_("comma-separated sequence lengths T"))
    warm = sub.add_parser("warm", help=_("compile every preset's programs into the disk cache, so that a server "
                                         "started later serves each preset link's first chart at once"))
    for command in (train, grad, warm):  # after the subcommand too; not given there, the main parser's value stays
        _add_lang_option(command, argparse.SUPPRESS)
    return parser


def _chosen_language(argv: list[str] | None) -> str:
    """The language ``--lang`` asks for anywhere on the command line (English when none or an unknown one: the
    parser then says what is wrong)."""
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--lang")
    known, _rest = pre.parse_known_args(sys.argv[1:] if argv is None else argv)
    return known.lang if known.lang in LANGUAGES else ENGLISH


def _progress_bar(progress: CallProgress, width: int = 30) -> None:
    done = int(width * progress.step / max(progress.total, 1))
    # TRANSLATORS: the command line's progress line after its bar of # and . characters.
    sys.stderr.write(f"\r[{'#' * done}{'.' * (width - done)}] " + t(
        "step {step}/{total} loss {loss:.4g}  {rate:.0f} steps/s", step=progress.step, total=progress.total,
        loss=progress.loss, rate=progress.steps_per_second))
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
        # TRANSLATORS: {out} is the file written.
        print(tn("{n} step; final loss {loss:.4g} (baseline {baseline:.4g}); history written to {out}",
                 "{n} steps; final loss {loss:.4g} (baseline {baseline:.4g}); history written to {out}", len(df),
                 loss=final["loss"], baseline=baseline, out=str(out)))
    if history.stop_reason:
        print(str(history.stop_reason))
        return 1
    return 0


def run_grad(args: argparse.Namespace) -> int:
    config = _config_from(args)
    cells = [c.strip() for c in args.cells.split(",") if c.strip()]
    unknown = [c for c in cells if c not in CELLS]
    if unknown:
        # TRANSLATORS: {cells} is what was asked, {known} the cells' ids.
        raise ConfigError([tn("Unknown cell: {cells}; choose from {known}.",
                              "Unknown cells: {cells}; choose from {known}.", len(unknown), cells=", ".join(unknown),
                              known=", ".join(CELLS))])
    try:
        lengths = [int(t) for t in args.lengths.split(",") if t.strip()]
    except ValueError as e:
        # TRANSLATORS: {error} is Python's own message about the value.
        raise ConfigError([t("--lengths must be whole numbers separated by commas ({error}).", error=str(e))]) from e
    for cell in cells:
        for T in lengths:
            errors = Config(**{**config.__dict__, "cell": cell, "seq_len": T}).validate()
            if errors:
                raise ConfigError(errors)
    sweep = decay_sweep(config, cells, lengths)
    table = sweep.pivot(index="T", columns="cell", values="log10")[cells]
    # TRANSLATORS: {task} is the task named in a sentence (adding, copy...), {seed} a random seed; a table follows.
    print(t("||dL/dh_0|| on the {task} task (untrained weights, seed {seed}), at its true size:",
            task=TASKS[config.task].noun, seed=config.seed))
    print(table.map(format_log10).to_string())
    for row in sweep[sweep["zero_cause"] != ""].itertuples():
        # TRANSLATORS: {cell} is a cell's id, {T} a sequence length, {why} a sentence.
        print(t("{cell} at T = {T}: {why}", cell=row.cell, T=row.T, why=describe_zero(row.zero_cause, row.zero_at,
                                                                                       "h", 0)))
    below = sweep[sweep["log10"].map(math.isfinite) & (sweep["log10"] < F32_LOG10_FLOOR)]
    if len(below):
        floor = localize_number(format_log10(F32_LOG10_FLOOR, 1))
        # TRANSLATORS: {n} of the gradients in the table above; {floor} is float32's smallest normal number.
        print(tn("({n} of these is below float32's smallest normal number, {floor}: a float32 backward pass gives "
                 "0 there)", "({n} of these are below float32's smallest normal number, {floor}: a float32 backward "
                 "pass gives 0 there)", len(below), floor=floor))
    print()
    for row in fit_decay(sweep).itertuples():
        print(f"{row.cell:>16}: {describe_fit(row.rate_per_step, row.halving_steps)}")
    return 0


def main(argv: list[str] | None = None) -> int:
    with using(_chosen_language(argv)):
        args = build_parser().parse_args(argv)
        enable_persistent_cache()
        try:
            if args.command == "warm":
                return 0 if fill_cache() else 1
            return run_train(args) if args.command == "train" else run_grad(args)
        except ConfigError as e:
            for message in e.messages:
                # TRANSLATORS: a message of the command line about a bad option; {message} says what is wrong.
                print(t("error: {message}", message=message), file=sys.stderr)
            return 2
