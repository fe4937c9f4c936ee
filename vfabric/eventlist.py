"""The one event list of a virtual fabric: integer nanoseconds, one shared clock.

The shape follows htsim's ``EventList``: components (switches, wires, NICs, faults)
schedule their own callbacks with :meth:`EventList.at`; the list runs them in time order
and moves the shared :class:`p4emu.runtime.clock.VirtualClock` to each event's time before
running it, so every p4emu switch reads the same virtual time. Callbacks scheduled for
the same instant run in the order they were scheduled, which makes a run deterministic.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from typing import Any

from p4emu.runtime.clock import VirtualClock
from vfabric.exceptions import FaultTimeError


class EventList:
    """A heap of ``(time_ns, sequence, callback, argument)``; see the module docstring."""

    __slots__ = ("_heap", "_seq", "clock", "events_run", "now")

    def __init__(self, clock: VirtualClock | None = None) -> None:
        self.clock = clock if clock is not None else VirtualClock()
        self.now = self.clock.now_ns()
        self._heap: list[tuple[int, int, Callable[[Any], Any], Any]] = []
        self._seq = 0
        self.events_run = 0

    def at(self, t_ns: int, fn: Callable[[Any], Any], arg: Any = None) -> None:
        """Run ``fn(arg)`` at virtual time ``t_ns`` (not before now)."""
        if t_ns < self.now:
            raise FaultTimeError(
                f"cannot schedule at {t_ns} ns: virtual time is already {self.now} ns"
            )
        self._seq += 1
        heapq.heappush(self._heap, (t_ns, self._seq, fn, arg))

    def next_time(self) -> int | None:
        return self._heap[0][0] if self._heap else None

    def pending(self) -> int:
        return len(self._heap)

    def run(self, until_ns: int | None, stop: Callable[[], bool], check_every: int = 64) -> bool:
        """Run events in time order until ``until_ns`` (inclusive) or until ``stop()`` is
        true (checked every ``check_every`` events) or nothing is left. Returns True when
        ``stop()`` ended the run."""
        heap = self._heap
        pop = heapq.heappop
        clock = self.clock
        count = 0
        limit = until_ns if until_ns is not None else 1 << 62
        try:
            while heap:
                if count % check_every == 0 and stop():
                    return True
                t, _, fn, arg = heap[0]
                if t > limit:
                    break
                pop(heap)
                if t != self.now:
                    self.now = t
                    clock.set_ns(t)
                fn(arg)
                count += 1
        finally:
            self.events_run += count
        if stop():
            return True
        if until_ns is not None and self.now < until_ns:
            self.now = until_ns
            clock.set_ns(until_ns)
        return False
