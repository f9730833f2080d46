"""Downloads of a run: its history as CSV, its parameters as msgpack, and a script that reproduces it.

Everything here is a pure function of a :class:`Config`, a :class:`History` or a parameter tree, so the app and
the command line can offer the same files.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import fields
from string import Template
from typing import Any

import flax
import flax.serialization
import jax
import jax.numpy as jnp
import numpy as np

import rnnlab
from rnnlab.config import HELP, Config, ConfigError
from rnnlab.files.msgpack_scan import TooManyObjects, count_objects
from rnnlab.i18n import join_clauses, join_sentences, t, tn
from rnnlab.model.cells import CELLS
from rnnlab.model.network import carry_mode_label
from rnnlab.model.tasks import TASKS
from rnnlab.text import error_text
from rnnlab.training.history import History
from rnnlab.training.program import get_program, hyper_args

Params = dict[str, Any]


class ExportError(ValueError):
    """A parameter file that cannot be loaded for a configuration; the message (in the language of the run that
    loaded it) says what did not match."""


MAX_PARAMS_BYTES = 20 * 2**20  # the largest parameter file load_params reads (the app's upload limit too)
OBJECTS_PER_NODE = 16  # msgpack objects per array or group of a parameter file, at most (about 8 in practice)
OBJECTS_SLACK = 256
PARAMS_SLACK_BYTES = 64 * 2**10  # beyond twice its arrays' bytes, what a parameter file's names and headers may add


# ---- history -------------------------------------------------------------------------------------------
def history_csv(history: History) -> bytes:
    """The per-step history (``History.steps_df()``) as UTF-8 CSV: a header row, then one row per step.

    Floats are written with their shortest round-tripping repr, so reading the file back gives the same numbers.
    """
    return history.steps_df().to_csv(index=False, lineterminator="\n").encode("utf-8")


def evaluations_csv(history: History) -> bytes:
    """The evaluations (``History.chunks_df()``: step, eval_loss, eval_metric) as UTF-8 CSV with a header row."""
    return history.chunks_df().to_csv(index=False, lineterminator="\n").encode("utf-8")


# ---- parameters ----------------------------------------------------------------------------------------
def params_msgpack(params: Params) -> bytes:
    """The run's parameters (``Run.params``, i.e. ``{'params': {...}}``) serialised with ``flax.serialization``."""
    return flax.serialization.to_bytes(params)


def params_target(config: Config) -> Params:
    """Shapes and dtypes (``jax.ShapeDtypeStruct`` leaves) of the parameters a run of ``config`` has."""
    errors = config.validate(budget=2**62)
    if errors:
        raise ConfigError(errors)
    program = get_program(config)
    lr, clip, scale = hyper_args(config)
    state = jax.eval_shape(program.init, np.int32(config.seed), scale, lr, clip)
    return state["params"]


