"""A new cell is one file: its family's file (here tests/fixtures/cell_family/elman.py, put beside
rnnlab/model/cell_families/) holds its spec, its fused step and its log-scaled probe step, the registry
(``rnnlab.model.cells.CELLS``) finds it, and it is found everywhere a user or a table meets cells: the settings and
their validation, the URL, the command line, the time and memory estimates, the fused training path, the probe, the
grids and sweeps, and the Explore, Gradients, Compare and API pages."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import flax.linen as nn
import jax
import numpy as np
import pytest

from rnnlab import cli
from rnnlab.config import CHOICES, SETTING, Config, with_cell
from rnnlab.flaxapi import columns
from rnnlab.grids import FIELDS
from rnnlab.model import cell_families, cells
from rnnlab.model.cell_spec import CellSpec
from rnnlab.model.cells import CELLS
from rnnlab.probing import logscale, probes
from rnnlab.sharing.urlstate import parse_cells, parse_query, to_query
from rnnlab.training import estimate
from rnnlab.training.program import get_program, hyper_args
from tests.app.conftest import open_page

NEW = "elman"  # the test's cell: the simple cell's maths under a name of its own, in a file of its own
FAMILY_FILES = Path(__file__).parent / "fixtures" / "cell_family"  # holds elman.py and nothing else
SMALL = dict(task="adding", features=4, seq_len=6, batch=2, steps=2, chunk=2, seed=3)


@pytest.fixture
def new_cell(monkeypatch):
    """The new cell's one file put beside the cell families for the test only: the registry finds it there and
    registers its spec once, in ``CELLS``, as it does every family's."""
    monkeypatch.setattr(cell_families, "__path__", [*cell_families.__path__, str(FAMILY_FILES)])
    found = [spec for spec in cells.family_specs() if spec.name not in CELLS]
    assert [spec.name for spec in found] == [NEW]
    monkeypatch.setitem(CELLS, NEW, found[0])
    yield found[0]
    sys.modules.pop(f"{cell_families.__name__}.{NEW}", None)


def small(cell: str) -> Config:
    return Config(cell=cell, **SMALL)


def test_the_settings_the_url_and_the_grids_know_it(new_cell):
    assert NEW in SETTING["cell"].choices and NEW in CHOICES["cell"]
    assert small(NEW).validate() == [] and Config(cell=NEW).memory_bytes() == Config(cell="simple").memory_bytes()
    assert Config.from_dict({"cell": NEW})[0].cell == NEW
    assert with_cell(Config(), NEW) == (replace(Config(), cell=NEW), {})
    state = parse_query({"cell": NEW, "sweep_cells": f"{NEW},gru", "cmp_cell": f"{NEW}, lstm"})
    assert state.notes == []
    assert (state.config.cell, state.sweep_cells, state.compare["cell"]) == (NEW, (NEW, "gru"), f"{NEW}, lstm")
    assert parse_query(to_query(state)).config.cell == NEW
    assert parse_cells(NEW) == ((NEW,), None)
    assert FIELDS["cell"].parse(f"{NEW}, gru") == [NEW, "gru"] and FIELDS["cell"].option(NEW) == "Elman RNN"


def test_the_command_line_offers_it_and_trains_it(new_cell, tmp_path, capsys):
    assert cli.build_parser().parse_args(["train", "--cell", NEW]).cell == NEW
    with pytest.raises(SystemExit):
        cli.main(["grad", "--help"])
    assert NEW in capsys.readouterr().out  # the cells --cells may name
    out = tmp_path / "history.csv"
    args = [f"--{k.replace('_', '-')}={v}" for k, v in SMALL.items()]
    assert cli.main(["train", "--cell", NEW, *args, "--out", str(out), "--quiet"]) == 0
    assert out.exists()


def test_the_time_estimate_reads_its_spec(new_cell, monkeypatch):
    assert estimate.step_flops(small(NEW)) == estimate.step_flops(small("simple")) > 0
    assert estimate.estimate(small(NEW)).step_s > 0
    monkeypatch.setitem(CELLS, NEW, replace(new_cell, matmuls=2, compile_s=20.0))
    assert estimate.step_flops(small(NEW)) > estimate.step_flops(small("simple"))
    assert estimate.estimate(replace(small(NEW), features=7)).compile_s == 20.0  # a size not compiled here


def test_it_trains_through_its_fused_form_and_the_probe_runs_for_it(new_cell):
    """Same maths as the simple cell: the same run and the same probe, through the fused form (no ``nn.RNN``)."""
    results = {}
    for cell in (NEW, "simple"):
        config = small(cell)
        program = get_program(config)
        lr, clip, scale = hyper_args(config)
        calls = []

        def count_rnn(next_fun, args, kwargs, context, calls=calls):
            if isinstance(context.module, nn.RNN):
                calls.append(context.method_name)
            return next_fun(*args, **kwargs)

        state = program.init(np.int32(config.seed), scale, lr, clip)
        with nn.intercept_methods(count_rnn):
            state, records, _ = program.train_steps(state, lr, clip, scale, np.int32(2))
        assert calls == []
        params = jax.tree_util.tree_map(np.asarray, state["params"])
        batch = probes.probe_batch(program, state["root"])
        results[cell] = (np.asarray(records["loss"]), logscale.carry_grad_log10(program, params, batch, scale).log10,
                         probes.carry_grad_norms(program, params, state["root"], scale)["h"])
    for mine, simple in zip(results[NEW], results["simple"], strict=True):
        np.testing.assert_allclose(mine, simple, rtol=1e-6)
    assert CELLS[NEW].probe is not CELLS["simple"].probe and CELLS[NEW].fused is not CELLS["simple"].fused


def test_a_cell_cannot_leave_out_its_probe_step_and_its_gates_are_read_from_its_fused_step(new_cell):
    """What a cell needs is in its spec, so a cell without its log-scaled probe step cannot be made at all (nothing
    is checked later), and gates need the fused step they are read from."""
    with pytest.raises(TypeError, match="probe"):
        CellSpec("half", "Half", nn.SimpleCell, ("h",), fused=new_cell.fused)
    with pytest.raises(ValueError, match="fused step"):
        replace(new_cell, gates=CELLS["mgu"].gates, fused=None)


def test_the_pages_offer_it(new_cell):
    explore = open_page("explore", **{k: str(v) for k, v in SMALL.items()}, cell=NEW)
    assert explore.sidebar.selectbox(key="w_cell").value == NEW
    assert "Elman RNN" in explore.sidebar.selectbox(key="w_cell").options
    compare = open_page("compare", **{k: str(v) for k, v in SMALL.items()}, cmp_cell=f"{NEW}, gru")
    assert "Elman RNN" in compare.multiselect(key="w_cmp_cell").options
    gradients = open_page("gradients", **{k: str(v) for k, v in SMALL.items()}, cell="gru")
    assert "Elman RNN" in gradients.multiselect(key="w_sweep_cells").options
    api = open_page("api")
    assert len(api.selectbox(key="api_cell").options) == len(CELLS)
    api.selectbox(key="api_cell").set_value(NEW).run()
    assert not api.exception and api.selectbox(key="api_cell").value == NEW
    expected = columns.compare(NEW, (4,), 3, 5, "normal", 0.1, 0)
    assert [s.value for s in api.subheader][:3] == [c.title for c in expected.columns]
