"""nic_emu.connection.transmit: the data frames of one connection on their own."""

from __future__ import annotations

from mrc_wire import DataPacket, decode
from mrc_wire.constants import Dscp
from nic_emu import event_log as ev_kinds
from nic_emu.config import NicConfig
from nic_emu.connection.queue_pair import COUNTERS
from nic_emu.connection.records import ConnectionLog
from nic_emu.connection.templates import data_templates
from nic_emu.connection.transmit import DataTransmitter
from nic_emu.core import NicCore
from nic_emu.ev_set import EvEntry
from nic_emu.sender import BufferPayload, SendState, WriteRequest
from topologies import AddressPlan, load

MTU = 512


def test_a_packet_leaves_on_its_ev_and_keeps_its_port_busy() -> None:
    plan = AddressPlan(load("tiny"))
    core = NicCore("nic0", plan, NicConfig())
    peer = [plan.nic_address("nic3", p).packed for p in range(core.plane_count)]
    counters = dict.fromkeys(COUNTERS, 0)
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
        size = tx.transmit(pkt, entry, send, now, out)
        assert core.port_free_at[plane] == now + int(size * core.ns_per_byte)
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
