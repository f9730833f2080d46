"""The class page with Streamlit's AppTest, against this process's class book: a student answers and changes it,
the teacher's screen counts and reveals (its key taken out of the address, never on a student's page), a second
round, a wrong key, a stale or bad code, and the share dialog that opens a class; no word outside the catalog."""

from __future__ import annotations

import json
from urllib.parse import parse_qs, urlsplit

import pytest
from streamlit.testing.v1 import AppTest

from rnnlab.config import Config
from rnnlab.i18n import MsgN, _, using
from rnnlab.server.answers import class_book
from rnnlab.sharing import classes
from rnnlab.sharing.presets import PRESETS_BY_KEY, Preset
from tests.app.conftest import figures, open_page, unescaped, values
from tests.i18n.pseudo import open_pseudo, unmarked

TINY = Preset("tiny_class", "A GRU solves the adding problem (T = 100)",
              MsgN("Gates let a GRU carry two numbers across {n} step: the loss falls far below the {baseline} "
                   "baseline within a few hundred steps.", "Gates let a GRU carry two numbers across {n} steps: the "
                   "loss falls far below the {baseline} baseline within a few hundred steps.", 10, baseline="1/6"),
              "explore", Config(seq_len=10, batch=16, features=16, steps=20, chunk=10),
              question=PRESETS_BY_KEY["gru_adding"].question, choices=PRESETS_BY_KEY["gru_adding"].choices, answer=1)


@pytest.fixture
def lesson(monkeypatch):
    """A class of a small preset (a fast run) and the gates preset, opened in this process's book; the student is
    one browser (AppTest's session has a made-up address that changes every run)."""
    monkeypatch.setitem(PRESETS_BY_KEY, TINY.key, TINY)
    monkeypatch.setattr("ui.class_student.student", lambda: "session:student")
    opened = class_book.BOOK.open([TINY.key, "gates_keep_the_gradient"], "test-teacher")
    yield opened
    if class_book.BOOK.is_teacher(opened.code, opened.secret):
        class_book.BOOK.teach(opened.code, opened.secret, class_book.CLOSE)


def everything_sent(at: AppTest) -> str:
    """Every element's protobuf on the page as text, and the address: what a browser receives of the page."""
    parts = [str(node.proto) for kind in ("markdown", "caption", "button", "code", "image", "subheader", "info",
                                          "success", "warning", "error", "metric", "plotly_chart", "download_button",
                                          "link_button") for node in at.get(kind)]
    return "\n".join(parts) + json.dumps(dict(at.query_params))


def choice_buttons(at: AppTest) -> list:
    return [b for b in at.button if b.key and b.key.startswith("answer_")]


def test_a_student_answers_changes_it_and_never_sees_the_teachers_key(lesson):
    at = open_page("classroom", code=lesson.code.lower())
    assert [unescaped(b.label) for b in choice_buttons(at)] == list(TINY.choices)
    assert class_book.BOOK.view(lesson.code).joined == 1
    choice_buttons(at)[0].click().run()
    assert class_book.BOOK.view(lesson.code).question.counts[0] == (1, 0, 0)
    choice_buttons(at)[1].click().run()
    assert class_book.BOOK.view(lesson.code).question.counts[0] == (0, 1, 0)
    assert [b.proto.type for b in choice_buttons(at)] == ["secondary", "primary", "secondary"]
    assert any(TINY.choices[1] in s.value for s in at.success)
    at.run()  # a rerun (as the fragment's timer makes) neither loses the answer nor casts it again
    assert class_book.BOOK.view(lesson.code).question.counts[0] == (0, 1, 0)
    assert [b.proto.type for b in choice_buttons(at)] == ["secondary", "primary", "secondary"]
    sent = everything_sent(at)
    assert lesson.secret not in sent and "teacher=" not in sent


