"""Per-connection entropy-value (EV) set and its state machine.

A connection sprays its packets over an *active* EV set split equally across planes,
keeps a *backup* set per plane to replace EVs it stops trusting, and probes retired
EVs in the background until they prove healthy again.

States (MRC spec reading, docs/sources.md §4.3-§4.4):

- GOOD: used by the rotation.
- SKIP: an ECN mark was echoed for it; avoided until ``skip_until`` (used only when no
  GOOD EV is left anywhere).
- ASSUMED_BAD: a packet sent on it was lost without a trim (or its plane is down);
  never used, probed, revived after ``probe_success_threshold`` consecutive successes.
- DENIED: retired by the management API; never used or probed until allowed again.

The active EVs form one ring, interleaved plane by plane (round r holds the r-th EV of
every plane, planes in a shuffled order; EVs within a plane shuffled). :meth:`EvSet.pick`
takes the planes in turn and, in the plane whose turn it is, the next usable EV of that
plane's slots: a plane's share does not depend on how many usable EVs it has left (one
healthy path is enough to keep its port loaded), only on whether it has one at all and
whether its port is free (given the ports' ``free_at``, a plane whose port is busy gives
its turn to one whose port is free: the NIC keeps every port it can loaded). ECN marks
move EVs to SKIP; a plane whose every EV is skipped drops out of the turns until one
expires, so the planes' shares follow their congestion signals.
"""

from __future__ import annotations

import _random
import enum
import random
from collections.abc import Callable, Hashable, Iterable
from typing import Any

import cython

from nic_emu.exceptions import EvManagementError

if cython.compiled:
    from cython.cimports.cpython.object import Py_GE, Py_GT, Py_LE
    from cython.cimports.nic_emu.ev_set import (
        nic_ev_cmp,
        nic_ev_items,
        nic_ev_presized,
        nic_ev_random_index,
        nic_ev_random_size,
        nic_ev_random_words,
    )
    from cython.cimports.nic_emu.mtbytes import nic_mt_temper1, nic_mt_twist


class EvState(enum.IntEnum):
    GOOD = 0
    SKIP = 1
    ASSUMED_BAD = 2
    DENIED = 3


GOOD = EvState.GOOD
SKIP = EvState.SKIP
ASSUMED_BAD = EvState.ASSUMED_BAD
DENIED = EvState.DENIED
#: the two states pick and its scan test (C globals on the native build: ev_set.pxd)
_GOOD = GOOD
_SKIP = SKIP
#: each state's name, indexed by the state (``STATE_NAMES[s] == s.name``, without the
#: enum's name property, a Python call, on every state change)
STATE_NAMES: tuple[str, ...] = tuple(s.name for s in EvState)


#: the generator whose ``shuffle`` :func:`shuffle` writes out (bound once: the native
#: build reads it as a C global, not ``random``'s attribute on every call)
_RANDOM = random.Random


def shuffle(rng: random.Random, x: list[Any]) -> None:
    """``rng.shuffle(x)``: the same draws from ``rng`` and the same order of ``x``.

    For a ``random.Random`` itself, ``Random.shuffle``'s loop with its
    ``_randbelow_with_getrandbits`` written out here (compiled, it runs in C and calls
    only ``getrandbits``: a connection's EV ring shuffles a few hundred EVs when it is
    set up); a list of fewer than two items draws nothing (``Random.shuffle``'s loop
    runs from ``len(x) - 1`` down to 1) and is left before ``getrandbits`` is looked up.
    Any other generator (a subclass may draw otherwise) shuffles by its own ``shuffle``.
    ``tests/nic_emu/test_ev_set.py`` compares the two draw for draw. Compiled, the loop
    and its draws are C (:func:`_c_shuffle`) when the generator's own words can be read
    (``_LAYOUT_OK``) and no ``getrandbits`` of the instance's own replaces the class's."""
    if type(rng) is not _RANDOM:
        rng.shuffle(x)
        return
    i = len(x) - 1
    if i <= 0:
        return
    if _LAYOUT_OK and i < _C_ITEMS_LIMIT and "getrandbits" not in rng.__dict__:
        _c_shuffle(rng, x)
        return
    getrandbits = rng.getrandbits
    while i > 0:
        n = i + 1  # j = randbelow(i + 1): k = n.bit_length() bits, redrawn while >= n
        k = 0
        b = n
        while b:
            k += 1
            b >>= 1
        j = getrandbits(k)
        while j >= n:
            j = getrandbits(k)
        x[i], x[j] = x[j], x[i]
        i -= 1


