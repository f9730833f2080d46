"""The Old vs new API page in every language: nothing left in English in the pseudo-language, the page drawn in
Chinese and Russian, and its numbers written each language's way."""

from __future__ import annotations

import re

import pytest

from rnnlab.flaxapi import breakages, columns, migrate, recipes, shapes
from rnnlab.i18n import using
from tests.app.conftest import open_page
from tests.i18n.pseudo import open_pseudo, unmarked

FLAX_ERROR = re.compile(r"^[A-Z]\w*(Error|Exception): ")  # Flax's own errors, quoted verbatim by design


def _theirs() -> set[str]:
    """The beginnings of the migration checker's sentences for the page's example (the checker's area)."""
    result = migrate.check(migrate.EXAMPLE)
    return {str(f.message)[:60] for f in result.findings} | {str(p.message)[:60] for p in result.problems}


def _mine(found: list[tuple[str, str, list[str]]]) -> list[tuple[str, str, list[str]]]:
    """The unmarked texts of this page, less Flax's verbatim errors and the migration checker's findings (another
    area translates them)."""
    theirs = _theirs()
    return [f for f in found if not FLAX_ERROR.match(f[1]) and not any(f[1].startswith(t) for t in theirs)]


def test_pseudo_language_sweep(monkeypatch):
    at = open_pseudo("api", monkeypatch)
    assert _mine(unmarked(at)) == []
    # the other cells and states a reader meets: GRU (the NNX bias caveat), MGU (missing columns), ConvLSTM
    at.selectbox(key="api_cell").set_value("gru").run()
    assert _mine(unmarked(at)) == []
    at.selectbox(key="api_cell").set_value("mgu").run()
    at.selectbox(key="api_dtype").set_value("bfloat16").run()
    assert _mine(unmarked(at)) == []
    at.selectbox(key="api_cell").set_value("conv_lstm").run()
    at.checkbox(key="shape_time_major").check().run()
    assert _mine(unmarked(at)) == []


def test_pseudo_language_errors_and_last_results(monkeypatch):
    at = open_pseudo("api", monkeypatch)
    at.selectbox(key="api_init").set_value("truncated_normal").run()
    assert _mine(unmarked(at)) == []
    at.text_input(key="api_batch").input("4096, 16").run()  # over the carry limit: the last comparison is shown
    at.number_input(key="api_hidden").set_value(1024).run()
    at.selectbox(key="shape_cell").set_value("conv_lstm").run()  # (2, 5, 3) has too few axes for ConvLSTM
    assert not at.exception
    assert _mine(unmarked(at)) == []
    at.text_input(key="api_batch").input("2, x").run()  # parse_dims' message, with this page's label
    at.text_input(key="shape_input").input("").run()
    assert at.error and _mine(unmarked(at)) == []


@pytest.mark.parametrize("lang", ["zh", "ru"])
def test_page_draws_in_each_language(lang):
    at = open_page("api", lang=lang)
    assert not at.exception
    assert len(at.header) == 5 and len(at.table) == 3 and len(at.dataframe) >= 1
    at.selectbox(key="api_cell").set_value("gru").run()
    at.text_input(key="shape_input").input("0").run()
    assert not at.exception


def test_silent_breakage_number_in_every_language():
    """The time_major leak is a number in a sentence: the same number, written each language's way."""
    with using("en"):
        en = next(b for b in breakages.upgrade_breakages() if b.silent)
    leak = en.error.rsplit("output by ", 1)[1].split(":")[0]
    assert float(leak) > 0
    with using("zh"):
        zh = next(b for b in breakages.upgrade_breakages() if b.silent)
    with using("ru"):
        ru = next(b for b in breakages.upgrade_breakages() if b.silent)
    assert leak in zh.error and "没有报错" in zh.error
    assert leak.replace(".", ",") in ru.error and "ошибки нет" in ru.error


def test_counts_and_numbers_in_every_language():
    with using("ru"):
        note = shapes.explore_shapes((2, 5, 3), False, "lstm", 4).notes[-1]
        assert "последняя ось" in note
        conv = shapes.explore_shapes((2, 5, 8, 8, 3), False, "conv_lstm", 4).notes[-1]
        assert "последние 3 оси" in conv
        error = shapes.shape_size_error((1000, 999, 1), 256)
        assert "255\u00a0744\u00a0000 чисел" in error and "1\u00a0000\u00a0000" in error
    with using("zh"):
        assert "255,744,000 个数" in shapes.shape_size_error((1000, 999, 1), 256)
    with using("en"):
        assert "255,744,000 numbers" in shapes.shape_size_error((1000, 999, 1), 256)


def test_verdict_in_every_language():
    for lang, word in (("en", "identical"), ("zh", "相同"), ("ru", "совпадают")):
        with using(lang):
            c = columns.compare("lstm", (4,), 3, 5, "zeros")
        assert c.identical and c.verdict.splitlines()[0].startswith(word)
        assert c.pair("old_linen", "new_linen").status == "identical"  # the status stays an id


def test_recipe_gradients_in_every_language():
    with using("en"):
        en = {r.key: r for r in recipes.learnable_recipes()}
    with using("ru"):
        ru = {r.key: r for r in recipes.learnable_recipes()}
    detail_en = en["param"].checks[-1].detail  # "... differ by at most 0" or a small number
    assert en["param"].title == "A self.param inside the module" and ru["param"].title == "self.param внутри модуля"
    assert "дерево параметров" in ru["param"].checks[-1].detail and detail_en.startswith("same parameter tree")
    grows = next(c for c in ru["param"].seed_checks if c.name.startswith("параметры ячейки"))
    assert "300 при T=3, 444 при T=7" in grows.detail
