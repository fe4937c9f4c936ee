"""nic_emu.connection.receive: the receive side on its own (no sender, no Connection),
its host a bare NicCore."""

from __future__ import annotations

from mrc_wire import DataPacket, Nack, Probe, Sack, decode
from mrc_wire.constants import Dscp, Ecn, NackReason
from nic_emu.config import NicConfig
from nic_emu.connection.events import WriteReceived
from nic_emu.connection.receive import Receiver
from nic_emu.connection.records import ConnectionCounters, ConnectionLog
from nic_emu.connection.reverse import ReverseEvs
from nic_emu.connection.templates import nack_templates, sack_templates
from nic_emu.core import NicCore
from nic_emu.memory import MemoryRegion
from topologies import AddressPlan, load

CFG = NicConfig()
MTU = 256


class Rig:
    def __init__(self, *, mrc: bool = True) -> None:
        plan = AddressPlan(load("tiny"))
        self.core = core = NicCore("nic0", plan, CFG)
        self.peer = [plan.nic_address("nic3", p).packed for p in range(core.plane_count)]
        self.region: MemoryRegion = core.register_memory(64 * MTU)
        self.counters = ConnectionCounters()
        single = None if mrc else (0, plan.make_ev(0, 0, 1))
        self.rx = Receiver(
            core,
            CFG,
            peer="nic3",
            peer_addrs=frozenset(self.peer),
            recv_psn=0,
            mrc=mrc,
            regions=core.memory.regions,
            reverse=ReverseEvs(core, CFG, "nic3", 0x100, 0, single),
            templates=(
                sack_templates(core, self.peer, 0x200),
                nack_templates(core, self.peer, 0x200),
            ),
            counters=self.counters,
            log=ConnectionLog(core.log, "nic0", 0x100),
        )
        self.out: list[tuple[int, bytes]] = []

    def data(self, psn: int, *, last: bool = False, **fields: object) -> DataPacket:
        core = self.core
        packet = {
            "dst_mac": core.macs[0],
            "src_mac": core.gateway_macs[0],
            "outer_src": self.peer[0],
            "outer_dst": core.addrs[0],
            "inner_src": self.peer[0],
            "inner_dst": core.addrs[0],
            "ev": 7,
            "dqpn": 0x100,
            "psn": psn,
            "va": self.region.va + psn * MTU,
            "rkey": self.region.rkey,
            "dma_length": MTU,
            "payload": bytes([psn % 256]) * MTU,
            "last": last,
            "timestamp": 1_000 + psn,
        }
        packet.update(fields)
        return DataPacket(**packet)  # type: ignore[arg-type]

    def feed(self, m: DataPacket, now: int) -> list[object]:
        self.out.clear()
        frame = self.rx.on_data(m, 0, now)
        if frame is not None:
            self.out.append(frame)
        return [decode(f) for _, f in self.out]


def test_in_order_data_is_placed_and_sacked_every_few_packets() -> None:
    rig = Rig()
    for psn in range(CFG.sack_every_pkts - 1):
        assert rig.feed(rig.data(psn), 10 + psn) == []
    assert rig.rx.sack_deadline == 10 + CFG.sack_delay_ns
    (sack,) = rig.feed(rig.data(CFG.sack_every_pkts - 1), 20)
    assert isinstance(sack, Sack) and sack.cum_psn == CFG.sack_every_pkts
    assert rig.rx.sack_deadline is None and sack.inner_dst == rig.peer[sack_plane(rig)]
    n = CFG.sack_every_pkts
    assert bytes(rig.region.buffer[: n * MTU]) == b"".join(bytes([p]) * MTU for p in range(n))
    assert rig.counters["rx_data"] == n and rig.core.placed_bytes == n * MTU


def sack_plane(rig: Rig) -> int:
    return rig.out[0][0]


def test_a_delayed_sack_goes_when_its_deadline_passes() -> None:
    rig = Rig()
    rig.feed(rig.data(0), 100)
    deadline = 100 + CFG.sack_delay_ns
    assert rig.rx.on_timer(deadline - 1) is None
    frame = rig.rx.on_timer(deadline)
    assert frame is not None and rig.rx.on_timer(deadline + 1) is None  # sent once
    sack = decode(frame[1])
    assert isinstance(sack, Sack) and sack.cum_psn == 1 and sack.echoed_ts == 1_000


