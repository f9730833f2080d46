"""Downloads: history CSV, parameter files (round trip and refusals) and the reproduction script."""

import io
import os
import re
import runpy
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import flax
import jax
import msgpack
import numpy as np
import pandas as pd
import pytest

from rnnlab.config import Config
from rnnlab.files.export import (
    MAX_PARAMS_BYTES,
    PARAMS_SLACK_BYTES,
    ExportError,
    evaluations_csv,
    filename_stem,
    history_csv,
    load_params,
    params_msgpack,
    reproduce_script,
)
from rnnlab.training.program import hyper_args
from rnnlab.training.train import Run

ROOT = Path(__file__).resolve().parents[1]
GRU = Config(seq_len=10, batch=8, features=8, steps=6, chunk=3, carry_init="normal")
LSTM = replace(GRU, cell="lstm")
SCRIPT = Config(seq_len=20, batch=16, features=16, steps=30, chunk=10)


@pytest.fixture(scope="module")
def runs() -> dict[str, Run]:
    out = {}
    for config in (GRU, LSTM):
        run = Run(config)
        run.train()
        out[config.cell] = run
    return out


def final_loss(text: str) -> float:
    lines = [line for line in text.splitlines() if line.startswith("final loss: ")]
    assert lines, text
    return float(lines[-1].removeprefix("final loss: "))


# ---- history -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("cell", ["gru", "lstm"])
def test_history_csv_reads_back_to_the_same_numbers(runs, cell):
    history = runs[cell].history
    data = history_csv(history)
    expected = history.steps_df()
    assert data.decode().splitlines()[0] == ",".join(expected.columns)  # the header comes first
    back = pd.read_csv(io.BytesIO(data))
    assert list(back.columns) == list(expected.columns) and len(back) == GRU.steps
    pd.testing.assert_frame_equal(back, expected, check_exact=True)
    assert np.array_equal(back.to_numpy(), expected.to_numpy())  # bit for bit, not just close

    evals = pd.read_csv(io.BytesIO(evaluations_csv(history)))
    pd.testing.assert_frame_equal(evals, history.chunks_df(), check_exact=True)
    assert list(evals["step"]) == [0, 3, 6]


# ---- parameters ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("cell", ["gru", "lstm"])
def test_params_round_trip_exactly(runs, cell):
    run = runs[cell]
    loaded = load_params(params_msgpack(run.params), run.config)
    assert jax.tree_util.tree_structure(loaded) == jax.tree_util.tree_structure(run.params)
    leaves = jax.tree_util.tree_leaves_with_path(run.params)
    assert {"h0", "c0"} & {str(path[-1].key) for path, _ in leaves}  # the learnable carry is in there
    for (path, want), got in zip(leaves, jax.tree_util.tree_leaves(loaded)):
        assert got.dtype == want.dtype and got.shape == want.shape, path
        assert np.array_equal(np.asarray(got), np.asarray(want)), path
    # and the loaded parameters evaluate exactly like the run's own
    _, _, scale = hyper_args(run.config)
    ours = run.program.evaluate(run.params, run.state["root"], scale)
    theirs = run.program.evaluate(loaded, run.state["root"], scale)
    assert float(theirs["loss"]) == float(ours["loss"])


