"""Transfer bookkeeping of the serving process: QPN plan, repath events, per-plane bytes,
the responder's streamed receive side and the NIC's memory budget."""

from __future__ import annotations

import hashlib

import pytest

from nic_emu.analysis import repath_time
from nic_emu.config import TransportMode
from nic_emu.core import FIRST_QPN, MAX_QPN
from nic_emu.exceptions import ConnectionSetupError
from nic_emu.streams import DROP_MEMORY_ACCESS, DROP_MEMORY_BUDGET
from nic_emu.transfers import (
    MAX_REGION_BYTES,
    MemoryBudget,
    Part,
    QpnPlan,
    RepathTracker,
    ResponderQp,
    SendTransfer,
    split,
)

from .conftest import finish, make_net, start_transfer


def test_qpns_are_unique_per_source_nic_and_carry_the_mode() -> None:
    plan = QpnPlan(32)
    seen = set()
    for nic in range(32):
        for seq in (0, 1, plan.sequences - 1):
            for mode in TransportMode:
                qpn = plan.qpn(nic, seq, mode)
                assert FIRST_QPN <= qpn <= MAX_QPN
                assert QpnPlan.mode_of(qpn) is mode
                seen.add(qpn)
    assert len(seen) == 32 * 3 * 2
    with pytest.raises(ConnectionSetupError, match="restart"):
        plan.qpn(0, plan.sequences, TransportMode.MRC)
    assert QpnPlan(1).qpn(0, 0, TransportMode.MRC) == FIRST_QPN


def test_streamed_repath_events_match_the_analysis_of_the_full_log() -> None:
    net = make_net()
    t = start_transfer(net, size=4 << 20)
    tracker = RepathTracker()
    tracker.watch(t.sender)
    net.run(until_ns=20_000)
    net.fabric.set_link_state("p0-t0-0", "p0-t1-0", False)
    assert finish(t) and t.delivered
    tracker.feed(net.log.records)
    (event,) = tracker.events(origin_ns=0)  # one failed path, never revived
    failed = {e.ev for e in t.sender.evs.entries() if e.path == (0, "p0-t1-0")}
    assert event["plane"] == 0 and event["ev"] in failed and event["packets_lost"] >= 1
    assert 1 < event["evs"] <= len(failed)
    # The whole log (fault_ns=0): the tracker knows no fault time, so a packet in flight
    # when the link died is the first loss, as it should be.
    expected = repath_time(net.log.records, failed, nic="nic0", qpn=t.sender.qpn)
    assert event["repath_time_us"] == pytest.approx(expected.repath_ns / 1000)
    assert 0 < event["repath_time_us"] < 50
    tracker.close()  # the transfer is over: the per-EV maps go, the episodes stay
    assert tracker.events(origin_ns=0) == [event] and not tracker._paths


def test_repath_events_ignore_evs_that_lost_nothing() -> None:
    net = make_net()
    t = start_transfer(net, size=1 << 20, post=False)
    tracker = RepathTracker()
    tracker.watch(t.sender)
    net.cores["nic0"].set_port_state(1, False, 0)  # no traffic in flight: no loss
    tracker.feed(net.log.records)
    assert tracker.events(0) == []


