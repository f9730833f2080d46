"""What a class's screens show, without Streamlit: the links (a student's never holds the teacher's key), the code as
typed, the answers' CSV (read back with the csv module), the teacher's and a student's screens in each language
(one choice is the same choice in every language) and the spread chart's bars (the counts, the answer marked only
once revealed)."""

from __future__ import annotations

import csv
import io
from urllib.parse import parse_qs, urlsplit

import pytest

from rnnlab.figures import answer_views
from rnnlab.i18n import LANGUAGES, _, using
from rnnlab.server.answers import class_book
from rnnlab.server.answers.class_book import ClassBook, Limits
from rnnlab.session.class_screens import student_interval, student_screen, teacher_screen
from rnnlab.sharing import classes
from rnnlab.sharing.classes import Ballot
from rnnlab.sharing.presets import PRESETS_BY_KEY

ADDING, GATES = "gru_adding", "gates_keep_the_gradient"


@pytest.fixture
def lesson():
    """A class of two questions where four students answered the first: choices 1, 1, 0, 2."""
    book = ClassBook(Limits())
    opened = book.open([ADDING, GATES], "teacher")
    for i, choice in enumerate((1, 1, 0, 2)):
        book.answer(opened.code, f"ip:10.0.0.{i}", 0, 1, choice)
    book.join(opened.code, "ip:10.0.0.9")  # joined, not answered
    return book, opened


def test_the_students_link_never_holds_the_teachers_key():
    base = "http://10.0.0.5:8501"
    link = classes.student_link(base, "ABC234")
    teacher = classes.teacher_link(base, "ABC234", "s3cret-KEY")
    assert urlsplit(link).path == "/classroom" and parse_qs(urlsplit(link).query) == {"code": ["ABC234"]}
    assert parse_qs(urlsplit(teacher).query) == {"code": ["ABC234"], "teacher": ["s3cret-KEY"]}
    assert parse_qs(urlsplit(classes.student_link(base, "ABC234", "zh")).query)["lang"] == ["zh"]
    with pytest.raises(ValueError):
        classes.student_link(base, "ABC234", "fr")


@pytest.mark.parametrize("url, page, base", [
    ("http://10.0.0.5:8501/explore?lr=0.01&sid=x", "explore", "http://10.0.0.5:8501"),
    ("http://host/rnnlab/classroom?code=X#top", "classroom", "http://host/rnnlab"),
    ("http://host:8501/", "", "http://host:8501"),
    ("", "explore", ""),
])
def test_the_apps_address_from_a_pages(url, page, base):
    assert classes.app_base(url, page) == base


@pytest.mark.parametrize("typed, code", [("abc234", "ABC234"), (" ABC-234 ", "ABC234"), ("abc 234", "ABC234"),
                                         ("ABC23", None), ("ABC2340", None), ("ABC 23O", None), ("", None),
                                         (None, None), ("<script>", None)])
def test_a_code_as_typed(typed, code):
    assert classes.normal_code(typed) == code


def test_new_codes_use_the_unambiguous_alphabet_and_avoid_those_taken():
    taken = {classes.new_code() for _ in range(200)}
    assert all(len(c) == 6 and set(c) <= set(classes.CODE_ALPHABET) for c in taken)
    assert not set("IO01") & set(classes.CODE_ALPHABET)
    assert classes.new_code(taken) not in taken


def test_the_answers_csv_counts_each_round_and_names_no_student(lesson):
    book, opened = lesson
    book.teach(opened.code, opened.secret, class_book.SECOND)
    book.answer(opened.code, "ip:10.0.0.0", 0, 2, 1)
    rows = list(csv.DictReader(io.StringIO(classes.answers_csv(book.view(opened.code)))))
    first = [r for r in rows if r["question"] == "1" and r["round"] == "1"]
    assert [int(r["answers"]) for r in first] == [1, 2, 1]
    assert [r["correct"] for r in first] == ["false", "true", "false"]
    assert [float(r["share"]) for r in first] == [0.25, 0.5, 0.25]
    second = [r for r in rows if r["question"] == "1" and r["round"] == "2"]
    assert [int(r["answers"]) for r in second] == [0, 1, 0]
    assert not [r for r in rows if r["question"] == "2" and r["round"] == "2"]  # no second round asked there
    assert {r["choice_text"] for r in first} == set(PRESETS_BY_KEY[ADDING].choices)  # English, whatever the reader's
    assert "10.0.0" not in classes.answers_csv(book.view(opened.code))


