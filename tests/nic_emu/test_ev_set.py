"""The EV state machine: rotation, SKIP, ASSUMED_BAD with backups and floor, probes."""

from __future__ import annotations

import ast
import gc
import importlib.machinery
import random
import sys
from collections import Counter
from fractions import Fraction
from itertools import pairwise

import pytest

import nic_emu.ev_set
from clikit import hotpath
from nic_emu.ev_set import (
    ASSUMED_BAD,
    DENIED,
    GOOD,
    SKIP,
    STATE_NAMES,
    EvEntry,
    EvSet,
    EvState,
    plane_entries,
    shuffle,
)
from nic_emu.exceptions import EvManagementError


def _pure_slots() -> tuple[str, ...]:
    """``EvEntry.__slots__`` as the pure source declares it (the native build's extension
    type has the same fields, declared in nic_emu/ev_set.pxd, and no ``__slots__``)."""
    tree = ast.parse(hotpath.source_of("nic_emu.ev_set").read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == "EvEntry":
            for stmt in node.body:
                if isinstance(stmt, ast.Assign) and [
                    getattr(t, "id", None) for t in stmt.targets
                ] == ["__slots__"]:
                    return tuple(ast.literal_eval(stmt.value))
    raise AssertionError("nic_emu/ev_set.py declares no EvEntry.__slots__")


#: every field of an entry
ENTRY_FIELDS = _pure_slots()


def make_set(
    planes: int = 4,
    active_per_plane: int = 8,
    backup_per_plane: int = 2,
    t1s: int = 4,
    floor: int = 0,
    log: list | None = None,
) -> EvSet:
    active: dict[int, list[EvEntry]] = {}
    backup: dict[int, list[EvEntry]] = {}
    for p in range(planes):
        entries = [
            EvEntry(ev=(p << 28) | (i % t1s) << 16 | i, plane=p, path=(p, i % t1s))
            for i in range(active_per_plane + backup_per_plane)
        ]
        active[p] = entries[:active_per_plane]
        backup[p] = entries[active_per_plane:]

    def on_change(e, old, new, reason, now):
        if log is not None:
            log.append((e.ev, old, new, reason, now))

    return EvSet(
        active,
        backup,
        min_active_per_plane=floor,
        skip_ns=1000,
        rng=random.Random(7),
        on_change=on_change,
    )


def test_rotation_is_even_across_planes_and_evs() -> None:
    evs = make_set()
    picks = [evs.pick(0) for _ in range(32 * 10)]
    per_plane = Counter(e.plane for e in picks)
    per_ev = Counter(e.ev for e in picks)
    assert set(per_plane.values()) == {80}
    assert len(per_ev) == 32 and set(per_ev.values()) == {10}
    # Consecutive packets never reuse an EV and never stay on one plane for long.
    assert all(a is not b for a, b in pairwise(picks))
    assert max(len(list(g)) for g in _runs([e.plane for e in picks])) <= 2


def _runs(seq: list[int]) -> list[list[int]]:
    out: list[list[int]] = []
    for item in seq:
        if out and out[-1][0] == item:
            out[-1].append(item)
        else:
            out.append([item])
    return out


def test_skip_avoids_ev_until_it_expires() -> None:
    log: list = []
    evs = make_set(planes=1, active_per_plane=4, backup_per_plane=0, log=log)
    target = evs.ring[0]
    evs.mark_skip(target, now=100)
    assert target.state is SKIP and target.skip_until == 1100
    assert all(evs.pick(500) is not target for _ in range(12))
    later = [evs.pick(1100) for _ in range(4)]
    assert target in later and target.state is GOOD
    assert (target.ev, GOOD, SKIP, "ecn", 100) in log
    assert (target.ev, SKIP, GOOD, "skip_expired", 1100) in log


def test_all_skipped_falls_back_to_a_skipped_ev() -> None:
    evs = make_set(planes=1, active_per_plane=2, backup_per_plane=0)
    for e in list(evs.ring):
        evs.mark_skip(e, now=0)
    assert evs.pick(10) is not None


def test_assumed_bad_is_replaced_from_same_plane_backup_on_another_path() -> None:
    evs = make_set(planes=2, active_per_plane=4, backup_per_plane=4, t1s=4)
    victim = evs.ring[0]
    assert evs.mark_bad(victim, "loss", now=5)
    assert victim.state is ASSUMED_BAD and not victim.active
    newcomers = [e for e in evs.ring if e.plane == victim.plane]
    assert len(newcomers) == 4 and victim not in newcomers
    replacement = next(e for e in newcomers if e not in evs.backup[victim.plane])
    assert replacement.path != victim.path
    assert all(evs.pick(10) is not victim for _ in range(40))


def test_backup_on_the_failed_path_is_not_swapped_in() -> None:
    evs = make_set(planes=1, active_per_plane=2, backup_per_plane=1, t1s=2)
    backup = evs.backup[0][0]
    victim = next(e for e in evs.ring if e.path == backup.path)
    evs.mark_bad(victim, "loss", 0)
    assert victim.state is ASSUMED_BAD and victim.active and not backup.active


def test_floor_keeps_minimum_usable_evs_per_plane() -> None:
    held = []
    evs = make_set(planes=2, active_per_plane=3, backup_per_plane=0, floor=2)
    evs._on_floor_hold = lambda e, reason, now: held.append(e.ev)
    plane0 = [e for e in evs.ring if e.plane == 0]
    assert evs.mark_bad(plane0[0], "loss", 0)
    assert not evs.mark_bad(plane0[1], "loss", 0)
    assert not evs.mark_bad(plane0[2], "loss", 0)
    assert [e.state for e in plane0] == [ASSUMED_BAD, GOOD, GOOD]
    assert held == [plane0[1].ev, plane0[2].ev]


def test_probes_revive_after_consecutive_successes_and_failure_resets() -> None:
    evs = make_set(planes=1, active_per_plane=2, backup_per_plane=0)
    e = evs.ring[0]
    evs.mark_bad(e, "timeout", 0)
    assert evs.probe_candidates() == [e]
    assert not evs.probe_answered(e, 3, 1)
    evs.probe_unanswered(e)
    assert e.probe_successes == 0
    assert not evs.probe_answered(e, 3, 2)
    assert not evs.probe_answered(e, 3, 3)
    assert evs.probe_answered(e, 3, 4)
    assert e.state is GOOD and evs.probe_candidates() == []


def test_revived_backup_takes_a_dead_ring_slot() -> None:
    evs = make_set(planes=1, active_per_plane=2, backup_per_plane=1, t1s=3)
    a, b = evs.ring
    evs.mark_bad(a, "loss", 0)  # replaced by the backup
    evs.mark_bad(b, "loss", 0)  # a is in the backup pool now, no GOOD backup left
    assert b.active and b.state is ASSUMED_BAD
    for t in range(3):
        evs.probe_answered(a, 3, t)
    assert a.state is GOOD and a.active and not b.active


def test_plane_down_and_up_local_and_remote() -> None:
    evs = make_set(planes=2, active_per_plane=4, backup_per_plane=1)
    evs.plane_down(1, 10, remote=True)
    assert all(e.state is ASSUMED_BAD for e in evs.by_ev.values() if e.plane == 1)
    assert all(evs.pick(11).plane == 0 for _ in range(20))
    assert all(e.plane == 0 for e in evs.probe_candidates()) and not evs.probe_candidates()
    evs.plane_up(1, remote=True)
    assert {e.plane for e in evs.probe_candidates()} == {1}


def test_deny_and_allow_by_management_only() -> None:
    evs = make_set(planes=1, active_per_plane=2, backup_per_plane=1)
    target = evs.ring[0]
    evs.deny(target.ev, 0)
    assert target.state is DENIED and target not in evs.ring
    assert target not in evs.probe_candidates()
    evs.mark_bad(target, "loss", 1)  # losses never touch a DENIED EV
    assert target.state is DENIED
    evs.allow(target.ev, 2)
    assert target.state is GOOD
    with pytest.raises(EvManagementError, match="not in this connection's EV set"):
        evs.deny(0xDEAD, 0)


def test_no_usable_ev_returns_none() -> None:
    evs = make_set(planes=1, active_per_plane=2, backup_per_plane=0)
    evs.plane_down(0, 0, remote=False)
    assert evs.pick(1) is None and not evs.has_usable()


def test_duplicate_ev_rejected() -> None:
    e = EvEntry(ev=1, plane=0, path=(0, 0))
    with pytest.raises(EvManagementError, match="appears twice"):
        EvSet({0: [e]}, {0: [e]}, min_active_per_plane=0, skip_ns=1, rng=random.Random(1))
    # another entry of the same EV, in the same list or the backups: refused before its
    # state is touched; an entry listed under another plane: refused as such
    other = EvEntry(ev=1, plane=0, path=(0, 1))
    for active, backup in (({0: [e, other]}, {}), ({0: [e]}, {0: [other]})):
        with pytest.raises(EvManagementError, match="EV 0x1 appears twice"):
            EvSet(active, backup, min_active_per_plane=0, skip_ns=1, rng=random.Random(1))
        assert other.active is False
    with pytest.raises(EvManagementError, match="EV 0x1 is on plane 0, listed under 2"):
        EvSet({0: [], 2: [other]}, {}, min_active_per_plane=0, skip_ns=1, rng=random.Random(1))


def _path_entries(evs: EvSet, path: tuple[int, int]) -> list[EvEntry]:
    return evs.by_path[path]


def test_a_path_that_delivers_nothing_after_two_losses_is_retired() -> None:
    log: list = []
    evs = make_set(log=log)
    a, b, c, *rest = _path_entries(evs, (0, 1))
    c.acked_sent_ns = 90  # the path last delivered a packet sent at 90
    evs.mark_bad(a, "reorder", 1, sent_ns=100)
    assert a.state is ASSUMED_BAD and all(e.state is GOOD for e in (b, c, *rest))
    evs.mark_bad(b, "reorder", 2, sent_ns=105)
    assert all(e.state is ASSUMED_BAD for e in _path_entries(evs, (0, 1)))
    assert {r[3] for r in log if r[4] == 2} == {"path_reorder"}
    assert all(e.state is GOOD for e in _path_entries(evs, (0, 2)))  # other paths untouched


def test_a_path_that_delivers_later_packets_loses_single_evs() -> None:
    """Congestion: a queue drops some packets and passes others sent after them."""
    evs = make_set(active_per_plane=16, backup_per_plane=4)
    a, b, c, d, *_ = _path_entries(evs, (1, 0))
    c.acked_sent_ns = 150  # sent after both lost packets, delivered
    evs.mark_bad(a, "reorder", 1, sent_ns=100)
    evs.mark_bad(b, "reorder", 2, sent_ns=120)
    assert (a.state, b.state, c.state, d.state) == (ASSUMED_BAD, ASSUMED_BAD, GOOD, GOOD)
    # Delivery between two undelivered losses restarts the count.
    evs.mark_bad(d, "reorder", 3, sent_ns=200)
    c.acked_sent_ns = 210
    e = _path_entries(evs, (1, 0))[4]
    evs.mark_bad(e, "reorder", 4, sent_ns=205)
    assert e.state is ASSUMED_BAD and c.state is GOOD  # one undelivered loss only: no path


def test_probes_are_limited_per_path_and_a_revival_revives_the_path() -> None:
    evs = make_set(active_per_plane=8, backup_per_plane=8)
    evs.retire_path((2, 3), "timeout", 1)
    bad = _path_entries(evs, (2, 3))
    assert len(bad) == 4 and all(e.state is ASSUMED_BAD for e in bad)
    first = evs.probe_candidates(per_path=2)
    assert len(first) == 2 and {e.path for e in first} == {(2, 3)}
    assert len(evs.probe_candidates()) == 4  # no limit: every retired EV
    for e in first:
        e.probed_ns = 5
    # The next round rotates to the EVs probed longest ago.
    assert set(evs.probe_candidates(per_path=2)).isdisjoint(first)
    streak = first[0]
    for t in range(3):
        revived = evs.probe_answered(streak, 3, 10 + t)
    assert revived and all(e.state is GOOD for e in bad)


def _reference_pick(evs: EvSet, now: int, free_at: list[int]) -> tuple[EvEntry, int, int] | None:
    """The busy-port rule as first written (every plane scanned in turn order): the first
    plane with a free port and an EV, else the busy one with an EV whose port frees first
    (the earliest in turn order among equals). Returns (entry, its plane, next turn)."""
    planes = evs.planes
    n = len(planes)
    wait: tuple[int, int, int] | None = None
    for k in range(n):
        p = planes[(evs._turn + k) % n]
        i = evs._scan(p, now)
        if i < 0:
            continue
        if free_at[p] <= now:
            return evs.ring[evs._slots[p][i]], p, (evs._turn + k + 1) % n
        if wait is None or free_at[p] < free_at[wait[0]]:
            wait = (p, i, (evs._turn + k + 1) % n)
    if wait is None:
        return None
    return evs.ring[evs._slots[wait[0]][wait[1]]], wait[0], wait[2]


def test_busy_ports_pass_their_turn_to_the_port_that_frees_first() -> None:
    rng = random.Random(3)
    evs = make_set(planes=4, active_per_plane=3, backup_per_plane=0)
    for step in range(3000):
        now = step * 10
        if rng.random() < 0.3:  # some planes run out of EVs for a while
            e = rng.choice(evs.ring)
            if e.state is GOOD:
                evs.mark_skip(e, now)
        free_at = [now + rng.choice((-5, 0, 0, 5, 10, 10, 20)) for _ in range(4)]
        expected = _reference_pick(evs, now, free_at)
        got = evs.pick(now, free_at)
        if expected is None:
            assert got is None or got.state is SKIP  # the skipped-EV fallback
            continue
        entry, plane, turn = expected
        assert got is entry
        assert evs._turn == turn
        assert evs._ppos[plane] == evs._slots[plane].index(evs.ring.index(entry)) + 1
    # Both branches were taken: a free port won, and a busy one did.
    evs = make_set(planes=2, active_per_plane=1, backup_per_plane=0)
    first = evs.pick(0, [5, 3])
    assert first is not None and first.plane == 1  # both busy: plane 1 frees first
    evs.unpick()
    start = evs._turn
    tie = evs.pick(0, [4, 4])
    assert tie is not None and tie.plane == evs.planes[start]  # equals: turn order decides
    free = evs.pick(0, [9, 0])
    assert free is not None and free.plane == 1


def test_port_times_of_any_size_and_type_pick_as_python_compares_them() -> None:
    # pick compares the ports' free times with now (and with each other) from the ints'
    # digits when both are ints below 2**60 in magnitude (compiled), by Python otherwise.
    # The same times as Fractions (never read from digits), and around 2**60, 2**62 and
    # 2**70 and below zero (past the digits' reach): the same picks, turns and slots.
    for seed in range(6):
        rng = random.Random(seed)
        ints, fractions = (make_set(planes=3, active_per_plane=3) for _ in range(2))
        for step in range(1500):
            base = rng.choice((0, -(1 << 40), (1 << 60) - 40, (1 << 62) - 40, 1 << 70))
            now = base + step
            if rng.random() < 0.2:
                k = rng.randrange(len(ints.ring))
                if ints.ring[k].state is GOOD:
                    ints.mark_skip(ints.ring[k], now)
                    fractions.mark_skip(fractions.ring[k], now)
            free_at = [now + rng.choice((-70, -5, 0, 0, 5, 10, 10, 20, 70)) for _ in range(3)]
            expected = _reference_pick(ints, now, free_at)
            got = ints.pick(now, free_at)
            other = fractions.pick(Fraction(now), [Fraction(t) for t in free_at])
            assert (got is None) == (other is None)
            if got is not None and other is not None:
                assert (got.ev, got.state) == (other.ev, other.state)
                if expected is not None:
                    assert got is expected[0]
            assert (ints._turn, ints._ppos) == (fractions._turn, fractions._ppos)
            if rng.random() < 0.5:
                ints.unpick()
                fractions.unpick()
    # A time Python cannot compare with an int is Python's TypeError on either build.
    evs = make_set(planes=2, active_per_plane=1)
    with pytest.raises(TypeError):
        evs.pick(0, ["soon", 0])
    with pytest.raises(TypeError):
        evs.pick(0, [5, "later"])


def test_the_ev_index_holds_each_entry_once_in_the_sets_order() -> None:
    # by_ev is made for the entries it will hold (compiled): the same keys, in the same
    # order, as inserting them one by one; tuples of entries are taken too, and an EV
    # listed twice is still refused.
    active = {
        p: tuple(
            EvEntry(ev=(p << 28) | (i % 4) << 16 | i, plane=p, path=(p, i % 4)) for i in range(160)
        )
        for p in range(2)
    }
    backup = {
        p: [EvEntry(ev=(p << 28) | 1 << 24 | i, plane=p, path=(p, 9)) for i in range(3)]
        for p in range(2)
    }
    evs = EvSet(active, backup, min_active_per_plane=1, skip_ns=1, rng=random.Random(4))
    want = [e.ev for p in range(2) for e in active[p]] + [e.ev for p in range(2) for e in backup[p]]
    assert list(evs.by_ev) == want
    assert all(evs.by_ev[e.ev] is e for p in range(2) for e in (*active[p], *backup[p]))
    assert type(evs.by_ev) is dict
    twice = {0: [EvEntry(ev=5, plane=0, path=(0, 0)), EvEntry(ev=5, plane=0, path=(0, 1))]}
    with pytest.raises(EvManagementError, match="appears twice"):
        EvSet(twice, {}, min_active_per_plane=1, skip_ns=1, rng=random.Random(4))


def test_the_native_ev_set_takes_no_subclass() -> None:
    # Compiled, EvSet is a final type (its methods' C calls are direct); the pure class,
    # the reference, is an ordinary one.
    native = nic_emu.ev_set.__file__.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES))
    if native:
        with pytest.raises(TypeError):
            type("Sub", (EvSet,), {})
    else:
        assert issubclass(type("Sub", (EvSet,), {}), EvSet)


