"""The event list: time order, scheduling order at one instant, stop() every
check_every events, the until_ns limit."""

from __future__ import annotations

import pytest

from vfabric.eventlist import EventList, EventSource
from vfabric.exceptions import EventHandleError, FaultTimeError, VirtualFabricError


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


def test_push_and_at_share_one_order() -> None:
    events = EventList()
    ran: list[str] = []
    events.push(10, ran.append, "pushed first")
    events.at(10, ran.append, "at second")
    events.push(5, ran.append, "earlier")
    events.run(None, lambda: False)
    assert ran == ["earlier", "pushed first", "at second"]


class _Recorder(EventSource):
    __slots__ = ("name", "seen")

    def __init__(self, name: str, seen: list[tuple[str, object]]) -> None:
        self.name = name
        self.seen = seen

    def fire(self, arg: object) -> None:
        self.seen.append((self.name, arg))


def test_push_source_fires_the_source_in_the_one_order_and_keeps_nothing() -> None:
    """``push_source(t, source, arg)`` runs ``source.fire(arg)`` at ``t``, ordered with
    ``push`` and ``at`` by the one scheduling number; a run event's slot holds no
    reference to its argument afterwards."""
    import gc
    import weakref

    events = EventList()
    seen: list[tuple[str, object]] = []
    a, b = _Recorder("a", seen), _Recorder("b", seen)

    class Payload:
        pass

    payload = Payload()
    gone = weakref.ref(payload)
    events.push_source(5, a, payload)
    events.push(5, lambda arg: seen.append(("push", arg)), 1)
    events.push_source(3, b, "early")
    events.at(5, lambda arg: seen.append(("at", arg)), 2)
    events.push_source(5, b, "last")
    del payload
    assert events.run(None, lambda: False) is False
    assert [(n, arg if isinstance(arg, (str, int)) else "payload") for n, arg in seen] == [
        ("b", "early"),
        ("a", "payload"),
        ("push", 1),
        ("at", 2),
        ("b", "last"),
    ]
    assert events.events_run == 5
    seen.clear()
    gc.collect()
    assert gone() is None


class _IntRecorder(_Recorder):
    """An event source with an event of its own for ``push_source_int``."""

    def fire_int(self, arg: int) -> None:
        self.seen.append((self.name + "-int", arg))


def test_push_source_int_fires_fire_int_with_the_integer_in_the_one_order() -> None:
    """``push_source_int(t, source, n)`` runs ``source.fire_int(n)`` at ``t`` (the native
    build keeps ``n`` in C), ordered with the other three ways in by the one scheduling
    number; the 64-bit extremes come back unchanged, and a source that does not override
    ``fire_int`` has its ``fire`` called with the integer."""
    from vfabric.eventlist import C_HEAP_START

    events = EventList()
    seen: list[tuple[str, object]] = []
    a, b = _IntRecorder("a", seen), _Recorder("b", seen)
    events.push_source_int(7, a, 2**63 - 1)
    events.push_source(7, a, "source")
    events.push_source_int(3, a, -(2**63))
    events.push(7, lambda arg: seen.append(("push", arg)), 1)
    events.push_source_int(7, b, 0)  # no fire_int of its own: fire(0)
    events.at(3, lambda arg: seen.append(("at", arg)), 2)
    events.push_source_int(7, a, -1)
    assert events.pending() == 7
    assert events.run(None, lambda: False) is False
    assert seen == [
        ("a-int", -(2**63)),
        ("at", 2),
        ("a-int", 2**63 - 1),
        ("a", "source"),
        ("push", 1),
        ("b", 0),
        ("a-int", -1),
    ]
    assert events.events_run == 7 and events.pending() == 0
    # slots freed by integer events are reused by events with objects, and back
    seen.clear()
    for t in range(10, 10 + 3 * C_HEAP_START, 3):
        events.push_source_int(t, a, t)
        events.push_source(t + 1, b, str(t))
    events.run(None, lambda: False)
    assert seen == [
        item for t in range(10, 10 + 3 * C_HEAP_START, 3) for item in (("a-int", t), ("b", str(t)))
    ]


