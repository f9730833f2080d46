"""The classes' store (rnnlab.server.answers.class_book.ClassBook): one answer per student, question and round, changed
until the teacher reveals it; only the teacher's key reveals, resets or moves on; a flood changes nothing but its
sender's own answer; classes end after their hours and their answers with them; bounded per class, per address and in
all."""

from __future__ import annotations

import pickle
import threading

import pytest

from rnnlab.i18n import using
from rnnlab.server.answers import class_book
from rnnlab.server.answers.class_book import AnswerRefused, ClassBook, ClassGone, Limits, NotTeacher
from rnnlab.sharing import classes
from rnnlab.sharing.presets import PRESETS_BY_KEY

ADDING, GATES = "gru_adding", "gates_keep_the_gradient"


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def book(clock) -> ClassBook:
    return ClassBook(Limits(hours=2, max_classes=5, max_students=40, per_address=4), clock=clock)


def student(i: int, address: str = "10.0.0.7") -> str:
    """A browser behind the proxy, on ``address`` (the client key rnnlab.cluster.browser.client_key gives)."""
    return f"browser:{i:032d}@{address}"


def test_a_class_has_a_short_code_and_a_secret_the_view_never_holds(book):
    opened = book.open([ADDING, GATES, ADDING], "session:teacher")
    assert classes.normal_code(opened.code) == opened.code and len(opened.code) == classes.CODE_LENGTH
    assert len(opened.secret) >= 32 and opened.secret not in repr(opened.view) + repr(pickle.dumps(opened.view))
    assert [q.preset for q in opened.view.questions] == [ADDING, GATES]  # each preset once, in order
    assert book.view(opened.code.lower()).code == opened.code  # typed in any case
    assert book.view(classes.spaced(opened.code)) == opened.view
    with pytest.raises(ValueError):
        book.open(["no_such_preset"], "x")


def test_one_answer_per_student_changed_until_the_reveal(book):
    opened = book.open([ADDING], "t")
    code = opened.code
    book.join(code, student(1))
    book.answer(code, student(1), 0, 1, 1)
    book.answer(code, student(2), 0, 1, 1)
    book.answer(code, student(1), 0, 1, 2)  # changed: counted once, for the new choice
    ballot = book.answer(code, student(1), 0, 1, 2)  # the same again: nothing changes
    view = book.view(code)
    assert view.question.counts[0] == (0, 1, 1) and view.joined == 2 and view.question.answered() == 2
    assert ballot.choice(0, 1) == 2 and book.join(code, student(2)).choice(0, 1) == 1
    book.teach(code, opened.secret, class_book.REVEAL)
    with pytest.raises(AnswerRefused) as refused:
        book.answer(code, student(1), 0, 1, 0)
    assert refused.value.message == class_book.CLOSED_NOW
    assert book.view(code).question.counts[0] == (0, 1, 1)


def test_only_the_teachers_key_reveals_resets_moves_on_or_ends(book):
    opened = book.open([ADDING, GATES], "t")
    code, stage = opened.code, opened.view.stage
    for wrong in ("", "x" * 32, opened.secret[:-1], opened.secret + "x", opened.secret.upper()):
        assert not book.is_teacher(code, wrong)
        for action in class_book.ACTIONS:
            with pytest.raises(NotTeacher):
                book.teach(code, wrong, action, 1)
    assert book.view(code).stage == stage and book.view(code).question.phase == classes.ANSWERING
    assert book.is_teacher(code, opened.secret) and not book.is_teacher("ZZZZZZ", opened.secret)
    assert book.teach(code, opened.secret, class_book.GOTO, 1).current == 1
    with pytest.raises(ValueError):
        book.teach(code, opened.secret, class_book.GOTO, 2)
    assert book.teach(code, opened.secret, class_book.CLOSE) is None
    with pytest.raises(ClassGone):
        book.view(code)


def test_unknown_actions_are_refused(book):
    opened = book.open([ADDING], "t")
    with pytest.raises(ValueError):
        book.teach(opened.code, opened.secret, "delete everything")


def test_a_second_round_keeps_the_first_and_a_reset_clears_the_question(book):
    opened = book.open([ADDING], "t")
    code, key = opened.code, opened.secret
    for i, choice in enumerate((0, 0, 1)):
        book.answer(code, student(i), 0, 1, choice)
    view = book.teach(code, key, class_book.SECOND)
    assert view is not None and view.question.round == 2 and view.stage > opened.view.stage
    with pytest.raises(AnswerRefused):
        book.answer(code, student(0), 0, 1, 2)  # the first round is closed
    book.answer(code, student(0), 0, 2, 1)
    book.answer(code, student(1), 0, 2, 1)
    view = book.view(code)
    assert view.question.counts[0] == (2, 1, 0) and view.question.counts[1] == (0, 2, 0)
    assert view.question.answered(1) == 3 and view.question.answered() == 2
    assert book.teach(code, key, class_book.SECOND).question.round == 2  # no third round
    view = book.teach(code, key, class_book.RESET)
    assert view.question.round == 1 and view.question.counts == ((0, 0, 0), (0, 0, 0))
    assert book.join(code, student(0)).answers == ()


