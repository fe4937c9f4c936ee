"""Path verdicts (``NicConfig.path_verdicts``, docs/nic-emu.md section 3): a path a
connection retires on its own evidence takes its in-flight packets with it (resent at
once), and the NIC retires it in the connections whose paths cross the same failed
element. On ``small``, nic0 sits under T0 0; nic2 and nic3 under T0 1, nic4 under T0 2,
nic6 under T0 3, nic1 beside nic0."""

from __future__ import annotations

import pytest

from nic_emu.config import NicConfig
from nic_emu.ev_set import ASSUMED_BAD, GOOD
from nic_emu.event_log import EV_STATE, LOSS
from nic_emu.exceptions import ConfigError
from nic_emu.testing import SimNetwork
from topologies import load
from vfabric.eventlist import EventList

from .conftest import PATH, TEST_CONFIG, Transfer, core_with_peers, payload


def _retired(conn: object, path: object = PATH) -> bool:
    entries = conn.evs.by_path[path]  # type: ignore[attr-defined]
    return all(e.state is ASSUMED_BAD for e in entries)


def _usable(conn: object, path: object = PATH) -> bool:
    return all(e.state is GOOD for e in conn.evs.by_path[path])  # type: ignore[attr-defined]


def test_a_path_retired_toward_one_far_t0_is_retired_for_its_other_peers_only() -> None:
    core, conns = core_with_peers()
    conns["nic2"].evs.retire_path(PATH, "reorder", 1_000)
    assert _retired(conns["nic2"]) and _retired(conns["nic3"])  # the same far T0: shared
    assert _usable(conns["nic4"])  # another far T0: its T1 -> T0 link may be fine
    assert (0, None) in conns["nic1"].evs.by_path and PATH not in conns["nic1"].evs.by_path
    shared = [r for r in core.log.of_kind(EV_STATE) if r.detail["reason"] == "path_shared"]
    assert shared and {r.qpn for r in shared} == {conns["nic3"].qpn}
    assert core.counters["paths_shared"] == 1 and conns["nic3"].counters["paths_shared"] == 1


def test_a_path_failed_toward_two_far_t0s_is_retired_for_every_connection_through_it() -> None:
    _, conns = core_with_peers()
    conns["nic2"].evs.retire_path(PATH, "reorder", 1_000)
    conns["nic4"].evs.retire_path(PATH, "timeout", 2_000)
    assert all(_retired(conns[p]) for p in ("nic2", "nic3", "nic4", "nic6"))
    # the other T1 of the plane, and the other planes, are untouched
    assert _usable(conns["nic4"], (0, "p0-t1-0")) and _usable(conns["nic2"], (1, "p1-t1-1"))


def _first_loss(conn: object, path: object, now: int) -> None:
    """A loss on an EV of ``path`` that nothing delivered since (a first loss: the EV goes,
    the path stays)."""
    e = conn.evs.by_path[path][0]  # type: ignore[attr-defined]
    conn.evs.mark_bad(e, "reorder", now, sent_ns=now - 1)  # type: ignore[attr-defined]


def test_first_losses_toward_two_far_t0s_retire_the_path_for_every_connection() -> None:
    core, conns = core_with_peers()
    _first_loss(conns["nic2"], PATH, 1_000)
    assert _usable(conns["nic3"]) and not _retired(conns["nic2"])  # one loss: the EV only
    _first_loss(conns["nic4"], PATH, 2_000)
    assert all(_retired(conns[p]) for p in ("nic2", "nic3", "nic4", "nic6"))
    reasons = {r.detail["reason"] for r in core.log.of_kind(EV_STATE)}
    assert "path_shared" in reasons and "path_reorder" not in reasons


def test_first_losses_toward_one_far_t0_retire_nothing_more() -> None:
    core, conns = core_with_peers()
    _first_loss(conns["nic2"], PATH, 1_000)
    _first_loss(conns["nic3"], PATH, 2_000)
    assert _usable(conns["nic4"]) and core.counters["paths_shared"] == 0


