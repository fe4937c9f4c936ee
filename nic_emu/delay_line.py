"""Link delay of one port: frames wait ``delay_ns`` between being transmitted and being put
on the wire (docs/nic-emu-process.md, ``delay_us``).

Each end of a link delays the frames it sends, so each direction of a link is delayed
once, by its sender. The delay is fixed per port, so release times grow in FIFO order and
a deque is the whole schedule: the head is always the next frame due. The serving loop
wakes at :meth:`DelayLine.next_due` with its ordinary timer; nothing here sleeps or
reads a clock (``now`` is passed in, integer nanoseconds).
"""

from __future__ import annotations

from collections import deque

NS_PER_US = 1000


def delay_ns(delay_us: float) -> int:
    """A port's ``delay_us`` in whole nanoseconds (the loop's clock unit)."""
    return round(delay_us * NS_PER_US)


class DelayLine:
    """The frames of one port that were transmitted but are not on the wire yet."""

    __slots__ = ("_held", "delay_ns")

    def __init__(self, delay_ns: int) -> None:
        if delay_ns < 0:
            raise ValueError(f"a link delay cannot be negative, got {delay_ns} ns")
        self.delay_ns = delay_ns
        self._held: deque[tuple[int, bytes]] = deque()

    def __len__(self) -> int:
        return len(self._held)

    def push(self, frame: bytes, now: int) -> int:
        """Hold ``frame``, transmitted at ``now``; returns when it is due."""
        due = now + self.delay_ns
        self._held.append((due, frame))
        return due

    def next_due(self) -> int | None:
        """When the oldest held frame is due, or None if none is held."""
        return self._held[0][0] if self._held else None

    def pop_due(self, now: int) -> list[bytes]:
        """The held frames due at ``now`` (transmitted at least ``delay_ns`` ago), oldest
        first; they are no longer held."""
        held = self._held
        out: list[bytes] = []
        while held and held[0][0] <= now:
            out.append(held.popleft()[1])
        return out

    def clear(self) -> int:
        """Drop every held frame (the port went down: they were still on the cable);
        returns how many."""
        dropped = len(self._held)
        self._held.clear()
        return dropped