def test_duplicates_are_acknowledged_never_placed_twice() -> None:
    rig = Rig()
    rig.feed(rig.data(0, ack_req=True), 10)
    (sack,) = rig.feed(rig.data(0, payload=b"\xff" * MTU), 20)
    assert isinstance(sack, Sack) and rig.counters["rx_dup"] == 1
    assert rig.region.buffer[0] == 0 and rig.core.placed_bytes == MTU


def test_a_trimmed_packet_is_nacked_unless_already_received() -> None:
    rig = Rig()
    (nack,) = rig.feed(rig.data(3, dscp=int(Dscp.TRIMMED), payload=b""), 10)
    assert isinstance(nack, Nack) and (nack.nack_psn, nack.reason) == (3, NackReason.TRIMMED)
    rig.feed(rig.data(0, ack_req=True), 20)
    (sack,) = rig.feed(rig.data(0, dscp=int(Dscp.TRIMMED_LASTHOP), payload=b""), 30)
    assert isinstance(sack, Sack)
    assert rig.counters["rx_trimmed"] == 2 and rig.counters["tx_nack"] == 1


def test_ce_marked_data_is_sacked_at_once_with_the_echo() -> None:
    rig = Rig()
    (sack,) = rig.feed(rig.data(0, ecn=int(Ecn.CE)), 10)
    assert isinstance(sack, Sack) and sack.ecn_echo


def test_bad_sources_bad_memory_and_a_stopped_receiver_drop() -> None:
    rig = Rig()
    rig.feed(rig.data(0, inner_src=bytes(16)), 10)
    rig.feed(rig.data(0, rkey=rig.region.rkey + 99), 20)
    rig.feed(rig.data(0, va=rig.region.va + 64 * MTU), 30)  # past the region's end
    rig.rx.stop()
    rig.feed(rig.data(0), 40)
    assert rig.core.drop_reasons == {
        "foreign_source": 1,
        "memory_access": 2,
        "connection_error": 1,
    }
    assert rig.counters["rx_data"] == 0 and rig.out == []


def test_a_source_is_checked_on_every_packet_after_the_peer_was_seen() -> None:
    """The peer's address remembered per plane saves the set's lookup only: a stranger
    after it is still dropped, and the peer's other address still taken."""
    rig = Rig()
    rig.feed(rig.data(0), 10)
    rig.feed(rig.data(1, inner_src=bytes(16)), 20)
    rig.feed(rig.data(1, inner_src=rig.peer[0][:15] + b"x"), 30)
    rig.feed(rig.data(1, inner_src=rig.peer[1]), 40)  # the peer's plane-1 address, on 0
    rig.feed(rig.data(2), 50)
    rig.feed(rig.data(3, inner_src=bytes(16)), 60)
    assert rig.core.drop_reasons == {"foreign_source": 3}
    assert rig.counters["rx_data"] == 3 and rig.counters["bytes_placed"] == 3 * MTU


def test_a_completed_message_reaches_the_application_once() -> None:
    rig = Rig()
    rig.feed(rig.data(1, last=True), 10)  # out of order: held until PSN 0
    assert rig.core.events() == []
    rig.feed(rig.data(0), 20)
    (done,) = rig.core.events()
    assert isinstance(done, WriteReceived)
    assert (done.qpn, done.va, done.length, done.first_psn, done.last_psn) == (
        0x100,
        rig.region.va,
        2 * MTU,
        0,
        1,
    )


def test_go_back_n_drops_past_a_gap_and_naks_it_once() -> None:
    rig = Rig(mrc=False)
    (nak,) = rig.feed(rig.data(2), 10)
    assert isinstance(nak, Nack) and (nak.nack_psn, nak.reason) == (0, NackReason.ROD_OOO)
    assert rig.feed(rig.data(3), 20) == []  # the gap was NAKed already
    assert rig.feed(rig.data(0, dscp=int(Dscp.TRIMMED), payload=b""), 30) == []
    assert rig.counters["rx_trimmed_ignored"] == 1 and rig.counters["rx_data"] == 0


