"""The event list: time order, scheduling order at one instant, stop() every
check_every events, the until_ns limit."""

from __future__ import annotations

import pytest

from vfabric.eventlist import EventList
from vfabric.exceptions import FaultTimeError, VirtualFabricError


def test_events_run_in_time_then_scheduling_order_and_may_schedule_more() -> None:
    events = EventList()
    ran: list[tuple[int, str]] = []

    def note(tag: str) -> None:
        ran.append((events.now, tag))
        if tag == "b":
            events.at(events.now, note, "b-now")  # same instant: after what is queued
            events.at(events.now + 5, note, "b-later")

    for t, tag in [(30, "c"), (10, "a"), (10, "b"), (10, "a2"), (20, "d")]:
        events.at(t, note, tag)
    assert events.run(None, lambda: False) is False
    assert ran == [
        (10, "a"),
        (10, "b"),
        (10, "a2"),
        (10, "b-now"),
        (15, "b-later"),
        (20, "d"),
        (30, "c"),
    ]
    assert events.events_run == 7 and events.now == 30 and events.clock.now_ns() == 30


@pytest.mark.parametrize(
    ("check_every", "asked_at"),
    [(1, [0, 1, 2, 3, 4, 5]), (3, [0, 3, 6]), (64, [0, 10])],  # 64: and once all ran
)
def test_stop_is_asked_before_every_check_every_th_event(
    check_every: int, asked_at: list[int]
) -> None:
    events = EventList()
    ran: list[int] = []
    asked: list[int] = []
    for i in range(10):
        events.at(i, ran.append, i)

    def stop() -> bool:
        asked.append(len(ran))
        return len(ran) >= 5

    assert events.run(None, stop, check_every=check_every) is True
    assert asked == asked_at
    assert ran == list(range(asked_at[-1])) and events.events_run == asked_at[-1]


def test_until_ns_leaves_later_events_queued() -> None:
    events = EventList()
    ran: list[int] = []
    for t in (5, 10, 15):
        events.at(t, ran.append, t)
    assert events.run(10, lambda: False) is False
    assert ran == [5, 10] and events.now == 10 and events.pending() == 1
    assert events.next_time() == 15
    events.run(12, lambda: False)
    assert ran == [5, 10] and events.now == 12
    events.run(None, lambda: False)
    assert ran == [5, 10, 15]


def test_bad_calls_get_specific_errors() -> None:
    events = EventList()
    events.run(100, lambda: False)
    with pytest.raises(FaultTimeError, match="already 100 ns"):
        events.at(99, print)
    with pytest.raises(VirtualFabricError, match="check_every must be a positive integer"):
        events.run(None, lambda: False, check_every=0)
