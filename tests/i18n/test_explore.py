"""The Explore area in three languages: time estimates, durations and speeds, the queue's messages (kept as messages,
made in any thread and rendered in the reader's language), and the page itself in the pseudo-language."""

from __future__ import annotations

import re
import threading

import pytest

from rnnlab.i18n import NBSP, PSEUDO_CLOSE, PSEUDO_OPEN, Msg, using
from rnnlab.server.work import gate as gates
from rnnlab.server.work.gate import JobGate, queue_message
from rnnlab.training import estimate
from rnnlab.training.estimate import Estimate, format_rate, format_seconds
from tests.app.conftest import SMALL
from tests.i18n.pseudo import CODE, KEEP, WORD, open_pseudo, shown_texts

GB = 10**9


# ---- estimates, durations and speeds -------------------------------------------------------------------------
@pytest.mark.parametrize("lang, expected", [
    ("en", "about 9.7 s (compiling about 6 s, then 300 steps at about 12 ms each, from its size)"),
    ("zh", "约 9.7 秒（编译约 6 秒，然后训练 300 步，按规模估计每步约 12 毫秒）"),
    ("ru", "около 9,7 с (компиляция около 6 с, затем 300 шагов примерно по 12 мс, оценка по размеру)"),
])
def test_the_estimate_reads_in_each_language_with_its_numbers(lang, expected):
    guess = Estimate(compile_s=6.0, step_s=0.0123, steps=300, measured=False)
    with using(lang):
        assert guess.describe() == expected


@pytest.mark.parametrize("lang, one, two, five", [
    ("en", "(1 step at about 20 ms each)", "(2 steps at about 20 ms each)", "(5 steps at about 20 ms each)"),
    ("zh", "（1 步，每步约 20 毫秒）", "（2 步，每步约 20 毫秒）", "（5 步，每步约 20 毫秒）"),
    ("ru", "(1 шаг примерно по 20 мс)", "(2 шага примерно по 20 мс)", "(5 шагов примерно по 20 мс)"),
])
def test_the_estimate_counts_steps_in_each_languages_forms(lang, one, two, five):
    with using(lang):
        for n, said in ((1, one), (2, two), (5, five)):
            assert Estimate(0.0, 0.02, n, True).describe().endswith(said)


@pytest.mark.parametrize("lang, seconds", [
    ("en", ["12 ms", "4.2 s", "42 s", "2.5 min", "2 h"]),
    ("zh", ["12 毫秒", "4.2 秒", "42 秒", "2.5 分钟", "2 小时"]),
    ("ru", ["12 мс", "4,2 с", "42 с", "2,5 мин", "2 ч"]),
])
def test_durations_are_written_the_languages_way(lang, seconds):
    with using(lang):
        assert [format_seconds(s) for s in (0.0123, 4.2, 42, 150, 7200)] == seconds


@pytest.mark.parametrize("lang, rates", [
    ("en", ["1,234 steps/s", "3.4 steps/s", "26 s per step"]),
    ("zh", ["1,234 步/秒", "3.4 步/秒", "每步 26 秒"]),
    ("ru", [f"1{NBSP}234 шагов/с", "3,4 шагов/с", "26 с на шаг"]),
])
def test_speeds_are_written_the_languages_way(lang, rates):
    with using(lang):
        assert [format_rate(r) for r in (1234.4, 3.42, 1 / 26)] == rates


def test_a_refusal_is_kept_as_a_message_and_read_in_the_readers_language(monkeypatch):
    monkeypatch.setenv(estimate.ENV_MAX_JOB, "1")  # one minute
    guess = Estimate(compile_s=0.0, step_s=0.05, steps=3000, measured=True)  # 2.5 minutes
    kept = estimate.refusal(guess)
    assert isinstance(kept, Msg) and estimate.over_limit(guess) == str(kept)
    assert str(kept).startswith("This run would take about 2.5 min (3,000 steps at about 50 ms each), more than "
                                "this server's limit of 60 s per job")
    with using("ru"):
        assert str(kept).startswith(f"Этот запуск занял бы около 2,5 мин (3{NBSP}000 шагов примерно по 50 мс) — "
                                    "больше предела этого сервера в 60 с на задание")
    with using("zh"):
        assert str(kept).startswith("这次运行需要约 2.5 分钟（3,000 步，每步约 50 毫秒），"
                                    "超过了本服务器每个计算任务 60 秒的上限")
    assert estimate.describe_work(35, 5) == "about 40 s (compiling about 35 s, then about 5 s of computing)"
    with using("ru"):
        assert estimate.describe_work(35, 5) == "около 40 с (компиляция около 35 с, затем около 5 с вычислений)"


