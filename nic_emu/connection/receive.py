"""The receive side: placing data (any order, never twice), reliability probes, and
the acknowledgements sent back (SACK/NACK) over the reverse EV set.
"""

from __future__ import annotations

from mrc_wire import (
    DataPacket,
    Probe,
    encode_nack,
    encode_sack,
)
from mrc_wire.constants import NackReason
from nic_emu import event_log as ev_kinds
from nic_emu.connection.common import (
    _CE,
    _NACK_TRIMMED,
    _NACK_TRIMMED_LASTHOP,
    _PSN_HALF,
    _TRIMMED,
    _TRIMMED_LASTHOP,
    REVERSE_SALT_BASE,
    TS_MASK,
    QpState,
)
from nic_emu.connection.host import WriteReceived
from nic_emu.receiver import (
    DUPLICATE,
    NEW_IN_ORDER,
    OUT_OF_WINDOW,
    ReceiveState,
)
from nic_emu.sender import PSN_MASK


class ReceiveMixin:
    """Mixed into :class:`~nic_emu.connection.queue_pair.Connection`, whose
    ``__init__`` sets up the state used here."""

    def on_data(self, m: DataPacket, plane: int, now: int) -> None:
        nic = self.nic
        counters = self.counters
        if self.state is not QpState.READY:
            nic.drop(now, "connection_error", plane, qpn=self.qpn)
            return
        if m.inner_src not in self._peer_addr_set:
            nic.drop(now, "foreign_source", plane, qpn=self.qpn)
            return
        self.rev_heard[plane] = now
        nic.heard_from(self.peer, m.ev, now)
        self.rev_last_ev[plane] = m.ev
        if now - self.rev_refreshed[plane] >= self._refresh_ns:
            self._heard(plane, m.ev, now)
        recv = self.recv
        rcv_nxt = recv.rcv_nxt
        psn = rcv_nxt + (((m.psn - rcv_nxt) & PSN_MASK) ^ _PSN_HALF) - _PSN_HALF  # unwrap()
        dscp = m.dscp
        if dscp in (_TRIMMED, _TRIMMED_LASTHOP):
            counters["rx_trimmed"] += 1
            if not self.mrc:
                counters["rx_trimmed_ignored"] += 1  # RoCE has no trim reaction
                return
            if self._already_received(psn):
                self._send_sack(now, m.ev, psn, m.timestamp, m.ecn == _CE)
                return
            lasthop = dscp == _TRIMMED_LASTHOP
            self._send_nack(
                now,
                _NACK_TRIMMED_LASTHOP if lasthop else _NACK_TRIMMED,
                psn,
                m.ev,
                m.timestamp,
                m.ecn == _CE,
            )
            return
        length = m.dma_length
        va = m.va
        sink = self._sink
        if sink is not None:
            region = None
            offset = 0
            refused = sink.admit(psn, m.rkey, va, length)
            if refused is not None:
                counters["rx_access_error"] += 1
                nic.drop(now, refused, plane, qpn=self.qpn, psn=psn, rkey=m.rkey, va=va)
                return
        else:
            region = self._regions.get(m.rkey)
            offset = va - region.va if region is not None else -1
            if offset < 0 or offset + length > len(region.buffer):  # type: ignore[union-attr]
                counters["rx_access_error"] += 1
                nic.drop(now, "memory_access", plane, qpn=self.qpn, psn=psn, rkey=m.rkey, va=va)
                return
        result = recv.accept(psn)
        if result == DUPLICATE:
            counters["rx_dup"] += 1
            self._send_sack(now, m.ev, psn, m.timestamp, m.ecn == _CE)
            return
        if result == OUT_OF_WINDOW:
            counters["rx_out_of_window"] += 1
            return
        mrc = self.mrc
        if result != NEW_IN_ORDER and not mrc:
            self._gbn_out_of_sequence(m, now)  # go-back-N: dropped, NAKed once per gap
            return
        if sink is not None:
            sink.place(psn, m.payload, m.last)
        else:
            region.buffer[offset : offset + length] = m.payload  # type: ignore[union-attr]
        counters["rx_data"] += 1
        counters["bytes_placed"] += length
        self.rcvd_bytes += length
        nic.placed_bytes += length
        msgs = self.msgs
        msgs.va_by_psn[psn] = va
        if m.last:
            msgs.note_last(psn, m.rkey, va + length)
        if result == NEW_IN_ORDER:
            if msgs.has_due(recv.rcv_nxt):
                self._deliver_messages(now)
            elif len(msgs.va_by_psn) > self._va_prune_at:
                msgs.prune(recv.rcv_nxt)  # a long message: keep its first VA, not every one
        else:
            counters["rx_out_of_order"] += 1
        ecn = m.ecn == _CE
        if ecn and not mrc:
            ecn = self._cnp_due(now)  # DCQCN: at most one CNP per interval
        pending = self.sack_pending + 1
        if (
            ecn
            or m.ack_req
            or result != NEW_IN_ORDER
            or (mrc and recv.ooo)  # type: ignore[union-attr]
            or pending >= self._sack_every
        ):
            self._send_sack(now, m.ev, psn, m.timestamp, ecn)
        else:
            self.sack_pending = pending
            self._sack_trigger = (m.ev, psn, m.timestamp, False)
            if self.sack_deadline is None:
                self.sack_deadline = now + self._sack_delay

    def _deliver_messages(self, now: int) -> None:
        nic = self.nic
        for first, last, rkey, va, mlen in self.msgs.completed(self.recv.rcv_nxt):
            self.counters["writes_received"] += 1
            nic.emit(WriteReceived(self.qpn, rkey, va, mlen, first, last, now))
            nic.log.record(
                now, nic.name, ev_kinds.WRITE_RECEIVED, qpn=self.qpn, psn=last, bytes=mlen
            )

    def _already_received(self, psn: int) -> bool:
        recv = self.recv
        off = psn - recv.rcv_nxt
        if off < 0:
            return True
        return isinstance(recv, ReceiveState) and off < recv.window and bool((recv.ooo >> off) & 1)

    def on_reliability_probe(self, p: Probe, plane: int, now: int) -> None:
        """A probe to this QP asks for the current acknowledgement state."""
        if p.inner_src not in self._peer_addr_set:
            self.nic.drop(now, "foreign_source", plane, qpn=self.qpn)
            return
        self.nic.heard_from(self.peer, p.ev, now)
        self.rev_heard[plane] = now
        self.rev_last_ev[plane] = p.ev
        self._send_sack(now, p.ev, self.recv.rcv_nxt - 1, p.timestamp, False, probe_reply=True)

    def _build_reverse_set(self) -> None:
        nic = self.nic
        per_plane = self.cfg.reverse_evs_per_plane
        if not self.mrc:
            # Baseline: acknowledgements follow the connection's single path back.
            (entry,) = self.evs.ring
            slots = [[] for _ in range(nic.plane_count)]
            slots[entry.plane] = [entry.ev]
            self.rev_slots = slots
            self.rev_carrier[entry.ev] = nic.path(self.peer, entry.ev).carrier_bytes
            return
        for p in range(nic.plane_count):
            t1_count = nic.plan.topology.planes[p].t1_count
            evs = []
            for j in range(per_plane):
                salt = REVERSE_SALT_BASE + (self.qpn * 7 + j // t1_count) % REVERSE_SALT_BASE
                ev = nic.plan.make_ev(p, (self.qpn + j) % t1_count, salt)
                evs.append(ev)
                self.rev_carrier[ev] = nic.path(self.peer, ev).carrier_bytes
            self.rev_slots.append(evs)

    def _heard(self, plane: int, ev: int, now: int) -> None:
        """Traffic from the peer arrived on ``plane`` with ``ev``: refresh the reverse set."""
        self.rev_heard[plane] = now
        if not self.mrc or now - self.rev_refreshed[plane] < self.cfg.reverse_refresh_ns:
            return
        self.rev_refreshed[plane] = now
        slots = self.rev_slots[plane]
        if ev in slots or self.nic.plan_ev_plane(ev) != plane:
            return
        carrier = self.nic.path_or_none(self.peer, ev)
        if carrier is None:
            return
        old = slots.pop(0)
        self.rev_carrier.pop(old, None)
        slots.append(ev)
        self.rev_carrier[ev] = carrier

    def _reverse_pick(self, now: int) -> tuple[int, int] | None:
        """(plane, EV) for the next SACK/NACK: planes up at both ends, heard from recently.

        "Recently" is within ``reverse_plane_stale_ns`` of now and within
        ``reverse_refresh_ns`` of the latest arrival (of any plane, then of the plane for
        its paths): a plane or path that stopped delivering while the others go on is
        skipped at once, not only when it goes stale."""
        nic = self.nic
        planes = nic.plane_count
        peer_up = nic.peer_port_up(self.peer)
        port_up = nic.port_up
        heard = self.rev_heard
        slots = self.rev_slots
        stale = now - self.cfg.reverse_plane_stale_ns
        refresh = self._refresh_ns
        fresh = max(stale, max(heard) - refresh)
        fallback = -1
        start = self._rev_plane_rr
        for i in range(planes):
            p = start + i
            if p >= planes:
                p -= planes
            if not (port_up[p] and peer_up[p] and slots[p]):
                continue
            if heard[p] >= fresh:
                self._rev_plane_rr = p + 1 if p + 1 < planes else 0
                return p, self._fresh_rev_ev(p, max(stale, heard[p] - refresh))
            if fallback < 0:
                fallback = p
        if fallback < 0:
            return None
        self._rev_plane_rr = (fallback + 1) % planes
        return fallback, self._next_rev_ev(fallback)

    def _fresh_rev_ev(self, plane: int, stale: int) -> int:
        """The next reverse EV of ``plane`` on a path the peer was heard on recently; if
        no slot has one, the latest EV heard on the plane takes the oldest slot (a path
        that just delivered from the peer is the best bet for the way back)."""
        nic = self.nic
        slots = self.rev_slots[plane]
        n = len(slots)
        start = self.rev_pos[plane]
        for k in range(n):
            i = (start + k) % n
            ev = slots[i]
            if nic.path_heard_ns(self.peer, nic.path_key(ev)) >= stale:
                self.rev_pos[plane] = i + 1
                return ev
        last = self.rev_last_ev[plane]
        if (
            self.mrc
            and last is not None
            and nic.plan_ev_plane(last) == plane
            and nic.path_heard_ns(self.peer, nic.path_key(last)) >= stale
        ):
            carrier = nic.path_or_none(self.peer, last)
            if carrier is not None:
                i = start % n
                self.rev_carrier.pop(slots[i], None)
                slots[i] = last
                self.rev_carrier[last] = carrier
                self.rev_pos[plane] = i + 1
                return last
        return self._next_rev_ev(plane)

    def _next_rev_ev(self, plane: int) -> int:
        slots = self.rev_slots[plane]
        i = self.rev_pos[plane] % len(slots)
        self.rev_pos[plane] = i + 1
        return slots[i]

    def _send_sack(
        self,
        now: int,
        echoed_ev: int,
        trigger_psn: int,
        echoed_ts: int | None,
        ecn: bool,
        probe_reply: bool = False,
    ) -> None:
        self.sack_pending = 0
        self.sack_deadline = None
        choice = self._reverse_pick(now)
        if choice is None:
            self.counters["sack_no_path"] += 1
            return
        plane, ev = choice
        s = self._stmpl[plane]
        recv = self.recv
        cum = recv.rcv_nxt
        if isinstance(recv, ReceiveState):
            base, bitmap = recv.sack_view(trigger_psn)
            s.ooo_count = min(recv.ooo.bit_count(), 0xFFFF)
        else:
            base, bitmap = cum, 0
        s.ev = ev
        s.outer_dst = self.rev_carrier[ev]
        s.cum_psn = cum & PSN_MASK
        s.sack_offset = base - cum
        s.bitmap = bitmap
        s.echoed_ev = echoed_ev
        s.echoed_psn = trigger_psn & PSN_MASK
        s.echoed_ts = echoed_ts
        s.rcvd_bytes = self.rcvd_bytes & TS_MASK
        s.ecn_echo = ecn
        s.probe_reply = probe_reply
        s.port_status = self.nic.port_status_bits
        self.nic.out.append((plane, encode_sack(s)))
        self.counters["tx_sack"] += 1

    def _send_nack(
        self, now: int, reason: int, psn: int, echoed_ev: int, echoed_ts: int | None, ecn: bool
    ) -> None:
        choice = self._reverse_pick(now)
        if choice is None:
            self.counters["sack_no_path"] += 1
            return
        plane, ev = choice
        n = self._ntmpl[plane]
        n.ev = ev
        n.outer_dst = self.rev_carrier[ev]
        n.cum_psn = self.recv.rcv_nxt & PSN_MASK
        n.nack_psn = psn & PSN_MASK
        n.reason = reason
        n.echoed_ev = echoed_ev
        n.echoed_ts = echoed_ts
        n.ecn_echo = ecn
        n.port_status = self.nic.port_status_bits
        nic = self.nic
        nic.out.append((plane, encode_nack(n)))
        self.counters["tx_nack"] += 1
        nic.log.record(
            now,
            nic.name,
            ev_kinds.NACK_TX,
            qpn=self.qpn,
            plane=plane,
            ev=echoed_ev,
            psn=psn,
            reason=NackReason(reason).name,
        )
