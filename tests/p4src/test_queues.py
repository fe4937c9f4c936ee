"""mrc_switch.p4 queues on p4emu: the priority-queue arrangement, ECN marking and
trimming under real queue build-up (docs/switch-queues.md, docs/wire-format.md §10-11).

The bottleneck is a rate-limited egress port (``set_queue_rate``, BMv2 semantics: every
priority queue of the port has that rate). Packets sent in one burst at one instant are
enqueued before anything leaves, so the k-th packet (from 0) of a burst toward an idle
port is enqueued with ``enq_qdepth`` = k and sees an occupancy estimate of k.
"""

from __future__ import annotations

import functools
import random

import pytest
from p4src_helpers import (
    CONTROL_PRIORITY,
    DATA_PRIORITY,
    FABRIC,
    HEADER_BYTES,
    MrcSwitch,
    carrier,
    data_frame,
    outer,
    probe_frame,
    program_switch,
    sack_frame,
)

import mrc_wire
import topologies
from mrc_wire import Dscp, Ecn, Opcode

# p1-t0-0 of the tiny topology: port 4 is the fabric uplink to T1 1 (uSID 0x1801), port 2
# the host-facing downlink 0xe201; traffic comes in on NIC port 1.
T0_0, T0_1, T1_1, DOWN_1 = 0x1400, 0x1401, 0x1801, 0xE201
UPLINK, DOWNLINK, IN_PORT = 4, 2, 1
TO_UPLINK = carrier(T0_0, T1_1, T0_1, DOWN_1)
AFTER_UPLINK = carrier(T1_1, T0_1, DOWN_1)
TO_DOWNLINK = carrier(T0_0, DOWN_1)
AFTER_DOWNLINK = carrier(DOWN_1)
RATE_PPS = 1000  # one packet per ms per queue at the bottleneck

# Built-in defaults (docs/switch-queues.md §6)
ECN_MIN, ECN_MAX, TRIM_QDEPTH, QUEUE_LIMIT = 10, 38, 48, 60


@functools.cache
def plan() -> topologies.AddressPlan:
    return topologies.AddressPlan(topologies.load("tiny"))


def t0(*, priority_queues: int = 8, rate_ports: tuple[int, ...] = (UPLINK, DOWNLINK)) -> MrcSwitch:
    ms = MrcSwitch(priority_queues=priority_queues)
    program_switch(ms, plan(), "p1-t0-0")
    for port in rate_ports:
        ms.set_port_rate(port, RATE_PPS)
    return ms


def fabric_params(ms: MrcSwitch, **overrides: int) -> None:
    params = {
        "ecn_enable": 1,
        "ecn_min_qdepth": ECN_MIN,
        "ecn_max_qdepth": ECN_MAX,
        "ecn_max_prob": 0xFFFF,
        "trim_enable": 1,
        "trim_qdepth": TRIM_QDEPTH,
        "queue_limit": QUEUE_LIMIT,
    }
    params.update(overrides)
    ms.class_params(FABRIC, **params)


def burst(ms: MrcSwitch, frames: list[bytes], port: int = IN_PORT) -> None:
    for frame in frames:
        ms.send(port, frame)


def psn_of(frame: bytes) -> int:
    return mrc_wire.decode(frame).psn


# --- queue arrangement (docs/switch-queues.md §7) ----------------------------------------


def test_control_goes_to_priority_7_data_to_priority_0_and_control_leaves_first() -> None:
    ms = t0()
    burst(ms, [data_frame(TO_UPLINK, psn=k) for k in range(10)])
    ms.send(IN_PORT, sack_frame(TO_UPLINK, psn=99))
    tm = ms.switch.tm
    assert tm.queue_depth(UPLINK, DATA_PRIORITY) == 10
    assert tm.queue_depth(UPLINK, CONTROL_PRIORITY) == 1
    ms.run()
    out = [frame for _, frame in ms.take(UPLINK)]
    assert len(out) == 11
    assert mrc_wire.decode(out[0]).__class__ is mrc_wire.Sack  # queued last, sent first
    assert [psn_of(f) for f in out[1:]] == list(range(10))


