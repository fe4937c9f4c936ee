"""The sender's reactions to acknowledgements and losses, each part owning its state:

- :class:`Feedback`: SACK (cumulative PSN, bitmap, ECN echo, RTT sample, RACK's
  SACK-driven losses, tail-probe answers) and NACK (trims, go-back-N), and the WRITEs
  they complete;
- :class:`Losses`: what a loss does, whichever detector found it (RACK's reorder window,
  the tail-loss probe, the retransmission timeout, a port or a path going down): the
  counts and record, the EV's verdict and its path's quarantine, the window, and the
  retransmission queue with its limit;
- :class:`TailProbe`: RACK-TLP's tail-loss probe (when it is due, sending it, and what
  its answer shows lost).
"""

from __future__ import annotations

from typing import Protocol

import cython

from mrc_wire.codec import Nack, Sack
from mrc_wire.constants import NackReason
from nic_emu import event_log as ev_kinds
from nic_emu.config import NicConfig
from nic_emu.congestion import CongestionControl
from nic_emu.connection.common import (
    MAX_RTT_SAMPLE_NS,
    NACK_SEQUENCE,
    NACK_TRIMMED,
    NACK_TRIMMED_LASTHOP,
    NO_FRAMES,
    READY,
    TS_MASK,
    Frame,
    Frames,
    Outbox,
    QpStatus,
)
from nic_emu.connection.events import AppEvent, WriteCompleted
from nic_emu.connection.gobackn import GoBackN
from nic_emu.connection.probes import PathProbes
from nic_emu.connection.records import ConnectionCounters, ConnectionLog
from nic_emu.connection.reverse import ReverseEvs
from nic_emu.connection.rtt import RttTimers
from nic_emu.connection.transmit import DataTransmitter
from nic_emu.dcqcn import DcqcnRate
from nic_emu.ev_set import EvSet
from nic_emu.nic_host import time_reached
from nic_emu.sender import IN_FLIGHT, PSN_MASK, SendState, TxPacket, unwrap

if cython.compiled:  # the SACK bitmap's lowest set bit, a time, read in C (.pxd files)
    from cython.cimports.nic_emu.connection.feedback import _lowest_bit
    from cython.cimports.nic_emu.nic_host import nic_ns_ll

OVERTAKEN = "overtaken"  # lost: an EV probe sent later on the same path came back
# on_sack's times as C integers (native build): now and the echoed timestamp read up to
# 2**61, the minimum RTT used up to 2**62 (its NO_RTT), so no difference overflows;
# _INEXACT is nic_ns_ll's answer for a value it does not read (NIC_NS_INEXACT)
_TIME_LIMIT = 1 << 61
_RTT_LIMIT = 1 << 62
_INEXACT = -(1 << 63)
_TS_MASK = TS_MASK
_BITS64 = 0xFFFF_FFFF_FFFF_FFFF  # a SACK's bitmap: 64 bits


class Losses:
    """What a loss does, the one home for every detector's losses (:meth:`lost`) and
    for queueing a retransmission (:meth:`queue_retransmit`, with its limit,
    ``max_packet_transmissions``, past which the queue pair fails)."""

    def __init__(
        self,
        qp: QpStatus,
        cfg: NicConfig,
        send: SendState,
        evs: EvSet,
        cc: CongestionControl,
        timers: RttTimers,
        probes: PathProbes,
        *,
        mrc: bool,
        counters: ConnectionCounters,
        log: ConnectionLog,
    ) -> None:
        self.qp = qp
        self.send = send
        self.evs = evs
        self.cc = cc
        self.timers = timers
        self.probes = probes
        self.mrc = mrc
        self.quarantine = cfg.path_quarantine and mrc
        self.max_transmissions = cfg.max_packet_transmissions
        self.counters = counters
        self.log = log

    def lost(self, pkt: TxPacket, reason: str, now: int) -> None:
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
            if self.mrc and reason not in ("port", "path", OVERTAKEN):
                self.evs.mark_bad(entry, reason, now, sent_ns=pkt.sent_ns)
                if self.quarantine and entry.path not in self.evs.quarantined:
                    self.probes.hold_path(entry, pkt.psn, pkt.sent_ns, reason, now)
        self.cc.on_loss(pkt.length, now)
        self.queue_retransmit(pkt, reason, now)

    def overtaken(self, path: object, probe_sent_ns: int, now: int) -> None:
        """An EV probe sent on ``path`` at ``probe_sent_ns`` came back while the path was
        held for an overdue packet: every packet still in flight on the path that left a
        reorder window (:meth:`RttTimers.reorder_window`: at least twice the queueing
        delay, which is what a packet in the data queue can lag a probe by) before the
        probe was lost, as RACK-TLP's probe shows for a tail (RFC 8985 section 7.4). Lost
        now rather than at the retransmission timeout; the path is not judged again: the
        probe just showed it works (reason ``overtaken``, docs/nic-emu.md section 3)."""
        limit = probe_sent_ns - self.timers.reorder_window()
        overtaken = [p for p in self.send.in_flight_on_path(path) if p.sent_ns <= limit]
        self.lose_in_flight(overtaken, OVERTAKEN, now)

    def lose_in_flight(self, pkts: list[TxPacket], reason: str, now: int) -> None:
        """``pkts``, in flight, were lost together (a port or a path gone, a probe that
        overtook them): each out of flight and through :meth:`lost`, until one fails the
        queue pair."""
        send = self.send
        qp = self.qp
        for pkt in pkts:
            send.mark_lost(pkt)
            self.lost(pkt, reason, now)
            if qp.state is not READY:
                return

    def queue_retransmit(self, pkt: TxPacket, reason: str, now: int) -> None:
        """``pkt`` (already queued by :meth:`SendState.mark_lost`) will be sent again:
        recorded, unless it was sent ``max_packet_transmissions`` times (the queue pair
        fails)."""
        self.log.retransmit(now, pkt.psn, reason, transmissions=pkt.transmissions)
        limit = self.max_transmissions
        if pkt.transmissions >= limit:
            self.qp.fail(
                "packet_retries",
                f"PSN {pkt.psn & PSN_MASK:#x} was sent {pkt.transmissions} times without "
                f"being acknowledged (max_packet_transmissions={limit})",
                now,
            )