def test_state_names_are_the_states_names() -> None:
    assert [STATE_NAMES[s] for s in EvState] == [s.name for s in EvState]
    assert STATE_NAMES[SKIP] == "SKIP" and STATE_NAMES[DENIED] == "DENIED"


def test_planes_numbered_with_gaps_keep_their_slots_by_position() -> None:
    # The per-plane slots and next positions are kept by the plane's position in
    # ``planes``; the planes' numbers (here 1, 3 and 6) index ``free_at`` and the entries.
    active = {
        p: [EvEntry(ev=(p << 28) | i, plane=p, path=(p, i % 2)) for i in range(3)]
        for p in (1, 3, 6)
    }
    evs = EvSet(active, {}, min_active_per_plane=0, skip_ns=1000, rng=random.Random(11))
    assert evs.planes == [1, 3, 6]
    picks = [evs.pick(0) for _ in range(9)]
    assert Counter(e.plane for e in picks if e is not None) == {1: 3, 3: 3, 6: 3}
    assert len({e.ev for e in picks if e is not None}) == 9
    for k, p in enumerate(evs.planes):
        assert {evs.ring[i].plane for i in evs._slots[k]} == {p}
    # free_at is indexed by plane number: only plane 6's port is free.
    free_at = [0, 50, 0, 50, 0, 0, 0]
    got = evs.pick(10, free_at)
    assert got is not None and got.plane == 6
    turn, ppos = evs._turn, list(evs._ppos)
    again = evs.pick(10, free_at)
    assert again is not None and again.plane == 6 and again is not got
    evs.unpick()  # the same EV comes first next time
    assert (evs._turn, evs._ppos) == (turn, ppos)
    assert evs.pick(10, free_at) is again
    evs.unpick()
    evs.unpick()  # nothing left to undo: no change
    assert (evs._turn, evs._ppos) == (turn, ppos)
    # Every port busy: the plane whose port frees first (plane 3 at 20).
    busy = evs.pick(10, [0, 30, 0, 20, 0, 0, 40])
    assert busy is not None and busy.plane == 3


