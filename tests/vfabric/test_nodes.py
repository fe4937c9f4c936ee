"""The nodes' per-frame work: a NIC node reads a frame's EV, DSCP and ECN in one C integer
(``_outer_fields``, what ``frame_outer`` gives) and finds the EV's counters (``EvIndex``:
compiled, a C table caching the dict), and a switch node arms one wake-up per departure
time (the time armed last is remembered while it is pending)."""

from __future__ import annotations

import random

import pytest

from mrc_wire.constants import IPPROTO_IPV6
from mrc_wire.frames import NEXT_HEADER_OFFSET, TRAFFIC_CLASS_OFFSET, frame_outer
from vfabric import VirtualFabric
from vfabric.nodes import EV_INDEX_START, EvIndex, EvStats, SwitchNode, SwitchOutput, _outer_fields
from vfabric.wires import FrameSink

pytestmark = pytest.mark.unit

#: the UDP source port's offset in a frame without an SRH (Ethernet, two IPv6 headers)
SPORT = 14 + 40 + 40


def packed(frame: bytes) -> int:
    """frame_outer's fields packed as _outer_fields packs them (-1: None)."""
    fields = frame_outer(frame)
    if fields is None:
        return -1
    ev, dscp, ecn = fields
    return ev << 8 | dscp << 2 | ecn


def frames() -> list[bytes]:
    """Frames of every length around the one frame_outer needs, random bytes with and
    without the IPv6 next header, and the extreme values of each field read."""
    rng = random.Random(27)
    out = []
    for length in range(0, SPORT + 40):
        for _ in range(8):
            frame = bytearray(rng.getrandbits(8) for _ in range(length))
            if length > NEXT_HEADER_OFFSET and rng.random() < 0.75:
                frame[NEXT_HEADER_OFFSET] = IPPROTO_IPV6
            out.append(bytes(frame))
    for fill in (0x00, 0xFF, 0x80, 0x7F):
        frame = bytearray([fill] * (SPORT + 30))
        frame[NEXT_HEADER_OFFSET] = IPPROTO_IPV6
        out.append(bytes(frame))
    for tc in range(256):  # every DSCP and ECN, the flow label's high bits set
        frame = bytearray([0xFF] * (SPORT + 2))
        frame[NEXT_HEADER_OFFSET] = IPPROTO_IPV6
        frame[TRAFFIC_CLASS_OFFSET] = 0x60 | tc >> 4
        frame[TRAFFIC_CLASS_OFFSET + 1] = (tc & 0x0F) << 4 | 0x0F
        out.append(bytes(frame))
    return out


def test_outer_fields_are_frame_outers() -> None:
    checked = 0
    for frame in frames():
        assert _outer_fields(frame) == packed(frame), frame.hex()
        checked += frame_outer(frame) is not None
    assert checked > 400  # a third have fields, the rest are None (-1)


def test_outer_fields_of_a_32_bit_ev_and_top_dscp() -> None:
    frame = bytearray([0xFF] * (SPORT + 2))
    frame[NEXT_HEADER_OFFSET] = IPPROTO_IPV6
    assert _outer_fields(bytes(frame)) == 0xFFFFFFFF << 8 | 0x3F << 2 | 3


def test_outer_fields_refuse_none() -> None:
    with pytest.raises(TypeError):
        _outer_fields(None)  # type: ignore[arg-type]


def test_nic_node_receive_refuses_none() -> None:
    fabric = VirtualFabric("tiny", seed=0)
    with pytest.raises(TypeError):
        fabric.nics["nic0"].receive(0, None)  # type: ignore[arg-type]


def switch_node() -> tuple[VirtualFabric, SwitchNode]:
    fabric = VirtualFabric("tiny", seed=0)
    return fabric, next(iter(fabric.switches.values()))


def test_arm_schedules_one_wake_up_per_time() -> None:
    fabric, node = switch_node()
    events = fabric.events
    base = events.pending()
    node._arm(5_000)
    node._arm(5_000)  # the time armed last: nothing new
    assert events.pending() == base + 1
    node._arm(7_000)
    node._arm(5_000)  # pending (not the last armed): nothing new
    node._arm(7_000)
    assert events.pending() == base + 2
    assert node._wakes == {5_000, 7_000}
    fabric.run(until_ns=5_000)  # 5 us fired: the switch is idle, nothing is re-armed
    assert node._wakes == {7_000}
    node._arm(5_000)  # fired: armed again
    assert node._wakes == {5_000, 7_000}
    node._arm(1_000)  # overdue: now
    assert node._wakes == {5_000, 7_000}
    fabric.run(until_ns=10_000)
    assert node._wakes == set()
    node._arm(7_000)  # overdue again: now (10 us), a new wake-up
    assert node._wakes == {10_000}


