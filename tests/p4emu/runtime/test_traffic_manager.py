"""Egress queues: build-up under oversubscription, tail drop, priorities, timestamps."""

from __future__ import annotations

import hashlib
import itertools
import random

import pytest

from p4emu.runtime.clock import NS_PER_S, VirtualClock
from p4emu.runtime.exceptions import TrafficManagerError
from p4emu.runtime.traffic_manager import (
    INDEXED_PORTS,
    MAX_GAP_NS,
    MAX_HELD,
    MAX_PRIORITY_QUEUES,
    DropReason,
    QueuedPacket,
    QueueRate,
    RateScope,
    RateUnit,
    TrafficManager,
    _departure_order,
    _sort_departures,
    _top_bit,
)


def test_unlimited_queue_dequeues_immediately() -> None:
    clock = VirtualClock()
    tm = TrafficManager(clock)
    for i in range(3):
        assert tm.enqueue(1, f"p{i}", 100) is None
    out = tm.poll()
    assert [p.item for p in out] == ["p0", "p1", "p2"]
    assert all(p.deq_timedelta == 0 for p in out)
    # an unlimited queue is empty again by the next arrival, even at the same instant
    assert [p.enq_qdepth for p in out] == [0, 0, 0]
    assert tm.next_departure_ns() is None


def test_two_line_rate_flows_oversubscribe_a_port() -> None:
    """Two flows of R pps each into a port drained at R pps: the queue fills, then drops."""
    clock = VirtualClock()
    tm = TrafficManager(clock)
    rate = 1000  # pps -> one departure per ms
    tm.set_queue_rate(3, rate)
    clock.advance(10_000)
    departed = []
    enq_depths = []
    for n in range(400):  # 2000 pps offered for 200 ms
        flow = n % 2
        result = tm.enqueue(3, (flow, n), 1000)
        if result is None:
            enq_depths.append(tm.queue_depth(3) - 1)
        clock.advance(500)
        departed.extend(tm.poll())
    assert tm.queue_depth(3) >= 63  # full at the default depth (64) between departures
    assert max(enq_depths) == 63
    drops = tm.dropped(3, DropReason.queue_full)
    assert drops > 0
    assert drops == tm.total_drops
    assert len(departed) + tm.queue_depth(3) + drops == 400
    # departures are spaced by exactly 1 ms
    gaps = {b.deq_ns - a.deq_ns for a, b in itertools.pairwise(departed)}
    assert gaps == {1_000_000}
    # queueing delay grows while the queue fills, then stays at depth/rate
    deltas = [p.deq_timedelta for p in departed]
    assert deltas[0] == 0
    assert deltas == sorted(deltas)
    assert deltas[-1] >= 63_000
    # enq_qdepth / deq_qdepth agree with the queue as seen by each packet
    last = departed[-1]
    assert last.enq_qdepth >= 62
    assert last.deq_qdepth >= 62


def test_enq_metadata_and_timestamps_in_microseconds() -> None:
    clock = VirtualClock()
    tm = TrafficManager(clock)
    tm.set_queue_rate(1, 100)  # 10 ms per packet
    clock.advance(1_000_000)
    tm.enqueue(1, "a", 64)
    clock.advance(1)
    tm.enqueue(1, "b", 64)
    clock.advance(2)
    tm.enqueue(1, "c", 64)
    assert tm.next_departure_ns() == 1_000_000_000  # "a" leaves at once
    clock.advance(25_000)
    out = tm.poll()
    assert [p.item for p in out] == ["a", "b", "c"]
    a, b, c = out
    assert (a.enq_timestamp, b.enq_timestamp, c.enq_timestamp) == (1_000_000, 1_000_001, 1_000_003)
    assert (a.enq_qdepth, b.enq_qdepth, c.enq_qdepth) == (0, 0, 1)  # "a" had left when "b" came
    assert (a.deq_timedelta, b.deq_timedelta, c.deq_timedelta) == (0, 9_999, 19_997)
    assert (a.deq_qdepth, b.deq_qdepth, c.deq_qdepth) == (0, 1, 0)
    assert a.qid == 0


def test_first_packet_of_an_unconfigured_queue_waits_one_gap_like_bmv2() -> None:
    clock = VirtualClock()
    tm = TrafficManager(clock)
    tm.set_all_queue_rates(1000)  # applies to queues created later, BMv2-style
    clock.advance(5_000)
    tm.enqueue(2, "x", 64)  # queue created now: send = now + 1 ms
    assert tm.next_departure_ns() == 6_000_000


