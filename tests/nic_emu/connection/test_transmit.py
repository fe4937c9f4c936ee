"""nic_emu.connection.transmit: the data frames of one connection, and its send turn,
each on its own."""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

import pytest

from mrc_wire import DataPacket, decode
from mrc_wire.constants import Dscp
from nic_emu import event_log as ev_kinds
from nic_emu.config import NicConfig
from nic_emu.connection.common import TS_MASK, QpState
from nic_emu.connection.records import ConnectionCounters, ConnectionLog
from nic_emu.connection.templates import data_templates
from nic_emu.connection.transmit import DataTransmitter, Transmitter
from nic_emu.core import NicCore
from nic_emu.dcqcn import DcqcnRate
from nic_emu.ev_set import EvEntry
from nic_emu.exceptions import DataSourceError
from nic_emu.sender import PSN_MASK, BufferPayload, SendState, WriteRequest
from topologies import AddressPlan, load

from .kit import CFG, Parts, make_parts, post

MTU = 512


@pytest.mark.parametrize("ns_per_byte", [0.08, 1 / 3, 2.675, 7, Fraction(5, 3)])
def test_a_port_is_busy_for_the_truncated_wire_time_of_any_ns_per_byte(
    ns_per_byte: float | int | Fraction,
) -> None:
    """A float ns per byte (the host's, 8e9 / the port rate) is multiplied and truncated
    in C doubles on the native build: the same as int() of the Python product, which
    any other number (an int, a Fraction) still takes."""
    plan = AddressPlan(load("tiny"))
    core = NicCore("nic0", plan, NicConfig())
    peer = [plan.nic_address("nic3", p).packed for p in range(core.plane_count)]
    tx = DataTransmitter(
        core,
        data_templates(core, peer, 0x300),
        trace=False,
        counters=ConnectionCounters(),
        log=ConnectionLog(core.log, "nic0", 0x100),
        now=0,
    )
    tx.ns_per_byte = ns_per_byte
    ev = plan.make_ev(1, 0, 5)
    plane, path, wire = core.ev_route("nic3", ev)
    entry = EvEntry(ev=ev, plane=plane, path=path)
    entry.wire = wire
    send = SendState(0, MTU, 64)
    data = bytes(range(256)) * 5
    send.post(WriteRequest(1, BufferPayload(memoryview(data)), len(data), 0x1000, 9, 3, 0))
    # the timestamp made in C from a time of at most 2**62, by Python's & past it
    for now in (1_000, 10**15 + 7, (1 << 62) + 7):
        pkt = send.next_packet()
        assert pkt is not None
        _, frame = tx.transmit(pkt, entry, send, now)
        busy = core.port_free_at[plane] - now
        assert busy == int(len(frame) * ns_per_byte) and type(busy) is int
        sent = decode(frame)
        assert isinstance(sent, DataPacket)
        assert (sent.timestamp, sent.psn) == (now & TS_MASK, pkt.psn & PSN_MASK)


def test_a_packet_leaves_on_its_ev_and_keeps_its_port_busy() -> None:
    plan = AddressPlan(load("tiny"))
    core = NicCore("nic0", plan, NicConfig())
    peer = [plan.nic_address("nic3", p).packed for p in range(core.plane_count)]
    counters = ConnectionCounters()
    tx = DataTransmitter(
        core,
        data_templates(core, peer, 0x300),
        trace=True,
        counters=counters,
        log=ConnectionLog(core.log, "nic0", 0x100),
        now=0,
    )
    ev = plan.make_ev(1, 0, 5)
    plane, path, wire = core.ev_route("nic3", ev)
    entry = EvEntry(ev=ev, plane=plane, path=path)
    entry.wire = wire
    send = SendState((1 << 24) - 1, MTU, 64)  # the PSN wraps on the wire
    data = bytes(range(256)) * 4
    send.post(WriteRequest(1, BufferPayload(memoryview(data)), len(data), 0x1000, 9, 2, 0))
    out: list[tuple[int, bytes]] = []
    for now in (100, 200):
        pkt = send.next_packet()
        assert pkt is not None
        sent = tx.transmit(pkt, entry, send, now)
        out.append(sent)
        assert sent[0] == plane
        assert core.port_free_at[plane] == now + int(len(sent[1]) * core.ns_per_byte)
    first, second = (decode(f) for _, f in out)
    assert [p for p, _ in out] == [plane, plane]
    assert isinstance(first, DataPacket) and isinstance(second, DataPacket)
    assert (first.psn, second.psn, first.va, second.va) == ((1 << 24) - 1, 0, 0x1000, 0x1200)
    assert (first.ev, first.outer_dst, first.dqpn, first.rkey) == (ev, wire, 0x300, 9)
    assert first.payload + second.payload == data and second.last and second.ack_req
    assert first.dscp == int(Dscp.TRIMMABLE) and first.timestamp == 100
    assert (tx.last_tx_ns, entry.tx_packets, entry.first_tx_ns) == (200, 2, 100)
    assert counters["tx_data"] == 2 and core.plane_tx[plane] == 2
    assert [r.psn for r in core.log.of_kind(ev_kinds.TX)] == [(1 << 24) - 1, 1 << 24]
    assert send.inflight_bytes == len(data)
    tx.release()
    assert all(t.payload == b"" for t in tx.templates)


