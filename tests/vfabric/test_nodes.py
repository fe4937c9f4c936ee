"""The nodes' per-frame work: a NIC node reads a frame's EV, DSCP and ECN in one C integer
(``_outer_fields``, what ``frame_outer`` gives), and a switch node arms one wake-up per
departure time (the time armed last is remembered while it is pending)."""

from __future__ import annotations

import random

import pytest

from mrc_wire.constants import IPPROTO_IPV6, Dscp
from mrc_wire.frames import DATA_HEADER_BYTES, NEXT_HEADER_OFFSET, TRAFFIC_CLASS_OFFSET, frame_outer
from vfabric import VirtualFabric
from vfabric.nodes import NO_TIMER, EvStats, SwitchNode, SwitchOutput, _outer_fields
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


def test_a_nic_node_counts_a_new_ev_from_zero() -> None:
    """The counters a NIC node makes for an EV it meets first (compiled: the type's own
    allocation, without ``__init__``) start at zero: one frame sent counts only itself."""
    fabric = VirtualFabric("tiny", seed=0)
    nic = fabric.nics["nic0"]
    frame = bytearray([0x11] * (SPORT + 30))
    frame[NEXT_HEADER_OFFSET] = IPPROTO_IPV6
    frame[TRAFFIC_CLASS_OFFSET] = 0x60  # DSCP 0, ECN 0: no data
    frame[TRAFFIC_CLASS_OFFSET + 1] = 0x01
    ev = packed(bytes(frame)) >> 8
    assert ev not in nic.ev_tx
    nic._transmit(0, bytes(frame))
    stats = nic.ev_tx[ev]
    assert type(stats) is EvStats
    counts = dict.fromkeys(EvStats().as_dict(), 0)
    assert stats.as_dict() == {**counts, "tx_packets": 1, "tx_bytes": len(frame)}


def ev_frame(ev: int, dscp: int, ecn: int, length: int) -> bytes:
    """A frame of ``length`` bytes (at least up to the UDP source port) whose outer
    fields are ``ev`` (the source port : the flow label's low 16 bits), ``dscp`` and
    ``ecn``: not a packet the core decodes (it drops it)."""
    frame = bytearray([0x11] * length)
    frame[NEXT_HEADER_OFFSET] = IPPROTO_IPV6
    word = 6 << 28 | dscp << 22 | ecn << 20 | ev & 0xFFFF
    frame[TRAFFIC_CLASS_OFFSET : TRAFFIC_CLASS_OFFSET + 4] = word.to_bytes(4, "big")
    frame[SPORT : SPORT + 2] = (ev >> 16).to_bytes(2, "big")
    assert packed(bytes(frame)) == ev << 8 | dscp << 2 | ecn
    return bytes(frame)


