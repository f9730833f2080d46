"""The classes that predict together, and their answers: server state that every web process of a class shares.

:class:`AnswerStore` is what a page needs of it. :class:`ClassBook` keeps the classes in this process's memory (one
web process: the laptop that serves a class); with several web processes the book lives in one Ray actor that they
all ask (:mod:`rnnlab.server.on_ray.answers_actor`), so that the answers survive a web process being killed.
:func:`rnnlab.server.answers.current_answers` chooses, as the executor is chosen.

Who answers is the gate's fair-share identity (:func:`rnnlab.cluster.browser.client_key`: a browser, on its
machine): one answer per student and question and round, which they may change until the teacher reveals it.
The book keeps only a salted hash of each student's key and of their address, and the index of each choice.

Bounded: a class lives ``RNNLAB_CLASS_HOURS`` (then it and its answers are gone); at most ``RNNLAB_MAX_CLASSES``
classes at once (one person keeps at most :data:`CLASSES_PER_OWNER`: opening more ends their oldest), at most
``RNNLAB_CLASS_MAX_STUDENTS`` students a class and ``RNNLAB_CLASS_STUDENTS_PER_ADDRESS`` of one address (browser ids
are free to make); each student may change an answer a few times in a row (:data:`BURST`), then once every
:data:`REFILL_S`: a flood of answers changes nothing but its sender's own answer, and is refused beyond that.
"""

from __future__ import annotations

import hashlib
import hmac
import math
import os
import re
import secrets
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from rnnlab.i18n import Msg, MsgN
from rnnlab.server.access.clients import address_of
from rnnlab.sharing import classes
from rnnlab.sharing.classes import ANSWERING, REVEALED, ROUNDS, Ballot, ClassView, Question

ENV_HOURS = "RNNLAB_CLASS_HOURS"
ENV_MAX_CLASSES = "RNNLAB_MAX_CLASSES"
ENV_MAX_STUDENTS = "RNNLAB_CLASS_MAX_STUDENTS"
ENV_PER_ADDRESS = "RNNLAB_CLASS_STUDENTS_PER_ADDRESS"
FORMER_NAMES = {ENV_MAX_STUDENTS: "RNNLAB_CLASS_MAX_VOTERS", ENV_PER_ADDRESS: "RNNLAB_CLASS_VOTERS_PER_ADDRESS"}
DEFAULT_HOURS, MAX_HOURS = 3.0, 12.0
DEFAULT_MAX_CLASSES = 50
DEFAULT_MAX_STUDENTS = 500
DEFAULT_PER_ADDRESS = 50
CLASSES_PER_OWNER = 3
BURST, REFILL_S = 8, 2.0  # answers a student may give in a row, then one more every REFILL_S

REVEAL, SECOND, RESET, GOTO, CLOSE = "reveal", "second", "reset", "goto", "close"
ACTIONS = (REVEAL, SECOND, RESET, GOTO, CLOSE)


class AnswerRefused(Exception):
    """What a student or teacher asked for was refused; ``message`` says why, in the reader's language when
    shown."""

    def __init__(self, message: Msg):
        super().__init__(message.message)
        self.message = message

    def __reduce__(self):  # picklable: it crosses to web processes from the cluster's actor
        return (type(self), (self.message,))


class ClassGone(AnswerRefused):
    """No class has this code: it ended, it was never opened, or the code is mistyped."""


class NotTeacher(AnswerRefused):
    """The secret is not the class's teacher's."""


@dataclass(frozen=True)
class Opened:
    """A class just opened: its code, the teacher's secret (given out once, never kept in the clear) and its view."""

    code: str
    secret: str
    view: ClassView


class AnswerStore(Protocol):
    """The classes and their answers, as a page asks for them: :class:`ClassBook` here or the cluster's actor."""

    def open(self, presets: Sequence[str], owner: str) -> Opened: ...
    def view(self, code: str) -> ClassView: ...
    def join(self, code: str, student: str) -> Ballot: ...
    def answer(self, code: str, student: str, question: int, round_: int, choice: int) -> Ballot: ...
    def teach(self, code: str, secret: str, action: str, question: int | None = None) -> ClassView | None: ...
    def is_teacher(self, code: str, secret: str) -> bool: ...