#: lists of at least this many items shuffle by getrandbits calls (a draw below
#: ``len(x)`` must fit one 32-bit word for :func:`_c_below`)
_C_ITEMS_LIMIT = 1 << 31


def _c_below(rng: object, n: int, k: int) -> int:
    """``rng._randbelow(n)`` (``0 < n < 2**32``, ``k`` its bit length) from the
    generator's own words, compiled only: ``getrandbits(k)`` for ``k <= 32`` is the top
    ``k`` bits of the next word tempered, and a word past the 624th twists the state
    first, as CPython's ``genrand_uint32`` does (mtbytes.pxd's twist and tempering, the
    same algorithm word for word). The state is the generator's, so the draws move it
    exactly as ``getrandbits`` would."""
    index = nic_ev_random_index(rng)
    words = nic_ev_random_words(rng)
    while True:
        if index[0] >= 624:
            nic_mt_twist(words)
            index[0] = 0
        j = nic_mt_temper1(words[index[0]]) >> (32 - k)
        index[0] += 1
        if j < n:
            return j


def _c_shuffle(rng: object, x: list[Any]) -> None:
    """:func:`shuffle`'s loop in C, compiled only (``_LAYOUT_OK``; ``len(x)`` below
    ``_C_ITEMS_LIMIT``): the same draws, the same swaps (two item pointers exchanged,
    their references unchanged), no Python call on the way."""
    items = nic_ev_items(x)
    i = len(x) - 1
    while i > 0:
        n = i + 1
        k = 0
        b = n
        while b:
            k += 1
            b >>= 1
        j = _c_below(rng, n, k)
        item = items[i]
        items[i] = items[j]
        items[j] = item
        i -= 1


def _below_by_getrandbits(rng: random.Random, n: int) -> int:
    """``Random._randbelow_with_getrandbits(n)`` written out: the reference draw."""
    k = n.bit_length()
    j = rng.getrandbits(k)
    while j >= n:
        j = rng.getrandbits(k)
    return j


def _layout_ok() -> bool:
    """Whether :func:`_c_below` may read a ``random.Random``'s words (the native build
    only; the pure build draws by ``getrandbits``): the C type's size is that of the
    layout ev_set.pxd declares, and draws from a state four words before its twist,
    below bounds of 2 to 32 bits, are getrandbits' own and leave the same state."""
    if not cython.compiled or _random.Random.__basicsize__ != nic_ev_random_size:
        return False
    ours, ref = _RANDOM(27), _RANDOM(27)
    version, words, gauss = ref.getstate()
    near_twist = (version, (*words[:-1], 620), gauss)
    ours.setstate(near_twist)
    ref.setstate(near_twist)
    for n in (2, 3, 5, 6, 100, 257, 65537, (1 << 31) - 1, 1 << 31, (1 << 32) - 1):
        if _c_below(ours, n, n.bit_length()) != _below_by_getrandbits(ref, n):
            return False
    return ours.getstate() == ref.getstate()


#: the compiled shuffle draws in C (see _layout_ok)
_LAYOUT_OK = _layout_ok()


def _gt(a: object, b: object) -> bool:
    """``a > b`` (pick's port times): compiled, two small ints from their digits
    (``nic_ev_cmp``, ev_set.pxd), anything else by Python's comparison."""
    if not cython.compiled:
        return a > b  # type: ignore[operator]
    return nic_ev_cmp(a, b, Py_GT)


def _le(a: object, b: object) -> bool:
    """``a <= b``, as :func:`_gt`."""
    if not cython.compiled:
        return a <= b  # type: ignore[operator]
    return nic_ev_cmp(a, b, Py_LE)


def _ge(a: object, b: object) -> bool:
    """``a >= b``, as :func:`_gt`."""
    if not cython.compiled:
        return a >= b  # type: ignore[operator]
    return nic_ev_cmp(a, b, Py_GE)


def _dict_for(n: int) -> dict[Any, Any]:
    """An empty dict for ``n`` keys: compiled, made at the size those need
    (``_PyDict_NewPresized``), so that filling it rehashes nothing (a dict grown from
    empty is rebuilt, every key inserted again, as it grows); pure, ``{}``. The same dict
    to every reader: its order is its inserts'."""
    if not cython.compiled:
        return {}
    return nic_ev_presized(n)