def test_punts_travel_in_the_control_queue_of_the_cpu_port() -> None:
    ms = t0(rate_ports=(510,))
    ms.switch_config(plane_id=1, punt_end_of_carrier=1)
    ms.send(3, data_frame(carrier(T0_0)))
    assert ms.switch.tm.queue_depth(510, CONTROL_PRIORITY) == 1
    ms.run()
    assert len(ms.take(510)) == 1


def test_without_priority_queues_control_priority_7_is_dropped_by_the_traffic_manager() -> None:
    ms = t0(priority_queues=1)
    ms.send(IN_PORT, sack_frame(TO_UPLINK))
    ms.send(IN_PORT, data_frame(TO_UPLINK))
    ms.run()
    out = ms.take(UPLINK)
    assert [mrc_wire.decode(f).__class__ for _, f in out] == [mrc_wire.DataPacket]
    assert ms.switch.dropped(UPLINK, "priority_out_of_range") == 1


def test_without_priority_queues_control_priority_0_shares_the_data_queue() -> None:
    ms = t0(priority_queues=1)
    ms.switch_config(plane_id=1, control_priority=0)
    ms.send(IN_PORT, data_frame(TO_UPLINK, psn=1))
    ms.send(IN_PORT, sack_frame(TO_UPLINK, psn=2))
    ms.run()
    out = [mrc_wire.decode(f) for _, f in ms.take(UPLINK)]
    assert [(type(m), m.dscp) for m in out] == [
        (mrc_wire.DataPacket, Dscp.TRIMMABLE),
        (mrc_wire.Sack, Dscp.CONTROL),
    ]
    assert ms.switch.dropped() == 0


# --- ECN marking (docs/switch-queues.md §5) ---------------------------------------------------


@pytest.mark.parametrize(
    ("ecn_min", "ecn_max", "max_prob", "first_marked"),
    [
        (4, 8, 0, 8),  # probability 0 inside the band: marks only from ecn_max_qdepth
        (4, 5, 0xFFFF, 5),  # no band: marks only above ecn_min_qdepth
    ],
)
def test_ecn_marks_exactly_the_packets_enqueued_above_the_threshold(
    ecn_min: int, ecn_max: int, max_prob: int, first_marked: int
) -> None:
    ms = t0()
    fabric_params(ms, ecn_min_qdepth=ecn_min, ecn_max_qdepth=ecn_max, ecn_max_prob=max_prob)
    burst(ms, [data_frame(TO_UPLINK, psn=k) for k in range(12)])
    ms.run()
    out = [frame for _, frame in ms.take(UPLINK)]
    assert [psn_of(f) for f in out] == list(range(12))
    for k, frame in enumerate(out):
        expected = data_frame(AFTER_UPLINK, psn=k, hop_limit=63)
        if k >= first_marked:
            expected = mrc_wire.mark_ce(expected)
        assert frame == expected, k
    marked = 12 - first_marked
    assert ms.counter("MrcEgress.ecn_marked", UPLINK)[0] == marked
    assert ms.counter("MrcEgress.ecn_marked_per_plane", 1)[0] == marked


def test_ect1_is_marked_like_ect0() -> None:
    ms = t0()
    fabric_params(ms, ecn_min_qdepth=1, ecn_max_qdepth=2)
    burst(ms, [data_frame(TO_UPLINK, psn=k, ecn=Ecn.ECT1) for k in range(4)])
    ms.run()
    assert [outer(f).ecn for _, f in ms.take(UPLINK)] == [Ecn.ECT1, Ecn.ECT1, Ecn.CE, Ecn.CE]


def test_ecn_defaults_never_mark_at_or_below_min_and_always_mark_from_max() -> None:
    ms = t0()
    burst(ms, [data_frame(TO_UPLINK, psn=k) for k in range(45)])  # below the trim threshold
    ms.run()
    out = [frame for _, frame in ms.take(UPLINK)]
    ecn = [outer(f).ecn for f in out]
    assert all(e == Ecn.ECT0 for e in ecn[: ECN_MIN + 1])
    assert all(e == Ecn.CE for e in ecn[ECN_MAX:])
    marked = sum(e == Ecn.CE for e in ecn)
    assert ms.counter("MrcEgress.ecn_marked", UPLINK)[0] == marked
    assert all(mrc_wire.decode(f).trimmed is False for f in out)


