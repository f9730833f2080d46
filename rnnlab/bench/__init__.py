"""Benchmark suite: ``python -m rnnlab.bench [--quick] [--out PATH] [--only ROW [--splice]]``.

Rows: ``steps`` (training step against PyTorch, GFLOP/s against the matmul peak), ``compile`` (compile time
against T, scanned against a Python loop over time), ``probe`` (the one-pass gradient probe and the log-scaled
probe against a training step, and against one backward pass per t), ``sweep`` (K vmapped configurations against
one by one), ``app`` (press Train to first chart, cold and warm, with Streamlit's AppTest) and ``first_link`` (a
preset link's first chart on a server that has just started, for every preset). Every figure is a
median over repeated runs after a warm-up; every ratio divides two medians measured in the same process and run.

- :mod:`.steps`, :mod:`.compile`, :mod:`.probe`, :mod:`.sweep`, :mod:`.app_latency`, :mod:`.first_link`: rows 1
  to 6.
- :mod:`.timing`: medians over repeated runs, waiting for JAX's asynchronous results.
- :mod:`.machine`: the machine the benchmark ran on and its float32 matmul peak.
- :mod:`.report`: the rows' results as a console table and as Markdown.
- :mod:`.__main__`: the command above, which writes docs/benchmarks.md (``--only ROW --splice``: that row's
  section and targets put into it in place of theirs).
"""

from rnnlab.bench.report import RowResult, Target
from rnnlab.bench.timing import Timing, measure

ROWS = ("steps", "compile", "probe", "sweep", "app", "first_link")

__all__ = ["ROWS", "RowResult", "Target", "Timing", "measure"]
