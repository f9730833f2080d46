"""A class predicting together, as values: its code, its questions (presets) and what the class has answered, the
links for students and for the teacher, and the answers as a table.

A teacher opens a class for one or more presets (each a question with choices and the answer its run confirms,
:mod:`rnnlab.sharing.presets`). Students join with the class's short code, and answer the current question by the
index of a choice, so that an answer is the same whatever language it was read in. A question takes answers in a
first round and, after a discussion, optionally in a second; then the teacher reveals it. The store that keeps a
class (:mod:`rnnlab.server.answers`) hands out :class:`ClassView` snapshots, and screens are drawn from them.
"""

from __future__ import annotations

import csv
import io
import re
import secrets
import unicodedata
from collections.abc import Container, Sequence
from dataclasses import dataclass
from urllib.parse import urlencode, urlsplit, urlunsplit

from rnnlab.i18n import LANGUAGES
from rnnlab.sharing.presets import PRESETS_BY_KEY, Preset

CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no I, O, 0 or 1: read off a projector without doubt
CODE_LENGTH = 6
CLASS_PATH = "classroom"  # the class page's address under the app's
CODE_PARAM, TEACHER_PARAM = "code", "teacher"  # the class page's query: the code, and the teacher's secret
SECRET_BYTES = 24  # the teacher's secret: 192 random bits
ANSWERING, REVEALED = "answering", "revealed"
ROUNDS = 2  # a first answer, and one more after a discussion


def new_code(taken: Container[str] = ()) -> str:
    """A random class code (:data:`CODE_LENGTH` letters and digits of :data:`CODE_ALPHABET`) not in ``taken``."""
    while True:
        code = "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))
        if code not in taken:
            return code


def new_secret() -> str:
    """An unguessable secret for the teacher's link (URL-safe)."""
    return secrets.token_urlsafe(SECRET_BYTES)


# Cyrillic and Greek characters that look like a Latin letter or digit of a projected code (Unicode's confusables,
# UTS #39), as a phone's Cyrillic or Greek keyboard gives them: capitals that look like the capital, small letters
# that look like the small letter (or a digit). Read first (before NFKC, which folds full-width forms, a Chinese input
# method's, but turns a lunate sigma into a sigma), then again once the code is in capitals (a small к is then К).
LOOK_ALIKES = str.maketrans({
    "А": "A", "В": "B", "Е": "E", "З": "3", "К": "K", "М": "M", "Н": "H", "Р": "P", "С": "C", "Т": "T", "У": "Y",
    "Х": "X", "Ѕ": "S", "Ј": "J", "Ѵ": "V", "Ү": "Y", "Ӡ": "3", "Ԍ": "G", "Ԝ": "W",  # Cyrillic capitals
    "а": "a", "б": "6", "г": "r", "е": "e", "р": "p", "с": "c", "у": "y", "х": "x", "ѕ": "s", "ј": "j", "ѡ": "w",
    "ѵ": "v", "ү": "y", "һ": "h", "ҽ": "e", "ԁ": "d", "ԛ": "q", "ԝ": "w",  # Cyrillic small letters
    "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Κ": "K", "Μ": "M", "Ν": "N", "Ρ": "P", "Τ": "T", "Υ": "Y",
    "Χ": "X", "Ϳ": "J", "ϒ": "Y", "Ϝ": "F", "Ϩ": "2", "Ϲ": "C", "Ϻ": "M",  # Greek (and Coptic) capitals
    "α": "a", "γ": "y", "ν": "v", "ρ": "p", "υ": "u", "ϱ": "p", "ϲ": "c", "ϳ": "j",  # Greek small letters
})
SEPARATORS = re.compile(r"[\s\-\u2010-\u2015\u2212]")  # spaces, hyphens, dashes and the minus sign


def normal_code(text: str | None) -> str | None:
    """A class code as typed or linked, in its one form: any case, spaces or dashes between its characters, full-width
    forms, and Cyrillic or Greek letters that look like its Latin ones; None when it cannot be a code."""
    if not text:
        return None
    typed = unicodedata.normalize("NFKC", str(text)[:40].translate(LOOK_ALIKES))
    code = SEPARATORS.sub("", typed).upper().translate(LOOK_ALIKES)
    if len(code) != CODE_LENGTH or any(c not in CODE_ALPHABET for c in code):
        return None
    return code


def spaced(code: str) -> str:
    """A code as projected: in two halves (``ABC 234``), which a class reads aloud without losing its place."""
    half = len(code) // 2
    return f"{code[:half]} {code[half:]}"


