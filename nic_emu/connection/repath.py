"""Repath: building the EV set (``nic_emu.ev_set``), its state changes, the EV probes
that revive retired EVs, and ports going down and up (ours, or the peer's).
"""

from __future__ import annotations

import zlib

from mrc_wire import (
    EV_PROBE_QPN,
    encode_probe,
)
from nic_emu import event_log as ev_kinds
from nic_emu.connection.common import TS_MASK, Outbox, QpState
from nic_emu.connection.host import EvRoute
from nic_emu.ev_set import ASSUMED_BAD, EvEntry, EvSet, EvState
from nic_emu.sender import IN_FLIGHT
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
        if new is ASSUMED_BAD and self.probe_next is None:
            self.probe_next = now + self.timers.probe_interval_ns()

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

    def _quarantine_overdue(self, now: int) -> None:
        """Quarantine (:meth:`EvSet.quarantine`) the path of every in-flight packet that
        is overdue: at least ``reorder_threshold_pkts`` later sends and one sent a
        quarantine window later (:meth:`_hold_delay`) acknowledged, with nothing sent on
        its path since acknowledged."""
        send = self.send
        limit_seq = send.acked_max_tx_seq - self.cfg.reorder_threshold_pkts
        limit_sent = send.acked_max_sent_ns - self.timers.hold_delay()
        evs = self.evs
        for seq, pkt in send.outstanding:
            if seq > limit_seq:
                return
            if pkt.tx_seq != seq:
                continue  # sent again since: a later entry stands for it
            if pkt.sent_ns > limit_sent:
                return
            if pkt.state != IN_FLIGHT:
                continue
            e = pkt.entry
            if e is not None and e.path not in evs.quarantined:
                self._hold_path(e, pkt.psn, pkt.sent_ns, "overdue", now)

    def _hold_path(self, e: EvEntry, psn: int, sent_ns: int, why: str, now: int) -> None:
        """Quarantine the path of ``e`` for a packet sent at ``sent_ns`` (overdue or
        lost), unless the path delivered something sent since. A probe follows a
        quarantine window later if no delivery has cleared it by then (most are cleared
        within a fraction of that: a probe each would add a few % to the fabric's load)."""
        evs = self.evs
        if evs.delivered_ns(e.path) >= sent_ns or not evs.quarantine(e.path, sent_ns, now):
            return
        self.log.about_ev(now, ev_kinds.PATH_SUSPECT, e, psn=psn, sent_ns=sent_ns, why=why)
        self.counters["path_suspects"] += 1
        due = now + self.timers.hold_delay()
        self._hold_probes[e.path] = [due, -1]
        if self.probe_next is None or due < self.probe_next:
            self.probe_next = due

    def _review_quarantine(self, now: int, out: Outbox) -> None:
        """Clear the quarantined paths that delivered a packet sent at or after their
        overdue one; probe those due for it; retire those whose probe went unanswered
        for a probe interval."""
        evs = self.evs
        probes = self._hold_probes
        interval = self.timers.probe_interval_ns()
        for path, (sent_ns, _) in list(evs.quarantined.items()):
            if evs.delivered_ns(path) >= sent_ns:
                self._clear_quarantine(path, "delivery", now)
                continue
            due, probed = probes.setdefault(path, [now, -1])
            if probed < 0:
                if now >= due:
                    e = evs.usable_on_path(path)
                    if e is not None and self.nic.port_up[e.plane] and e.probe_seq < 0:
                        self._send_probe(e, now, out)
                    probes[path][1] = now
            elif now - probed >= interval:
                evs.retire_path(path, "quarantine", now)
        for path in [p for p in probes if p not in evs.quarantined]:
            del probes[path]

    def _clear_quarantine(self, path: object, by: str, now: int) -> None:
        held = self.evs.clear_quarantine(path)
        self._hold_probes.pop(path, None)
        if held is None:
            return
        self.counters["path_suspects_cleared"] += 1
        e = self.evs.by_path[path][0]  # names the path, as in path_suspect
        self.log.about_ev(now, ev_kinds.PATH_CLEARED, e, by=by, suspect_ns=now - held[1])

    def _probe_tick(self, now: int, out: Outbox) -> None:
        self.probe_next = None
        if self.evs.quarantined or self._hold_probes:
            self._review_quarantine(now, out)
        self._probe_round(now, out)
        if self._hold_probes:  # come back when a held path's probe or its timeout is due
            interval = self.timers.probe_interval_ns()
            t = min(
                due if probed < 0 else probed + interval
                for due, probed in self._hold_probes.values()
            )
            if self.probe_next is None or t < self.probe_next:
                self.probe_next = max(t, now + 1)

    def _probe_round(self, now: int, out: Outbox) -> None:
        nic = self.nic
        evs = self.evs
        outstanding = evs.outstanding_probes()
        if outstanding and not self._probe_heard:
            self.timers.probe_misses += 1  # nothing answered: back off (adaptive timers)
        elif self._probe_heard:
            self.timers.probe_misses = 0
        self._probe_heard = False
        interval = self.timers.probe_interval_ns()
        for e in outstanding:
            if e.path in evs.quarantined and now - e.probed_ns < interval:
                continue  # a quarantine's probe, sent since the last round: not due yet
            # The probe interval is also the probe timeout.
            nic.forget_probe(e.probe_seq)
            evs.probe_unanswered(e)
            if e.state is ASSUMED_BAD:
                self.log.about_ev(now, ev_kinds.PROBE_LOST, e)
        candidates = evs.probe_candidates(self.cfg.probes_per_path)
        if not candidates:
            return
        for e in candidates:
            if nic.port_up[e.plane]:
                self._send_probe(e, now, out)
        self.probe_next = now + interval

    def _send_probe(self, e: EvEntry, now: int, out: Outbox) -> None:
        nic = self.nic
        probe_id = nic.register_probe(self.qpn, e)
        e.probe_seq = probe_id
        e.probed_ns = now
        e.probes_sent += 1
        p = self._ptmpl[e.plane]
        p.dqpn = EV_PROBE_QPN
        p.psn = 0
        p.ev = e.ev
        p.outer_dst = e.wire
        p.probe_id = probe_id
        p.probe_ev = e.ev
        p.timestamp = now & TS_MASK
        p.port_status = nic.port_status_bits
        out.append((e.plane, encode_probe(p)))
        self.counters["tx_probe"] += 1
        self.log.about_ev(now, ev_kinds.PROBE_TX, e)

    def on_probe_answer(self, e: EvEntry, now: int) -> None:
        self.quiet_since = max(self.quiet_since, now)
        self._probe_heard = True
        if e.path in self.evs.quarantined:
            self._clear_quarantine(e.path, "probe", now)
        revived = self.evs.probe_answered(e, self.cfg.probe_success_threshold, now)
        self.log.about_ev(now, ev_kinds.PROBE_OK, e, successes=e.probe_successes, revived=revived)

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
        if self.evs.bad_count and self.probe_next is None and self.state is QpState.READY:
            self.probe_next = now + self.timers.probe_interval_ns()
