"""The reverse EV set of one connection: which plane and EV each SACK/NACK takes back to
the peer (``reverse_evs_per_plane`` slots per plane, refreshed from the EVs the peer's
traffic arrives on, planes chosen in turn among those heard from recently)."""

from __future__ import annotations

from typing import Protocol

import cython

from nic_emu.config import NicConfig
from nic_emu.connection.common import REVERSE_SALT_BASE
from topologies import AddressPlan, Path

if cython.compiled:  # times read as C integers (nic_host.pxd)
    from cython.cimports.nic_emu.nic_host import NIC_NS_INEXACT, nic_ns_ll

NEVER = -(1 << 62)  # "long ago" for a plane never heard from
# pick's C path (native build): a plane's last-heard time is read in C up to |NEVER|, now
# and the periods up to 2**61, so that a difference of two stays within 63 bits
_HEARD_LIMIT = 1 << 62
_PERIOD_LIMIT = 1 << 61
_NOT_EXACT = object()  # _pick_exact's answer when a time is not such an int


class ReverseHost(Protocol):
    """What the reverse EV set asks of its NIC: paths toward the peer, and which ports
    (ours and the peer's) are up and which paths the peer was heard on."""

    plan: AddressPlan
    plane_count: int
    port_up: list[bool]

    def path(self, peer: str, ev: int) -> Path: ...

    def path_or_none(self, peer: str, ev: int) -> bytes | None: ...

    def plan_ev_plane(self, ev: int) -> int: ...

    def peer_port_up(self, peer: str) -> list[bool]: ...

    def ev_heard_ns(self, peer: str, ev: int) -> int: ...


