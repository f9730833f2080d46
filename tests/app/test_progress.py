"""The page helpers of ``ui.progress`` that need no script run."""

from __future__ import annotations

from ui import progress


def test_settle_waits_quietly_then_says_why_it_still_waits(monkeypatch) -> None:
    toasts: list[str] = []
    monkeypatch.setattr(progress.st, "toast", lambda text, icon=None: toasts.append(text))
    waited: list[float] = []

    def done_on_second_wait(seconds: float) -> bool:
        waited.append(seconds)
        return len(waited) == 2

    assert progress.settle(done_on_second_wait)
    assert waited == [progress.SETTLE_QUIET_S, progress.SETTLE_LONGEST_S]
    assert len(toasts) == 1 and "compiles" in toasts[0]

    waited.clear()
    toasts.clear()
    assert progress.settle(lambda seconds: waited.append(seconds) or True)
    assert waited == [progress.SETTLE_QUIET_S] and not toasts  # work that ends within a part says nothing

    assert not progress.settle(lambda seconds: False)  # still busy after the longest wait: the page goes on
