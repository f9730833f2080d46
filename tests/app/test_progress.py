"""The page helpers of ``ui.progress`` that need no script run."""

from __future__ import annotations

from ui import progress


class Note:
    """A stand-in for ``st.empty()``: what was shown in it, and whether it was emptied afterwards."""

    def __init__(self, shown: list[str]) -> None:
        self.shown = shown

    def info(self, text, icon=None) -> None:
        self.shown.append(text)

    def empty(self) -> None:
        self.shown.append("")


def test_settle_waits_under_a_second_then_says_in_the_page_why_it_still_waits(monkeypatch) -> None:
    toasts: list[str] = []
    monkeypatch.setattr(progress.st, "empty", lambda: Note(toasts))
    waited: list[float] = []

    def done_on_second_wait(seconds: float) -> bool:
        waited.append(seconds)
        return len(waited) == 2

    assert progress.settle(done_on_second_wait)
    assert waited == [progress.SETTLE_QUIET_S, progress.SETTLE_LONGEST_S] and progress.SETTLE_QUIET_S <= 1
    assert len(toasts) == 2 and "compiles" in toasts[0] and toasts[1] == ""  # said, then gone once done

    waited.clear()
    toasts.clear()
    assert progress.settle(lambda seconds: waited.append(seconds) or True)
    assert waited == [progress.SETTLE_QUIET_S] and not toasts  # work that ends within a part says nothing

    assert not progress.settle(lambda seconds: False)  # still busy after the longest wait: the page goes on


def test_a_job_waiting_or_starting_is_never_drawn_as_nothing(monkeypatch) -> None:
    """Queued: its place; running before any report: what it does and for how long so far; then the bar."""
    from types import SimpleNamespace

    from rnnlab.i18n import using

    shown: list[str] = []
    bars: list[tuple] = []
    slot = SimpleNamespace(info=lambda text, icon=None: shown.append(text), empty=lambda: shown.append(""),
                           progress=lambda fraction, text="": bars.append((fraction, text)))
    with using("en"):
        draw = progress.job_progress("Starting a run", slot, expected_s=6)
        draw(SimpleNamespace(queue=SimpleNamespace(message="Waiting: 1 ahead"), progress=None, note=""), 0.3)
        draw(SimpleNamespace(queue=None, progress=None, note=""), 2.6)
        draw(SimpleNamespace(queue=None, progress=0.5, note=""), 3.0)
    assert shown == ["Waiting: 1 ahead", "Starting a run… 2 s so far, about 6 s in all."]
    assert bars and bars[0][0] == 0.5 and "50%" in bars[0][1]


def test_work_the_page_already_shows_says_nothing_unless_it_is_long() -> None:
    """A training call (the bar shows it) is drawn as nothing for ``quiet_s``, then says what takes so long."""
    from types import SimpleNamespace

    from rnnlab.i18n import using

    shown: list[str] = []
    slot = SimpleNamespace(info=lambda text, icon=None: shown.append(text), empty=lambda: shown.append(""))
    with using("en"):
        draw = progress.job_progress("Training", slot, expected_s=2, quiet_s=3)
        running = SimpleNamespace(queue=None, progress=None, note="")
        for waited in (0.0, 1.0, 2.9, 3.0, 7.4):
            draw(running, waited)
    assert shown == ["", "", "", "Training… 3 s so far.", "Training… 7 s so far."]  # past the estimate: no "in all"