def test_shuffle_draws_as_random_shuffle() -> None:
    # The same order and the same generator state after, for every length from 0 (lengths
    # just past a power of two redraw most often) and many seeds.
    for seed in range(40):
        ours, ref = random.Random(seed), random.Random(seed)
        for n in (*range(12), 16, 17, 33, 64, 65, 100, 257):
            got, want = list(range(n)), list(range(n))
            shuffle(ours, got)
            ref.shuffle(want)
            assert got == want
        assert ours.getstate() == ref.getstate()


def test_the_native_shuffle_reads_the_generators_own_words_across_its_twist() -> None:
    # Compiled, shuffle draws in C from random.Random's own words once their layout is
    # checked (_LAYOUT_OK); pure, by getrandbits. Either way: Random.shuffle's order and
    # state, from every index around the twist (the 624th word), lengths that redraw.
    native = nic_emu.ev_set.__file__.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES))
    assert nic_emu.ev_set._LAYOUT_OK is native
    for index in range(600, 625):
        ours, ref = random.Random(index), random.Random(index)
        version, words, gauss = ref.getstate()
        state = (version, (*words[:-1], index), gauss)
        ours.setstate(state)
        ref.setstate(state)
        for n in (2, 3, 17, 300, 1025):
            got, want = list(range(n)), list(range(n))
            shuffle(ours, got)
            ref.shuffle(want)
            assert got == want
        assert ours.getstate() == ref.getstate()


