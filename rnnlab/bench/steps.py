"""Row 1: the training step of rnnlab's compiled program against PyTorch, and achieved GFLOP/s."""

from __future__ import annotations

import time

import numpy as np

from rnnlab.bench.machine import cores, matmul_peak
from rnnlab.bench.report import RowResult, Target
from rnnlab.bench.timing import Timing, measure
from rnnlab.config import Config
from rnnlab.program import get_program, hyper_args

GRID = ((64, 100, 128), (32, 1000, 64), (256, 100, 256))  # (batch, T, hidden)
QUICK_GRID = ((16, 20, 32),)
CELLS = ("gru", "lstm", "simple")
GATES = {"gru": 3, "lstm": 4, "simple": 1}  # weight blocks of hidden size per step
INPUTS = 2  # the adding problem's input channels
TARGET_RATIO = 0.7
FLOP_FORMULA = "6 · T · B · g · H · (I + H)"


def matmul_flops(cell: str, batch: int, T: int, hidden: int, inputs: int = INPUTS) -> float:
    """Matmul FLOPs of one training step (forward + backward): ``6 T B g H (I + H)``.

    Forward, per time step: ``2 B I gH`` (input projection) + ``2 B H gH`` (recurrent); backward: twice the
    forward (gradients with respect to the activations and the weights). ``g`` is 3 (GRU), 4 (LSTM) or 1
    (simple). Element-wise work and the 1-unit readout are left out.
    """
    return 6.0 * T * batch * GATES[cell] * hidden * (inputs + hidden)


