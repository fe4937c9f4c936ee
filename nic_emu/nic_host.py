"""What a connection's parts ask of their NIC on every packet, as a base the NIC
(:class:`~nic_emu.core.NicCore`) derives from: when the peer was last heard from, in
all and per path, which ports are up (ours, and the peer's from its port-status
bitmap), and the payload placed.

It lies below both the core and the connection parts, so the native build can type the
parts' host as this base and call it in C without the parts importing the core (the
core imports them). docs/virtual-fabric.md, "NIC per packet, round 2".
"""

from __future__ import annotations

import cython

from topologies.addressing import EV_PLANE_SHIFT, EV_T1_SHIFT

if cython.compiled:  # an EV and a time read as C integers (nic_host.pxd)
    from cython.cimports.nic_emu.nic_host import NIC_NS_INEXACT, nic_ev_ll, nic_ns_ll

PORT_STATUS_BITS = 8  # the SACK/NACK/probe port-status field is 8 bits: planes 0..7
NEVER = -(1 << 62)  # "long ago" for last-heard times
EV_KEYED = 1 << 62  # EVs below this (every 32-bit EV of the wire) are keyed as C integers
# the EV's field shifts, C values on the native build (nic_host.pxd)
_PLANE_SHIFT = EV_PLANE_SHIFT
_T1_SHIFT = EV_T1_SHIFT
_T1_FIELD = (1 << (EV_PLANE_SHIFT - EV_T1_SHIFT)) - 1  # a path key's T1 index bits
_KEY_END = EV_KEYED >> EV_T1_SHIFT  # every path key of an EV below EV_KEYED is below it
_TIME_LIMIT = 1 << 61  # times and periods read as C integers up to it (time_reached)
_NO_PEER = object()  # NicHost._last_peer before any: no peer's name is this object


def time_reached(now: int, since: int, period: int) -> bool:
    """``now - since >= period``: on the native build in C integers when all three are
    ints of magnitude at most 2**61 (the driver's ns, a configured period;
    their difference cannot overflow), else (a float) the Python expression."""
    if cython.compiled:
        n = nic_ns_ll(now, _TIME_LIMIT)
        t = nic_ns_ll(since, _TIME_LIMIT)
        p = nic_ns_ll(period, _TIME_LIMIT)
        if n != NIC_NS_INEXACT and t != NIC_NS_INEXACT and p != NIC_NS_INEXACT:
            return n - t >= p
    return now - since >= period