def test_the_teachers_screen_counts_reveals_and_keeps_its_key_off_the_address(lesson):
    for i, choice in enumerate((1, 1, 2)):
        class_book.BOOK.answer(lesson.code, f"ip:10.9.0.{i}", 0, 1, choice)
    at = open_page("classroom", code=lesson.code, teacher=lesson.secret)
    assert "teacher" not in at.query_params and at.query_params["code"] == lesson.code
    assert {m.label: m.value for m in at.metric} == {"Joined": "3", "Answered": "3"}
    spread = figures(at)["The class's answers"]
    assert list(values(spread["data"][0], "x")) == [0, 2, 1]
    assert lesson.secret not in everything_sent(at)  # a projected screen: the join panel, the address
    class_book.BOOK.answer(lesson.code, "ip:10.9.0.9", 0, 1, 0)
    at.run()  # the live chart's fragment, as its timer reruns it
    assert {m.label: m.value for m in at.metric}["Answered"] == "4"
    next(b for b in at.button if b.label == "Reveal").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert class_book.BOOK.view(lesson.code).question.revealed
    loss = figures(at)["Loss"]  # the run that settles it, trained once for the class
    assert values(loss["data"][0], "x")[-1] == TINY.config.steps
    assert any(TINY.choices[1] in s.value for s in at.success)
    student = open_page("classroom", code=lesson.code)
    assert not choice_buttons(student) and "Loss" in figures(student)
    assert any("not what happens" not in i.value and "did not answer" in i.value for i in student.info)


def test_a_second_round_is_answered_beside_the_first(lesson):
    class_book.BOOK.answer(lesson.code, "session:student", 0, 1, 0)
    at = open_page("classroom", code=lesson.code, teacher=lesson.secret)
    next(b for b in at.button if b.label == "Second round").click().run()
    student = open_page("classroom", code=lesson.code)
    assert any(TINY.choices[0] in unescaped(m.value) for m in student.markdown)  # their first answer, recalled
    assert all(b.proto.type == "secondary" for b in choice_buttons(student))  # nothing picked in this round yet
    choice_buttons(student)[1].click().run()
    at.run()
    spread = figures(at)["The class's answers, before and after the discussion"]
    assert [list(values(bar, "x")) for bar in spread["data"]] == [[1, 0, 0], [0, 1, 0]]
    assert {m.label: m.value for m in at.metric} == {"Joined": "1", "Answered again": "1", "Answered first": "1"}


@pytest.mark.parametrize("key", ["cut", "empty"])
def test_a_wrong_key_is_the_students_view_leaves_the_address_and_counts_no_one_until_they_answer(lesson, key):
    at = open_page("classroom", code=lesson.code, teacher=lesson.secret[:-2] if key == "cut" else "")
    assert "teacher" not in at.query_params and at.warning and choice_buttons(at)
    assert not at.metric and not class_book.BOOK.view(lesson.code).question.revealed
    at.run()  # as the page's timer reruns it
    assert class_book.BOOK.view(lesson.code).joined == 0
    choice_buttons(at)[2].click().run()
    view = class_book.BOOK.view(lesson.code)
    assert view.joined == 1 and view.question.counts[0] == (0, 0, 1)


def test_a_code_typed_on_a_russian_keyboard_opens_the_class(lesson):
    at = open_page("classroom", lang="ru")
    twins = dict(zip("ABCEHKMPTXY3", "авсенкмртхуз"))
    at.text_input[0].input("".join(twins.get(c, c) for c in classes.spaced(lesson.code)))
    with using("ru"):
        next(b for b in at.button if b.label == _("Join")).click().run()
    assert len(choice_buttons(at)) == len(TINY.choices) and at.query_params["code"] != lesson.code


@pytest.mark.parametrize("code", ["ZZZZZZ", "no class", "<i>x</i>"])
def test_a_stale_or_bad_code_gets_one_clear_message(code):
    at = open_page("classroom", code=code)
    assert len(at.error) == 1 and "There is no open class with the code" in at.error[0].value
    assert at.text_input and not choice_buttons(at)


def test_without_a_code_the_page_asks_for_one(lesson):
    at = open_page("classroom")
    at.text_input[0].input(classes.spaced(lesson.code).lower())
    next(b for b in at.button if "Join" in b.label).click().run()
    assert [unescaped(b.label) for b in choice_buttons(at)] == list(TINY.choices)


