"""The receive side of a connection (:class:`Receiver`): placing data (any order, never
twice), reliability probes, the acknowledgements sent back (SACK/NACK) over the reverse
EV set (:mod:`nic_emu.connection.reverse`), and the baseline's go-back-N receiver (one
NAK per gap) and DCQCN CNP pacing.
"""

from __future__ import annotations

from typing import Protocol

import cython

from mrc_wire.codec import DataPacket, Nack, Probe, Sack, encode_nack, encode_sack
from mrc_wire.constants import NackReason
from nic_emu import event_log as ev_kinds
from nic_emu.config import NicConfig
from nic_emu.connection.common import (
    DSCP_TRIMMED,
    DSCP_TRIMMED_LASTHOP,
    ECN_CE,
    NACK_SEQUENCE,
    NACK_TRIMMED,
    NACK_TRIMMED_LASTHOP,
    TS_MASK,
    Frame,
)
from nic_emu.connection.events import AppEvent, WriteReceived
from nic_emu.connection.records import ConnectionCounters, ConnectionLog
from nic_emu.connection.reverse import ReverseEvs
from nic_emu.dcqcn import CnpPacer
from nic_emu.memory import MemoryRegion
from nic_emu.nic_host import time_reached
from nic_emu.receiver import (
    DUPLICATE,
    NEW_IN_ORDER,
    OUT_OF_WINDOW,
    GoBackNReceiveState,
    MessageTracker,
    ReceiveState,
)
from nic_emu.sender import PSN_HALF, PSN_MASK
from nic_emu.streams import StreamReceiver

if cython.compiled:  # an int's bit count read in C (receive.pxd)
    from cython.cimports.nic_emu.connection.receive import nic_int_bit_count

# C values on the native build (receive.pxd): the PSN unwrap's masks, the SACK's byte
# count's, and what accepting a PSN answered (on_data compares it in C)
_PSN_MASK = PSN_MASK
_PSN_HALF = PSN_HALF
_TS_MASK = TS_MASK
_DUPLICATE = DUPLICATE
_NEW_IN_ORDER = NEW_IN_ORDER
_OUT_OF_WINDOW = OUT_OF_WINDOW


class ReceiveHost(Protocol):
    """What the receive side asks of its NIC."""

    port_status_bits: int
    placed_bytes: int  # payload placed for the applications (each byte once), all QPs

    def emit(self, event: AppEvent) -> None: ...

    def drop(self, now: int, reason: str, plane: int | None, **detail: object) -> None: ...

    def heard_from(self, peer: str, ev: int, now: int) -> None: ...