def test_shuffle_keeps_the_items_references_and_an_instances_own_getrandbits() -> None:
    # The C loop swaps item pointers: each item is referred to as often as before.
    items = [object() for _ in range(50)]
    shuffled, want = list(items), list(items)
    before = [sys.getrefcount(o) for o in items]
    shuffle(random.Random(8), shuffled)
    random.Random(8).shuffle(want)
    assert shuffled == want
    assert [sys.getrefcount(o) for o in items] == before
    # A getrandbits set on the instance is what draws (as Random.shuffle would call it).
    rng, calls = random.Random(5), []
    draw = rng.getrandbits

    def counting(k: int) -> int:
        calls.append(k)
        return draw(k)

    rng.getrandbits = counting  # type: ignore[method-assign]
    got = list(range(10))
    shuffle(rng, got)
    want = list(range(10))
    random.Random(5).shuffle(want)
    assert got == want
    assert len(calls) >= 9


def test_paths_grouped_by_identity_are_the_dictionarys_groups() -> None:
    # by_path_of finds a path object met before by identity; equal paths that are other
    # objects, and paths past the first PATHS_BY_IDENTITY, go to the dictionary: the groups
    # (their keys, lists and order) are those of a lookup per EV.
    def reference(entries: list[EvEntry]) -> dict[object, list[EvEntry]]:
        out: dict[object, list[EvEntry]] = {}
        for e in entries:
            out.setdefault(e.path, []).append(e)
        return out

    count = nic_emu.ev_set.PATHS_BY_IDENTITY + 9
    shared = [(0, f"t1-{k}") for k in range(count)]
    entries = [EvEntry(j, 0, shared[j % count]) for j in range(5 * count)]
    entries += [EvEntry(10_000 + j, 0, (0, f"t1-{j % 7}")) for j in range(40)]  # equal copies
    entries += [EvEntry(20_000 + j, 0, None if j % 2 else 1.0) for j in range(6)]
    got, want = nic_emu.ev_set.by_path_of(entries), reference(entries)
    assert list(got) == list(want)
    assert all(a is b for a, b in zip(got, want, strict=True))  # the first object is the key
    assert all(got[p] == want[p] for p in want)
    evs = EvSet({0: entries}, {}, min_active_per_plane=1, skip_ns=1, rng=random.Random(1))
    assert list(evs.by_path) == list(want)
    assert all(evs.by_path[p] == want[p] for p in want)