def test_a_flood_changes_nothing_but_its_senders_own_answer(book, clock):
    opened = book.open([ADDING], "t")
    code = opened.code
    book.answer(code, student(1), 0, 1, 0)
    changed, last = 0, None
    for i in range(1000):
        try:
            now = book.answer(code, student(2), 0, 1, i % 3).choice(0, 1)
        except AnswerRefused as e:
            assert e.message == class_book.TOO_FAST
            continue
        changed, last = changed + (now != last), now
    assert changed <= class_book.BURST  # then every change is refused until a moment has passed
    counts = book.view(code).question.counts[0]
    assert sum(counts) == 2 and counts[0] >= 1  # the other student's answer is there, the flood is one answer
    clock.now += class_book.REFILL_S
    book.answer(code, student(2), 0, 1, 2)  # allowed again after a moment
    assert book.join(code, student(2)).choice(0, 1) == 2


def test_students_are_bounded_per_class_and_per_address(book):
    opened = book.open([ADDING], "t")
    code = opened.code
    for i in range(4):
        book.join(code, student(i, "10.0.0.9"))  # one machine minting browser ids
    with pytest.raises(AnswerRefused, match="network address"):
        book.join(code, student(99, "10.0.0.9"))
    book.join(code, student(0, "10.0.0.9"))  # those already in stay in
    for i in range(36):
        book.join(code, f"ip:10.1.{i}.1")
    with pytest.raises(AnswerRefused, match="full"):
        book.join(code, "ip:10.2.0.1")
    assert book.students(code) == 40


def test_classes_end_after_their_hours_and_their_answers_with_them(book, clock):
    opened = book.open([ADDING], "t")
    book.answer(opened.code, student(1), 0, 1, 1)
    clock.now += 2 * 3600 - 1
    assert book.view(opened.code).joined == 1
    clock.now += 2
    with pytest.raises(ClassGone):
        book.view(opened.code)
    assert len(book) == 0 and book.students(opened.code) == 0
    assert not book.is_teacher(opened.code, opened.secret)


def test_classes_are_bounded_in_all_and_per_person(book):
    first = [book.open([ADDING], "teacher-a") for _ in range(class_book.CLASSES_PER_OWNER + 1)]
    with pytest.raises(ClassGone):
        book.view(first[0].code)  # a fourth class of one person ends their oldest
    assert all(book.view(o.code) for o in first[1:])
    book.open([ADDING], "teacher-b")
    book.open([ADDING], "teacher-c")
    with pytest.raises(AnswerRefused, match="class open"):
        book.open([ADDING], "teacher-d")
    assert len(book) == 5


@pytest.mark.parametrize("given", ["ZZZZZZ", "abc", "<b>x</b>](javascript:1)", "QHL ADK" * 20, ""])
def test_a_stale_or_bad_code_gets_one_clear_message(book, given):
    with pytest.raises(ClassGone) as gone:
        book.join(given, student(1))
    shown = gone.value.message.values["code"]
    assert (shown.isalnum() or shown == "") and len(shown) <= 12  # shown as given: letters and digits only
    for lang in ("en", "zh", "ru"):
        with using(lang):
            assert shown in str(gone.value.message)


def test_refusals_cross_processes_whole():
    refused = pickle.loads(pickle.dumps(class_book.gone("ABC234", 3)))
    assert isinstance(refused, ClassGone) and refused.message == class_book.gone("ABC234", 3).message


def test_answers_from_many_threads_are_all_counted(book):
    opened = book.open([GATES], "t")
    code, n = opened.code, 40

    def answer(i: int) -> None:
        for choice in (0, 1, 2, i % 3):
            book.answer(code, f"ip:10.3.{i}.1", 0, 1, choice)

    threads = [threading.Thread(target=answer, args=(i,)) for i in range(n)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    counts = book.view(code).question.counts[0]
    assert counts == tuple(sum(1 for i in range(n) if i % 3 == c) for c in range(3))


def test_limits_come_from_the_environment_bounded(monkeypatch):
    monkeypatch.setenv(class_book.ENV_HOURS, "100")
    monkeypatch.setenv(class_book.ENV_MAX_CLASSES, "7")
    monkeypatch.setenv(class_book.ENV_MAX_STUDENTS, "zero")
    monkeypatch.setenv(class_book.ENV_PER_ADDRESS, "-3")
    limits = Limits.from_env()
    assert limits.hours == class_book.MAX_HOURS and limits.max_classes == 7
    assert limits.max_students == class_book.DEFAULT_MAX_STUDENTS
    assert limits.per_address == class_book.DEFAULT_PER_ADDRESS
    monkeypatch.delenv(class_book.ENV_MAX_STUDENTS)
    monkeypatch.setenv("RNNLAB_CLASS_MAX_VOTERS", "40")  # its former name, still read
    assert Limits.from_env().max_students == 40


def test_every_preset_with_a_question_can_be_asked(book):
    keys = [k for k, p in PRESETS_BY_KEY.items() if p.choices]
    opened = book.open(keys, "t")
    assert [len(q.counts[0]) for q in opened.view.questions] == [len(PRESETS_BY_KEY[k].choices) for k in keys]