class TailProbe:
    """RACK-TLP's tail-loss probe (RFC 8985 section 7): ``armed`` (one probe per
    acknowledgement progress) and ``sent_ns``, the send time of the outstanding one (-1:
    none). MRC only."""

    def __init__(
        self,
        qp: QpStatus,
        send: SendState,
        evs: EvSet,
        cc: CongestionControl,
        timers: RttTimers,
        frames: DataTransmitter,
        probes: PathProbes,
        losses: Losses,
        *,
        mrc: bool,
        mtu: int,
        window: int,
    ) -> None:
        self.qp = qp
        self.send = send
        self.evs = evs
        self.cc = cc
        self.timers = timers
        self.frames = frames  # when the last data packet left
        self.probes = probes
        self.losses = losses
        self.mrc = mrc
        self.mtu = mtu
        self.window = window
        self.armed = True
        self.sent_ns = -1

    def deadline(self) -> int | None:
        """When to send a tail-loss probe: in-flight data, no probe out, and nothing new can
        be sent, because nothing is queued or because the window is full (RFC 8985 section
        7.2: application- or cwnd-limited). A window full of packets lost on a cut path
        would otherwise wait for the retransmission timeout: no later packet is sent whose
        acknowledgement would let RACK see the losses."""
        if not self.mrc or not self.armed:
            return None
        send = self.send
        inflight = send.inflight_bytes
        if not inflight or send.rtx_heap:
            return None
        if send.pending and inflight + self.mtu <= self.cc.cwnd and self._room(send):
            return None  # new data can go: its acknowledgements drive RACK
        return self.frames.last_tx_ns + self.timers.tail_probe_timeout()

    def _room(self, send: SendState) -> bool:
        """New data fits the receive window (``next_psn - snd_una < window``): on C
        integers when the window is an int in range (the native build's)."""
        if cython.compiled:
            w = nic_ns_ll(self.window, _TIME_LIMIT)
            if w != _INEXACT:
                return send.next_psn - send.snd_una < w
        return send.next_psn - send.snd_una < self.window

    def send_probe(self, now: int) -> Frame | None:
        """A reliability probe (opcode 0xDE to the peer QP): its SACK reply shows which of
        the last packets never arrived, without waiting for the retransmission timeout.
        Returns it (None: no path at all; the retransmission timeout takes over)."""
        self.armed = False
        entry = self.evs.pick(now)
        if entry is None:
            return None
        self.sent_ns = now
        return self.probes.send_tail_probe(entry, self.send.snd_una, now)

    def answered(self, window: int, now: int) -> bool:
        """The probe's answer came back (a SACK with ``probe_reply``): the packets sent
        before it that are still missing, allowing for reordering (``window``), were
        lost. False if that failed the queue pair."""
        # The probe left after these packets; if they are still missing when its
        # answer comes back (allowing for reordering), they were lost.
        for pkt in self.send.lost_before(self.sent_ns - window):
            self.losses.lost(pkt, "tail_probe", now)
            if self.qp.state is not READY:
                return False
        self.sent_ns = -1
        return True