class NicHost:
    """The per-packet state of a NIC with ``plane_count`` planes whose planes have
    ``t1_counts`` T1 switches each; :meth:`peer_ports_changed` is the NIC's."""

    def __init__(self, plane_count: int, t1_counts: list[int]) -> None:
        self.plane_count = plane_count
        self._t1_counts = t1_counts
        self.port_up = [True] * plane_count  # our ports
        self._peer_ports: dict[str, list[bool]] = {}  # each peer's ports, per its bitmap
        self._peer_bits: dict[str, int] = {}  # last port-status bitmap seen per peer
        # When each peer was last heard from, in all and per path (plane, T1 index): a
        # path that just carried a frame from the peer carries frames back to it (faults
        # of links, ports and switches cut both directions).
        self.peer_heard_ns: dict[str, int] = {}
        # Per peer, one time per path of the fabric (NEVER until heard), a path at its
        # plane's base plus its T1 index: set and read by index, with no int key made or
        # hashed per frame. A plane's T1 indexes are those of the key's field (at most
        # its 4096), the ones below the plane's T1 count (path_key's others are -1).
        self._path_base: list[int] = []
        total = 0
        for t1_count in t1_counts:
            self._path_base.append(total)
            total += max(0, min(t1_count, _T1_FIELD + 1))
        self._path_total = total
        self._peer_paths: dict[str, list[int]] = {}
        # The peer heard_from last found in _peer_paths, and its times: a NIC hears from
        # few peers, often from one several frames in a row (a run of data, a run of
        # acknowledgements), and that peer's list is then found by identity, with no dict
        # lookup. _NO_PEER, no peer's name, until the first.
        self._last_peer: object = _NO_PEER
        self._last_paths: list[int] = []
        # The same for the peer whose ports peer_port_up gave last (a connection's
        # acknowledgements go to one peer) and whose bitmap note_peer_ports read last
        # (_peer_bits' value for it, None when it had none).
        self._ports_peer: object = _NO_PEER
        self._ports_last: list[bool] = []
        self._bits_peer: object = _NO_PEER
        self._bits_last: object = None
        self.placed_bytes = 0  # payload placed for the applications, each byte once

    def path_key(self, ev: int) -> int:
        """The path an EV of this fabric names (plane and T1 index), -1 for EVs whose
        fields lie beyond the fabric (never one of ours)."""
        if not 0 <= ev < EV_KEYED:
            # A negative EV has a negative plane; one of 2**62 or more a plane of 2**34 or
            # more, more than any NIC's planes (it has a port per plane): neither is ours.
            return -1
        return self._path_key(ev)

    def _path_key(self, ev: int) -> int:
        """:meth:`path_key` of an EV in [0, EV_KEYED): C integers on the native build."""
        plane = ev >> _PLANE_SHIFT
        if plane >= self.plane_count:
            return -1
        key = ev >> _T1_SHIFT
        t1_count: int = self._t1_counts[plane]
        return key if key & 0xFFF < t1_count else -1

    def _key_index(self, key: int) -> int:
        """The place of path ``key`` (in [0, _KEY_END)) in a peer's list of times, -1
        for a key :meth:`path_key` never gives (a plane or T1 index beyond the fabric)."""
        plane = key >> (_PLANE_SHIFT - _T1_SHIFT)
        if plane >= self.plane_count:
            return -1
        t1 = key & _T1_FIELD
        t1_count: int = self._t1_counts[plane]
        if t1 >= t1_count:
            return -1
        base: int = self._path_base[plane]
        return base + t1

    def _ev_index(self, ev: int) -> int:
        """The place of ``ev``'s path in a peer's list of times, -1 for an EV beyond the
        fabric (:meth:`path_key` -1). The native build reads an int's value in C
        (``nic_ev_ll``); anything else takes the Python expressions, which raise for a
        non-int as :meth:`path_key` does."""
        if cython.compiled:
            e = nic_ev_ll(ev)  # -1: an int outside [0, EV_KEYED); -2: not an int
            if e != -2:
                return self._key_index(e >> _T1_SHIFT) if e >= 0 else -1
        if not 0 <= ev < EV_KEYED:
            return -1
        return self._key_index(ev >> _T1_SHIFT)

    def heard_from(self, peer: str, ev: int, now: int) -> None:
        """A frame from ``peer`` arrived on ``ev``: the peer is alive and that path works."""
        self.peer_heard_ns[peer] = now
        i = self._ev_index(ev)
        if i >= 0:
            if peer is self._last_peer:
                paths = self._last_paths
            else:
                found = self._peer_paths.get(peer)
                if found is None:
                    found = self._peer_paths[peer] = [NEVER] * self._path_total
                self._last_peer = peer
                self._last_paths = paths = found
            paths[i] = now

    def path_heard_ns(self, peer: str, key: int) -> int:
        """When a frame from ``peer`` last arrived on path ``key`` (very negative: never;
        so for -1, :meth:`path_key`'s answer for an EV beyond the fabric)."""
        paths = self._peer_paths.get(peer)
        if paths is None or not 0 <= key < _KEY_END:
            return NEVER
        i = self._key_index(key)
        return paths[i] if i >= 0 else NEVER

    def ev_heard_ns(self, peer: str, ev: int) -> int:
        """``path_heard_ns(peer, path_key(ev))`` in one call, with no key made."""
        i = self._ev_index(ev)
        paths = self._last_paths if peer is self._last_peer else self._peer_paths.get(peer)
        return paths[i] if paths is not None and i >= 0 else NEVER

    def peer_port_up(self, peer: str) -> list[bool]:
        """Which of ``peer``'s ports are up (all until its bitmap says otherwise); the
        list itself, which :meth:`peer_ports_changed` updates."""
        if peer is self._ports_peer:
            return self._ports_last
        found = self._peer_ports.get(peer)
        if found is None:
            found = [True] * self.plane_count
            self._peer_ports[peer] = found
        self._ports_peer = peer
        self._ports_last = found
        return found

    def note_peer_ports(self, peer: str, bits: int, now: int) -> None:
        """A port-status bitmap from ``peer``: when it differs from the last one,
        :meth:`peer_ports_changed` takes the planes whose bit changed down / up."""
        if peer is self._bits_peer:
            last = self._bits_last
        else:
            last = self._peer_bits.get(peer)
            self._bits_peer = peer
            self._bits_last = last
        if last == bits:
            return
        self._peer_bits[peer] = bits
        self._bits_last = bits
        self.peer_ports_changed(peer, bits, now)

    def peer_ports_changed(self, peer: str, bits: int, now: int) -> None:
        """The peer's new bitmap ``bits`` (the NIC's: its connections to ``peer``)."""
        raise NotImplementedError
