"""A class predicting together in a real browser: the teacher opens a class from Explore's share dialog and its
screen at a projector's size; three students on phones (one reading English, one Chinese, one Russian) answer; the
teacher's chart counts them without a click while every click on the answers' CSV downloads it, a second round is
answered beside the first, Reveal shows the run on the teacher's screen and switches every student's screen to the
result and its explanation. The teacher's key is never in a student's page nor in the teacher's address.
Screenshots of each screen in each language go to test-artifacts/screenshots/class-*.png.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest

from rnnlab.i18n import _, using
from rnnlab.sharing.presets import PRESETS_BY_KEY
from rnnlab.sharing.urlstate import UrlState, to_query
from tests.e2e.test_browser import RENDER_TIMEOUT_MS, TRAIN_TIMEOUT_MS, Console, check_page

MEASURE = (Path(__file__).with_name("overflow.js")).read_text(encoding="utf-8")
PRESET = PRESETS_BY_KEY["noisy_carry_adding"]  # three choices, and ten time steps: its run is ready soon
TEACHER_SIZE, PHONE_SIZE = {"width": 1280, "height": 720}, {"width": 390, "height": 844}
LIVE_TIMEOUT_MS = 15_000  # the teacher's chart redraws every second: generous for a loaded machine
def words(lang: str, text: str) -> str:
    with using(lang):
        return _(text)


CHARTS = """() => [...document.querySelectorAll('.js-plotly-plot')].map(p => ({
    title: (p.layout && p.layout.title && (p.layout.title.text || p.layout.title)) || '',
    x: (p.data || []).map(d => Array.from(d.x || []))}))"""


SPREAD_TITLES = {words(lang, title) for lang in ("en", "zh", "ru") for title in (
    "The class's answers", "The class's answers, before and after the discussion")}


def lead(lang: str, message: str) -> str:
    """The words of ``message`` in ``lang`` before its first placeholder (and the mark that quotes it: *, “, «)."""
    return re.split(r"[*“«]?\{", words(lang, message))[0].strip()


def overflow(page, where: str) -> list[str]:
    """What tests/e2e/overflow.js finds on ``page``: text cut, axis titles over legends, tables off their box."""
    return [f"{where}: {f['where']} {f['why']} ({f['need']} > {f['have']} px): {f['text']!r}"
            for f in page.evaluate(MEASURE)]


def title_of(chart: dict) -> str:
    """A chart's title as read: Streamlit's bold tags and a wrapped title's line break out."""
    return " ".join(re.sub("<[^>]*>", " ", str(chart["title"])).split())


def spread(page) -> list[list[int]] | None:
    """The bars of the teacher's chart of answers, per round."""
    for chart in page.evaluate(CHARTS):
        if title_of(chart) in SPREAD_TITLES:
            return [[int(v) for v in row] for row in chart["x"]]
    return None


def wait_spread(page, want: list[list[int]], timeout_ms: int = LIVE_TIMEOUT_MS) -> float:
    """Wait (no click) until the teacher's chart shows ``want``; the seconds it took."""
    start = time.monotonic()
    deadline = start + timeout_ms / 1000
    while (shown := spread(page)) != want:
        assert time.monotonic() < deadline, f"the teacher's chart shows {shown}, not {want}"
        time.sleep(0.2)
    return time.monotonic() - start


def pick(student, lang: str, choice: int) -> None:
    """A student's click on a choice, then their page saying it is taken."""
    label = words(lang, PRESET.choices[choice])
    button = student.get_by_role("button", name=label, exact=True)
    button.click(timeout=RENDER_TIMEOUT_MS)
    student.locator("[data-testid='stAlertContentSuccess']").filter(has_text=label).wait_for(
        timeout=RENDER_TIMEOUT_MS)


def undownloaded(page, clicks: int = 31) -> list[str]:
    """Click the answers' CSV on the teacher's screen ``clicks`` times while its live part redraws every second, at
    spacings that fall on every moment of a redraw; the clicks that brought no file with the answers."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    page.get_by_text("This class: its answers as a file, its end").click()
    button = page.get_by_role("button", name="Answers as CSV (counts only)")
    missed = []
    for click in range(clicks):
        try:
            with page.expect_download(timeout=10_000) as got:
                button.click()
            failure = got.value.failure()
            text = "" if failure else Path(got.value.path()).read_text(encoding="utf-8")
            if failure or not text.startswith("question,preset,"):
                missed.append(f"click {click + 1}: {failure or text[:80]!r}")
        except PlaywrightTimeout:
            missed.append(f"click {click + 1}: no download within 10 s")
        page.wait_for_timeout(110 + 53 * (click % 11))  # 0.11 to 0.64 s: every phase of the 1 s redraw
    return missed


def shoot(page, shots: Path, name: str) -> None:
    page.screenshot(path=str(shots / f"class-{name}.png"))


def open_class(browser, server: str) -> str:
    """Explore at the preset's settings, its share dialog, the "Predict together" tab, "Open a class" (the preset's
    question): the teacher's link."""
    context = browser.new_context(viewport={"width": 1400, "height": 900}, base_url=server)
    page = context.new_page()
    page.goto("/explore?" + urlencode(to_query(UrlState(config=PRESET.config))))
    page.get_by_role("button", name="Share with the class").click(timeout=RENDER_TIMEOUT_MS)
    page.get_by_role("tab", name="Predict together").click()
    page.get_by_role("button", name="Open a class").click()
    link = page.get_by_role("link", name="Open the teacher's screen")
    link.wait_for(timeout=RENDER_TIMEOUT_MS)
    href = link.get_attribute("href") or ""
    context.close()
    return href