@pytest.mark.parametrize("lang", list(LANGUAGES))
def test_the_teachers_screen_counts_and_marks_the_answer_only_once_revealed(lesson, lang):
    book, opened = lesson
    with using(lang):
        screen = teacher_screen(book.view(opened.code), now=opened.view.expires_at - 3 * 3600 + 125)
        assert (screen.joined, screen.answered, screen.first_answered) == (5, 4, None)
        assert screen.spread.counts == ((1, 2, 1),) and screen.spread.answer is None and not screen.revealed
        assert screen.spread.choices == tuple(_(c) for c in PRESETS_BY_KEY[ADDING].choices)
        assert screen.can_second and screen.answer == "" and screen.lesson == ""
        assert screen.heading.startswith(_("Question {k} of {n}: {title}").split("{")[0])
        assert "2" in screen.ends and "57" in screen.ends  # 2 h 57 min more
        view = book.teach(opened.code, opened.secret, class_book.REVEAL)
        screen = teacher_screen(view, now=opened.view.expires_at - 60)
        assert screen.revealed and screen.spread.answer == 1 and not screen.can_second
        assert screen.answer == _(PRESETS_BY_KEY[ADDING].choices[1]) and screen.lesson
        assert "1" in screen.ends


@pytest.mark.parametrize("lang", list(LANGUAGES))
def test_a_students_screen_is_their_own_answer_then_the_verdict(lesson, lang):
    book, opened = lesson
    preset = PRESETS_BY_KEY[ADDING]
    with using(lang):
        mine = book.join(opened.code, "ip:10.0.0.3")  # picked choice 2
        screen = student_screen(book.view(opened.code), mine)
        assert screen.answering and screen.picked == 2 and screen.choices[2] in screen.note
        assert screen.spread is None and screen.verdict == ""
        book.teach(opened.code, opened.secret, class_book.SECOND)
        screen = student_screen(book.view(opened.code), mine)
        assert screen.picked is None and screen.choices[2] in screen.prompt  # the first answer, recalled
        view = book.teach(opened.code, opened.secret, class_book.REVEAL)
        screen = student_screen(view, mine)
        assert not screen.answering and screen.revealed and screen.answer == _(preset.choices[preset.answer])
        assert screen.choices[2] in screen.verdict and screen.answer in screen.verdict
        assert screen.spread is not None and screen.spread.answer == preset.answer
        right = student_screen(view, Ballot(((0, 1, 1),)))
        assert right.verdict != screen.verdict and right.answer in right.verdict


def test_the_same_choice_is_counted_whatever_language_it_was_read_in(lesson):
    book, opened = lesson
    for lang, student in (("zh", "ip:10.0.1.1"), ("ru", "ip:10.0.1.2"), ("en", "ip:10.0.1.3")):
        with using(lang):
            screen = student_screen(book.view(opened.code), book.join(opened.code, student))
            picked = screen.choices.index(_(PRESETS_BY_KEY[ADDING].choices[1]))
            book.answer(opened.code, student, 0, 1, picked)
    assert book.view(opened.code).question.counts[0] == (1, 5, 1)


def test_the_spread_chart_draws_the_counts_and_marks_the_answer():
    fig = answer_views.spread_figure(["zero", "far below the baseline", "above"], [[1, 2, 1], [0, 3, 1]],
                                   ["first answers", "after the discussion"], 1, "The class's answers")
    assert [list(bar.x) for bar in fig.data] == [[1, 2, 1], [0, 3, 1]]
    assert [bar.name for bar in fig.data] == ["first answers", "after the discussion"]
    assert list(fig.data[1].text) == ["0 (0%)", "3 (75%)", "1 (25%)"]
    labels = list(fig.data[0].y)
    assert labels[1].startswith("<b>✓") and not any(label.startswith("<b>") for label in labels[::2])
    before = answer_views.spread_figure(["a", "b"], [[0, 0]], ["first answers"], None, "t")
    assert not any("✓" in label for label in before.data[0].y) and list(before.data[0].text) == ["0 (0%)"] * 2


def test_a_larger_class_looks_less_often_each_so_that_the_class_costs_about_the_same():
    assert [student_interval(n) for n in (0, 1, 30)] == [2.0, 2.0, 2.0]
    assert student_interval(90) == 6.0 and student_interval(300) == student_interval(3000) == 10.0
    assert all(n / student_interval(n) <= 15.0 + 1e-9 for n in range(1, 151))  # beyond, every 10 s