@pytest.mark.scenario  # 40 bursts of 38 packets through the switch (CI, not -m unit)
def test_ecn_marking_probability_rises_linearly_inside_the_band() -> None:
    """Between ecn_min and ecn_max the mark probability is p(q) = (q - min) / (max - min)
    x ecn_max_prob / 65536: over 40 bursts the band's 27 depths (11..37) expect
    40 x sum(1..27) / 28 = 540 marks of 1080 (binomial sd ~16), more in the upper half."""
    ms = t0()
    marks = [0] * ECN_MAX
    for _ in range(40):
        burst(ms, [data_frame(TO_UPLINK, psn=k) for k in range(ECN_MAX)])
        ms.run()
        for k, (_, frame) in enumerate(ms.take(UPLINK)):
            marks[k] += outer(frame).ecn == Ecn.CE
    assert marks[: ECN_MIN + 1] == [0] * (ECN_MIN + 1)
    band = marks[ECN_MIN + 1 :]
    assert 540 - 80 <= sum(band) <= 540 + 80
    assert sum(band[:13]) < sum(band[14:])


def test_ecn_is_never_marked_on_a_host_facing_port() -> None:
    ms = t0()
    burst(ms, [data_frame(TO_DOWNLINK, psn=k) for k in range(45)], port=3)
    ms.run()
    out = [frame for _, frame in ms.take(DOWNLINK)]
    assert len(out) == 45
    assert {outer(f).ecn for f in out} == {Ecn.ECT0}
    assert ms.counters("MrcEgress.ecn_marked") == {}


def test_ecn_is_never_marked_in_the_control_queue() -> None:
    # trimmed headers keep ECT(0) (docs/wire-format.md §11); they queue at priority 7
    ms = t0()
    fabric_params(ms, ecn_min_qdepth=0, ecn_max_qdepth=1)
    sent = [mrc_wire.trim_frame(data_frame(TO_UPLINK, psn=k)) for k in range(20)]
    burst(ms, sent)
    ms.run()
    out = [frame for _, frame in ms.take(UPLINK)]
    assert out == [
        mrc_wire.trim_frame(data_frame(AFTER_UPLINK, psn=k, hop_limit=63)) for k in range(20)
    ]
    assert ms.counters("MrcEgress.ecn_marked") == {}


def test_not_ect_packets_are_never_marked() -> None:
    ms = t0()
    fabric_params(ms, ecn_min_qdepth=0, ecn_max_qdepth=1)
    burst(ms, [data_frame(TO_UPLINK, psn=k, ecn=Ecn.NOT_ECT) for k in range(10)])
    ms.run()
    assert {outer(f).ecn for _, f in ms.take(UPLINK)} == {Ecn.NOT_ECT}
    assert ms.counters("MrcEgress.ecn_marked") == {}


# --- trimming (docs/switch-queues.md §4, docs/wire-format.md §11) -----------------------------