class FeedbackHost(Protocol):
    """What acknowledgements ask of the NIC: the peer's ports and when it was heard
    from, dropping a bad one, and telling the application of completed WRITEs."""

    def note_peer_ports(self, peer: str, bits: int, now: int) -> None: ...

    def heard_from(self, peer: str, ev: int, now: int) -> None: ...

    def drop(self, now: int, reason: str, plane: int | None, **detail: object) -> None: ...

    def emit(self, event: AppEvent) -> None: ...


class Feedback:
    """The acknowledgements of one connection's data (:meth:`on_sack`, :meth:`on_nack`):
    what they acknowledge, what they show lost (RACK: ``reorder_threshold_pkts`` later
    sends and the reorder window), the EVs they judge, the RTT samples, the congestion
    window, and the WRITEs they complete. Owns no state of its own: it moves the parts'."""

    def __init__(
        self,
        host: FeedbackHost,
        qp: QpStatus,
        cfg: NicConfig,
        send: SendState,
        evs: EvSet,
        cc: CongestionControl,
        timers: RttTimers,
        reverse: ReverseEvs,
        probes: PathProbes,
        losses: Losses,
        tail: TailProbe,
        *,
        peer: str,
        peer_addrs: frozenset[bytes],
        mrc: bool,
        gbn: GoBackN | None,
        counters: ConnectionCounters,
        log: ConnectionLog,
    ) -> None:
        self.host = host
        self.qp = qp
        self.qpn = log.qpn
        self.peer = peer
        self.peer_addrs = peer_addrs
        # Per plane, the peer's address once a SACK came from it (b"": none yet), as the
        # receive side keeps it: one bytes comparison instead of the set's lookup.
        self._src_ok: list[bytes] = [b""] * len(reverse.heard)
        self.mrc = mrc
        self.window_psns = cfg.receive_window_psns
        self.reorder_threshold = cfg.reorder_threshold_pkts
        self.quarantine = cfg.path_quarantine and self.mrc
        self.send = send
        self.evs = evs
        self.cc = cc
        self.timers = timers
        self.reverse = reverse
        self.probes = probes
        self.losses = losses
        self.tail = tail
        self.gbn = gbn
        self.dcqcn: DcqcnRate | None = None if gbn is None else gbn.dcqcn
        self.counters = counters
        self.log = log

    def on_sack(self, s: Sack, plane: int, now: int) -> Frames:
        """A SACK: what it acknowledges, shows lost and says of the EVs. Returns the
        frames it makes (probes of quarantined paths: usually none)."""
        out: Frames = NO_FRAMES
        host = self.host
        src = s.inner_src
        if src != self._src_ok[plane]:
            if src not in self.peer_addrs:
                host.drop(now, "foreign_source", plane, qpn=self.qpn)
                return out
            self._src_ok[plane] = src
        host.note_peer_ports(self.peer, s.port_status, now)
        host.heard_from(self.peer, s.ev, now)
        qp = self.qp
        if qp.state is not READY:
            return out
        reverse = self.reverse
        reverse.heard[plane] = now
        reverse.last_ev[plane] = s.ev
        if time_reached(now, reverse.refreshed[plane], reverse.refresh_ns):  # C (native)
            reverse.heard_on(plane, s.ev, now)
        self.counters.rx_sack += 1
        send = self.send
        cum = unwrap(s.cum_psn, send.snd_una)
        if cum > send.next_psn or cum < send.snd_una - self.window_psns:
            self.counters.rx_bad_ack += 1
            host.drop(now, "ack_outside_window", plane, qpn=self.qpn, psn=cum)
            return out
        timers = self.timers
        # now as a C integer (native build), for the arithmetic below that has no float
        # term when it is an int: NIC_NS_INEXACT when it is not, and the Python's taken
        n = _INEXACT
        if cython.compiled:
            n = nic_ns_ll(now, _TIME_LIMIT)
        min_rtt = timers.min_rtt_ns
        if n != _INEXACT and -_RTT_LIMIT <= min_rtt <= _RTT_LIMIT:
            ambiguous_after = n - min_rtt
        else:
            ambiguous_after = now - min_rtt
        acked = send.ack_below(cum, ambiguous_after)
        bits = s.bitmap  # 64 bits: a C integer on the native build, as its PSNs
        if bits and self.mrc:
            base = cum + s.sack_offset
            # PSNs already acknowledged by an earlier SACK (send.sacked) are no news; of
            # the wider bitmap, only the 64 bits under the SACK's matter
            shift = base - send.snd_una
            news = send.sacked >> shift if shift >= 0 else send.sacked << -shift
            known = news & _BITS64
            bits &= ~known
            nxt = send.next_psn
            while bits:
                # the lowest bit's index: one instruction on the native build
                low = _lowest_bit(bits) if cython.compiled else (bits & -bits).bit_length() - 1
                bits &= bits - 1
                psn = base + low
                if psn >= nxt:
                    break
                pkt = send.ack(psn, ambiguous_after)
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
            self.counters.ecn_echo_rx += 1
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
        ts = s.echoed_ts
        if ts is not None:
            t = _INEXACT
            if cython.compiled and n != _INEXACT:
                t = nic_ns_ll(ts, _TIME_LIMIT)
            if t != _INEXACT:
                rtt = (n - t) & _TS_MASK  # two's complement: Python's & of the difference
            else:
                rtt = (now - ts) & TS_MASK
            if rtt > MAX_RTT_SAMPLE_NS:
                rtt = -1
        if rtt >= 0:
            timers.sample(rtt, now)
        if acked:
            timers.last_ack_ns = now  # timers.progress(now), inline: once per SACK
            timers.backoff = 0
            timers.hold_until = 0
            self.cc.on_ack(acked, ecn, rtt, now, send.inflight_bytes)
        elif ecn:
            self.cc.on_ack(0, True, rtt, now, send.inflight_bytes)
        if self.mrc:
            window = timers.reorder_window()
            if not self._reorder_losses(window, now):
                return out
            if self.quarantine:
                if self.evs.quarantined:
                    probes: Outbox = []
                    self.probes.review_quarantine(now, probes)
                    out = probes
                self.probes.quarantine_overdue(send, now)
            if s.probe_reply and self.tail.sent_ns >= 0 and not self.tail.answered(window, now):
                return out
        if acked:
            self.tail.armed = True
        self.complete_writes(now)
        return out

    def _reorder_losses(self, window: int, now: int) -> bool:
        """RACK's losses after a SACK (``reorder_threshold`` later sends and ``window``
        ns). False if one failed the queue pair."""
        send = self.send
        threshold = self.reorder_threshold
        if cython.compiled:
            # Most SACKs show none: the oldest packet is tested on C integers first (when
            # the window and the threshold are ints in range), and the list is made only
            # when it is lost.
            w = nic_ns_ll(window, _TIME_LIMIT)
            th = nic_ns_ll(threshold, _TIME_LIMIT)
            if (
                w != _INEXACT
                and th != _INEXACT
                and not send.front_lost(send.acked_max_tx_seq - th, send.acked_max_sent_ns - w)
            ):
                return True
        for pkt in send.detect_losses(threshold, window):
            self.losses.lost(pkt, "reorder", now)
            if self.qp.state is not READY:
                return False
        return True

    def complete_writes(self, now: int) -> None:
        """Tell the application of the WRITEs now wholly acknowledged, in posting order."""
        send = self.send
        if not send.write_done():  # most acknowledgements complete none: no list made
            return
        done = send.completed_writes()
        host = self.host
        qpn = self.qpn
        for wr in done:
            self.counters.writes_completed += 1
            host.emit(WriteCompleted(qpn, wr.wr_id, wr.length, now))
            self.log.record(now, ev_kinds.WRITE_DONE, psn=wr.last_psn, wr_id=wr.wr_id)

    def on_nack(self, n: Nack, plane: int, now: int) -> None:
        host = self.host
        if n.inner_src not in self.peer_addrs:
            host.drop(now, "foreign_source", plane, qpn=self.qpn)
            return
        host.note_peer_ports(self.peer, n.port_status, now)
        host.heard_from(self.peer, n.ev, now)
        if self.qp.state is not READY:
            return
        self.reverse.heard_on(plane, n.ev, now)
        self.counters.rx_nack += 1
        send = self.send
        cum = unwrap(n.cum_psn, send.snd_una)
        psn = unwrap(n.nack_psn, send.snd_una)
        if not send.snd_una - self.window_psns <= cum <= send.next_psn:
            self.counters.rx_bad_ack += 1
            host.drop(now, "ack_outside_window", plane, qpn=self.qpn, psn=cum)
            return
        acked = send.ack_below(cum, now - self.timers.min_rtt_ns)
        send.advance_una(cum)
        if acked:
            self.timers.progress(now)
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
                self.counters.rx_nack_stale += 1
            elif pkt is not None and pkt.state == IN_FLIGHT:
                send.mark_lost(pkt)
                self.cc.on_nack(pkt.length, now, send.inflight_bytes)
                if pkt.entry is not None:
                    pkt.entry.nacks += 1
                tag = "trimmed_lasthop" if reason == NACK_TRIMMED_LASTHOP else "trimmed"
                self.losses.queue_retransmit(pkt, tag, now)
        elif (
            reason == NACK_SEQUENCE and self.gbn is not None and send.snd_una <= psn < send.next_psn
        ):
            self.gbn.on_nak(send, psn, now)
        self.complete_writes(now)
