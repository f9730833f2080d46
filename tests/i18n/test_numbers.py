"""Numbers on every axis, hover and table in the reader's convention, read off the figures' own text: a decimal comma
in Russian (Plotly's separators for the numbers it writes, ours for the tick labels, hovers and quoted sizes written
in Python), powers of ten as ×10ⁿ in Chinese, never Python's 1e-07; the same in the tables' cells."""

from __future__ import annotations

import re
from collections.abc import Iterator

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from rnnlab.figures import log10_scale, plots, true_size
from rnnlab.i18n import using
from rnnlab.probing import logscale, probes
from tests.i18n.test_charts import figures as explore_figures

DECIMAL_POINT = re.compile(r"(?<![\w.])\d+\.\d")  # 0.5, 1.25 (not a version like flax 0.6 inside a word)
E_NOTATION = re.compile(r"\d[eE][-+]?\d")  # 1e-07, 4.700e-54


def grads(log10: list[float]) -> pd.DataFrame:
    n = len(log10)
    return pd.DataFrame({"step": 0, "t": range(n), "leaf": "h", "grad_norm": logscale.to_float(log10),
                         "log10": log10, "zero_cause": "", "zero_at": -1})


def gradient_figures() -> dict[str, go.Figure]:
    """Gradient flow's and Compare's true-size charts, narrow (ticks as plain numbers) and wide (powers of ten)."""
    sweep = pd.DataFrame({"cell": "lstm", "T": [50, 100, 500], "h0_grad_norm": 0.0, "log10": [-0.2, -0.5, -0.9]})
    summary = pd.DataFrame({"label": ["GRU", "GRU", "Simple RNN"], "seed": [0, 1, 0], "h0_log10": [-0.3, -0.4, -1.0],
                            "h0_zero_cause": "", "h0_zero_at": -1})
    return {"through time, narrow": true_size.grad_through_time_figure(grads([-0.1, -0.3, -0.6, -0.9])),
            "through time, wide": true_size.grad_through_time_figure(grads([-0.5, -20.0, -45.0, -60.0])),
            "decay, narrow": true_size.decay_figure(sweep, probes.fit_decay(sweep), {"lstm": "LSTM"}),
            "bars, narrow": true_size.log10_bar_figure(summary, "t", "y")}


def loss_figures() -> dict[str, go.Figure]:
    """Charts of values on Plotly's log axis whose ticks rnnlab writes (a narrow range: 0.2, 0.5, 1)."""
    steps = pd.DataFrame({"step": range(1, 11), "loss": np.linspace(0.9, 0.25, 10)})
    evals = pd.DataFrame({"step": [0, 10], "eval_loss": [0.95, 0.3]})
    return {"loss": plots.loss_figure(steps, evals, 1 / 6, "baseline")}


def every_figure() -> dict[str, go.Figure]:
    return {**explore_figures(), **gradient_figures(), **loss_figures()}


def written_numbers(figure: go.Figure) -> Iterator[tuple[str, str]]:
    """(where, text) of everything Python wrote into ``figure`` that a reader sees: tick labels, quoted sizes, hovers,
    names, titles and annotations."""
    spec = figure.to_plotly_json()
    layout = spec["layout"]
    for key, axis in layout.items():
        if key.startswith(("xaxis", "yaxis")) and isinstance(axis, dict):
            yield from ((f"{key} tick", str(text)) for text in axis.get("ticktext") or [])
            title = axis.get("title")
            if isinstance(title, dict) and title.get("text"):
                yield f"{key} title", str(title["text"])
    title = layout.get("title")
    if isinstance(title, dict) and title.get("text"):
        yield "title", str(title["text"])
    yield from (("annotation", str(a.get("text", ""))) for a in layout.get("annotations") or [])
    for trace in spec["data"]:
        for key in ("name", "hovertemplate"):
            if isinstance(trace.get(key), str):
                yield key, trace[key]
        for key in ("text", "hovertext", "customdata"):
            values = trace.get(key)
            if isinstance(values, str):
                yield key, values
            elif values is not None and not isinstance(values, dict):
                yield from ((key, str(v)) for v in np.ravel(np.asarray(values, dtype=object)) if isinstance(v, str))


def test_every_number_a_figure_writes_follows_the_readers_convention():
    for lang in ("ru", "zh"):
        with using(lang):
            built = every_figure()
        bad = [(name, where, text) for name, figure in built.items() for where, text in written_numbers(figure)
               if (lang == "ru" and DECIMAL_POINT.search(text.replace("float32", "").replace("float64", "")))
               or E_NOTATION.search(text)]
        assert bad == [], lang
        for name, figure in built.items():  # the numbers Plotly writes itself: its separators, its powers of ten
            assert figure.layout.separators == (", " if lang == "ru" else None), name
            axes = [v for k, v in figure.to_plotly_json()["layout"].items() if k.startswith(("xaxis", "yaxis"))]
            assert all(a.get("exponentformat") == "power" for a in axes if a.get("visible", True)
                       and a.get("showticklabels", True) and not a.get("tickvals")), name