@pytest.mark.e2e
def test_a_class_answers_sees_the_spread_live_and_the_run_after_reveal(browser, server: str, artifacts: Path):
    shots = artifacts / "screenshots"
    teacher_link = open_class(browser, server)
    query = parse_qs(urlsplit(teacher_link).query)
    code, secret = query["code"][0], query["teacher"][0]
    contexts = []

    def tab(size: dict, link: str):
        context = browser.new_context(viewport=size, base_url=server)
        contexts.append(context)
        page = context.new_page()
        console = Console(page)
        page.goto(link)
        return page, console

    try:
        teachers = {"en": tab(TEACHER_SIZE, f"{teacher_link}&lang=en")}  # zh and ru: opened for their screenshots
        teacher, teacher_console = teachers["en"]
        teacher.get_by_text("Joined").first.wait_for(timeout=RENDER_TIMEOUT_MS)
        assert "teacher=" not in teacher.url and secret not in teacher.url  # a projected address bar shows no key
        students = {lang: tab(PHONE_SIZE, f"/classroom?code={code}&lang={lang}") for lang in ("en", "zh", "ru")}
        for lang, (student, _console) in students.items():
            student.get_by_role("button", name=words(lang, PRESET.choices[0]), exact=True).wait_for(
                timeout=RENDER_TIMEOUT_MS)

        # First round: the same choice read in English and Chinese is one bar; the teacher's chart follows alone.
        for lang, choice in (("en", 1), ("zh", 1), ("ru", 2)):
            pick(students[lang][0], lang, choice)
        wait_spread(teacher, [[0, 2, 1]])
        shoot(teacher, shots, "teacher-1280x720-en-answers")
        assert undownloaded(teacher) == []  # while the class is live, every click downloads the answers
        for lang, (student, _console) in students.items():
            shoot(student, shots, f"student-390x844-{lang}-answered")
        for lang in ("zh", "ru"):
            page, console = tab(TEACHER_SIZE, f"{teacher_link}&lang={lang}")
            wait_spread(page, [[0, 2, 1]], RENDER_TIMEOUT_MS)  # a page's first load
            shoot(page, shots, f"teacher-1280x720-{lang}-answers")
            check_page(page, console, f"the class page (teacher {lang})")
            contexts.remove(page.context)
            page.context.close()

        # A second round after a discussion: every student's screen asks again by itself.
        teacher.get_by_role("button", name="Second round").click()
        for lang, (student, _console) in students.items():
            student.get_by_text(lead(lang, "Second round, after the discussion: pick the answer you think is right "
                                           "now (your first: *{first}*).")[:20]).first.wait_for(timeout=LIVE_TIMEOUT_MS)
        for lang in ("en", "zh", "ru"):
            pick(students[lang][0], lang, PRESET.answer)
        wait_spread(teacher, [[0, 2, 1], [3 if i == PRESET.answer else 0 for i in range(len(PRESET.choices))]])
        shoot(teacher, shots, "teacher-1280x720-en-second-round")

        # Reveal: the run, once for the class, on the teacher's screen and then on every student's.
        teacher.get_by_role("button", name="Reveal").click()
        teacher.locator(".js-plotly-plot").nth(1).wait_for(timeout=TRAIN_TIMEOUT_MS)
        titles = [title_of(c) for c in teacher.evaluate(CHARTS)]
        assert "Loss" in titles, titles
        teacher.get_by_text(PRESET.lesson[:40]).wait_for(timeout=RENDER_TIMEOUT_MS)
        time.sleep(1.5)
        shoot(teacher, shots, "teacher-1280x720-en-revealed")
        for lang, (student, _console) in students.items():
            student.locator(".js-plotly-plot").nth(1).wait_for(timeout=LIVE_TIMEOUT_MS + TRAIN_TIMEOUT_MS)
            verdict = lead(lang, "You predicted: *{guess}*, right. What the run shows: *{answer}*.")
            student.get_by_text(verdict).first.wait_for(timeout=RENDER_TIMEOUT_MS)
            time.sleep(1)
            student.screenshot(path=str(shots / f"class-student-390x844-{lang}-revealed.png"), full_page=True)
            assert secret not in student.content() and "teacher=" not in student.content()
        for lang in ("zh", "ru"):
            page, console = teachers[lang] = tab(TEACHER_SIZE, f"{teacher_link}&lang={lang}")
            page.locator(".js-plotly-plot").nth(1).wait_for(timeout=LIVE_TIMEOUT_MS + TRAIN_TIMEOUT_MS)
            time.sleep(1.5)
            shoot(page, shots, f"teacher-1280x720-{lang}-revealed")
        found = []
        for name, (page, console) in {**{f"teacher {k}": v for k, v in teachers.items()},
                                      **{f"student {k}": v for k, v in students.items()}}.items():
            check_page(page, console, f"the class page ({name})")
            found += overflow(page, f"the revealed class page ({name})")
        assert not found, "\n".join(found)
    finally:
        for context in contexts:
            context.close()
