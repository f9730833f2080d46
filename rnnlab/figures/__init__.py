"""Figures: pure functions from the tables :mod:`rnnlab.probing` computes to Plotly figures and sentences.

- :mod:`.plots`: the charts of a run, of the gradient probes and of a sweep.
- :mod:`.example_plots`: one example unrolled in time.
- :mod:`.ab`: a pinned run (A) against the current one (B), on shared axes and in numbers.
"""

from rnnlab.figures import ab, example_plots, plots

__all__ = ["ab", "example_plots", "plots"]