# Untracked by the cycle collector on the native build (``no_gc``, which Cython reads on
# the class here, not in the .pxd, and only above ``cclass``; both no-ops on the pure path,
# where the slotted class is tracked as any): no reference cycle can pass through an entry, as
# nothing it holds can refer back to it. Its C fields hold numbers and flags; its object
# fields hold ``ev`` an int, ``path`` the path key, a tuple of the plane (an int) and the
# T1's name (a str or None), ``state`` an EvState (an int enum: its members refer to
# their class, never to an entry), ``skip_until`` an int or a float (``now`` plus the
# configured skip time) and ``wire`` the carrier, bytes (``NicCore.ev_route``): all
# atomic. No class derives from it (tests/clikit/test_pxd.py refuses a declared subclass;
# a Python one would be tracked, but would not traverse these fields). Untracked, the
# 20,480 entries of a 32-host permutation are neither counted towards young collections
# nor scanned by them (docs/virtual-fabric.md, NIC per packet, round 9);
# tests/nic_emu/test_ev_set.py checks what a run's entries hold.
@cython.no_gc
@cython.cclass
class EvEntry:
    """One EV of one connection, with its state and per-EV counters.

    A plain slotted class rather than a dataclass (the native build makes it an
    extension type: ``nic_emu/ev_set.pxd``); compared by identity, as before."""

    __slots__ = (
        "acked_packets",
        "acked_sent_ns",
        "active",
        "ecn_marks",
        "ev",
        "first_tx_ns",
        "last_tx_ns",
        "losses",
        "nacks",
        "path",
        "plane",
        "probe_seq",
        "probe_successes",
        "probed_ns",
        "probes_ok",
        "probes_sent",
        "skip_until",
        "state",
        "state_changes",
        "tx_bytes",
        "tx_packets",
        "wire",
    )

    def __init__(
        self,
        ev: int,
        plane: int,
        path: Hashable,
        state: EvState = GOOD,
        active: bool = False,
        skip_until: int = 0,
        probe_seq: int = -1,
        probe_successes: int = 0,
        probed_ns: int = -1,
        acked_sent_ns: int = -1,
        wire: object = None,
        tx_packets: int = 0,
        tx_bytes: int = 0,
        acked_packets: int = 0,
        ecn_marks: int = 0,
        nacks: int = 0,
        losses: int = 0,
        probes_sent: int = 0,
        probes_ok: int = 0,
        first_tx_ns: int = -1,
        last_tx_ns: int = -1,
        state_changes: int = 0,
    ) -> None:
        self.ev = ev
        self.plane = plane
        self.path = path  # what the address plan says this EV crosses (e.g. plane and T1)
        self.state = state
        self.active = active
        self.skip_until = skip_until
        self.probe_seq = probe_seq  # sequence of the outstanding probe, -1 when none
        self.probe_successes = probe_successes
        self.probed_ns = probed_ns  # when its last probe left (probes rotate over a path's EVs)
        self.acked_sent_ns = acked_sent_ns  # send time of the latest-sent packet acknowledged on it
        self.wire = wire  # per-EV header template cached by the core
        self.tx_packets = tx_packets
        self.tx_bytes = tx_bytes
        self.acked_packets = acked_packets
        self.ecn_marks = ecn_marks
        self.nacks = nacks
        self.losses = losses
        self.probes_sent = probes_sent
        self.probes_ok = probes_ok
        self.first_tx_ns = first_tx_ns
        self.last_tx_ns = last_tx_ns
        self.state_changes = state_changes

    def counters(self) -> dict[str, object]:
        return {
            "ev": self.ev,
            "plane": self.plane,
            "path": str(self.path),
            "state": self.state.name,
            "active": self.active,
            "tx_packets": self.tx_packets,
            "tx_bytes": self.tx_bytes,
            "acked_packets": self.acked_packets,
            "ecn_marks": self.ecn_marks,
            "nacks": self.nacks,
            "losses": self.losses,
            "probes_sent": self.probes_sent,
            "probes_ok": self.probes_ok,
            "last_tx_ns": self.last_tx_ns,
        }


def plane_entries(
    plane: int,
    evs: tuple[int, ...],
    routes: list[tuple[int, Hashable, object]],
) -> list[EvEntry]:
    """New entries of ``plane`` (a connection's share of it, set up once): entry j has
    EV ``evs[j]`` and the route ``routes[j % len(routes)]`` of its T1, a (plane, path,
    wire) triple (``nic_emu.connection.ev_layout.plane_evs`` gives the EVs)."""
    t1s = len(routes)
    out: list[EvEntry] = []
    for j in range(len(evs)):
        on, path, wire = routes[j % t1s]
        out.append(_new_entry(evs[j], on, path, wire))
    return out