@pytest.mark.parametrize("lang", ["en", "ru"])
def test_the_share_dialog_opens_a_class_with_two_links_in_the_teachers_language(monkeypatch, lang):
    at = open_page("explore", seq_len="20", steps="20", lang=lang)
    with using(lang):  # AppTest writes a multiselect's choice back in the words of the test's thread
        next(b for b in at.button if b.key == "share_class").click().run()
        next(b for b in at.button if b.key == "share_class_open").click().run()
        next(b for b in at.button if b.key == "share_class").click().run()  # the dialog again (AppTest closes it)
    assert not at.exception, [e.value for e in at.exception]
    student = next(c.value for c in at.code if "/classroom?" in c.value)
    teacher = next(b.proto.url for b in at.get("link_button"))
    code = parse_qs(urlsplit(student).query)["code"][0]
    assert parse_qs(urlsplit(teacher).query)["code"] == [code] and "teacher" not in parse_qs(urlsplit(student).query)
    secret = parse_qs(urlsplit(teacher).query)["teacher"][0]
    assert class_book.BOOK.is_teacher(code, secret)
    assert parse_qs(urlsplit(student).query)["lang"] == parse_qs(urlsplit(teacher).query)["lang"] == [lang]
    screen = open_page("classroom", code=code, teacher=secret, lang=lang)
    joining = next(m.value for m in screen.markdown if "/classroom?" in m.value)
    assert f"lang={lang}" in joining and secret not in joining
    class_book.BOOK.teach(code, secret, class_book.CLOSE)


@pytest.mark.parametrize("teacher", [False, True])
def test_every_word_of_a_class_goes_through_the_catalog(lesson, monkeypatch, teacher):
    class_book.BOOK.answer(lesson.code, "ip:10.9.2.1", 0, 1, 0)
    at = open_pseudo("classroom", monkeypatch, code=lesson.code, **({"teacher": lesson.secret} if teacher else {}))
    assert unmarked(at) == []


def test_going_through_the_class_page_keeps_the_experiment(lesson):
    at = open_page("explore", cell="lstm", seq_len="50")
    for page, query in (("classroom", {"code": lesson.code}), ("explore", {})):
        at.query_params.clear()
        for key, value in query.items():
            at.query_params[key] = value
        at.switch_page(f"app_pages/{page}.py")
        at.run()
        assert not at.exception, [e.value for e in at.exception]
    config = at.session_state["url_state"].config
    assert (config.cell, config.seq_len) == ("lstm", 50) and not at.warning


def test_a_reload_of_the_class_page_keeps_the_experiment_for_the_next_page():
    at = open_page("explore", cell="lstm", seq_len="50", task="copy", carry_mode="fixed")
    at.query_params.clear()  # the sidebar's link to the class page
    at.switch_page("app_pages/classroom.py")
    at.run()
    reloaded = open_page("classroom", **dict(at.query_params))  # F5: a new session on the address shown
    reloaded.query_params.clear()
    reloaded.switch_page("app_pages/explore.py")
    reloaded.run()
    config = reloaded.session_state["url_state"].config
    assert (config.cell, config.seq_len, config.task, config.carry_mode) == ("lstm", 50, "copy", "fixed")


TINY_NOISY = Preset("tiny_noisy_class", "A noisy initial carry makes the model robust to where it starts",
                    PRESETS_BY_KEY["noisy_carry_adding"].lesson, "explore",
                    Config(seq_len=6, batch=16, features=8, steps=20, chunk=10, carry_mode="noisy",
                           carry_init="normal", carry_scale=0.5),
                    compare_zero=True, question=PRESETS_BY_KEY["noisy_carry_adding"].question,
                    choices=PRESETS_BY_KEY["noisy_carry_adding"].choices, answer=0)


def test_a_zero_carry_question_is_revealed_with_the_numbers_that_settle_it(monkeypatch):
    """Under the run's chart, the losses from fresh carries of the run and of its zero-trained twin: the numbers
    the lesson speaks of (the Explore page's table), computed once for the class."""
    from rnnlab.server.work import jobs

    monkeypatch.setitem(PRESETS_BY_KEY, TINY_NOISY.key, TINY_NOISY)
    opened = class_book.BOOK.open([TINY_NOISY.key], "test-teacher")
    at = open_page("classroom", code=opened.code, teacher=opened.secret)
    next(b for b in at.button if b.label == "Reveal").click().run()
    assert not at.exception, [e.value for e in at.exception]
    sigma, mine, theirs = jobs.finished_twins(TINY_NOISY.config)[2]  # the shared runs: the same numbers again
    text = " ".join(unescaped(m.value) for m in at.markdown)
    assert f"From fresh N(0, {sigma:g}) carries, this run's loss is {mine:.3g} and the zero-trained twin's " \
           f"{theirs:.3g}" in text
    class_book.BOOK.teach(opened.code, opened.secret, class_book.CLOSE)