def test_a_verdict_older_than_a_probe_revival_does_not_count_toward_two_far_t0s() -> None:
    core, conns = core_with_peers()
    cfg = core.config
    conns["nic2"].evs.retire_path(PATH, "reorder", 1_000)
    later = 1_000 + cfg.probe_interval_ns * cfg.probe_success_threshold + 1
    conns["nic4"].evs.retire_path(PATH, "timeout", later)  # only nic4's verdict is recent
    assert _usable(conns["nic6"])  # one recent far T0: not yet the T1 or the uplink


def test_a_shared_verdict_is_not_shared_again() -> None:
    core, conns = core_with_peers()
    conns["nic2"].evs.retire_path(PATH, "reorder", 1_000)
    # nic3 retired it on nic2's verdict: that does not make a second far T0
    assert _usable(conns["nic4"]) and core.counters["paths_shared"] == 1


def test_without_path_verdicts_nothing_is_shared() -> None:
    core, conns = core_with_peers(path_verdicts=False)
    conns["nic2"].evs.retire_path(PATH, "reorder", 1_000)
    conns["nic4"].evs.retire_path(PATH, "timeout", 2_000)
    assert _usable(conns["nic3"]) and core.counters["paths_shared"] == 0


def test_path_verdicts_must_be_a_bool() -> None:
    with pytest.raises(ConfigError, match="path_verdicts must be true or false"):
        NicConfig(path_verdicts=1)  # type: ignore[arg-type]


def test_a_retired_path_takes_its_in_flight_packets_with_it() -> None:
    """nic0 -> nic2 mid-transfer: the packets in flight on the retired path are declared
    lost (reason ``path``) and resent elsewhere, in this connection and in nic3's."""
    net = SimNetwork(load("small"), EventList(), config=TEST_CONFIG, seed=3)
    sender, receiver = net.connect("nic0", "nic2")
    data = payload(1 << 20, 3)
    region = net.register_memory("nic2", len(data))
    t = Transfer(net, sender, receiver, region, data)
    t.post()
    net.run(20_000)
    on_path = sender.send.in_flight_on_path(PATH)
    assert on_path, "the test needs packets in flight on the path"
    sender.evs.retire_path(PATH, "reorder", net.events.now)
    assert not sender.send.in_flight_on_path(PATH)
    lost = [r for r in net.log.of_kind(LOSS) if r.detail["reason"] == "path"]
    assert {r.psn for r in lost} >= {p.psn for p in on_path}
    assert sender.counters["losses_path"] == len(lost)
    assert net.run_until_idle([sender], limit_ns=50_000_000)
    assert t.delivered and not net.failures("nic0")


def test_a_dead_t1_under_many_connections_is_shared_and_everything_is_delivered() -> None:
    """A T1 dies under connections from nic0 to three far T0s: some connections retire
    its path on the NIC's verdict, before their own losses; every byte arrives."""
    net = SimNetwork(load("small"), EventList(), config=TEST_CONFIG, seed=2)
    transfers = []
    for peer in ("nic2", "nic3", "nic4", "nic5", "nic6", "nic7"):
        sender, receiver = net.connect("nic0", peer)
        data = payload(256 << 10, len(transfers))
        region = net.register_memory(peer, len(data))
        transfers.append(Transfer(net, sender, receiver, region, data))
    for t in transfers:
        t.post()
    net.events.at(10_000, lambda _: net.fabric.set_switch_state("p0-t1-1", False))
    assert net.run_until_idle([t.sender for t in transfers], limit_ns=50_000_000)
    assert all(t.delivered for t in transfers) and not net.failures("nic0")
    shared = [r for r in net.log.of_kind(EV_STATE) if r.detail["reason"] == "path_shared"]
    assert shared and net.cores["nic0"].counters["paths_shared"] >= 1
