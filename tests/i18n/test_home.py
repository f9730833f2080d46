"""The Home page in every language: nothing left unmarked in the pseudo-language (before and after a prediction),
each language's words and numbers on the page, and preset links that keep a language the reader chose."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import jax
import pytest
from streamlit.proto.Block_pb2 import Block as BlockProto
from streamlit.testing.v1 import AppTest

from rnnlab.device import devices_sentence
from rnnlab.i18n import PSEUDO, _, using
from rnnlab.sharing.presets import PRESETS, PRESETS_BY_KEY
from tests.app.conftest import open_page
from tests.i18n.pseudo import open_pseudo, unmarked


def link_query(link) -> dict[str, str]:
    return {key: values[-1] for key, values in parse_qs(link.proto.query_string).items()}


def test_home_has_no_unmarked_text_in_the_pseudo_language(monkeypatch):
    at = open_pseudo("home", monkeypatch)
    assert unmarked(at) == []
    assert len(at.main.get("page_link")) == len(PRESETS)


def test_home_with_explain_opened_after_predictions_has_no_unmarked_text(monkeypatch):
    at = open_pseudo("home", monkeypatch)
    first, second = PRESETS[0], PRESETS[1]
    wrong = next(c for i, c in enumerate(second.choices) if i != second.answer)
    with using(PSEUDO):  # AppTest finds a choice by formatting it (format_func=_) in this thread's language
        at.radio(key=f"predict_{first.key}").set_value(first.choices[first.answer]).run()
        at.radio(key=f"predict_{second.key}").set_value(wrong).run()
    assert not at.exception
    verdicts = [m.value for m in at.markdown if "*" in m.value and m.value.startswith("⟦You predicted")]
    assert len(verdicts) == 2, verdicts
    assert unmarked(at) == []


def test_home_in_russian_and_chinese_with_its_numbers_written_their_way():
    lstm = PRESETS_BY_KEY["lstm_h0_50_vs_500"]
    for lang, title, number, verdict in (
            ("ru", "rnnlab: как запоминают рекуррентные ячейки", "1,6·10⁻⁷", "Ваш прогноз: *"),
            ("zh", "rnnlab：循环单元如何记忆", "1.6×10⁻⁷", "你的预测：“")):
        at = open_page("home", lang=lang)
        assert at.title[0].value == title
        radio = at.radio(key=f"predict_{lstm.key}")
        with using(lang):
            assert list(radio.options) == [_(c) for c in lstm.choices]  # shown translated, kept as English ids
            assert radio.label == _("Predict first: {question}").replace("{question}", _(lstm.question))
            lesson = lstm.lesson
            radio.set_value(lstm.choices[lstm.answer]).run()  # found by its label in the reader's language
        text = [m.value for m in at.markdown]
        assert lesson in text and number in lesson
        assert any(m.startswith(verdict) for m in text)
        for link in at.main.get("page_link"):
            assert link_query(link).get("lang") == lang  # the reader chose the language: its links keep it
        with using(lang):
            assert devices_sentence() in [c.value for c in at.caption]


def test_preset_links_carry_no_language_unless_the_reader_chose_one():
    at = open_page("home")
    for link in at.main.get("page_link"):
        assert "lang" not in link_query(link) and link_query(link).get("run") == "1"


def test_the_devices_sentence_counts_its_devices_in_each_language():
    count = len(jax.devices())
    english = devices_sentence()
    assert english.startswith(f"Runs on this server's {jax.default_backend().upper()} ({count} device")
    assert "device(s)" not in english
    with using("ru"):
        russian = devices_sentence()
    with using("zh"):
        chinese = devices_sentence()
    assert f"({count} устройств" in russian and f"（{count} 个设备" in chinese


def share_app():
    """A page with the "Share with the class" button alone (the teacher's link chose ``teacher``, if given)."""
    import streamlit as st

    from rnnlab.i18n import set_language
    from rnnlab.sharing.urlstate import UrlState
    from ui.share import share_dialog

    set_language(st.query_params.get("lang", "en"))
    if st.button("QR", key="open"):
        share_dialog(UrlState(lang=st.query_params.get("teacher") or None))


def open_share(**query: str) -> AppTest:
    at = AppTest.from_function(share_app, default_timeout=60)
    for key, value in query.items():
        at.query_params[key] = value
    at.run()
    at.button(key="open").click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def dialog_title(at: AppTest) -> str:
    def walk(node):
        proto = getattr(node, "proto", None)
        if isinstance(proto, BlockProto) and proto.HasField("dialog"):
            yield proto.dialog.title
        for child in getattr(node, "children", {}).values():
            yield from walk(child)
    titles = list(walk(at._tree))
    assert len(titles) == 1, titles
    return titles[0]


def test_the_share_dialog_has_no_unmarked_text_in_the_pseudo_language(monkeypatch):
    monkeypatch.setenv("RNNLAB_PSEUDO_LANGUAGE", "1")
    at = open_share(lang="qps")
    assert dialog_title(at) == "⟦Share with the class⟧"  # translated per run, not fixed at import
    languages = at.radio(key="share_lang")
    assert list(languages.options)[1:] == ["English", "中文", "Русский"]  # each language by its own name
    assert [u for u in unmarked(at) if u[:2] != ("radio option", "English")] == []


@pytest.mark.parametrize("teacher", [None, "ru"])
def test_the_share_dialog_offers_the_class_language_starting_from_the_teachers(teacher):
    at = open_share(lang="zh", **({"teacher": teacher} if teacher else {}))
    assert dialog_title(at) == "分享给全班"
    languages = at.radio(key="share_lang")
    assert languages.label == "全班使用的语言" and languages.options[0] == "每位学生自己的浏览器语言"
    assert languages.value == teacher  # the teacher's chosen language, else each student's own
    link = at.code[0].value
    assert parse_qs(urlsplit(link).query).get("lang") == ([teacher] if teacher else None)
