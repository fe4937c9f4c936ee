"""Recovery and byte-exact delivery under every fault the in-memory fabric injects."""

from __future__ import annotations

from nic_emu.analysis import repath_time
from nic_emu.config import CcConfig
from nic_emu.ev_set import ASSUMED_BAD, GOOD
from nic_emu.event_log import (
    EV_FLOOR_HOLD,
    EV_STATE,
    LOSS,
    NACK_RX,
    PORT_DOWN,
    PORT_UP,
    PROBE_OK,
    TX,
)
from nic_emu.testing import SimNetwork
from nic_emu.testing.model_fabric import LinkFault

from .conftest import finish, make_net, start_transfer


def _failed_evs(net: SimNetwork, t, t1: str) -> set[int]:
    return {e.ev for e in t.sender.evs.entries() if e.path[1] == t1}


def test_one_ev_dropping_20_percent_is_retired_at_its_first_loss() -> None:
    net = make_net(probe_success_threshold=50)  # keep it retired for the whole test
    t = start_transfer(net, size=4 << 20, post=False)
    victim = t.sender.evs.ring[0]
    net.fabric.drop_ev(victim.ev, 0.2)
    t.post()
    assert finish(t) and t.delivered
    (change,) = [r for r in net.log.of_kind(EV_STATE) if r.ev == victim.ev and r.nic == "nic0"]
    losses = [r for r in net.log.of_kind(LOSS) if r.ev == victim.ev]
    assert change.detail["new"] == "ASSUMED_BAD" and change.t_ns == losses[0].t_ns
    sent_after = [r for r in net.log.of_kind(TX) if r.ev == victim.ev and r.t_ns > change.t_ns]
    assert sent_after == []
    others = [e.tx_packets for e in t.sender.evs.ring if e.ev != victim.ev]
    assert victim.tx_packets < min(others)


def test_one_dead_path_is_bypassed_within_tens_of_microseconds() -> None:
    net = make_net()
    t = start_transfer(net, size=4 << 20)
    net.run(until_ns=20_000)
    net.fabric.set_link_state("p0-t0-0", "p0-t1-0", False)
    assert finish(t) and t.delivered
    failed = _failed_evs(net, t, "p0-t1-0")
    result = repath_time(net.log, failed, fault_ns=20_000, nic="nic0")
    assert 0 < result.repath_ns < 50_000 and result.packets_lost > 0
    assert all(
        t.sender.evs.by_ev[ev].state is ASSUMED_BAD
        for ev in failed
        if t.sender.evs.by_ev[ev].tx_packets
    )
    # The plane keeps its share: its other T1 carries on with the backups.
    plane0 = [e for e in t.sender.evs.ring if e.plane == 0 and e.state is GOOD]
    assert plane0 and all(e.path[1] == "p0-t1-1" for e in plane0)


def test_one_dead_plane_is_bypassed() -> None:
    net = make_net()
    t = start_transfer(net, size=2 << 20, post=False)
    net.fabric.fail_plane(1)
    t.post()
    assert finish(t) and t.delivered
    plane1 = [e for e in t.sender.evs.entries() if e.plane == 1 and e.tx_packets]
    assert plane1 and all(e.state is ASSUMED_BAD for e in plane1)
    assert t.sender.state.value == "ready"


def test_floor_keeps_ev_min_active_evs_on_a_dead_plane() -> None:
    net = make_net(ev_min_active=1)
    t = start_transfer(net, size=2 << 20, post=False)
    net.fabric.fail_plane(1)
    t.post()
    assert finish(t) and t.delivered
    usable = [e for e in t.sender.evs.ring if e.plane == 1 and e.state is GOOD]
    assert len(usable) == 1
    assert any(r.ev == usable[0].ev for r in net.log.of_kind(EV_FLOOR_HOLD))


def test_dead_nic_ports_of_a_plane_are_avoided_at_both_ends() -> None:
    net = make_net()
    t = start_transfer(net, size=2 << 20, post=False)
    net.fabric.fail_plane(2, ports=True)
    t.post()
    assert finish(t) and t.delivered
    assert not [r for r in net.log.of_kind(TX) if r.plane == 2]
    assert t.sender.counters["tx_rtx"] == 0


def test_receiver_port_going_down_mid_transfer_is_learned_from_port_status() -> None:
    net = make_net()
    t = start_transfer(net, size=2 << 20)
    net.events.at(10_000, lambda _: net.fabric.set_link_state("nic2", "p1-t0-1", False))
    assert finish(t) and t.delivered
    remote = [r for r in net.log.of_kind(EV_STATE) if r.nic == "nic0"]
    assert remote and {r.detail["reason"] for r in remote} == {"remote_port_down"}
    late = [r for r in net.log.of_kind(TX) if r.plane == 1 and r.t_ns > remote[0].t_ns]
    assert late == []


