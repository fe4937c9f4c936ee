"""NicHost: the per-packet state a NIC's connection parts reach (last heard, per path;
the peer's port bitmap; payload placed), and the NIC deriving from it."""

from __future__ import annotations

import random

import pytest

from nic_emu.core import NicCore
from nic_emu.nic_host import NEVER, NicHost, time_reached
from topologies import AddressPlan, load
from topologies.addressing import EV_PLANE_SHIFT, EV_T1_SHIFT

pytestmark = pytest.mark.unit


def _ev(plane: int, t1: int, low: int = 5) -> int:
    return (plane << EV_PLANE_SHIFT) | (t1 << EV_T1_SHIFT) | low


class ChangesHost(NicHost):
    def __init__(self) -> None:
        super().__init__(2, [3, 1])
        self.changes: list[tuple[str, int, int]] = []

    def peer_ports_changed(self, peer: str, bits: int, now: int) -> None:
        self.changes.append((peer, bits, now))


def test_path_key_names_plane_and_t1_within_the_fabric_only() -> None:
    host = NicHost(2, [3, 1])
    assert host.path_key(_ev(0, 2)) == _ev(0, 2, 0) >> EV_T1_SHIFT
    assert host.path_key(_ev(1, 0)) == _ev(1, 0, 0) >> EV_T1_SHIFT
    assert host.path_key(_ev(0, 3)) == -1  # plane 0 has three T1s
    assert host.path_key(_ev(1, 1)) == -1
    assert host.path_key(_ev(2, 0)) == -1  # two planes


def test_path_key_of_any_integer_is_the_shifts_of_it() -> None:
    """The key is ``ev >> EV_T1_SHIFT`` when the plane (``ev >> EV_PLANE_SHIFT``) is one
    of the NIC's and the T1 index one of that plane's, else -1: negative EVs, EVs past
    32 bits (planes beyond the EV's 4 bits, which a NIC of 20 planes has) and EVs past
    any C integer alike."""
    host = NicHost(20, [3] * 20)
    rng = random.Random(9)
    evs = [-1, -(1 << 70), 0, (1 << 62) - 1, 1 << 62, 1 << 63, 1 << 64, 1 << 90]
    evs += [_ev(17, 2), _ev(19, 0), _ev(20, 0), _ev(5, 3)]
    evs += [rng.getrandbits(rng.choice([8, 20, 33, 40, 63, 64, 80])) for _ in range(2000)]
    for ev in evs:
        plane = ev >> EV_PLANE_SHIFT
        key = ev >> EV_T1_SHIFT
        want = key if 0 <= plane < 20 and key & 0xFFF < 3 else -1
        assert host.path_key(ev) == want, ev
    assert host.path_key(_ev(17, 2)) != -1 and host.path_key(_ev(20, 0)) == -1


def test_heard_from_records_the_peer_and_the_path() -> None:
    host = NicHost(2, [3, 1])
    key = host.path_key(_ev(0, 1))
    assert host.path_heard_ns("nic1", key) == NEVER
    host.heard_from("nic1", _ev(0, 1), 100)
    host.heard_from("nic1", _ev(0, 9), 200)  # beyond the fabric: the peer only
    assert host.peer_heard_ns == {"nic1": 200}
    assert host.path_heard_ns("nic1", key) == 100
    assert host.path_heard_ns("nic2", key) == NEVER
    assert host.path_heard_ns("nic1", host.path_key(_ev(1, 0))) == NEVER


