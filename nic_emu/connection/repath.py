"""Repath: building the EV set (``nic_emu.ev_set``), its state changes, the EV probes
that revive retired EVs, and ports going down and up (ours, or the peer's).
"""

from __future__ import annotations

import zlib

from nic_emu import event_log as ev_kinds
from nic_emu.connection.common import QpState
from nic_emu.connection.host import EvRoute
from nic_emu.ev_set import ASSUMED_BAD, EvEntry, EvSet, EvState
from topologies import encode_ev

SHARED = "shared"  # the reason of a path retired on a sibling connection's verdict


class RepathMixin:
    """Mixed into :class:`~nic_emu.connection.queue_pair.Connection`, whose
    ``__init__`` sets up the state used here."""

    def _entry(self, ev: int, route: EvRoute | None = None) -> EvEntry:
        """The entry of ``ev``; ``route`` is ``NicCore.ev_route(peer, ev)`` if known."""
        plane, path, wire = self.nic.ev_route(self.peer, ev) if route is None else route
        e = EvEntry(ev=ev, plane=plane, path=path)
        e.wire = wire
        return e

    def _build_mrc_evs(self, now: int) -> EvSet:
        cfg = self.cfg
        nic = self.nic
        planes = nic.plane_count
        active: dict[int, list[EvEntry]] = {}
        backup: dict[int, list[EvEntry]] = {}
        n_active, n_backup = cfg.evs_per_connection, cfg.backup_evs_per_connection
        for p in range(planes):
            want_active = n_active // planes + (p < n_active % planes)
            want_backup = n_backup // planes + (p < n_backup % planes)
            t1_count = nic.plan.topology.planes[p].t1_count
            # EV j takes T1 j mod t1_count (in range by construction: no make_ev check),
            # whose route all EVs through that T1 share (the salt picks no path)
            routes = [nic.ev_route(self.peer, encode_ev(p, t1)) for t1 in range(t1_count)]
            entries = [
                self._entry(encode_ev(p, j % t1_count, j // t1_count), routes[j % t1_count])
                for j in range(want_active + want_backup)
            ]
            active[p] = entries[:want_active]
            backup[p] = entries[want_active:]
        return EvSet(
            active,
            backup,
            min_active_per_plane=cfg.ev_min_active,
            skip_ns=cfg.ev_skip_ns,
            rng=self._rng,
            on_change=self._on_ev_change,
            on_floor_hold=self._on_floor_hold,
            on_path_retired=self._on_path_retired,
            on_path_loss=self._on_path_loss,
        )

    def _build_roce_ev(self, now: int) -> EvSet:
        """One path per RoCE QP (docs/nic-emu.md section 5): the NIC puts its QPs on its
        ports in turn (QPN modulo the ports), and the T0 picks the T1 by an ECMP hash of
        the QP's 5-tuple (addresses, UDP source port from the QPNs, 4791), which the EV
        carries here as SRv6 switches do not hash (sources §1.4)."""
        nic = self.nic
        key = f"{nic.name}|{self.peer}|{self.qpn}|{self.peer_qpn}|4791".encode()
        h = zlib.crc32(key)
        plane = self.qpn % nic.plane_count
        t1 = (h >> 8) % nic.plan.topology.planes[plane].t1_count
        e = self._entry(nic.plan.make_ev(plane, t1, (h >> 16) & 0x7FFF))
        return EvSet(
            {plane: [e]},
            {},
            min_active_per_plane=0,
            skip_ns=self.cfg.ev_skip_ns,
            rng=self._rng,
            on_change=self._on_ev_change,
        )

    def _on_ev_change(self, e: EvEntry, old: EvState, new: EvState, reason: str, now: int) -> None:
        self.log.about_ev(
            now,
            ev_kinds.EV_STATE,
            e,
            old=old.name,
            new=new.name,
            reason=reason,
            last_tx_ns=e.last_tx_ns,
        )
        if new is ASSUMED_BAD:
            self.probes.arm(now)

    def _on_path_retired(self, path: object, reason: str, now: int) -> None:
        """A whole path was retired (docs/nic-emu.md section 3, "Paths"): the packets in
        flight on it are lost with it, so they are resent elsewhere now, as for a port
        that went down, rather than one timeout each; and unless the verdict came from
        the NIC (``shared``), the NIC shares it with the connections whose paths cross
        the same failed element (:meth:`NicCore.path_failed`). Both only with
        ``NicConfig.path_verdicts``."""
        if self.state is not QpState.READY or not self.cfg.path_verdicts:
            return
        send = self.send
        for pkt in send.in_flight_on_path(path):
            send.mark_lost(pkt)
            self._lost(pkt, "path", now)
            if self.state is not QpState.READY:
                return
        if reason != SHARED:
            self.nic.path_failed(self.qpn, path, now, retired=True)

    def _on_path_loss(self, path: object, reason: str, now: int) -> None:
        """A first loss on ``path`` with nothing sent on it since delivered: evidence the
        NIC weighs with its other connections' (:meth:`NicCore.path_failed`)."""
        if self.state is QpState.READY and self.cfg.path_verdicts:
            self.nic.path_failed(self.qpn, path, now, retired=False)

    def shared_path_failure(self, path: object, now: int) -> int:
        """The NIC learnt from a sibling connection that ``path`` crosses a failed
        element: retire it here too (probes revive it as any other). Returns how many
        EVs were retired."""
        if self.state is not QpState.READY or path not in self.evs.by_path:
            return 0
        count = self.evs.retire_path(path, SHARED, now)
        if count:
            self.counters["paths_shared"] += 1
        return count

    def _on_floor_hold(self, e: EvEntry, reason: str, now: int) -> None:
        self.log.about_ev(now, ev_kinds.EV_FLOOR_HOLD, e, reason=reason)

    def on_probe_answer(self, e: EvEntry, now: int) -> None:
        self.quiet_since = max(self.quiet_since, now)
        self.probes.on_answer(e, now)

    def plane_down(self, plane: int, now: int, *, remote: bool) -> None:
        """A port went down (ours, or the peer's per its port-status bitmap)."""
        self.evs.plane_down(plane, now, remote=remote)
        if self.state is not QpState.READY:
            return
        # Packets in flight on that plane are gone: resend them elsewhere now.
        send = self.send
        for pkt in send.in_flight_on_plane(plane):
            send.mark_lost(pkt)
            self._lost(pkt, "port", now)
            if self.state is not QpState.READY:
                return

    def plane_up(self, plane: int, now: int, *, remote: bool) -> None:
        self.evs.plane_up(plane, remote=remote)
        if self.evs.bad_count and self.state is QpState.READY:
            self.probes.arm(now)