def test_a_reliability_probe_is_answered_with_the_current_state() -> None:
    rig = Rig()
    rig.feed(rig.data(0), 10)
    core = rig.core
    probe = Probe(
        dst_mac=core.macs[0],
        src_mac=core.gateway_macs[0],
        outer_src=rig.peer[0],
        outer_dst=core.addrs[0],
        inner_src=rig.peer[0],
        inner_dst=core.addrs[0],
        ev=9,
        dqpn=0x100,
        timestamp=55,
    )
    frame = rig.rx.on_reliability_probe(probe, 0, 20)
    assert frame is not None
    sack = decode(frame[1])
    assert isinstance(sack, Sack) and sack.probe_reply and sack.cum_psn == 1
    assert rig.rx.reverse.heard[0] == 20 and rig.rx.sack_deadline is None


def test_messages_complete_with_their_first_va_whatever_the_arrival_order() -> None:
    # Only a message's first PSN keeps its VA (an in-order PSN that is not
    # msg_first_psn follows no message end): messages of 1-6 packets, arriving in
    # order, shuffled within a few PSNs, or with duplicates, complete as before.
    import random

    for seed in range(30):
        rng = random.Random(seed)
        lasts: list[int] = []
        psn = -1
        while psn < 60:
            psn = min(psn + rng.randint(1, 6), 63)
            lasts.append(psn)
        order = list(range(64))
        if seed % 3:
            for i in range(0, 64, 5):  # local reordering, as a multipath fabric makes
                chunk = order[i : i + 5 + seed % 4]
                rng.shuffle(chunk)
                order[i : i + len(chunk)] = chunk
        order += rng.sample(range(64), seed % 5)  # duplicates, never placed twice
        rig = Rig()
        for t, p in enumerate(order):
            tracker = rig.rx.msgs
            in_order = p == rig.rx.recv.rcv_nxt and p != tracker.msg_first_psn
            rig.feed(rig.data(p, last=p in lasts), 10 + t)
            assert not (in_order and p in tracker.va_by_psn), (seed, p)
        done = [e for e in rig.core.events() if isinstance(e, WriteReceived)]
        firsts = [0, *(last + 1 for last in lasts[:-1])]
        assert [(e.first_psn, e.last_psn, e.va, e.length) for e in done] == [
            (f, last, rig.region.va + f * MTU, (last - f + 1) * MTU)
            for f, last in zip(firsts, lasts)
        ], seed


def test_go_back_n_messages_complete_with_their_first_va() -> None:
    rig = Rig(mrc=False)
    for p in range(12):
        rig.feed(rig.data(p, last=p in (0, 4, 11)), 10 + p)
        assert list(rig.rx.msgs.va_by_psn) in ([], [rig.rx.msgs.msg_first_psn])
    done = [e for e in rig.core.events() if isinstance(e, WriteReceived)]
    assert [(e.first_psn, e.last_psn, e.va) for e in done] == [
        (0, 0, rig.region.va),
        (1, 4, rig.region.va + MTU),
        (5, 11, rig.region.va + 5 * MTU),
    ]


def test_a_sack_counts_the_psns_beyond_the_cumulative_point_up_to_its_field() -> None:
    """The SACK's ``ooo_count`` is the arrival bitmap's bit count (the native build reads
    it from the int's digits: one digit, several, a 30-bit digit boundary), capped at
    its 16-bit field."""
    rig = Rig()
    recv = rig.rx.recv
    cases = [
        (0b1011, 3),
        ((1 << 29) | (1 << 30) | (1 << 59) | (1 << 60), 4),
        ((1 << 64) - 1, 64),
        ((1 << 100) | (1 << 61) | 1, 3),
        ((1 << 70_000) - 1, 0xFFFF),
        (0, 0),
    ]
    for ooo, count in cases:
        recv.ooo = ooo
        frame = rig.rx.send_sack(50, 7, 0, None, False)
        assert frame is not None
        sack = decode(frame[1])
        assert isinstance(sack, Sack) and sack.ooo_count == count == min(ooo.bit_count(), 0xFFFF)