def test_a_narrow_log_axis_labels_its_ticks_the_readers_way():
    ticks = {}
    for lang in ("en", "ru", "zh"):
        with using(lang):
            ticks[lang] = [list(figure.layout.yaxis.ticktext) for figure in
                           (loss_figures()["loss"], gradient_figures()["through time, narrow"])]
    assert ticks["en"][0] and all("." in t for t in ticks["en"][0][:1]) and ticks["en"][1][0] == "0.1"
    assert ticks["ru"] == [[t.replace(".", ",") for t in each] for each in ticks["en"]]  # log axes too
    assert ticks["zh"] == ticks["en"]


def test_a_sizes_hover_and_quoted_text_use_the_readers_decimal_mark_and_powers_of_ten():
    table = grads([-0.30103, -53.3279])
    said = {}
    for lang in ("en", "ru", "zh"):
        with using(lang):
            said[lang] = list(true_size.grad_through_time_figure(table).data[0].customdata)
    assert said["en"] == ["5.000e-01", "4.700e-54"]
    assert said["ru"] == ["5,000·10⁻¹", "4,700·10⁻⁵⁴"] and said["zh"] == ["5.000×10⁻¹", "4.700×10⁻⁵⁴"]
    with using("ru"):  # a range too narrow for a power of ten inside: its two ends, written the reader's way
        values, texts = log10_scale.log10_ticks(-40.31, -40.12)
    assert texts == ["4·10⁻⁴¹", "8·10⁻⁴¹"] or all("," in t or "·10" in t for t in texts)


def test_a_tables_numbers_are_written_the_readers_way_and_stay_numbers():
    from ui.charts import shown_number

    table = pd.DataFrame({"loss": [0.1234, 2.5e-7, float("nan")]})
    shown = {}
    for lang in ("en", "ru", "zh"):
        with using(lang):
            shown[lang] = [shown_number(v, ".3g") for v in table["loss"]]
            shown[lang].append(shown_number(np.float32(0.125), ".2%"))
    assert shown["en"] == ["0.123", "2.5e-07", "", "12.50%"]
    assert shown["ru"] == ["0,123", "2,5·10⁻⁷", "", "12,50\u00a0%"]
    assert shown["zh"] == ["0.123", "2.5×10⁻⁷", "", "12.50%"]
    assert table["loss"].dtype == float  # the table keeps numbers: it sorts as numbers


def test_a_list_of_numbers_is_marked_the_readers_way_and_can_wrap():
    """The API page's first values sit in a narrow table cell: every language leaves a place to break the line."""
    from rnnlab.i18n import join_numbers, using

    values = [0.5, -1.25, 3.0]
    shown = {}
    for lang in ("en", "ru", "zh"):
        with using(lang):
            shown[lang] = join_numbers(values)
    assert shown == {"en": "0.5, -1.25, 3", "ru": "0,5; \u22121,25; 3", "zh": "0.5，\u200b\u22121.25，\u200b3"}


# ---- one place for each language's typography: ticks, ranges, brackets ----------------------------------------
@pytest.mark.parametrize(("value", "en", "zh", "ru"), [
    (2e-9, "2×10⁻⁹", "2×10⁻⁹", "2·10⁻⁹"), (1e-8, "1×10⁻⁸", "1×10⁻⁸", "1·10⁻⁸"),
    (-3e7, "\u22123×10⁷", "\u22123×10⁷", "\u22123·10⁷"),
    (0.25, "0.25", "0.25", "0,25"), (1500.0, "1,500", "1,500", "1\u00a0500"), (0.0, "0", "0", "0")])
def test_a_ticks_label_has_one_normalised_power_and_the_languages_marks(value, en, zh, ru):
    from rnnlab.i18n.typography import tick_text

    assert [tick_text(value, lang) for lang in ("en", "zh", "ru")] == [en, zh, ru]


def test_an_axis_of_tiny_values_gets_ticks_written_by_the_app_not_plotlys_shared_power():
    from rnnlab.figures.plots import power_ticks, style_figure

    assert power_ticks([0.0, 0.5, 1.0]) is None and power_ticks([1.0, 3000.0]) is None  # Plotly's own plain ticks
    ticks = power_ticks([0.0, 3e-9, 1e-8])
    assert ticks == [0.0, 2e-9, 4e-9, 6e-9, 8e-9, 1e-8]
    with using("ru"):
        figure = style_figure(go.Figure(go.Scatter(x=[0, 10, 20], y=[0.0, 3e-9, 1e-8])), "t", "x", "y")
    assert figure.layout.yaxis.ticktext == ("0", "2·10⁻⁹", "4·10⁻⁹", "6·10⁻⁹", "8·10⁻⁹", "1·10⁻⁸")
    assert figure.layout.xaxis.tickvals is None  # 0 to 20: Plotly writes it


def test_ranges_brackets_colons_and_quotes_as_each_language_writes_them():
    from rnnlab.i18n import labelled, number_range, parenthesized, quoted

    said = {}
    for lang in ("en", "zh", "ru"):
        with using(lang):
            said[lang] = (number_range("0.7.0", "0.7.4"), parenthesized("a", "b"), labelled("A", "GRU"), quoted("x"))
    assert said["en"] == ("0.7.0-0.7.4", "a (b)", "A: GRU", "“x”")
    assert said["zh"] == ("0.7.0–0.7.4", "a（b）", "A：GRU", "“x”")
    assert said["ru"] == ("0.7.0–0.7.4", "a (b)", "A: GRU", "«x»")