def load_params(data: bytes, config: Config, max_bytes: int = MAX_PARAMS_BYTES) -> Params:
    """Restore parameters written by :func:`params_msgpack` for a run of ``config``.

    Raises :class:`ExportError` naming the problem when ``data`` is empty, over ``max_bytes``, not a msgpack
    parameter file (another kind of file, or cut short), holds non-finite values, or its tree, shapes or
    dtypes differ from what ``config`` needs (e.g. another cell, feature count or carry mode); a mismatch
    also says what the file seems to hold.
    """
    if not data:
        raise ExportError(t("not a msgpack parameter file: the file is empty"))
    if len(data) > max_bytes:
        # TRANSLATORS: {size} and {limit} are sizes with their unit ('21 MB', '100 bytes').
        raise ExportError(t("the file is {size}, more than the {limit} a parameter file may have",
                            size=_size(len(data)), limit=_size(max_bytes)))
    target = params_target(config)
    expected = sum(int(np.prod(leaf.shape)) * np.dtype(leaf.dtype).itemsize
                   for leaf in jax.tree_util.tree_leaves(target))
    if len(data) > 2 * expected + PARAMS_SLACK_BYTES:  # refused before anything is unpacked
        # TRANSLATORS: {size} and {expected} are sizes with their unit; {cell} is a cell's name (GRU), {task} the task
        # named in a sentence (adding), {mode} a carry mode's word (learnable), {features} a number of hidden features.
        raise ExportError(tn("the file is {size}, while a parameter file for this configuration ({cell} cell, "
                             "{features} feature, {task} task, {mode} carry) is about {expected}: it is for a much "
                             "larger model, or not a parameter file",
                             "the file is {size}, while a parameter file for this configuration ({cell} cell, "
                             "{features} features, {task} task, {mode} carry) is about {expected}: it is for a much "
                             "larger model, or not a parameter file", config.features, size=_size(len(data)),
                             expected=_size(expected), **_named(config)))
    nodes = len(jax.tree_util.tree_leaves(target)) + _groups(target)
    try:
        count_objects(bytes(data), OBJECTS_PER_NODE * nodes + OBJECTS_SLACK)
    except TooManyObjects as e:  # refused before anything is unpacked
        # TRANSLATORS: {cell} is a cell's name (GRU), {features} a number of hidden features; {found} says how many
        # msgpack objects the file holds ('more than 1,000 msgpack objects'), {n:,} how many such a file holds.
        raise ExportError(tn("not a parameter file for this configuration ({cell} cell, {features} feature): it "
                             "holds {found}, where such a file holds about {n:,}. Nothing of it was unpacked.",
                             "not a parameter file for this configuration ({cell} cell, {features} features): it "
                             "holds {found}, where such a file holds about {n:,}. Nothing of it was unpacked.",
                             config.features, cell=CELLS[config.cell].label, features=config.features,
                             found=str(e), n=8 * nodes)) from None
    except ValueError:
        pass  # msgpack says below what is wrong with it
    try:
        state = flax.serialization.msgpack_restore(bytes(data))
    except Exception as e:  # noqa: BLE001 - msgpack raises several unrelated types for corrupt or truncated input
        # TRANSLATORS: {why} says what is wrong with the file (a clause).
        raise ExportError(t("not a msgpack parameter file: {why}", why=_why_unreadable(e, bytes(data)))) from None
    if not isinstance(state, Mapping):
        # TRANSLATORS: {what} says what the file holds ('a value of type int').
        raise ExportError(t("not a msgpack parameter file: it holds {what}, not a tree of arrays",
                            what=_describe(state)))
    problems: list[str] = []
    _compare(target, state, "", problems)
    if problems:
        shown = join_clauses(problems[:6])
        if len(problems) > 6:
            # TRANSLATORS: the end of a list of differences ('missing a; unexpected b; and 3 more').
            shown += tn("; and {n} more", "; and {n} more", len(problems) - 6)
        seems = _guess_origin(state)
        # TRANSLATORS: {cell} is a cell's name (GRU), {task} the task named in a sentence (adding), {mode} a carry
        # mode's word (learnable), {features} a number of hidden features; {problems} lists what differs ('missing
        # params/readout; unexpected params/h0').
        message = tn("the parameter file does not fit this configuration ({cell} cell, {features} feature, {task} "
                     "task, {mode} carry): {problems}.",
                     "the parameter file does not fit this configuration ({cell} cell, {features} features, {task} "
                     "task, {mode} carry): {problems}.", config.features, problems=shown, **_named(config))
        if seems:
            # TRANSLATORS: {what} describes the file ('LSTM parameters (8 features, learnable carry)').
            message = join_sentences(message, t("The file seems to hold {what}.", what=seems))
        raise ExportError(message)
    bad = [path for path, leaf in _leaves(state, "") if not np.isfinite(leaf).all()]
    if bad:
        paths = ", ".join(bad[:3]) + (", …" if len(bad) > 3 else "")
        # TRANSLATORS: {paths} lists where, in the file's tree ('params/readout/kernel').
        raise ExportError(t("the parameter file holds NaN or infinite values (in {paths}), e.g. saved from a run "
                            "that diverged", paths=paths))
    restored = flax.serialization.from_state_dict(target, dict(state))
    return jax.tree_util.tree_map(jnp.asarray, restored)


def _groups(tree) -> int:
    """The number of dicts in a parameter tree (each is one msgpack map)."""
    if isinstance(tree, Mapping):
        return 1 + sum(_groups(v) for v in tree.values())
    return 0


def _size(n: int) -> str:
    """Bytes in the units of Streamlit's upload limit (MB = 2**20 bytes), e.g. '20 MB', '21.5 MB', '100 bytes'."""
    if n >= 2**20:
        # TRANSLATORS: a file's size in megabytes (2**20 bytes, as the upload limit counts them).
        return t("{mb:.3g} MB", mb=n / 2**20)
    return tn("{n} byte", "{n} bytes", n)


def _why_unreadable(e: Exception, data: bytes) -> str:
    """What is wrong with bytes msgpack could not read, in words."""
    text = str(e).lower()
    if "incomplete" in text or "truncat" in text or "insufficient" in text:
        return t("the file ends too early (cut short, e.g. an interrupted download)")
    kind: str | None
    if data.startswith(b"\x89PNG"):
        kind = t("a PNG image")
    elif data.startswith(b"PK"):
        kind = t("a zip archive")
    elif data.startswith(b"step,"):
        kind = t("a history CSV")
    else:
        try:
            head = data[:200].decode("utf-8")
        except UnicodeDecodeError:
            head = ""
        lines = head.strip().splitlines()
        printable = all(c.isprintable() or c.isspace() for c in head)
        # TRANSLATORS: {start!r} is the file's first line, quoted as it is.
        kind = t("text ({start!r}…)", start=lines[0][:40]) if head and printable and lines else None
    if kind:
        # TRANSLATORS: {kind} is what the file seems to be ('a PNG image'); Parameters names the download button.
        return t("it looks like {kind}; choose the .msgpack file the Parameters download wrote", kind=kind)
    # TRANSLATORS: {error} is the msgpack library's own message, as it is.
    return t("its contents could not be read ({error})", error=error_text(e))