def test_burst_beyond_the_trim_threshold_is_trimmed_to_nackable_headers() -> None:
    ms = t0()
    sent = [data_frame(TO_UPLINK, psn=k, payload_len=1024) for k in range(80)]
    burst(ms, sent)
    ms.run()
    out = [frame for _, frame in ms.take(UPLINK)]
    assert len(out) == 80
    full = [f for f in out if len(f) > HEADER_BYTES]
    trimmed = [f for f in out if len(f) == HEADER_BYTES]
    # the first TRIM_QDEPTH packets find room; every later one is trimmed
    assert sorted(psn_of(f) for f in full) == list(range(TRIM_QDEPTH))
    assert [psn_of(f) for f in trimmed] == list(range(TRIM_QDEPTH, 80))
    for frame in trimmed:
        psn = psn_of(frame)
        forwarded = data_frame(AFTER_UPLINK, psn=psn, payload_len=1024, hop_limit=63)
        assert frame == mrc_wire.trim_frame(forwarded)
        header = mrc_wire.decode(frame)  # well-formed, NACK-able
        assert header.trimmed and not header.trimmed_lasthop
        assert (header.dscp, header.dma_length, header.payload) == (Dscp.TRIMMED, 1024, b"")
        assert (header.dqpn, header.ev) == (0x11, 0x1001_0005)
    # trimmed headers skip the data queue: the last one leaves before the data backlog
    order = [psn_of(f) for f in out]
    assert order.index(79) < order.index(TRIM_QDEPTH - 2)
    trimmed_bytes = sum(len(f) for f in sent[TRIM_QDEPTH:])
    assert ms.counter("MrcIngress.trimmed", UPLINK) == (80 - TRIM_QDEPTH, trimmed_bytes)
    assert ms.counter("MrcIngress.trimmed_per_plane", 1) == (80 - TRIM_QDEPTH, trimmed_bytes)
    assert ms.counter("MrcEgress.forwarded", UPLINK) == (80, sum(len(f) for f in sent))
    assert ms.switch.dropped() == 0


def test_last_hop_trim_uses_trimmed_lasthop() -> None:
    ms = t0()
    sent = [data_frame(TO_DOWNLINK, psn=k) for k in range(TRIM_QDEPTH + 3)]
    burst(ms, sent, port=3)
    ms.run()
    out = [frame for _, frame in ms.take(DOWNLINK)]
    trimmed = [f for f in out if outer(f).dscp == Dscp.TRIMMED_LASTHOP]
    assert [psn_of(f) for f in trimmed] == [TRIM_QDEPTH, TRIM_QDEPTH + 1, TRIM_QDEPTH + 2]
    for frame in trimmed:
        forwarded = data_frame(AFTER_DOWNLINK, psn=psn_of(frame), hop_limit=63)
        assert frame == mrc_wire.trim_frame(forwarded, last_hop=True)
        assert mrc_wire.decode(frame).trimmed_lasthop


@pytest.mark.parametrize(
    ("kwargs", "kept"),
    [
        ({"timestamp": 0xDEADBEEF}, HEADER_BYTES + 4),  # TSETH kept (before the RETH)
        ({"opcode": Opcode.WRITE_IMM, "immediate": 0x1234}, HEADER_BYTES),  # ImmDt cut
        ({"dscp": Dscp.TRIMMABLE_RETX}, HEADER_BYTES),
        ({"ecn": Ecn.NOT_ECT}, HEADER_BYTES),
    ],
)
def test_every_trimmable_data_variant_is_cut_to_its_header(kwargs: dict, kept: int) -> None:
    ms = t0()
    burst(ms, [data_frame(TO_UPLINK, psn=k, **kwargs) for k in range(TRIM_QDEPTH + 1)])
    ms.run()
    out = [frame for _, frame in ms.take(UPLINK)]
    [trimmed] = [f for f in out if outer(f).dscp == Dscp.TRIMMED]
    assert len(trimmed) == kept
    forwarded = data_frame(AFTER_UPLINK, psn=TRIM_QDEPTH, hop_limit=63, **kwargs)
    assert trimmed == mrc_wire.trim_frame(forwarded)
    header = mrc_wire.decode(trimmed)
    assert header.immediate is None and header.payload == b""
    assert header.timestamp == kwargs.get("timestamp")


def test_trim_keeps_the_srh() -> None:
    ms = t0()
    # a carrier that ends at this T0 with an SRH naming the next carrier (same block)
    segments = [AFTER_UPLINK]
    sent = [
        data_frame(carrier(T0_0), psn=k, segments=segments, segments_left=1)
        for k in range(TRIM_QDEPTH + 1)
    ]
    burst(ms, sent)
    ms.run()
    out = [frame for _, frame in ms.take(UPLINK)]
    [trimmed] = [f for f in out if outer(f).dscp == Dscp.TRIMMED]
    assert len(trimmed) == mrc_wire.header_length(1) == HEADER_BYTES + 8 + 16
    forwarded = data_frame(
        AFTER_UPLINK, psn=TRIM_QDEPTH, segments=segments, segments_left=0, hop_limit=63
    )
    assert trimmed == mrc_wire.trim_frame(forwarded)