def test_flapping_nic_link_recovers_every_time() -> None:
    net = make_net(probe_interval_ns=15_000)
    t = start_transfer(net, size=8 << 20)
    net.fabric.flap("nic0", "p2-t0-0", start_ns=5_000, down_ns=10_000, up_ns=30_000, cycles=4)
    assert finish(t) and t.delivered
    assert len(net.log.of_kind(PORT_DOWN)) == 4 and len(net.log.of_kind(PORT_UP)) == 4
    revived = [r for r in net.log.of_kind(PROBE_OK) if r.detail["revived"]]
    assert revived and {r.plane for r in revived} == {2}
    tx_plane2 = [r.t_ns for r in net.log.of_kind(TX) if r.plane == 2]
    assert max(tx_plane2) > 135_000  # plane 2 back in use after the last flap ended


def test_flapping_fabric_link_recovers() -> None:
    net = make_net(probe_interval_ns=15_000)
    t = start_transfer(net, size=8 << 20)
    net.fabric.flap("p2-t0-0", "p2-t1-1", start_ns=5_000, down_ns=10_000, up_ns=20_000, cycles=5)
    assert finish(t) and t.delivered
    assert net.log.of_kind(LOSS)
    assert [r for r in net.log.of_kind(PROBE_OK) if r.detail["revived"]]


def test_one_percent_random_loss_everywhere() -> None:
    net = make_net()
    net.fabric.set_fault_everywhere(LinkFault(drop_prob=0.01))
    t = start_transfer(net, size=4 << 20)
    assert finish(t) and t.delivered
    assert t.sender.counters["tx_rtx"] > 0 and t.sender.state.value == "ready"


def test_heavy_reordering() -> None:
    net = make_net()
    net.fabric.set_fault_everywhere(LinkFault(reorder_prob=0.3, reorder_delay_ns=20_000))
    t = start_transfer(net, size=2 << 20, messages=4)
    assert finish(t) and t.delivered
    assert t.receiver.counters["rx_out_of_order"] > 100
    assert len(net.received("nic2")) == 4


def test_duplicated_packets_never_reach_the_application_twice() -> None:
    net = make_net()
    net.fabric.set_fault_everywhere(LinkFault(dup_prob=0.2))
    t = start_transfer(net, size=2 << 20, messages=8)
    assert finish(t) and t.delivered
    assert t.receiver.counters["rx_dup"] > 50
    assert t.receiver.counters["bytes_placed"] == 2 << 20
    assert len(net.received("nic2")) == 8 and len(net.completed("nic0")) == 8


def test_incast_exercises_ecn_trimming_and_congestion_control() -> None:
    net = make_net()
    senders = ["nic0", "nic1", "nic4", "nic6"]
    ts = [start_transfer(net, s, "nic2", 1 << 20, seed=i) for i, s in enumerate(senders)]
    assert net.run_until_idle([t.sender for t in ts], limit_ns=20_000_000)
    assert all(t.delivered for t in ts)
    counters = net.fabric.counters()["channels"]
    assert counters["trims"] > 0 and counters["ecn_marks"] > 0 and counters["drops_full"] == 0
    reasons = {r.detail["reason"] for r in net.log.of_kind(NACK_RX)}
    assert "TRIMMED_LASTHOP" in reasons
    skipped = [r for r in net.log.of_kind(EV_STATE) if r.detail["new"] == "SKIP"]
    assert skipped and all(r.detail["reason"] == "ecn" for r in skipped)
    assert all(t.sender.cc.cwnd < t.sender.cc.max_wnd for t in ts)
    assert not net.log.of_kind(LOSS)  # congestion is signalled, never mistaken for failure


def test_incast_with_congestion_control_disabled_keeps_the_window() -> None:
    net = make_net(cc=CcConfig(enabled=False))
    ts = [start_transfer(net, s, "nic2", 1 << 20, seed=i) for i, s in enumerate(["nic0", "nic4"])]
    assert net.run_until_idle([t.sender for t in ts], limit_ns=20_000_000)
    assert all(t.delivered for t in ts)
    assert all(t.sender.cc.cwnd == t.sender.cc.max_wnd for t in ts)


def test_dead_switch_is_bypassed() -> None:
    net = make_net()
    t = start_transfer(net, size=2 << 20)
    net.run(until_ns=10_000)
    net.fabric.set_switch_state("p3-t1-0", False)
    assert finish(t) and t.delivered
    dead = _failed_evs(net, t, "p3-t1-0")
    assert all(
        t.sender.evs.by_ev[ev].state is ASSUMED_BAD
        for ev in dead
        if t.sender.evs.by_ev[ev].tx_packets
    )
