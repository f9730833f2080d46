"""The benchmark suite (python -m rnnlab.bench) in quick mode: sane structures, never timings."""

from __future__ import annotations

import math

import pytest

from rnnlab.bench import ROWS, Target, measure, probe, report, steps
from rnnlab.bench import compile as compile_row
from rnnlab.bench import sweep as sweep_row
from rnnlab.bench import timing as timing_module
from rnnlab.bench.__main__ import main
from rnnlab.bench.machine import machine_info


def test_matmul_flops_formula():
    # GRU, B=2, T=5, H=4, I=2: forward 2*B*(I+H)*3H per step, backward twice that -> 6*5*2*3*4*6
    assert steps.matmul_flops("gru", 2, 5, 4) == 6 * 5 * 2 * 3 * 4 * 6
    assert steps.matmul_flops("lstm", 1, 1, 1) / steps.matmul_flops("simple", 1, 1, 1) == 4


def test_measure_takes_the_median_of_the_repeats_after_warmup():
    calls = []
    timing = measure(lambda: calls.append(1), repeats=3, warmup=2)
    assert len(calls) == 5 and len(timing.samples) == 3
    assert timing.median == sorted(timing.samples)[1]
    assert timing.per(4).median == pytest.approx(timing.median / 4)


def test_loop_series_caps_with_a_budget_and_extrapolates():
    compiled = []

    def fake(T):  # seconds grow like T^2 / 100
        compiled.append(T)
        return T * T / 100

    series = compile_row.loop_series((10, 20, 40, 100, 1000), budget_s=20.0, compile_fn=fake, repeats_first=2)
    assert compiled == [10, 10, 20, 40]  # T=100 is predicted at 100 s > 20 s: skipped, like T=1000
    assert [r["skipped"] for r in series] == [False, False, False, True, True]
    assert series[3]["extrapolated"] == pytest.approx(100.0) and series[4]["extrapolated"] == pytest.approx(1e4)
    assert compile_row.power_fit([(10, 1.0), (100, 100.0)]) == pytest.approx((0.01, 2.0))


def test_machine_section_names_cpu_cores_backend_and_versions():
    info = machine_info()
    assert {"CPU", "cores", "jax backend", "jax devices", "jax", "flax", "optax", "torch"} <= set(info)
    assert int(info["cores"]) >= 1 and info["jax backend"] == "cpu"


@pytest.mark.minutes
def test_probe_row_naive_loop_gives_the_probe_norms_and_ratios_come_from_its_medians():
    row = probe.run(quick=True)
    assert {r["cell"] for r in row.rows} == set(probe.CELLS) and len({r["hidden"] for r in row.rows}) == 2
    assert all(r["ms"] > 0 for r in row.rows)
    for r in row.rows:
        step = next(s for s in row.rows if s["cell"] == r["cell"] and s["hidden"] == r["hidden"])
        assert r["/ step"] == pytest.approx(r["ms"] / step["ms"])
    assert row.extra["rel_diff"] < 1e-4  # one backward pass per t gives the same ||dL/dh_t||
    assert row.extra["exact_taken"]  # saturating weights take the exact-log branch
    assert len(row.extra["log_ratios"]) == 2 * len(probe.CELLS)
    assert row.targets[0].met == (row.extra["ratio"] <= probe.TARGET_RATIO)
    assert row.targets[1].met == (row.extra["log_ratio"] <= probe.LOG_TARGET_RATIO)
    assert "log-scaled probe / training step" in row.targets[1].name


def test_sweep_row_says_not_available_without_rnnlab_sweep(monkeypatch):
    monkeypatch.setattr(sweep_row, "load_run_sweep", lambda: None)
    row = sweep_row.run(quick=True)
    assert not row.available and not row.rows and row.targets[0].met is None
    assert "Not available" in row.notes[0]


def test_markdown_has_machine_targets_and_every_row():
    results = [report.RowResult(key, f"Row {key}", f"method of {key}", ["a", "b"], [{"a": 1.5, "b": None}],
                                [f"note {key}"], [Target(key, "<= 1", "2", False, "because")]) for key in ROWS]
    md = report.render_markdown(results, {"CPU": "x", "cores": "2"}, "python -m rnnlab.bench", 1.0)
    assert md.index("## Machine") < md.index("## Targets") < md.index("## Row steps")
    for key in ROWS:
        assert f"## Row {key}" in md and f"note {key}" in md
    assert "| 1.5 | - |" in md and "| not met | because |" in md
    assert report.fmt(float("nan")) == "-" and report.fmt(12345.6) == "12,346" and report.fmt(0.012345) == "0.0123"