def test_a_nic_node_counts_each_ev_in_the_order_first_met() -> None:
    """The per-EV counters (compiled: a C table that grows, found by hashing the EV) give
    what a dict of EvStats updated per frame gives: thousands of frames sent, received
    and dropped on 700 EVs (the extremes, EVs alike in their low or high bits, random
    ones), each direction's EVs in the order they were first met."""
    rng = random.Random(23)
    pool = [0, 1, 0xFFFFFFFF, 0x80000000]
    pool += [k << 20 for k in range(1, 64)] + [k << 16 | 0xFFFF for k in range(64)]
    pool += rng.sample(range(1 << 32), 570)
    assert len(set(pool)) == len(pool) == 701
    fabric = VirtualFabric("tiny", seed=0)
    nic = fabric.nics["nic0"]
    for plane in range(len(nic.uplinks)):
        nic.uplinks[plane] = None  # what is sent stays here
    zero = dict.fromkeys(EvStats().as_dict(), 0)
    sent: dict[int, dict[str, int]] = {}
    arrived: dict[int, dict[str, int]] = {}
    dscps = (0, Dscp.TRIMMABLE, Dscp.NO_TRIM, Dscp.TRIMMED, Dscp.TRIMMED_LASTHOP, Dscp.CONTROL)
    for _ in range(6_000):
        ev = rng.choice(pool[: rng.choice((20, 100, len(pool)))])  # some EVs met often
        dscp, ecn = int(rng.choice(dscps)), rng.randrange(4)
        frame = ev_frame(ev, dscp, ecn, SPORT + 2 + rng.randrange(DATA_HEADER_BYTES))
        action = rng.randrange(3)
        if action == 0:
            nic._transmit(0, frame)
            row = sent.setdefault(ev, dict(zero))
            row["tx_packets"] += 1
            row["tx_bytes"] += len(frame)
            if dscp in (Dscp.TRIMMABLE, Dscp.NO_TRIM) and len(frame) > DATA_HEADER_BYTES:
                row["data_bytes"] += len(frame) - DATA_HEADER_BYTES
        elif action == 1:
            nic.receive(0, frame)
            row = arrived.setdefault(ev, dict(zero))
            row["rx_packets"] += 1
            if dscp in (Dscp.TRIMMED, Dscp.TRIMMED_LASTHOP):
                row["trimmed"] += 1
            elif ecn == 3:
                row["ce_marked"] += 1
        else:
            nic.count_drop(ev)
            sent.setdefault(ev, dict(zero))["dropped"] += 1
    assert len(sent) > 400 and len(arrived) > 400  # room for 256 EVs at first: grown
    for got, want in ((nic.ev_tx, sent), (nic.ev_rx, arrived)):
        assert list(got) == list(want)  # the order first met
        assert all(type(stats) is EvStats for stats in got.values())
        assert {ev: stats.as_dict() for ev, stats in got.items()} == want
    assert fabric.ev_counters()["nic0"]["tx"] == {f"{ev:#010x}": sent[ev] for ev in sorted(sent)}


def test_a_nic_node_s_ev_counters_are_read_as_new_dicts() -> None:
    """``ev_tx`` and ``ev_rx`` are read-only views: each read is a new dict of new
    EvStats, and changing one changes nothing the node counts."""
    fabric = VirtualFabric("tiny", seed=0)
    nic = fabric.nics["nic0"]
    nic.count_drop(7)
    first = nic.ev_tx
    first[7].dropped = 100
    first[8] = EvStats()
    assert first is not nic.ev_tx
    assert list(nic.ev_tx) == [7] and nic.ev_tx[7].dropped == 1
    assert nic.ev_rx == {}
    with pytest.raises(AttributeError):
        nic.ev_tx = {}  # type: ignore[misc]


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


def test_many_pending_wake_ups_each_fire_once() -> None:
    """More wake-up times pending than a switch node has room for at first (4: compiled,
    a C array that grows), armed in random order and again while pending: one event per
    time, each leaves the pending ones as it fires, and a time armed again after it
    fired is scheduled again."""
    fabric, node = switch_node()
    events = fabric.events
    base = events.pending()
    rng = random.Random(8)
    times = [1_000 * (k + 1) for k in range(40)]
    rng.shuffle(times)
    for at in times + rng.sample(times, 20):  # the repeats are pending: nothing new
        node._arm(at)
    assert node._wakes == set(times)
    assert events.pending() == base + 40
    fabric.run(until_ns=20_500)
    assert node._wakes == {at for at in times if at > 20_500}
    node._arm(30_000)  # pending
    node._arm(50_000)  # new
    assert events.pending() == base + 21
    fabric.run(until_ns=100_000)
    assert node._wakes == set()
    node._arm(120_000)  # fired long ago: armed again
    assert node._wakes == {120_000} and events.pending() == base + 1