def rnnlab_step(cell: str, batch: int, T: int, hidden: int, chunk: int, repeats: int) -> tuple[Timing, float]:
    """(seconds per step, first call in seconds incl. compilation): a ``train_chunk`` of ``chunk`` steps / chunk.

    The chunk is the app's compiled call: batches generated on the device, Adam with global-norm clipping, the
    per-step records and one evaluation forward pass on the evaluation batch at the end of the chunk.
    """
    config = Config(task="adding", cell=cell, batch=batch, seq_len=T, features=hidden, chunk=chunk,
                    steps=10**5 // 2)
    program = get_program(config)
    lr, clip, scale = hyper_args(config)
    box = {"state": program.init(np.int32(0), scale, lr, clip)}
    n = np.int32(chunk)

    def call():
        box["state"], records, evaluation = program.train_chunk(box["state"], lr, clip, scale, n)
        return box["state"]["params"], records, evaluation

    start = time.perf_counter()
    measure(call, repeats=0, warmup=1)
    first = time.perf_counter() - start
    return measure(call, repeats, warmup=0).per(chunk), first


def torch_step(cell: str, batch: int, T: int, hidden: int, steps: int, repeats: int,
               threads: int | None = None) -> Timing | None:
    """PyTorch's ``nn.GRU``/``nn.LSTM``/``nn.RNN`` (tanh) + ``nn.Linear`` on the last step, Adam, clipping.

    Each step draws a fresh adding-problem batch with torch ops (as rnnlab draws one on the device), runs
    forward, MSE on the last step, backward, ``clip_grad_norm_(1.0)`` and ``Adam(lr=1e-2).step()`` with
    ``threads`` intra-op threads (default: the core count). None when torch is not installed.
    """
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(threads or cores())
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
        for _ in range(steps):
            step()

    return measure(call, repeats, warmup=1).per(steps)


def run(quick: bool = False) -> RowResult:
    """Every cell at every grid point: rnnlab and PyTorch ms/step, their ratio, GFLOP/s of each, the peak."""
    start = time.perf_counter()
    grid = QUICK_GRID if quick else GRID
    repeats = 2 if quick else 3
    peak_n = 256 if quick else 2048
    peak, peak_t = matmul_peak(peak_n, repeats=3 if quick else 5)
    rows, missing_torch = [], False
    for cell in CELLS:
        for batch, T, hidden in grid:
            chunk = 2 if quick else (4 if T >= 1000 else 8)
            torch_steps = 2 if quick else (2 if batch * hidden >= 256 * 256 or T >= 1000 else 3)
            ours, first = rnnlab_step(cell, batch, T, hidden, chunk, repeats)
            by_threads = {n: torch_step(cell, batch, T, hidden, torch_steps, repeats, n)
                          for n in dict.fromkeys((cores(), 1))}
            missing_torch |= None in by_threads.values()
            theirs = None if missing_torch else min(by_threads.values(), key=lambda t: t.median)
            flops = matmul_flops(cell, batch, T, hidden)
            row = {"cell": cell, "batch": batch, "T": T, "hidden": hidden,
                   "rnnlab ms/step": ours.median * 1e3,
                   **{f"torch ms/step, {n} thr": t.median * 1e3 if t else None for n, t in by_threads.items()},
                   "torch ms/step": None, "rnnlab/torch": None,
                   "rnnlab GFLOP/s": flops / ours.median / 1e9, "torch GFLOP/s": None,
                   "peak GFLOP/s": peak, "rnnlab first call s": first}
            if theirs is not None:
                row.update({"torch ms/step": theirs.median * 1e3, "rnnlab/torch": ours.median / theirs.median,
                            "torch GFLOP/s": flops / theirs.median / 1e9})
            rows.append(row)

    ratios = [r["rnnlab/torch"] for r in rows if r["rnnlab/torch"] is not None]
    notes = [f"GFLOP/s = matmul FLOPs per step / median seconds per step, FLOPs = {FLOP_FORMULA} with g = 3 "
             "(GRU), 4 (LSTM), 1 (simple), I = 2 inputs, H hidden units, B batch, T steps: forward "
             "2·B·(I+H)·gH per time step, backward twice that; element-wise work and the readout are left out.",
             f"Peak: a jitted float32 {peak_n}² matmul, median "
             f"{peak_t.median * 1e3:.2f} ms over {len(peak_t.samples)} runs after 2 warm-ups.",
             "rnnlab ms/step: one compiled `train_chunk` of 8 steps (4 at T = 1000) divided by its steps; it "
             "includes drawing each batch on the device, the per-step records and one evaluation forward pass "
             "per chunk. `rnnlab first call s` is the first chunk call, compilation included.",
             "PyTorch: 3 steps per timed repeat (2 at T = 1000 or batch · hidden >= 256²; capped for time), "
             "a fresh batch drawn with torch ops each step, timed with torch.set_num_threads(cores) and with "
             "1 thread; `torch ms/step` and the ratio use the faster of the two (PyTorch's OpenMP threads "
             "spin-wait, and on a CPU shared with other processes its 2-thread steps were erratic, up to "
             f"hundreds of times slower, while 1 thread was not). Both sides: {repeats} timed repeats after one "
             "warm-up, median."]
    notes.append("Tuning tried while writing this suite (measured separately, not kept): `nn.RNN(unroll=2/4/8)` "
                 "made the LSTM step slower (at B=64, T=100, H=128: 28.6, 29.4, 47.8, 103 ms for unroll 1, 2, 4, 8; "
                 "at B=32, T=1000, H=64: 92, 126, 224, 325 ms); `XLA_FLAGS=--xla_cpu_use_thunk_runtime=false` was "
                 "within noise; Flax's fused `OptimizedLSTMCell` was about 15-20% faster than `LSTMCell` at "
                 "T = 1000 (the app teaches `LSTMCell`). What is left at small sizes is the per-time-step cost of "
                 "the scanned cell's many small ops (8 separate gate matmuls per LSTM step), not FLOPs.")
    if quick:
        notes.append("Quick mode: one tiny grid point, 2 steps, 2 repeats.")
    if missing_torch:
        notes.append("PyTorch is not installed here, so only rnnlab's side is reported "
                     "(`pip install torch==2.13.0` installs the CPU build).")
    targets = []
    if ratios:
        worst = max(rows, key=lambda r: r["rnnlab/torch"] if r["rnnlab/torch"] is not None else -1)
        met = max(ratios) <= TARGET_RATIO
        why = "" if met else (f"worst point {worst['cell']} (B={worst['batch']}, T={worst['T']}, "
                              f"H={worst['hidden']}): rnnlab {worst['rnnlab ms/step']:.1f} ms against torch "
                              f"{worst['torch ms/step']:.1f} ms per step")
        targets.append(Target("training step, rnnlab / PyTorch", f"<= {TARGET_RATIO} at every grid point",
                              f"{min(ratios):.2f} to {max(ratios):.2f} (worst {worst['cell']} "
                              f"B={worst['batch']} T={worst['T']} H={worst['hidden']})", met, why))
    else:
        targets.append(Target("training step, rnnlab / PyTorch", f"<= {TARGET_RATIO} at every grid point",
                              "PyTorch absent", None, "PyTorch is not installed"))
    thread_columns = [f"torch ms/step, {n} thr" for n in dict.fromkeys((cores(), 1))]
    columns = ["cell", "batch", "T", "hidden", "rnnlab ms/step", *thread_columns, "torch ms/step", "rnnlab/torch",
               "rnnlab GFLOP/s", "torch GFLOP/s", "peak GFLOP/s", "rnnlab first call s"]
    method = ("Training-step time on the adding problem for GRU, LSTM and simple cells over (batch, T, hidden), "
              "rnnlab's compiled training chunk against PyTorch's `nn.GRU` / `nn.LSTM` / `nn.RNN` (tanh) with a "
              "`Linear` readout on the last step, Adam (lr 1e-2) after global-norm clipping at 1.0, the same "
              "sizes, in the same process.")
    return RowResult("steps", "1. Training step: rnnlab against PyTorch", method, columns, rows, notes, targets,
                     time.perf_counter() - start, extra={"peak_gflops": peak, "ratios": ratios})