# -- Transmitter: the send turn, on its own (the queue pair through QpStatus) ----------


def _sent(tx: Transmitter, now: int, parts: Parts) -> bool:
    """``tx.send_one(now)``, its frame (if any) put in ``parts.out``."""
    frame = tx.send_one(now)
    if frame is None:
        return False
    parts.out.append(frame)
    return True


def _transmitter(parts: Parts, *, dcqcn: DcqcnRate | None = None) -> Transmitter:
    return Transmitter(
        parts.qp,
        parts.frames,
        parts.send,
        parts.evs,
        parts.cc,
        dcqcn=dcqcn,
        mtu=parts.cfg.mtu_payload,
        window=parts.cfg.receive_window_psns,
    )


@pytest.mark.parametrize("general", [False, True])
def test_the_send_turn_sends_what_is_queued_within_the_receive_window(general: bool) -> None:
    """The receive window compared on C integers (the native build's), or, a float of
    the same value, by the Python expression: the same turns."""
    parts = make_parts(replace(CFG, receive_window_psns=128))
    parts.cc.cwnd = 1 << 30  # the receive window is the limit here
    tx = _transmitter(parts)
    if general:
        tx._window = 128.0
    assert tx.window_blocked() and not _sent(tx, 0, parts)  # nothing posted
    post(parts, 130)
    now = 0
    while _sent(tx, now, parts):
        now += 1_000  # every port free again
    assert len(parts.out) == 128 and tx.window_blocked()  # 128 PSNs past snd_una
    parts.send.ack_below(1, 0)
    parts.send.advance_una(1)
    assert not tx.window_blocked() and _sent(tx, now, parts)
    assert tx.window_blocked()
    parts.send.ack_below(2, 0)
    parts.send.advance_una(2)
    assert not tx.window_blocked()  # PSN 129 may go now...
    parts.qp.state = QpState.ERROR
    assert tx.window_blocked()  # ...but not from a failed queue pair


def test_a_full_congestion_window_blocks_the_turn() -> None:
    parts = make_parts()
    tx = _transmitter(parts)
    post(parts, 2)
    parts.cc.cwnd = parts.cfg.mtu_payload
    assert _sent(tx, 0, parts)
    assert tx.window_blocked() and not _sent(tx, 10_000, parts)


def test_busy_ports_make_the_turn_wait_for_the_first_to_free() -> None:
    parts = make_parts()
    tx = _transmitter(parts)
    post(parts, 3)
    assert _sent(tx, 0, parts) and _sent(tx, 0, parts)
    free = parts.core.port_free_at
    assert min(free) > 0  # both ports busy serialising
    assert not _sent(tx, 0, parts)
    assert tx.pace_at == min(free) and free[tx.pace_plane] == tx.pace_at and tx.pace_fixed
    assert not tx.window_blocked()  # a wait, not a window: the host parks it per port
    tx.on_timer(tx.pace_at - 1)
    assert tx.pace_at is not None
    tx.on_timer(min(free))
    assert tx.pace_at is None and _sent(tx, min(free), parts)


def test_no_usable_ev_is_timed_from_the_first_refusal() -> None:
    parts = make_parts()
    tx = _transmitter(parts)
    post(parts, 1)
    for plane in (0, 1):
        parts.evs.plane_down(plane, 0, remote=False)
    assert not _sent(tx, 100, parts) and not _sent(tx, 200, parts)
    assert tx.no_ev_since == 100 and not parts.out
    tx.stop()
    assert (tx.no_ev_since, tx.pace_at) == (None, None)


def test_streamed_data_that_fails_fails_the_queue_pair() -> None:
    class Broken:
        def take(self, offset: int, length: int) -> bytes:
            raise DataSourceError("the file shrank")

    parts = make_parts()
    tx = _transmitter(parts)
    parts.send.post(WriteRequest(1, Broken(), MTU, 0, 7, 1, 0))
    assert not _sent(tx, 0, parts) and not parts.out
    assert parts.qp.failures == [("data_source", "the file shrank", 0)]
    assert parts.evs.pick(0) is parts.evs.ring[0]  # the EV it picked was given back


def test_the_dcqcn_rate_holds_the_next_packet_until_a_timer() -> None:
    parts = make_parts(mrc=False)
    rate = DcqcnRate(parts.cfg.roce.dcqcn, parts.cfg.port_rate_bps, 0)
    tx = _transmitter(parts, dcqcn=rate)
    post(parts, 2)
    rate.on_cnp(0)  # below line rate: the rate spaces packets
    rate.next_send_ns = 5_000
    assert not _sent(tx, 1_000, parts) and tx.rate_wait_ns == 5_000
    assert tx.window_blocked()  # only the timer lets it go
    tx.on_timer(5_000)
    assert tx.rate_wait_ns is None and _sent(tx, 5_000, parts)
    assert rate.next_send_ns > 5_000  # the packet sent spaces the next one
