"""A progress bar on stderr for long runs: shown only on a terminal, after a few seconds.

``ProgressBar(total_ns, label)`` is called with the virtual time reached; it draws
nothing until ``DELAY_S`` of wall time have passed (short runs stay quiet) and nothing
at all when stderr is not a TTY (CI logs, pipes).
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

from testbed.scenario.units import format_time_ns

DELAY_S = 2.0  # runs shorter than this draw no bar
REDRAW_S = 0.2
WIDTH = 30


class ProgressBar:
    def __init__(self, total_ns: int, label: str, stream: TextIO | None = None) -> None:
        self.total_ns = max(1, total_ns)
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = bool(getattr(self.stream, "isatty", lambda: False)())
        self.started = time.monotonic()
        self._drawn_at = 0.0
        self._drawn = False

    def __call__(self, now_ns: int) -> None:
        if not self.enabled:
            return
        wall = time.monotonic()
        if wall - self.started < DELAY_S or wall - self._drawn_at < REDRAW_S:
            return
        self._drawn_at = wall
        self._drawn = True
        self.stream.write("\r" + self.line(now_ns, wall - self.started))
        self.stream.flush()

    def line(self, now_ns: int, elapsed_s: float) -> str:
        fraction = min(1.0, now_ns / self.total_ns)
        filled = round(fraction * WIDTH)
        return (
            f"{self.label} [{'#' * filled}{'.' * (WIDTH - filled)}] "
            f"{format_time_ns(now_ns)} of at most {format_time_ns(self.total_ns)} virtual, "
            f"{elapsed_s:.0f} s"
        )

    def close(self) -> None:
        """Clears the bar's line (if one was drawn)."""
        if self._drawn:
            self.stream.write("\r\x1b[2K")
            self.stream.flush()
            self._drawn = False
