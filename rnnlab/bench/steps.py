"""Row 1: the training step of rnnlab's compiled program (fused cells) against Flax's cells, a minimal step
and PyTorch, and achieved GFLOP/s against the matmul peak."""

from __future__ import annotations

import time
from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np
import optax

from rnnlab.bench.machine import cores, matmul_peak
from rnnlab.bench.report import RowResult, Target
from rnnlab.bench.timing import Timing, interleaved, measure, paired_ratio
from rnnlab.config import Config, static_part
from rnnlab.model.cells import CELLS as CELL_SPECS
from rnnlab.training.program import BATCH, Program, hyper_args, stream

GRID = ((64, 100, 64), (32, 1000, 64), (64, 100, 256))  # (batch, T, hidden)
QUICK_GRID = ((16, 20, 32),)
CELLS = ("gru", "lstm", "simple")
INPUTS = 2  # the adding problem's input channels
# rnnlab / PyTorch's best, per cell: PyTorch's CPU LSTM is one fused oneDNN call for the whole sequence.
TARGET_RATIO = {"gru": 0.7, "lstm": 1.0, "simple": 0.7}
APP_CHUNK = Config().chunk  # the app's steps per chunk: one compiled call of them is what is timed
OVERHEAD_TARGET = 0.05  # the app's compiled call over a minimal step
PEAK_SHARE_TARGET = 0.5  # of the matmul peak, where the step is matmul-bound (hidden >= 256)
FLOP_FORMULA = "6 · T · B · g · H · (I + H)"


def matmul_flops(cell: str, batch: int, T: int, hidden: int, inputs: int = INPUTS) -> float:
    """Matmul FLOPs of one training step (forward + backward): ``6 T B g H (I + H)``.

    Forward, per time step: ``2 B I gH`` (input projection) + ``2 B H gH`` (recurrent); backward: twice the
    forward (gradients with respect to the activations and the weights). ``g`` is 3 (GRU), 4 (LSTM) or 1
    (simple). Element-wise work and the 1-unit readout are left out.
    """
    return 6.0 * T * batch * CELL_SPECS[cell].matmuls * hidden * (inputs + hidden)