def test_now_object_is_now_as_the_clock_s_int() -> None:
    """``now_object()`` is :attr:`now` as an int object at every moment: inside events
    (where, compiled, it is the very object the run loop gave the clock), after a run
    stopped by ``until_ns`` and after ``now`` was set by hand; one object between moves."""
    events = EventList()
    assert events.now_object() == events.now == 0
    big = 2**62 - 1
    seen: list[tuple[int, int, int]] = []

    def look(_: object) -> None:
        moment = events.now_object()
        assert moment is events.now_object()
        seen.append((moment, events.now, events.clock.now_ns()))

    for t in (5, 5, 1_000_003, big):
        events.push(t, look, None)
    events.run(1_000_003, lambda: False)
    assert seen == [(5, 5, 5), (5, 5, 5), (1_000_003,) * 3]
    events.run(2_000_000, lambda: False)  # nothing due: now moves to until_ns
    assert events.now_object() == events.now == 2_000_000
    events.run(None, lambda: False)
    assert seen[-1] == (big, big, big) and events.now_object() == big
    events.now = 7_000  # set by hand (as a test may): the next read follows it
    assert events.now_object() == 7_000
    assert events.now_object() is events.now_object()


def test_an_event_source_must_say_what_its_event_does() -> None:
    events = EventList()
    events.push_source(1, EventSource(), None)
    with pytest.raises(NotImplementedError, match="EventSource has no event of its own"):
        events.run(None, lambda: False)


def test_at_returns_a_handle_that_cancel_takes_off_the_list() -> None:
    events = EventList()
    ran: list[int] = []
    handles = [events.at(t, ran.append, t) for t in (30, 10, 20, 10, 40)]
    assert handles[1].time_ns == 10 and handles[1].sequence == 2
    assert events.cancel(handles[2]) is True
    assert handles[2].cancelled and "cancelled" in repr(handles[2])
    assert events.pending() == 4
    assert events.cancel(handles[0]) is True  # the others keep their turn
    events.run(None, lambda: False)
    assert ran == [10, 10, 40] and events.events_run == 3


def test_a_callback_may_cancel_a_later_event_at_the_same_instant() -> None:
    events = EventList()
    ran: list[str] = []
    outcome: list[bool] = []
    events.at(7, lambda _: outcome.append(events.cancel(target)))
    target = events.at(7, ran.append, "cancelled")
    events.at(7, ran.append, "kept")
    events.run(None, lambda: False)
    assert outcome == [True] and ran == ["kept"]


def test_cancel_of_a_run_running_or_cancelled_event_is_a_no_op() -> None:
    events = EventList()
    ran: list[int] = []
    outcome: list[bool] = []
    earlier = events.at(5, ran.append, 5)
    same_instant = events.at(9, ran.append, 9)
    running = events.at(9, lambda _: outcome.append(events.cancel(running)))
    twice = events.at(20, ran.append, 20)
    events.at(30, ran.append, 30)
    events.run(9, lambda: False)
    assert ran == [5, 9] and outcome == [False]  # the running event cannot be cancelled
    assert events.cancel(earlier) is False  # ran at an earlier instant
    assert events.cancel(same_instant) is False  # ran at this instant
    assert events.cancel(twice) is True
    assert events.cancel(twice) is False
    events.run(None, lambda: False)
    assert ran == [5, 9, 30] and not earlier.cancelled and twice.cancelled


def test_cancel_after_until_ns_put_the_next_event_back() -> None:
    events = EventList()
    ran: list[int] = []
    handle = events.at(15, ran.append, 15)
    events.run(10, lambda: False)  # took the event at 15 off the heap and put it back
    assert events.cancel(handle) is True and events.pending() == 0


def test_cancel_refuses_what_is_not_one_of_its_handles() -> None:
    events, other = EventList(), EventList()
    foreign = other.at(5, print)
    with pytest.raises(EventHandleError, match="another event list"):
        events.cancel(foreign)
    with pytest.raises(EventHandleError, match="not an event handle: 5"):
        events.cancel(5)  # type: ignore[arg-type]
    assert other.pending() == 1


@pytest.mark.parametrize("check_every", [1, 2, 64])
def test_a_callback_that_raises_ends_the_run_and_the_count_holds(check_every: int) -> None:
    events = EventList()
    ran: list[int] = []

    def boom(_: None) -> None:
        raise ValueError("boom")

    for t in (1, 2, 3):
        events.at(t, ran.append, t)
    events.at(4, boom)
    events.at(5, ran.append, 5)
    with pytest.raises(ValueError, match="boom"):
        events.run(None, lambda: False, check_every=check_every)
    assert ran == [1, 2, 3] and events.events_run == 3 and events.now == 4
    events.run(None, lambda: False, check_every=check_every)  # the rest, where it stopped
    assert ran == [1, 2, 3, 5] and events.events_run == 4


@pytest.mark.parametrize("check_every", [1, 3, 64])
def test_events_run_counts_every_event_whatever_ends_the_chunk(check_every: int) -> None:
    events = EventList()
    for t in range(10):
        events.at(t, lambda _: None)
    events.run(4, lambda: False, check_every=check_every)  # the limit ends a chunk
    assert events.events_run == 5
    events.run(None, lambda: False, check_every=check_every)  # the last event ends it
    assert events.events_run == 10


