"""The settings area in three languages: the sidebar's controls, the registries' labels, the validation messages,
the link's notes, sizes in bytes, the command line's --lang and the parameter files' messages."""

from __future__ import annotations

import re

import pytest
from streamlit.testing.v1 import AppTest

from rnnlab.config import SETTING, SETTINGS, Config, describe_changes, with_cell
from rnnlab.files.export import ExportError, load_params
from rnnlab.i18n import PSEUDO_CLOSE, PSEUDO_OPEN, language, using
from rnnlab.model.cells import CARRY_INITS, CELLS
from rnnlab.model.network import carry_mode_label
from rnnlab.model.optimizers import OPTIMIZERS
from rnnlab.model.tasks import TASKS
from rnnlab.sharing.urlstate import parse_dims, parse_lengths, parse_query, to_query
from rnnlab.text import format_bytes
from tests.i18n.pseudo import APP, english_left, open_pseudo

NESTED = re.compile(re.escape(PSEUDO_OPEN) + r"[^" + PSEUDO_OPEN + PSEUDO_CLOSE + r"]*" + re.escape(PSEUDO_CLOSE))
WIDGETS = ("selectbox", "radio", "number_input")


def left_over(text: str) -> list[str]:
    """The words of ``text`` outside the pseudo-language's brackets, where messages may hold messages (a note
    holding a validation error): the innermost brackets go first."""
    while True:
        stripped = NESTED.sub(" ", text)
        if stripped == text:
            return english_left(text)
        text = stripped


def sidebar_controls(at: AppTest) -> list[tuple[str, str]]:
    """(where, text) for the experiment's controls in the sidebar: labels, help and options, and the headings."""
    found = [("subheader", str(e.value)) for e in at.sidebar.subheader]
    found += [("expander", str(e.label)) for e in at.sidebar.get("expander") if "Advanced" in str(e.label)]
    for kind in WIDGETS:
        for widget in getattr(at.sidebar, kind):
            if not (widget.key or "").startswith("w_") or widget.key[2:] not in SETTING:
                continue  # the language selector (in all three languages at once), and other areas' controls
            found.append((f"{kind} label {widget.key}", str(widget.label)))
            found.append((f"{kind} help {widget.key}", str(widget.help or "")))
            found += [(f"{kind} option {widget.key}", str(o)) for o in getattr(widget, "options", [])]
    return found


def unmarked_controls(at: AppTest) -> list[tuple[str, str, list[str]]]:
    return [(where, text[:160], words) for where, text in sidebar_controls(at) if (words := left_over(text))]


# ---- the pseudo-language sweep -------------------------------------------------------------------------------
def test_the_sidebars_controls_are_all_marked(monkeypatch):
    at = open_pseudo("explore", monkeypatch)
    shown = sidebar_controls(at)
    keys = {where.split()[-1] for where, _ in shown if " label " in where}
    assert {"w_task", "w_cell", "w_carry_mode", "w_carry_init", "w_lr", "w_chunk"} <= keys
    assert unmarked_controls(at) == []
    # with a parameter (normal's stddev), and after a change of cell that brings other settings with it (a note)
    at.sidebar.selectbox(key="w_carry_init").select("normal").run()
    at.sidebar.selectbox(key="w_cell").select("conv_lstm").run()
    assert not at.exception
    assert any(w.key == "w_carry_scale" for w in at.sidebar.number_input)
    assert unmarked_controls(at) == []
    notes = [str(e.value) for e in at.sidebar.info]
    assert notes and all(not left_over(n) for n in notes), notes


def test_a_bad_links_notes_are_all_marked(monkeypatch):
    at = open_pseudo("explore", monkeypatch, cell="nope", lr="abc", zzz="1", seq_len="2", hide="nope",
                     sweep_lengths="0", run="maybe")
    warnings = [str(w.value) for w in at.warning if "⟦Some settings in the link" in str(w.value)]
    assert len(warnings) == 1
    assert warnings[0].count("\n- ") >= 6, warnings[0]
    assert not left_over(warnings[0]), left_over(warnings[0])
    assert unmarked_controls(at) == []


def test_notes_that_hold_messages_are_all_marked_in_the_pseudo_language(monkeypatch):
    monkeypatch.setenv("RNNLAB_PSEUDO_LANGUAGE", "1")
    with using("qps"):
        notes = parse_query({"task": "moving_dot", "lr": "1e9", "features": "0", "x" * 3: "1", "run": "1",
                             "sweep_cells": "conv_lstm", "compare_zero": "2", "sweep_weights": "x"}).notes
        notes += [parse_lengths("a")[1], parse_lengths("")[1], parse_dims("x", "Batch dims")[1]]
    assert len(notes) >= 9 and all(n and not left_over(n.replace("Batch dims", "")) for n in notes), notes


# ---- the same in every language -------------------------------------------------------------------------------
def test_registries_show_their_labels_in_the_readers_language_and_keep_their_ids():
    assert CELLS["simple"].label == "Simple RNN" and TASKS["adding"].label == "Adding problem"
    with using("zh"):
        assert CELLS["simple"].label == "简单 RNN" and CELLS["gru"].label == "GRU"
        assert TASKS["adding"].label == "加法问题" and OPTIMIZERS["sgd"].label == "SGD + 动量"
        assert carry_mode_label("learnable") == "可学习" and SETTING["lr"].label == "学习率"
    with using("ru"):
        assert CELLS["simple"].label == "Простая RNN" and TASKS["copy"].label == "Копирование"
        assert carry_mode_label("noisy") == "зашумлённое" and SETTING["seq_len"].label == "Длина последовательности T"
        assert CARRY_INITS["normal"].label == "normal(stddev)" and CARRY_INITS["normal"].word == "normal"
        assert to_query(parse_query({"cell": "simple", "task": "copy", "carry_mode": "noisy"})) == {
            "cell": "simple", "task": "copy", "carry_mode": "noisy"}
    with using("zh"):  # an initialiser keeps its code name, glossed
        assert CARRY_INITS["normal"].label == "正态 normal"
        assert CARRY_INITS["truncated_normal"].word == "截断正态 truncated_normal"
    assert CELLS["simple"].label_en == "Simple RNN" and all(s.help_en == s.help for s in SETTINGS)