def bench_config(cell: str, batch: int, T: int, hidden: int, chunk: int) -> Config:
    return Config(task="adding", cell=cell, batch=batch, seq_len=T, features=hidden, chunk=chunk, steps=10**5 // 2)


def training_call(cell: str, batch: int, T: int, hidden: int, chunk: int, fused: bool = True,
                  hand_backward: bool = True) -> tuple[Callable[[], object], float]:
    """(a call of one ``train_steps`` of ``chunk`` steps, seconds of its first call including compilation).

    It is the app's compiled call of a whole chunk: batches generated on the device, Adam with global-norm
    clipping, the per-step records and one evaluation forward pass on the evaluation batch after the last step. With
    ``fused=False`` the model runs Flax's own cells under ``nn.RNN`` instead of rnnlab's fused ones; with
    ``hand_backward=False`` the fused cells are differentiated automatically.
    """
    config = bench_config(cell, batch, T, hidden, chunk)
    program = Program(static_part(config), fused=fused, hand_backward=hand_backward)
    lr, clip, scale = hyper_args(config)
    box = {"state": program.init(np.int32(0), scale, lr, clip)}
    n = np.int32(chunk)

    def call():
        box["state"], records, evaluation = program.train_steps(box["state"], lr, clip, scale, n)
        return box["state"]["params"], records, evaluation

    start = time.perf_counter()
    measure(call, repeats=0, warmup=1)
    return call, time.perf_counter() - start


def evaluation_call(cell: str, batch: int, T: int, hidden: int, chunk: int) -> Callable[[], object]:
    """A call of the evaluation the app's compiled call runs once at its end (a forward pass on the evaluation
    batch)."""
    config = bench_config(cell, batch, T, hidden, chunk)
    program = Program(static_part(config))
    lr, clip, scale = hyper_args(config)
    state = program.init(np.int32(0), scale, lr, clip)

    def call():
        return program.evaluate(state["params"], state["root"], scale)

    measure(call, repeats=0, warmup=1)
    return call


def minimal_call(cell: str, batch: int, T: int, hidden: int, chunk: int) -> Callable[[], object]:
    """A call of the least a training step needs, with the same (fused) model, loss and optimiser:
    ``chunk`` steps in one ``lax.scan``, each drawing its batch, taking the gradient and applying Adam after
    clipping; no per-step records, no finiteness checks, no evaluation (what the app's compiled call adds)."""
    config = bench_config(cell, batch, T, hidden, chunk)
    program = Program(static_part(config), fused=True)
    lr, clip, scale = hyper_args(config)
    state = program.init(np.int32(0), scale, lr, clip)
    tx = optax.chain(optax.clip_by_global_norm(float(clip)), optax.adam(float(lr)))
    root = state["root"]
    key = program.carry_key(root, 0)

    def steps(params, opt_state):
        def body(carry, index):
            params, opt_state = carry
            x, y = program.task.generate(stream(root, BATCH, index), batch, T)
            grads = jax.grad(lambda p: program.task.loss(program.model.apply(p, x, key, scale), y))(params)
            updates, opt_state = tx.update(grads, opt_state, params)
            return (optax.apply_updates(params, updates), opt_state), None

        return jax.lax.scan(body, (params, opt_state), np.arange(chunk))[0]

    run = jax.jit(steps)
    box = {"carry": (state["params"], tx.init(state["params"]))}

    def call():
        box["carry"] = run(*box["carry"])
        return box["carry"]

    measure(call, repeats=0, warmup=1)
    return call


def matmul_floor_call(cell: str, batch: int, T: int, hidden: int, inputs: int = INPUTS) -> Callable[[], object]:
    """A call of the matmuls of one training step and nothing else, at the step's shapes: a forward scan of
    ``x_t @ W_in + h @ W_h`` and a backward scan of ``d @ W_h^T``, each keeping only its carry, then the weight
    gradients as one matmul each over all steps (three compiled calls, one after the other): what the step would
    cost with XLA's matmuls at these sizes if element-wise work, storing activations, the loss and the optimiser
    took no time."""
    gates = CELL_SPECS[cell].matmuls
    width = gates * hidden
    key = jax.random.PRNGKey(0)
    xs = jax.random.normal(key, (T, batch, inputs))
    w_in = jax.random.normal(key, (inputs, width)) * 0.1
    w_h = jax.random.normal(key, (hidden, width)) / hidden
    h0 = jax.random.normal(key, (batch, hidden))
    rows_in = xs.reshape(-1, inputs)
    rows_h = jax.random.normal(key, (T * batch, hidden))
    rows_d = jax.random.normal(key, (T * batch, width))

    @jax.jit
    def forward(w_in, w_h, h0, xs):
        return jax.lax.scan(lambda h, x: ((x @ w_in + h @ w_h)[:, :hidden], None), h0, xs)[0]

    @jax.jit
    def backward(w_h, h):
        w_h_t = w_h.T
        return jax.lax.scan(lambda d, _: (jnp.tile(d @ w_h_t, gates), None), jnp.tile(h, gates), None, length=T)[0]

    @jax.jit
    def weight_gradients(rows_in, rows_h, rows_d):
        return rows_in.T @ rows_d, rows_h.T @ rows_d

    def call():
        jax.block_until_ready(backward(w_h, jax.block_until_ready(forward(w_in, w_h, h0, xs))))
        return weight_gradients(rows_in, rows_h, rows_d)

    measure(call, repeats=0, warmup=1)
    return call


def torch_call(cell: str, batch: int, T: int, hidden: int, steps: int,
               threads: int | None = None) -> Callable[[], None] | None:
    """PyTorch's ``nn.GRU``/``nn.LSTM``/``nn.RNN`` (tanh) + ``nn.Linear`` on the last step, Adam, clipping.

    Each step draws a fresh adding-problem batch with torch ops (as rnnlab draws one on the device), runs
    forward, MSE on the last step, backward, ``clip_grad_norm_(1.0)`` and ``Adam(lr=1e-2).step()`` with
    ``threads`` intra-op threads (default: the core count). The call runs ``steps`` steps; None when torch is
    not installed.
    """
    try:
        import torch
    except ImportError:
        return None
    torch.manual_seed(0)
    rnn = {"gru": torch.nn.GRU, "lstm": torch.nn.LSTM, "simple": torch.nn.RNN}[cell](
        INPUTS, hidden, batch_first=True)
    readout = torch.nn.Linear(hidden, 1)
    params = list(rnn.parameters()) + list(readout.parameters())
    opt = torch.optim.Adam(params, lr=1e-2)
    steps_t = torch.arange(T)

    def step():
        values = torch.rand(batch, T)
        i1 = torch.randint(0, T // 2, (batch,))
        i2 = torch.randint(T // 2, T, (batch,))
        marks = ((steps_t == i1[:, None]) | (steps_t == i2[:, None])).float()
        x = torch.stack([values, marks], dim=-1)
        y = (values * marks).sum(dim=1, keepdim=True)
        out, _ = rnn(x)
        loss = ((readout(out[:, -1]) - y) ** 2).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()

    def call():
        torch.set_num_threads(threads or cores())
        for _ in range(steps):
            step()

    return call


def run(quick: bool = False) -> RowResult:
    """Every cell at every grid point: rnnlab (fused), Flax's cells, a minimal step and PyTorch in ms/step, the
    ratios, GFLOP/s of each and the share of the matmul peak."""
    start = time.perf_counter()
    grid = QUICK_GRID if quick else GRID
    repeats = 2 if quick else 5
    peak_n = 256 if quick else 2048
    peak, peak_t = matmul_peak(peak_n, repeats=3 if quick else 5)
    rows, missing_torch = [], False
    threads = tuple(dict.fromkeys((cores(), 1)))
    for cell in CELLS:
        for batch, T, hidden in grid:
            chunk = 2 if quick else APP_CHUNK
            torch_steps = 2 if quick else (2 if batch * hidden >= 256 * 256 or T >= 1000 else 3)
            ours_call, first = training_call(cell, batch, T, hidden, chunk)
            calls = {"fused": ours_call, "flax": training_call(cell, batch, T, hidden, chunk, fused=False)[0],
                     "autodiff": training_call(cell, batch, T, hidden, chunk, hand_backward=False)[0],
                     "minimal": minimal_call(cell, batch, T, hidden, chunk),
                     "evaluation": evaluation_call(cell, batch, T, hidden, chunk),
                     "floor": matmul_floor_call(cell, batch, T, hidden)}
            torch_calls = {n: torch_call(cell, batch, T, hidden, torch_steps, n) for n in threads}
            missing_torch |= None in torch_calls.values()
            calls.update({f"torch {n}": c for n, c in torch_calls.items() if c is not None})
            timings = interleaved(calls, repeats)
            ours, flax_cells, autodiff, least = (timings[k].per(chunk)
                                                 for k in ("fused", "flax", "autodiff", "minimal"))
            floor, evaluation = timings["floor"], timings["evaluation"]
            by_threads = {n: timings[f"torch {n}"].per(torch_steps) if f"torch {n}" in timings else None
                          for n in threads}
            measured = [t for t in by_threads.values() if t is not None]
            theirs = None if missing_torch else min(measured, key=lambda t: t.median)
            flops = matmul_flops(cell, batch, T, hidden)
            row = {"cell": cell, "batch": batch, "T": T, "hidden": hidden,
                   "Flax cells ms/step": flax_cells.median * 1e3, "rnnlab ms/step": ours.median * 1e3,
                   "fused / Flax": ours.median / flax_cells.median,
                   "autodiff ms/step": autodiff.median * 1e3, "hand / autodiff": ours.median / autodiff.median,
                   "minimal ms/step": least.median * 1e3, "evaluation ms/call": evaluation.median * 1e3,
                   "call overhead": paired_ratio(ours, least) - 1,
                   "matmul floor ms/step": floor.median * 1e3, "floor GFLOP/s": flops / floor.median / 1e9,
                   **{f"torch ms/step, {n} thr": t.median * 1e3 if t else None for n, t in by_threads.items()},
                   "torch ms/step": None, "rnnlab/torch": None, "target": TARGET_RATIO[cell],
                   "rnnlab GFLOP/s": flops / ours.median / 1e9, "share of peak": flops / ours.median / 1e9 / peak,
                   "torch GFLOP/s": None, "floor/torch": None, "rnnlab first call s": first}
            if theirs is not None:
                row.update({"torch ms/step": theirs.median * 1e3, "rnnlab/torch": ours.median / theirs.median,
                            "torch GFLOP/s": flops / theirs.median / 1e9, "floor/torch": floor.median / theirs.median})
            rows.append(row)
    return RowResult("steps", "1. Training step: rnnlab against Flax's cells and PyTorch", METHOD,
                     COLUMNS_BEFORE_TORCH + [f"torch ms/step, {n} thr" for n in threads]
                     + COLUMNS_AFTER_TORCH, rows, notes(quick, missing_torch, peak_n, peak_t, repeats, rows, peak),
                     targets(rows, peak), time.perf_counter() - start,
                     extra={"peak_gflops": peak, "ratios": [r["rnnlab/torch"] for r in rows
                                                            if r["rnnlab/torch"] is not None]})


COLUMNS_BEFORE_TORCH = ["cell", "batch", "T", "hidden", "Flax cells ms/step", "rnnlab ms/step", "fused / Flax",
                        "autodiff ms/step", "hand / autodiff", "minimal ms/step", "evaluation ms/call",
                        "call overhead", "matmul floor ms/step"]
COLUMNS_AFTER_TORCH = ["torch ms/step", "rnnlab/torch", "target", "floor/torch", "rnnlab GFLOP/s", "share of peak",
                       "floor GFLOP/s", "torch GFLOP/s", "rnnlab first call s"]
METHOD = ("Training-step time on the adding problem for GRU, LSTM and simple cells over (batch, T, hidden). "
          "`rnnlab ms/step` is the app's compiled training call with the fused cells (`rnnlab.model.fused`, what the "
          "app runs: one input and one recurrent matmul per step, differentiated by the cell's hand-written backward "
          "pass); `autodiff ms/step` is the same call with the fused cells differentiated automatically; `Flax "
          "cells ms/step` is the same call with Flax's own cells under `nn.RNN`; `minimal ms/step` is the least a "
          "step needs with the same model, loss and optimiser; `matmul floor ms/step` is the step's matmuls alone "
          "(see the notes). PyTorch: `nn.GRU` / `nn.LSTM` / `nn.RNN` (tanh) with a `Linear` readout on the last "
          "step, Adam (lr 1e-2) after global-norm clipping at 1.0, the same sizes, in the same process.")


def floor_note(rows: list[dict], peak: float) -> str:
    """The matmul floor's speed and share of the peak at H >= 256."""
    wide = [r for r in rows if r["hidden"] >= 256]
    parts = [f"{r['cell']} {r['floor GFLOP/s']:.0f} GFLOP/s ({r['floor GFLOP/s'] / peak:.0%})" for r in wide]
    return ("At H >= 256 the floor's matmuls run at " + ", ".join(parts) + " of the peak.") if parts else ""


# What was measured and not kept, and why the small sizes stay below the peak: the same in every report.
SEARCHED = [
    "Tried and not kept (the gradient of cell weights only, at these three points, medians of 7 "
    "interleaved runs, ms): a backward pass written once for every cell (the step's own derivative inside "
    "the backward scan) was slower than automatic differentiation at 8 of 9 points (LSTM 20.7 / 144 / "
    "155, GRU 14.0 / 115 / 132, simple 4.1 / 44.0 / 48.6 against 18.5 / 135 / 138, 13.1 / 107 / 117, "
    "4.1 / 47.4 / 42.6); one matmul of [x, h] per step instead of two was within noise for the LSTM and "
    "the simple cell and 20-40% slower for the GRU (its candidate needs the input and recurrent parts "
    "apart, so the fused kernel carries a block of zeros). `nn.RNN(unroll=2/4/8)` made the LSTM slower "
    "(at B=64, T=100, H=128: 28.6, 29.4, 47.8, 103 ms for unroll 1, 2, 4, 8). XLA's CPU flags "
    "`--xla_cpu_use_xnnpack`, `--xla_cpu_use_onednn` and `--xla_cpu_multi_thread_eigen=false` left the "
    "matmuls inside the scan no faster (89-98 GFLOP/s for (64, 256) @ (256, 256) against 95 by default).",
    "Tried and not kept: splitting the batch over the two cores. XLA:CPU's matmul inside a scanned step "
    "gains little from the second core (a scan of 100 (64, 256) @ (256, 768) matmuls: 24.7 ms pinned to "
    "one core, 19.7-28.4 ms with both). Giving JAX one CPU device per core "
    "(`--xla_force_host_platform_device_count=2`) and running the fused scan under `shard_map` over the "
    "batch made the app's compiled call faster (5 interleaved repeats, ms/step, one device against split: simple "
    "(64, 100, 256) 31.6 against 18.4, GRU (64, 100, 256) 80.6 against 58.3, LSTM (64, 100, 64) 13.3 "
    "against 9.8), enough for every ratio target at those points. But the split program sums the "
    "weights' gradients and the loss across the devices with XLA:CPU's in-process all-reduce, and that "
    "hung and then ended the whole process (`Termination timeout for all reduce ... Exiting`): in 3 of 6 "
    "fresh processes running the vmapped init and evaluation of one split program, and once in a test "
    "run. One server process holds a whole class's runs, so the app keeps one device.",
    "Where the matmuls run: XLA:CPU hands each matmul of the step to YNNPACK (`ynn_fusion` in a "
    "profile). For the simple cell at H = 256 a trace shows every recurrent matmul of the forward and the "
    "backward scan on one thread (80-90 us each, about 99 GFLOP/s, half the two-core peak), while the "
    "LSTM's four times wider ones use both threads (about 133 GFLOP/s forward, 164 backward). Taking "
    "YNNPACK off (`--xla_cpu_experimental_ynn_fusion_type=-individual_dot`) sends them to Eigen: 100 steps "
    "of the simple cell's product kept feature-major (W^T h^T) then take 6.0 ms against 9.3, but the "
    "backward's d @ W_h^T takes 14.7 ms, and at the LSTM's shapes the backward scan is 2.4x slower (55.0 "
    "against 22.7 ms). The flag holds for the whole process, so no setting of it speeds up every cell. "
    "Within noise: `--xla_cpu_experimental_xnn_fusion_type=dot`, `--xla_cpu_experimental_onednn_fusion_type"
    "=dot`, `--xla_cpu_experimental_xnn_graph_fusion_mode=XNN_GRAPH_FUSION_MODE_GREEDY`, "
    "`--xla_cpu_opt_preset=CPU_OPT_PRESET_FAST_RUNTIME` (`--xla_cpu_experimental_ynn_fusion_type=+eltwise` "
    "fails to compile the step). Also measured and not kept: the weight gradient's left operand copied "
    "transposed first (1-3% faster, within noise), the input projection of the 2 inputs written as two "
    "broadcast products (0-8% slower), and the LSTM's five saved activations stored as one array (10-19% "
    "slower).",
    "Why the small sizes stay far below the peak: at H = 64 a time step's matmuls are a few MFLOP, "
    "microseconds at the peak, so the fixed cost of each scanned step (the loop and its element-wise "
    "kernels) dominates; `matmul floor` at H = 64 is itself far below the peak. The share of peak is judged "
    "at H = 256 only, where the matmuls dominate."]


def notes(quick: bool, missing_torch: bool, peak_n: int, peak_t: Timing, repeats: int, rows: list[dict],
          peak: float) -> list[str]:
    out = [f"GFLOP/s = matmul FLOPs per step / median seconds per step, FLOPs = {FLOP_FORMULA} with g = 3 "
           "(GRU), 4 (LSTM), 1 (simple), I = 2 inputs, H hidden units, B batch, T steps: forward "
           "2·B·(I+H)·gH per time step, backward twice that; element-wise work and the readout are left out. "
           "`share of peak` divides it by the peak.",
           f"Peak: a jitted float32 {peak_n}² matmul, median {peak_t.median * 1e3:.2f} ms over "
           f"{len(peak_t.samples)} runs after 2 warm-ups.",
           f"rnnlab ms/step: one compiled `train_steps` of the app's {APP_CHUNK} steps (2 in quick mode) divided "
           "by its steps; it includes drawing each batch on the device, the per-step records and the one "
           "evaluation forward pass at the end of the call (`evaluation ms/call`, timed on its own). `rnnlab "
           "first call s` is the first call, compilation included. `call overhead` is the median, over the "
           "timed turns, of the call's time over the minimal step's time in the same turn, minus 1; the minimal "
           "step runs the same number of steps in one `lax.scan`, drawing each batch, with Adam after clipping, "
           "and nothing else.",
           "PyTorch: 3 steps per timed repeat (2 at T = 1000 or batch · hidden >= 256²; capped for time), "
           "a fresh batch drawn with torch ops each step, timed with torch.set_num_threads(cores) and with "
           "1 thread; `torch ms/step` and the ratio use the faster of the two (PyTorch's OpenMP threads "
           "spin-wait, and on a CPU shared with other processes its 2-thread steps were erratic, up to "
           f"hundreds of times slower, while 1 thread was not). All sides: {repeats} timed repeats after one "
           "warm-up, median; every column's call takes its turn (one call of each, then again), so that their "
           "ratios see the same machine.",
           "The hand-written backward pass (`rnnlab.model.fused`): a forward scan keeps each step's gate activations; "
           "a backward scan then computes only the carry's gradient (one matmul by the transposed recurrent kernel "
           "per step), and the kernels' gradients are one matmul each over all steps after it, where XLA's matmul "
           "runs near the peak. `hand / autodiff` is its time over automatic differentiation of the same fused "
           "scan.",
           "Matmul floor: a forward scan of `x_t @ W_in + h @ W_h` at the step's shapes and a backward scan of "
           "`d @ W_h^T`, each keeping only its carry, then the two weight-gradient matmuls over all steps, with no "
           "element-wise work, no stored activations, no loss and no optimiser: the matmuls the step cannot "
           "avoid, at XLA's speed for these shapes. `floor/torch` is that time over PyTorch's whole step: where "
           "it is above the target, the target cannot be met with XLA's matmuls on this CPU, whatever the rest "
           "of the step costs; where it is below, the rest of the step (element-wise work, storing each step's "
           "activations for the backward pass, the loss and Adam) is what is left to cut. "
           + floor_note(rows, peak)]
    out += SEARCHED
    if quick:
        out.append("Quick mode: one tiny grid point, 2 steps, 2 repeats.")
    if missing_torch:
        out.append("PyTorch is not installed here, so only rnnlab's side is reported "
                   "(`pip install torch==2.13.0` installs the CPU build).")
    return out


def targets(rows: list[dict], peak: float) -> list[Target]:
    """Per cell: rnnlab / PyTorch at every grid point; the compiled call's overhead; the share of peak at H >= 256."""
    out = []
    for cell in CELLS:
        mine = [r for r in rows if r["cell"] == cell]
        ratios = [r["rnnlab/torch"] for r in mine if r["rnnlab/torch"] is not None]
        goal = f"<= {TARGET_RATIO[cell]} at every grid point"
        name = f"training step, {cell}: rnnlab / PyTorch" + (" (oneDNN's fused LSTM)" if cell == "lstm" else "")
        if not ratios:
            out.append(Target(name, goal, "PyTorch absent", None, "PyTorch is not installed"))
            continue
        worst = max((r for r in mine if r["rnnlab/torch"] is not None), key=lambda r: r["rnnlab/torch"])
        met = max(ratios) <= TARGET_RATIO[cell]
        why = "" if met else (
            f"worst point B={worst['batch']}, T={worst['T']}, H={worst['hidden']}: rnnlab {worst['rnnlab ms/step']:.1f}"
            f" ms against torch {worst['torch ms/step']:.1f} ms per step; rnnlab there runs at "
            f"{worst['rnnlab GFLOP/s']:.0f} GFLOP/s ({worst['share of peak']:.0%} of the {peak:.0f} GFLOP/s peak), "
            f"torch at {worst['torch GFLOP/s']:.0f}; the step's matmuls alone, at its shapes, take "
            f"{worst['matmul floor ms/step']:.1f} ms ({worst['floor/torch']:.2f} of torch's step), the rest of "
            f"rnnlab's step {worst['rnnlab ms/step'] - worst['matmul floor ms/step']:.1f} ms")
        out.append(Target(name, goal, " / ".join(f"{x:.2f}" for x in ratios), met, why))
    overheads = [r["call overhead"] for r in rows]
    worst = max(rows, key=lambda r: r["call overhead"])
    met = max(overheads) < OVERHEAD_TARGET
    out.append(Target("the app's compiled call over a minimal step", f"< {OVERHEAD_TARGET:.0%} at every point",
                      f"{min(overheads):+.1%} to {max(overheads):+.1%}", met,
                      "" if met else f"worst {worst['cell']} B={worst['batch']} T={worst['T']} H={worst['hidden']}: "
                                     f"{worst['rnnlab ms/step']:.2f} against {worst['minimal ms/step']:.2f} ms "
                                     "per step"))
    wide = [r for r in rows if r["hidden"] >= 256]
    if wide:
        shares = [r["share of peak"] for r in wide]
        met = min(shares) >= PEAK_SHARE_TARGET
        low = min(wide, key=lambda r: r["share of peak"])
        out.append(Target("share of the matmul peak at H >= 256", f">= {PEAK_SHARE_TARGET:.0%}",
                          " / ".join(f"{r['cell']} {r['share of peak']:.0%}" for r in wide), met,
                          "" if met else f"{low['cell']}: {low['rnnlab GFLOP/s']:.0f} of {peak:.0f} GFLOP/s; its "
                                         f"matmuls alone, at its shapes, run at {low['floor GFLOP/s']:.0f} GFLOP/s "
                                         f"({low['floor GFLOP/s'] / peak:.0%} of the peak)"))
    return out