def test_bits_per_second_rate() -> None:
    clock = VirtualClock()
    tm = TrafficManager(clock)
    tm.set_queue_rate(1, 8_000_000, RateUnit.bits_per_second)  # 1 byte per us
    clock.advance(100)
    for length in (1000, 500, 250):
        tm.enqueue(1, length, length)
    clock.advance(10_000)
    out = tm.poll()
    assert [p.deq_ns // 1000 for p in out] == [100, 1100, 1600]


def test_a_rate_whose_gap_would_pass_the_time_limit_is_refused() -> None:
    """A shaper's times stay below 2**63 ns (the native build's C integers): a packets/s
    rate is checked when set, a bits/s one when a packet's gap is computed."""
    clock = VirtualClock()
    tm = TrafficManager(clock)
    with pytest.raises(TrafficManagerError, match="pps is too low"):
        tm.set_queue_rate(1, 1e-10)
    tm.set_queue_rate(1, 1e-9)  # a gap of 1e18 ns is below 2**62
    tm.set_queue_rate(2, 1e-6, RateUnit.bits_per_second)
    tm.enqueue(2, "first", 1)  # leaves at once
    tm.enqueue(2, "second", 1000)  # one byte's gap after the first: 8e15 ns
    with pytest.raises(TrafficManagerError, match="bps is too low: a 1000-byte packet's gap"):
        tm.enqueue(2, "third", 1)  # the second's gap: 8e18 ns
    assert QueueRate(1.0, RateUnit.bits_per_second).gap_ns(1000) == 8_000_000_000_000
    assert MAX_GAP_NS == 2**62


@pytest.mark.parametrize("scope", [RateScope.queue, RateScope.port])
def test_a_shaper_whose_next_departure_would_pass_the_time_limit_is_refused(
    scope: RateScope,
) -> None:
    """Gaps below the limit that add up past it (packets queued behind a very slow
    shaper): refused, not wrapped."""
    clock = VirtualClock()
    tm = TrafficManager(clock, rate_scope=scope)
    tm.set_queue_rate(1, 1e-9)  # one packet every 1e18 ns
    with pytest.raises(TrafficManagerError, match="next departure passes"):
        for i in range(10):  # queue scope: each departure time is fixed at enqueue
            tm.enqueue(1, i, 100)
        clock.advance(4 * 10**15)  # (us) port scope: fixed as the packets leave
        tm.poll()


def test_queue_rates_compare_by_value_and_unit() -> None:
    pps = QueueRate(5.0, RateUnit.packets_per_second)
    assert pps == QueueRate(5.0, RateUnit.packets_per_second)
    assert pps != QueueRate(5.0, RateUnit.bits_per_second)
    assert hash(pps) == hash(QueueRate(5.0, RateUnit.packets_per_second))
    assert pps.gap_ns(1500) == pps.gap_ns(64) == 200_000_000
    assert repr(pps) == "QueueRate(value=5.0, unit=<RateUnit.packets_per_second: 'pps'>)"


def test_tail_drop_at_configured_depth() -> None:
    clock = VirtualClock()
    tm = TrafficManager(clock)
    tm.set_queue_rate(1, 10)
    tm.set_queue_depth(1, 3)
    clock.advance(1_000_000)
    results = [tm.enqueue(1, i, 64) for i in range(6)]
    # the first leaves at once, so four fit before the queue holds three
    assert results == [None, None, None, None, DropReason.queue_full, DropReason.queue_full]
    assert tm.dropped(1) == 2
    assert tm.queue_depth(1) == 3
    assert tm.queue_depth_limit(1) == 3


def test_priority_out_of_range_is_dropped() -> None:
    tm = TrafficManager(VirtualClock(), priority_queues=2)
    assert tm.enqueue(1, "x", 64, priority=2) is DropReason.priority_out_of_range
    assert tm.dropped(reason=DropReason.priority_out_of_range) == 1


def test_port_scope_strict_priority_serves_highest_queue_first() -> None:
    clock = VirtualClock()
    tm = TrafficManager(clock, priority_queues=8, rate_scope=RateScope.port)
    tm.set_queue_rate(1, 1000)
    clock.advance(1000)
    tm.enqueue(1, "low-0", 64, priority=0)  # departs at once (link idle)
    tm.enqueue(1, "low-1", 64, priority=0)
    tm.enqueue(1, "low-2", 64, priority=0)
    tm.enqueue(1, "mid", 64, priority=3)
    tm.enqueue(1, "high", 64, priority=7)
    clock.advance(10_000)
    out = tm.poll()
    assert [p.item for p in out] == ["low-0", "high", "mid", "low-1", "low-2"]
    assert [p.qid for p in out] == [0, 7, 3, 0, 0]
    gaps = {b.deq_ns - a.deq_ns for a, b in itertools.pairwise(out)}
    assert gaps == {1_000_000}
    with pytest.raises(TrafficManagerError):
        tm.set_queue_rate(1, 10, priority=3)


def test_queue_scope_priority_ties_and_independent_shapers() -> None:
    clock = VirtualClock()
    tm = TrafficManager(clock, priority_queues=2)
    tm.set_queue_rate(1, 1000)  # each priority queue gets its own 1000 pps (BMv2)
    clock.advance(5_000)
    tm.enqueue(1, "low", 64, priority=0)
    tm.enqueue(1, "low2", 64, priority=0)
    tm.enqueue(1, "high", 64, priority=1)
    tm.enqueue(1, "high2", 64, priority=1)
    clock.advance(5_000)
    out = tm.poll()
    # both shapers release their second packet at the same instant: highest priority first
    assert [p.item for p in out] == ["low", "high", "high2", "low2"]
    assert out[0].deq_ns == out[1].deq_ns
    assert out[2].deq_ns == out[3].deq_ns == out[0].deq_ns + 1_000_000


def test_ports_are_independent_and_merged_in_time_order() -> None:
    clock = VirtualClock()
    tm = TrafficManager(clock)
    tm.set_queue_rate(1, 1000)
    tm.set_queue_rate(2, 500)
    clock.advance(10_000)
    for _ in range(3):
        tm.enqueue(1, "p1", 64)
        tm.enqueue(2, "p2", 64)
    clock.advance(10_000)
    out = tm.poll()
    assert [p.deq_ns // 1000 for p in out] == [10_000, 10_000, 11_000, 12_000, 12_000, 14_000]
    assert [p.port for p in out] == [1, 2, 1, 1, 2, 2]


def test_real_time_driver_api() -> None:
    clock = VirtualClock()
    tm = TrafficManager(clock)
    tm.set_queue_rate(1, 1000)
    clock.advance(5_000)
    tm.enqueue(1, "a", 64)
    tm.enqueue(1, "b", 64)
    first = tm.next_departure_ns()
    assert first == clock.now_ns()
    assert [p.item for p in tm.poll()] == ["a"]
    nxt = tm.next_departure_ns()
    assert nxt == first + 1_000_000
    assert tm.poll() == []
    clock.set_ns(nxt)
    assert [p.item for p in tm.poll()] == ["b"]


def test_configuration_errors() -> None:
    clock = VirtualClock()
    with pytest.raises(TrafficManagerError):
        TrafficManager(clock, priority_queues=0)
    tm = TrafficManager(clock)
    with pytest.raises(TrafficManagerError):
        tm.set_queue_depth(1, -1)
    with pytest.raises(TrafficManagerError):
        tm.set_queue_rate(1, -5)
    with pytest.raises(TrafficManagerError):
        tm.set_queue_depth(1, 4, priority=1)
    tm.set_all_queue_depths(8)
    assert tm.queue_depth_limit(9) == 8


def test_queue_rate_reports_the_configured_rate_per_port() -> None:
    from p4emu.runtime.clock import VirtualClock
    from p4emu.runtime.traffic_manager import RateUnit, TrafficManager

    tm = TrafficManager(VirtualClock(), priority_queues=2)
    assert tm.queue_rate(1) is None
    tm.set_all_queue_rates(1000, RateUnit.packets_per_second)
    tm.set_queue_rate(2, 250, RateUnit.packets_per_second, priority=1)
    assert (tm.queue_rate(1), tm.queue_rate(2, 0), tm.queue_rate(2, 1)) == (1000, 1000, 250)


@pytest.mark.parametrize("scope", [RateScope.queue, RateScope.port])
def test_next_departure_is_exact_under_mixed_ports_and_priorities(scope: RateScope) -> None:
    """After any enqueue or poll, nothing leaves before next_departure_ns() and something
    leaves exactly then (each busy port keeps its next departure time incrementally)."""
    rng = random.Random(7)
    clock = VirtualClock()
    tm = TrafficManager(clock, priority_queues=3, rate_scope=scope)
    for port, rate in ((1, 1e9), (2, 4e9), (3, None)):
        tm.set_queue_rate(port, rate, RateUnit.bits_per_second)
    clock.advance(1_000)
    sent = released = 0
    for _ in range(400):
        for _ in range(rng.randrange(4)):
            prio = rng.randrange(3)
            if tm.enqueue(rng.choice((1, 2, 3)), "x", rng.choice((64, 1500)), prio) is None:
                sent += 1
        due = tm.next_departure_ns()
        assert tm.next_departure_c() == (-1 if due is None else due)  # the fabric's C call
        if due is None:
            clock.advance(rng.randrange(1, 5_000))
            continue
        if due > clock.now_ns():
            clock.set_ns(due - 1)
            assert tm.poll() == []
            clock.set_ns(due)
        out = tm.poll()
        assert out and out[0].deq_ns == due
        released += len(out)
        clock.advance(rng.randrange(0, 3))
    clock.advance(1_000_000_000)
    released += len(tm.poll())
    assert released == sent and tm.next_departure_ns() is None
    assert tm.next_departure_c() == -1


def test_queue_scope_new_packet_leaving_before_the_ports_other_queue() -> None:
    """Queue scope: a packet of an idle queue can leave before the head of a backed-up
    queue of the same port; next_departure_ns follows it."""
    clock = VirtualClock()
    tm = TrafficManager(clock, priority_queues=2)
    tm.set_queue_rate(1, 1000, priority=0)  # 1 ms between departures of priority 0
    clock.advance(5_000)
    tm.enqueue(1, "slow-0", 64, priority=0)
    tm.enqueue(1, "slow-1", 64, priority=0)
    assert [p.item for p in tm.poll()] == ["slow-0"]
    slow_due = tm.next_departure_ns()
    assert slow_due == clock.now_ns() + 1_000_000
    tm.enqueue(1, "fast", 64, priority=1)  # priority 1 is unlimited: leaves now
    assert tm.next_departure_ns() == clock.now_ns()
    assert [p.item for p in tm.poll()] == ["fast"]
    assert tm.next_departure_ns() == slow_due


@pytest.mark.parametrize("scope", [RateScope.port, RateScope.queue])
def test_a_packet_leaving_at_once_waits_for_an_unsettled_departure_of_another_port(
    scope: RateScope,
) -> None:
    """A packet for an idle port leaves at once, but when a lower port's packet is due at
    the same instant and not settled yet, the lower port still goes first (poll's order
    across ports)."""
    clock = VirtualClock()
    tm = TrafficManager(clock, rate_scope=scope)
    tm.set_queue_rate(2, 8e9, RateUnit.bits_per_second)  # 1,000 bytes per µs
    assert tm.enqueue(2, "first", 1000) is None
    clock.set_ns(tm.next_departure_ns() or 0)
    assert [p.item for p in tm.poll()] == ["first"]
    assert tm.enqueue(2, "queued", 1000) is None  # waits while "first" is on the link
    due = tm.next_departure_ns()
    assert due is not None and due > clock.now_ns()
    clock.set_ns(due)
    assert tm.enqueue(3, "idle port", 100) is None
    out = tm.poll()
    assert [(p.item, p.deq_ns) for p in out] == [("queued", due), ("idle port", due)]
    assert [p.enq_qdepth for p in out] == [0, 0] and [p.deq_qdepth for p in out] == [0, 0]
    assert tm.next_departure_ns() is None


def _paced_port(priorities: int = 8) -> tuple[VirtualClock, TrafficManager]:
    clock = VirtualClock()
    tm = TrafficManager(clock, priority_queues=priorities, rate_scope=RateScope.port)
    tm.set_queue_rate(1, 8e9, RateUnit.bits_per_second)  # 1000 bytes per us
    return clock, tm


def _drain(clock: VirtualClock, tm: TrafficManager, until_ns: int) -> list[tuple[int, str]]:
    out = []
    while True:
        due = tm.next_departure_ns()
        if due is None or due > until_ns:
            break
        clock.set_ns(max(due, clock.now_ns()))
        out.extend((p.deq_ns, p.item) for p in tm.poll())
    clock.set_ns(max(until_ns, clock.now_ns()))
    return out


def test_a_paused_queue_holds_its_packets_and_the_others_go_on() -> None:
    clock, tm = _paced_port()
    for i in range(3):
        tm.enqueue(1, f"d{i}", 1000, priority=0)
    tm.enqueue(1, "c0", 1000, priority=7)
    first = _drain(clock, tm, 0)  # d0 leaves at once (the port was idle)
    assert first == [(0, "d0")]
    tm.set_paused(1, 0, True)
    assert tm.is_paused(1, 0)
    # the control packet is served; the paused data queue keeps its two packets
    assert _drain(clock, tm, 10_000) == [(1000, "c0")]
    assert tm.queue_depth(1, 0) == 2
    tm.enqueue(1, "d3", 1000, priority=0)  # a paused queue still fills
    assert tm.next_departure_ns() is None
    tm.set_paused(1, 0, False)
    assert _drain(clock, tm, 20_000) == [(10_000, "d1"), (11_000, "d2"), (12_000, "d3")]


def test_a_pause_does_not_cut_the_packet_already_leaving() -> None:
    clock, tm = _paced_port()
    tm.enqueue(1, "a", 1000)
    tm.enqueue(1, "b", 1000)
    assert [p.item for p in tm.poll()] == ["a"]  # left at 0: on the wire until 1000
    clock.set_ns(500)
    tm.set_paused(1, 0, True)
    clock.set_ns(3000)
    assert tm.poll() == []
    tm.set_paused(1, 0, False)  # resumed after the port was free: b leaves now
    assert [(p.deq_ns, p.item) for p in tm.poll()] == [(3000, "b")]


def test_pausing_needs_the_port_rate_scope_and_a_known_priority() -> None:
    tm = TrafficManager(VirtualClock(), priority_queues=2)
    with pytest.raises(TrafficManagerError, match="rate_scope=port"):
        tm.set_paused(1, 0, True)
    _, tm_port = _paced_port(priorities=2)
    with pytest.raises(TrafficManagerError, match="priority 5 out of range"):
        tm_port.set_paused(1, 5, True)


def test_ports_at_the_index_boundary_keep_their_own_state() -> None:
    """Ports below INDEXED_PORTS are found by index, the others by the dict only: either
    way each port keeps its own queue, shaper and drops, and departures merge in time
    order, ties by port number."""
    clock = VirtualClock()
    tm = TrafficManager(clock, default_depth=2)
    ports = [0, INDEXED_PORTS - 1, INDEXED_PORTS, 3 * INDEXED_PORTS]
    for port in ports:
        tm.set_queue_rate(port, 1000)
    assert not tm._indexed  # a port only the dict finds: the hot path uses the dict
    clock.advance(10_000)
    for port in ports:
        for i in range(4):  # the first leaves at once, two wait, the fourth is dropped
            tm.enqueue(port, (port, i), 64)
    assert [tm.dropped(port) for port in ports] == [1, 1, 1, 1]
    assert [tm.queue_depth(port) for port in ports] == [2, 2, 2, 2]
    clock.advance(10_000)
    out = tm.poll()
    assert [p.item for p in out] == [(port, i) for i in range(3) for port in ports]
    assert [p.deq_ns // 1000 for p in out] == [10_000] * 4 + [11_000] * 4 + [12_000] * 4
    assert all(tm.queue_depth(port) == 0 for port in ports)


def test_ports_below_the_boundary_are_found_by_index() -> None:
    clock = VirtualClock()
    tm = TrafficManager(clock)
    for port in (INDEXED_PORTS - 1, 5):
        assert tm.enqueue(port, port, 64) is None
    assert tm._indexed and len(tm._by_port) == INDEXED_PORTS
    assert tm._by_port[5] is tm._ports[5] and tm._by_port[4] is None
    assert [p.item for p in tm.poll()] == [INDEXED_PORTS - 1, 5]
    with pytest.raises(TrafficManagerError, match="negative"):
        tm.enqueue(-1, "x", 64)
    assert INDEXED_PORTS == 512  # enqueue_c writes it out
    # a port past the list's end so far (its state made, the list grown), then one in it
    tm = TrafficManager(clock)
    for port in (3, 200, 3, 2):
        assert tm.enqueue(port, port, 64) is None
    assert len(tm._by_port) == 201 and tm._by_port[200] is tm._ports[200]
    assert [p.item for p in tm.poll()] == [3, 200, 3, 2]


def test_a_released_packet_is_reused_with_nothing_of_its_past() -> None:
    """release() hands a polled packet back; the next enqueue reuses that object with
    every field set again: none of the previous packet's fields leaks."""
    clock = VirtualClock()
    tm = TrafficManager(clock, priority_queues=2)
    tm.set_queue_rate(7, 1000)
    clock.advance(5_000)
    for item in ("old", "old2", "old3"):
        tm.enqueue(7, item, 1500, 1)
    clock.advance(5_000)
    _first, _second, second = tm.poll()
    assert second.deq_timedelta and second.departure_seq and second.enq_qdepth
    tm.release(second)
    assert second.item is None  # not kept alive by the free list
    clock.advance(1_000)
    assert tm.enqueue(3, "new", 64, 0) is None
    [reused] = tm.poll()
    assert reused is second
    fresh = QueuedPacket("new", 3, 0, 64, clock.now_ns(), 0)
    fresh.deq_ns, fresh.departure_seq = reused.deq_ns, reused.departure_seq
    slots = QueuedPacket.__slots__ if hasattr(QueuedPacket, "__slots__") else ()
    names = slots or [n for n in dir(fresh) if not n.startswith("_") and n not in ("qid", "renew")]
    for name in names:
        assert getattr(reused, name) == getattr(fresh, name), name
    assert reused.departure_seq == 4 and reused.deq_ns == clock.now_ns()


def test_released_packets_are_reused_last_first_and_never_while_in_use() -> None:
    """The free list is a stack that keeps its storage: a packet taken from it and still
    queued is never handed out again, however releases and enqueues interleave."""
    clock = VirtualClock()
    tm = TrafficManager(clock)
    for item in ("a", "b", "c"):
        tm.enqueue(1, item, 64, 0)
    a, b, c = tm.poll()
    for packet in (a, b, c):
        tm.release(packet)
    clock.advance(1_000)
    tm.enqueue(2, "x", 64, 0)
    [x] = tm.poll()
    assert x is c  # the last released
    tm.enqueue(2, "y", 64, 0)  # while x is out: b, then a
    tm.release(x)  # back on top of a
    tm.enqueue(2, "z", 64, 0)
    tm.enqueue(2, "w", 64, 0)
    out = tm.poll()
    assert [p.item for p in out] == ["y", "z", "w"]
    assert [id(p) for p in out] == [id(b), id(c), id(a)]
    tm.enqueue(2, "fresh", 64, 0)  # none free: a new packet
    [fresh] = tm.poll()
    assert all(fresh is not p for p in (a, b, c))


#: bits/s rates: the fabric's link rates, odd ones and rates whose quotients fall close to
#: an integer (the truncation's edge)
BPS_RATES = [
    1e9, 10e9, 25e9, 40e9, 50e9, 100e9, 200e9, 400e9, 800e9, 1.0, 3.0, 7.0, 9.9e9,
    99.9e9, 123_456_789.0, 2.5e11 + 1, 1e12 / 3, 8e9 / 7, 64e9 / 3,
]  # fmt: skip


def test_a_bits_per_second_gap_is_pythons_int_of_the_quotient() -> None:
    """QueueRate.gap_ns as the pure path always computed it, int(length * 8 * NS_PER_S /
    rate) of Python ints and floats, for every frame length up to a jumbo frame and sampled
    lengths beyond, at each rate (compiled, the gap is C doubles truncated by a C cast)."""
    rng = random.Random(27)
    lengths = [*range(0, 9217), *(rng.randrange(9217, 1 << 40) for _ in range(2000))]
    lengths += [(1 << 31) - 1, 1 << 32, (1 << 40) - 1]
    for value in [*BPS_RATES, *(rng.uniform(1e6, 1e12) for _ in range(8))]:
        rate = QueueRate(value, RateUnit.bits_per_second)
        for length in lengths:
            gap = length * 8 * NS_PER_S / value
            if gap >= MAX_GAP_NS:
                continue
            assert rate.gap_ns(length) == int(gap), (value, length)


class _PlainClock:
    """A Clock (the protocol) that is no ClockBase: read through Python's method protocol."""

    def __init__(self) -> None:
        self.ns = 0

    def now_ns(self) -> int:
        return self.ns

    def now_us(self) -> int:
        return self.ns // 1000


class _Skewed(VirtualClock):
    def now_ns(self) -> int:
        return super().now_ns() + 5_000


def test_any_clock_is_read_the_same() -> None:
    """The same packets through a VirtualClock (a C read when compiled), a Python subclass
    of it (its own now_ns, reached from C too) and a plain Clock: the same departures."""

    def departures(clock: object, advance: object) -> list[tuple[int, int, int, int]]:
        tm = TrafficManager(clock, rate_scope=RateScope.port)  # type: ignore[arg-type]
        tm.set_queue_rate(1, 8e9, RateUnit.bits_per_second)  # 1000 ns per packet
        out = []
        for step in range(6):
            for n in range(3):
                assert tm.enqueue(1, (step, n), 1000) is None
            advance(3000)  # type: ignore[operator]
            out += [(p.deq_ns, p.enq_timestamp, p.deq_timedelta, p.item[1]) for p in tm.poll()]
        return out

    virtual = VirtualClock()
    plain = _PlainClock()
    skewed = _Skewed()

    def move_plain(ns: int) -> None:
        plain.ns += ns

    reference = departures(virtual, virtual.advance_ns)
    assert departures(plain, move_plain) == reference
    shifted = departures(skewed, skewed.advance_ns)
    assert shifted == [(t + 5_000, e + 5, d, n) for t, e, d, n in reference]
    assert len(reference) == 18 and reference[0][0] == 0


def test_the_top_queue_of_a_mask_is_its_highest_bit() -> None:
    """Every bit of the 64 a port's masks hold, alone and with random lower bits."""
    rng = random.Random(5)
    for bit in range(MAX_PRIORITY_QUEUES):
        for low in (0, (1 << bit) - 1, rng.getrandbits(bit) if bit else 0):
            mask = 1 << bit | low
            assert _top_bit(mask) == mask.bit_length() - 1 == bit


def test_a_port_holds_at_most_64_priority_queues() -> None:
    """The limit of the masks, refused past it on both paths; at it, the highest and the
    lowest priority queues fill, pause and drain as any other."""
    with pytest.raises(TrafficManagerError, match="must be in"):
        TrafficManager(VirtualClock(), priority_queues=MAX_PRIORITY_QUEUES + 1)
    clock = VirtualClock()
    tm = TrafficManager(clock, priority_queues=MAX_PRIORITY_QUEUES, rate_scope=RateScope.port)
    tm.set_queue_rate(1, 8e9, RateUnit.bits_per_second)  # 1000 ns per 1000-byte packet
    top = MAX_PRIORITY_QUEUES - 1
    tm.set_paused(1, top, True)
    assert tm.is_paused(1, top) and not tm.is_paused(1, 0) and not tm.is_paused(1, 200)
    for priority in (0, top, top, 0):
        assert tm.enqueue(1, priority, 1000, priority) is None
    clock.advance_ns(10_000)
    assert [p.item for p in tm.poll()] == [0, 0]  # the top queue is paused
    tm.set_paused(1, top, False)
    clock.advance_ns(10_000)
    assert [p.item for p in tm.poll()] == [top, top]
    assert tm.queue_depth(1) == 0 and tm.next_departure_ns() is None


def test_departures_sort_by_time_then_departure_count() -> None:
    # the compiled insertion sort and the pure key sort give the one order there is
    rng = random.Random(5)
    for n in [0, 1, 2, 3, 5, 8, 40]:
        for _ in range(30):
            ready = []
            for seq in rng.sample(range(1, 1000), n):
                packet = QueuedPacket(seq, 1, 0, 100, 0, 0)
                packet.deq_ns = rng.choice([0, 5, 7, 2**40])  # many ties
                packet.departure_seq = seq
                ready.append(packet)
            expected = sorted(ready, key=_departure_order)
            _sort_departures(ready)
            assert [p.item for p in ready] == [p.item for p in expected]


def test_take_ready_is_poll_without_the_empty_list() -> None:
    # two managers fed the same packets: take_ready gives what poll gives, None for []
    clocks = [VirtualClock(), VirtualClock()]
    tms = [TrafficManager(clock) for clock in clocks]
    for tm in tms:
        assert tm.take_ready() is None
        assert tm.poll() == []
        tm.set_queue_rate(1, 1000.0)
        tm.set_queue_rate(2, 1000.0)
        for port in (2, 1, 2, 1, 3):
            assert tm.enqueue(port, port, 100) is None
    polled, taken = [], []
    while tms[0].next_departure_ns() is not None:
        due = tms[0].next_departure_ns()
        assert due == tms[1].next_departure_ns()
        for clock in clocks:
            clock.set_ns(max(due, clock.now_ns()))
        out = tms[0].poll()
        ready = tms[1].take_ready()
        assert (ready is None) == (out == [])
        polled += [(p.port, p.deq_ns) for p in out]
        taken += [(p.port, p.deq_ns) for p in ready or []]
    assert taken == polled
    assert sorted(polled) == [
        (1, 1_000_000),
        (1, 2_000_000),
        (2, 1_000_000),
        (2, 2_000_000),
        (3, 0),
    ]
    assert tms[1].take_ready() is None


def test_recycled_ready_list_is_filled_next() -> None:
    # a list handed back is emptied and becomes the list being filled (the take that finds
    # packets gives the one filled before and fills the spare): two lists take turns; the
    # list being filled is never one the caller holds, and cannot be handed back
    clock = VirtualClock()
    tm = TrafficManager(clock)
    tm.set_queue_rate(1, 1000.0)
    for item in range(5):
        assert tm.enqueue(1, item, 100) is None
    clock.set_ns(tm.next_departure_ns())
    first = tm.take_ready()
    assert first is not None and [p.item for p in first] == [0]
    with pytest.raises(TrafficManagerError, match="not given by take_ready"):
        tm.recycle(tm._ready)
    filling = tm._ready
    assert filling is not first and filling == []
    tm.recycle(first)
    assert first == [] and tm._ready is filling  # spare until the next take finds packets
    assert tm.take_ready() is None  # nothing due: nothing swapped
    assert tm._ready is filling
    clock.set_ns(tm.next_departure_ns())
    second = tm.take_ready()
    assert second is filling and [p.item for p in second] == [1]
    assert tm._ready is first  # the recycled list is filled now
    clock.set_ns(tm.next_departure_ns())
    third = tm.take_ready()  # second not handed back: no spare, a new list is filled
    assert third is first and [p.item for p in third] == [2]
    assert tm._ready is not second and tm._ready is not third
    assert [p.item for p in second] == [1]  # a list not handed back is left as it was
    tm.recycle(third)
    clock.set_ns(tm.next_departure_ns())
    polled = tm.poll()  # poll's list is the caller's: only recycle hands a list back
    assert [p.item for p in polled] == [3] and tm._ready is third
    clock.set_ns(tm.next_departure_ns())
    last = tm.take_ready()
    assert last is third and [p.item for p in last] == [4]
    assert [p.item for p in polled] == [3]
    assert tm.take_ready() is None and tm._ready is not polled


def test_due_ports_among_several_active_are_settled_by_port_number() -> None:
    """Several ports active: the due ones settled lowest port first (two due, activated in
    the other order), the list of due ports emptied first (what a take that raised left
    is dropped); one due: settled alone, the list not touched; the next departure that of
    the ports left. On both paths."""
    clock = VirtualClock()
    tm = TrafficManager(clock)
    for port, rate in ((7, 1000.0), (3, 1000.0), (5, 400.0), (9, 250.0)):
        tm.set_queue_rate(port, rate)  # BMv2: a queue's first packet waits one gap
    for port, item in ((7, "a7"), (3, "a3"), (5, "a5"), (9, "a9"), (3, "b3"), (7, "b7")):
        assert tm.enqueue(port, item, 100) is None
    assert tm.take_ready() is None and tm.next_departure_ns() == 1_000_000
    tm._due[:] = [5]  # as a take that raised would leave it
    clock.set_ns(1_000_000)
    out = tm.take_ready()
    assert out is not None and [(p.item, p.deq_ns) for p in out] == [
        ("a3", 1_000_000),
        ("a7", 1_000_000),
    ]
    assert tm._due == [3, 7] and tm.next_departure_ns() == 2_000_000
    clock.set_ns(2_000_000)
    out = tm.take_ready()
    assert out is not None and [p.item for p in out] == ["b3", "b7"]
    assert [s.port for s in tm._active_states] == [5, 9]
    tm._due[:] = ["untouched"]
    clock.set_ns(2_500_000)
    out = tm.take_ready()  # port 5 due, port 9 not
    assert out is not None and [(p.item, p.deq_ns) for p in out] == [("a5", 2_500_000)]
    assert tm._due == ["untouched"] and tm.next_departure_ns() == 4_000_000
    assert [s.port for s in tm._active_states] == [9]
    clock.set_ns(4_000_000)
    out = tm.take_ready()
    assert out is not None and [p.item for p in out] == ["a9"]
    assert tm.next_departure_ns() is None and tm.take_ready() is None


def _random_run(scope: RateScope, seed: int, recycle: bool = False) -> str:
    """The sha256 of every departure (item, time, depths, delta, queue) and drop of a random
    workload over 5 ports of 4 priority queues (mixed rates, pauses in port scope), polled
    at random times; ``recycle``: each list taken is handed back (as the switch does)."""
    rng = random.Random(seed)
    clock = VirtualClock()
    tm = TrafficManager(clock, priority_queues=4, rate_scope=scope, default_depth=6)
    for port, rate in ((1, 1e9), (2, 4e9), (3, None), (4, 2e9), (5, 1e10)):
        tm.set_queue_rate(port, rate, RateUnit.bits_per_second)
    if scope is RateScope.queue:
        tm.set_queue_rate(4, 20_000, RateUnit.packets_per_second, priority=2)
    log: list[tuple[object, ...]] = []
    count = 0
    for _ in range(600):
        for _ in range(rng.randrange(5)):
            count += 1
            port, prio = rng.randrange(1, 6), rng.randrange(4)
            reason = tm.enqueue(port, count, rng.choice((64, 700, 1500)), prio)
            if reason is not None:
                log.append(("drop", count, reason.value))
        if scope is RateScope.port and rng.random() < 0.05:
            tm.set_paused(rng.randrange(1, 6), rng.randrange(4), rng.random() < 0.6)
        clock.advance(rng.choice((0, 1, 50, 400, 1_500, 6_000)))
        ready = tm.take_ready()
        for p in ready or ():
            log.append((p.item, p.port, p.qid, p.deq_ns, p.deq_qdepth, p.deq_timedelta))
            tm.release(p)
        if recycle and ready is not None:
            tm.recycle(ready)
            assert ready == [] and tm._ready is not ready
        log.append(("next", tm.next_departure_ns()))
        # the active ports: the list of their states (each port once) and each state's
        # flag agree, and a port is active exactly while a queue it may serve holds packets
        states = tm._active_states
        assert len(states) == len({s.port for s in states})
        assert all(s.active == any(s is a for a in states) for s in tm._ports.values())
        assert all(s.active == bool(s.filled & ~s.paused) for s in tm._ports.values())
    return hashlib.sha256(repr(log).encode()).hexdigest()[:16]


@pytest.mark.parametrize(
    ("scope", "seed", "expected"),
    [
        (RateScope.port, 1, "802f37ff0a8b6198"),
        (RateScope.port, 2, "5f8427e1bbe86c10"),
        (RateScope.queue, 1, "d28df25b46077972"),
        (RateScope.queue, 2, "7a3454bc3dc60893"),
    ],
)
def test_departures_of_many_busy_ports_and_queues_are_the_recorded_ones(
    scope: RateScope, seed: int, expected: str
) -> None:
    """take_ready's one pass over the active ports' states (due ones settled, the earliest
    next departure of the rest) and the next departure of a port with several filled
    queues give, departure by departure, what main 8e1a605 gave (the hashes were recorded
    there, pure): both paths run this, checking the active ports' bookkeeping at each step;
    and the same again with each list taken handed back (recycle), as the switch does."""
    assert _random_run(scope, seed) == expected
    assert _random_run(scope, seed, recycle=True) == expected


@pytest.mark.parametrize("scope", [RateScope.queue, RateScope.port])
def test_a_queue_wrapping_round_its_ring_and_growing_keeps_fifo_order(scope: RateScope) -> None:
    """A queue's packets are a ring over a list (``_Queue.slots``, the oldest at ``head``):
    filled and drained in random steps, so that it wraps past the list's end and grows while
    wrapped, it gives every packet in the order it came and holds what a FIFO holds, no
    slot keeping a packet taken, on both paths (the depths: the recorded hashes above)."""
    from collections import deque

    rng = random.Random(24)
    clock = VirtualClock()
    tm = TrafficManager(clock, rate_scope=scope, default_depth=10_000)
    tm.set_queue_rate(3, 1_000_000, RateUnit.packets_per_second)  # one packet a µs
    model: deque[int] = deque()
    left: list[int] = []
    count = 0
    grown_while_wrapped = False
    for _ in range(400):
        for _ in range(rng.choice((0, 1, 2, 5, 17))):
            count += 1
            queue = tm._ports[3].queues[0] if 3 in tm._ports else None
            wrapped = queue is not None and queue.head + queue.size > len(queue.slots)
            full = queue is not None and queue.size == len(queue.slots)
            assert tm.enqueue(3, count, 100) is None
            grown_while_wrapped |= wrapped and full
            model.append(count)
        clock.advance(rng.choice((0, 1, 3, 8, 20)))  # µs: that many packets may leave
        for p in tm.poll():
            assert p.item == model.popleft()
            left.append(p.item)
            tm.release(p)
    queue = tm._ports[3].queues[0]
    assert grown_while_wrapped and queue.size == len(model) == tm.queue_depth(3)
    held = [queue.slots[(queue.head + i) % len(queue.slots)] for i in range(queue.size)]
    assert [p.item for p in held] == list(model)
    # every slot not holding a packet is None (a taken packet is not kept)
    assert sum(slot is not None for slot in queue.slots) == queue.size
    assert left == list(range(1, len(left) + 1))


def test_enqueue_c_gives_what_enqueue_gives() -> None:
    """The switch's entry (a length and a priority it holds as C integers): the same
    departures, drops (priority out of range either side, a full queue) and counts as
    :meth:`TrafficManager.enqueue` on a twin manager, on both paths."""
    results = []
    for entry in ("enqueue", "enqueue_c"):
        clock = VirtualClock()
        tm = TrafficManager(clock, priority_queues=3, default_depth=2)
        tm.set_queue_rate(1, 1_000_000, RateUnit.packets_per_second)
        log: list[object] = []
        for i, (port, prio) in enumerate(
            [(1, 0), (1, 0), (1, 0), (1, 2), (2, 1), (1, 3), (1, -1), (2, 2), (1, 0)]
        ):
            reason = getattr(tm, entry)(port, i, 100 + i, prio)
            log.append(reason)
            clock.advance(0.25)  # µs: four arrivals a departure
            log.extend((p.item, p.port, p.qid, p.deq_ns, p.enq_qdepth) for p in tm.poll())
        log.append(sorted(tm.drops.items(), key=repr))
        log.append((tm.total_drops, tm.total_enqueued, tm.queue_depth(1)))
        results.append(log)
    assert results[0] == results[1]
    assert DropReason.priority_out_of_range in results[0]
    assert DropReason.queue_full in results[0]


def test_a_queue_capacity_past_the_c_limit_holds_every_packet() -> None:
    """A queue's capacity is the caller's int; enqueue compares with its C copy
    (``limit``), the same below MAX_HELD and MAX_HELD above it (no queue gets there)."""
    clock = VirtualClock()
    tm = TrafficManager(clock, default_depth=2**80)
    tm.set_queue_rate(1, 1, RateUnit.packets_per_second)
    for i in range(5):
        assert tm.enqueue(1, i, 64) is None
    queue = tm._ports[1].queues[0]
    assert queue.capacity == 2**80 and queue.limit == MAX_HELD
    tm.set_queue_depth(1, 3)
    assert (queue.capacity, queue.limit) == (3, 3)
    assert tm.queue_depth_limit(1) == 3
    assert tm.enqueue(1, 5, 64) is DropReason.queue_full
    tm.set_all_queue_depths(MAX_HELD + 1)
    assert (queue.capacity, queue.limit) == (MAX_HELD + 1, MAX_HELD)
    assert tm.enqueue(1, 6, 64) is None
    tm.set_queue_depth(1, 0)
    assert tm.enqueue(1, 7, 64) is DropReason.queue_full