def test_a_switch_wake_up_is_an_integer_event_and_fire_is_the_same() -> None:
    """``_arm`` schedules ``fire_int(due)`` (``push_source_int``: compiled, the time a C
    integer in the event list); ``fire_int`` and ``fire`` both wake the switch for that
    time: it leaves the pending ones, and the last armed time may be armed again."""
    fabric, node = switch_node()
    events = fabric.events
    base = events.pending()
    node._arm(5_000)
    node._arm(6_000)
    assert events.pending() == base + 2 and node._wakes == {5_000, 6_000}
    node.fire_int(6_000)  # the last armed: no longer pending, armed again below
    assert node._wakes == {5_000}
    node.fire(5_000)
    assert node._wakes == set()
    node._arm(6_000)
    assert node._wakes == {6_000} and events.pending() == base + 3
    fabric.run(until_ns=10_000)  # the three events fire: the stale two find nothing
    assert node._wakes == set()


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


def test_a_switch_s_out_is_read_again_whenever_it_changes() -> None:
    """Compiled, ``SwitchOutput.output`` looks a port up in a table of ``out`` (no dict
    lookup per frame), read again whenever ``out`` changed: a wire put on a port, taken
    off, or swapped, a new ``out`` dict and a key the table cannot hold all send frames
    where ``out.get(port)`` says, as the pure path does."""
    fabric, node = switch_node()
    sink = node.switch.output_sink
    port, wire = next(iter(node.out.items()))
    first, second = RecordingSink(), RecordingSink()
    wire.connect(first)
    other = next(w for p, w in node.out.items() if p != port)
    other.connect(second)
    sink.output(port, b"\x01" * 64)
    node.out[port] = other  # swapped: this port's frames go onto the other wire
    sink.output(port, b"\x02" * 64)
    unwired = node.unwired
    del node.out[port]  # taken off: unwired
    sink.output(port, b"\x03" * 64)
    assert node.unwired == unwired + 1
    node.out[port] = None  # a port without a wire: unwired too
    sink.output(port, b"\x04" * 64)
    assert node.unwired == unwired + 2
    node.out = dict(node.out)  # a new dict, the port's wire back on it
    node.out[port] = wire
    sink.output(port, b"\x05" * 64)
    node.out[1 << 70] = other  # a key past the table: out.get for every port
    sink.output(1 << 70, b"\x06" * 64)
    sink.output(port, b"\x07" * 64)
    del node.out[1 << 70]
    node.out[-1] = wire  # and a negative one (a dict key, not a list index)
    sink.output(-1, b"\x08" * 64)
    sink.output(port, b"\x09" * 64)
    assert node.unwired == unwired + 2
    fabric.run(until_ns=1_000_000)
    assert [frame[0] for _, frame in first.frames] == [1, 5, 7, 8, 9]
    assert [frame[0] for _, frame in second.frames] == [2, 6]


def data_frame(length: int) -> bytes:
    """A frame whose outer fields say data (DSCP TRIMMABLE, ECN 0), ``length`` bytes: not
    a packet the core decodes (it drops it), but the node counts its payload first."""
    frame = bytearray([0x11] * length)
    frame[NEXT_HEADER_OFFSET] = IPPROTO_IPV6
    frame[TRAFFIC_CLASS_OFFSET] = 0x60 | Dscp.TRIMMABLE >> 2
    frame[TRAFFIC_CLASS_OFFSET + 1] = (Dscp.TRIMMABLE & 3) << 6
    return bytes(frame)