def _leaves(tree: Any, path: str):
    """(path, array) for every array in a restored state dict."""
    if isinstance(tree, Mapping):
        for key, sub in tree.items():
            yield from _leaves(sub, _join(path, key))
    elif isinstance(tree, np.ndarray) and np.issubdtype(tree.dtype, np.number):
        yield path, tree


_CELL_MODULES = {f"{spec.cls.__name__}_0": spec for spec in CELLS.values()}


def _named(config: Config) -> dict[str, object]:
    """A configuration's cell, features, task and carry mode as a message names them, in the reader's words."""
    return dict(cell=CELLS[config.cell].label, features=config.features, task=TASKS[config.task].noun,
                mode=carry_mode_label(config.carry_mode))


def _guess_origin(state: Mapping) -> str | None:
    """'LSTM parameters (16 features, learnable carry)', or None when it cannot tell."""
    params = state.get("params")
    if not isinstance(params, Mapping):
        return None
    cells = [_CELL_MODULES[key] for key in params if key in _CELL_MODULES]
    if len(cells) != 1:
        return None
    features = None
    readout = params.get("readout")
    kernel = readout.get("kernel") if isinstance(readout, Mapping) else None
    if isinstance(kernel, np.ndarray) and kernel.ndim == 2:
        features = kernel.shape[0]
    label, learnable = cells[0].label, "h0" in params
    if features and learnable:
        # TRANSLATORS: {cell} is a cell's name, {n} its hidden size ("LSTM parameters (16 features, learnable carry)").
        return tn("{cell} parameters ({n} feature, learnable carry)",
                  "{cell} parameters ({n} features, learnable carry)", features, cell=label)
    if features:
        return tn("{cell} parameters ({n} feature, fixed or noisy carry)",
                  "{cell} parameters ({n} features, fixed or noisy carry)", features, cell=label)
    if learnable:
        return t("{cell} parameters (learnable carry)", cell=label)
    return t("{cell} parameters (fixed or noisy carry)", cell=label)


def _compare(target: Any, got: Any, path: str, problems: list[str]) -> None:
    """Append to ``problems`` every difference of tree structure, shape or dtype between ``got`` and ``target``."""
    if isinstance(target, Mapping):
        if not isinstance(got, Mapping):
            if path:
                # TRANSLATORS: {path} is a place in the file's tree ('params/readout'); {got} what is there.
                problems.append(t("expected a group of parameters at {path}, got {got}", path=path,
                                  got=_describe(got)))
            else:
                # TRANSLATORS: {got} is what the file holds at its top level.
                problems.append(t("expected a group of parameters at the top level, got {got}", got=_describe(got)))
            return
        for key, sub in target.items():
            if key in got:
                _compare(sub, got[key], _join(path, key), problems)
            else:
                # TRANSLATORS: a difference of a parameter file; {path} is a place in its tree ('params/readout').
                problems.append(t("missing {path}", path=_join(path, key)))
        # TRANSLATORS: a difference of a parameter file; {path} is a place in its tree ('params/h0').
        problems.extend(t("unexpected {path}", path=_join(path, key)) for key in got if key not in target)
        return
    shape, dtype = tuple(target.shape), np.dtype(target.dtype)
    if not isinstance(got, np.ndarray):
        # TRANSLATORS: {path} is a place in the file's tree, {shape} a shape such as (8, 8), {got} what is there.
        problems.append(t("expected {path} to be an array of shape {shape}, got {got}", path=path, shape=str(shape),
                          got=_describe(got)))
    elif got.shape != shape:
        # TRANSLATORS: {path} is a place in the file's tree; {shape} and {got} are shapes such as (8, 8).
        problems.append(t("expected {path} of shape {shape}, got {got}", path=path, shape=str(shape),
                          got=str(got.shape)))
    elif got.dtype != dtype:
        # TRANSLATORS: {path} is a place in the file's tree; {dtype} and {got} are number types (float32).
        problems.append(t("expected {path} of dtype {dtype}, got {got}", path=path, dtype=str(dtype),
                          got=str(got.dtype)))


def _join(path: str, key: Any) -> str:
    return f"{path}/{key}" if path else str(key)


def _describe(value: Any) -> str:
    if isinstance(value, np.ndarray):
        # TRANSLATORS: {shape} is a shape such as (8, 8).
        return t("an array of shape {shape}", shape=str(value.shape))
    if isinstance(value, Mapping):
        return tn("a group of {n} entry", "a group of {n} entries", len(value))
    # TRANSLATORS: {type} is a Python type's name (int, str).
    return t("a value of type {type}", type=type(value).__name__)


