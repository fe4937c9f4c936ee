"""A discrete-event loop over virtual time (integer nanoseconds).

Deterministic: callbacks scheduled for the same instant run in scheduling order.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from typing import Any

from nic_emu.exceptions import FabricError


class EventLoop:
    def __init__(self, start_ns: int = 0) -> None:
        self.now = start_ns
        self._heap: list[tuple[int, int, Callable[..., Any], tuple[Any, ...]]] = []
        self._seq = 0
        self.events_run = 0

    def at(self, t_ns: int, fn: Callable[..., Any], *args: Any) -> None:
        if t_ns < self.now:
            raise FabricError(
                f"cannot schedule at {t_ns} ns: virtual time is already {self.now} ns"
            )
        self._seq += 1
        heapq.heappush(self._heap, (t_ns, self._seq, fn, args))

    def after(self, delay_ns: int, fn: Callable[..., Any], *args: Any) -> None:
        self.at(self.now + delay_ns, fn, *args)

    def pending(self) -> int:
        return len(self._heap)

    def next_time(self) -> int | None:
        return self._heap[0][0] if self._heap else None

    def run(
        self,
        until_ns: int | None = None,
        *,
        stop: Callable[[], bool] | None = None,
        max_events: int | None = None,
    ) -> int:
        """Run callbacks in time order until ``until_ns``, ``stop()`` or no events left.

        Returns the number of callbacks run. Virtual time ends at ``until_ns`` when given
        (even if the loop went idle earlier).
        """
        heap = self._heap
        pop = heapq.heappop
        count = 0
        stopped = False
        while heap:
            if (stop is not None and stop()) or (max_events is not None and count >= max_events):
                stopped = True
                break
            t, _, fn, args = heap[0]
            if until_ns is not None and t > until_ns:
                break
            pop(heap)
            self.now = t
            fn(*args)
            count += 1
        if until_ns is not None and not stopped and self.now < until_ns:
            self.now = until_ns
        self.events_run += count
        return count
