"""EV probes and path quarantine of one connection (:class:`PathProbes`): the probe
rounds that revive retired EVs (docs/nic-emu.md section 3), the paths held out at their
first overdue or lost packet and the probe that clears or retires each, and the probe
frames themselves (EV probes to QPN 0x2, tail-loss probes to the peer's QP).
"""

from __future__ import annotations

from typing import Protocol

import cython

from mrc_wire import EV_PROBE_QPN
from mrc_wire.codec import Probe, encode_probe
from nic_emu import event_log as ev_kinds
from nic_emu.config import NicConfig
from nic_emu.connection.common import TS_MASK, Frame, Outbox
from nic_emu.connection.records import ConnectionCounters, ConnectionLog
from nic_emu.connection.rtt import RttTimers
from nic_emu.ev_set import ASSUMED_BAD, EvEntry, EvSet
from nic_emu.sender import IN_FLIGHT, PSN_MASK, SendState

if cython.compiled:  # a threshold read as a C integer (nic_host.pxd)
    from cython.cimports.nic_emu.nic_host import NIC_NS_INEXACT, nic_ns_ll

SHARED_HOLD = "shared"  # why a path is held on the NIC's verdict (NicCore.path_suspect)
# quarantine_overdue's C path: a threshold of magnitude at most 2**60 (the send state's
# count and time minus it stay in a C long long)
_LIMIT = 1 << 60


class ProbeHost(Protocol):
    """What the probes ask of their NIC: probe ids (the NIC routes the answers back),
    and which ports are up."""

    port_up: list[bool]
    port_status_bits: int

    def register_probe(self, qpn: int, entry: EvEntry) -> int:
        """A probe id for an EV probe of connection ``qpn`` (its answer comes back to
        :meth:`Connection.on_probe_answer <nic_emu.connection.Connection.on_probe_answer>`)."""
        ...

    def forget_probe(self, probe_id: int) -> None: ...

    def path_suspect(self, qpn: int, path: object, sent_ns: int, now: int) -> None:
        """Connection ``qpn`` quarantined ``path`` on its own evidence, a packet sent at
        ``sent_ns`` overdue or lost: the NIC weighs it with its other connections'
        (:meth:`NicCore.path_suspect <nic_emu.core.NicCore.path_suspect>`)."""
        ...

    def path_cleared(self, qpn: int, path: object, delivered_ns: int, now: int) -> None:
        """Connection ``qpn`` ended a quarantine of ``path``: it delivered a packet sent at
        ``delivered_ns`` (or a probe answered: ``now``); the holds the NIC shared for
        older packets end too."""
        ...


