"""What a connection's parts ask of their NIC on every packet, as a base the NIC
(:class:`~nic_emu.core.NicCore`) derives from: when the peer was last heard from, in
all and per path, which ports are up (ours, and the peer's from its port-status
bitmap), and the payload placed.

It lies below both the core and the connection parts, so the native build can type the
parts' host as this base and call it in C without the parts importing the core (the
core imports them). docs/virtual-fabric.md, "NIC per packet, round 2".
"""

from __future__ import annotations

from topologies.addressing import EV_PLANE_SHIFT, EV_T1_SHIFT

PORT_STATUS_BITS = 8  # the SACK/NACK/probe port-status field is 8 bits: planes 0..7
NEVER = -(1 << 62)  # "long ago" for last-heard times
EV_KEYED = 1 << 62  # EVs below this (every 32-bit EV of the wire) are keyed as C integers
# the EV's field shifts, C values on the native build (nic_host.pxd)
_PLANE_SHIFT = EV_PLANE_SHIFT
_T1_SHIFT = EV_T1_SHIFT


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
        self._peer_paths: dict[str, dict[int, int]] = {}
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

    def heard_from(self, peer: str, ev: int, now: int) -> None:
        """A frame from ``peer`` arrived on ``ev``: the peer is alive and that path works."""
        self.peer_heard_ns[peer] = now
        key = self.path_key(ev)
        if key >= 0:
            paths = self._peer_paths.get(peer)
            if paths is None:
                paths = self._peer_paths[peer] = {}
            paths[key] = now

    def path_heard_ns(self, peer: str, key: int) -> int:
        """When a frame from ``peer`` last arrived on path ``key`` (very negative: never)."""
        paths = self._peer_paths.get(peer)
        return paths.get(key, NEVER) if paths is not None else NEVER

    def peer_port_up(self, peer: str) -> list[bool]:
        """Which of ``peer``'s ports are up (all until its bitmap says otherwise); the
        list itself, which :meth:`peer_ports_changed` updates."""
        found = self._peer_ports.get(peer)
        if found is None:
            found = [True] * self.plane_count
            self._peer_ports[peer] = found
        return found

    def note_peer_ports(self, peer: str, bits: int, now: int) -> None:
        """A port-status bitmap from ``peer``: when it differs from the last one,
        :meth:`peer_ports_changed` takes the planes whose bit changed down / up."""
        if self._peer_bits.get(peer) == bits:
            return
        self._peer_bits[peer] = bits
        self.peer_ports_changed(peer, bits, now)

    def peer_ports_changed(self, peer: str, bits: int, now: int) -> None:
        """The peer's new bitmap ``bits`` (the NIC's: its connections to ``peer``)."""
        raise NotImplementedError