# ---- reproduction script -------------------------------------------------------------------------------
def rnnlab_version() -> str:
    """The version of the rnnlab package that wrote the file."""
    return rnnlab.__version__


_SCRIPT = Template('''\
#!/usr/bin/env python3
# Reproduces an rnnlab run: $summary.
#
# Produced by rnnlab ($rnnlab) with jax $jax and flax $flax on the $backend backend.
# The same versions on the same kind of device give the same losses, bit for bit.
#
# Run it from the rnnlab repository root, or anywhere the rnnlab package is importable:
#     python reproduce.py            # train, print progress and the final loss, write history.csv here
#     python reproduce.py --no-csv   # the same without writing history.csv

import argparse
import os
import sys
from pathlib import Path

try:
    import rnnlab  # noqa: F401
except ImportError:  # e.g. `python some/dir/reproduce.py` from the repository root
    sys.path.insert(0, os.getcwd())
    try:
        import rnnlab  # noqa: F401
    except ImportError:
        sys.exit("error: cannot import rnnlab; run this from the rnnlab repository root or put it on PYTHONPATH")

import flax
import jax

from rnnlab.config import Config, ConfigError
from rnnlab.training.history import CallProgress
from rnnlab.training.train import Run

SUMMARY = $summary_repr
PRODUCED_WITH = {"jax": $jax_repr, "flax": $flax_repr}

CONFIG = Config(
$fields
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=f"Reproduce an rnnlab run: {SUMMARY}.")
    parser.add_argument("--no-csv", action="store_true", help="do not write history.csv")
    args = parser.parse_args(argv)
    for name, version in (("jax", jax.__version__), ("flax", flax.__version__)):
        if version != PRODUCED_WITH[name]:
            print(f"note: {name} {version} differs from {PRODUCED_WITH[name]}, which produced this script; "
                  "the losses may differ slightly.", file=sys.stderr)
    try:
        run = Run(CONFIG)
    except ConfigError as e:
        for message in e.messages:
            print(f"error: {message}", file=sys.stderr)
        return 2
    shown = -1

    def report(progress: CallProgress) -> None:
        """Print a line at every tenth of the run."""
        nonlocal shown
        tenth = 10 * progress.step // max(progress.total, 1)
        if tenth > shown:
            shown = tenth
            print(f"step {progress.step}/{progress.total}  loss {progress.loss:.4g}  "
                  f"({progress.steps_per_second:.0f} steps/s)", flush=True)

    history = run.train(report)
    df = history.steps_df()
    if history.stop_reason:
        print(history.stop_reason)
    if not args.no_csv:
        path = Path("history.csv")
        df.to_csv(path, index=False)
        print(f"history written to {path.resolve()}")
    final = float(df["loss"].iloc[-1]) if len(df) else float("nan")
    print(f"final loss: {final!r}")
    return 1 if history.stop_reason else 0


if __name__ == "__main__":
    sys.exit(main())
''')


def reproduce_script(config: Config) -> str:
    """A standalone Python script that rebuilds exactly ``config``, trains it with rnnlab and reports the result.

    It prints a progress line per tenth of the run, then ``final loss: <repr>`` (the last step's loss), and
    writes ``history.csv`` to the working directory unless given ``--no-csv``.
    """
    assignments = {f.name: f"{f.name}={_literal(getattr(config, f.name))}," for f in fields(Config)}
    width = max(map(len, assignments.values()))
    lines = []
    for name, assignment in assignments.items():
        lines.append(f"    {assignment:<{width}}  # {HELP[name]}" if name in HELP else f"    {assignment}")
    summary = (f"{config.cell} cell, {config.task} task, T={config.seq_len}, {config.carry_mode} carry, "
               f"{config.steps} steps, seed {config.seed}")
    return _SCRIPT.substitute(summary=summary, rnnlab=rnnlab_version(), jax=jax.__version__,
                              flax=flax.__version__, backend=jax.default_backend(), summary_repr=_literal(summary),
                              jax_repr=_literal(jax.__version__), flax_repr=_literal(flax.__version__),
                              fields="\n".join(lines))


def _literal(value: Any) -> str:
    """A Python literal for a configuration value (double-quoted strings; numpy scalars become int/float)."""
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, np.integer):
        value = int(value)
    elif isinstance(value, np.floating):
        value = float(value)
    return repr(value)


def filename_stem(config: Config) -> str:
    """A short filename stem naming the run, e.g. ``rnnlab_gru_adding_T100_seed0``."""
    stem = f"rnnlab_{config.cell}_{config.task}_T{config.seq_len}_seed{config.seed}"
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", stem)
