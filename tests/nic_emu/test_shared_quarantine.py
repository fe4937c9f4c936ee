"""Shared quarantines (``NicCore.path_suspect``, docs/nic-emu.md section 3): a path a
connection holds out on its own evidence (an overdue or lost packet, nothing sent on the
path since delivered) is held in the NIC's other connections through the same T1 unless
one of them delivered a later packet on it; the first later delivery or probe answer on
it, in any of them, ends the holds the NIC shared. On ``small``,
nic0 sits under T0 0; nic2 and nic3 under T0 1, nic4 under T0 2, nic6 under T0 3, nic1
beside nic0."""

from __future__ import annotations

from nic_emu.event_log import PATH_CLEARED, PATH_SUSPECT

from .conftest import PATH, core_with_peers

US = 1_000


def _suspect(conn: object, sent_ns: int, now: int, path: object = PATH) -> bool:
    """``conn`` finds a packet it sent on ``path`` at ``sent_ns`` overdue."""
    e = conn.evs.by_path[path][0]  # type: ignore[attr-defined]
    return conn.probes.hold_path(e, 1, sent_ns, "overdue", now)  # type: ignore[attr-defined]


def _held(conn: object, path: object = PATH) -> bool:
    return path in conn.evs.quarantined  # type: ignore[attr-defined]


def test_a_suspect_no_connection_refutes_is_held_in_every_connection_through_the_t1() -> None:
    core, conns = core_with_peers()
    assert _suspect(conns["nic2"], 10 * US, 20 * US)
    assert all(_held(conns[p]) for p in ("nic2", "nic3", "nic4", "nic6"))
    assert PATH not in conns["nic1"].evs.by_path  # inside T0 0: not through the T1
    shared = [r for r in core.log.of_kind(PATH_SUSPECT) if r.detail["why"] == "shared"]
    assert sorted(r.qpn for r in shared) == [conns[p].qpn for p in ("nic3", "nic4", "nic6")]
    assert all(r.detail["sent_ns"] == 10 * US for r in shared)  # the suspect packet's
    assert core.counters["paths_held"] == 3
    # a hold is not a retirement: the EVs keep their state; the plane's other T1 and the
    # other planes are not held
    assert all(c.evs.bad_count == 0 for c in conns.values())
    assert not _held(conns["nic4"], (0, "p0-t1-0")) and not _held(conns["nic2"], (1, "p1-t1-1"))


def test_a_suspect_refuted_by_a_later_delivery_on_the_path_is_not_shared() -> None:
    core, conns = core_with_peers()
    # nic4's connection had a packet sent on the path after the suspect one delivered:
    # the path's uplink and T1 work (its link to the suspect's far T0 may not).
    conns["nic4"].evs.by_path[PATH][1].acked_sent_ns = 11 * US
    assert _suspect(conns["nic2"], 10 * US, 20 * US)  # held where it was seen
    assert not any(_held(conns[p]) for p in ("nic3", "nic4", "nic6"))
    assert core.counters["paths_held"] == 0
    # a delivery of a packet sent before the suspect one refutes nothing
    assert _suspect(conns["nic6"], 12 * US, 21 * US)
    assert all(_held(conns[p]) for p in ("nic3", "nic4"))


def test_a_wrongly_held_path_comes_back_for_all_at_the_first_later_delivery() -> None:
    core, conns = core_with_peers()
    _suspect(conns["nic2"], 10 * US, 20 * US)
    nic3, nic4, nic6 = conns["nic3"], conns["nic4"], conns["nic6"]
    # nic3 had a packet in flight on the path sent after the suspect one: it arrives, and
    # the holds the NIC shared end with it (not nic2's own, for a packet still missing)
    nic3.evs.by_path[PATH][2].acked_sent_ns = 15 * US
    nic3.probes.review_quarantine(25 * US, core.out)
    assert not _held(nic3) and not _held(nic4) and not _held(nic6)
    assert _held(conns["nic2"])
    cleared = {(r.qpn, r.detail["by"]) for r in core.log.of_kind(PATH_CLEARED)}
    assert cleared == {(nic3.qpn, "delivery"), (nic4.qpn, "shared"), (nic6.qpn, "shared")}


def test_a_shared_hold_for_a_later_packet_outlives_an_older_delivery() -> None:
    core, conns = core_with_peers()
    _suspect(conns["nic2"], 10 * US, 20 * US)
    nic3, nic6 = conns["nic3"], conns["nic6"]
    core.path_cleared(nic3.qpn, PATH, 9 * US, 26 * US)  # sent before the suspect packet
    assert _held(nic6)
    core.path_cleared(nic3.qpn, PATH, 10 * US, 27 * US)
    assert not _held(nic6)


def test_a_shared_hold_nothing_clears_is_probed_and_its_answer_clears_all() -> None:
    _, conns = core_with_peers()
    _suspect(conns["nic2"], 10 * US, 20 * US)
    nic3, nic6 = conns["nic3"], conns["nic6"]
    out = nic6.on_timer(nic6.probes.next_ns)  # a quarantine window later: probed
    assert out and _held(nic6)
    (e,) = [e for e in nic6.evs.by_path[PATH] if e.probe_seq >= 0]
    nic6.on_probe_answer(e, 40 * US)
    assert not _held(nic6) and not _held(nic3)
    assert all(e.state.name == "GOOD" for e in nic6.evs.by_path[PATH])


def test_a_shared_hold_nothing_answers_retires_the_path() -> None:
    _, conns = core_with_peers()
    _suspect(conns["nic2"], 10 * US, 20 * US)
    nic6 = conns["nic6"]
    nic6.on_timer(nic6.probes.next_ns)  # probed
    nic6.on_timer(nic6.probes.next_ns)  # a probe interval later, unanswered: retired
    assert not _held(nic6)
    assert all(e.state.name == "ASSUMED_BAD" for e in nic6.evs.by_path[PATH] if e.active)


def test_without_path_verdicts_nothing_is_shared() -> None:
    core, conns = core_with_peers(path_verdicts=False)
    _suspect(conns["nic2"], 10 * US, 20 * US)
    _suspect(conns["nic4"], 12 * US, 22 * US)
    assert _held(conns["nic2"]) and _held(conns["nic4"])
    assert not _held(conns["nic3"]) and not _held(conns["nic6"])
    assert core.counters["paths_held"] == 0


def test_a_path_inside_the_t0_is_not_shared() -> None:
    core, conns = core_with_peers()
    path = next(iter(conns["nic1"].evs.by_path))
    assert path[1] is None
    assert _suspect(conns["nic1"], 10 * US, 20 * US, path)
    assert core.counters["paths_held"] == 0
