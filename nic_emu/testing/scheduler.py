"""What the test doubles of :mod:`nic_emu.testing` need from an event list.

There is one event loop in the project, :class:`vfabric.eventlist.EventList`
(docs/virtual-fabric.md). ``nic_emu`` may not import ``vfabric`` (docs/architecture.md),
so the doubles are given one: a test or a benchmark builds ``EventList()`` and passes it
in. This protocol is the part of its interface they use.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol


class Scheduler(Protocol):
    """Virtual time in integer nanoseconds; callbacks of one argument, run in time order
    and, at one instant, in scheduling order (:class:`vfabric.eventlist.EventList`)."""

    @property
    def now(self) -> int: ...

    def at(self, t_ns: int, fn: Callable[[Any], Any], arg: Any = None) -> object:
        """Run ``fn(arg)`` at ``t_ns``; a time in the past is refused."""

    def push(self, t_ns: int, fn: Callable[[Any], Any], arg: Any) -> None:
        """Run ``fn(arg)`` at ``t_ns``, at or after now by the caller's construction."""

    def pending(self) -> int:
        """Events not run yet."""

    def run(self, until_ns: int | None, stop: Callable[[], bool], check_every: int = 64) -> bool:
        """Run events until ``until_ns``, until ``stop()`` (asked every ``check_every``
        events) or until none is left; True when ``stop()`` ended it."""


def never() -> bool:
    """A ``stop`` that never stops a run."""
    return False