def test_rx_data_bytes_count_each_port_s_data_payload_as_a_list_index_would() -> None:
    """The per-port counts (C on the native build) take a port as a list index does:
    from the end when negative, IndexError past either end; a frame no longer than the
    data header carries no payload."""
    fabric = VirtualFabric("tiny", seed=0)
    nic = fabric.nics["nic0"]
    ports = nic.core.plane_count
    assert ports >= 2 and nic.rx_data_bytes == [0] * ports
    nic.receive(1, data_frame(DATA_HEADER_BYTES + 100))
    nic.receive(0, data_frame(DATA_HEADER_BYTES + 7))
    nic.receive(-1, data_frame(DATA_HEADER_BYTES + 1000))  # the last port
    nic.receive(0, data_frame(DATA_HEADER_BYTES))  # no payload
    expected = [7, 100] + [0] * (ports - 2)
    expected[-1] += 1000
    assert nic.rx_data_bytes == expected
    assert fabric.received_data_bytes() == sum(expected)
    for port in (ports, -ports - 1):
        with pytest.raises(IndexError):
            nic.receive(port, data_frame(DATA_HEADER_BYTES + 5))
    assert nic.rx_data_bytes == expected
    assert nic.placed_bins == {}  # the core placed nothing of these


def test_a_nic_node_s_timer_is_one_integer_event_per_deadline() -> None:
    """A NIC node keeps the deadline its pending timer event is for (``_timer_at``, a C
    integer compiled; ``NO_TIMER`` before any): after every service it is the core's
    next deadline when there is one; a service that finds the same deadline schedules
    nothing more, and an event for another deadline (superseded) does nothing."""
    fabric = VirtualFabric("tiny", seed=1)
    nic = fabric.nics["nic0"]
    assert nic._timer_at == NO_TIMER < 0
    transfer = fabric.transfer("nic0", "nic3", 64 << 10)
    seen = 0
    done = False
    step = 0
    while not done:
        step += 1
        done = fabric.run(until_ns=step * 2_000)
        deadline = nic.core.next_timer()
        if deadline is not None:
            assert nic._timer_at == deadline
            seen += 1
            pending = fabric.events.pending()
            nic.service()  # the same deadline: nothing new
            assert fabric.events.pending() == pending and nic._timer_at == deadline
            nic.fire_int(deadline + 1)  # not the pending one's: nothing
            nic.fire(deadline - 1)
            assert fabric.events.pending() == pending and nic._timer_at == deadline
        assert step < 10_000
    assert seen > 3 and transfer.intact


def test_placed_bins_are_the_bytes_placed_in_each_time_bin() -> None:
    """A transfer run one time bin at a time: what a NIC's core placed during bin k is
    the sum of its ``placed_bins[(plane, k)]`` over the planes, read while bin k is the
    open one and again after later bins closed it; every key is a (plane, bin) that
    exists, and the bins add up to the core's placed bytes."""
    nbytes = 256 << 10
    fabric = VirtualFabric("tiny", seed=1, bin_ns=1_000)  # 1 µs: many bins
    transfer = fabric.transfer("nic0", "nic3", nbytes)
    width = fabric.bin_ns
    placed: dict[str, dict[int, int]] = {name: {} for name in fabric.nics}
    before = dict.fromkeys(fabric.nics, 0)
    k = 0
    done = False
    while not done:
        done = fabric.run(until_ns=(k + 1) * width - 1)
        assert fabric.now < (k + 1) * width
        for name, nic in fabric.nics.items():
            step = nic.core.placed_bytes - before[name]
            before[name] = nic.core.placed_bytes
            bins = nic.placed_bins  # bin k is the open one
            assert sum(n for (_, index), n in bins.items() if index == k) == step
            if step:
                placed[name][k] = step
        k += 1
        assert k < 10_000
    assert transfer.intact
    assert len(placed["nic3"]) > 3  # bins closed while the transfer ran
    assert fabric.delivered_bytes() == nbytes
    for name, nic in fabric.nics.items():
        bins = nic.placed_bins
        assert bins == nic.placed_bins  # reading takes nothing away
        planes = nic.core.plane_count
        assert all(0 <= plane < planes and 0 <= index < k for plane, index in bins)
        assert all(n > 0 for n in bins.values())
        per_bin: dict[int, int] = {}
        for (_, index), n in bins.items():
            per_bin[index] = per_bin.get(index, 0) + n
        assert per_bin == placed[name]
        assert sum(bins.values()) == nic.core.placed_bytes
