"""Repath (:class:`Repath`): the connection's EV set (``nic_emu.ev_set``, laid out by
:mod:`nic_emu.connection.ev_layout`, built by :func:`build_evs`), its state changes and
path verdicts, the answers of the EV probes (:mod:`nic_emu.connection.probes`), and
ports going down and up (ours, or the peer's).
"""

from __future__ import annotations

import random
from typing import Protocol

from nic_emu import event_log as ev_kinds
from nic_emu.config import NicConfig
from nic_emu.connection.common import READY, QpStatus
from nic_emu.connection.ev_layout import RouteHost, mrc_entries, roce_entry
from nic_emu.connection.feedback import Losses
from nic_emu.connection.probes import PathProbes
from nic_emu.connection.records import ConnectionCounters, ConnectionLog
from nic_emu.ev_set import ASSUMED_BAD, EvEntry, EvSet, EvState
from nic_emu.sender import SendState

SHARED = "shared"  # the reason of a path retired on a sibling connection's verdict


def build_evs(
    host: RouteHost,
    cfg: NicConfig,
    peer: str,
    *,
    qpn: int,
    peer_qpn: int,
    mrc: bool,
    rng: random.Random,
) -> EvSet:
    """The EV set of a connection to ``peer``: an MRC connection's active and backup EVs,
    or a RoCE QP's one EV. :class:`Repath` listens to it."""
    if mrc:
        active, backup = mrc_entries(host, cfg, peer)
        return EvSet(
            active,
            backup,
            min_active_per_plane=cfg.ev_min_active,
            skip_ns=cfg.ev_skip_ns,
            rng=rng,
        )
    e = roce_entry(host, peer, qpn, peer_qpn)
    return EvSet({e.plane: [e]}, {}, min_active_per_plane=0, skip_ns=cfg.ev_skip_ns, rng=rng)


class RepathHost(Protocol):
    """What repath asks of the NIC: sharing a path's failure with the connections whose
    paths cross the same element."""

    def path_failed(self, qpn: int, path: object, now: int, *, retired: bool) -> None:
        """Connection ``qpn`` retired ``path`` (plane, T1) on its own evidence (or, with
        ``retired`` False, lost a first packet on it): retire it in the connections whose
        paths cross the same failed element, once the evidence shows which."""
        ...


class PeerSilence(Protocol):
    """What repath asks of the deadlines (:class:`~nic_emu.connection.timers.Deadlines`):
    the peer answered, so its silence starts again."""

    def peer_answered(self, now: int) -> None: ...


class Repath:
    """The reactions of one connection to its EV set's changes (it listens to the set:
    MRC, every callback; RoCE, state changes only), to probe answers, to sibling
    connections' path verdicts and to ports. Owns no state: it moves the EV set's, the
    send state's and the probes'."""

    def __init__(
        self,
        host: RepathHost,
        qp: QpStatus,
        cfg: NicConfig,
        evs: EvSet,
        send: SendState,
        probes: PathProbes,
        losses: Losses,
        silence: PeerSilence,
        *,
        mrc: bool,
        counters: ConnectionCounters,
        log: ConnectionLog,
    ) -> None:
        self.host = host
        self.qp = qp
        self.qpn = log.qpn
        self.path_verdicts = cfg.path_verdicts
        self.evs = evs
        self.send = send
        self.probes = probes
        self.losses = losses
        self.silence = silence
        self.counters = counters
        self.log = log
        if mrc:
            evs.listen(
                on_change=self.on_ev_change,
                on_floor_hold=self.on_floor_hold,
                on_path_retired=self.on_path_retired,
                on_path_loss=self.on_path_loss,
            )
        else:
            evs.listen(on_change=self.on_ev_change)

    def on_ev_change(self, e: EvEntry, old: EvState, new: EvState, reason: str, now: int) -> None:
        self.log.ev_state(now, e, old, new, reason)
        if new is ASSUMED_BAD:
            self.probes.arm(now)

    def on_path_retired(self, path: object, reason: str, now: int) -> None:
        """A whole path was retired (docs/nic-emu.md section 3, "Paths"): the packets in
        flight on it are lost with it, so they are resent elsewhere now, as for a port
        that went down, rather than one timeout each; and unless the verdict came from
        the NIC (``shared``), the NIC shares it with the connections whose paths cross
        the same failed element (:meth:`NicCore.path_failed`). Both only with
        ``NicConfig.path_verdicts``."""
        qp = self.qp
        if qp.state is not READY or not self.path_verdicts:
            return
        self.losses.lose_in_flight(self.send.in_flight_on_path(path), "path", now)
        if qp.state is not READY:
            return
        if reason != SHARED:
            self.host.path_failed(self.qpn, path, now, retired=True)

    def on_path_loss(self, path: object, reason: str, now: int) -> None:
        """A first loss on ``path`` with nothing sent on it since delivered: evidence the
        NIC weighs with its other connections' (:meth:`NicCore.path_failed`)."""
        if self.qp.state is READY and self.path_verdicts:
            self.host.path_failed(self.qpn, path, now, retired=False)

    def shared_path_failure(self, path: object, now: int) -> int:
        """The NIC learnt from a sibling connection that ``path`` crosses a failed
        element: retire it here too (probes revive it as any other). Returns how many
        EVs were retired."""
        if self.qp.state is not READY or path not in self.evs.by_path:
            return 0
        count = self.evs.retire_path(path, SHARED, now)
        if count:
            self.counters.paths_shared += 1
        return count

    def on_floor_hold(self, e: EvEntry, reason: str, now: int) -> None:
        self.log.about_ev(now, ev_kinds.EV_FLOOR_HOLD, e, reason=reason)

    def on_probe_answer(self, e: EvEntry, now: int) -> None:
        """The EV probe on ``e`` came back. If its path was held overdue, the probe
        crossed the path's links after the packets in flight on it: those it overtook,
        allowing for reordering, were lost (:meth:`Losses.overtaken`)."""
        self.silence.peer_answered(now)
        probed_ns = e.probed_ns
        if self.probes.on_answer(e, now) and self.qp.state is READY:
            self.losses.overtaken(e.path, probed_ns, now)

    def plane_down(self, plane: int, now: int, *, remote: bool) -> None:
        """A port went down (ours, or the peer's per its port-status bitmap)."""
        self.evs.plane_down(plane, now, remote=remote)
        if self.qp.state is not READY:
            return
        # Packets in flight on that plane are gone: resend them elsewhere now.
        self.losses.lose_in_flight(self.send.in_flight_on_plane(plane), "port", now)

    def plane_up(self, plane: int, now: int, *, remote: bool) -> None:
        self.evs.plane_up(plane, remote=remote)
        if self.evs.bad_count and self.qp.state is READY:
            self.probes.arm(now)