@pytest.mark.parametrize("seed", range(8))
def test_many_events_run_in_time_and_scheduling_order_through_pushes_and_cancels(
    seed: int,
) -> None:
    """Thousands of events (more than the native heap's first allocation,
    ``C_HEAP_START``: it grows), many at one instant, callbacks that push more and cancel
    pending ones, and runs stopped by ``until_ns``: the events run exactly in the order
    of a model, a list sorted by (time, scheduling number)."""
    import random

    from vfabric.eventlist import C_HEAP_START

    rng = random.Random(seed)
    events = EventList()
    model: dict[int, int] = {}  # scheduling number -> time, of every pending event
    handles: dict[int, object] = {}
    ran: list[int] = []
    numbers = iter(range(1, 10**9))

    class Source(EventSource):  # the third way in: push_source, fired in C when native
        __slots__ = ()

        def fire(self, number: int) -> None:
            fire(number)

        def fire_int(self, number: int) -> None:
            fire(number)

    source = Source()

    def schedule(t: int, handle: bool) -> None:
        number = next(numbers)
        model[number] = t
        if handle:
            handles[number] = events.at(t, fire, number)
        elif number % 2:
            events.push(t, fire, number)
        elif number % 4:
            events.push_source(t, source, number)
        else:  # the fourth: the number a C integer on the native build
            events.push_source_int(t, source, number)

    def fire(number: int) -> None:
        assert model.pop(number) == events.now
        handles.pop(number, None)
        ran.append(number)
        for _ in range(rng.choice((0, 0, 1, 2))):  # more work, some at this very instant
            schedule(events.now + rng.choice((0, 0, 1, 7, 50)), rng.random() < 0.3)
        if handles and rng.random() < 0.2:  # cancel a pending event
            victim = rng.choice(sorted(handles))
            assert events.cancel(handles.pop(victim)) is True  # type: ignore[arg-type]
            del model[victim]

    for _ in range(3 * C_HEAP_START):
        schedule(rng.randrange(0, 400), rng.random() < 0.3)
    assert events.pending() == len(model) > C_HEAP_START
    expected_next = min(model.values())
    assert events.next_time() == expected_next
    until = 0
    while model:
        until += rng.choice((1, 13, 100))
        due = sorted((t, n) for n, t in model.items() if t <= until)
        start = len(ran)
        events.run(until, lambda: False, check_every=rng.choice((1, 5, 64)))
        # the events due by ``until`` when the run started ran first, in order (those
        # they scheduled at or before ``until`` ran too, interleaved by the same order)
        got = ran[start:]
        assert [n for n in got if n in {n for _, n in due}] == [n for _, n in due if n in got]
        assert all(t > until for t in model.values())
        assert events.pending() == len(model)
        assert events.next_time() == (min(model.values()) if model else None)
    assert len(ran) == events.events_run == len(set(ran))


def test_events_a_few_ns_apart_run_as_whole_instants_in_scheduling_order() -> None:
    """Events less than 64 ns after the last time taken (the native radix heap's lowest
    level, whose buckets are taken whole into the ready chain), several at each instant,
    put in an interleaved order, with more put at the running instant, just after it and
    at an instant already waiting: each instant's events run in the order they were put,
    the instants in time order."""
    events = EventList()
    ran: list[tuple[int, str]] = []

    def note(tag: str) -> None:
        ran.append((events.now, tag))
        if tag == "3a":
            events.push(events.now, note, "3-now")
            events.push(events.now + 1, note, "4-next")
            events.push(5, note, "5-late")

    events.push(0, note, "0")
    events.run(None, lambda: False)  # the last time taken is 0: what follows is level 0
    for tag in ("5a", "3a", "5b", "4a", "3b", "63a", "5c", "63b", "3c"):
        events.push(int(tag[:-1]), note, tag)
    assert events.run(None, lambda: False) is False
    assert ran == [
        (0, "0"),
        (3, "3a"),
        (3, "3b"),
        (3, "3c"),
        (3, "3-now"),
        (4, "4a"),
        (4, "4-next"),
        (5, "5a"),
        (5, "5b"),
        (5, "5c"),
        (5, "5-late"),
        (63, "63a"),
        (63, "63b"),
    ]


class _SignedClock:
    """A clock that starts before 0 (the event list takes any clock with ``now_ns`` and
    ``set_ns``): events before 0, and before the first ones put, are still in order."""

    def __init__(self, start_ns: int) -> None:
        self.ns = start_ns

    def now_ns(self) -> int:
        return self.ns

    def set_ns(self, ns: int) -> None:
        assert ns >= self.ns
        self.ns = ns