@dataclass(frozen=True)
class Question:
    """One question of a class: its preset, whether it takes answers or is revealed, the round open for answers
    (or the last one, once revealed), and the answers' counts per round (``counts[r][i]``: round r + 1, choice i)."""

    preset: str
    phase: str = ANSWERING
    round: int = 1
    counts: tuple[tuple[int, ...], ...] = ()

    @property
    def lesson(self) -> Preset:
        return PRESETS_BY_KEY[self.preset]

    @property
    def revealed(self) -> bool:
        return self.phase == REVEALED

    def answered(self, round_: int | None = None) -> int:
        """How many answered in ``round_`` (default: the current round)."""
        r = (round_ or self.round) - 1
        return sum(self.counts[r]) if 0 <= r < len(self.counts) else 0


@dataclass(frozen=True)
class ClassView:
    """What everyone in a class may see of it at one moment (never the teacher's secret).

    ``stage`` changes whenever the teacher changes what students see (a reveal, a second round, another question,
    a reset); ``version`` whenever anything changes (an answer too)."""

    code: str
    questions: tuple[Question, ...]
    current: int
    joined: int
    expires_at: float  # seconds since the epoch
    stage: int
    version: int

    @property
    def question(self) -> Question:
        return self.questions[self.current]


@dataclass(frozen=True)
class Ballot:
    """One student's own answers: ``answers[(question, round)]`` is the index of the choice picked."""

    answers: tuple[tuple[int, int, int], ...] = ()  # (question, round, choice), sorted

    def choice(self, question: int, round_: int) -> int | None:
        return next((c for q, r, c in self.answers if q == question and r == round_), None)

    def with_answer(self, question: int, round_: int, choice: int) -> Ballot:
        kept = [(q, r, c) for q, r, c in self.answers if (q, r) != (question, round_)]
        return Ballot(tuple(sorted([*kept, (question, round_, choice)])))


def presets_of(keys: Sequence[str]) -> tuple[str, ...]:
    """The presets a class asks about, in order, each once; ValueError for an unknown key, none, or one without a
    question."""
    chosen = tuple(dict.fromkeys(keys))
    unknown = [k for k in chosen if k not in PRESETS_BY_KEY or not PRESETS_BY_KEY[k].choices]
    if unknown or not chosen:
        raise ValueError(f"a class needs presets with questions; not usable: {unknown or 'none given'}")
    return chosen


# ---- links ------------------------------------------------------------------------------------------------------
def app_base(page_url: str, page_path: str = "") -> str:
    """The app's address from a page's (``st.context.url``) and that page's path (``explore``; '' for the home
    page): without the page, its query and its fragment."""
    parts = urlsplit(page_url or "")
    path = parts.path.rstrip("/")
    if page_path and path.endswith("/" + page_path.strip("/")):
        path = path[: -len(page_path.strip("/")) - 1]
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))


def _language_query(lang: str | None) -> dict[str, str]:
    if lang is not None and lang not in LANGUAGES:
        raise ValueError(f"unknown language: {lang!r}")
    return {"lang": lang} if lang else {}


def student_link(base: str, code: str, lang: str | None = None) -> str:
    """The link students open: the class page with the code and the class's language (None: each student reads it
    in their browser's; each may still switch). It never holds the teacher's secret."""
    query = {CODE_PARAM: code, **_language_query(lang)}
    return f"{base.rstrip('/')}/{CLASS_PATH}?{urlencode(query)}"


def teacher_link(base: str, code: str, secret: str, lang: str | None = None) -> str:
    """The teacher's link: the class page with the code, the secret that lets its holder reveal and reset, and the
    class's language."""
    query = {CODE_PARAM: code, TEACHER_PARAM: secret, **_language_query(lang)}
    return f"{base.rstrip('/')}/{CLASS_PATH}?{urlencode(query)}"


# ---- the answers as a table ---------------------------------------------------------------------------------------
CSV_COLUMNS = ("question", "preset", "text", "round", "choice", "choice_text", "answers", "share", "correct",
               "revealed")


def answers_csv(view: ClassView) -> str:
    """The class's answers per question, round and choice, counts only (no student is named), in English: one row
    per choice of each round that took answers."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for number, question in enumerate(view.questions, start=1):
        preset = question.lesson
        for round_, counts in enumerate(question.counts, start=1):
            if round_ > question.round:
                break
            total = sum(counts)
            for i, (choice, n) in enumerate(zip(preset.choices, counts)):
                writer.writerow([number, preset.key, preset.question, round_, i + 1, choice, n,
                                 f"{n / total:.3f}" if total else "", str(i == preset.answer).lower(),
                                 str(question.revealed).lower()])
    return out.getvalue()