class Receiver:
    """The receive side of connection ``qpn``: its state is the PSNs that arrived
    (``recv``), the messages they complete (``msgs``), the acknowledgement owed
    (``sack_pending``, ``sack_deadline``) and the reverse EV set (``reverse``)."""

    def __init__(
        self,
        host: ReceiveHost,
        cfg: NicConfig,
        *,
        peer: str,
        peer_addrs: frozenset[bytes],
        recv_psn: int,
        mrc: bool,
        regions: dict[int, MemoryRegion],
        reverse: ReverseEvs,
        templates: tuple[list[Sack], list[Nack]],
        counters: ConnectionCounters,
        log: ConnectionLog,
    ) -> None:
        window = cfg.receive_window_psns
        self.host = host
        self.peer = peer
        self.qpn = log.qpn
        self.peer_addrs = peer_addrs
        self.mrc = mrc
        self.ready = True  # False once the connection failed (stop())
        self.recv: ReceiveState | GoBackNReceiveState = (
            ReceiveState(recv_psn, window) if mrc else GoBackNReceiveState(recv_psn, window)
        )
        self.msgs = MessageTracker(recv_psn)
        self.va_prune_at = 2 * window  # MessageTracker.prune: amortised O(1) per packet
        self.rcvd_bytes = 0
        self.sack_pending = 0
        self.sack_deadline: int | None = None
        self.sack_every = cfg.sack_every_pkts
        self.sack_delay = cfg.sack_delay_ns
        self.sack_trigger: tuple[int, int, int | None, bool] = (0, recv_psn, None, False)
        self.regions = regions
        self.sink: StreamReceiver | None = None  # a responder QP's streamed receive side
        self.reverse = reverse
        # Per data packet: the reverse set's per-plane lists (mutated in place, never
        # replaced) and refresh period, bound once.
        self._heard = reverse.heard
        self._last_ev = reverse.last_ev
        self._refreshed = reverse.refreshed
        self._refresh_ns = reverse.refresh_ns
        # Per plane, the peer's address once a packet came from it (b"": none yet): a
        # source equal to it is the peer's without the set's lookup (hashing the bytes).
        self._src_ok: list[bytes] = [b""] * len(self._heard)
        self.stmpl, self.ntmpl = templates
        self.counters = counters
        self.log = log
        dc = cfg.roce.dcqcn
        # RoCE: the DCQCN notification point paces the CNPs (nic_emu.dcqcn)
        self.cnp: CnpPacer | None = CnpPacer(dc) if not mrc and dc.enabled else None

    def stop(self) -> None:
        """The connection failed: data is dropped from now on, no SACK is owed."""
        self.ready = False
        self.sack_deadline = None

    def attach_sink(self, sink: StreamReceiver) -> None:
        """Check incoming WRITEs into ``sink`` instead of the registered regions."""
        self.regions = {}
        self.sink = sink

    def release(self) -> None:
        """Drop the buffers of a destroyed QP (its counters stay)."""
        self.regions = {}
        self.sink = None
        self.msgs = MessageTracker(self.recv.rcv_nxt)

    def on_data(self, m: DataPacket, plane: int, now: int) -> Frame | None:
        """A data packet: placed (or refused, counted). Returns the acknowledgement it
        asks for now (a SACK, or a NACK of a trim or of a go-back-N gap), if any."""
        host = self.host
        counters = self.counters
        if not self.ready:
            host.drop(now, "connection_error", plane, qpn=self.qpn)
            return None
        src = m.inner_src
        if src != self._src_ok[plane]:
            if src not in self.peer_addrs:
                host.drop(now, "foreign_source", plane, qpn=self.qpn)
                return None
            self._src_ok[plane] = src
        self._heard[plane] = now
        host.heard_from(self.peer, m.ev, now)
        self._last_ev[plane] = m.ev
        if time_reached(now, self._refreshed[plane], self._refresh_ns):  # C ints (native)
            self.reverse.heard_on(plane, m.ev, now)
        recv = self.recv
        mrc_state = type(recv) is ReceiveState  # MRC: its fields and accept in C (native)
        rcv_nxt = cython.cast(ReceiveState, recv).rcv_nxt if mrc_state else recv.rcv_nxt
        wire_psn = m.psn  # 24 bits: unwrapped in C integers on the native build
        psn = rcv_nxt + (((wire_psn - rcv_nxt) & _PSN_MASK) ^ _PSN_HALF) - _PSN_HALF  # unwrap()
        dscp = m.dscp
        if dscp in (DSCP_TRIMMED, DSCP_TRIMMED_LASTHOP):
            counters.rx_trimmed += 1
            if not self.mrc:
                counters.rx_trimmed_ignored += 1  # RoCE has no trim reaction
                return None
            if self.already_received(psn):
                return self.send_sack(now, m.ev, psn, m.timestamp, m.ecn == ECN_CE)
            lasthop = dscp == DSCP_TRIMMED_LASTHOP
            reason = NACK_TRIMMED_LASTHOP if lasthop else NACK_TRIMMED
            return self.send_nack(now, reason, psn, m.ev, m.timestamp, m.ecn == ECN_CE)
        length = m.dma_length
        va = m.va
        sink = self.sink
        if sink is not None:
            region = None
            offset = 0
            refused = sink.admit(psn, m.rkey, va, length)
            if refused is not None:
                counters.rx_access_error += 1
                host.drop(now, refused, plane, qpn=self.qpn, psn=psn, rkey=m.rkey, va=va)
                return None
        else:
            region = self.regions.get(m.rkey)
            offset = va - region.va if region is not None else -1
            if offset < 0 or offset + length > len(region.buffer):  # type: ignore[union-attr]
                counters.rx_access_error += 1
                host.drop(now, "memory_access", plane, qpn=self.qpn, psn=psn, rkey=m.rkey, va=va)
                return None
        if mrc_state:  # MRC: a C call on the native build
            result = cython.cast(ReceiveState, recv).accept(psn)
        else:
            result = recv.accept(psn)
        if result == _DUPLICATE:
            counters.rx_dup += 1
            return self.send_sack(now, m.ev, psn, m.timestamp, m.ecn == ECN_CE)
        if result == _OUT_OF_WINDOW:
            counters.rx_out_of_window += 1
            return None
        mrc = self.mrc
        if result != _NEW_IN_ORDER and not mrc:
            return self._out_of_sequence(m, now)  # go-back-N: dropped, NAKed once per gap
        if sink is not None:
            sink.place(psn, m.payload, m.last)
        else:
            region.buffer[offset : offset + length] = m.payload  # type: ignore[union-attr]
        counters.rx_data += 1
        counters.bytes_placed += length
        self.rcvd_bytes += length
        host.placed_bytes += length
        msgs = self.msgs
        if result != _NEW_IN_ORDER or psn == msgs.msg_first_psn:
            # Only a message's first PSN needs its VA. Every message ending below the
            # cumulative point is complete once an in-order packet is handled, so an
            # in-order PSN other than msg_first_psn follows no message end: not a start.
            msgs.va_by_psn[psn] = va
        if m.last:
            msgs.note_last(psn, m.rkey, va + length)
        if result == _NEW_IN_ORDER:
            cum = cython.cast(ReceiveState, recv).rcv_nxt if mrc_state else recv.rcv_nxt
            if msgs.has_due(cum):
                self._deliver_messages(now)
            elif len(msgs.va_by_psn) > self.va_prune_at:
                msgs.prune(cum)  # a long message: keep its first VA, not every one
        else:
            counters.rx_out_of_order += 1
        ecn = m.ecn == ECN_CE
        if ecn and not mrc:
            cnp = self.cnp  # DCQCN: at most one CNP per interval
            ecn = cnp is not None and cnp.on_ce(now)
        pending = self.sack_pending + 1
        if (
            ecn
            or m.ack_req
            or result != _NEW_IN_ORDER
            or (mrc and (cython.cast(ReceiveState, recv).ooo if mrc_state else recv.ooo))  # type: ignore[union-attr]
            or pending >= self.sack_every
        ):
            return self.send_sack(now, m.ev, psn, m.timestamp, ecn)
        self.sack_pending = pending
        self.sack_trigger = (m.ev, psn, m.timestamp, False)
        if self.sack_deadline is None:
            self.sack_deadline = now + self.sack_delay
        return None

    def _out_of_sequence(self, m: DataPacket, now: int) -> Frame | None:
        """Go-back-N: a packet past a gap is dropped; the expected PSN is NAKed once per
        gap."""
        self.counters.rx_out_of_order += 1
        recv = self.recv
        if recv.nak_outstanding:  # type: ignore[union-attr]
            return None
        recv.nak_outstanding = True  # type: ignore[union-attr]
        return self.send_nack(now, NACK_SEQUENCE, recv.rcv_nxt, m.ev, m.timestamp, False)

    def _deliver_messages(self, now: int) -> None:
        host = self.host
        for first, last, rkey, va, mlen in self.msgs.completed(self.recv.rcv_nxt):
            self.counters.writes_received += 1
            host.emit(WriteReceived(self.qpn, rkey, va, mlen, first, last, now))
            self.log.record(now, ev_kinds.WRITE_RECEIVED, psn=last, bytes=mlen)

    def already_received(self, psn: int) -> bool:
        recv = self.recv
        off = psn - recv.rcv_nxt
        if off < 0:
            return True
        return isinstance(recv, ReceiveState) and off < recv.window and bool((recv.ooo >> off) & 1)

    def on_reliability_probe(self, p: Probe, plane: int, now: int) -> Frame | None:
        """A probe to this QP asks for the current acknowledgement state: returns the
        SACK that answers it (None: dropped, or no reverse path)."""
        if p.inner_src not in self.peer_addrs:
            self.host.drop(now, "foreign_source", plane, qpn=self.qpn)
            return None
        self.host.heard_from(self.peer, p.ev, now)
        self.reverse.seen(plane, p.ev, now)
        rcv = self.recv.rcv_nxt - 1
        return self.send_sack(now, p.ev, rcv, p.timestamp, False, probe_reply=True)

    def on_timer(self, now: int) -> Frame | None:
        """The delayed SACK, if due (``sack_deadline``)."""
        if self.sack_deadline is not None and now >= self.sack_deadline:
            ev, psn, ts, ecn = self.sack_trigger
            return self.send_sack(now, ev, psn, ts, ecn)
        return None

    def send_sack(
        self,
        now: int,
        echoed_ev: int,
        trigger_psn: int,
        echoed_ts: int | None,
        ecn: bool,
        probe_reply: bool = False,
    ) -> Frame | None:
        """The SACK (None: no reverse path); no SACK is owed any more either way."""
        self.sack_pending = 0
        self.sack_deadline = None
        choice = self.reverse.pick(now)
        if choice is None:
            self.counters.sack_no_path += 1
            return None
        plane, ev = choice
        s = self.stmpl[plane]
        recv = self.recv
        if isinstance(recv, ReceiveState):
            rs = cython.cast(ReceiveState, recv)  # its fields and sack_view in C
            cum = rs.rcv_nxt
            base, bitmap = rs.sack_view(trigger_psn)
            ooo = rs.ooo
            # no PSN beyond the cumulative point: no count to make; else the native
            # build counts the bits from the int's digits in C (no method call)
            if ooo:
                count = -1
                if cython.compiled:
                    count = nic_int_bit_count(ooo)
                if count < 0:
                    count = ooo.bit_count()
                s.ooo_count = min(count, 0xFFFF)
            else:
                s.ooo_count = 0
        else:
            cum = recv.rcv_nxt
            base, bitmap = cum, 0
        s.ev = ev
        s.outer_dst = self.reverse.carrier[ev]
        s.cum_psn = cum & _PSN_MASK
        s.sack_offset = base - cum
        s.bitmap = bitmap
        s.echoed_ev = echoed_ev
        s.echoed_psn = trigger_psn & PSN_MASK
        s.echoed_ts = echoed_ts
        s.rcvd_bytes = self.rcvd_bytes & _TS_MASK
        s.ecn_echo = ecn
        s.probe_reply = probe_reply
        s.port_status = self.host.port_status_bits
        self.counters.tx_sack += 1
        return plane, encode_sack(s)

    def send_nack(
        self,
        now: int,
        reason: int,
        psn: int,
        echoed_ev: int,
        echoed_ts: int | None,
        ecn: bool,
    ) -> Frame | None:
        """The NACK (None: no reverse path)."""
        choice = self.reverse.pick(now)
        if choice is None:
            self.counters.sack_no_path += 1
            return None
        plane, ev = choice
        n = self.ntmpl[plane]
        n.ev = ev
        n.outer_dst = self.reverse.carrier[ev]
        n.cum_psn = self.recv.rcv_nxt & PSN_MASK
        n.nack_psn = psn & PSN_MASK
        n.reason = reason
        n.echoed_ev = echoed_ev
        n.echoed_ts = echoed_ts
        n.ecn_echo = ecn
        n.port_status = self.host.port_status_bits
        frame = encode_nack(n)
        self.counters.tx_nack += 1
        self.log.record(
            now,
            ev_kinds.NACK_TX,
            plane=plane,
            ev=echoed_ev,
            psn=psn,
            reason=NackReason(reason).name,
        )
        return plane, frame
