"""A class of eight through Streamlit's websocket protocol and no browser (:mod:`tests.load.class_answers`), against a
server of its own: the teacher opens the class through the share dialog, the students answer in a 3 s window, again
in a second round, and the teacher reveals. Asserted, not timed: every answer is taken and shown taken on its
student's page, the teacher's chart counts every one of them in each round without a click, and every student's
page shows the run after Reveal; no error. The question is the cheapest Explore preset's (ten time steps), so that
its run is ready soon after the answers. The summary is printed (run with -s) and written to
test-artifacts/class-protocol.json.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.conftest import streamlit_server
from tests.load import class_answers
from tests.load.protocol_client import run_apart

STUDENTS = 8
PRESET = "noisy_carry_adding"
TIMEOUT_S = 150.0


@pytest.fixture(scope="module")
def class_server(artifacts: Path):
    """A server of its own (log: test-artifacts/streamlit-server-class.log)."""
    with streamlit_server(artifacts / "streamlit-server-class.log") as base:
        yield base


@pytest.mark.e2e
def test_a_class_answers_twice_and_every_answer_reaches_the_teacher_and_the_run_every_student(
        class_server: str, artifacts: Path) -> None:
    lesson = run_apart(class_answers.run_lesson(class_server, STUDENTS, window_s=3.0, rounds=2, timeout_s=TIMEOUT_S,
                                          preset=PRESET))
    summary = class_answers.summarise(lesson)
    (artifacts / "class-protocol.json").write_text(json.dumps(summary, indent=2))
    print(json.dumps(summary, indent=2))
    assert summary["errors"] == []
    for r in (0, 1):
        answered = summary[f"round{r + 1}"]
        assert answered["answers_taken"] == STUDENTS, answered
        assert answered["teacher_final_count"] == STUDENTS, answered
        assert all(len(s.acks) == 2 and s.acks[r] is not None for s in lesson.students)
    assert summary["reveal"]["students_with_result"] == STUDENTS and lesson.teacher_result_s is not None