def test_shuffle_leaves_another_generator_to_its_own_shuffle() -> None:
    class Reversing(random.Random):
        def shuffle(self, x: list) -> None:  # type: ignore[override]
            x.reverse()

    items = [1, 2, 3, 4]
    shuffle(Reversing(1), items)
    assert items == [4, 3, 2, 1]

    class OwnRandom(random.Random):  # draws by random(), not getrandbits: its own path
        def random(self) -> float:
            return 0.0

    items = list(range(6))
    shuffle(OwnRandom(2), items)
    want = list(range(6))
    OwnRandom(2).shuffle(want)
    assert items == want


def test_shuffle_of_a_short_list_still_calls_another_generators_shuffle() -> None:
    # Only random.Random itself skips a list of fewer than two items (its shuffle draws
    # nothing there); a subclass's own shuffle is called whatever the length.
    class Counting(random.Random):
        calls = 0

        def shuffle(self, x: list) -> None:  # type: ignore[override]
            Counting.calls += 1
            self.getrandbits(5)

    rng = Counting(3)
    for n in (0, 1, 2):
        shuffle(rng, list(range(n)))
    assert Counting.calls == 3
    ref = random.Random(3)
    for _ in range(3):
        ref.getrandbits(5)
    assert rng.getstate() == ref.getstate()
    plain, ref = random.Random(4), random.Random(4)
    for n in (0, 1):
        items = list(range(n))
        shuffle(plain, items)
        assert items == list(range(n))
    assert plain.getstate() == ref.getstate()


