"""The one event list of a virtual fabric: integer nanoseconds, one shared clock.

The shape follows htsim's ``EventList``: components (switches, wires, NICs, faults)
schedule their own callbacks; the list runs them in time order and moves the shared
:class:`p4emu.runtime.clock.VirtualClock` to each event's time before running it, so every
p4emu switch reads the same virtual time. Callbacks scheduled for the same instant run in
the order they were scheduled, which makes a run deterministic.

Two ways to schedule, one order (both take the next tie-breaking number):

- :meth:`EventList.at` refuses a time in the past and returns an :class:`EventHandle`
  that :meth:`EventList.cancel` takes: for faults, transfers, pause frames, tests;
- :meth:`EventList.push`, the per-packet path (a wire's arrivals, a switch's or a NIC's
  wake-ups): no check and no handle, for a caller whose time is at or after :attr:`now`
  by construction.

Nothing outside this module touches the heap.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from heapq import heapify, heappop, heappush
from typing import Any

from p4emu.runtime.clock import VirtualClock
from vfabric.exceptions import EventHandleError, FaultTimeError, VirtualFabricError

#: one scheduled callback on the heap: (time_ns, sequence, callback, argument)
Entry = tuple[int, int, Callable[[Any], Any], Any]


class EventHandle:
    """What :meth:`EventList.at` returns: the event's time and tie-breaking number, for
    :meth:`EventList.cancel`. ``cancelled`` is true once a cancel removed it."""

    __slots__ = ("cancelled", "entry", "events")

    def __init__(self, events: EventList, entry: Entry) -> None:
        self.events = events
        self.entry = entry
        self.cancelled = False

    @property
    def time_ns(self) -> int:
        return self.entry[0]

    @property
    def sequence(self) -> int:
        return self.entry[1]

    def __repr__(self) -> str:
        state = " cancelled" if self.cancelled else ""
        return f"<EventHandle #{self.entry[1]} at {self.entry[0]} ns{state}>"


class EventList:
    """A heap of ``(time_ns, sequence, callback, argument)``; see the module docstring."""

    __slots__ = ("_queue", "_sequence", "clock", "events_run", "now")

    def __init__(self, clock: VirtualClock | None = None) -> None:
        self.clock = clock if clock is not None else VirtualClock()
        self.now = self.clock.now_ns()
        self._queue: list[Entry] = []
        #: the next tie-breaking number (scheduling order among events at one instant)
        self._sequence: Callable[[], int] = itertools.count(1).__next__
        self.events_run = 0

    def at(self, t_ns: int, fn: Callable[[Any], Any], arg: Any = None) -> EventHandle:
        """Run ``fn(arg)`` at virtual time ``t_ns`` (not before now); the handle cancels it."""
        if t_ns < self.now:
            raise FaultTimeError(
                f"cannot schedule at {t_ns} ns: virtual time is already {self.now} ns"
            )
        entry = (t_ns, self._sequence(), fn, arg)
        heappush(self._queue, entry)
        return EventHandle(self, entry)

    def push(self, t_ns: int, fn: Callable[[Any], Any], arg: Any) -> None:
        """The per-packet path: run ``fn(arg)`` at ``t_ns``, which the caller guarantees is
        at or after :attr:`now` (unchecked; no handle). Same order as :meth:`at`."""
        heappush(self._queue, (t_ns, self._sequence(), fn, arg))

    def cancel(self, handle: EventHandle) -> bool:
        """Take ``handle``'s event off the list: True if it was pending. An event that has
        already run (or is running) or was already cancelled is left alone: False, a
        no-op, so a component may cancel a timer without knowing whether it fired. A handle
        that this list did not give out raises :class:`EventHandleError`. Costs a pass
        over the pending events (for rare events: faults, timers of a test)."""
        if not isinstance(handle, EventHandle):
            raise EventHandleError(f"not an event handle: {handle!r}")
        if handle.events is not self:
            raise EventHandleError(f"{handle!r} was scheduled on another event list")
        if handle.cancelled:
            return False
        queue = self._queue
        entry = handle.entry
        if entry[0] < self.now:
            return False  # ran at an earlier instant
        # Pending events are unique by (time, sequence), so removing one and restoring
        # the heap leaves every other event's turn unchanged.
        try:
            index = queue.index(entry)
        except ValueError:
            return False  # ran at this instant (or is running)
        last = queue.pop()
        if index < len(queue):
            queue[index] = last
            heapify(queue)
        handle.cancelled = True
        return True

    def next_time(self) -> int | None:
        return self._queue[0][0] if self._queue else None

    def pending(self) -> int:
        return len(self._queue)

    def run(self, until_ns: int | None, stop: Callable[[], bool], check_every: int = 64) -> bool:
        """Run events in time order until ``until_ns`` (inclusive) or until ``stop()`` is
        true (checked every ``check_every`` events) or nothing is left. Returns True when
        ``stop()`` ended the run."""
        if isinstance(check_every, bool) or not isinstance(check_every, int) or check_every < 1:
            raise VirtualFabricError(f"check_every must be a positive integer, got {check_every!r}")
        heap = self._queue
        pop = heappop
        set_clock = self.clock.set_ns
        count = 0  # events run in the chunks before the current one
        i = -1  # the current chunk's event: i events of it ran before this one
        now = self.now
        limit = until_ns if until_ns is not None else 1 << 62
        if limit < now:  # every pending event is at or after now: none is due
            heap = []
        try:
            # stop() is asked before every check_every-th event; in between, events run
            # in a plain loop over a chunk, counted once per chunk (from its index i)
            while heap:
                if stop():
                    return True
                for i in range(check_every):
                    t, seq, fn, arg = pop(heap)
                    if t != now:
                        if t > limit:
                            heappush(heap, (t, seq, fn, arg))  # its place is unchanged
                            heap = []  # ends the outer loop too
                            i -= 1  # this one did not run
                            break
                        self.now = now = t
                        set_clock(t)
                    fn(arg)
                    if not heap:
                        break
                count += i + 1
                i = -1
        finally:
            # a callback that raised ends the run: the i events before it in its chunk ran
            self.events_run += count + (i if i > 0 else 0)
        if stop():
            return True
        if until_ns is not None and self.now < until_ns:
            self.now = until_ns
            self.clock.set_ns(until_ns)
        return False
