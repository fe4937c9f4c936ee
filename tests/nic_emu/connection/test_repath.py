"""nic_emu.connection.repath: the EV set a connection builds, and repath on its own,
listening to it. The NIC (RepathHost) and the deadlines (PeerSilence) are recording
doubles; the queue pair is reached only through QpStatus."""

from __future__ import annotations

from dataclasses import replace

from nic_emu import event_log as ev_kinds
from nic_emu.config import NicConfig
from nic_emu.connection.common import QpState
from nic_emu.connection.repath import SHARED, Repath
from nic_emu.ev_set import ASSUMED_BAD, GOOD
from nic_emu.sender import IN_FLIGHT, LOST

from .kit import CFG, QPN, Parts, make_parts, post, transmit


class Host:
    """RepathHost: the verdicts the NIC is told of."""

    def __init__(self) -> None:
        self.verdicts: list[tuple[int, object, int, bool]] = []

    def path_failed(self, qpn: int, path: object, now: int, *, retired: bool) -> None:
        self.verdicts.append((qpn, path, now, retired))


class Silence:
    """PeerSilence: when the peer answered."""

    def __init__(self) -> None:
        self.answers: list[int] = []

    def peer_answered(self, now: int) -> None:
        self.answers.append(now)


def _repath(cfg: NicConfig = CFG, *, mrc: bool = True) -> tuple[Parts, Repath, Host, Silence]:
    parts = make_parts(cfg, mrc=mrc)
    host, silence = Host(), Silence()
    repath = Repath(
        host,
        parts.qp,
        parts.cfg,
        parts.evs,
        parts.send,
        parts.probes,
        parts.losses,
        silence,
        mrc=mrc,
        counters=parts.counters,
        log=parts.log,
    )
    return parts, repath, host, silence


def test_an_mrc_set_splits_its_evs_over_the_planes_and_a_roce_qp_has_one() -> None:
    parts = make_parts()
    assert len(parts.evs.ring) == CFG.evs_per_connection
    assert sorted(e.plane for e in parts.evs.ring) == [0, 0, 1, 1]
    assert sum(len(b) for b in parts.evs.backup.values()) == CFG.backup_evs_per_connection
    roce = make_parts(mrc=False)
    (only,) = roce.evs.entries()
    assert only.plane == QPN % 2 and only.active  # the NIC's QPs take its ports in turn


def test_an_ev_going_bad_is_logged_and_arms_the_probes() -> None:
    parts, _, _, _ = _repath()
    e = parts.evs.ring[0]
    parts.evs.mark_bad(e, "timeout", 100)
    (rec,) = parts.core.log.of_kind(ev_kinds.EV_STATE)
    assert (rec.ev, rec.detail["old"], rec.detail["new"]) == (e.ev, "GOOD", "ASSUMED_BAD")
    assert parts.probes.next_ns == 100 + CFG.probe_interval_ns


def test_a_retired_path_loses_what_is_in_flight_on_it_and_tells_the_nic() -> None:
    parts, _, host, _ = _repath()
    post(parts, 4)
    sent = [transmit(parts, t) for t in (0, 10, 20, 30)]
    e = sent[0].entry
    assert e is not None
    path = e.path
    parts.evs.retire_path(path, "timeout", 500)
    on_path = [p for p in sent if p.entry is not None and p.entry.path == path]
    assert on_path and all(p.state == LOST for p in on_path)
    assert all(p.state == IN_FLIGHT for p in sent if p not in on_path)
    assert parts.counters["losses_path"] == len(on_path)
    assert host.verdicts == [(QPN, path, 500, True)]


def test_a_sibling_verdict_retires_the_path_here_without_echoing_it() -> None:
    parts, repath, host, _ = _repath()
    path = parts.evs.ring[0].path
    assert repath.shared_path_failure(path, 100) == 2  # its active EV and its backup
    assert all(e.state is ASSUMED_BAD for e in parts.evs.by_path[path])
    assert parts.counters["paths_shared"] == 1 and host.verdicts == []
    assert repath.shared_path_failure(path, 200) == 0  # already retired
    assert repath.shared_path_failure(("no", "such path"), 200) == 0
    assert parts.counters["paths_shared"] == 1
    retired = parts.core.log.of_kind(ev_kinds.EV_STATE)
    assert {r.detail["reason"] for r in retired} == {"path_" + SHARED}


def test_a_first_loss_on_a_path_is_evidence_for_the_nic() -> None:
    parts, _, host, _ = _repath()
    post(parts, 1)
    pkt = transmit(parts, 0)
    assert pkt.entry is not None
    parts.evs.mark_bad(pkt.entry, "reorder", 50, sent_ns=pkt.sent_ns)
    assert host.verdicts == [(QPN, pkt.entry.path, 50, False)]


def test_without_path_verdicts_a_retired_path_waits_for_its_timeouts() -> None:
    parts, _, host, _ = _repath(replace(CFG, path_verdicts=False))
    post(parts, 1)
    pkt = transmit(parts, 0)
    assert pkt.entry is not None
    parts.evs.retire_path(pkt.entry.path, "timeout", 500)
    assert pkt.state == IN_FLIGHT and host.verdicts == []


def test_a_failed_queue_pair_neither_loses_nor_shares() -> None:
    parts, repath, host, _ = _repath()
    post(parts, 1)
    pkt = transmit(parts, 0)
    assert pkt.entry is not None
    parts.qp.state = QpState.ERROR
    parts.evs.retire_path(pkt.entry.path, "timeout", 500)
    assert pkt.state == IN_FLIGHT and host.verdicts == []
    assert repath.shared_path_failure(parts.evs.ring[1].path, 600) == 0


def test_a_port_down_loses_what_was_in_flight_on_it_and_up_again_probes() -> None:
    parts, repath, _, _ = _repath()
    post(parts, 4)
    sent = [transmit(parts, t) for t in (0, 10, 20, 30)]
    repath.plane_down(0, 100, remote=False)
    for p in sent:
        assert p.entry is not None
        assert p.state == (LOST if p.entry.plane == 0 else IN_FLIGHT)
    assert parts.counters["losses_port"] == 2
    assert all(e.state is GOOD for e in parts.evs.entries() if e.plane == 1)
    assert all(e.state is ASSUMED_BAD for e in parts.evs.entries() if e.plane == 0)
    parts.probes.next_ns = parts.probes.round_ns = None
    repath.plane_up(0, 200, remote=False)  # its EVs stay bad until probes revive them
    assert parts.probes.next_ns == 200 + CFG.probe_interval_ns


def test_a_probe_answer_restarts_the_peers_silence_and_counts_for_the_ev() -> None:
    parts, repath, _, silence = _repath()
    e = parts.evs.ring[0]
    parts.evs.mark_bad(e, "timeout", 0)
    repath.on_probe_answer(e, 300)
    assert silence.answers == [300] and parts.probes.heard
    (ok,) = parts.core.log.of_kind(ev_kinds.PROBE_OK)
    assert (ok.ev, ok.detail["successes"]) == (e.ev, 1)


def test_a_roce_qp_listens_to_state_changes_only() -> None:
    parts, _, host, _ = _repath(mrc=False)
    post(parts, 1)
    pkt = transmit(parts, 0)
    assert pkt.entry is not None
    parts.evs.retire_path(pkt.entry.path, "timeout", 500)
    assert parts.core.log.of_kind(ev_kinds.EV_STATE)  # logged, as every change
    assert pkt.state == IN_FLIGHT and host.verdicts == []  # no path verdicts