# ---- the queue's messages --------------------------------------------------------------------------------------
def made_in_a_worker(make):
    """What ``make()`` returns, called in another thread (which speaks English: the language is per script run)."""
    out = []
    thread = threading.Thread(target=lambda: out.append(make()))
    thread.start()
    thread.join()
    return out[0]


def share_message(n: int) -> Msg:
    """The message of a person who runs ``n`` jobs, their share, while one more of theirs waits."""
    gate = JobGate(limit=n + 1, budget=lambda: 100 * GB, per_client=n)
    held = [gate.ticket(0, "training", client="me") for _ in range(n)]
    assert all(t.position == 0 for t in held)
    waiting = gate.ticket(0, "training", client="me")
    assert gate.waiting_reason(waiting) == "share"
    return made_in_a_worker(lambda: queue_message(waiting, gate))


@pytest.mark.parametrize("n, ru, zh", [
    (1, "У вас на этом сервере уже выполняется 1 задание", "你已在本服务器上运行 1 个计算任务"),
    (2, "У вас на этом сервере уже выполняются 2 задания", "你已在本服务器上运行 2 个计算任务"),
    (5, "У вас на этом сервере уже выполняется 5 заданий", "你已在本服务器上运行 5 个计算任务"),
])
def test_the_share_message_counts_jobs_in_each_languages_forms(n, ru, zh):
    said = share_message(n)
    assert isinstance(said, Msg)  # kept as its id and numbers, whichever thread made it
    assert str(said).startswith(f"You already have {n} job{'' if n == 1 else 's'} running on this server, your share")
    assert f"({n} running, 1 waiting in all)" in str(said)
    with using("ru"):
        assert str(said).startswith(ru) and f"(всего выполняется: {n}, ждут: 1)" in str(said)
    with using("zh"):
        assert str(said).startswith(zh)


def test_the_slots_and_memory_messages_in_each_language():
    gate = JobGate(limit=1, budget=lambda: 4 * GB, per_client=5)
    assert gate.ticket(GB, "training", client="a").position == 0
    queued = gate.ticket(GB, "training", client="b")
    slots = made_in_a_worker(lambda: queue_message(queued, gate))
    assert str(slots) == ("All 1 slots of this server are busy (1 running, 1 waiting). You are number 1 in the "
                          "queue; your job starts by itself.")
    with using("ru"):
        assert str(slots) == ("Все слоты этого сервера (1) заняты: выполняется 1, в очереди 1. Ваше место в очереди: "
                              "1; задание начнётся само.")
    with using("zh"):
        assert str(slots).startswith("这台服务器的全部 1 个计算槽都已占用（1 个运行中，1 个等待中）。"
                                     "你在队列中排第 1 位")

    roomy = JobGate(limit=3, budget=lambda: 4 * GB, per_client=5)
    for client in ("a", "b"):
        assert roomy.ticket(GB, "training", client=client).position == 0
    big = roomy.ticket(3 * GB, "training", client="c")
    memory = made_in_a_worker(lambda: queue_message(big, roomy))
    assert str(memory).startswith("Waiting for memory: this needs about 3.0 GB and 2.0 GB of the server's budget is "
                                  "free while 2 jobs run.")
    with using("ru"):
        assert str(memory).startswith("Ждём памяти: заданию нужно около 3,0 ГБ, а свободно 2,0 ГБ из бюджета сервера, "
                                      "пока работают 2 задания.")
    with using("zh"):
        assert "约需 3.0 GB" in str(memory) and "在 2 个计算任务运行期间" in str(memory)


def test_a_job_note_made_in_a_worker_thread_is_read_in_the_readers_language():
    from rnnlab.server.work import embedded

    note = made_in_a_worker(lambda: Msg("{what}: step {step} / {total}",
                                        what=Msg("Training the {cell} briefly ({i} of {n}; once per server)",
                                                 cell=Msg("Simple RNN"), i=1, n=2), step=3, total=40))
    assert str(note) == "Training the Simple RNN briefly (1 of 2; once per server): step 3 / 40"
    with using("ru"):
        assert str(note).startswith("Короткое обучение: ")
        assert str(note).endswith("(1 из 2; один раз для всего сервера): шаг 3 из 40")
    assert isinstance(embedded.RESULT_MESSAGE, Msg)
    with using("zh"):
        assert str(embedded.RESULT_MESSAGE).startswith("服务器上有人正在计算完全相同的内容")
    assert gates.Bytes(1_234_567).__str__() == "1.2 MB"


