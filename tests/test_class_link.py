"""Class mode's link and QR code: the link opens the same experiment with the chosen controls hidden and
autorun as chosen (read back by the URL parser), and the QR code decodes, with an independent decoder, to it."""

from __future__ import annotations

import io
from urllib.parse import parse_qs, urlsplit

import numpy as np
import pytest
import zxingcpp
from PIL import Image

from rnnlab.config import Config
from rnnlab.sharing import class_link
from rnnlab.sharing.urlstate import UrlState, parse_query

BASE = "http://192.168.1.20:8501/explore"


def read_back(link: str) -> UrlState:
    query = {k: v[-1] for k, v in parse_qs(urlsplit(link).query).items()}
    return parse_query(query)


@pytest.mark.parametrize("hide", [set(), {"cell"}, {"cell", "carry_mode", "lr", "seq_len"}])
@pytest.mark.parametrize("autorun", [True, False])
def test_the_link_opens_the_same_experiment_with_those_controls_hidden(hide, autorun):
    shared = UrlState(config=Config(cell="lstm", seq_len=40, carry_mode="noisy", lr=0.003))
    link = class_link.projected_link(BASE, shared, hide, autorun)
    assert link.startswith(BASE + "?")
    back = read_back(link)
    assert back.config == shared.config and back.hidden == frozenset(hide) and back.autorun is autorun
    assert back.notes == []


def test_unknown_controls_are_refused():
    with pytest.raises(ValueError, match="unknown controls"):
        class_link.projected_link(BASE, UrlState(), {"cell", "password"}, True)


@pytest.mark.parametrize("hide", [set(), set(class_link.HIDEABLE)])
def test_the_qr_code_decodes_to_the_link(hide):
    link = class_link.projected_link(BASE, UrlState(config=Config(task="copy", seq_len=20)), hide, True)
    image = Image.open(io.BytesIO(class_link.qr_png(link))).convert("L")
    decoded = zxingcpp.read_barcodes(np.asarray(image))
    assert [d.text for d in decoded] == [link]
    assert decoded[0].format == zxingcpp.BarcodeFormat.QRCode


@pytest.mark.parametrize("lang", class_link.CLASS_LANGUAGES)
@pytest.mark.parametrize("teacher", [None, "en", "zh", "ru"])
def test_the_link_has_the_class_language_or_none_for_each_students_browser(lang, teacher):
    shared = UrlState(config=Config(cell="gru", seq_len=40), lang=teacher)
    link = class_link.projected_link(BASE, shared, {"cell"}, True, lang)
    query = parse_qs(urlsplit(link).query)
    assert query.get("lang") == ([lang] if lang else None)  # no lang: each student's browser chooses
    back = read_back(link)
    assert back.lang == lang and back.config == shared.config and back.notes == []


@pytest.mark.parametrize("teacher", [None, "en", "zh", "ru"])
def test_the_class_language_starts_as_the_teachers_chosen_one(teacher):
    assert class_link.default_class_language(UrlState(lang=teacher)) == teacher
    assert class_link.CLASS_LANGUAGES == (None, "en", "zh", "ru")


def test_an_unknown_class_language_is_refused():
    with pytest.raises(ValueError, match="unknown language"):
        class_link.projected_link(BASE, UrlState(), set(), True, "de")