def test_load_params_refuses_what_does_not_fit(runs):
    good = params_msgpack(runs["gru"].params)
    cases = [
        (np.random.default_rng(0).bytes(256), GRU, "not a msgpack parameter file"),
        (good[: len(good) // 2], GRU, "not a msgpack parameter file: the file ends too early"),
        (good[:-1], GRU, "not a msgpack parameter file: the file ends too early"),
        (history_csv(runs["gru"].history), GRU, "it looks like a history CSV; choose the .msgpack file"),
        (b"\x89PNG\r\n\x1a\n" + bytes(64), GRU, "it looks like a PNG image"),
        (b"#!/usr/bin/env python3\nprint(1)\n", GRU, "it looks like text ('#!/usr/bin/env python3'"),
        (bytes(10), GRU, "not a msgpack parameter file: its contents could not be read"),
        (good, GRU, None),
        (b"", GRU, "empty"),
        (b"\xc0", GRU, "not a msgpack parameter file"),  # valid msgpack (None), but no tree of arrays
        (params_msgpack(runs["lstm"].params), GRU, "missing params/GRUCell_0"),
        (params_msgpack(runs["lstm"].params), GRU,
         "The file seems to hold LSTM parameters (8 features, learnable carry)."),
        (good, replace(GRU, carry_mode="noisy", features=4),
         "The file seems to hold GRU parameters (8 features, learnable carry)."),
        (params_msgpack(jax.tree_util.tree_map(lambda a: np.full_like(a, np.nan), runs["gru"].params)), GRU,
         "holds NaN or infinite values (in params/GRUCell_0/hn/bias, "),
        (good, replace(GRU, features=16), "expected params/GRUCell_0/hn/kernel of shape (16, 16), got (8, 8)"),
        (good, replace(GRU, carry_mode="fixed"), "unexpected params/h0"),
        (params_msgpack({"params": {"h0": np.zeros(8, np.float32)}}), GRU, "missing params/readout"),
        (params_msgpack(jax.tree_util.tree_map(lambda a: np.asarray(a, np.float64), runs["gru"].params)), GRU,
         "of dtype float32, got float64"),
    ]
    for data, config, message in cases:
        if message is None:  # a control: the good file loads
            load_params(data, config)
            continue
        with pytest.raises(ExportError) as info:
            load_params(data, config)
        assert message in str(info.value), (message, str(info.value))
    assert issubclass(ExportError, ValueError)


def test_load_params_refuses_files_over_the_limit(runs):
    good = params_msgpack(runs["gru"].params)
    with pytest.raises(ExportError, match=r"the file is \d+ bytes, more than the 100 bytes a parameter file"):
        load_params(good, GRU, max_bytes=100)
    assert MAX_PARAMS_BYTES == 20 * 2**20  # the server's maxUploadSize (.streamlit/config.toml) is 20 MB
    with pytest.raises(ExportError, match="the file is 21 MB, more than the 20 MB a parameter file may have"):
        load_params(b"\x00" * (21 * 2**20), GRU)


# ---- reproduction script -------------------------------------------------------------------------------
def test_script_rebuilds_every_field_and_says_how_it_was_made(tmp_path):
    config = Config(task="copy", cell="lstm", features=12, carry_mode="noisy", carry_init="truncated_normal",
                    carry_scale=0.37, seq_len=15, batch=9, optimizer="sgd", lr=0.012345678901234, clip=0.0,
                    steps=7, seed=123, chunk=4, kernel_size=5)
    assert all(getattr(config, k) != getattr(Config(), k) for k in Config().to_dict())  # every field non-default
    script = reproduce_script(config)
    header = script.split("\nimport ")[0]
    assert f"jax {jax.__version__}" in header and f"flax {flax.__version__}" in header
    assert "python reproduce.py" in header and "rnnlab" in header
    compile(script, "reproduce.py", "exec")
    path = tmp_path / "reproduce.py"
    path.write_text(script)
    namespace = runpy.run_path(str(path), run_name="reproduce")  # defines everything, trains nothing
    assert namespace["CONFIG"] == config and namespace["CONFIG"].to_dict() == config.to_dict()


def test_script_reproduces_the_run_bit_for_bit(tmp_path, monkeypatch, capsys):
    expected = Run(SCRIPT).train().steps_df()
    path = tmp_path / "reproduce.py"
    path.write_text(reproduce_script(SCRIPT))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    result = subprocess.run([sys.executable, str(path)], cwd=tmp_path, env=env, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1].startswith("final loss: ")
    assert re.search(r"^step 30/30 ", result.stdout, re.M)  # the progress report
    assert final_loss(result.stdout) == expected["loss"].iloc[-1]
    written = pd.read_csv(tmp_path / "history.csv")
    assert len(written) == 30 and list(written["step"]) == list(range(1, 31))
    assert np.array_equal(written["loss"].to_numpy(), expected["loss"].to_numpy())

    # --no-csv (in process: same program cache, so quick)
    elsewhere = tmp_path / "no_csv"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    main = runpy.run_path(str(path), run_name="reproduce")["main"]
    assert main(["--no-csv"]) == 0
    assert final_loss(capsys.readouterr().out) == expected["loss"].iloc[-1]
    assert not (elsewhere / "history.csv").exists()


def test_filename_stem():
    assert filename_stem(Config()) == "rnnlab_gru_adding_T100_seed0"
    stem = filename_stem(Config(cell="optimized_lstm", task="copy", seq_len=7, seed=42))
    assert stem == "rnnlab_optimized_lstm_copy_T7_seed42"
    assert re.fullmatch(r"[A-Za-z0-9_.-]+", filename_stem(replace(Config(), task="a b/c"))) is not None


@pytest.mark.parametrize("crafted", [
    msgpack.packb({"params": [b""] * 2_000_000}),  # empty arrays by the million
    msgpack.packb({"params": [{} for _ in range(3_000_000)]}),  # empty groups by the million
])
def test_a_crafted_file_far_larger_than_the_parameters_is_refused_before_unpacking(runs, crafted, monkeypatch):
    unpacked = []
    monkeypatch.setattr(flax.serialization, "msgpack_restore", lambda data: unpacked.append(data))
    with pytest.raises(ExportError, match=r"while a parameter file for this configuration .* is about"):
        load_params(crafted, GRU)
    assert not unpacked  # nothing was materialised
    assert len(params_msgpack(runs["gru"].params)) <= 2 * sum(
        x.nbytes for x in jax.tree_util.tree_leaves(runs["gru"].params)) + PARAMS_SLACK_BYTES  # real files pass


@pytest.mark.parametrize("crafted", [
    msgpack.packb({"params": [{} for _ in range(6_000_000)]}),  # 6 MB of empty groups: 1 byte each
    msgpack.packb({"params": [b""] * 3_000_000}),
    b"\x91" * 200 + b"\xc0",
])
def test_a_crafted_file_within_the_size_of_a_wide_model_is_refused_before_unpacking(crafted, monkeypatch):
    wide = Config(cell="gru", features=1024)  # its parameter file is about 12 MB, so these pass the size check
    unpacked = []
    monkeypatch.setattr(flax.serialization, "msgpack_restore", lambda data: unpacked.append(data))
    with pytest.raises(ExportError, match=r"not a parameter file for this configuration .* Nothing of it was unpacked"):
        load_params(crafted, wide)
    assert not unpacked


# ---- the same files in every language ----------------------------------------------------------------------
def test_downloads_are_the_same_bytes_in_every_language(runs):
    """CSV headers and content, the reproduction script and file names stay English; refusals are translated."""
    from rnnlab.i18n import using

    history = runs["gru"].history
    english = (history_csv(history), evaluations_csv(history), reproduce_script(GRU), filename_stem(GRU))
    for lang in ("ru", "zh"):
        with using(lang):
            assert (history_csv(history), evaluations_csv(history), reproduce_script(GRU),
                    filename_stem(GRU)) == english
    good = params_msgpack(runs["lstm"].params)
    with using("ru"), pytest.raises(ExportError) as info:
        load_params(good, GRU)
    message = str(info.value)
    assert message.startswith("файл параметров не подходит к этой конфигурации (ячейка GRU, скрытых нейронов: 8, "
                              "задача сложения, начальное состояние обучаемое)")  # names, not ids
    assert "нет params/GRUCell_0" in message
    assert "Похоже, в файле параметры ячейки LSTM (8 скрытых нейронов, обучаемое начальное состояние)." in message
