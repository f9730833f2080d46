"""The gradients area in three languages: its sentences with numbers in en, zh and ru (the same number written each
language's way), Russian plural forms, chart texts, title wrapping by width, and a pseudo-language sweep of the
Gradient flow page."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from rnnlab import true_sizes
from rnnlab.figures import log10_scale, plots, size_words, true_size
from rnnlab.i18n import PSEUDO, Msg, reload_catalogs, using
from rnnlab.probing import logscale, probes
from rnnlab.sharing.urlstate import parse_lengths
from rnnlab.text import escape_markdown
from tests.i18n import pseudo
from tests.i18n.pseudo import open_pseudo, shown_texts

SMALL = {"seq_len": "20", "batch": "16", "features": "16", "steps": "50", "chunk": "10"}


@pytest.fixture(autouse=True, scope="module")
def _fresh_catalogs():
    reload_catalogs()
    yield


def grads_table(log10: list[float], leaf: str = "h", causes: list[str] | None = None,
                at: list[int] | None = None, step: int = 0) -> pd.DataFrame:
    n = len(log10)
    return pd.DataFrame({"step": step, "t": range(n), "leaf": leaf, "grad_norm": logscale.to_float(log10),
                         "log10": log10, "zero_cause": causes or [""] * n, "zero_at": at or [-1] * n})


def in_each(fn):
    """``fn()`` rendered in en, zh and ru."""
    out = {}
    for lang in ("en", "zh", "ru"):
        with using(lang):
            out[lang] = fn()
    return out


# ---- numbers written each language's way -----------------------------------------------------------------------
def test_a_fit_gives_its_factor_and_halving_in_each_language():
    said = in_each(lambda: probes.describe_fit(0.87, 4.98))
    assert said["en"] == "×0.87 per step: the gradient halves every 4.98 steps"
    assert "0.87" in said["zh"] and "4.98" in said["zh"] and "减半" in said["zh"]
    assert "×0,87 за шаг" in said["ru"] and "4,98 шага" in said["ru"]
    halving = in_each(lambda: probes.describe_halving(2.9))
    assert halving["en"] == "the gradient halves every 2.9 steps"
    assert "2.9" in halving["zh"] and "2,9 шага" in halving["ru"]


def test_the_decay_back_says_its_factor_per_step_and_where_it_crosses_float32s_floor():
    T, slope = 1000, -0.06
    grads = grads_table([slope * (T - t) - 0.3 for t in range(T + 1)], step=300)
    crossing = max(t for t in range(T + 1) if slope * (T - t) - 0.3 < true_sizes.F32_LOG10_FLOOR)
    said = in_each(lambda: size_words.describe_decay_back(grads)[0])
    assert said["en"].startswith("After 300 training steps, h: ×0.871 per step back (the gradient halves every "
                                 "5.02 steps); below float32's smallest normal number at t = ")
    assert f"{T - crossing} steps before the last, so a float32 backward pass gives 0 there" in said["en"]
    assert "×0.871" in said["zh"] and "5.02" in said["zh"] and f"{T - crossing}" in said["zh"]
    assert f"t = {crossing}（最后一步之前 {T - crossing} 步）" in said["zh"]
    assert "在这一步及更早的各步都给出 0" in said["zh"]  # at t and every step before
    assert "×0,871 за каждый шаг назад" in said["ru"] and "каждые 5,02 шага" in said["ru"]
    before = {"1": "шаг", "2": "шага", "3": "шага", "4": "шага"}.get(str(T - crossing)[-1], "шагов")
    if str(T - crossing)[-2:-1] == "1":
        before = "шагов"
    assert f"на шаге t = {crossing} (за {T - crossing} {before} до последнего)" in said["ru"]
    assert "на этом и на всех более ранних шагах" in said["ru"]  # at t and every step before


def test_values_below_float32_give_the_floor_and_the_smallest_size_in_each_language():
    log10 = pd.Series([-1.0, -53.3279, -60.0])
    said = in_each(lambda: size_words.describe_below_float32(log10, "||dL/dh_0||"))
    assert said["en"] == ("2 values of ||dL/dh_0|| are below float32's smallest normal number (1.2e-38), where a "
                          "float32 gradient is 0: the chart shows their true size, down to 1.000e-60.")
    assert "1.2×10⁻³⁸" in said["zh"] and "1.000×10⁻⁶⁰" in said["zh"]
    assert "1,2·10⁻³⁸" in said["ru"] and "1,000·10⁻⁶⁰" in said["ru"] and said["ru"].startswith("2 значения")
    one = in_each(lambda: size_words.describe_below_float32(pd.Series([-53.3]), "||dL/dh_0||"))
    assert one["en"].startswith("1 value of ||dL/dh_0|| is below") and one["ru"].startswith("1 значение")
    assert "5.012×10⁻⁵⁴" in one["zh"] and "5,012·10⁻⁵⁴" in one["ru"]


@pytest.mark.parametrize("decades, russian", [(1, "порядок"), (2, "порядка"), (5, "порядков"), (21, "порядок"),
                                               (22, "порядка"), (46, "порядков")])
def test_orders_of_magnitude_are_counted_in_russian(decades, russian):
    axis = log10_scale.Log10Axis(-40.0, 0.0, -39.0, ("float32",), true_sizes.F64_LOG10_FLOOR + decades)
    said = in_each(lambda: size_words.floors_note(axis))
    assert said["en"] == (f"float64's smallest normal number (2.2e-308) is not drawn: the smallest value is {decades} "
                          f"decade{'s' * (decades != 1)} above it.")
    assert said["ru"].endswith(f"на {decades} {russian}.") and "2,2·10⁻³⁰⁸" in said["ru"]
    assert f"大 {decades} 个数量级" in said["zh"] and "2.2×10⁻³⁰⁸" in said["zh"] and said["zh"].endswith("。")


def test_two_floors_not_drawn_are_one_sentence_in_each_language():
    axis = log10_scale.log10_axis(np.array([-6.0, -1.0]))
    said = in_each(lambda: size_words.floors_note(axis))
    assert said["en"] == (
        "float32's smallest normal number (1.2e-38) is not drawn: the smallest value is 32 decades above it; "
        "float64's smallest normal number (2.2e-308) is not drawn: the smallest value is 302 decades above it.")
    assert "；" in said["zh"] and "32 个数量级" in said["zh"] and "302 个数量级" in said["zh"]
    assert "на 32 порядка; " in said["ru"] and said["ru"].endswith("на 302 порядка.")


@pytest.mark.parametrize("before, russian", [(1, "На 1 предыдущем шаге"), (2, "На 2 предыдущих шагах"),
                                             (5, "На 5 предыдущих шагах"), (21, "На 21 предыдущем шаге"),
                                             (22, "На 22 предыдущих шагах"), (46, "На 46 предыдущих шагах")])
def test_exact_zeros_before_a_cut_are_counted_in_russian(before, russian):
    n = before + 1
    grads = grads_table([-np.inf] * n + [-2.0, -1.0], causes=["gate"] * n + ["", ""], at=[n] * n + [-1, -1],
                        step=21)
    said = in_each(lambda: size_words.describe_exact_zeros(grads)[0])
    steps = "step" if before == 1 else "steps"
    assert said["en"] == (f"After 21 training steps: ||dL/dh_{n - 1}|| is exactly 0: at step {n}, a gate that is "
                          f"exactly 0 in float32 closes the path back. So are the {before} {steps} before it.")
    assert said["ru"].startswith("После 21 шага обучения: ||dL/dh_") and russian in said["ru"]
    assert f"前的 {before} 步" in said["zh"] and " " not in said["zh"].split("。")[-2][-3:]


@pytest.mark.parametrize("step, russian", [(1, "После 1 шага обучения"), (2, "После 2 шагов обучения"),
                                           (5, "После 5 шагов обучения"), (21, "После 21 шага обучения"),
                                           (22, "После 22 шагов обучения"), (46, "После 46 шагов обучения")])
def test_training_steps_are_counted_in_russian(step, russian):
    grads = grads_table([-0.5 * (10 - t) for t in range(11)], step=step)
    said = in_each(lambda: size_words.describe_decay_back(grads)[0])
    assert said["ru"].startswith(russian + ", h: ×0,316 за каждый шаг назад") and "0,602 шага" in said["ru"]
    assert said["zh"].startswith(f"训练 {step} 步后，h：")
    name = in_each(lambda: true_size.grad_through_time_figure(grads).data[0].name)
    assert name["ru"] == russian.replace("После", "после") + ", h"


def test_a_zeros_cause_is_a_whole_sentence_with_its_step_in_each_language():
    for cause, words in (("saturated", ("导数", "±44")), ("gate", ("门", "")), ("cancelled", ("权重", ""))):
        said = in_each(lambda cause=cause: size_words.describe_zero(cause, 1234, "h", 0))
        assert said["en"].startswith("||dL/dh_0|| is exactly 0: at step 1234, ")
        assert said["zh"].startswith("||dL/dh_0|| 恰好为 0：在第 1234 步，") and all(w in said["zh"] for w in words)
        assert said["ru"].startswith("||dL/dh_0|| — ровно 0: на шаге 1234 ")
    unread = in_each(lambda: size_words.describe_zero("unread", -1, "c", 20))
    assert "LSTM" in unread["zh"] and "LSTM" in unread["ru"] and "||dL/dc_20||" in unread["ru"]


def test_a_progress_note_made_in_a_worker_is_kept_and_said_in_the_readers_language():
    note = Msg("Probing the {cell} at T = {T} ({n} of {total})…", cell=Msg("LSTM"), T=1000, n=1, total=2)
    said = in_each(lambda: str(note))
    assert said["en"] == "Probing the LSTM at T = 1000 (1 of 2)…"
    assert said["ru"] == "Измеряем градиент LSTM при T = 1000 (1 из 2)…" and "T = 1000" in said["zh"]


# ---- charts --------------------------------------------------------------------------------------------------
def test_the_decay_chart_speaks_the_readers_language():
    sweep = pd.DataFrame({"cell": "lstm", "T": [50, 500], "h0_grad_norm": 0.0, "log10": [-6.8, -53.3]})
    fits = probes.fit_decay(sweep)
    figs = in_each(lambda: true_size.decay_figure(sweep, fits, {"lstm": "LSTM"}))
    zh, ru, en = figs["zh"], figs["ru"], figs["en"]
    assert en.layout.title.text.replace("<br>", " ").startswith("Gradient reaching the initial carry")
    assert "到达初始状态的梯度" in zh.layout.title.text and zh.layout.font.family.startswith('"Noto Sans CJK SC"')
    assert zh.layout.title.font.family == zh.layout.hoverlabel.font.family == zh.layout.font.family
    assert ru.layout.separators == ", " and "длина последовательности" in ru.layout.xaxis.title.text
    halving = fits["halving_steps"][0]
    assert ru.data[0].name == f"LSTM (убывает вдвое каждые {halving:.3g} шага)".replace(".", ",")  # a fraction: шага
    assert ru.data[0].text[0] == "1,6·10⁻⁷" and zh.data[0].text[0] == "1.6×10⁻⁷"  # the quoted sizes
    rate = fits["rate_per_step"][0]
    assert ru.data[1].hovertemplate == f"аппроксимация: ×{rate:.3g} за шаг".replace(".", ",") + "<extra>LSTM</extra>"
    tags = {a.name: a.text for a in zh.layout.annotations}
    assert tags["float32"] == "float32 的下限"
    legend = [t.name for t in ru.data if t.legendgroup == "float32"]
    assert legend == ["наименьшее нормализованное число float32 (1,2·10⁻³⁸):<br>ниже него float32 даёт 0"]


def test_the_gradient_chart_names_its_zeros_and_hovers_in_the_readers_language():
    grads = grads_table([-np.inf, -np.inf, -3.0, -2.0], causes=["gate", "gate", "", ""], at=[2, 2, -1, -1])
    fig = in_each(lambda: true_size.grad_through_time_figure(grads))
    zeros = next(t for t in fig["ru"].data if t.legendgroup == "zero gate")
    assert zeros.name == "ровно 0: закрытый вентиль"
    assert zeros.hovertext[0].startswith("||dL/dh_0|| — ровно 0: на шаге 2 ")
    assert fig["zh"].data[0].customdata[0] == "恰好为 0" and fig["zh"].data[0].customdata[2] == "1.000×10⁻³"
    assert fig["ru"].data[0].customdata[2] == "1,000·10⁻³"
    assert list(fig["en"].data[0].customdata) == [true_sizes.format_log10(v) for v in grads["log10"]]
    assert "时间步 t" in fig["zh"].layout.xaxis.title.text


def test_true_size_floors_are_labelled_in_the_readers_language():
    said = in_each(lambda: (log10_scale.floor_tag("float32"), log10_scale.floor_words("float64")))
    assert said["en"] == ("float32's floor", "float64's smallest normal number (2.2e-308):<br>below it float64 "
                                             "gives 0")
    assert said["ru"][1].startswith("наименьшее нормализованное число float64 (2,2·10⁻³⁰⁸)")
    assert "2.2×10⁻³⁰⁸" in said["zh"][1] and "float32" in said["zh"][0] and "float32" in said["ru"][0]


def test_a_marked_step_is_labelled_with_its_number_the_readers_way():
    assert in_each(lambda: plots.t_label(1500)) == {"en": "t = 1500", "zh": "t = 1500", "ru": "t = 1500"}


# ---- wrapping titles -----------------------------------------------------------------------------------------
def test_english_titles_wrap_as_before():
    title = "Gradient of the loss with respect to the carry at each time step"
    assert plots.wrap_title(title) == "Gradient of the loss with respect<br>to the carry at each time step"
    assert plots.wrap_title("Loss") == "Loss"


def test_chinese_titles_wrap_by_display_width():
    title = "连通性：最后的输出在多大程度上依赖每一步的输入"  # 24 wide characters: 48 columns, no space
    assert plots.wrap_title(title) == "连通性：<br>最后的输出在多大程度上依赖每一步的输入"  # after the clause's colon
    title = "每个时间步上损失关于状态的梯度以及它与序列长度之间的关系"  # no punctuation: in the middle
    wrapped = plots.wrap_title(title)
    assert "<br>" in wrapped and wrapped.replace("<br>", "") == title
    head, tail = wrapped.split("<br>")
    assert abs(plots.display_width(head) - plots.display_width(tail)) <= 2
    assert not tail.startswith(tuple(plots.NO_LINE_START))
    short = "每个时间步的损失"  # 16 columns: one line
    assert plots.wrap_title(short) == short
    mixed = "每个时间步上损失关于状态的梯度 ||dL/dh_t|| 与 float32 的最小正规数"
    head, tail = plots.wrap_title(mixed).split("<br>")
    assert "float32" in head + tail and "||dL/dh_t||" in head + tail  # never cut inside a Latin word
    assert plots.display_width(plots.wrap_title(mixed).split("<br>")[0]) <= plots.display_width(mixed)


def test_styled_chinese_title_gets_two_lines_and_room_for_them():
    import plotly.graph_objects as go

    with using("zh"):
        fig = plots.style_figure(go.Figure(), "每个时间步上损失关于状态的梯度以及它与序列长度之间的关系", "x", "y")
    assert "<br>" in fig.layout.title.text and fig.layout.margin.t == 72


# ---- the page in the pseudo-language ---------------------------------------------------------------------------
SIDEBAR_KEYS = ("w_",)  # the sidebar's settings belong to another area


INNERMOST = re.compile(re.escape(pseudo.PSEUDO_OPEN) + "[^" + pseudo.PSEUDO_OPEN + pseudo.PSEUDO_CLOSE + "]*"
                       + re.escape(pseudo.PSEUDO_CLOSE))


def english_left(text: str) -> list[str]:
    """:func:`tests.i18n.pseudo.english_left` for messages nested in messages (⟦Model: ⟦LSTM⟧ with ...⟧): the
    innermost marks are taken out first, so that a message's own words after a nested one count as marked."""
    while INNERMOST.search(text):
        text = INNERMOST.sub(" ", text)
    return pseudo.english_left(text)