def test_times_per_path_agree_with_a_dict_of_path_keys() -> None:
    """Each peer's times are kept in a list, a path at its plane's base plus its T1
    index: what it answers equals a dict keyed by :meth:`NicHost.path_key`, the old
    record, for EVs of the fabric, beyond it (planes, T1 indexes past a plane's count,
    negative, 2**62 and past), of uneven planes and of a plane of more T1s than the key's
    12-bit field holds, for every key of the fabric and keys beyond it."""
    rng = random.Random(27)
    for planes, t1_counts in [(2, [3, 1]), (4, [5, 0, 2, 7]), (3, [5000, 1, 2]), (20, [3] * 20)]:
        host = NicHost(planes, t1_counts)
        model: dict[str, dict[int, int]] = {}
        heard: dict[str, int] = {}
        evs = [-1, 1 << 62, (1 << 62) - 1, 1 << 90, True, False]
        evs += [_ev(p, t, rng.getrandbits(16)) for p in range(planes + 1) for t in range(9)]
        evs += [_ev(0, 4095), _ev(0, 4096 + 1)]
        evs += [rng.getrandbits(rng.choice([20, 33, 40, 63, 64])) for _ in range(300)]
        for now in range(3000):
            peer = rng.choice(["nic1", "nic2", "nic3"])
            ev = rng.choice(evs)
            host.heard_from(peer, ev, now)
            heard[peer] = now
            key = host.path_key(ev)
            if key >= 0:
                model.setdefault(peer, {})[key] = now
        assert host.peer_heard_ns == heard
        keys = {host.path_key(ev) for ev in evs} | {-1, -5, 1 << 50, 1 << 46, (1 << 46) - 1}
        keys |= {(p << 12) | t for p in range(planes + 2) for t in (0, 1, 2, 4095)}
        for peer in ["nic1", "nic2", "nic3", "nic4"]:
            for key in keys:
                want = model.get(peer, {}).get(key, NEVER)
                assert host.path_heard_ns(peer, key) == want, (peer, key)
            for ev in evs:
                want = model.get(peer, {}).get(host.path_key(ev), NEVER)
                assert host.ev_heard_ns(peer, ev) == want, (peer, ev)


def test_the_last_peers_times_found_by_identity_answer_as_a_lookup_by_name() -> None:
    """heard_from finds the peer it found last by identity (its list of times kept
    beside the dict): runs from one peer, alternation, names equal to a known one but
    other objects, and EVs beyond the fabric in between answer, at every step, as a
    record looked up by name does."""
    rng = random.Random(28)
    host = NicHost(2, [3, 4])
    assert host.ev_heard_ns("nic1", _ev(0, 1)) == NEVER  # nobody heard yet
    model: dict[str, dict[int, int]] = {}
    heard: dict[str, int] = {}
    evs = [_ev(p, t) for p in range(2) for t in range(4)] + [_ev(0, 7), -3, 1 << 62]
    peer = "nic1"
    for now in range(4000):
        if rng.random() < 0.4:  # a new run: a peer's name, often another object of it
            peer = "".join(["nic", str(rng.randrange(1, 4))]) if rng.random() < 0.5 else peer
            peer = rng.choice([peer, "nic1", "nic2", "nic3"])
        ev = rng.choice(evs)
        host.heard_from(peer, ev, now)
        heard[peer] = now
        key = host.path_key(ev)
        if key >= 0:
            model.setdefault(peer, {})[key] = now
        asked = rng.choice(["nic1", "nic2", "nic3", "nic4", peer])
        probe = rng.choice(evs)
        want = model.get(asked, {}).get(host.path_key(probe), NEVER)
        assert host.ev_heard_ns(asked, probe) == want
        assert host.path_heard_ns(asked, host.path_key(probe)) == want
    assert host.peer_heard_ns == heard


def test_an_ev_that_is_no_int_is_refused_as_the_pure_path_key_refuses_it() -> None:
    """A float EV is a TypeError on both builds (the pure ``path_key`` shifts it; the
    native one, left as it was, truncates it to a C integer)."""
    host = NicHost(2, [3, 1])
    with pytest.raises(TypeError):
        host.heard_from("nic1", 1.5, 100)  # type: ignore[arg-type]
    assert host.peer_heard_ns == {"nic1": 100}  # the peer, as before: heard first
    with pytest.raises(TypeError):
        host.ev_heard_ns("nic1", 1.5)  # type: ignore[arg-type]
    host.heard_from("nic1", True, 200)  # an int: plane 0, T1 0
    assert host.path_heard_ns("nic1", 0) == 200 == host.ev_heard_ns("nic1", _ev(0, 0))


