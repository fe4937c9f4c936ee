"""The sender's reactions to acknowledgements: SACK (cumulative PSN, bitmap, ECN echo,
RTT sample, SACK-driven losses, tail-probe answers), NACK (trims, go-back-N) and the
retransmission of what they show lost.
"""

from __future__ import annotations

from mrc_wire import (
    Nack,
    Sack,
)
from mrc_wire.constants import NackReason
from nic_emu import event_log as ev_kinds
from nic_emu.connection.common import (
    MAX_RTT_SAMPLE_NS,
    NACK_SEQUENCE,
    NACK_TRIMMED,
    NACK_TRIMMED_LASTHOP,
    TS_MASK,
    Outbox,
    QpState,
)
from nic_emu.connection.host import WriteCompleted
from nic_emu.sender import IN_FLIGHT, PSN_MASK, TxPacket, unwrap


class FeedbackMixin:
    """Mixed into :class:`~nic_emu.connection.queue_pair.Connection`, whose
    ``__init__`` sets up the state used here."""

    def on_sack(self, s: Sack, plane: int, now: int, out: Outbox) -> None:
        nic = self.nic
        if s.inner_src not in self._peer_addr_set:
            nic.drop(now, "foreign_source", plane, qpn=self.qpn)
            return
        nic.note_peer_ports(self.peer, s.port_status, now)
        nic.heard_from(self.peer, s.ev, now)
        if self.state is not QpState.READY:
            return
        reverse = self.rx.reverse
        reverse.heard[plane] = now
        reverse.last_ev[plane] = s.ev
        if now - reverse.refreshed[plane] >= reverse.refresh_ns:
            reverse.heard_on(plane, s.ev, now)
        self.counters["rx_sack"] += 1
        send = self.send
        cum = unwrap(s.cum_psn, send.snd_una)
        if cum > send.next_psn or cum < send.snd_una - self.cfg.receive_window_psns:
            self.counters["rx_bad_ack"] += 1
            nic.drop(now, "ack_outside_window", plane, qpn=self.qpn, psn=cum)
            return
        ambiguous_after = now - self.timers.min_rtt_ns
        acked = send.ack_below(cum, ambiguous_after)
        bits = s.bitmap
        if bits and self.mrc:
            base = cum + s.sack_offset
            # PSNs already acknowledged by an earlier SACK (send.sacked) are no news
            shift = base - send.snd_una
            bits &= ~(send.sacked >> shift if shift >= 0 else send.sacked << -shift)
            nxt = send.next_psn
            ack = send.ack
            while bits:
                low = bits & -bits
                bits ^= low
                psn = base + low.bit_length() - 1
                if psn >= nxt:
                    break
                pkt = ack(psn, ambiguous_after)
                if pkt is not None:
                    acked += pkt.length
                    entry = pkt.entry
                    if entry is not None:
                        entry.acked_packets += 1  # delivered bytes per EV: counted either way
                        if pkt.sent_ns > entry.acked_sent_ns and (
                            pkt.transmissions == 1 or pkt.sent_ns <= ambiguous_after
                        ):
                            entry.acked_sent_ns = pkt.sent_ns
        send.advance_una(cum)
        ecn = s.ecn_echo
        if ecn:
            self.counters["ecn_echo_rx"] += 1
            if self.mrc:
                entry = self.evs.by_ev.get(s.echoed_ev)
                if entry is not None:
                    self.evs.mark_skip(entry, now)
            elif self.dcqcn is not None:
                self.dcqcn.on_cnp(now)  # RoCE: the echo is DCQCN's CNP
        if s.always_skip and self.mrc:
            entry = self.evs.by_ev.get(s.echoed_ev)
            if entry is not None:
                self.evs.mark_bad(entry, "receiver_always_skip", now)
        rtt = -1
        if s.echoed_ts is not None:
            rtt = (now - s.echoed_ts) & TS_MASK
            if rtt > MAX_RTT_SAMPLE_NS:
                rtt = -1
        timers = self.timers
        if rtt >= 0:
            timers.sample(rtt, now)
        if acked:
            self.last_ack_ns = now
            timers.backoff = 0
            timers.hold_until = 0
            self.cc.on_ack(acked, ecn, rtt, now, send.inflight_bytes)
        elif ecn:
            self.cc.on_ack(0, True, rtt, now, send.inflight_bytes)
        if self.mrc:
            cfg = self.cfg
            window = timers.reorder_window()
            for pkt in send.detect_losses(cfg.reorder_threshold_pkts, window):
                self._lost(pkt, "reorder", now)
                if self.state is not QpState.READY:
                    return
            if self._quarantine:
                if self.evs.quarantined:
                    self.probes.review_quarantine(now, out)
                self.probes.quarantine_overdue(send, now)
            if s.probe_reply and self.tlp_sent_ns >= 0:
                # The probe left after these packets; if they are still missing when its
                # answer comes back (allowing for reordering), they were lost.
                for pkt in send.lost_before(self.tlp_sent_ns - window):
                    self._lost(pkt, "tail_probe", now)
                    if self.state is not QpState.READY:
                        return
                self.tlp_sent_ns = -1
        if acked:
            self.tlp_armed = True
        self._complete_writes(now)

    def _complete_writes(self, now: int) -> None:
        done = self.send.completed_writes()
        if not done:
            return
        nic = self.nic
        for wr in done:
            self.counters["writes_completed"] += 1
            nic.emit(WriteCompleted(self.qpn, wr.wr_id, wr.length, now))
            self.log.record(now, ev_kinds.WRITE_DONE, psn=wr.last_psn, wr_id=wr.wr_id)

    def on_nack(self, n: Nack, plane: int, now: int) -> None:
        nic = self.nic
        if n.inner_src not in self._peer_addr_set:
            nic.drop(now, "foreign_source", plane, qpn=self.qpn)
            return
        nic.note_peer_ports(self.peer, n.port_status, now)
        nic.heard_from(self.peer, n.ev, now)
        if self.state is not QpState.READY:
            return
        self.rx.reverse.heard_on(plane, n.ev, now)
        self.counters["rx_nack"] += 1
        send = self.send
        cum = unwrap(n.cum_psn, send.snd_una)
        psn = unwrap(n.nack_psn, send.snd_una)
        if not send.snd_una - self.cfg.receive_window_psns <= cum <= send.next_psn:
            self.counters["rx_bad_ack"] += 1
            nic.drop(now, "ack_outside_window", plane, qpn=self.qpn, psn=cum)
            return
        acked = send.ack_below(cum, now - self.timers.min_rtt_ns)
        send.advance_una(cum)
        if acked:
            self.last_ack_ns = now
            self.timers.progress()
        reason = n.reason
        try:
            reason_name = NackReason(reason).name
        except ValueError:
            reason_name = f"unknown_{reason:#04x}"
        self.log.record(
            now,
            ev_kinds.NACK_RX,
            plane=plane,
            ev=n.echoed_ev,
            psn=psn,
            reason=reason_name,
        )
        if reason in (NACK_TRIMMED, NACK_TRIMMED_LASTHOP) and self.mrc:
            pkt = send.unacked.get(psn)
            if pkt is not None and n.echoed_ts is not None and n.echoed_ts != pkt.sent_ns & TS_MASK:
                # The NACK is about an earlier transmission (a duplicate, or one that was
                # already resent): the current copy is still in flight.
                self.counters["rx_nack_stale"] += 1
            elif pkt is not None and pkt.state == IN_FLIGHT:
                send.mark_lost(pkt)
                self.cc.on_nack(pkt.length, now, send.inflight_bytes)
                if pkt.entry is not None:
                    pkt.entry.nacks += 1
                tag = "trimmed_lasthop" if reason == NACK_TRIMMED_LASTHOP else "trimmed"
                self._queue_retransmit(pkt, tag, now)
        elif (
            reason == NACK_SEQUENCE and self.gbn is not None and send.snd_una <= psn < send.next_psn
        ):
            self.gbn.on_nak(send, psn, now)
        self._complete_writes(now)

    def _lost(self, pkt: TxPacket, reason: str, now: int) -> None:
        """A packet (already out of flight) was lost without a trim."""
        entry = pkt.entry
        self.counters["losses_" + reason] += 1
        if entry is not None:
            entry.losses += 1
            # Wall-clock modes also log what the loss detection saw (the repath timeline
            # of benchmarks/process_repath.py); the virtual-time records stay as they were.
            timers = self.timers
            seen = (
                {
                    "srtt_ns": int(timers.srtt_ns),
                    "min_rtt_ns": timers.min_rtt_ns,
                    "qdelay_ns": int(timers.qdelay_ns),
                    "cwnd": int(self.cc.cwnd),
                    "acked_sent_ns": self.send.acked_max_sent_ns,
                }
                if timers.adaptive
                else {}
            )
            self.log.about_ev(
                now, ev_kinds.LOSS, entry, psn=pkt.psn, sent_ns=pkt.sent_ns, reason=reason, **seen
            )
            if self.mrc and reason not in ("port", "path"):
                self.evs.mark_bad(entry, reason, now, sent_ns=pkt.sent_ns)
                if self._quarantine and entry.path not in self.evs.quarantined:
                    self.probes.hold_path(entry, pkt.psn, pkt.sent_ns, reason, now)
        self.cc.on_loss(pkt.length, now)
        self._queue_retransmit(pkt, reason, now)

    def _queue_retransmit(self, pkt: TxPacket, reason: str, now: int) -> None:
        self.log.retransmit(now, pkt.psn, reason, transmissions=pkt.transmissions)
        limit = self.cfg.max_packet_transmissions
        if pkt.transmissions >= limit:
            self.fail(
                "packet_retries",
                f"PSN {pkt.psn & PSN_MASK:#x} was sent {pkt.transmissions} times without "
                f"being acknowledged (max_packet_transmissions={limit})",
                now,
            )