@pytest.mark.slow
@pytest.mark.minutes  # every row, the first-link servers included: minutes of CPU
def test_quick_bench_end_to_end(tmp_path):
    out = tmp_path / "bench.md"
    results = {r.key: r for r in main(["--quick", "--out", str(out)])}
    assert list(results) == list(ROWS)
    md = out.read_text()
    assert "## Machine" in md and "| CPU |" in md and "| jax backend | `cpu` |" in md
    for r in results.values():
        assert f"## {r.title}" in md
        assert r.targets and all(t.verdict in md for t in r.targets)

    for r in results["steps"].rows:
        assert r["rnnlab ms/step"] > 0 and r["rnnlab GFLOP/s"] > 0 and r["minimal ms/step"] > 0
        assert r["fused / Flax"] == pytest.approx(r["rnnlab ms/step"] / r["Flax cells ms/step"])
        assert r["hand / autodiff"] == pytest.approx(r["rnnlab ms/step"] / r["autodiff ms/step"])
        assert r["call overhead"] > -1 and r["matmul floor ms/step"] > 0 and r["evaluation ms/call"] > 0
        assert r["share of peak"] == pytest.approx(r["rnnlab GFLOP/s"] / results["steps"].extra["peak_gflops"])
        if r["torch ms/step"] is not None:  # the ratio divides the two medians of this same run
            assert r["rnnlab/torch"] == pytest.approx(r["rnnlab ms/step"] / r["torch ms/step"])
            assert r["torch ms/step"] == min(v for k, v in r.items() if k.startswith("torch ms/step, "))
            assert r["floor/torch"] == pytest.approx(r["matmul floor ms/step"] / r["torch ms/step"])

    compile_rows = results["compile"].rows
    assert all(r["rnnlab compile s"] > 0 for r in compile_rows)
    assert results["compile"].extra["ratio"] == pytest.approx(
        compile_rows[-1]["rnnlab compile s"] / compile_rows[0]["rnnlab compile s"])
    for r in compile_rows:
        loop_s = r["loop compile s"] if r["loop compile s"] is not None else r["loop extrapolated s"]
        assert loop_s > 0 and r["loop / rnnlab"] == pytest.approx(loop_s / r["rnnlab compile s"])

    sweep = results["sweep"]
    if sweep.available:
        one, sequential, vmapped, wide = sweep.rows
        assert one["s"] > 0 and vmapped["/ one run"] == pytest.approx(vmapped["s"] / one["s"])
        assert sequential["/ one run"] == pytest.approx(sequential["s"] / one["s"])
        assert wide["/ one run"] == pytest.approx(wide["s"] / one["s"]) and "batch 8 x 8" in wide["what"]

    cold, warm = results["app"].rows
    for r in (cold, warm):
        assert 0 < r["first call s"] <= r["to first call s"] <= r["to end of script run s"]
        assert not math.isnan(r["Run() s"])
    assert [t.name for t in results["app"].targets] == ["first chart update, warm", "first chart update, cold"]
    assert all(isinstance(t.met, bool) for t in results["app"].targets)


def test_interleaved_takes_turns_and_keeps_each_functions_samples():
    order = []
    timings = timing_module.interleaved({"a": lambda: order.append("a"), "b": lambda: order.append("b")},
                                        repeats=2, warmup=1)
    assert order == ["a", "b", "a", "b", "a", "b"]  # warm-ups, then turns
    assert len(timings["a"].samples) == len(timings["b"].samples) == 2


def test_paired_ratio_divides_samples_of_the_same_turn():
    a = timing_module.Timing((2.0, 20.0, 4.0))
    b = timing_module.Timing((1.0, 10.0, 4.0))
    assert timing_module.paired_ratio(a, b) == 2.0  # turns: 2, 2, 1; the ratio of medians would be 1
    assert a.median / b.median == 1.0


def test_a_partial_run_does_not_replace_the_report(monkeypatch, tmp_path):
    from rnnlab.bench import __main__ as bench_main
    from rnnlab.bench.report import RowResult

    report = tmp_path / "benchmarks.md"
    report.write_text("the whole report")
    monkeypatch.setattr(bench_main, "DEFAULT_OUT", report)
    monkeypatch.setattr(bench_main, "run_row", lambda key, quick: RowResult(key, key, "measured"))
    monkeypatch.setattr(bench_main, "render_text", lambda results, machine: "")
    bench_main.main(["--only", "probe"])
    assert report.read_text() == "the whole report"
    bench_main.main(["--only", "probe", "--out", str(tmp_path / "probe.md")])
    assert (tmp_path / "probe.md").exists()


def test_a_spliced_row_replaces_its_section_and_targets_and_keeps_the_rest():
    def result(key, measured):
        return report.RowResult(key, f"{ROWS.index(key) + 1}. Row {key}", f"method of {key}", ["a"], [{"a": measured}],
                                [f"note {key}"], [Target(f"{key} target", "<= 1", measured, True)])

    whole = report.render_markdown([result(key, "1") for key in ROWS], {"CPU": "x"}, "python -m rnnlab.bench", 1.0)
    spliced = report.splice_markdown(whole, [result("probe", "2")], "run on its own", ROWS)
    assert spliced.count("## ") == whole.count("## ")
    assert "| probe | probe target | <= 1 | 2 | met |  |" in spliced
    assert "| probe | probe target | <= 1 | 1 |" not in spliced
    for key in ROWS:
        assert f"| {key} | {key} target |" in spliced
    probe_part = spliced[spliced.index("## 3. Row probe"):spliced.index("## 4. Row sweep")]
    assert "| 2 |" in probe_part and "_run on its own_" in probe_part
    assert spliced.replace(probe_part, "") == whole.replace(whole[whole.index("## 3. Row probe"):
                                                                   whole.index("## 4. Row sweep")], "").replace(
        "| probe | probe target | <= 1 | 1 |", "| probe | probe target | <= 1 | 2 |")
    with pytest.raises(ValueError):
        report.splice_markdown(whole.replace("| row | target |", "| target |"), [result("probe", "2")], "", ROWS)