def test_no_trim_data_and_probes_are_never_trimmed_but_dropped_at_the_queue_limit() -> None:
    ms = t0()
    sent = [data_frame(TO_UPLINK, psn=k, dscp=Dscp.NO_TRIM) for k in range(QUEUE_LIMIT)]
    sent += [probe_frame(TO_UPLINK) for _ in range(5)]
    burst(ms, sent)
    ms.run()
    out = [frame for _, frame in ms.take(UPLINK)]
    assert [psn_of(f) for f in out] == list(range(QUEUE_LIMIT))  # untrimmed, in order
    assert {outer(f).dscp for f in out} == {Dscp.NO_TRIM}
    probe_bytes = 5 * len(sent[-1])
    assert ms.counter("MrcIngress.drop_queue_full", UPLINK) == (5, probe_bytes)
    assert ms.counters("MrcIngress.trimmed") == {}
    assert ms.switch.dropped(reason="queue_full") == 0  # the program drops before the TM


def test_trimming_disabled_drops_trimmable_data_at_the_queue_limit() -> None:
    ms = t0()
    fabric_params(ms, trim_enable=0)
    burst(ms, [data_frame(TO_UPLINK, psn=k) for k in range(QUEUE_LIMIT + 3)])
    ms.run()
    assert len(ms.take(UPLINK)) == QUEUE_LIMIT
    assert ms.counter("MrcIngress.drop_queue_full", UPLINK)[0] == 3
    assert ms.counters("MrcIngress.trimmed") == {}


def test_control_and_trimmed_packets_are_never_trimmed_nor_queue_limited() -> None:
    ms = t0()
    # fill the data queue to the queue limit with packets that cannot be trimmed
    burst(ms, [data_frame(TO_UPLINK, psn=k, dscp=Dscp.NO_TRIM) for k in range(QUEUE_LIMIT)])
    sacks = [sack_frame(TO_UPLINK, psn=1000 + k) for k in range(20)]
    pre_trimmed = [
        mrc_wire.trim_frame(data_frame(TO_UPLINK, psn=2000)),
        mrc_wire.trim_frame(data_frame(TO_UPLINK, psn=2001), last_hop=True),
    ]
    burst(ms, sacks + pre_trimmed)
    ms.send(IN_PORT, data_frame(TO_UPLINK, psn=3000))  # trimmable: trimmed, not dropped
    ms.run()
    out = [frame for _, frame in ms.take(UPLINK)]
    got_sacks = [f for f in out if isinstance(mrc_wire.decode(f), mrc_wire.Sack)]
    assert got_sacks == [sack_frame(AFTER_UPLINK, psn=1000 + k, hop_limit=63) for k in range(20)]
    assert mrc_wire.trim_frame(data_frame(AFTER_UPLINK, psn=2000, hop_limit=63)) in out
    assert (
        mrc_wire.trim_frame(data_frame(AFTER_UPLINK, psn=2001, hop_limit=63), last_hop=True) in out
    )
    assert mrc_wire.trim_frame(data_frame(AFTER_UPLINK, psn=3000, hop_limit=63)) in out
    assert len(out) == QUEUE_LIMIT + 20 + 2 + 1
    assert ms.counter("MrcIngress.trimmed", UPLINK)[0] == 1
    assert ms.counters("MrcIngress.drop_queue_full") == {}
    # the control queue drains beside the data backlog, not behind it: with BMv2's
    # per-queue shapers both queues send one packet per gap, control first on ties
    data_order = [psn_of(f) for f in out if outer(f).dscp == Dscp.NO_TRIM]
    assert data_order == list(range(QUEUE_LIMIT))
    last_control = max(i for i, f in enumerate(out) if outer(f).dscp != Dscp.NO_TRIM)
    assert last_control < [psn_of(f) if outer(f).dscp == Dscp.NO_TRIM else -1 for f in out].index(
        23
    )