@pytest.mark.parametrize("seed", range(6))
def test_times_far_apart_and_earlier_than_the_first_run_in_the_one_order(seed: int) -> None:
    """Times from 2**62 down to before 0, gaps from 0 to 2**61 (the native list's radix
    heap files an event by the highest bits its time differs in from the last time
    taken: every level of it), events put before every event put so far (before the
    first run: the native list files everything again), cancels of the earliest event
    of a bucket and of others, runs stopped by ``until_ns``: the events run exactly in
    the order of a model sorted by (time, scheduling number), and ``next_time`` is the
    model's earliest time throughout."""
    import random

    rng = random.Random(1000 + seed)
    start = -(2**40)
    events = EventList(clock=_SignedClock(start))  # type: ignore[arg-type]
    model: dict[int, int] = {}
    handles: dict[int, object] = {}
    ran: list[int] = []
    numbers = iter(range(1, 10**9))
    gaps = (0, 0, 1, 2, 63, 64, 65, 4095, 4096, 2**20, 2**35 + 3, 2**50, 2**61)

    def schedule(t: int) -> None:
        number = next(numbers)
        model[number] = t
        if number % 3:
            handles[number] = events.at(t, fire, number)
        else:
            events.push(t, fire, number)

    def fire(number: int) -> None:
        assert model.pop(number) == events.now
        handles.pop(number, None)
        ran.append(number)
        for _ in range(rng.choice((0, 1, 1, 2))):
            t = events.now + rng.choice(gaps)
            if t < 2**62:
                schedule(t)
        if handles and rng.random() < 0.3:  # the earliest pending, or any
            pending = sorted(handles, key=lambda n: (model[n], n))
            victim = pending[0] if rng.random() < 0.5 else rng.choice(pending)
            assert events.cancel(handles.pop(victim)) is True  # type: ignore[arg-type]
            del model[victim]

    # before the first run: later times first, then ever earlier ones (each before
    # every event put so far), some of them equal
    for base in (2**61, 2**30, 5_000, 0, -5, -(2**39)):
        for _ in range(40):
            schedule(base + rng.choice(gaps))
            assert events.next_time() == min(model.values())
    schedule(start)
    assert events.pending() == len(model)
    until = start
    while model:
        due = sorted((t, n) for n, t in model.items() if t <= until)
        begin = len(ran)
        events.run(until, lambda: False, check_every=rng.choice((1, 7, 64)))
        got = ran[begin:]
        assert [n for n in got if n in {n for _, n in due}] == [n for _, n in due if n in got]
        assert all(t > until for t in model.values())
        assert events.pending() == len(model)
        assert events.next_time() == (min(model.values()) if model else None)
        if model:  # to the next event, or a little past it, or a stop before it
            until = min(model.values()) + rng.choice((-1, 0, 0, 3, 2**20))
    assert len(ran) == events.events_run == len(set(ran))


def test_the_clock_reads_the_event_list_s_time_in_every_way() -> None:
    """The run loop moves the clock to each event's time (compiled: as a C integer, the
    int object made only when asked for): inside events, ``now_ns``, ``now_us``,
    ``read_ns`` and ``read_us`` give that time; after the run the clock advances and
    refuses to go back from it, and a subclass of VirtualClock has its own ``set_ns``
    called."""
    from p4emu.runtime.clock import VirtualClock, read_ns, read_us
    from p4emu.runtime.exceptions import RuntimeP4Error

    events = EventList()
    clock = events.clock
    seen: list[tuple[int, ...]] = []

    def look(_: object) -> None:
        now = events.now
        seen.append((now, read_ns(clock), read_us(clock), clock.now_us(), clock.now_ns()))

    times = (0, 999, 1_000, 1_000, 123_456_789, 2**62 - 1)
    for t in times:
        events.push(t, look, None)
    events.run(None, lambda: False)
    assert seen == [(t, t, t // 1000, t // 1000, t) for t in times]
    with pytest.raises(RuntimeP4Error, match=f"from {2**62 - 1} ns to {2**62 - 2} ns"):
        clock.set_ns(2**62 - 2)
    assert clock.advance_ns(5) == 2**62 + 4 and read_ns(clock) == 2**62 + 4

    class Counted(VirtualClock):
        __slots__ = ("moves",)

        def set_ns(self, ns: int) -> None:
            self.moves.append(ns)
            super().set_ns(ns)

    counted = Counted()
    counted.moves = []
    events = EventList(counted)
    for t in (7, 7, 9):
        events.push(t, look, None)
    events.run(20, lambda: False)
    assert counted.moves == [7, 9, 20] and counted.now_ns() == read_ns(counted) == 20
