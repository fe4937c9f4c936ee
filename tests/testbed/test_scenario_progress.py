"""The run progress bar: quiet off a terminal and for short runs; a bar on a terminal."""

from __future__ import annotations

import io

import pytest

from testbed.scenario import progress
from testbed.scenario.progress import ProgressBar


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_quiet_when_not_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(progress, "DELAY_S", 0.0)
    stream = io.StringIO()
    bar = ProgressBar(1_000_000, "x", stream)
    bar(500_000)
    bar.close()
    assert stream.getvalue() == ""


def test_quiet_for_short_runs() -> None:
    stream = Terminal()
    bar = ProgressBar(1_000_000, "x", stream)
    bar(500_000)  # well within the first DELAY_S seconds
    assert stream.getvalue() == ""


def test_draws_and_clears_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(progress, "DELAY_S", 0.0)
    monkeypatch.setattr(progress, "REDRAW_S", 0.0)
    stream = Terminal()
    bar = ProgressBar(2_000_000, "t1-down (mrc)", stream)
    bar(1_000_000)
    assert "t1-down (mrc) [###############...............] 1 ms of at most 2 ms virtual" in (
        stream.getvalue()
    )
    bar.close()
    assert stream.getvalue().endswith("\r\x1b[2K")
