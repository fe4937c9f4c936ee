"""Path quarantine (``NicConfig.path_quarantine``, the process default): a path whose
packet is overdue is held out of the rotation at once and probed; delivery or the probe's
answer clears it, silence for a probe interval retires it. Virtual time throughout."""

from __future__ import annotations

from dataclasses import replace

from nic_emu.config import NicConfig
from nic_emu.core import NicCore
from nic_emu.ev_set import ASSUMED_BAD, GOOD
from nic_emu.event_log import EV_STATE, LOSS, PATH_CLEARED, PATH_SUSPECT, PROBE_TX, TX
from nic_emu.serve_config import transport_config
from topologies import AddressPlan, load

from .conftest import finish, make_net, start_transfer
from .test_ev_set import make_set

MS = 1_000_000


def test_a_quarantined_path_is_not_picked_until_cleared() -> None:
    evs = make_set(planes=2, active_per_plane=8, t1s=2)
    held = (0, 0)
    assert evs.quarantine(held, sent_ns=5, now=10)
    assert not evs.quarantine(held, sent_ns=7, now=11)  # already held: the first one stays
    assert evs.quarantined[held] == (5, 10)
    picked = {evs.pick(20).path for _ in range(64)}
    assert held not in picked and len(picked) == 3
    assert all(e.state is GOOD for e in evs.by_path[held])  # held, not retired
    assert evs.clear_quarantine(held) == (5, 10)
    assert held in {evs.pick(30).path for _ in range(64)}


def test_with_every_path_quarantined_a_suspect_path_still_carries_data() -> None:
    evs = make_set(planes=1, active_per_plane=4, t1s=2)
    for path in list(evs.by_path):
        evs.quarantine(path, 0, 0)
    assert evs.pick(1) is not None


def test_retiring_or_losing_the_plane_ends_the_quarantine() -> None:
    evs = make_set(planes=2, active_per_plane=8, t1s=2)
    evs.quarantine((0, 0), 0, 0)
    evs.quarantine((1, 1), 0, 0)
    evs.retire_path((0, 0), "quarantine", 5)
    assert (0, 0) not in evs.quarantined
    assert all(e.state is ASSUMED_BAD for e in evs.by_path[(0, 0)] if e.active)
    assert not evs.quarantine((0, 0), 0, 6)  # nothing usable left to hold out
    evs.plane_down(1, 7, remote=False)
    assert evs.quarantined == {}


def _conn(config: NicConfig):
    core = NicCore("nic0", AddressPlan(load("tiny")), config)
    conn = core.create_connection("nic3", qpn=0x100, peer_qpn=0x100)
    return core, conn


def test_a_held_path_is_probed_a_window_later_and_retired_if_unanswered() -> None:
    config = replace(NicConfig(), path_quarantine=True)
    core, conn = _conn(config)
    e = conn.evs.ring[0]
    conn.probes.hold_path(e, psn=1, sent_ns=0, why="overdue", now=0)
    assert not core.log.of_kind(PROBE_TX)  # delivery usually clears it before a probe
    due = conn.timers.hold_delay()
    assert conn.probes.next_ns == due
    core.out.extend(conn.on_timer(due))
    (probe,) = core.log.of_kind(PROBE_TX)
    assert probe.ev in {x.ev for x in conn.evs.by_path[e.path]}
    core.out.extend(conn.on_timer(conn.probes.next_ns))  # a probe interval later: retired
    assert e.path not in conn.evs.quarantined and not conn.probes.held
    retired = [r for r in core.log.of_kind(EV_STATE) if r.detail["reason"] == "path_quarantine"]
    assert retired and all(e.state is ASSUMED_BAD for e in conn.evs.by_path[e.path] if e.active)


def test_a_probe_answer_clears_the_quarantine() -> None:
    core, conn = _conn(replace(NicConfig(), path_quarantine=True))
    e = conn.evs.ring[0]
    conn.probes.hold_path(e, psn=1, sent_ns=0, why="overdue", now=0)
    core.out.extend(conn.on_timer(conn.timers.hold_delay()))
    (probe,) = core.log.of_kind(PROBE_TX)
    conn.on_probe_answer(conn.evs.by_ev[probe.ev], 10)
    assert e.path not in conn.evs.quarantined and not conn.probes.held
    (cleared,) = core.log.of_kind(PATH_CLEARED)
    assert cleared.detail["by"] == "probe"