def _new_entry(ev: int, plane: int, path: Hashable, wire: object) -> EvEntry:
    """``EvEntry(ev, plane, path)`` with ``wire`` set. The native build makes it without
    the constructor's call (22 arguments parsed per entry, 320 entries per connection):
    the type's allocation (None, zero, False everywhere), then the constructor's
    non-zero defaults (tests/nic_emu/test_ev_set.py compares every field)."""
    if not cython.compiled:
        e = EvEntry(ev, plane, path)
        e.wire = wire
        return e
    e = EvEntry.__new__(EvEntry)
    e.ev = ev
    e.plane = plane
    e.path = path
    e.state = _GOOD
    e.skip_until = 0
    e.probe_seq = -1
    e.probed_ns = -1
    e.acked_sent_ns = -1
    e.wire = wire
    e.first_tx_ns = -1
    e.last_tx_ns = -1
    return e


#: how many distinct path objects :func:`by_path_of` finds by identity (a connection has
#: one per plane and T1: 4 in the 32-host permutation, 32 on ``paper-8plane``); a path
#: met after them is looked up in the dictionary at each of its EVs
PATHS_BY_IDENTITY = 64


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.locals(
    by_path=dict,
    seen=list,
    groups=list,
    group=list,
    e=EvEntry,
    k=cython.Py_ssize_t,
    n=cython.Py_ssize_t,
)
def by_path_of(entries: Iterable[EvEntry]) -> dict[Hashable, list[EvEntry]]:
    """``entries`` grouped by path, each path's list in their order and made at its first
    EV. A path object met before is found by identity among the first
    :data:`PATHS_BY_IDENTITY` distinct ones, without hashing it (a path is a tuple, whose
    hash is computed at every lookup; :func:`plane_entries` gives a T1's EVs one path
    object): the dictionary's lookup checks identity first too, so it would find the same
    list. Another object, equal or not, is looked up as before."""
    by_path = {}
    seen = []
    groups = []
    for e in entries:
        path = e.path
        group = None
        n = len(seen)
        for k in range(n):
            if seen[k] is path:
                group = groups[k]
                break
        if group is None:
            group = by_path.get(path)
            if group is None:
                group = []
                by_path[path] = group
            if n < PATHS_BY_IDENTITY:
                seen.append(path)
                groups.append(group)
        group.append(e)
    return by_path


# (entry, old state, new state, reason, now_ns)
ChangeCallback = Callable[[EvEntry, EvState, EvState, str, int], None]
FloorCallback = Callable[[EvEntry, str, int], None]
# (path, reason, now_ns): retire_path took a whole path out of service
PathCallback = Callable[[Hashable, str, int], None]


