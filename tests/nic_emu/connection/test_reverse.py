"""nic_emu.connection.reverse: the reverse EV set on its own, its host a bare NicCore."""

from __future__ import annotations

import random
from dataclasses import replace

from nic_emu.config import NicConfig
from nic_emu.connection.reverse import ReverseEvs
from nic_emu.core import NicCore
from topologies import AddressPlan, load

CFG = NicConfig()


def _reverse(single: tuple[int, int] | None = None) -> tuple[NicCore, ReverseEvs]:
    core = NicCore("nic0", AddressPlan(load("tiny")), CFG)
    return core, ReverseEvs(core, CFG, "nic3", 0x100, 0, single)


def test_slots_per_plane_each_with_its_carrier() -> None:
    core, rev = _reverse()
    assert [len(s) for s in rev.slots] == [CFG.reverse_evs_per_plane] * core.plane_count
    for plane, slots in enumerate(rev.slots):
        for ev in slots:
            assert core.plan_ev_plane(ev) == plane
            assert rev.carrier[ev] == core.path("nic3", ev).carrier_bytes


def test_planes_in_turn_then_only_those_up_at_both_ends() -> None:
    core, rev = _reverse()
    picks = [rev.pick(10) for _ in range(4)]
    assert [p for p, _ in picks] == [0, 1, 0, 1]
    s = rev.slots
    assert [ev for _, ev in picks] == [s[0][0], s[1][0], s[0][1], s[1][1]]
    core.peer_port_up("nic3")[0] = False
    assert {rev.pick(20)[0] for _ in range(4)} == {1}  # type: ignore[index]
    core.set_port_state(1, False, 30)
    assert rev.pick(40) is None


def test_a_plane_heard_from_recently_goes_first() -> None:
    _, rev = _reverse()
    rev.seen(1, rev.slots[1][0], 1_000)
    assert {rev.pick(2_000)[0] for _ in range(3)} == {1}  # type: ignore[index]


def test_traffic_on_a_new_ev_takes_the_oldest_slot_once_per_refresh() -> None:
    core, rev = _reverse()
    oldest, kept = rev.slots[0]
    new = core.plan.make_ev(0, 1, 0x1234)
    rev.heard_on(0, new, CFG.reverse_refresh_ns)
    assert rev.slots[0] == [kept, new] and oldest not in rev.carrier and new in rev.carrier
    newer = core.plan.make_ev(0, 0, 0x2345)
    rev.heard_on(0, newer, CFG.reverse_refresh_ns + 1)  # within the refresh period: kept
    assert rev.slots[0] == [kept, new]
    other_plane = core.plan.make_ev(1, 0, 0x3456)
    rev.heard_on(0, other_plane, 2 * CFG.reverse_refresh_ns)  # not an EV of plane 0
    assert rev.slots[0] == [kept, new] and rev.last_ev[0] == other_plane


def test_a_baseline_connection_answers_on_its_one_path() -> None:
    core = NicCore("nic0", AddressPlan(load("tiny")), CFG)
    ev = core.plan.make_ev(1, 0, 0x42)
    rev = ReverseEvs(core, replace(CFG, reverse_evs_per_plane=4), "nic3", 0x100, 0, (1, ev))
    assert rev.slots == [[], [ev]]
    assert rev.pick(10) == (1, ev)
    rev.heard_on(1, core.plan.make_ev(1, 1, 0x43), 10 * CFG.reverse_refresh_ns)
    assert rev.slots == [[], [ev]]  # never refreshed


def test_the_c_choice_is_the_python_one() -> None:
    """The native build picks on C integers when every time is an int in range; a twin
    whose periods are floats of the same values takes the Python expressions. Through
    random arrivals, refreshes, ports going down and up at both ends and picks, both
    choose the same plane and EV every time and keep the same state; an int past 2**61
    (``now``) or a float last-heard time takes the Python path and answers the same."""
    rng = random.Random(27)
    cores, revs = [], []
    for floats in (False, True):
        core, rev = _reverse()
        if floats:
            rev.stale_ns = float(rev.stale_ns)
            rev.refresh_ns = float(rev.refresh_ns)
        cores.append(core)
        revs.append(rev)
    plan = cores[0].plan
    now = 0
    for step in range(3000):
        now += rng.choice([0, 1, 500, 20_000, 60_000, 250_000])
        plane = rng.randrange(cores[0].plane_count)
        ev = rng.choice(revs[0].slots[plane] + [plan.make_ev(plane, rng.randrange(2), 77)])
        action = rng.randrange(6)
        for core, rev in zip(cores, revs, strict=True):
            if action == 0:
                rev.heard_on(plane, ev, now)
                core.heard_from("nic3", ev, now)
            elif action == 1:
                rev.seen(plane, ev, now)
            elif action == 2:
                core.peer_port_up("nic3")[plane] = step % 7 != 0
            elif action == 3:
                core.port_up[plane] = step % 5 != 0
        picks = [rev.pick(now) for rev in revs]
        assert picks[0] == picks[1], step
        a, b = revs
        assert (a.plane_rr, a.pos, a.slots, a.heard) == (b.plane_rr, b.pos, b.slots, b.heard)
    _, rev = _reverse()
    _, twin = _reverse()
    for r in (rev, twin):
        r.seen(1, r.slots[1][0], 1_000)
    twin.heard[1] = 1_000.0  # a float time: the Python path
    assert rev.pick(2_000) == twin.pick(2_000)
    late = (1 << 61) + 5  # past the C path's bound for now
    assert rev.pick(late) == twin.pick(late) and rev.plane_rr == twin.plane_rr