# ---- bounds -------------------------------------------------------------------------------------------------------
def env_count(name: str, default: int) -> int:
    """A whole number of at least 1 from the environment variable ``name`` (or its former name, when only that is
    set); ``default`` when unset or malformed."""
    given = os.environ.get(name, os.environ.get(FORMER_NAMES.get(name, ""), default))
    try:
        value = int(given)
    except ValueError:
        return default
    return value if value >= 1 else default


@dataclass(frozen=True)
class Limits:
    """How long a class lives (hours, at most :data:`MAX_HOURS`) and how much the book keeps."""

    hours: float = DEFAULT_HOURS
    max_classes: int = DEFAULT_MAX_CLASSES
    max_students: int = DEFAULT_MAX_STUDENTS
    per_address: int = DEFAULT_PER_ADDRESS
    per_owner: int = CLASSES_PER_OWNER
    burst: int = BURST
    refill_s: float = REFILL_S

    @classmethod
    def from_env(cls) -> Limits:
        try:
            hours = float(os.environ.get(ENV_HOURS, DEFAULT_HOURS))
        except ValueError:
            hours = DEFAULT_HOURS
        hours = min(hours, MAX_HOURS) if math.isfinite(hours) and hours > 0 else DEFAULT_HOURS
        return cls(hours, env_count(ENV_MAX_CLASSES, DEFAULT_MAX_CLASSES),
                   env_count(ENV_MAX_STUDENTS, DEFAULT_MAX_STUDENTS), env_count(ENV_PER_ADDRESS, DEFAULT_PER_ADDRESS))


def gone(code: str, hours: float) -> ClassGone:
    """The one message for a code that names no open class."""
    whole = max(1, round(hours))
    # TRANSLATORS: {code} is a class code such as ABC234; {n} how many hours a class lasts
    return ClassGone(MsgN("There is no open class with the code {code}. A class ends {n} hour after it opens, or "
                          "when the teacher ends it: the code may be from an earlier lesson, or mistyped. Check it, "
                          "or ask your teacher for the link.",
                          "There is no open class with the code {code}. A class ends {n} hours after it opens, or "
                          "when the teacher ends it: the code may be from an earlier lesson, or mistyped. Check it, "
                          "or ask your teacher for the link.", whole, code=code))


CLOSED_NOW = Msg("This question no longer takes answers: the teacher has revealed it or moved on. The page now "
                 "shows the question the teacher is on.")
TOO_FAST = Msg("You have changed your answer many times in a short while. Wait a few seconds, then pick again.")


# ---- the book -----------------------------------------------------------------------------------------------------
@dataclass
class Student:
    """One student of a class: the hash of their address, their answers, and their allowance of answers."""

    address: str
    answers: dict[tuple[int, int], int] = field(default_factory=dict)
    tokens: float = float(BURST)
    refilled_at: float = 0.0


@dataclass
class Lesson:
    """One open class."""

    code: str
    secret_digest: bytes
    owner: str
    presets: tuple[str, ...]
    expires_at: float
    opened_at: float
    phases: list[str]
    rounds: list[int]
    counts: list[list[list[int]]]  # question -> round -> choice -> answers
    current: int = 0
    stage: int = 0
    version: int = 0
    students: dict[str, Student] = field(default_factory=dict)
    per_address: Counter[str] = field(default_factory=Counter)
    shown: ClassView | None = None  # the view of this version, made once

    def changed(self, stage: bool = False) -> None:
        self.version += 1
        self.stage += int(stage)
        self.shown = None

    def view(self) -> ClassView:
        if self.shown is None:
            questions = tuple(Question(p, self.phases[q], self.rounds[q], tuple(map(tuple, self.counts[q])))
                              for q, p in enumerate(self.presets))
            self.shown = ClassView(self.code, questions, self.current, len(self.students), self.expires_at,
                                   self.stage, self.version)
        return self.shown

    def ballot(self, student: Student) -> Ballot:
        return Ballot(tuple(sorted((q, r, c) for (q, r), c in student.answers.items())))


