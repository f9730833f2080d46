"""The classes' answers for a cluster's web processes: one named, detached actor on the head node that keeps a
:class:`~rnnlab.server.answers.class_book.ClassBook`, so that a class and its answers outlive any web process (a
student whose web process was killed reconnects through the proxy to another, which asks the same actor).

:class:`RemoteAnswers` is that actor from a web process, with :class:`~rnnlab.server.answers.class_book.AnswerStore`'s
interface. A class's view is asked of the actor at most every :data:`VIEW_KEPT_S` per web process however many of its
students watch it (the teacher's chart and the students' pages ask every second or two), and each call waits at most
:data:`CALL_TIMEOUT_S`: an actor that does not answer is one message on the page (:data:`UNAVAILABLE`), not a page that
hangs. A refusal made in the actor (a closed question, a full class) comes back as the same
:class:`~rnnlab.server.answers.class_book.AnswerRefused`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from typing import Any

import ray

from rnnlab.i18n import Msg
from rnnlab.server.answers.class_book import AnswerRefused, ClassBook, Limits, Opened
from rnnlab.server.on_ray import executor
from rnnlab.server.on_ray.actors import shared_actor
from rnnlab.sharing.classes import Ballot, ClassView

ANSWERS_NAME = "rnnlab-answers"
CALL_TIMEOUT_S = 3.0
START_TIMEOUT_S = 60.0  # a new actor's process starts and imports rnnlab first
VIEW_KEPT_S = 0.5
UNAVAILABLE = Msg("This class's answers cannot be reached just now. Try again in a moment.")

_shared_lock = threading.Lock()
_shared: RemoteAnswers | None = None


class AnswersActor:
    """A :class:`~rnnlab.server.answers.class_book.ClassBook` for the cluster's web processes; every method returns
    at once."""

    def __init__(self, limits: Limits):
        self.book = ClassBook(limits)

    def call(self, method: str, *args: Any) -> tuple[str, Any]:
        """``("ok", value)`` of the book's ``method(*args)``, ``("refused", the refusal)`` or ``("error", text)``."""
        if method not in ("open", "view", "join", "answer", "teach", "is_teacher", "students"):
            return "error", f"no method {method!r}"
        try:
            return "ok", getattr(self.book, method)(*args)
        except AnswerRefused as refused:
            return "refused", refused
        except ValueError as e:
            return "error", str(e)

    def classes(self) -> int:
        return len(self.book)


def answers_actor(limits: Limits | None = None):
    """The cluster's answers actor, created on the head node when none runs (with this process's limits). Needs
    :func:`ray.init` first."""
    return shared_actor(AnswersActor, ANSWERS_NAME, limits or Limits.from_env())


class RemoteAnswers:
    """The answers actor from this web process, as a :class:`~rnnlab.server.answers.class_book.AnswerStore`."""

    def __init__(self, actor=None, timeout_s: float = CALL_TIMEOUT_S, view_kept_s: float = VIEW_KEPT_S):
        self.actor, self.timeout_s, self.view_kept_s = actor, timeout_s, view_kept_s
        self._lock = threading.Lock()
        self._views: dict[str, tuple[float, ClassView | AnswerRefused]] = {}

    def reached(self):
        """The cluster's answers actor, created when none runs and waited for once (its process starts and imports
        rnnlab first)."""
        with self._lock:
            if self.actor is None:
                actor = answers_actor()
                ray.get(actor.classes.remote(), timeout=START_TIMEOUT_S)
                self.actor = actor
            return self.actor

    def call(self, method: str, *args: Any) -> Any:
        try:
            kind, value = ray.get(self.reached().call.remote(method, *args), timeout=self.timeout_s)
        except Exception:  # noqa: BLE001 - the actor is away (restarting, or the head is unreachable)
            raise AnswerRefused(UNAVAILABLE) from None
        if kind == "refused":
            raise value
        if kind == "error":
            raise ValueError(value)
        return value

    def open(self, presets: Sequence[str], owner: str) -> Opened:
        opened: Opened = self.call("open", tuple(presets), owner)
        self._keep(opened.code, opened.view)
        return opened

    def view(self, code: str) -> ClassView:
        """The class's view, asked of the actor at most every :attr:`view_kept_s` by this process."""
        with self._lock:
            at, kept = self._views.get(code, (0.0, None))
        if kept is None or time.monotonic() - at > self.view_kept_s:
            try:
                kept = self.call("view", code)
            except AnswerRefused as refused:
                kept = refused
            self._keep(code, kept)
        if isinstance(kept, AnswerRefused):
            raise kept
        return kept

    def join(self, code: str, student: str) -> Ballot:
        return self.call("join", code, student)

    def answer(self, code: str, student: str, question: int, round_: int, choice: int) -> Ballot:
        return self.call("answer", code, student, question, round_, choice)

    def teach(self, code: str, secret: str, action: str, question: int | None = None) -> ClassView | None:
        view = self.call("teach", code, secret, action, question)
        with self._lock:
            self._views.pop(code, None)
        return view

    def is_teacher(self, code: str, secret: str) -> bool:
        return bool(self.call("is_teacher", code, secret))

    def _keep(self, code: str, value: ClassView | AnswerRefused) -> None:
        with self._lock:
            self._views[code] = (time.monotonic(), value)
            now = time.monotonic()
            for old in [c for c, (at, _) in self._views.items() if now - at > 60 * self.view_kept_s]:
                del self._views[old]


def shared_answers() -> RemoteAnswers:
    """This process's view of the cluster's answers actor (joining the cluster at ``$RNNLAB_RAY_ADDRESS`` first)."""
    global _shared
    with _shared_lock:
        if _shared is None:
            executor.connect()
            _shared = RemoteAnswers()
    return _shared