@pytest.mark.parametrize(("lang", "size", "limit"), [("en", "39.6 GB", "53.7 MB"), ("zh", "39.6 GB", "53.7 MB"),
                                                     ("ru", "39,6 ГБ", "53,7 МБ")])
def test_the_memory_budget_error_writes_its_sizes_the_readers_way(lang, size, limit):
    config = Config(seq_len=50_000, batch=256)
    with using(lang):
        errors = config.validate(budget=53_700_000)
    assert len(errors) == 1 and f"{size}" in errors[0] and limit in errors[0], errors
    assert "50000" in errors[0] and "256" in errors[0] and "64" in errors[0]
    if lang != "en":
        assert "backpropagation" not in errors[0]


@pytest.mark.parametrize(("lang", "expected"),
                         [("en", "got -0.5"), ("zh", "实际为 \u22120.5"), ("ru", "получено \u22120,5")])
def test_a_bad_learning_rate_is_written_the_readers_way(lang, expected):
    with using(lang):
        assert expected in Config(lr=-0.5).field_errors()["lr"]


@pytest.mark.parametrize(("lang", "expected"), [
    ("en", "Ignored 46 more unknown settings."), ("zh", "另有 46 个未知设置已忽略。"),
    ("ru", "Пропущено ещё 46 неизвестных настроек.")])
def test_counted_notes_take_the_languages_form(lang, expected):
    with using(lang):
        notes = parse_query({f"k{i}": "1" for i in range(51)}).notes
    assert notes[-1] == expected
    with using("ru"):
        assert parse_query({f"k{i}": "1" for i in range(7)}).notes[-1] == "Пропущены ещё 2 неизвестные настройки."
        assert parse_query({f"k{i}": "1" for i in range(6)}).notes[-1] == "Пропущена ещё 1 неизвестная настройка."


def test_the_unknown_language_note_is_in_the_readers_language_and_in_english():
    english = "Ignored lang='xx': use en, zh, ru."
    assert parse_query({"lang": "xx"}).notes == [english]
    with using("ru"):
        assert parse_query({"lang": "xx"}).notes == [f"Пропущено lang='xx': используйте en, zh, ru. {english}"]
    with using("zh"):
        assert parse_query({"lang": "XX"}).notes == [f"已忽略 lang='xx'：请用 en, zh, ru。 {english}"]


def test_the_cell_change_note_and_the_links_resets_in_russian_and_chinese():
    config, changes = with_cell(Config(), "conv_lstm")
    with using("ru"):
        note = describe_changes("conv_lstm", changes)
        assert note.startswith("Для ячейки ConvLSTM нужны другие настройки") and "Задача: Движущаяся точка" in note
        state = parse_query({"cell": "conv_lstm", "run": "1"})
        assert "Ячейка: возвращено значение «GRU»." in state.notes and not state.autorun
    with using("zh"):
        assert "任务：移动的点（空间任务）；" in describe_changes("conv_lstm", changes)


@pytest.mark.parametrize(("n", "en", "ru"), [(999, "999 B", "999 Б"), (1_234_567, "1.2 MB", "1,2 МБ"),
                                             (13.2e9, "13.2 GB", "13,2 ГБ")])
def test_format_bytes_in_each_language(n, en, ru):
    assert format_bytes(n) == en
    with using("zh"):
        assert format_bytes(n) == en
    with using("ru"):
        assert format_bytes(n) == ru
    assert format_bytes(n, "ru") == ru and language() == "en"


def test_upload_messages_in_russian_and_chinese():
    with using("ru"), pytest.raises(ExportError, match="это не файл параметров msgpack: файл пуст"):
        load_params(b"", Config())
    with using("ru"), pytest.raises(ExportError, match="размер файла 21 МБ — больше предела"):
        load_params(b"\x00" * (21 * 2**20), Config())
    with using("zh"), pytest.raises(ExportError, match="不是 msgpack 参数文件：它看起来是一张 PNG 图片"):
        load_params(b"\x89PNG" + bytes(40), Config(features=8, batch=8, seq_len=10))


# ---- the page, in Russian -------------------------------------------------------------------------------------
def test_the_links_notes_are_read_again_in_the_language_chosen_after(monkeypatch):
    at = AppTest.from_file(APP, default_timeout=180)
    for key, value in {"cell": "nope", "zzz": "1"}.items():
        at.query_params[key] = value
    at.switch_page("app_pages/explore.py")
    at.run()
    assert not at.exception
    assert any("Ignored unknown setting \\'zzz\\'" in str(w.value) for w in at.warning)
    at.sidebar.selectbox(key="w_lang").select("ru").run()
    assert not at.exception
    shown = " ".join(str(w.value) for w in at.warning)
    assert "Неизвестная настройка «zzz» пропущена" in shown and "Ignored unknown" not in shown, shown
    assert at.sidebar.subheader[0].value == "Эксперимент"
    cell = at.sidebar.selectbox(key="w_cell")
    assert cell.label == "Ячейка" and cell.value == "gru"
    cell.select("conv_lstm").run()
    notes = [str(e.value) for e in at.sidebar.info]
    assert any(n.startswith("Для ячейки ConvLSTM нужны другие настройки") for n in notes), notes