def overload(ms: MrcSwitch, senders: int, duration_ms: int, seed: int) -> list[bytes]:
    """``senders`` sources, each at the bottleneck's rate, with pseudo-random arrival
    times inside every packet time (so arrivals and departures interleave)."""
    rng = random.Random(seed)
    gap_us = 1e6 / RATE_PPS
    arrivals = sorted(
        (tick * gap_us + rng.uniform(0, gap_us), in_port)
        for tick in range(duration_ms)
        for in_port in (IN_PORT, 3, 1, 3, 1, 3, 1, 3)[:senders]
    )
    sent: list[bytes] = []
    for when_us, in_port in arrivals:
        ms.advance(when_us - ms.clock.now_ns() / 1000)
        frame = data_frame(TO_UPLINK, psn=len(sent), payload_len=512)
        sent.append(frame)
        ms.send(in_port, frame)
    ms.run()
    return sent


@pytest.mark.parametrize(("senders", "seed"), [(2, 1), (3, 2), (3, 3)])
def test_sustained_oversubscription_trims_exactly_at_the_threshold(senders: int, seed: int) -> None:
    """k:1 overload of an uplink for 60 ms (docs/switch-queues.md §3-4): every packet
    leaves, whole or trimmed; nothing is tail-dropped by the traffic manager (which P4
    cannot count); and no whole packet joined the data queue behind TRIM_QDEPTH or
    more packets. The last point is read from ECN: with the marking threshold set just
    below TRIM_QDEPTH, a whole packet enqueued at depth >= TRIM_QDEPTH would be CE."""
    ms = t0()
    fabric_params(ms, ecn_min_qdepth=TRIM_QDEPTH - 1, ecn_max_qdepth=TRIM_QDEPTH)
    sent = overload(ms, senders, duration_ms=60, seed=seed)
    out = [frame for _, frame in ms.take(UPLINK)]
    assert ms.switch.dropped() == 0
    assert sorted(psn_of(f) for f in out) == list(range(len(sent)))
    whole = [f for f in out if len(f) > HEADER_BYTES]
    trimmed = [f for f in out if outer(f).dscp == Dscp.TRIMMED]
    assert len(whole) + len(trimmed) == len(sent)
    assert trimmed, "a sustained overload must trim"
    assert all(len(f) == HEADER_BYTES and outer(f).ecn == Ecn.ECT0 for f in trimmed)
    assert all(outer(f).ecn == Ecn.ECT0 for f in whole)  # none enqueued at >= 48
    assert min(psn_of(f) for f in trimmed) >= TRIM_QDEPTH
    assert ms.counter("MrcIngress.trimmed", UPLINK)[0] == len(trimmed)
    assert ms.counters("MrcIngress.drop_queue_full") == {}
    assert ms.counters("MrcEgress.ecn_marked") == {}
    assert ms.counter("MrcEgress.forwarded", UPLINK) == (len(sent), sum(len(f) for f in sent))


def test_heavy_incast_needs_control_queue_rate_headroom() -> None:
    """BMv2 rates are packets/s per priority queue: at 4:1 the trimmed headers (3 per
    packet time) outrun a control queue shaped like the data queue and overflow it in
    the traffic manager; giving the control queue more packets/s (set_queue_rate <pps>
    <port> 7) avoids that (docs/switch-queues.md §7)."""
    ms = t0()
    sent = overload(ms, 4, duration_ms=100, seed=4)
    assert ms.switch.dropped(UPLINK, "queue_full") > 0
    assert len(ms.take(UPLINK)) == len(sent) - ms.switch.dropped(UPLINK, "queue_full")

    ms = t0()
    ms.switch.set_queue_rate(RATE_PPS * 8, port=UPLINK, priority=CONTROL_PRIORITY)
    sent = overload(ms, 4, duration_ms=100, seed=4)
    assert ms.switch.dropped() == 0
    assert len(ms.take(UPLINK)) == len(sent)
