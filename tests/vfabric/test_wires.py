"""A wire's per-frame work: the serialisation time (C doubles and a C cast when compiled),
data frames told by their DSCP, payload bytes per time bin (the current bin counted apart
and added when read), and arrivals delivered to a connected node."""

from __future__ import annotations

import random

import pytest

from mrc_wire.constants import IPPROTO_IPV6
from mrc_wire.frames import (
    DATA_HEADER_BYTES,
    NEXT_HEADER_OFFSET,
    TRAFFIC_CLASS_OFFSET,
    data_bytes,
)
from vfabric.eventlist import EventList
from vfabric.exceptions import VirtualFabricError
from vfabric.wires import MAX_SERIALISATION_NS, NS_BITS, FrameSink, Wire

#: link rates (b/s): the topologies' and odd ones whose quotients fall close to an integer
RATES = [1e9, 10e9, 25e9, 100e9, 400e9, 800e9, 99.9e9, 1e12 / 3, 8e9 / 7, 123_456_789.0, 3.0]


def make_wire(events: EventList, rate_bps: float = 100e9, bin_ns: int = 1_000) -> Wire:
    return Wire(
        events,
        link=("a", "b"),
        src="a",
        src_port=1,
        dst="b",
        dst_port=2,
        plane=0,
        kind="fabric",
        rate_bps=rate_bps,
        delay_ns=500,
        bin_ns=bin_ns,
    )


def frame(size: int, dscp: int = 26, next_header: int = IPPROTO_IPV6) -> bytes:
    """``size`` bytes whose outer IPv6 header says ``next_header`` and ``dscp``."""
    data = bytearray(size)
    if size > TRAFFIC_CLASS_OFFSET + 1:
        data[TRAFFIC_CLASS_OFFSET] = 0x60 | dscp >> 2
        data[TRAFFIC_CLASS_OFFSET + 1] = (dscp & 3) << 6
    if size > NEXT_HEADER_OFFSET:
        data[NEXT_HEADER_OFFSET] = next_header
    return bytes(data)


def test_the_serialisation_time_is_pythons_int_of_the_quotient() -> None:
    """Every frame size up to a jumbo frame and sampled larger ones, at each rate: the wire
    is busy for int(size * NS_BITS / rate) ns, as the pure path always computed it."""
    rng = random.Random(27)
    sizes = [*range(1, 9217), *(rng.randrange(9217, 1 << 22) for _ in range(300))]
    for rate in RATES:
        events = EventList()
        wire = make_wire(events, rate)
        busy = 0
        for size in sizes:
            wire.receive(bytes(size))
            assert wire.busy_until - busy == int(size * NS_BITS / rate), (rate, size)
            busy = wire.busy_until
        assert wire.tx_packets == len(sizes) and wire.tx_bytes == sum(sizes)


def test_a_frame_longer_than_the_time_limit_is_refused() -> None:
    events = EventList()
    wire = make_wire(events, rate_bps=1e-6)  # a 1000-byte frame: 8e18 ns, past 2**62
    with pytest.raises(VirtualFabricError, match="past the event list's"):
        wire.receive(bytes(1000))
    assert wire.tx_packets == 0 and wire.busy_until == 0
    assert float(1 << 62) == MAX_SERIALISATION_NS


def test_data_frames_are_told_by_their_dscp_as_data_bytes_does() -> None:
    """All 64 DSCPs, IPv6-in-IPv6 or not, at the header's length and one more byte."""
    events = EventList()
    wire = make_wire(events)
    expected = 0
    for dscp in range(64):
        for next_header in (IPPROTO_IPV6, 43):
            for size in (DATA_HEADER_BYTES, DATA_HEADER_BYTES + 1, DATA_HEADER_BYTES + 100):
                data = frame(size, dscp, next_header)
                expected += data_bytes(data)
                wire.receive(data)
                assert wire.data_bytes == expected, (dscp, next_header, size)
    assert expected == 3 * 101  # the three data DSCPs, IPv6-in-IPv6, past the header


def test_payload_bytes_per_bin_whenever_they_are_read() -> None:
    """Frames over several bins, ``bins`` read in the middle of one (and again): the same
    dict, in the same order, as adding each frame's payload to it at once."""
    events = EventList()
    wire = make_wire(events, rate_bps=8e9, bin_ns=1_000)  # a byte per ns
    expected: dict[int, int] = {}
    rng = random.Random(3)
    for n in range(200):
        size = DATA_HEADER_BYTES + rng.randrange(1, 600)
        data = frame(size, 26 if n % 7 else 48)  # every 7th: a control frame, no data
        start = wire.busy_until
        wire.receive(data)
        payload = data_bytes(data)
        if payload:
            expected[start // 1_000] = expected.get(start // 1_000, 0) + payload
        if n % 13 == 0:
            assert wire.bins == expected and list(wire.bins) == list(expected)
    assert wire.bins == expected and list(wire.bins) == list(expected)
    assert sum(wire.bins.values()) == wire.data_bytes > 0


class Recorder(FrameSink):
    def __init__(self) -> None:
        self.got: list[tuple[int, int]] = []

    def receive(self, port: int, frame: bytes) -> None:
        self.got.append((port, len(frame)))


def test_a_connected_node_receives_until_another_sink_is_set() -> None:
    events = EventList()
    wire = make_wire(events)
    node = Recorder()
    wire.connect(node)
    assert wire.sink == node.receive
    wire.receive(bytes(100))
    events.run(None, lambda: False)
    assert node.got == [(2, 100)]
    later: list[tuple[int, int]] = []
    wire.sink = lambda port, data: later.append((port, len(data)))
    wire.receive(bytes(200))
    events.run(None, lambda: False)
    assert node.got == [(2, 100)] and later == [(2, 200)]


def test_a_frame_sink_must_say_what_it_does() -> None:
    with pytest.raises(NotImplementedError, match="receives nothing"):
        FrameSink().receive(0, b"")