def _reference_ring(
    planes: list[int], active: dict[int, list[EvEntry]], rng: random.Random
) -> list[EvEntry]:
    """The ring as EvSet laid it out before its one-plane shortcut: each plane's EVs
    shuffled, then round by round the planes in a shuffled order (random.Random's own
    shuffle)."""
    per_plane = {p: list(active[p]) for p in planes}
    for entries in per_plane.values():
        rng.shuffle(entries)
    ring: list[EvEntry] = []
    depth = max((len(v) for v in per_plane.values()), default=0)
    for r in range(depth):
        order = list(planes)
        rng.shuffle(order)
        ring.extend([per_plane[p][r] for p in order if r < len(per_plane[p])])
    return ring


@pytest.mark.parametrize("rng_type", [random.Random, type("Sub", (random.Random,), {})])
def test_ring_and_draws_are_the_reference_layouts(rng_type: type[random.Random]) -> None:
    # One plane (the shortcut: no per-round shuffles), several planes, unequal and empty
    # planes, gaps in the plane numbers: the same ring and the same generator state after.
    for seed in range(12):
        for counts in ((256,), (1,), (0,), (5, 5), (8, 3, 0, 8), (4, 4, 4, 4), (7, 2, 5)):
            planes = [3 * k for k in range(len(counts))]
            active = {
                p: [EvEntry(ev=(p << 20) | i, plane=p, path=(p, i % 3)) for i in range(n)]
                for p, n in zip(planes, counts, strict=True)
            }
            ours, ref = rng_type(seed), rng_type(seed)
            evs = EvSet(active, {}, min_active_per_plane=0, skip_ns=1, rng=ours)
            want = _reference_ring(planes, active, ref)
            assert [e.ev for e in evs.ring] == [e.ev for e in want]
            assert ours.getstate() == ref.getstate()
            # each plane's ring slots, and the EVs of each path in the order of by_ev
            assert evs._slots == [
                [i for i, e in enumerate(evs.ring) if e.plane == p] for p in planes
            ]
            want_paths: dict[object, list[EvEntry]] = {}
            for e in evs.by_ev.values():
                want_paths.setdefault(e.path, []).append(e)
            assert list(evs.by_path) == list(want_paths)
            assert all(
                [id(e) for e in evs.by_path[k]] == [id(e) for e in v] for k, v in want_paths.items()
            )