class EvSet:
    """The EV state machine of one connection (sans-IO: every call takes ``now``)."""

    @cython.locals(
        e=EvEntry,
        i=cython.Py_ssize_t,
        count=cython.Py_ssize_t,
        size=cython.Py_ssize_t,
        is_active=cython.bint,
        slots=list,
        position=dict,
        by_ev=dict,
    )
    def __init__(
        self,
        active: dict[int, list[EvEntry]],
        backup: dict[int, list[EvEntry]],
        *,
        min_active_per_plane: int,
        skip_ns: int,
        rng: random.Random,
        on_change: ChangeCallback | None = None,
        on_floor_hold: FloorCallback | None = None,
        on_path_retired: PathCallback | None = None,
        on_path_loss: PathCallback | None = None,
    ) -> None:
        self.planes: list[int] = sorted(active)
        self.min_active = min_active_per_plane
        self.skip_ns = skip_ns
        self._rng = rng
        self._on_change = on_change
        self._on_floor_hold = on_floor_hold
        self._on_path_retired = on_path_retired
        self._on_path_loss = on_path_loss
        self.backup: dict[int, list[EvEntry]] = {p: list(backup.get(p, [])) for p in self.planes}
        self.local_down: set[int] = set()
        self.remote_down: set[int] = set()
        # made for the entries it will hold (the lists' lengths: any other iterable
        # counts for none, and the dict grows as it fills)
        count = 0
        for entries in active.values():
            if type(entries) is list:
                count += len(entries)
        for entries in self.backup.values():
            count += len(entries)
        self.by_ev: dict[int, EvEntry] = _dict_for(count)
        by_ev = self.by_ev
        size = 0  # by_ev's, counted: each entry adds one (else the set is refused)
        for is_active, groups in ((True, active), (False, self.backup)):
            for plane, entries in groups.items():
                for e in entries:
                    if e.plane != plane:
                        self._refuse(e, plane)
                    # an EV already there leaves the size as it was (the insert is the
                    # lookup: no separate ``in``); the set is then refused, unused
                    by_ev[e.ev] = e
                    if len(by_ev) == size:
                        self._refuse(e, plane)
                    size += 1
                    e.active = is_active
        self.ring: list[EvEntry] = self._interleave(active)
        # Per plane, by its position in ``planes`` (list indexing, no dictionary lookup
        # per pick): its ring slots (a slot keeps its plane: replacements come from the
        # same plane) and the next slot to try; and whose turn it is among the planes.
        if len(self.planes) == 1:
            slots = [list(range(len(self.ring)))]  # every slot is the one plane's
        else:
            position = {p: k for k, p in enumerate(self.planes)}
            slots = [[] for _ in self.planes]
            for i, e in enumerate(self.ring):
                slots[position[e.plane]].append(i)
        self._slots: list[list[int]] = slots
        self._ppos: list[int] = [0] * len(self.planes)
        self._turn = 0
        # What unpick restores: the position of the plane last picked from (-1: nothing
        # to undo), that plane's next slot and the turn before that pick.
        self._undo_k = -1
        self._undo_pos = 0
        self._undo_turn = 0
        self.bad_count = 0  # EVs currently ASSUMED_BAD (active or backup)
        # The EVs of each path: they cross the same links, so they share a hard failure.
        self.by_path = by_path_of(by_ev.values())
        # Per path: (send time of the first lost packet, losses) while nothing sent on the
        # path after that packet has been acknowledged (see mark_bad).
        self._undelivered: dict[Hashable, tuple[int, int]] = {}
        # Quarantined paths (see quarantine): path -> (send time of the overdue packet,
        # when the quarantine began). Their EVs keep their state but are not picked.
        self.quarantined: dict[Hashable, tuple[int, int]] = {}

    def listen(
        self,
        on_change: ChangeCallback | None = None,
        on_floor_hold: FloorCallback | None = None,
        on_path_retired: PathCallback | None = None,
        on_path_loss: PathCallback | None = None,
    ) -> None:
        """Set the callbacks (as the constructor's) once the set exists: a connection's
        repath part, which listens, is built after the parts that use the set."""
        self._on_change = on_change
        self._on_floor_hold = on_floor_hold
        self._on_path_retired = on_path_retired
        self._on_path_loss = on_path_loss

    def _refuse(self, e: EvEntry, plane: int) -> None:
        """Raise the error for an entry listed under the wrong plane, or twice."""
        if e.plane != plane:
            raise EvManagementError(f"EV {e.ev:#x} is on plane {e.plane}, listed under {plane}")
        raise EvManagementError(f"EV {e.ev:#x} appears twice in the EV set")

    def _interleave(self, active: dict[int, list[EvEntry]]) -> list[EvEntry]:
        per_plane = {p: list(active[p]) for p in self.planes}
        for entries in per_plane.values():
            shuffle(self._rng, entries)
        if len(self.planes) == 1 and type(self._rng) is _RANDOM:
            # one plane: every round's order is that plane alone, whose shuffle draws
            # nothing from a random.Random (see shuffle): the ring is the plane's EVs
            return per_plane[self.planes[0]]
        ring: list[EvEntry] = []
        depth = max((len(v) for v in per_plane.values()), default=0)
        for r in range(depth):
            order = list(self.planes)
            shuffle(self._rng, order)
            ring.extend([per_plane[p][r] for p in order if r < len(per_plane[p])])
        return ring

    # -- selection ---------------------------------------------------------------

    def pick(self, now: int, free_at: list[int] | None = None) -> EvEntry | None:
        """The next EV: the planes take turns, each with the next GOOD EV of its own
        slots (an expired SKIP becomes GOOD). With ``free_at`` (per plane, when its port
        can take the next packet), a plane whose port is busy is passed over while
        another plane with a free port has an EV; if every such port is busy, the EV is
        from the plane whose port frees first (the caller waits for it)."""
        planes = self.planes
        n = len(planes)
        start = self._turn
        # First the planes whose port is free, in turn order: the first with an EV wins.
        # A busy plane is not scanned here (a scan has no side effect, so its outcome
        # waits until it could matter).
        busy = False
        for k in range(n):
            pos = (start + k) % n
            if free_at is not None:
                p = planes[pos]
                if _gt(free_at[p], now):
                    busy = True
                    continue
            i = self._scan(pos, now)
            if i >= 0:
                return self._take(pos, i, (start + k + 1) % n, now)
        if busy:
            # Every free plane lacks an EV: the busy plane whose port frees first (the
            # earliest in turn order among equals) among those with an EV. A plane whose
            # port frees no sooner than the best so far cannot win: it is not scanned.
            wait_k = -1
            wait_i = -1
            wait_free = 0
            for k in range(n):
                pos = (start + k) % n
                p = planes[pos]
                free = free_at[p]  # type: ignore[index]
                if _le(free, now) or (wait_k >= 0 and _ge(free, wait_free)):
                    continue
                i = self._scan(pos, now)
                if i >= 0:
                    wait_k = k
                    wait_i = i
                    wait_free = free
            if wait_k >= 0:
                return self._take((start + wait_k) % n, wait_i, (start + wait_k + 1) % n, now)
        self._undo_k = -1
        # No GOOD EV anywhere: a skipped EV is still better than not sending.
        best: EvEntry | None = None
        for e in self.ring:
            if e.state is SKIP and (best is None or e.skip_until < best.skip_until):
                best = e
        held = self.quarantined
        if best is None and held:
            # Every usable path is quarantined: a suspect path beats not sending at all.
            for e in self.ring:
                if e.state is GOOD:
                    return e
        return best

    def _scan(self, pos: int, now: int) -> int:
        """Index in the slots of the plane at ``pos`` in ``planes`` of its next pickable
        EV (-1: none)."""
        ring = self.ring
        slots = self._slots[pos]
        m = len(slots)
        i = self._ppos[pos]
        held = self.quarantined
        for _ in range(m):
            if i >= m:
                i = 0
            slot = slots[i]
            e = ring[slot]
            state = e.state
            if (state is _GOOD or (state is _SKIP and now >= e.skip_until)) and not (
                held and e.path in held
            ):
                return i
            i += 1
        return -1

    def _take(self, pos: int, i: int, turn: int, now: int) -> EvEntry:
        """Pick slot ``i`` of the plane at ``pos``; ``turn`` is the next plane's turn."""
        # the plane's slots and the ring slot read into typed locals (ev_set.pxd): list
        # indexing by a C integer, not a generic subscript of an object
        slots = self._slots[pos]
        slot = slots[i]
        e = self.ring[slot]
        if e.state is _SKIP:
            self._set(e, _GOOD, "skip_expired", now)
        ppos = self._ppos
        self._undo_k = pos
        self._undo_pos = ppos[pos]
        self._undo_turn = self._turn
        ppos[pos] = i + 1
        self._turn = turn
        return e

    def unpick(self) -> None:
        """Undo the last :meth:`pick`: the same EV comes first next time (its port was busy)."""
        if self._undo_k >= 0:
            self._ppos[self._undo_k] = self._undo_pos
            self._turn = self._undo_turn
            self._undo_k = -1

    def has_usable(self) -> bool:
        return any(e.state <= SKIP for e in self.ring)

    def plane_usable(self, plane: int) -> bool:
        return plane not in self.local_down and plane not in self.remote_down

    # -- signals -----------------------------------------------------------------

    def mark_skip(self, e: EvEntry, now: int) -> None:
        """ECN echoed for this EV: avoid it for ``skip_ns``."""
        e.ecn_marks += 1
        if e.state is GOOD:
            e.skip_until = now + self.skip_ns
            self._set(e, SKIP, "ecn", now)
        elif e.state is SKIP:
            e.skip_until = now + self.skip_ns

    def mark_bad(self, e: EvEntry, reason: str, now: int, *, sent_ns: int | None = None) -> bool:
        """Loss without a trim: stop using the EV now and replace it from the backups.

        With the lost packet's ``sent_ns``: when its path has delivered nothing sent after
        the first of two such losses, the whole path is retired (:meth:`retire_path`): its
        EVs cross the same links, and a path that delivers nothing is cut. A path that
        delivered later packets (a congested queue drops some, passes others) loses only
        the EV. The first such loss is reported to ``on_path_loss`` (the NIC weighs it
        with its other connections' evidence). Returns False when the ``ev_min_active`` floor kept the EV in service.
        """
        if sent_ns is not None:
            path = e.path
            delivered = max(x.acked_sent_ns for x in self.by_path[path])
            if delivered > sent_ns:
                self._undelivered.pop(path, None)
            else:
                first, count = self._undelivered.get(path, (sent_ns, 0))
                if delivered > first:  # something sent after the first loss got through
                    first, count = sent_ns, 0
                count += 1
                self._undelivered[path] = (min(first, sent_ns), count)
                if count >= 2:
                    self.retire_path(path, reason, now)
                elif self._on_path_loss is not None:
                    self._on_path_loss(path, reason, now)
        return self._retire(e, reason, now)

    def retire_path(self, path: Hashable, reason: str, now: int) -> int:
        """Every usable EV of ``path`` -> ASSUMED_BAD (the floor still applies); returns
        how many were retired. Probes revive them when the path works again. When any
        was, ``on_path_retired`` hears of it (after the state changes)."""
        self.quarantined.pop(path, None)
        count = 0
        for x in self.by_path.get(path, ()):
            if x.state <= SKIP and self._retire(x, "path_" + reason, now):
                count += 1
        if count and self._on_path_retired is not None:
            self._on_path_retired(path, reason, now)
        return count

    def _retire(self, e: EvEntry, reason: str, now: int) -> bool:
        if e.state >= ASSUMED_BAD:
            return True
        if e.active:
            replacement = self._best_backup(e.plane, e.path, allow_suspect=False)
            if replacement is None and self._usable_in_plane(e.plane) - 1 < self.min_active:
                if self._on_floor_hold is not None:
                    self._on_floor_hold(e, reason, now)
                return False
            self._set(e, ASSUMED_BAD, reason, now)
            if replacement is not None:
                self._swap(e, replacement)
        else:
            self._set(e, ASSUMED_BAD, reason, now)
        return True

    def delivered_ns(self, path: Hashable) -> int:
        """Send time of the latest-sent packet acknowledged on any EV of ``path``."""
        return max(x.acked_sent_ns for x in self.by_path[path])

    def usable_on_path(self, path: Hashable) -> EvEntry | None:
        """A GOOD or SKIP EV of ``path`` (None: none left)."""
        return next((x for x in self.by_path[path] if x.state <= SKIP), None)

    def quarantine(self, path: Hashable, sent_ns: int, now: int) -> bool:
        """A packet sent on ``path`` at ``sent_ns`` is overdue (later packets on other
        paths came back well before it) and nothing sent on the path since has been
        acknowledged: stop picking its EVs until :meth:`clear_quarantine` (it delivers
        again) or :meth:`retire_path` (it does not). MRC's reaction to a loss without a
        trim (sources §4.4) taken at the first sign, before the loss is certain: a path
        that is only slow costs one round trip out of the rotation, not a retirement.
        False if the path is already quarantined or has no usable EV."""
        if path in self.quarantined or self.usable_on_path(path) is None:
            return False
        self.quarantined[path] = (sent_ns, now)
        return True

    def clear_quarantine(self, path: Hashable) -> tuple[int, int] | None:
        """The path's EVs are picked again; returns what :meth:`quarantine` stored."""
        return self.quarantined.pop(path, None)

    def plane_down(self, plane: int, now: int, *, remote: bool) -> None:
        """A port (local or the peer's, from its port-status bitmap) went down."""
        (self.remote_down if remote else self.local_down).add(plane)
        reason = "remote_port_down" if remote else "local_port_down"
        for path in [p for p in self.quarantined if self.by_path[p][0].plane == plane]:
            del self.quarantined[path]
        for e in self._plane_entries(plane):
            if e.state <= SKIP:
                self._set(e, ASSUMED_BAD, reason, now)

    def plane_up(self, plane: int, *, remote: bool) -> None:
        """The port is back; its EVs stay ASSUMED_BAD until probes revive them."""
        (self.remote_down if remote else self.local_down).discard(plane)

    # -- probing -----------------------------------------------------------------

    def probe_candidates(self, per_path: int | None = None) -> list[EvEntry]:
        """ASSUMED_BAD EVs on planes that are up at both ends; with ``per_path``, at most
        that many per path, the ones probed longest ago first (the probe rate limit: a
        path's EVs share its fate, so probing a few of them tells about all)."""
        if not self.bad_count:
            return []
        if per_path is None:
            return [
                e
                for e in self.by_ev.values()
                if e.state is ASSUMED_BAD and self.plane_usable(e.plane)
            ]
        out: list[EvEntry] = []
        for entries in self.by_path.values():
            bad = [e for e in entries if e.state is ASSUMED_BAD and self.plane_usable(e.plane)]
            if len(bad) > per_path:
                # Keep probing the EVs that are on a success streak; rotate the rest.
                bad.sort(key=lambda e: (-e.probe_successes, e.probed_ns))
                bad = bad[:per_path]
            out.extend(bad)
        return out

    def outstanding_probes(self) -> list[EvEntry]:
        """EVs with a probe in flight."""
        return [e for e in self.by_ev.values() if e.probe_seq >= 0]

    def probe_answered(self, e: EvEntry, threshold: int, now: int) -> bool:
        """A probe on ``e`` came back; returns True when that revived the EV, and with it
        the other ASSUMED_BAD EVs of its path (they cross the same links)."""
        e.probe_seq = -1
        e.probes_ok += 1
        if e.state is not ASSUMED_BAD or not self.plane_usable(e.plane):
            return False
        e.probe_successes += 1
        if e.probe_successes < threshold:
            return False
        self._revive(e, "probes_ok", now)
        self.quarantined.pop(e.path, None)
        for x in self.by_path[e.path]:
            if x is not e and x.state is ASSUMED_BAD:
                self._revive(x, "path_probes_ok", now)
        return True

    def _revive(self, e: EvEntry, reason: str, now: int) -> None:
        self._set(e, GOOD, reason, now)
        if not e.active:
            slot = self._dead_slot(e.plane)
            if slot is not None:
                self._swap(self.ring[slot], e)

    def probe_unanswered(self, e: EvEntry) -> None:
        e.probe_seq = -1
        e.probe_successes = 0

    # -- management --------------------------------------------------------------

    def deny(self, ev: int, now: int) -> EvEntry:
        e = self._lookup(ev)
        if e.state is not DENIED:
            self._set(e, DENIED, "management", now)
            if e.active:
                replacement = self._best_backup(e.plane, None, allow_suspect=True)
                if replacement is not None:
                    self._swap(e, replacement)
        return e

    def allow(self, ev: int, now: int) -> EvEntry:
        e = self._lookup(ev)
        if e.state is DENIED:
            new = GOOD if self.plane_usable(e.plane) else ASSUMED_BAD
            self._set(e, new, "management", now)
        return e

    # -- counters ----------------------------------------------------------------

    def state_counts(self) -> dict[int, dict[str, int]]:
        """Per plane: how many active and backup EVs are in each state."""
        out: dict[int, dict[str, int]] = {}
        for p in self.planes:
            counts = {
                f"{s.name.lower()}_{kind}": 0 for s in EvState for kind in ("active", "backup")
            }
            out[p] = counts
        for e in self.by_ev.values():
            out[e.plane][f"{e.state.name.lower()}_{'active' if e.active else 'backup'}"] += 1
        return out

    def entries(self) -> Iterable[EvEntry]:
        return self.by_ev.values()

    # -- internals ---------------------------------------------------------------

    def _set(self, e: EvEntry, new: EvState, reason: str, now: int) -> None:
        old = e.state
        if old is new:
            return
        if old is ASSUMED_BAD:
            self.bad_count -= 1
        if new is ASSUMED_BAD:
            self.bad_count += 1
            e.probe_successes = 0
            e.probe_seq = -1
        e.state = new
        e.state_changes += 1
        if self._on_change is not None:
            self._on_change(e, old, new, reason, now)

    def _lookup(self, ev: int) -> EvEntry:
        e = self.by_ev.get(ev)
        if e is None:
            raise EvManagementError(f"EV {ev:#x} is not in this connection's EV set")
        return e

    def _plane_entries(self, plane: int) -> list[EvEntry]:
        return [e for e in self.by_ev.values() if e.plane == plane]

    def _usable_in_plane(self, plane: int) -> int:
        return sum(1 for e in self.ring if e.plane == plane and e.state <= SKIP)

    def _best_backup(
        self, plane: int, exclude_path: Hashable | None, *, allow_suspect: bool
    ) -> EvEntry | None:
        """A GOOD backup of the plane on a path with no retired EV (a path that just lost a
        packet is likely dead for its sibling EVs too); a suspect one only if allowed."""
        candidates = [e for e in self.backup[plane] if e.state is GOOD]
        if not candidates:
            return None
        suspect = {
            e.path for e in self.by_ev.values() if e.plane == plane and e.state is ASSUMED_BAD
        }
        if exclude_path is not None:
            suspect.add(exclude_path)
        for e in candidates:
            if e.path not in suspect:
                return e
        return candidates[0] if allow_suspect else None

    def _dead_slot(self, plane: int) -> int | None:
        for i, e in enumerate(self.ring):
            if e.plane == plane and e.state >= ASSUMED_BAD:
                return i
        return None

    def _swap(self, out: EvEntry, into: EvEntry) -> None:
        """Put backup ``into`` in the ring slot of active ``out``; ``out`` becomes backup."""
        slot = self.ring.index(out)
        self.ring[slot] = into
        pool = self.backup[out.plane]
        pool.remove(into)
        pool.append(out)
        into.active = True
        out.active = False
