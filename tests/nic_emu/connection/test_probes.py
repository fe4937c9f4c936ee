"""nic_emu.connection.probes: EV probes and quarantine probes on their own, with an EV
set, RTT timers and a bare NicCore as the host (which routes the answers)."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from mrc_wire import EV_PROBE_QPN, Probe, decode
from nic_emu import event_log as ev_kinds
from nic_emu.config import NicConfig
from nic_emu.connection.probes import PathProbes
from nic_emu.connection.records import ConnectionCounters, ConnectionLog
from nic_emu.connection.rtt import RttTimers
from nic_emu.connection.templates import probe_templates
from nic_emu.core import NicCore
from nic_emu.ev_set import ASSUMED_BAD, GOOD, EvEntry, EvSet
from topologies import AddressPlan, load

from .kit import CFG as KIT_CFG
from .kit import make_parts, post, transmit

CFG = replace(NicConfig(), probes_per_path=1, probe_success_threshold=2)


def _probes() -> tuple[NicCore, EvSet, PathProbes, dict[str, int]]:
    plan = AddressPlan(load("tiny"))
    core = NicCore("nic0", plan, CFG)
    entries = []
    for j in range(4):
        ev = plan.make_ev(0, j % 2, j)
        plane, path, wire = core.ev_route("nic3", ev)
        e = EvEntry(ev=ev, plane=plane, path=path)
        e.wire = wire
        entries.append(e)
    evs = EvSet({0: entries}, {}, min_active_per_plane=0, skip_ns=1, rng=random.Random(1))
    peer = [plan.nic_address("nic3", p).packed for p in range(core.plane_count)]
    counters = ConnectionCounters()
    probes = PathProbes(
        core,
        CFG,
        evs,
        RttTimers(CFG, 0, adaptive=False),
        probe_templates(core, peer),
        peer_qpn=0x300,
        counters=counters,
        log=ConnectionLog(core.log, "nic0", 0x100),
    )
    return core, evs, probes, counters


def test_arm_schedules_one_round_a_probe_interval_later() -> None:
    _, _, probes, _ = _probes()
    probes.arm(100)
    probes.arm(200)  # already due: unchanged
    assert probes.next_ns == 100 + CFG.probe_interval_ns


def test_a_round_probes_retired_evs_and_an_answer_revives_them() -> None:
    core, evs, probes, counters = _probes()
    e = evs.ring[0]
    evs.mark_bad(e, "timeout", 0)
    assert e.state is ASSUMED_BAD
    probes.arm(0)
    interval = CFG.probe_interval_ns
    out: list[tuple[int, bytes]] = []
    probes.tick(10, out)  # not due yet: nothing
    assert not out and probes.next_ns == interval
    probes.tick(interval, out)
    (frame,) = [decode(f) for _, f in out]
    assert isinstance(frame, Probe) and frame.dqpn == EV_PROBE_QPN and frame.probe_ev == e.ev
    assert e.probe_seq == frame.probe_id and counters["tx_probe"] == 1
    assert probes.next_ns == 2 * interval
    for t in (20, 30):
        probes.on_answer(e, t)
        e.probe_seq = -1
    assert e.state is GOOD and probes.heard
    assert [r.detail["revived"] for r in core.log.of_kind(ev_kinds.PROBE_OK)] == [False, True]


def test_unanswered_rounds_back_off_and_stop_forgets_the_probes() -> None:
    core, evs, probes, _ = _probes()
    e = evs.ring[0]
    evs.mark_bad(e, "timeout", 0)
    probes.arm(0)
    out: list[tuple[int, bytes]] = []
    probes.tick(CFG.probe_interval_ns, out)
    probes.tick(2 * CFG.probe_interval_ns, out)  # the first went unanswered
    assert probes.timers.probe_misses == 1
    assert core.log.of_kind(ev_kinds.PROBE_LOST)
    probes.stop()
    assert probes.next_ns is None and all(x.probe_seq < 0 for x in evs.entries())
    assert core._probes == {}


def test_a_tail_probe_goes_to_the_peer_qp_with_the_oldest_psn() -> None:
    _, evs, probes, counters = _probes()
    plane, sent = probes.send_tail_probe(evs.ring[1], (1 << 24) + 5, 40)
    assert plane == evs.ring[1].plane
    frame = decode(sent)
    assert isinstance(frame, Probe) and (frame.dqpn, frame.psn, frame.probe_id) == (0x300, 5, 0)
    assert counters["tx_tail_probe"] == 1


def test_a_held_path_is_cleared_by_a_later_delivery() -> None:
    _, evs, probes, counters = _probes()
    e = evs.ring[0]
    probes.hold_path(e, psn=3, sent_ns=100, why="overdue", now=150)
    assert e.path in evs.quarantined and probes.next_ns == 150 + probes.timers.hold_delay()
    e.acked_sent_ns = 100
    probes.review_quarantine(160, [])
    assert e.path not in evs.quarantined and not probes.held
    assert counters["path_suspects"] == counters["path_suspects_cleared"] == 1


@pytest.mark.parametrize("general", [False, True])
def test_an_overdue_packet_holds_its_path_and_plain_reordering_does_not(general: bool) -> None:
    """The rule with a 3-packet, 4 us test (the defaults are larger: docs/nic-emu.md);
    its limits on C integers (the native build's), or, with the threshold and the
    window's floor floats of the same values, by the Python expressions: the same holds."""
    parts = make_parts(
        replace(
            KIT_CFG, path_quarantine=True, quarantine_threshold_pkts=3, quarantine_window_ns=4_000
        )
    )
    if general:
        parts.probes.overdue_threshold = 3.0
        parts.timers.quarantine_floor_ns = 4_000.0
    post(parts, 6)
    paths = list(parts.evs.by_path)
    first = parts.evs.by_path[paths[0]][0]
    other = parts.evs.by_path[paths[1]][0]
    lost = transmit(parts, 0, first)
    later = [transmit(parts, 1_000 * i, other) for i in range(1, 6)]
    window = parts.timers.hold_delay()
    assert window == parts.cfg.quarantine_window_ns == 4_000
    # 3 later sends acknowledged, the latest sent 3 us after: reordering, not a hold
    for pkt in later[:3]:
        parts.send.ack(pkt.psn, 10_000)
    parts.probes.quarantine_overdue(parts.send, 20_000)
    assert not parts.evs.quarantined
    # one sent a quarantine window after it acknowledged: the path is held, not retired
    parts.send.ack(later[3].psn, 10_000)
    parts.probes.quarantine_overdue(parts.send, 21_000)
    assert parts.evs.quarantined == {first.path: (lost.sent_ns, 21_000)}
    assert first.state is GOOD and parts.counters["path_suspects"] == 1
    (suspect,) = parts.core.log.of_kind(ev_kinds.PATH_SUSPECT)
    assert suspect.detail == {"sent_ns": 0, "why": "overdue"} and suspect.psn == lost.psn


def test_a_held_path_s_deadline_does_not_bring_the_probe_round_forward() -> None:
    _, evs, probes, counters = _probes()
    bad, held = evs.ring[0], next(e for e in evs.ring if e.path != evs.ring[0].path)
    evs.mark_bad(bad, "timeout", 0)
    probes.arm(0)
    probes.hold_path(held, psn=1, sent_ns=0, why="overdue", now=100)
    due = 100 + probes.timers.hold_delay()
    assert probes.next_ns == due < probes.round_ns == CFG.probe_interval_ns
    out: list[tuple[int, bytes]] = []
    probes.tick(due, out)  # the held path's probe only: the round keeps its interval
    assert [decode(f).probe_ev for _, f in out] == [held.ev] and counters["tx_probe"] == 1
    assert probes.next_ns == CFG.probe_interval_ns
