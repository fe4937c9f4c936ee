"""The one event list of a virtual fabric: integer nanoseconds, one shared clock.

The shape follows htsim's ``EventList``: components (switches, wires, NICs, faults)
schedule their own callbacks with :meth:`EventList.at`; the list runs them in time order
and moves the shared :class:`p4emu.runtime.clock.VirtualClock` to each event's time before
running it, so every p4emu switch reads the same virtual time. Callbacks scheduled for
the same instant run in the order they were scheduled, which makes a run deterministic.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable
from typing import Any

from p4emu.runtime.clock import VirtualClock
from vfabric.exceptions import FaultTimeError, VirtualFabricError


class EventList:
    """A heap of ``(time_ns, sequence, callback, argument)``; see the module docstring.

    Per-packet components (wires, switch wake-ups) skip :meth:`at`'s check, whose only
    job is to refuse a time in the past: they push ``(t_ns, sequence(), fn, arg)`` onto
    :attr:`queue` with ``heapq.heappush`` themselves, for a ``t_ns`` at or after
    :attr:`now`.
    """

    __slots__ = ("clock", "events_run", "now", "queue", "sequence")

    def __init__(self, clock: VirtualClock | None = None) -> None:
        self.clock = clock if clock is not None else VirtualClock()
        self.now = self.clock.now_ns()
        self.queue: list[tuple[int, int, Callable[[Any], Any], Any]] = []
        #: the next tie-breaking number (scheduling order among events at one instant)
        self.sequence: Callable[[], int] = itertools.count(1).__next__
        self.events_run = 0

    def at(self, t_ns: int, fn: Callable[[Any], Any], arg: Any = None) -> None:
        """Run ``fn(arg)`` at virtual time ``t_ns`` (not before now)."""
        if t_ns < self.now:
            raise FaultTimeError(
                f"cannot schedule at {t_ns} ns: virtual time is already {self.now} ns"
            )
        heapq.heappush(self.queue, (t_ns, self.sequence(), fn, arg))

    def next_time(self) -> int | None:
        return self.queue[0][0] if self.queue else None

    def pending(self) -> int:
        return len(self.queue)

    def run(self, until_ns: int | None, stop: Callable[[], bool], check_every: int = 64) -> bool:
        """Run events in time order until ``until_ns`` (inclusive) or until ``stop()`` is
        true (checked every ``check_every`` events) or nothing is left. Returns True when
        ``stop()`` ended the run."""
        if isinstance(check_every, bool) or not isinstance(check_every, int) or check_every < 1:
            raise VirtualFabricError(f"check_every must be a positive integer, got {check_every!r}")
        heap = self.queue
        pop = heapq.heappop
        set_clock = self.clock.set_ns
        count = 0
        now = self.now
        limit = until_ns if until_ns is not None else 1 << 62
        if limit < now:  # every pending event is at or after now: none is due
            heap = []
        chunk = range(check_every)
        try:
            # stop() is asked before every check_every-th event; in between, events run
            # in a plain loop over a chunk (cheaper than counting each one)
            while heap:
                if stop():
                    return True
                for _ in chunk:
                    t, seq, fn, arg = pop(heap)
                    if t != now:
                        if t > limit:
                            heapq.heappush(heap, (t, seq, fn, arg))  # its place is unchanged
                            heap = []  # ends the outer loop too
                            break
                        self.now = now = t
                        set_clock(t)
                    fn(arg)
                    count += 1
                    if not heap:
                        break
        finally:
            self.events_run += count
        if stop():
            return True
        if until_ns is not None and self.now < until_ns:
            self.now = until_ns
            self.clock.set_ns(until_ns)
        return False
