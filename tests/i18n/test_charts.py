"""Explore's charts and their sentences in every language: the same numbers written each language's way, counted
words in their forms, every figure's words through the catalog (the pseudo-language), Chinese titles short."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import plotly.graph_objects as go
import pytest

from rnnlab.config import Config
from rnnlab.figures import ab, example_plots, example_words, plots, run_views
from rnnlab.i18n import NBSP, language, reload_catalogs, using
from rnnlab.model.cells import CELLS
from rnnlab.model.tasks import TASKS
from rnnlab.probing import example, logscale
from rnnlab.training.history import History
from tests.i18n.pseudo import _figure_texts, english_left

LANGS = ("en", "zh", "ru")
GRU = CELLS["gru"].gates


@pytest.fixture(autouse=True)
def fresh_catalogs():
    reload_catalogs()  # the .po files may have changed since another test loaded them
    yield


def history(seq_len: int = 4, moved: float = 1.0) -> History:
    out = History(("h",))
    out.steps.extend({"step": s, "loss": 1.0, "metric": 0.0, "grad_norm": 1.0, "h0_grad_norm": 0.1, "h0_grad_h": 0.1}
                     for s in range(1, 21))
    for step, scale in ((0, 0.0), (10, 0.5), (20, 1.0)):
        out.add_evaluation(step, {"loss": 1.0 - scale / 2, "metric": 0.0,
                                  "per_step_loss": np.linspace(2.0, 1.0, seq_len) * (1 + scale),
                                  "carry0": (np.array([moved * scale, -2 * moved * scale, 0.0], np.float32),)})
    return out


def look(steps: int = 12, step: int = 0, gated: bool = True, first: float = -30.0) -> example.Look:
    rng = np.random.default_rng(steps + step)
    view = TASKS["adding"].view(np.stack([rng.random(steps), np.zeros(steps)], axis=-1), np.array([1.0]))
    log10 = np.linspace(first, 0.0, steps + 1)
    grads = logscale.LogGrads(("h",), log10[None], np.full((1, steps + 1), ""), np.full((1, steps + 1), -1))
    gates = {"r": rng.random((steps, 3)), "z": np.linspace(0.0, 1.0, steps * 3).reshape(steps, 3)} if gated else {}
    return example.Look(step, view, rng.random(steps), None, {"h": rng.random(steps + 1) + 1}, grads, gates, 0.5)


def english_outside(text: str) -> list[str]:
    """:func:`english_left` of ``text`` whose messages may hold messages (⟦... ⟦after 20 steps⟧ ...⟧): the
    innermost first, until no bracket is left."""
    before = None
    while before != text:
        before, text = text, re.sub(r"⟦[^⟦⟧]*⟧", " ", text)
    return english_left(text)


def in_each(make) -> dict[str, str]:
    out = {}
    for lang in LANGS:
        with using(lang):
            out[lang] = make()
    return out


# ---- sentences with numbers, in every language ----------------------------------------------------------------
def test_the_ab_sentence_writes_each_number_the_readers_way_with_its_plural():
    a = ab.Side("GRU", 20, 0.32, 6e-6, True)
    b = ab.Side("RNN", 10, 1.024, 3.0, True, trained=13)
    said = in_each(lambda: ab.describe(a, b))
    assert "B's loss is 3.2 times more than A's." in said["en"]
    assert "B's initial carry moved 500,000 times more than A's." in said["en"]
    assert "after 10 steps (its latest evaluation; it has trained 13 steps" in said["en"]
    assert "the evaluation loss is 1.02 and its initial carry moved 3" in said["en"]
    assert "3.2 倍" in said["zh"] and "500,000 倍" in said["zh"] and "1.02" in said["zh"] and "6×10⁻⁶" in said["zh"]
    assert "训练 10 步后" in said["zh"] and "已训练 13 步" in said["zh"]
    assert "в 3,2 раза больше" in said["ru"] and f"в 500{NBSP}000 раз дальше" in said["ru"]
    assert "1,02" in said["ru"] and "6·10⁻⁶" in said["ru"] and "0,32" in said["ru"]
    assert "после 10 шагов" in said["ru"] and "пройдено 13 шагов" in said["ru"]
    assert ". **B** (RNN)" in said["en"] and "。**B**（RNN）" in said["zh"]  # no space between Chinese sentences


@pytest.mark.parametrize("ratio,ru", [(2.0, "в 2 раза"), (5.0, "в 5 раз"), (21.0, "в 21 раз"), (1.5, "в 1,5 раза"),
                                      (230_000.0, f"в 230{NBSP}000 раз")])
def test_the_ratio_takes_the_form_its_number_needs(ratio, ru):
    with using("ru"):
        assert ru in ab.compare("loss", ratio, 1.0) and ru in ab.compare("loss", 1.0, ratio)
        assert "меньше" in ab.compare("loss", 1.0, ratio)
    with using("zh"):  # the larger one is the subject: "A's is {ratio} times B's", never "B's is 1/{ratio} of A's"
        said = ab.compare("moved", 1.0, ratio)
        assert f"是 B 的 {ab.written_ratio(ratio)} 倍" in said and "1/" not in said


def test_one_step_is_one_step():
    a = ab.Side("GRU", 0, 0.5, 0.0, False, trained=1)
    said = in_each(lambda: ab.describe_side("A", a))
    assert "after 0 steps (its latest evaluation; it has trained 1 step, and" in said["en"]
    assert "is not trained (it does not move)." in said["en"]
    assert "после 0 шагов" in said["ru"] and "пройден 1 шаг," in said["ru"]
    assert "训练 0 步后" in said["zh"] and "已训练 1 步" in said["zh"]
    one = ab.Side("GRU", 1, 0.5, 0.1, True)
    assert "после 1 шага" in in_each(lambda: ab.describe_side("A", one))["ru"]
    assert "after 1 step the" in in_each(lambda: ab.describe_side("A", one))["en"]


def test_the_progress_line_and_the_finished_note_count_their_steps():
    from ui.explore_charts import Places, draw_progress

    def place():
        return SimpleNamespace(progress=lambda f, text: place.last.append(text),
                               success=lambda text, icon: place.last.append(text), error=lambda *a, **k: None,
                               empty=lambda: None)

    run = SimpleNamespace(step=1, config=SimpleNamespace(steps=1200), history=SimpleNamespace(stop_reason=""),
                          done=True)
    for lang, bar, done in (("en", "step 1 / 1200", "Finished 1 step."), ("zh", "第 1 / 1200 步", "已完成 1 步。"),
                            ("ru", "шаг 1 из 1200", "Готово: 1 шаг.")):
        place.last = []
        with using(lang):
            draw_progress(Places(place(), place(), place(), place(), place()), run)
        assert place.last == [bar, done], (lang, place.last)


def test_the_first_steps_gap_and_the_twin_in_every_language():
    from rnnlab.figures.run_views import describe_twin

    gap = {"steps": 3, "run": 0.5, "zero": 1.6, "ratio": 3.2}
    said = in_each(lambda: run_views.describe_gap(gap))
    assert said["en"] == ("**Over the first 3 time steps** the loss is 0.5 with this run's initial carry and 1.6 with "
                          "a fixed zero carry: the zero carry's is 3.2 times as large.")
    assert "**За первые 3 шага**" in said["ru"] and "0,5" in said["ru"] and "в 3,2 раза больше" in said["ru"]
    assert "**在前 3 个时间步内**" in said["zh"] and "3.2 倍" in said["zh"]
    smaller = in_each(lambda: run_views.describe_gap({**gap, "ratio": 0.25}))
    assert "4 times smaller here" in smaller["en"] and "в 4 раза меньше" in smaller["ru"]
    twin = in_each(lambda: describe_twin(0.1, 0.5, 1.6))
    assert twin["en"] == ("From fresh N(0, 0.1) carries, this run's loss is 0.5 and the zero-trained twin's 1.6: "
                          "3.2 times as large.")
    assert "N(0; 0,1)" in twin["ru"] and "1,6" in twin["ru"] and "в 3,2 раза больше" in twin["ru"]
    assert "N(0, 0.1)" in twin["zh"] and "3.2 倍" in twin["zh"]


def test_the_movement_and_the_examples_numbers_in_every_language():
    moved = history(moved=1e-6)
    said = in_each(lambda: run_views.carry_view(moved).movement)
    assert said["en"].startswith("**By step 20:** the hidden state h moved 2.2e-06 in all (no unit by more than "
                                 "2e-06;")
    assert "2,2·10⁻⁶" in said["ru"] and "2·10⁻⁶" in said["ru"] and "**К шагу 20:**" in said["ru"]
    assert "2.2×10⁻⁶" in said["zh"] and "**到第 20 步**：" in said["zh"]
    now = look(step=7, first=-40.0)
    summary = in_each(lambda: example_words.summary(now, replace(now, loss=2.25), 2))
    assert summary["en"].startswith("**Example 3:** its loss is 0.5 at training step 7 (2.25 untrained). What "
                                    "reaches the initial carry: ||dL/dh_0|| = 1.000e-40. That is below float32's "
                                    "smallest number (about 1.2e-38)")
    assert "2,25" in summary["ru"] and "1,000·10⁻⁴⁰" in summary["ru"] and "1,2·10⁻³⁸" in summary["ru"]
    assert "2.25" in summary["zh"] and "1.000×10⁻⁴⁰" in summary["zh"] and "1.2×10⁻³⁸" in summary["zh"]
    keeper = in_each(lambda: example_words.keeper_summary(now, GRU))
    z = now.gates["z"]
    assert f"averages {z.mean():.2f} over this example; {np.mean(z > 0.9):.0%} of its values" in keeper["en"]
    assert f"{z.mean():.2f}".replace(".", ",") in keeper["ru"] and "0,9" in keeper["ru"]
    assert f"{z.mean():.2f}" in keeper["zh"] and f"{np.mean(z > 0.9):.0%}" in keeper["zh"]


# ---- every figure's words through the catalog ------------------------------------------------------------------
def texts(figure: go.Figure) -> list[str]:
    """Every title, axis title, annotation, slider prefix, colour bar, trace name (shown or hovered) and hover."""
    spec = figure.to_plotly_json()
    spec = {"data": [dict(t) for t in spec["data"]], "layout": dict(spec["layout"])}
    found = list(_figure_texts(spec))
    found += [str(t["name"]) for t in spec["data"] if t.get("name")]
    found += [str(b["label"]) for menu in spec["layout"].get("updatemenus", []) for b in menu["buttons"]]
    return found


def figures(gates=GRU) -> dict[str, go.Figure]:
    """Every figure of this area, built in the current language."""
    a, b = Config(), Config(cell="simple", seq_len=200, lr=0.05)
    a_label, b_label = ab.labels(a, b)
    looks = [look(step=0), look(step=10)]
    run = SimpleNamespace(history=history(), program=SimpleNamespace(task=TASKS["adding"]), pristine=False,
                          config=Config(task="adding", seq_len=4, carry_mode="learnable"))
    pinned = SimpleNamespace(config=a, history=history())
    per_step = run_views.per_step_view(run, 2, pinned, SimpleNamespace(history=history()))
    long_looks = [look(steps=1300, step=0), look(steps=1300, step=10)]
    return {"ab loss": ab.loss_figure(history(), history(), a_label, b_label, 0.5),
            "ab moved": ab.moved_figure(history(), history(moved=0.0), a_label, b_label),
            "unrolled": example_plots.unrolled_figure(looks, 3, False, gates),
            "unrolled log": example_plots.unrolled_figure(long_looks, 3, True, gates),
            "keeper": example_plots.keeper_heatmap(looks[-1], gates, 3),
            "keeper thinned": example_plots.keeper_heatmap(long_looks[-1], gates, 3),
            "per step": per_step.figure, "first steps": per_step.first}


# Words these figures get from rnnlab.figures.plots and true_size (the per-step chart's axes and baseline, the
# floor's line), which another area translates: skipped here until they come through its catalog.
THEIRS = {"loss (log scale)", "memoryless baseline (scored step)", "time step t (step t reads input t)",
          "float32's floor (1.2e-38)"}


def test_no_english_word_is_left_in_the_charts(monkeypatch):
    monkeypatch.setenv("RNNLAB_PSEUDO_LANGUAGE", "1")
    with using("qps"):
        built = figures()
        left = {(name, text): english_outside(text) for name, figure in built.items() for text in texts(figure)
                if text not in THEIRS}
    assert {k: v for k, v in left.items() if v} == {}
    assert len(left) > 40  # the sweep saw the figures' words


def test_no_english_word_is_left_in_the_sentences(monkeypatch):
    from rnnlab.figures.run_views import describe_twin

    monkeypatch.setenv("RNNLAB_PSEUDO_LANGUAGE", "1")
    with using("qps"):
        now = look(step=7, first=-40.0)
        sentences = [ab.describe(ab.Side("GRU", 20, 0.32, 6e-6, True), ab.Side("RNN", 10, 1.0, 3.0, True, 13)),
                     ab.describe(ab.Side("GRU", 20, 0.32, 0.0, False), ab.Side("RNN", 20, 0.32, 0.0, False)),
                     run_views.describe_gap({"steps": 3, "run": 0.5, "zero": 1.6, "ratio": 0.2}),
                     run_views.carry_view(history()).movement, example_words.summary(now, now, 0),
                     example_words.keeper_summary(now, GRU), describe_twin(0.1, 2.0, 1.0)]
    assert {s: english_outside(s) for s in sentences if english_outside(s)} == {}


def test_a_shared_view_is_kept_per_language():
    from rnnlab.figures.shared import SharedViews, view_key

    views, run = SharedViews(), SimpleNamespace(pristine=True, config=Config(), step=10)
    built = {lang: None for lang in LANGS}
    for lang in LANGS:
        with using(lang):
            built[lang] = views.get(view_key(run, "carry"), lambda: run_views.carry_view(history()).movement)
            assert views.get(view_key(run, "carry"), lambda: pytest.fail("built twice")) == built[lang]
    assert built["en"].startswith("**By step 20:**") and built["ru"].startswith("**К шагу 20:**")
    assert language() == "en"


# ---- Chinese titles fit a phone -------------------------------------------------------------------------------
def width(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def test_chinese_titles_fit_on_a_phone_without_wrapping():
    gates = replace(GRU, names={"r": "重置门 r", "z": "更新门 z"})  # as the settings' catalog names them
    with using("zh"):
        built = figures(gates)
    for name, figure in built.items():
        title = figure.layout.title.text
        assert width(title.replace("<br>", "")) <= plots.TITLE_LINE, (name, title, width(title))


# ---- the page: a view shared between readers is in each reader's language ------------------------------------
def test_explore_shows_each_reader_its_own_language_of_the_shared_views(monkeypatch):
    """An English reader first, then a pseudo-language reader of the same pristine run: the shared figures and
    sentences are built again in the second language, never served from the first one's."""
    import json

    from tests.app.conftest import SMALL, open_page
    from tests.i18n.pseudo import open_pseudo, shown_texts

    open_page("explore", run="1", **SMALL)
    at = open_pseudo("explore", monkeypatch, run="1", **SMALL)
    mine = [str(s.value) for s in at.subheader if str(s.value).lstrip("⟦")[:2] in ("1.", "2.", "3.", "4.")]
    assert len(mine) == 4 and all(english_outside(s) == [] for s in mine), mine  # the sections of this area
    specs = [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]
    titles = [spec["layout"]["title"]["text"] for spec in specs]
    ours = [spec for spec, title in zip(specs, titles) if title.startswith("⟦") and title.endswith("⟧")]
    assert len(ours) >= 3, titles  # the per-step loss, the unrolled example, the keeper gate
    left = {text: english_outside(text) for spec in ours for text in _figure_texts(spec) if text not in THEIRS}
    assert {k: v for k, v in left.items() if v} == {}
    said = [text for where, text in shown_texts(at) if where == "markdown" and text.startswith(("⟦**By", "⟦**Ex"))]
    assert len(said) == 2 and all(english_outside(s) == [] for s in said), said