def digest(secret: str) -> bytes:
    return hashlib.sha256(secret.encode()).digest()


class ClassBook:
    """Open classes by code, in this process. Thread-safe; every method returns at once."""

    def __init__(self, limits: Limits | None = None, clock: Callable[[], float] = time.time):
        self.limits = limits or Limits.from_env()
        self.clock = clock
        self._lock = threading.Lock()
        self._classes: dict[str, Lesson] = {}
        self._salt = secrets.token_bytes(16)

    def open(self, presets: Sequence[str], owner: str) -> Opened:
        """A new class for ``presets`` (keys), opened by ``owner`` (a client key): its code and the teacher's
        secret. Beyond :attr:`Limits.per_owner` classes of one owner the oldest ends; AnswerRefused when the server
        keeps as many classes as it may."""
        keys = classes.presets_of(presets)
        secret = classes.new_secret()
        with self._lock:
            now = self._expire()
            owner = self._hash(owner)
            mine = sorted((c for c in self._classes.values() if c.owner == owner), key=lambda c: c.opened_at)
            for old in mine[: max(0, len(mine) - self.limits.per_owner + 1)]:
                del self._classes[old.code]
            if len(self._classes) >= self.limits.max_classes:
                # TRANSLATORS: {n} is how many classes the server keeps open at once
                raise AnswerRefused(MsgN("This server has {n} class open, as many as it keeps at once. Try again "
                                       "when one has ended.", "This server has {n} classes open, as many as it "
                                       "keeps at once. Try again when one has ended.", len(self._classes)))
            sizes = [len(classes.PRESETS_BY_KEY[k].choices) for k in keys]
            lesson = Lesson(classes.new_code(self._classes), digest(secret), owner, keys,
                            now + self.limits.hours * 3600, now, [ANSWERING] * len(keys), [1] * len(keys),
                            [[[0] * n for _ in range(ROUNDS)] for n in sizes])
            self._classes[lesson.code] = lesson
            return Opened(lesson.code, secret, lesson.view())

    def view(self, code: str) -> ClassView:
        """The class ``code`` as everyone may see it; ClassGone when there is none."""
        with self._lock:
            return self._live(code).view()

    def join(self, code: str, student: str) -> Ballot:
        """``student`` (a client key) is in class ``code`` (counted as joined); their answers so far."""
        with self._lock:
            lesson = self._live(code)
            return lesson.ballot(self._student(lesson, student))

    def answer(self, code: str, student: str, question: int, round_: int, choice: int) -> Ballot:
        """``student``'s answer to ``question`` in ``round_``: the index of a choice. Refused when that question and
        round no longer take answers, the choice does not exist, or the student answers too fast."""
        with self._lock:
            lesson = self._live(code)
            person = self._student(lesson, student)
            q = int(question)
            if q != lesson.current or lesson.phases[q] != ANSWERING or int(round_) != lesson.rounds[q]:
                raise AnswerRefused(CLOSED_NOW)
            counts = lesson.counts[q][lesson.rounds[q] - 1]
            if not 0 <= int(choice) < len(counts):
                raise AnswerRefused(Msg("That is not one of this question's choices."))
            key, before = (q, lesson.rounds[q]), person.answers.get((q, lesson.rounds[q]))
            if before == int(choice):
                return lesson.ballot(person)
            self._spend(person)
            if before is not None:
                counts[before] -= 1
            counts[int(choice)] += 1
            person.answers[key] = int(choice)
            lesson.changed()
            return lesson.ballot(person)

    def teach(self, code: str, secret: str, action: str, question: int | None = None) -> ClassView | None:
        """The teacher's ``action`` on the current question (or, for ``goto``, on ``question``): reveal it, open its
        second round, reset its answers, move to it, or close the class (None then). NotTeacher for any other
        secret."""
        if action not in ACTIONS:
            raise ValueError(f"unknown action {action!r}; known: {', '.join(ACTIONS)}")
        with self._lock:
            lesson = self._live(code)
            if not hmac.compare_digest(digest(secret or ""), lesson.secret_digest):
                # TRANSLATORS: {code} is a class code such as ABC234
                raise NotTeacher(Msg("Only the teacher of class {code} can do this: reveal, reset or move on.",
                                     code=code))
            if action == CLOSE:
                del self._classes[code]
                return None
            self._act(lesson, action, question)
            lesson.changed(stage=True)
            return lesson.view()

    def is_teacher(self, code: str, secret: str) -> bool:
        """Whether ``secret`` is the teacher's of the open class ``code`` (compared in constant time)."""
        with self._lock:
            self._expire()
            lesson = self._classes.get(code)
            return lesson is not None and hmac.compare_digest(digest(secret or ""), lesson.secret_digest)

    def __len__(self) -> int:
        with self._lock:
            self._expire()
            return len(self._classes)

    def students(self, code: str) -> int:
        """How many students class ``code`` holds (0 when there is none)."""
        with self._lock:
            lesson = self._classes.get(code)
            return len(lesson.students) if lesson is not None else 0

    # ---- internals (with the lock held) ------------------------------------------------------------------------
    def _hash(self, text: str) -> str:
        return hmac.new(self._salt, text.encode(), hashlib.sha256).hexdigest()[:24]

    def _expire(self) -> float:
        now = self.clock()
        for code in [c for c, lesson in self._classes.items() if lesson.expires_at <= now]:
            del self._classes[code]
        return now

    def _live(self, code: str) -> Lesson:
        self._expire()
        read = classes.normal_code(code)
        lesson = self._classes.get(read or "")
        if lesson is None:  # the code as read, else as given in Latin letters and digits: shown to whoever gave it
            raise gone(read or re.sub(r"[^A-Za-z0-9]", "", str(code))[:12], self.limits.hours)
        return lesson

    def _student(self, lesson: Lesson, student: str) -> Student:
        key = self._hash(student)
        person = lesson.students.get(key)
        if person is not None:
            return person
        address = self._hash(address_of(student)) if address_of(student) else ""
        if len(lesson.students) >= self.limits.max_students:
            # TRANSLATORS: {n} is how many students have joined the class
            raise AnswerRefused(MsgN("This class is full: {n} student has joined, as many as it takes. Ask your "
                                   "teacher to open another class.", "This class is full: {n} students have joined, "
                                   "as many as it takes. Ask your teacher to open another class.",
                                   len(lesson.students)))
        if address and lesson.per_address[address] >= self.limits.per_address:
            # TRANSLATORS: {n} is how many students may join one class from one network address
            raise AnswerRefused(MsgN("{n} student has already joined this class from your network address, as many "
                                   "as one address may bring. Ask your teacher: the server's limit can be raised.",
                                   "{n} students have already joined this class from your network address, as many "
                                   "as one address may bring. Ask your teacher: the server's limit can be raised.",
                                   self.limits.per_address))
        person = lesson.students[key] = Student(address, tokens=float(self.limits.burst), refilled_at=self.clock())
        if address:
            lesson.per_address[address] += 1
        lesson.changed()
        return person

    def _spend(self, person: Student) -> None:
        now = self.clock()
        person.tokens = min(float(self.limits.burst), person.tokens + (now - person.refilled_at) / self.limits.refill_s)
        person.refilled_at = now
        if person.tokens < 1:
            raise AnswerRefused(TOO_FAST)
        person.tokens -= 1

    def _act(self, lesson: Lesson, action: str, question: int | None) -> None:
        q = lesson.current
        if action == GOTO:
            if question is None or not 0 <= int(question) < len(lesson.presets):
                raise ValueError(f"no question {question!r} in this class")
            lesson.current = int(question)
        elif action == REVEAL:
            lesson.phases[q] = REVEALED
        elif action == SECOND:
            if lesson.phases[q] == ANSWERING and lesson.rounds[q] < ROUNDS:
                lesson.rounds[q] += 1
        elif action == RESET:
            lesson.phases[q], lesson.rounds[q] = ANSWERING, 1
            lesson.counts[q] = [[0] * len(lesson.counts[q][0]) for _ in range(ROUNDS)]
            for person in lesson.students.values():
                for key in [k for k in person.answers if k[0] == q]:
                    del person.answers[key]


BOOK = ClassBook()  # this process's classes (the default, embedded executor)
