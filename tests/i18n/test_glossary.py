"""The catalogs hold to docs/glossary.md: a message whose English names one of the glossary's ideas says it with the
glossary's word in Chinese and in Russian, one word per idea on every page (the exceptions are listed, each with
why)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from rnnlab.i18n import CATALOGS
from rnnlab.i18n.catalogs import load, po_path

GLOSSARY = Path(__file__).resolve().parents[2] / "docs" / "glossary.md"
# What is not prose in a message: code spans, placeholders, Plotly tokens, LaTeX, calls, dotted and snake_case names.
NOT_PROSE = re.compile(r"`[^`]*`|\{[^{}]*\}|%\{[^}]*\}|\$[^$]*\$|\b[\w.]+\([^()]*\)|\b\w+(?:[._]\w+)+\b|\w+=\S+")


@dataclass(frozen=True)
class Term:
    """One idea: where the English names it, the words that say it in each language, and the messages that may
    say it otherwise (English that uses the word for something else), each exception with its reason."""

    english: str  # the glossary's English entry
    pattern: str  # the English words, as a regex on the message's prose
    zh: str  # a regex: the Chinese term(s)
    ru: str  # a regex: the Russian term(s) (stems, for the cases)
    other_senses: str = ""  # a regex on the prose: the English word meaning something else here
    exceptions: tuple[tuple[str, str], ...] = ()  # (start of a msgid, why it may say it otherwise)


TERMS = (
    Term("probe", r"\bprob(?:e|es|ed|ing)\b", "测量", "измер",
         other_senses=r"causality probe",  # a test of which axis is time (检验, проверка), not the gradient's measure
         exceptions=()),
    Term("sweep", r"\bsweeps?\b", "参数网格实验|测量", "сери"),  # a grid of runs (Compare), probes (Gradient flow)
    Term("hidden unit", r"\bunits?\b", "隐藏单元", "нейрон",
         other_senses=r"gated recurrent unit|gated unit",  # the GRU's and MGU's names
         exceptions=(("The {gate} of every unit at training step {step} (one time step in {every})",
                      "a heatmap's title whose axis names the hidden units: 训练 {step} 步后的{gate}, short enough "
                      "for a phone with its time steps said"),)),
    Term("carry mode", r"\bcarry modes?\b", "初始状态", "начальн"),
    Term("diverged", r"\bdiverg(?:e|es|ed|ing|ence)\b", "发散", "разош|расход"),
    Term("column", r"\bcolumns?\b", "列", "столб"),
    Term("class", r"\bthe class\b|\bstudents?\b", "全班|学生", "студент",
         other_senses=r"on the class|cell class|the class name"),  # a Python class
    Term("cell", r"\bcells?\b", "单元", "ячей|ячее",
         other_senses=r"cell state|dot's cell",  # the LSTM's c (细胞状态, состояние ячейки); a grid's square
         exceptions=()),
    Term("carry", r"\bcarr(?:y|ies)\b", "状态", "состояни",
         other_senses=r"\b(?:carry two numbers|carries the gradient's scale|carry on|carries on|now carries)\b",
         exceptions=(("The zero carry", "an answer to a question that names «начальное состояние»: «Нулевое»"),
                     ("The learned carry", "an answer to a question that names «начальное состояние»: «Обучаемое»"))),
    Term("chunk", r"\bchunks?\b", "段", "блок",
         exceptions=(("|dL/dcarry_init| = {norm:.3g} when the previous chunk's carry", "a chunk of a long sequence "
                      "(фрагмент), not the training's chunk"),
                     ("Create the parameter on every call and use it only when no carry is passed",
                      "a chunk of a long sequence (фрагмент), not the training's chunk"))),
    Term("gate", r"\bgat(?:e|es|ed)\b", "门", "вентил"),
)


def prose(text: str) -> str:
    """``text`` without its code, placeholders and notation: the words a translation must say."""
    return NOT_PROSE.sub(" ", text)


def test_code_and_placeholders_are_not_prose():
    said = prose("In **{mode}** mode it is `cell.initialize_carry(key, shape)` with {init}, like nn.RNN(cell, 4) and "
                 "carry_init=zeros, drawn for every cell")
    assert "initialize_carry" not in said and "mode}" not in said and "nn.RNN" not in said
    assert re.findall(r"\bcells?\b", said) == ["cell"] and "carry_init" not in said


def messages(folder: str):
    for message in load(po_path(folder), folder):
        if message.id:
            english = message.id if isinstance(message.id, str) else message.id[0]
            forms = list(message.string) if isinstance(message.string, (list, tuple)) else [message.string]
            yield english, message.context, forms


def test_the_glossary_names_every_term_the_catalogs_are_held_to():
    text = GLOSSARY.read_text(encoding="utf-8")
    held = [line for line in text.splitlines() if line.startswith("| ") and "**held**" in line.split("|")[1]]
    assert len(held) == len(TERMS), "a row marked held in docs/glossary.md has no term here, or the reverse"
    for term in TERMS:
        row = next((r for r in held if r.split("|")[1].strip().startswith(f"{term.english} (")), None)
        assert row is not None, f"docs/glossary.md has no row for {term.english!r}"
        _, _, zh, ru, *_ = row.split("|")
        assert re.search(term.zh, zh), (term.english, zh)
        assert re.search(term.ru, ru, re.I), (term.english, ru)


@pytest.mark.parametrize(("lang", "folder"), sorted(CATALOGS.items()))
@pytest.mark.parametrize("term", TERMS, ids=lambda term: term.english)
def test_every_message_naming_an_idea_uses_the_glossarys_word(lang, folder, term):
    wanted = re.compile(term.zh if lang == "zh" else term.ru, re.I)
    excused = [start for start, _why in term.exceptions]
    off = []
    for english, context, forms in messages(folder):
        words = prose(english)
        if term.other_senses:
            words = re.sub(term.other_senses, " ", words, flags=re.I)
        if not re.search(term.pattern, words, re.I) or any(english.startswith(start) for start in excused):
            continue
        if not all(wanted.search(form) for form in forms):
            off.append(f"[{context}] {english[:80]!r} -> {forms[0][:80]!r}")
    assert not off, f"{len(off)} {lang} messages say {term.english!r} otherwise:\n" + "\n".join(off)


def test_every_exception_still_names_a_message():
    ids = [english for english, _context, _forms in messages("ru")]
    for term in TERMS:
        for start, _why in term.exceptions:
            assert any(english.startswith(start) for english in ids), (term.english, start)
