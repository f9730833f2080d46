"""Figures: pure functions from the tables :mod:`rnnlab.probing` computes to Plotly figures and sentences.

- :mod:`.plots`: the charts of a run and of a sweep's losses, and the style every chart shares.
- :mod:`.example_plots`: one example unrolled in time.
- :mod:`.example_words`: that example in words (its gradient at each step, what reaches the initial carry).
- :mod:`.ab`: a pinned run (A) against the current one (B), on shared axes and in numbers.
- :mod:`.run_views`: Explore's sections of a run at one step as values (figures and sentences).
- :mod:`.gradient_views`: the Gradient flow page's probes and decay sweep as values (figures, table, sentences).
- :mod:`.compare_views`: the Compare page's results as values (curves, bars, table).
- :mod:`.shared`: views of a pristine run or a sweep built once for every session that shows it.
- :mod:`.true_size`: every chart of a true size, drawn from its log10 where float64 cannot hold it: the gradient
  through time, its decay against T, connectivity, a sweep's bars; floors and exact zeros.
- :mod:`.size_words`: true sizes in words: why an exact 0 is 0 (the one table of its causes), decay, floors.
- :mod:`.log10_scale`: the log10 axis of the true-size charts (ticks and ranges).
- :mod:`.answer_views`: a class's answers as a chart (a bar per round, the answer marked once revealed).
- :mod:`.compare_words`: the Compare page's words (a sweep's labels, verdicts, progress and plan) in the reader's
  language.
"""

from rnnlab.figures import ab, example_plots, plots, run_views, shared, size_words, true_size

__all__ = ["ab", "example_plots", "plots", "run_views", "shared", "size_words", "true_size"]