def test_plane_entries_take_the_t1s_routes_in_turn() -> None:
    routes = [(2, (2, "t1-0"), b"w0"), (2, (2, "t1-1"), b"w1"), (2, (2, "t1-2"), b"w2")]
    evs = tuple(0x2000_0000 + 17 * j for j in range(7))
    entries = plane_entries(2, evs, routes)
    assert [e.ev for e in entries] == list(evs)
    assert [(e.plane, e.path, e.wire) for e in entries] == [routes[j % 3] for j in range(7)]
    for e in entries:  # otherwise as a new entry: every field the constructor's default
        fresh = EvEntry(e.ev, 2, e.path)
        fresh.wire = e.wire
        assert {name: getattr(e, name) for name in ENTRY_FIELDS} == {
            name: getattr(fresh, name) for name in ENTRY_FIELDS
        }
    assert plane_entries(0, (), routes) == []
    assert set(getattr(EvEntry, "__slots__", ENTRY_FIELDS)) == set(ENTRY_FIELDS)


def _atomic(value: object) -> bool:
    """Whether ``value`` is a number, a string, bytes, None or a tuple of such: nothing
    that can refer to an object made later (an entry)."""
    if type(value) is tuple:
        return all(_atomic(v) for v in value)
    return value is None or isinstance(value, int | float | str | bytes)