def test_a_probe_answer_on_a_held_path_resends_the_packet_held_overdue_at_once() -> None:
    # loaded-random-loss, seed 1, before this: the packet waited for the retransmission
    # timeout (31 us after the probe's answer), and with it the whole load's goodput.
    core, conn = _conn(replace(NicConfig(), path_quarantine=True, trace_packets=True))
    conn.post_write(b"x" * 16384, 0x1000, 7, 0)
    core.frames_to_send(0)
    sent = [r for r in core.log.of_kind(TX) if r.qpn == 0x100]
    assert sent
    first = sent[0]
    e = conn.evs.by_ev[first.ev]
    conn.probes.hold_path(e, psn=first.psn, sent_ns=first.t_ns, why="overdue", now=9_000)
    core.out.extend(conn.on_timer(9_000 + conn.timers.hold_delay()))
    (probe,) = core.log.of_kind(PROBE_TX)
    conn.on_probe_answer(conn.evs.by_ev[probe.ev], probe.t_ns + 12_000)
    lost = {r.psn for r in core.log.of_kind(LOSS) if r.detail["reason"] == "overtaken"}
    on_path = {r.psn for r in sent if conn.evs.by_ev[r.ev].path == e.path}
    assert first.psn in lost and lost == on_path
    assert conn.send.rtx_heap and e.path not in conn.evs.quarantined


def test_a_cut_path_is_held_out_at_its_first_overdue_packet_then_retired() -> None:
    net = make_net("tiny", path_quarantine=True)
    t = start_transfer(net, "nic0", "nic3", size=4 << 20)
    net.run(until_ns=20_000)
    net.fabric.set_link_state("p0-t0-0", "p0-t1-0", False)
    assert finish(t) and t.delivered
    cut = {e.ev for e in t.sender.evs.entries() if e.path == (0, "p0-t1-0")}
    suspects = [r for r in net.log.of_kind(PATH_SUSPECT) if r.ev in cut and r.t_ns > 20_000]
    assert suspects, "the cut path was never quarantined"
    held_at = suspects[0].t_ns
    # No data after the quarantine began until the path was retired (the quarantine
    # ended in a retirement, not a clearance).
    retired = [
        r
        for r in net.log.of_kind(EV_STATE)
        if r.nic == "nic0" and r.ev in cut and r.detail["new"] == "ASSUMED_BAD"
    ]
    assert retired and retired[-1].t_ns >= held_at
    sent = [r for r in net.log.of_kind(TX) if r.nic == "nic0" and r.ev in cut]
    assert not [r for r in sent if held_at < r.t_ns <= retired[-1].t_ns]
    cleared = [r for r in net.log.of_kind(PATH_CLEARED) if r.ev in cut and r.t_ns > held_at]
    assert not cleared or cleared[0].t_ns > retired[-1].t_ns


def test_a_quarantined_path_that_delivers_a_later_packet_is_cleared() -> None:
    core, conn = _conn(replace(NicConfig(), path_quarantine=True))
    e = conn.evs.ring[0]
    e.acked_sent_ns = 90
    conn.probes.hold_path(e, psn=7, sent_ns=100, why="overdue", now=150)
    (suspect,) = core.log.of_kind(PATH_SUSPECT)
    assert suspect.detail == {"sent_ns": 100, "why": "overdue"} and suspect.psn == 7
    conn.probes.review_quarantine(160, core.out)  # nothing sent at or after 100 delivered yet: held
    assert e.path in conn.evs.quarantined
    conn.evs.by_path[e.path][-1].acked_sent_ns = 100  # any EV of the path delivered
    conn.probes.review_quarantine(170, core.out)
    assert e.path not in conn.evs.quarantined
    (cleared,) = core.log.of_kind(PATH_CLEARED)
    assert cleared.detail == {"by": "delivery", "suspect_ns": 20} and not conn.probes.held
    assert conn.counters["path_suspects"] == conn.counters["path_suspects_cleared"] == 1
    # A path that already delivered something sent after the packet is not held out.
    conn.probes.hold_path(e, psn=8, sent_ns=99, why="overdue", now=180)
    assert e.path not in conn.evs.quarantined


def test_both_defaults_quarantine_the_process_with_its_own_window() -> None:
    process, virtual = transport_config({}), NicConfig()
    assert process.path_quarantine and virtual.path_quarantine
    assert process.quarantine_window_ns == process.reorder_window_ns  # 1 ms: as before
    # the virtual NIC's test is quicker than RACK's: fewer later packets, a window no
    # longer than RACK's floor and without its queueing terms
    assert virtual.quarantine_threshold_pkts < virtual.reorder_threshold_pkts
    assert virtual.quarantine_window_ns <= virtual.reorder_window_ns