def make_transfer(size: int, parts: int) -> tuple[SendTransfer, list]:
    net = make_net()
    conns = []
    transfer = SendTransfer(
        id=1,
        nic="nic0",
        to="nic2",
        mode=TransportMode.MRC,
        seed=0,
        size=size,
        mtu=net.cores["nic0"].config.mtu_payload,
        planes=net.cores["nic0"].plane_count,
        requested_ns=0,
    )
    data = bytes(range(256)) * (size // 256 + 1)
    for i in range(parts):
        sender, _ = net.connect("nic0", "nic2")
        region = net.register_memory("nic2", size)
        offset, end = size * i // parts, size * (i + 1) // parts
        net.write(sender, data[offset:end], region)
        transfer.parts.append(Part(sender, offset, end - offset, ""))
        conns.append(sender)
    assert transfer.report(0)["preparing"] and not transfer.finish_if_over(0)
    transfer.start("digest", net.now)
    return transfer, [net, *conns]


def test_the_path_timeline_counts_every_acknowledged_packet_by_its_path() -> None:
    size = 1_000_003
    transfer, (net, *conns) = make_transfer(size, 3)
    while not transfer.finish_if_over(net.now):
        net.run(until_ns=net.now + 50_000)
        for conn in conns:
            if conn.idle:
                transfer.on_completed(conn.qpn)
        transfer.sample(net.now)
    entries = transfer.report(net.now)["path_timeline"]
    packets = sum(part.packets(transfer.mtu) for part in transfer.parts)
    assert sum(e[3] for e in entries) == packets * transfer.mtu  # short last packets as full
    paths = {(e[1], e[2]) for e in entries}
    assert paths == {e.path for c in conns for e in c.evs.entries() if e.acked_packets}
    assert all(e[3] > 0 and e[3] % transfer.mtu == 0 for e in entries)


def test_per_plane_bytes_and_timeline_add_up_to_the_bytes_sent() -> None:
    size = 1_000_003  # short last packets
    transfer, (net, *conns) = make_transfer(size, 3)
    step = 50_000
    while not transfer.finish_if_over(net.now):
        net.run(until_ns=net.now + step)
        for conn in conns:
            if conn.idle:  # what the process does on WriteCompleted, before sampling
                transfer.on_completed(conn.qpn)
        transfer.sample(net.now)
        assert transfer.bytes_acked() <= size
    report = transfer.report(net.now)
    assert report["bytes_acked"] == report["bytes_delivered_intact"] == size
    assert sum(report["per_plane_bytes"].values()) == size
    assert sum(entry[2] for entry in report["timeline"]) == size
    assert all(entry[2] > 0 for entry in report["timeline"])
    assert len({entry[1] for entry in report["timeline"]}) == transfer.planes
    assert report["done"] and report["progress"] == 1.0


def test_the_report_counts_each_parts_timeouts_nacks_and_retransmissions() -> None:
    transfer, (net, *conns) = make_transfer(10_000, 2)
    for n, conn in enumerate(conns, 1):
        conn.counters["losses_timeout"] += n
        conn.counters["rx_nack"] += 10 * n
        conn.counters["tx_rtx"] += 100 * n
    report = transfer.report(net.now)
    assert (report["timeouts"], report["nacks"], report["retransmissions"]) == (3, 30, 300)


def test_a_failed_part_fails_the_transfer() -> None:
    transfer, (net, *conns) = make_transfer(10_000, 2)
    transfer.on_failed(conns[0].qpn, "connection QPN 0x100 failed (max_retries): gone")
    assert not transfer.finish_if_over(net.now)  # the other part is still running
    transfer.on_completed(conns[1].qpn)
    assert transfer.finish_if_over(net.now)
    assert transfer.report(net.now)["failed"].startswith("connection QPN 0x100 failed")


def test_split_is_even_and_covers_the_size() -> None:
    assert split(10, 3) == [(0, 3), (3, 3), (6, 4)]
    assert sum(length for _, length in split(1_000_003, 7)) == 1_000_003


def test_setup_failure_finishes_the_transfer() -> None:
    transfer, (net, *_) = make_transfer(10_000, 1)
    transfer.fail_setup("cannot set the transfer up: no QPNs", net.now)
    assert transfer.done and transfer.report(net.now)["failed"].startswith("cannot set")


def test_responder_digests_in_psn_order_and_holds_only_what_is_beyond_a_gap() -> None:
    net = make_net()
    _, receiver = net.connect("nic0", "nic2")
    budget = MemoryBudget(limit=1 << 20)
    responder = ResponderQp(budget, receiver, "nic0")
    sink = responder.sink
    pieces = [bytes([i]) * 4096 for i in range(4)]
    for psn in (2, 1):  # beyond the gap at 0: held, and counted in the budget
        assert sink.admit(psn, 0x123, psn * 4096, 4096) is None
        sink.place(psn, pieces[psn], False)
    assert sink.held_bytes == budget.used == 8192 and responder.message(5) is None
    assert sink.admit(0, 0x123, 0, 4096) is None
    sink.place(0, pieces[0], False)  # fills the gap: 0, 1, 2 are digested, nothing held
    assert sink.held_bytes == budget.used == 0 and sink.next_psn == 3
    sink.place(3, pieces[3], True)
    message = responder.message(7)
    assert message is not None and message.length == 4 * 4096
    assert message.sha256 == hashlib.sha256(b"".join(pieces)).hexdigest()
    assert message.as_dict() == {
        "from": "nic0",
        "qpn": receiver.qpn,
        "bytes": 4 * 4096,
        "sha256": message.sha256,
        "complete": True,
    }
    assert responder.incomplete_bytes() == 0 and responder.message(8) is None
    assert sink.peak_held_bytes == 8192


def test_responder_refuses_another_rkey_memory_past_its_range_and_the_budget() -> None:
    net = make_net()
    _, receiver = net.connect("nic0", "nic2")
    budget = MemoryBudget(limit=6000)
    responder = ResponderQp(budget, receiver, "nic0")
    sink = responder.sink
    assert sink.admit(0, 0x123, 0, 100) is None  # the first packet fixes the R_Key
    assert sink.admit(1, 0x999, 100, 100) == DROP_MEMORY_ACCESS  # one stream per QP
    assert sink.admit(1, 0x123, MAX_REGION_BYTES, 1) == DROP_MEMORY_ACCESS
    assert sink.admit(5, 0x123, 5 * 4096, 4096) is None
    sink.place(5, b"x" * 4096, False)
    assert sink.admit(6, 0x123, 6 * 4096, 4096) == DROP_MEMORY_BUDGET  # 8192 > 6000
    assert sink.admit(0, 0x123, 0, 4096) is None  # in order: needs no memory
    assert budget.refused == 1 and budget.used == 4096
    responder.release()
    assert budget.used == 0 and responder.retired and not sink.held