class PathProbes:
    """The probe schedule (``round_ns``, and ``next_ns``: the earlier of it and the held
    paths' deadlines) and the quarantined paths' probes (``held``:
    path -> [when to probe, when probed (-1: not yet)])."""

    def __init__(
        self,
        host: ProbeHost,
        cfg: NicConfig,
        evs: EvSet,
        timers: RttTimers,
        templates: list[Probe],
        *,
        peer_qpn: int,
        counters: ConnectionCounters,
        log: ConnectionLog,
    ) -> None:
        self.host = host
        self.evs = evs
        self.timers = timers
        self.templates = templates
        self.peer_qpn = peer_qpn
        self.counters = counters
        self.log = log
        self.qpn = log.qpn
        self.per_path = cfg.probes_per_path
        self.success_threshold = cfg.probe_success_threshold
        self.overdue_threshold = cfg.quarantine_threshold_pkts
        self.share = cfg.path_verdicts
        self.next_ns: int | None = None  # the next probe round or quarantine review
        self.round_ns: int | None = None  # the next probe round
        self.held: dict[object, list[int]] = {}
        self.shared: set[object] = set()  # held paths the NIC held (shared_hold)
        self.heard = False  # an answer arrived since the last probe round

    def arm(self, now: int) -> None:
        """An EV went bad: a probe round follows a probe interval later, unless one is due."""
        if self.round_ns is None:
            self.round_ns = now + self.timers.probe_interval_ns()
            self._due(self.round_ns)

    def _due(self, t: int) -> None:
        """Come back at ``t`` at the latest."""
        if self.next_ns is None or t < self.next_ns:
            self.next_ns = t

    def stop(self) -> None:
        """The connection failed: no more rounds, and no answer is awaited."""
        self.next_ns = self.round_ns = None
        host = self.host
        for e in self.evs.entries():
            if e.probe_seq >= 0:
                host.forget_probe(e.probe_seq)
                e.probe_seq = -1

    def quarantine_overdue(self, send: SendState, now: int) -> None:
        """Quarantine (:meth:`EvSet.quarantine`) the path of every in-flight packet that
        is overdue: at least ``quarantine_threshold_pkts`` later sends and one sent a
        quarantine window later (:meth:`RttTimers.hold_delay`) acknowledged, with nothing
        sent on its path since acknowledged."""
        if cython.compiled:
            # Both limits as C integers when the threshold and the quarantine window are
            # ints in range (a float takes the Python below): once per SACK, and the scan
            # usually ends at its first packet.
            threshold = nic_ns_ll(self.overdue_threshold, _LIMIT)
            hold = self.timers.exact_hold_delay()
            if threshold != NIC_NS_INEXACT and hold >= 0:
                self._hold_overdue(
                    send, send.acked_max_tx_seq - threshold, send.acked_max_sent_ns - hold, now
                )
                return
        limit_seq = send.acked_max_tx_seq - self.overdue_threshold
        limit_sent = send.acked_max_sent_ns - self.timers.hold_delay()
        evs = self.evs
        # In the order of the packets' latest transmissions (each packet once): send
        # order, so the first one past either limit ends the scan.
        q = send.outstanding
        for i in range(send.out_head, len(q)):
            pkt = q[i]
            if pkt.tx_seq > limit_seq or pkt.sent_ns > limit_sent:
                return
            if pkt.state != IN_FLIGHT:
                continue
            e = pkt.entry
            if e is not None and e.path not in evs.quarantined:
                self.hold_path(e, pkt.psn, pkt.sent_ns, "overdue", now)

    def _hold_overdue(self, send: SendState, limit_seq: int, limit_sent: int, now: int) -> None:
        """:meth:`quarantine_overdue`'s scan with its limits given (C integers on the
        native build, which alone calls it)."""
        evs = self.evs
        q = send.outstanding
        for i in range(send.out_head, len(q)):
            pkt = q[i]
            if pkt.tx_seq > limit_seq or pkt.sent_ns > limit_sent:
                return
            if pkt.state != IN_FLIGHT:
                continue
            e = pkt.entry
            if e is not None and e.path not in evs.quarantined:
                self.hold_path(e, pkt.psn, pkt.sent_ns, "overdue", now)

    def hold_path(self, e: EvEntry, psn: int | None, sent_ns: int, why: str, now: int) -> bool:
        """Quarantine the path of ``e`` for a packet sent at ``sent_ns`` (overdue or
        lost), unless the path delivered something sent since. A probe follows a
        quarantine window later if no delivery has cleared it by then (most are cleared
        within a fraction of that: a probe each would add a few % to the fabric's load).
        On its own evidence (``why`` not ``shared``) the NIC hears of it
        (:meth:`ProbeHost.path_suspect`, with ``path_verdicts``). True if it held the path."""
        evs = self.evs
        path = e.path
        if evs.delivered_ns(path) >= sent_ns or not evs.quarantine(path, sent_ns, now):
            return False
        self.log.about_ev(now, ev_kinds.PATH_SUSPECT, e, psn=psn, sent_ns=sent_ns, why=why)
        self.counters.path_suspects += 1
        due = now + self.timers.hold_delay()
        self.held[path] = [due, -1]
        self._due(due)
        if not self.share:
            return True
        if why == SHARED_HOLD:
            self.shared.add(path)
        else:
            self.host.path_suspect(self.qpn, path, sent_ns, now)
        return True

    def shared_hold(self, path: object, sent_ns: int, now: int) -> bool:
        """The NIC judged ``path`` suspect from its connections' evidence (a packet sent
        on it at ``sent_ns`` overdue, nothing sent since delivered): hold it here too,
        unless this connection has had a packet sent on it since delivered. Cleared,
        probed and retired as a hold on this connection's own evidence."""
        entries = self.evs.by_path.get(path)
        if not entries or path in self.evs.quarantined:
            return False
        return self.hold_path(entries[0], None, sent_ns, SHARED_HOLD, now)

    def release_shared_hold(self, path: object, delivered_ns: int, now: int) -> bool:
        """Another connection of the NIC delivered a packet sent on ``path`` at
        ``delivered_ns`` (or its probe answered): a hold the NIC shared here for a packet
        sent no later ends (``path_cleared`` by ``shared``). True if it did."""
        held = self.evs.quarantined.get(path)
        if path not in self.shared or held is None or held[0] > delivered_ns:
            return False
        self.clear_quarantine(path, SHARED_HOLD, now)
        return True

    def review_quarantine(self, now: int, out: Outbox) -> None:
        """Clear the quarantined paths that delivered a packet sent at or after their
        overdue one; probe those due for it; retire those whose probe went unanswered
        for a probe interval."""
        evs = self.evs
        probes = self.held
        interval = self.timers.probe_interval_ns()
        for path, (sent_ns, _) in list(evs.quarantined.items()):
            delivered = evs.delivered_ns(path)
            if delivered >= sent_ns:
                self.clear_quarantine(path, "delivery", now)
                if self.share:
                    self.host.path_cleared(self.qpn, path, delivered, now)
                continue
            due, probed = probes.setdefault(path, [now, -1])
            if probed < 0:
                if now >= due:
                    e = evs.usable_on_path(path)
                    if e is not None and self.host.port_up[e.plane] and e.probe_seq < 0:
                        self.send_probe(e, now, out)
                    probes[path][1] = now
            elif now - probed >= interval:
                evs.retire_path(path, "quarantine", now)
        for path in [p for p in probes if p not in evs.quarantined]:
            del probes[path]
        if self.shared:
            self.shared.intersection_update(evs.quarantined)

    def clear_quarantine(self, path: object, by: str, now: int) -> None:
        held = self.evs.clear_quarantine(path)
        self.held.pop(path, None)
        self.shared.discard(path)
        if held is None:
            return
        self.counters.path_suspects_cleared += 1
        e = self.evs.by_path[path][0]  # names the path, as in path_suspect
        self.log.about_ev(now, ev_kinds.PATH_CLEARED, e, by=by, suspect_ns=now - held[1])

    def tick(self, now: int, out: Outbox) -> None:
        """``next_ns`` passed: review the quarantine, then a probe round if one is due
        (a held path's deadline is not one: rounds keep their probe interval)."""
        self.next_ns = None
        if self.evs.quarantined or self.held:
            self.review_quarantine(now, out)
        if self.round_ns is not None and now >= self.round_ns:
            self.round_ns = None
            self._round(now, out)
        if self.round_ns is not None:
            self._due(self.round_ns)
        if self.held:  # come back when a held path's probe or its timeout is due
            interval = self.timers.probe_interval_ns()
            t = min(due if probed < 0 else probed + interval for due, probed in self.held.values())
            self._due(max(t, now + 1))

    def _round(self, now: int, out: Outbox) -> None:
        host = self.host
        evs = self.evs
        timers = self.timers
        outstanding = evs.outstanding_probes()
        if outstanding and not self.heard:
            timers.probe_misses += 1  # nothing answered: back off (adaptive timers)
        elif self.heard:
            timers.probe_misses = 0
        self.heard = False
        interval = timers.probe_interval_ns()
        for e in outstanding:
            if e.path in evs.quarantined and now - e.probed_ns < interval:
                continue  # a quarantine's probe, sent since the last round: not due yet
            # The probe interval is also the probe timeout.
            host.forget_probe(e.probe_seq)
            evs.probe_unanswered(e)
            if e.state is ASSUMED_BAD:
                self.log.about_ev(now, ev_kinds.PROBE_LOST, e)
        candidates = evs.probe_candidates(self.per_path)
        if not candidates:
            return
        for e in candidates:
            if host.port_up[e.plane]:
                self.send_probe(e, now, out)
        self.round_ns = now + interval

    def send_probe(self, e: EvEntry, now: int, out: Outbox) -> None:
        """An EV probe on ``e`` (to QPN 0x2 of the peer NIC, answered on the same EV)."""
        host = self.host
        probe_id = host.register_probe(self.qpn, e)
        e.probe_seq = probe_id
        e.probed_ns = now
        e.probes_sent += 1
        p = self.templates[e.plane]
        p.dqpn = EV_PROBE_QPN
        p.psn = 0
        p.ev = e.ev
        p.outer_dst = e.wire
        p.probe_id = probe_id
        p.probe_ev = e.ev
        p.timestamp = now & TS_MASK
        p.port_status = host.port_status_bits
        out.append((e.plane, encode_probe(p)))
        self.counters.tx_probe += 1
        self.log.about_ev(now, ev_kinds.PROBE_TX, e)

    def send_tail_probe(self, e: EvEntry, psn: int, now: int) -> Frame:
        """A reliability probe on ``e`` to the peer's QP (opcode 0xDE): its SACK reply
        shows which of the last packets never arrived. Returns (plane, frame)."""
        p = self.templates[e.plane]
        p.dqpn = self.peer_qpn
        p.ev = e.ev
        p.outer_dst = e.wire
        p.psn = psn & PSN_MASK
        p.probe_id = 0
        p.probe_ev = e.ev
        p.timestamp = now & TS_MASK
        p.port_status = self.host.port_status_bits
        self.counters.tx_tail_probe += 1
        return e.plane, encode_probe(p)

    def on_answer(self, e: EvEntry, now: int) -> bool:
        """The probe on ``e`` was answered. True if that ended a quarantine of its path
        (the packet held overdue on it was then lost: :meth:`Losses.overtaken
        <nic_emu.connection.feedback.Losses.overtaken>`)."""
        self.heard = True
        held = e.path in self.evs.quarantined
        if held:
            self.clear_quarantine(e.path, "probe", now)
            if self.share:
                self.host.path_cleared(self.qpn, e.path, now, now)
        revived = self.evs.probe_answered(e, self.success_threshold, now)
        self.log.about_ev(now, ev_kinds.PROBE_OK, e, successes=e.probe_successes, revived=revived)
        return held
