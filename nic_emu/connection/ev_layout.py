"""Which EVs a connection uses (docs/nic-emu.md section 3): an MRC connection's active
and backup EVs, split equally across planes and spread over each plane's T1s; a RoCE
QP's one EV (section 5). Pure layout: the EV set itself is :class:`nic_emu.ev_set.EvSet`.
"""

from __future__ import annotations

import zlib
from functools import lru_cache
from typing import Protocol

from nic_emu.config import NicConfig
from nic_emu.ev_set import EvEntry, plane_entries
from topologies import AddressPlan, encode_ev

EvRoute = tuple[int, tuple[int, str | None], bytes]  # plane, path key (plane, T1), carrier
#: the (plane, count, T1 count) shares whose EVs :func:`plane_evs` keeps: every connection
#: of a run asks for the same few (one per plane and configuration); more are made again
PLANE_EVS_KEPT = 256


class RouteHost(Protocol):
    """What the layout asks of the NIC: its name, its plan and each EV's route."""

    name: str
    plan: AddressPlan
    plane_count: int

    def ev_route(self, peer: str, ev: int) -> EvRoute:
        """(plane, path key, carrier bytes) of ``ev``'s path to ``peer``."""
        ...


def entry(host: RouteHost, peer: str, ev: int, route: EvRoute | None = None) -> EvEntry:
    """The EV-set entry of ``ev``; ``route`` is ``host.ev_route(peer, ev)`` if known."""
    plane, path, wire = host.ev_route(peer, ev) if route is None else route
    e = EvEntry(ev=ev, plane=plane, path=path)
    e.wire = wire
    return e


@lru_cache(maxsize=PLANE_EVS_KEPT)
def plane_evs(plane: int, count: int, t1_count: int) -> tuple[int, ...]:
    """The EVs of a connection's ``count`` entries of ``plane`` (whose T1s are
    ``t1_count``): EV j is ``encode_ev(plane, j % t1_count, j // t1_count)``, T1 j mod the
    T1 count and a salt growing every round of the T1s. The same for every connection
    (made once: 320 ``encode_ev`` calls per connection otherwise); ``encode_ev``'s
    AddressingError when a field does not fit."""
    return tuple(encode_ev(plane, j % t1_count, j // t1_count) for j in range(count))


def mrc_entries(
    host: RouteHost, cfg: NicConfig, peer: str
) -> tuple[dict[int, list[EvEntry]], dict[int, list[EvEntry]]]:
    """(active, backup) entries per plane: ``evs_per_connection`` and
    ``backup_evs_per_connection`` split equally across planes (the first planes take the
    remainder); EV j of a plane takes T1 j mod the plane's T1 count."""
    planes = host.plane_count
    active: dict[int, list[EvEntry]] = {}
    backup: dict[int, list[EvEntry]] = {}
    n_active, n_backup = cfg.evs_per_connection, cfg.backup_evs_per_connection
    for p in range(planes):
        want_active = n_active // planes + (p < n_active % planes)
        want_backup = n_backup // planes + (p < n_backup % planes)
        t1_count = host.plan.topology.planes[p].t1_count
        # EV j takes T1 j mod t1_count (in range by construction: no make_ev check),
        # whose route all EVs through that T1 share (the salt picks no path): the route
        # of the T1's EV of salt 0
        routes = [host.ev_route(peer, ev) for ev in plane_evs(p, t1_count, t1_count)]
        entries = plane_entries(p, plane_evs(p, want_active + want_backup, t1_count), routes)
        active[p] = entries[:want_active]
        backup[p] = entries[want_active:]
    return active, backup


def roce_entry(host: RouteHost, peer: str, qpn: int, peer_qpn: int) -> EvEntry:
    """One path per RoCE QP (docs/nic-emu.md section 5): the NIC puts its QPs on its
    ports in turn (QPN modulo the ports), and the T0 picks the T1 by an ECMP hash of
    the QP's 5-tuple (addresses, UDP source port from the QPNs, 4791), which the EV
    carries here as SRv6 switches do not hash (sources §1.4)."""
    key = f"{host.name}|{peer}|{qpn}|{peer_qpn}|4791".encode()
    h = zlib.crc32(key)
    plane = qpn % host.plane_count
    t1 = (h >> 8) % host.plan.topology.planes[plane].t1_count
    return entry(host, peer, host.plan.make_ev(plane, t1, (h >> 16) & 0x7FFF))