# ---- the page --------------------------------------------------------------------------------------------------
INNERMOST = re.compile(re.escape(PSEUDO_OPEN) + r"[^" + PSEUDO_OPEN + PSEUDO_CLOSE + r"]*" + re.escape(PSEUDO_CLOSE))


def english_left(text: str) -> list[str]:
    """As :func:`tests.i18n.pseudo.english_left`, for messages inside messages too (an estimate in a sentence):
    marks are taken off from the innermost out."""
    while True:
        rest = INNERMOST.sub(" ", text)
        if rest == text:
            break
        text = rest
    rest = CODE.sub(" ", text)
    words = (w.removesuffix("'s") for w in WORD.findall(rest))
    return [w for w in words if len(w) >= 3 and w not in KEEP and not w[0].isdigit()]


def others(at) -> set[str]:
    """Texts of the sidebar that other areas draw (the settings' controls, the language selector): all of the
    sidebar's but the Explore page's own overlay checkbox and parameter loader."""
    mine = ("Overlay a zero-carry run", "Trains the same configuration", "Load parameters")
    return {text for _where, text in shown_texts(at.sidebar) if not any(m in text for m in mine)}


def unmarked(at) -> list[tuple[str, str, list[str]]]:
    """The Explore page's own texts with words that did not pass through the catalog. The charts, the example
    view and the progress line (ui.explore_charts, ui.example_view, ui.marks) are stubbed out in these tests, and
    the sidebar's settings belong to ui.controls: those are other areas' and left out here."""
    skip = others(at)
    found = []
    for where, text in shown_texts(at):
        if where == "chart" or text in skip:
            continue
        words = english_left(text)
        if words:
            found.append((where, text[:160], words))
    return found


@pytest.fixture
def explore_only(monkeypatch):
    """The page with other areas' charts, example view and progress line stubbed out."""
    import ui.example_view
    import ui.explore_charts

    monkeypatch.setattr(ui.explore_charts, "draw_charts", lambda *args, **kwargs: None)
    monkeypatch.setattr(ui.explore_charts, "draw_progress", lambda *args, **kwargs: None)
    monkeypatch.setattr(ui.example_view, "draw_example", lambda *args, **kwargs: None)
    return monkeypatch


def press(at, label: str):
    """Click the button whose (pseudo-language) label is ``label``."""
    next(b for b in at.button if b.label == f"{PSEUDO_OPEN}{label}{PSEUDO_CLOSE}").click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_the_page_in_the_pseudo_language_shows_no_unmarked_text(explore_only):
    at = open_pseudo("explore", explore_only, **SMALL)
    assert at.info and unmarked(at) == []  # the welcome note, the buttons, the estimates
    press(at, "Step")
    assert at.session_state.run.step == 10
    assert at.get("download_button") and unmarked(at) == []  # the downloads after a run
    at.sidebar.checkbox(key="w_compare_zero").check().run()  # the zero-carry twin, trained
    assert not at.exception and unmarked(at) == []
    at.number_input(key="w_seq_len").set_value(24).run()  # the charts now show the previous run
    assert any("you changed" in i.value for i in at.info) and unmarked(at) == []


def test_the_question_and_the_refusal_in_the_pseudo_language(explore_only, monkeypatch):
    at = open_pseudo("explore", explore_only, seq_len="2000", steps="1500", run="1")
    assert any("longer than a minute" in w.value for w in at.warning)
    assert unmarked(at) == []  # the question, "Start anyway" and "Cancel"
    monkeypatch.setenv(estimate.ENV_MAX_JOB, "0.5")
    press(at, "Train")
    assert at.error and unmarked(at) == []  # the refusal


def test_a_kept_question_is_shown_in_the_language_chosen_later(explore_only):
    from streamlit.testing.v1 import AppTest

    from tests.i18n.pseudo import APP

    at = AppTest.from_file(APP, default_timeout=180)
    for key, value in {"seq_len": "2000", "steps": "1500", "run": "1", "lang": "en"}.items():
        at.query_params[key] = value
    at.switch_page("app_pages/explore.py")
    at.run()
    assert not at.exception
    question = at.session_state.explore.actions.question
    assert question is not None and isinstance(question.described, Msg)
    assert any(w.value.startswith("This will take about ") for w in at.warning)
    at.selectbox(key="w_lang").set_value("ru").run()
    assert not at.exception
    assert at.session_state.explore.actions.question == question  # the same question, kept
    assert any(w.value.startswith("Это займёт около ") and "— больше минуты" in w.value for w in at.warning)
    assert [b.label for b in at.button][:4] == ["Обучить", "Стоп", "Шаг", "Сбросить"]