def unmarked(at) -> list[tuple[str, str, list[str]]]:
    """:func:`tests.i18n.pseudo.unmarked` with nested messages (:func:`english_left`)."""
    return [(where, text[:160], words) for where, text in shown_texts(at) if (words := english_left(text))]


def _unmarked_outside_sidebar(at) -> list:
    """unmarked(at), less the sidebar's settings widgets (another area converts those)."""
    sidebar = set()
    for widget in at.sidebar:
        for attr in ("label", "help", "value"):
            value = getattr(widget, attr, None)
            if isinstance(value, str):
                sidebar.add(value[:160])
        if hasattr(widget, "options"):
            sidebar.update(str(o)[:160] for o in widget.options)
    return [found for found in unmarked(at) if found[1] not in sidebar]


def test_the_gradient_flow_page_in_the_pseudo_language(monkeypatch):
    at = open_pseudo("gradients", monkeypatch, **SMALL, cell="lstm")
    assert any("⟦" in str(e.value) for e in at.title)
    with using(PSEUDO):  # the widgets' format_func translates: AppTest calls it outside the script run
        at.multiselect(key="w_sweep_cells").set_value(["simple", "gru"])
        at.radio(key="w_sweep_weights").set_value("untrained")
        at.text_input(key="w_sweep_lengths").input("5, 10, 20")
        next(b for b in at.button if "Run sweep" in b.label).click().run()
    assert not at.exception, [e.value for e in at.exception]
    texts = [text for _where, text in shown_texts(at)]
    assert any("halves every" in text or "no decay fitted" in text for text in texts)  # the sweep's fits are shown
    assert _unmarked_outside_sidebar(at) == []
    # an error of the sweep's form, and the last sweep that worked
    with using(PSEUDO):
        at.text_input(key="w_sweep_lengths").input("5, x")
        next(b for b in at.button if "Run sweep" in b.label).click().run()
    assert at.error and not at.exception
    # the form's parse error is rnnlab.sharing.urlstate's (another area converts it): left out when still English
    urlstate_error = escape_markdown(str(parse_lengths("5, x")[1]))[:160]
    assert [found for found in _unmarked_outside_sidebar(at) if found[1] != urlstate_error] == []
    assert any("⟦" in text for _where, text in shown_texts(at) if _where == "caption")  # the last sweep that worked


def test_the_page_reads_in_russian_with_its_numbers(monkeypatch):
    from tests.app.conftest import open_page

    at = open_page("gradients", **SMALL, cell="lstm", lang="ru")
    assert at.title[0].value == "Поток градиента"
    captions = " ".join(c.value for c in at.caption)
    assert "Модель: LSTM, 16 скрытых нейронов" in captions
    assert "при t = 20 равен ровно 0" in captions
    markdown = " ".join(m.value for m in at.markdown)
    assert "за каждый шаг назад" in markdown
