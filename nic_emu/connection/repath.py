"""Repath: the connection's EV set (``nic_emu.ev_set``, laid out by
:mod:`nic_emu.connection.ev_layout`), its state changes and path verdicts, the answers
of the EV probes (:mod:`nic_emu.connection.probes`), and ports going down and up (ours,
or the peer's).
"""

from __future__ import annotations

from nic_emu import event_log as ev_kinds
from nic_emu.connection.common import QpState
from nic_emu.connection.ev_layout import mrc_entries, roce_entry
from nic_emu.ev_set import ASSUMED_BAD, EvEntry, EvSet, EvState

SHARED = "shared"  # the reason of a path retired on a sibling connection's verdict


class RepathMixin:
    """Mixed into :class:`~nic_emu.connection.queue_pair.Connection`, whose
    ``__init__`` sets up the state used here."""

    def _build_mrc_evs(self) -> EvSet:
        active, backup = mrc_entries(self.nic, self.cfg, self.peer)
        cfg = self.cfg
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

    def _build_roce_ev(self) -> EvSet:
        e = roce_entry(self.nic, self.peer, self.qpn, self.peer_qpn)
        return EvSet(
            {e.plane: [e]},
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