def test_a_runs_entries_hold_nothing_that_can_refer_back_to_them() -> None:
    """EvEntry is untracked by the cycle collector on the native build (``cython.no_gc``):
    safe only as long as no entry holds what could refer back to it. Every field of every
    entry of an incast run over a lossy fabric (ECN skips with their ``skip_until``, losses,
    the backups) holds an atomic value; the native type is untracked, the pure class
    tracked as any slotted class."""
    from nic_emu.testing.model_fabric import LinkFault

    from .conftest import make_net, start_transfer

    net = make_net()
    net.fabric.set_fault_everywhere(LinkFault(drop_prob=0.002))
    senders = ["nic0", "nic1", "nic4", "nic6"]
    ts = [start_transfer(net, s, "nic2", 1 << 19, seed=i) for i, s in enumerate(senders)]
    assert net.run_until_idle([t.sender for t in ts], limit_ns=50_000_000)
    entries = [
        e
        for core in net.cores.values()
        for conn in core.connections.values()
        for e in [*conn.evs.by_ev.values(), *(b for g in conn.evs.backup.values() for b in g)]
    ]
    assert len(entries) >= 8 * 64  # 4 senders and 4 receivers, 64 EVs each
    assert {e.state for e in entries} > {GOOD}  # states other than the first were set
    assert any(e.skip_until for e in entries)
    for e in entries:
        held = {name: getattr(e, name) for name in ENTRY_FIELDS}
        assert all(_atomic(v) for v in held.values()), held
        assert type(e.wire) is bytes and type(e.path) is tuple and type(e.state) is EvState
    native = isinstance(nic_emu.ev_set.__spec__.loader, importlib.machinery.ExtensionFileLoader)
    assert {gc.is_tracked(e) for e in entries} == {not native}
