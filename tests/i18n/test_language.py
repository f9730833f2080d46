"""Choosing the language and writing numbers the reader's way (rnnlab.i18n)."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from rnnlab.i18n import (
    Msg,
    MsgN,
    language,
    localize_number,
    negotiate,
    number,
    parse_language,
    t,
    tn,
    using,
)
from rnnlab.sharing.urlstate import parse_query, to_query


@pytest.mark.parametrize(("text", "lang"), [
    ("en", "en"), ("zh", "zh"), ("ru", "ru"), ("zh-CN", "zh"), ("zh_Hans", "zh"), ("ZH-hans", "zh"), ("ru-RU", "ru"),
    ("zh-TW", "zh"), (" RU ", "ru"), ("de", None), ("uk", None), ("", None), ("qps", None), ("en-US", "en")])
def test_parse_language(text, lang):
    assert parse_language(text) == lang


@pytest.mark.parametrize(("header", "locale", "lang"), [
    ("de-DE,ru;q=0.9,en;q=0.8", None, "ru"), ("zh-CN,zh;q=0.9", None, "zh"), ("en-US,en;q=0.9,ru;q=0.8", None, "en"),
    ("fr,de;q=0.5", "ru-RU", "ru"), (None, "zh-TW", "zh"), (None, None, "en"), ("ru;q=0.2,zh;q=0.8", None, "zh"),
    ("uk,kk;q=0.9", None, "en"), ("*", None, "en"), ("ru;q=0", None, "en"), ("ru;q=abc", None, "ru")])
def test_negotiate_follows_the_browsers_order(header, locale, lang):
    assert negotiate(header, locale) == lang


@pytest.mark.parametrize(("written", "zh", "ru"), [
    ("1.6e-07", "1.6×10⁻⁷", "1,6·10⁻⁷"), ("5.5e-54", "5.5×10⁻⁵⁴", "5,5·10⁻⁵⁴"), ("1e-07", "10⁻⁷", "10⁻⁷"),
    ("1,234,567.891", "1,234,567.891", "1\u00a0234\u00a0567,891"), ("0.87", "0.87", "0,87"), ("2.9", "2.9", "2,9"),
    ("12.5%", "12.5%", "12,5\u00a0%"), ("-3.2e+05", "\u22123.2×10⁵", "\u22123,2·10⁵"), ("46", "46", "46"),
    ("nan", "nan", "nan"), ("inf", "inf", "inf")])
def test_numbers_in_prose_as_each_language_writes_them(written, zh, ru):
    assert localize_number(written, "en") == written
    assert localize_number(written, "zh") == zh
    assert localize_number(written, "ru") == ru


def test_placeholders_are_filled_with_numbers_written_the_readers_way():
    assert t("about {x:.2g} at T = {T}", x=1.6e-7, T=50) == "about 1.6e-07 at T = 50"
    with using("ru"):
        assert t("about {x:.2g} at T = {T}", x=1.6e-7, T=50).endswith("1,6·10⁻⁷ at T = 50")
        assert number(np.float32(0.5), ".2f") == "0,50"
        assert number(1234567, ",") == "1\u00a0234\u00a0567"


def test_counts_pick_their_form_and_the_english_ones_read_right():
    assert tn("{n} step", "{n} steps", 1) == "1 step"
    assert tn("{n} step", "{n} steps", 2) == "2 steps"
    assert tn("{n:,} step", "{n:,} steps", 1200) == "1,200 steps"


def test_a_kept_message_renders_in_the_language_of_whoever_reads_it():
    message = MsgN("{n} job ahead", "{n} jobs ahead", 3)
    assert str(message) == "3 jobs ahead"
    assert message == MsgN("{n} job ahead", "{n} jobs ahead", 3) != MsgN("{n} job ahead", "{n} jobs ahead", 4)
    nested = Msg("Waiting: {why}", why=message)
    assert str(nested) == "Waiting: 3 jobs ahead"


def test_the_language_is_per_thread_and_per_run():
    seen = {}
    with using("ru"):
        thread = threading.Thread(target=lambda: seen.setdefault("worker", language()))
        thread.start()
        thread.join()
        seen["run"] = language()
    assert seen == {"worker": "en", "run": "ru"} and language() == "en"


def test_the_link_keeps_a_chosen_language_and_only_a_chosen_one():
    assert to_query(parse_query({"lang": "zh-CN", "cell": "lstm"})) == {"cell": "lstm", "lang": "zh"}
    assert to_query(parse_query({"cell": "lstm"})) == {"cell": "lstm"}
    state = parse_query({"lang": "xx", "cell": "lstm"})
    assert state.lang is None and to_query(state) == {"cell": "lstm"} and len(state.notes) == 1
    assert "xx" in state.notes[0]


def test_a_link_differs_between_languages_only_in_lang():
    en, ru = to_query(parse_query({"cell": "mgu", "lang": "en"})), to_query(parse_query({"cell": "mgu", "lang": "ru"}))
    assert {k: v for k, v in en.items() if k != "lang"} == {k: v for k, v in ru.items() if k != "lang"}