def test_port_bitmap_changes_reach_the_nic_once_each() -> None:
    host = ChangesHost()
    host.note_peer_ports("nic1", 0b11, 1)
    host.note_peer_ports("nic1", 0b11, 2)
    host.note_peer_ports("nic1", 0b01, 3)
    host.note_peer_ports("nic2", 0b01, 4)
    assert host.changes == [("nic1", 0b11, 1), ("nic1", 0b01, 3), ("nic2", 0b01, 4)]
    with pytest.raises(NotImplementedError):
        NicHost(1, [1]).note_peer_ports("nic1", 1, 0)


def test_the_last_peers_ports_and_bitmap_answer_as_a_lookup_by_name() -> None:
    """note_peer_ports and peer_port_up keep the peer they answered last beside the
    dicts (found by identity): bitmaps from peers in runs and alternating, names equal to
    a known one but other objects, report each change once, as a dict of the last bitmap
    per peer does, and each peer's ports are one list whichever object names it."""
    rng = random.Random(29)
    host = ChangesHost()
    last: dict[str, int] = {}
    want: list[tuple[str, int, int]] = []
    lists: dict[str, list[bool]] = {}
    peer = "nic1"
    for now in range(3000):
        if rng.random() < 0.3:
            name = rng.choice(["nic1", "nic2", "nic3"])
            peer = "".join(["nic", name[-1]]) if rng.random() < 0.5 else name
        bits = rng.choice([0b11, 0b11, 0b11, 0b01, 0b10])
        host.note_peer_ports(peer, bits, now)
        if last.get(peer) != bits:
            last[peer] = bits
            want.append((peer, bits, now))
        asked = rng.choice([peer, "nic1", "nic2", "nic4"])
        up = host.peer_port_up(asked)
        assert up is lists.setdefault(asked, up) and up == [True, True]
    assert host.changes == want
    assert host._peer_bits == last


def test_the_nic_is_a_nic_host_with_its_fabric() -> None:
    plan = AddressPlan(load("tiny"))
    core = NicCore("nic0", plan)
    assert isinstance(core, NicHost)
    assert core.plane_count == plan.topology.plane_count
    assert core._t1_counts == [p.t1_count for p in plan.topology.planes]
    assert core.placed_bytes == 0
    core.placed_bytes += 7
    assert core.placed_bytes == 7
    core.note_peer_ports("nic3", 0, 5)  # every port of the peer down: logged per plane
    assert core.peer_port_up("nic3") == [False] * core.plane_count


def test_peer_ports_start_up_and_are_one_list_per_peer() -> None:
    host = NicHost(3, [1, 1, 1])
    assert host.port_up == [True, True, True]
    up = host.peer_port_up("nic1")
    assert up == [True, True, True]
    up[1] = False
    assert host.peer_port_up("nic1") is up and host.peer_port_up("nic2") == [True] * 3


def test_time_reached_is_the_python_comparison() -> None:
    """``time_reached(now, since, period)`` is ``now - since >= period``: on C integers
    on the native build for ints up to 2**61 in magnitude, the Python expression for
    larger ints, floats and bools; at the bounds, on both sides of each."""
    edge = 1 << 61
    values = [0, 1, -1, 7, 50_000, edge, edge - 1, edge + 1, -edge, -edge - 1, NEVER]
    values += [1 << 62, 1 << 70, -(1 << 70), 2.5, 50_000.0, True, False]
    rng = random.Random(61)
    values += [rng.randrange(-(1 << 63), 1 << 63) for _ in range(20)]
    values += [rng.randrange(-(1 << 31), 1 << 31) for _ in range(20)]
    for now in values:
        for since in values:
            for period in values:
                want = now - since >= period
                assert time_reached(now, since, period) == want, (now, since, period)