class ReverseEvs:
    """Slots of reverse EVs per plane and when each plane was last heard from."""

    def __init__(
        self,
        host: ReverseHost,
        cfg: NicConfig,
        peer: str,
        qpn: int,
        now: int,
        single: tuple[int, int] | None,
    ) -> None:
        """``single`` is the (plane, EV) of a baseline (RoCE) connection's one path:
        acknowledgements follow it back, and the set never refreshes."""
        planes = host.plane_count
        self.host = host
        self.peer = peer
        self.mrc = single is None
        self.slots: list[list[int]] = []
        self.pos = [0] * planes
        self.refreshed = [now] * planes
        self.heard = [NEVER] * planes
        self.last_ev: list[int | None] = [None] * planes  # latest EV heard per plane
        self.carrier: dict[int, bytes] = {}
        self.refresh_ns = cfg.reverse_refresh_ns
        self.stale_ns = cfg.reverse_plane_stale_ns
        self.plane_rr = 0
        if single is not None:
            plane, ev = single
            self.slots = [[] for _ in range(planes)]
            self.slots[plane] = [ev]
            self.carrier[ev] = host.path(peer, ev).carrier_bytes
            return
        plan = host.plan
        per_plane = cfg.reverse_evs_per_plane
        for p in range(planes):
            t1_count = plan.topology.planes[p].t1_count
            evs = []
            for j in range(per_plane):
                salt = REVERSE_SALT_BASE + (qpn * 7 + j // t1_count) % REVERSE_SALT_BASE
                ev = plan.make_ev(p, (qpn + j) % t1_count, salt)
                evs.append(ev)
                self.carrier[ev] = host.path(peer, ev).carrier_bytes
            self.slots.append(evs)

    def seen(self, plane: int, ev: int, now: int) -> None:
        """A frame from the peer arrived on ``plane`` with ``ev`` (no refresh)."""
        self.heard[plane] = now
        self.last_ev[plane] = ev

    def heard_on(self, plane: int, ev: int, now: int) -> None:
        """A frame from the peer arrived on ``plane`` with ``ev``: once per
        ``reverse_refresh_ns`` per plane, ``ev`` replaces the oldest slot of its plane."""
        self.heard[plane] = now
        self.last_ev[plane] = ev
        if not self.mrc or now - self.refreshed[plane] < self.refresh_ns:
            return
        self.refreshed[plane] = now
        slots = self.slots[plane]
        host = self.host
        if ev in slots or host.plan_ev_plane(ev) != plane:
            return
        carrier = host.path_or_none(self.peer, ev)
        if carrier is None:
            return
        old = slots.pop(0)
        self.carrier.pop(old, None)
        slots.append(ev)
        self.carrier[ev] = carrier

    def pick(self, now: int) -> tuple[int, int] | None:
        """(plane, EV) for the next SACK/NACK: planes up at both ends, heard from recently.

        "Recently" is within ``reverse_plane_stale_ns`` of now and within
        ``reverse_refresh_ns`` of the latest arrival (of any plane, then of the plane for
        its paths): a plane or path that stopped delivering while the others go on is
        skipped at once, not only when it goes stale."""
        if cython.compiled:
            # The same choice on C integers when every time is an int in range (the
            # driver's ns, the configured periods); a float takes the Python below.
            found = self._pick_exact(now)
            if found is not _NOT_EXACT:
                return found
        host = self.host
        planes = host.plane_count
        peer_up = host.peer_port_up(self.peer)
        port_up = host.port_up
        heard = self.heard
        slots = self.slots
        stale = now - self.stale_ns
        refresh = self.refresh_ns
        latest = heard[0]  # max(heard), without the builtin's call (a NIC has a port)
        for i in range(1, len(heard)):
            if heard[i] > latest:
                latest = heard[i]
        fresh = max(stale, latest - refresh)
        fallback = -1
        start = self.plane_rr
        for i in range(planes):
            p = start + i
            if p >= planes:
                p -= planes
            if not (port_up[p] and peer_up[p] and slots[p]):
                continue
            if heard[p] >= fresh:
                self.plane_rr = p + 1 if p + 1 < planes else 0
                return p, self._fresh(p, max(stale, heard[p] - refresh))
            if fallback < 0:
                fallback = p
        if fallback < 0:
            return None
        self.plane_rr = (fallback + 1) % planes
        return fallback, self._next(fallback)

    def _pick_exact(self, now: int) -> object:
        """:meth:`pick` on C integers (the native build's; the pure build never calls
        it), or ``_NOT_EXACT`` (nothing done) when ``now``, a period or a plane's
        last-heard time is not an int of :func:`nic_ns_ll`'s range."""
        n = nic_ns_ll(now, _PERIOD_LIMIT)
        stale_ns = nic_ns_ll(self.stale_ns, _PERIOD_LIMIT)
        refresh = nic_ns_ll(self.refresh_ns, _PERIOD_LIMIT)
        if n == NIC_NS_INEXACT or stale_ns == NIC_NS_INEXACT or refresh == NIC_NS_INEXACT:
            return _NOT_EXACT
        heard = self.heard
        latest = nic_ns_ll(heard[0], _HEARD_LIMIT)
        if latest == NIC_NS_INEXACT:
            return _NOT_EXACT
        for i in range(1, len(heard)):
            t = nic_ns_ll(heard[i], _HEARD_LIMIT)
            if t == NIC_NS_INEXACT:
                return _NOT_EXACT
            if t > latest:
                latest = t
        stale = n - stale_ns
        fresh = latest - refresh
        if stale > fresh:
            fresh = stale
        host = self.host
        planes = host.plane_count
        peer_up = host.peer_port_up(self.peer)
        port_up = host.port_up
        slots = self.slots
        fallback = -1
        start = self.plane_rr
        for i in range(planes):
            p = start + i
            if p >= planes:
                p -= planes
            if not (port_up[p] and peer_up[p] and slots[p]):
                continue
            t = nic_ns_ll(heard[p], _HEARD_LIMIT)  # an int in range: read above
            if t >= fresh:
                self.plane_rr = p + 1 if p + 1 < planes else 0
                t -= refresh
                return p, self._fresh(p, t if t > stale else stale)
            if fallback < 0:
                fallback = p
        if fallback < 0:
            return None
        self.plane_rr = (fallback + 1) % planes
        return fallback, self._next(fallback)

    def _fresh(self, plane: int, stale: int) -> int:
        """The next reverse EV of ``plane`` on a path the peer was heard on recently; if
        no slot has one, the latest EV heard on the plane takes the oldest slot (a path
        that just delivered from the peer is the best bet for the way back)."""
        host = self.host
        slots = self.slots[plane]
        n = len(slots)
        start = self.pos[plane]
        for k in range(n):
            i = (start + k) % n
            ev = slots[i]
            if host.ev_heard_ns(self.peer, ev) >= stale:
                self.pos[plane] = i + 1
                return ev
        last = self.last_ev[plane]
        if (
            self.mrc
            and last is not None
            and host.plan_ev_plane(last) == plane
            and host.ev_heard_ns(self.peer, last) >= stale
        ):
            carrier = host.path_or_none(self.peer, last)
            if carrier is not None:
                i = start % n
                self.carrier.pop(slots[i], None)
                slots[i] = last
                self.carrier[last] = carrier
                self.pos[plane] = i + 1
                return last
        return self._next(plane)

    def _next(self, plane: int) -> int:
        slots = self.slots[plane]
        i = self.pos[plane] % len(slots)
        self.pos[plane] = i + 1
        return slots[i]