def test_arm_after_the_last_armed_fired() -> None:
    fabric, node = switch_node()
    base = fabric.events.pending()
    node._arm(2_000)
    fabric.run(until_ns=2_000)
    assert node._wakes == set()
    node._arm(2_000)  # the time armed last, but no longer pending: armed again
    assert fabric.events.pending() == base + 1
    assert node._wakes == {2_000}


class RecordingSink(FrameSink):
    """A wire's far end that records what reaches it."""

    def __init__(self) -> None:
        self.frames: list[tuple[int, bytes]] = []

    def receive(self, port: int, frame: bytes) -> None:
        self.frames.append((port, frame))


def test_the_switch_sends_through_its_node_s_output_sink() -> None:
    fabric, node = switch_node()
    sink = node.switch.output_sink
    assert isinstance(sink, SwitchOutput) and sink.node is node
    assert node.switch.output_callback is None
    port, wire = next(iter(node.out.items()))
    far = RecordingSink()
    wire.connect(far)
    before = fabric.events.pending()
    sink.output(port, b"\x00" * 64)  # onto the port's wire: arrives after its delay
    assert fabric.events.pending() == before + 1
    unwired = node.unwired
    free = max(node.out) + 1  # a port without a link (the CPU port's case)
    sink.output(free, b"\x00" * 64)
    assert node.unwired == unwired + 1
    fabric.run(until_ns=1_000_000)
    assert [frame for _, frame in far.frames] == [b"\x00" * 64]


def ev_patterns() -> list[int]:
    """EVs as frames carry them (32 bits) in patterns that strain a table's hashing: ones
    that differ only in their top, middle or bottom bits, the extremes, random ones."""
    rng = random.Random(27)
    evs = [0, 1, 0xFFFFFFFF, 0x80000000, 0x7FFFFFFF]
    evs += [i << 16 for i in range(1, 300)]  # only the top 16 bits differ
    evs += [0x10000 | i for i in range(1, 300)]  # only the bottom bits
    evs += [i << 8 for i in range(1, 300)]
    evs += [rng.getrandbits(32) for _ in range(600)]
    return list(dict.fromkeys(evs))  # each once, in this order


def test_ev_index_finds_each_ev_s_entry() -> None:
    stats: dict[int, EvStats] = {}
    index = EvIndex(stats)
    evs = ev_patterns()
    assert len(evs) > 20 * EV_INDEX_START  # the table grows many times over
    entries = {}
    for ev in evs:
        entry = index.get(ev)
        entry.rx_packets += 1
        entries[ev] = entry
    assert list(stats) == evs  # the dict in the order the EVs came
    rng = random.Random(5)
    for ev in rng.sample(evs, len(evs)):  # found again, from the table
        entry = index.get(ev)
        assert entry is entries[ev] and entry is stats[ev]
        entry.rx_packets += 1
    assert all(entry.rx_packets == 2 for entry in stats.values())
    assert len(stats) == len(evs)


def test_ev_index_finds_an_entry_put_in_the_dict() -> None:
    stats: dict[int, EvStats] = {}
    index = EvIndex(stats)
    index.get(7).dropped += 1
    outside = stats[9] = EvStats()  # as VirtualFabric._on_wire_drop does
    assert index.get(9) is outside
    assert index.get(9) is outside
    assert index.get(7).dropped == 1
    assert list(stats) == [7, 9]


def test_nic_node_counts_per_ev_in_its_dicts() -> None:
    fabric = VirtualFabric("tiny", seed=0)
    fabric.transfer("nic0", "nic3", 256 << 10)  # 64 data packets
    fabric.run()
    sent = fabric.nics["nic0"].ev_tx
    arrived = fabric.nics["nic3"].ev_rx
    assert sent and arrived
    assert sum(s.tx_packets for s in sent.values()) >= 64
    assert sum(s.rx_packets for s in arrived.values()) >= 64
    for ev, entry in arrived.items():  # the node's index finds the dict's entries
        assert fabric.nics["nic3"]._rx_index.get(ev) is entry
