"""The classes that predict together and their answers: the store a page asks (:func:`current_answers`: this
process's book, :mod:`.class_book`, or with the Ray executor the cluster's actor, every web process asking it), and
what a page names in it (the teacher's actions, the refusal a student or teacher may meet)."""

from __future__ import annotations

import importlib

from rnnlab.server.answers.class_book import (
    BOOK,
    CLOSE,
    GOTO,
    RESET,
    REVEAL,
    SECOND,
    AnswerRefused,
    AnswerStore,
)
from rnnlab.server.work.executor import executor_name

__all__ = ["CLOSE", "GOTO", "RESET", "REVEAL", "SECOND", "AnswerRefused", "AnswerStore", "current_answers"]
RAY_ANSWERS = "rnnlab.server.on_ray.answers_actor"  # imported by name, only with the Ray executor


def current_answers() -> AnswerStore:
    """Where this process's classes and their answers are kept: this process's book, or with the Ray executor the
    cluster's actor, which every web process asks (a class outlives any one of them)."""
    if executor_name() == "ray":
        return importlib.import_module(RAY_ANSWERS).shared_answers()
    return BOOK
