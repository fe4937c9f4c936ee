"""One queue pair (connection) of an emulated MRC NIC: both its send and receive sides.

The connection is sans-IO like the NIC core that owns it: methods take ``now`` (virtual
or real nanoseconds, supplied by the driver) and append ``(plane, frame)`` pairs to the
NIC's outbox. Nothing here reads a clock, sleeps or touches a socket.

Send side (MRC mode): packets are sprayed over the EV set (``nic_emu.evs``), each
carrying PSN, VA, R_Key and its own length (RETH in every packet). Reactions:

- SACK: cumulative PSN + 64-bit bitmap acknowledge packets; an ECN echo puts the echoed
  EV in SKIP; time-ordered SACK evidence declares gaps lost (``nic_emu.sender``).
- NACK TRIMMED / TRIMMED_LASTHOP: retransmit at once, EV state unchanged, cwnd -= bytes.
- loss without a trim (SACK gap or timeout): the EV goes ASSUMED_BAD at once, a backup
  of the same plane replaces it, the packet is retransmitted on the next EV.
- timeout with no acknowledgement at all since the packet left ("silence"): backoff,
  linear then exponential; ``max_retries`` silent timeouts in a row fail the connection.

Receive side: packets are placed in any order, duplicates are never placed twice,
SACKs go back over a small reverse EV set (``reverse_evs_per_plane`` per plane).

Baseline mode (``TransportMode.ROCE``): one EV by hash of the 5-tuple, go-back-N
(receiver drops out-of-order packets and NACKs the expected PSN once), trimmed packets
dropped without reaction, timeouts resend everything from the oldest unacknowledged PSN.
"""

from __future__ import annotations

import enum
import random
import zlib
from collections.abc import Callable
from typing import TYPE_CHECKING

from mrc_wire import (
    EV_PROBE_QPN,
    DataPacket,
    Nack,
    Probe,
    Sack,
    encode_data,
    encode_nack,
    encode_probe,
    encode_sack,
)
from mrc_wire.constants import Dscp, Ecn, NackReason
from nic_emu import events as ev_kinds
from nic_emu.completions import ConnectionFailed, WriteCompleted, WriteReceived
from nic_emu.config import ACK_TIMEOUT_MAX_EXP, ACK_TIMEOUT_UNIT_NS, TransportMode
from nic_emu.congestion import make_congestion_control
from nic_emu.evs import ASSUMED_BAD, GOOD, EvEntry, EvSet, EvState
from nic_emu.exceptions import ConnectionFailedError, MemoryAccessError
from nic_emu.memory import MemoryRegion
from nic_emu.psn import PSN_MASK, unwrap
from nic_emu.receiver import (
    DUPLICATE,
    NEW_IN_ORDER,
    OUT_OF_WINDOW,
    GoBackNReceiveState,
    MessageTracker,
    ReceiveState,
)
from nic_emu.sender import IN_FLIGHT, SendState, TxPacket, WriteRequest

if TYPE_CHECKING:
    from nic_emu.core import NicCore

TS_MASK = 0xFFFF_FFFF  # TSETH timestamps: nanoseconds modulo 2^32, opaque to the peer
MAX_RTT_SAMPLE_NS = 1_000_000_000  # an echoed timestamp further back than this is bogus
RTO_CAP_NS = ACK_TIMEOUT_UNIT_NS << ACK_TIMEOUT_MAX_EXP
REVERSE_SALT_BASE = 0x8000  # reverse EVs use the upper half of the salt space
_CE = int(Ecn.CE)
_TRIMMABLE = int(Dscp.TRIMMABLE)
_TRIMMABLE_RETX = int(Dscp.TRIMMABLE_RETX)
_TRIMMED = int(Dscp.TRIMMED)
_TRIMMED_LASTHOP = int(Dscp.TRIMMED_LASTHOP)
_NACK_TRIMMED = int(NackReason.TRIMMED)
_NACK_TRIMMED_LASTHOP = int(NackReason.TRIMMED_LASTHOP)
_NACK_SEQUENCE = int(NackReason.ROD_OOO)  # go-back-N "expected PSN" NACK of the baseline
_PLACEHOLDER_ADDR = bytes(16)
_PSN_HALF = 1 << 23


def _span(ns: int) -> str:
    """A duration for messages: ns, us, ms or s, three significant digits."""
    for unit, scale in (("s", 1_000_000_000), ("ms", 1_000_000), ("us", 1_000)):
        if ns >= scale:
            return f"{ns / scale:.3g} {unit}"
    return f"{ns} ns"


class QpState(enum.Enum):
    READY = "ready"
    ERROR = "error"


class Connection:
    """A queue pair to one peer QP. Create it with :meth:`NicCore.create_connection`."""

    def __init__(
        self,
        nic: NicCore,
        qpn: int,
        peer: str,
        peer_qpn: int,
        mode: TransportMode,
        send_psn: int,
        recv_psn: int,
        now: int,
    ) -> None:
        cfg = nic.config
        self.nic = nic
        self.cfg = cfg
        self.qpn = qpn
        self.peer = peer
        self.peer_qpn = peer_qpn
        self.mode = mode
        self.mrc = mode is TransportMode.MRC
        self.state = QpState.READY
        self.error: ConnectionFailedError | None = None
        self.created_ns = now
        self._acked_per_plane: list[int] | None = None  # kept by release()
        self._rng = random.Random(f"{nic.seed}/{nic.name}/{qpn}")
        plan = nic.plan
        planes = nic.plane_count
        self.peer_addrs = [plan.nic_address(peer, p).packed for p in range(planes)]
        self._peer_addr_set = frozenset(self.peer_addrs)

        # -- send side
        mtu = cfg.mtu_payload
        self.send = SendState(send_psn, mtu, cfg.receive_window_psns)
        self.evs = self._build_mrc_evs(now) if self.mrc else self._build_roce_ev(now)
        used_planes = len(self.evs.planes)
        bdp = used_planes * cfg.port_rate_bps * cfg.base_rtt_ns // 8_000_000_000
        self.cc = make_congestion_control(cfg.cc, mtu, max(bdp, mtu), cfg.base_rtt_ns, now)
        self.last_ack_ns = now
        self.min_rtt_ns = 1 << 62
        self.qdelay_ns = 0.0
        self.backoff = 0  # consecutive silent timeouts
        self.hold_until = 0  # no timeout fires before this (after a silent one)
        self.no_ev_since: int | None = None
        # How long the connection may go without a usable EV (probing all along) before it
        # fails; a driver may set it per connection (the process: the transfer deadline).
        self._no_ev_timeout_ns = cfg.no_usable_ev_timeout_ns
        self.quiet_since = now  # data outstanding and nothing heard from the peer since
        self.probe_next: int | None = None
        self.pace_at: int | None = None  # a port becomes free for the next packet
        # The host's scheduling of this connection (NicCore.frames_to_send, next_timer).
        self.created_seq = 0
        self.ready_index = 0
        self.sched_deadline: int | None = None
        self.parked_plane = -1  # the host's queue of connections waiting for a port
        self.pace_plane = 0  # the port ``pace_at`` waits for, and whether the EV
        self.pace_fixed = False  # send_one would pick then is fixed (GOOD, next in turn)
        self.last_tx_ns = now
        self.tlp_sent_ns = -1  # send time of the outstanding tail-loss probe, -1 if none
        self.tlp_armed = True  # one tail-loss probe per acknowledgement progress
        self._next_wr_id = 1
        self._mtu = mtu
        self._rto_ceiling = min(cfg.rto_base_ns, RTO_CAP_NS)
        self._rto_base = self._rto_ceiling  # the current RTO before backoff
        self._rtt_bound = self._rto_ceiling  # SRTT + 4 RTTVAR, before the RTO's floor
        self._adaptive = cfg.adaptive_timers
        self.srtt_ns = 0.0  # RFC 6298 smoothed RTT and variance (0: no sample yet)
        self.rttvar_ns = 0.0
        self.probe_misses = 0  # probe rounds in a row that got no answer at all
        self._probe_heard = False  # an answer arrived since the last probe round
        self._window = cfg.receive_window_psns
        self._port_free_at = nic.port_free_at
        self._ns_per_byte = nic.ns_per_byte

        # -- receive side
        window = cfg.receive_window_psns
        self.recv: ReceiveState | GoBackNReceiveState = (
            ReceiveState(recv_psn, window) if self.mrc else GoBackNReceiveState(recv_psn, window)
        )
        self.msgs = MessageTracker(recv_psn)
        self.rcvd_bytes = 0
        self.sack_pending = 0
        self.sack_deadline: int | None = None
        self._sack_every = cfg.sack_every_pkts
        self._sack_delay = cfg.sack_delay_ns
        self._regions = nic.memory.regions
        self._provide_region: Callable[[int, int, int], MemoryRegion | None] | None = None
        self._sack_trigger: tuple[int, int, int | None, bool] = (0, recv_psn, None, False)

        # -- reverse EV set (SACK/NACK path)
        self.rev_slots: list[list[int]] = []
        self.rev_pos = [0] * planes
        self.rev_refreshed = [now] * planes
        self.rev_heard = [-(1 << 62)] * planes
        self.rev_last_ev: list[int | None] = [None] * planes  # latest EV heard per plane
        self.rev_carrier: dict[int, bytes] = {}
        self._refresh_ns = cfg.reverse_refresh_ns
        self._rev_plane_rr = 0
        self._build_reverse_set()

        # -- per-plane frame templates, mutated and encoded per packet
        self._dtmpl = [self._template(DataPacket, p) for p in range(planes)]
        self._stmpl = [self._template(Sack, p) for p in range(planes)]
        self._ntmpl = [self._template(Nack, p) for p in range(planes)]
        self._ptmpl = [self._template(Probe, p) for p in range(planes)]

        self.counters: dict[str, int] = dict.fromkeys(
            (
                "tx_data",
                "tx_rtx",
                "tx_sack",
                "tx_nack",
                "tx_probe",
                "rx_data",
                "rx_dup",
                "rx_out_of_order",
                "rx_out_of_window",
                "rx_trimmed",
                "rx_trimmed_ignored",
                "rx_access_error",
                "rx_sack",
                "rx_nack",
                "rx_nack_stale",
                "rx_bad_ack",
                "ecn_echo_rx",
                "losses_reorder",
                "losses_timeout",
                "losses_port",
                "losses_tail_probe",
                "tx_tail_probe",
                "rto_silent",
                "gobackn_rewinds",
                "sack_no_path",
                "bytes_placed",
                "writes_completed",
                "writes_received",
            ),
            0,
        )

    @property
    def no_ev_timeout_ns(self) -> int:
        """How long the connection may go without a usable EV before it fails."""
        return self._no_ev_timeout_ns

    @no_ev_timeout_ns.setter
    def no_ev_timeout_ns(self, value: int) -> None:
        self._no_ev_timeout_ns = value
        self.nic.touch(self)

    # ------------------------------------------------------------------ setup

    def _template(self, cls: type, plane: int) -> DataPacket | Sack | Nack | Probe:
        nic = self.nic
        common = {
            "dst_mac": nic.gateway_macs[plane],
            "src_mac": nic.macs[plane],
            "outer_src": nic.addrs[plane],
            "outer_dst": _PLACEHOLDER_ADDR,
            "inner_src": nic.addrs[plane],
            "inner_dst": self.peer_addrs[plane],
            "ev": 0,
            "dqpn": self.peer_qpn,
        }
        if cls is DataPacket:
            return DataPacket(**common, psn=0, va=0, rkey=0, dma_length=0)
        if cls is Sack:
            return Sack(**common, cum_psn=0, echoed_ev=0)
        if cls is Nack:
            return Nack(**common, cum_psn=0, nack_psn=0, reason=_NACK_TRIMMED, echoed_ev=0)
        common["dqpn"] = EV_PROBE_QPN
        return Probe(**common)

    def _entry(self, ev: int, now: int) -> EvEntry:
        path = self.nic.path(self.peer, ev)
        e = EvEntry(ev=ev, plane=path.plane, path=(path.plane, path.t1))
        e.wire = path.carrier_bytes
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
            entries = []
            for j in range(want_active + want_backup):
                ev = nic.plan.make_ev(p, j % t1_count, j // t1_count)
                entries.append(self._entry(ev, now))
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
        )

    def _build_roce_ev(self, now: int) -> EvSet:
        """One EV from a hash of the 5-tuple, as ECMP would pick one path for a RoCE QP."""
        nic = self.nic
        key = f"{nic.name}|{self.peer}|{self.qpn}|{self.peer_qpn}|4791".encode()
        h = zlib.crc32(key)
        plane = h % nic.plane_count
        t1 = (h >> 8) % nic.plan.topology.planes[plane].t1_count
        e = self._entry(nic.plan.make_ev(plane, t1, (h >> 16) & 0x7FFF), now)
        return EvSet(
            {plane: [e]},
            {},
            min_active_per_plane=0,
            skip_ns=self.cfg.ev_skip_ns,
            rng=self._rng,
            on_change=self._on_ev_change,
        )

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

    # ------------------------------------------------------------------ application

    def post_write(
        self, data: bytes | bytearray | memoryview, remote_va: int, rkey: int, now: int
    ) -> int:
        """Queue an RDMA WRITE of ``data`` to the peer's [remote_va, +len) under ``rkey``."""
        if self.state is QpState.ERROR:
            assert self.error is not None
            raise self.error
        if not isinstance(data, bytes | bytearray | memoryview):
            raise MemoryAccessError(f"WRITE data must be bytes-like, got {type(data).__name__}")
        view = memoryview(data).cast("B")
        if isinstance(remote_va, bool) or not isinstance(remote_va, int):
            raise MemoryAccessError(f"remote VA must be an integer, got {remote_va!r}")
        if remote_va < 0 or remote_va + len(view) > 1 << 64:
            raise MemoryAccessError(
                f"WRITE of {len(view)} bytes at VA {remote_va:#x} does not fit 64-bit addresses"
            )
        if isinstance(rkey, bool) or not isinstance(rkey, int) or not 0 <= rkey <= 0xFFFF_FFFF:
            raise MemoryAccessError(f"R_Key must be a 32-bit unsigned integer, got {rkey!r}")
        wr_id = self._next_wr_id
        self._next_wr_id += 1
        mtu = self.cfg.mtu_payload
        npkts = max(1, -(-len(view) // mtu))
        if self.send.idle():
            self.quiet_since = now  # the peer's silence counts from the first work posted
        self.send.post(WriteRequest(wr_id, view, remote_va, rkey, npkts, now))
        self.nic.touch(self)
        return wr_id

    def attach_responder_memory(
        self, provide: Callable[[int, int, int], MemoryRegion | None]
    ) -> None:
        """Place this QP's incoming WRITEs in memory of its own instead of the NIC's
        registered regions: ``provide(rkey, va, length)`` is asked for a region holding
        [va, va+length) whenever this QP's regions do not (it may grow and return the same
        region); None drops the packet as a memory access error."""
        self._regions = {}
        self._provide_region = provide

    def deny_ev(self, ev: int, now: int) -> None:
        self.evs.deny(ev, now)
        self.nic.touch(self)

    def allow_ev(self, ev: int, now: int) -> None:
        self.evs.allow(ev, now)
        self.nic.touch(self)

    def release(self) -> None:
        """Drop the buffers of a destroyed QP: posted WRITEs (and the frame templates'
        views into their data), in-flight state, receive bookkeeping, the EV set (its
        per-plane acknowledged packets are kept). Counters stay."""
        self._acked_per_plane = self.acked_per_plane()
        planes = self.evs.planes
        self.evs = EvSet(
            {p: [] for p in planes}, {}, min_active_per_plane=0, skip_ns=1, rng=self._rng
        )
        for t in self._dtmpl:
            t.payload = b""
        self.send = SendState(self.send.next_psn, self._mtu, self._window)
        self._regions = {}
        self._provide_region = None
        self.msgs = MessageTracker(self.recv.rcv_nxt)

    def acked_per_plane(self) -> list[int]:
        """Acknowledged data packets per plane (of their last transmission's EV)."""
        if self._acked_per_plane is not None:
            return list(self._acked_per_plane)
        counts = [0] * self.nic.plane_count
        for entry in self.evs.entries():
            counts[entry.plane] += entry.acked_packets
        return counts

    @property
    def idle(self) -> bool:
        """Nothing posted is still unacknowledged."""
        return self.send.idle()

    # ------------------------------------------------------------------ transmit

    def window_blocked(self) -> bool:
        """:meth:`send_one` would refuse at once, whatever the time: not READY, the
        congestion window is full, or nothing is queued that the receive window allows.
        Only an event on this connection (an acknowledgement, a timer, a post) changes it."""
        if self.state is not QpState.READY:
            return True
        send = self.send
        inflight = send.inflight_bytes
        if inflight and inflight + self._mtu > self.cc.cwnd:
            return True
        return not send.rtx_heap and not (
            send.pending and send.next_psn - send.snd_una < self._window
        )

    def send_one(self, now: int, out: list[tuple[int, bytes]]) -> bool:
        """Emit the next data packet if the window, an EV and that EV's port allow it.

        Ports are paced at ``port_rate_bps``: a packet waits (``pace_at``) until the port
        of the EV whose turn it is has finished the previous packet, as a NIC's transmit
        scheduler would, so no queue builds up inside the NIC.
        """
        send = self.send
        inflight = send.inflight_bytes
        if inflight and inflight + self._mtu > self.cc.cwnd:
            return False
        if not send.rtx_heap and not (send.pending and send.next_psn - send.snd_una < self._window):
            return False
        entry = self.evs.pick(now)
        if entry is None:
            if self.no_ev_since is None:
                self.no_ev_since = now
            return False
        self.no_ev_since = None
        free_at = self._port_free_at[entry.plane]
        if free_at > now:
            self.evs.unpick()
            if self.pace_at is None or free_at < self.pace_at:
                self.pace_at = free_at
            self.pace_plane = entry.plane
            # A GOOD EV stays first in the rotation: until the port is free or an event
            # touches this connection, every later call would end here the same way.
            self.pace_fixed = entry.state is GOOD
            return False
        pkt = send.next_packet()
        if pkt is None:
            return False
        self._transmit(pkt, entry, now, out)
        return True

    def _transmit(
        self, pkt: TxPacket, entry: EvEntry, now: int, out: list[tuple[int, bytes]]
    ) -> None:
        plane = entry.plane
        t = self._dtmpl[plane]
        wr = pkt.wr
        offset = pkt.offset
        length = pkt.length
        rtx = pkt.transmissions > 0
        t.ev = entry.ev
        t.outer_dst = entry.wire
        t.psn = pkt.psn & PSN_MASK
        t.va = wr.remote_va + offset
        t.rkey = wr.rkey
        t.dma_length = length
        t.payload = wr.data[offset : offset + length]
        t.rtx = rtx
        t.dscp = _TRIMMABLE_RETX if rtx else _TRIMMABLE
        t.last = pkt.last
        t.ack_req = pkt.last or rtx
        t.timestamp = now & TS_MASK
        frame = encode_data(t)
        out.append((plane, frame))
        # Same rounding as the fabric's serialisation time, so the two never drift.
        self._port_free_at[plane] = now + int(len(frame) * self._ns_per_byte)
        self.last_tx_ns = now
        self.send.sent(pkt, entry, now)
        entry.tx_packets += 1
        entry.tx_bytes += length
        entry.last_tx_ns = now
        if entry.first_tx_ns < 0:
            entry.first_tx_ns = now
        counters = self.counters
        counters["tx_data"] += 1
        if rtx:
            counters["tx_rtx"] += 1
        nic = self.nic
        nic.plane_tx[plane] += 1
        if nic.trace_packets:
            nic.log.record(
                now,
                nic.name,
                ev_kinds.TX,
                qpn=self.qpn,
                plane=plane,
                ev=entry.ev,
                psn=pkt.psn,
                bytes=length,
                rtx=rtx,
            )

    # ------------------------------------------------------------------ receive: data

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
        region = self._regions.get(m.rkey)
        offset = va - region.va if region is not None else -1
        if offset < 0 or offset + length > len(region.buffer):  # type: ignore[union-attr]
            provide = self._provide_region
            region = provide(m.rkey, va, length) if provide is not None else None
            if region is None:
                counters["rx_access_error"] += 1
                nic.drop(now, "memory_access", plane, qpn=self.qpn, psn=psn, rkey=m.rkey, va=va)
                return
            self._regions[m.rkey] = region
            offset = va - region.va
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
            # Go-back-N: drop it; NACK the expected PSN once per gap.
            counters["rx_out_of_order"] += 1
            if not recv.nak_outstanding:  # type: ignore[union-attr]
                recv.nak_outstanding = True  # type: ignore[union-attr]
                self._send_nack(now, _NACK_SEQUENCE, recv.rcv_nxt, m.ev, m.timestamp, False)
            return
        region.buffer[offset : offset + length] = m.payload  # type: ignore[union-attr]
        counters["rx_data"] += 1
        counters["bytes_placed"] += length
        self.rcvd_bytes += length
        msgs = self.msgs
        msgs.va_by_psn[psn] = va
        if m.last:
            msgs.note_last(psn, m.rkey, va + length)
        if result == NEW_IN_ORDER:
            if msgs.has_due(recv.rcv_nxt):
                self._deliver_messages(now)
        else:
            counters["rx_out_of_order"] += 1
        ecn = m.ecn == _CE
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

    # ------------------------------------------------------------------ reverse path

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

    # ------------------------------------------------------------------ receive: feedback

    def on_sack(self, s: Sack, plane: int, now: int) -> None:
        nic = self.nic
        if s.inner_src not in self._peer_addr_set:
            nic.drop(now, "foreign_source", plane, qpn=self.qpn)
            return
        nic.note_peer_ports(self.peer, s.port_status, now)
        nic.heard_from(self.peer, s.ev, now)
        if self.state is not QpState.READY:
            return
        self.rev_heard[plane] = now
        self.rev_last_ev[plane] = s.ev
        if now - self.rev_refreshed[plane] >= self._refresh_ns:
            self._heard(plane, s.ev, now)
        self.counters["rx_sack"] += 1
        send = self.send
        cum = unwrap(s.cum_psn, send.snd_una)
        if cum > send.next_psn or cum < send.snd_una - self.cfg.receive_window_psns:
            self.counters["rx_bad_ack"] += 1
            nic.drop(now, "ack_outside_window", plane, qpn=self.qpn, psn=cum)
            return
        acked = self._ack_cumulative(cum)
        bits = s.bitmap
        if bits and self.mrc:
            base = cum + s.sack_offset
            nxt = send.next_psn
            ack = send.ack
            while bits:
                low = bits & -bits
                bits ^= low
                psn = base + low.bit_length() - 1
                if psn >= nxt:
                    break
                pkt = ack(psn)
                if pkt is not None:
                    acked += pkt.length
                    entry = pkt.entry
                    if entry is not None:
                        entry.acked_packets += 1
                        if pkt.sent_ns > entry.acked_sent_ns:
                            entry.acked_sent_ns = pkt.sent_ns
        send.advance_una(cum)
        ecn = s.ecn_echo
        if ecn:
            self.counters["ecn_echo_rx"] += 1
            if self.mrc:
                entry = self.evs.by_ev.get(s.echoed_ev)
                if entry is not None:
                    self.evs.mark_skip(entry, now)
        if s.always_skip and self.mrc:
            entry = self.evs.by_ev.get(s.echoed_ev)
            if entry is not None:
                self.evs.mark_bad(entry, "receiver_always_skip", now)
        rtt = -1
        if s.echoed_ts is not None:
            rtt = (now - s.echoed_ts) & TS_MASK
            if rtt > MAX_RTT_SAMPLE_NS:
                rtt = -1
        if rtt >= 0:
            if rtt < self.min_rtt_ns:
                self.min_rtt_ns = rtt
            # Smoothed queueing delay (gain 1/8, as TCP's SRTT) sizes the reorder window.
            self.qdelay_ns += ((rtt - self.min_rtt_ns) - self.qdelay_ns) / 8
            self._rtt_sample(rtt)
        if acked:
            self.last_ack_ns = now
            self.backoff = 0
            self.hold_until = 0
            self.cc.on_ack(acked, ecn, rtt, now)
        elif ecn:
            self.cc.on_ack(0, True, rtt, now)
        if self.mrc:
            cfg = self.cfg
            window = self._reorder_window()
            for pkt in send.detect_losses(cfg.reorder_threshold_pkts, window):
                self._lost(pkt, "reorder", now)
                if self.state is not QpState.READY:
                    return
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

    def _reorder_window(self) -> int:
        window = max(self.cfg.reorder_window_ns, int(2 * self.qdelay_ns))
        if self._adaptive:  # RACK's min_RTT / 4 (RFC 8985 section 6.2)
            window = max(window, int(self.srtt_ns) >> 2)
        return window

    def _tail_probe_timeout(self) -> int:
        """RACK-TLP's probe timeout (RFC 8985 section 7.2): about two round trips."""
        srtt = (
            self.min_rtt_ns + self.qdelay_ns if self.min_rtt_ns < 1 << 62 else self.cfg.base_rtt_ns
        )
        return int(max(2 * srtt, srtt + self._reorder_window()))

    def _ack_cumulative(self, cum: int) -> int:
        return self.send.ack_below(cum)

    def _complete_writes(self, now: int) -> None:
        done = self.send.completed_writes()
        if not done:
            return
        nic = self.nic
        for wr in done:
            self.counters["writes_completed"] += 1
            nic.emit(WriteCompleted(self.qpn, wr.wr_id, len(wr.data), now))
            nic.log.record(
                now, nic.name, ev_kinds.WRITE_DONE, qpn=self.qpn, psn=wr.last_psn, wr_id=wr.wr_id
            )

    def on_nack(self, n: Nack, plane: int, now: int) -> None:
        nic = self.nic
        if n.inner_src not in self._peer_addr_set:
            nic.drop(now, "foreign_source", plane, qpn=self.qpn)
            return
        nic.note_peer_ports(self.peer, n.port_status, now)
        nic.heard_from(self.peer, n.ev, now)
        if self.state is not QpState.READY:
            return
        self.rev_last_ev[plane] = n.ev
        self._heard(plane, n.ev, now)
        self.counters["rx_nack"] += 1
        send = self.send
        cum = unwrap(n.cum_psn, send.snd_una)
        psn = unwrap(n.nack_psn, send.snd_una)
        if not send.snd_una - self.cfg.receive_window_psns <= cum <= send.next_psn:
            self.counters["rx_bad_ack"] += 1
            nic.drop(now, "ack_outside_window", plane, qpn=self.qpn, psn=cum)
            return
        acked = self._ack_cumulative(cum)
        send.advance_una(cum)
        if acked:
            self.last_ack_ns = now
            self.backoff = 0
            self.hold_until = 0
        reason = n.reason
        try:
            reason_name = NackReason(reason).name
        except ValueError:
            reason_name = f"unknown_{reason:#04x}"
        nic.log.record(
            now,
            nic.name,
            ev_kinds.NACK_RX,
            qpn=self.qpn,
            plane=plane,
            ev=n.echoed_ev,
            psn=psn,
            reason=reason_name,
        )
        if reason in (_NACK_TRIMMED, _NACK_TRIMMED_LASTHOP) and self.mrc:
            pkt = send.unacked.get(psn)
            if pkt is not None and n.echoed_ts is not None and n.echoed_ts != pkt.sent_ns & TS_MASK:
                # The NACK is about an earlier transmission (a duplicate, or one that was
                # already resent): the current copy is still in flight.
                self.counters["rx_nack_stale"] += 1
            elif pkt is not None and pkt.state == IN_FLIGHT:
                send.mark_lost(pkt)
                self.cc.on_nack(pkt.length, now)
                if pkt.entry is not None:
                    pkt.entry.nacks += 1
                tag = "trimmed_lasthop" if reason == _NACK_TRIMMED_LASTHOP else "trimmed"
                self._queue_retransmit(pkt, tag, now)
        elif reason == _NACK_SEQUENCE and not self.mrc and send.snd_una <= psn < send.next_psn:
            count = send.rewind(psn)
            self.counters["gobackn_rewinds"] += 1
            self.cc.on_loss(self.cfg.mtu_payload, now)
            nic.log.record(
                now,
                nic.name,
                ev_kinds.RETRANSMIT,
                qpn=self.qpn,
                psn=psn,
                reason="go_back_n",
                packets=count,
            )
        self._complete_writes(now)

    # ------------------------------------------------------------------ loss handling

    def _lost(self, pkt: TxPacket, reason: str, now: int) -> None:
        """A packet (already out of flight) was lost without a trim."""
        entry = pkt.entry
        nic = self.nic
        self.counters["losses_" + reason] += 1
        if entry is not None:
            entry.losses += 1
            nic.log.record(
                now,
                nic.name,
                ev_kinds.LOSS,
                qpn=self.qpn,
                plane=entry.plane,
                ev=entry.ev,
                psn=pkt.psn,
                sent_ns=pkt.sent_ns,
                reason=reason,
            )
            if self.mrc and reason != "port":
                self.evs.mark_bad(entry, reason, now, sent_ns=pkt.sent_ns)
        self.cc.on_loss(pkt.length, now)
        self._queue_retransmit(pkt, reason, now)

    def _queue_retransmit(self, pkt: TxPacket, reason: str, now: int) -> None:
        nic = self.nic
        nic.log.record(
            now,
            nic.name,
            ev_kinds.RETRANSMIT,
            qpn=self.qpn,
            psn=pkt.psn,
            reason=reason,
            transmissions=pkt.transmissions,
        )
        limit = self.cfg.max_packet_transmissions
        if pkt.transmissions >= limit:
            self.fail(
                "packet_retries",
                f"PSN {pkt.psn & PSN_MASK:#x} was sent {pkt.transmissions} times without "
                f"being acknowledged (max_packet_transmissions={limit})",
                now,
            )

    # ------------------------------------------------------------------ timers

    def rto_ns(self) -> int:
        n = self.backoff
        if not n:
            return self._rto_base
        linear = self.cfg.rto_linear_retries
        factor = n + 1 if n <= linear else (linear + 1) << (n - linear)
        return min(self._rto_base * factor, RTO_CAP_NS)

    def probe_interval_ns(self) -> int:
        """The EV probe period (also the probe timeout). Adaptive: SRTT + 4 RTTVAR (the
        RTO without its floor: probes may be quicker than a retransmission timeout),
        doubled for every probe round in a row that got no answer, within its floor and
        ceiling."""
        cfg = self.cfg
        if not self._adaptive:
            return cfg.probe_interval_ns
        interval = self._rtt_bound << min(self.probe_misses, 16)
        return min(max(cfg.probe_interval_min_ns, interval), cfg.probe_interval_ns)

    def _rtt_sample(self, rtt: int) -> None:
        """RFC 6298 section 2: SRTT, RTTVAR and RTO = SRTT + 4 RTTVAR, within the floor
        (rto_min_ns) and the ceiling (rto_base_ns). Fixed timers ignore it."""
        if not self._adaptive:
            return
        if self.srtt_ns == 0.0:
            self.srtt_ns = float(max(rtt, 1))
            self.rttvar_ns = rtt / 2
        else:
            self.rttvar_ns += (abs(self.srtt_ns - rtt) - self.rttvar_ns) / 4
            self.srtt_ns += (rtt - self.srtt_ns) / 8
        rto = int(self.srtt_ns + 4 * self.rttvar_ns)
        self._rtt_bound = rto
        self._rto_base = min(max(self.cfg.rto_min_ns, rto), self._rto_ceiling)

    def next_deadline(self) -> int | None:
        """When :meth:`on_timer` must next run (None: nothing pending)."""
        best = self.timer_deadline()
        t = self.pace_at
        if t is not None and (best is None or t < best):
            best = t
        return best

    def timer_deadline(self) -> int | None:
        """:meth:`next_deadline` without the pacing wait (``pace_at``), which the host
        tracks per port (NicCore.next_timer)."""
        if self.state is not QpState.READY:
            return None
        best = self.sack_deadline
        send = self.send
        oldest = send.oldest_sent_ns()
        if oldest is not None:
            t = oldest + self.rto_ns()
            if t < self.hold_until:
                t = self.hold_until
            if best is None or t < best:
                best = t
        t = self.probe_next
        if t is not None and (best is None or t < best):
            best = t
        if self.tlp_armed and not send.pending:
            t = self._tail_probe_deadline()
            if t is not None and (best is None or t < best):
                best = t
        if self.no_ev_since is not None:
            t = self.no_ev_since + self._no_ev_timeout_ns
            if best is None or t < best:
                best = t
        t = self._peer_deadline()
        if t is not None and (best is None or t < best):
            best = t
        return best

    def _peer_deadline(self) -> int | None:
        """When silence from the peer fails this connection: MRC, data outstanding, and at
        least one local port up (probes can ask every path)."""
        if not self.mrc or self.send.idle() or True not in self.nic.port_up:
            return None
        heard = self.nic.peer_heard_ns.get(self.peer, self.quiet_since)
        return max(heard, self.quiet_since) + self.cfg.peer_timeout_ns

    def on_timer(self, now: int) -> None:
        if self.state is not QpState.READY:
            return
        if self.pace_at is not None and now >= self.pace_at:
            self.pace_at = None  # frames_to_send() sends what the free port allows
        if self.sack_deadline is not None and now >= self.sack_deadline:
            ev, psn, ts, ecn = self._sack_trigger
            self._send_sack(now, ev, psn, ts, ecn)
        self._check_timeouts(now)
        if self.state is not QpState.READY:
            return
        t = self._tail_probe_deadline()
        if t is not None and now >= t:
            self._send_tail_probe(now)
        if self.probe_next is not None and now >= self.probe_next:
            self._probe_tick(now)
        t = self._peer_deadline()
        if t is not None and now >= t:
            self.fail("peer_unreachable", self._unreachable_message(now), now)
            return
        if self.no_ev_since is not None and now - self.no_ev_since >= self._no_ev_timeout_ns:
            self.fail(
                "no_usable_ev",
                f"no GOOD or SKIP EV toward {self.peer} for "
                f"{now - self.no_ev_since} ns (all ASSUMED_BAD or DENIED, or every plane down; "
                f"local ports up: {self.nic.port_up}, peer ports up: "
                f"{self.nic.peer_port_up(self.peer)}); {self.path_report()}",
                now,
            )

    def _unreachable_message(self, now: int) -> str:
        heard = self.nic.peer_heard_ns.get(self.peer)
        since = "never heard from" if heard is None else f"last heard {_span(now - heard)} ago"
        return (
            f"{self.peer} is unreachable: no acknowledgement and no probe reply for "
            f"{_span(now - max(self.quiet_since, heard or 0))} with data outstanding ({since}); "
            f"the peer NIC is down or every path to it is cut; {self.path_report()}"
        )

    def path_report(self) -> str:
        """Each path toward the peer: its EV states and probe answers, and the ports."""
        nic = self.nic
        parts = []
        for path, entries in self.evs.by_path.items():
            states: dict[str, int] = {}
            for e in entries:
                states[e.state.name] = states.get(e.state.name, 0) + 1
            sent = sum(e.probes_sent for e in entries)
            ok = sum(e.probes_ok for e in entries)
            plane, t1 = path if isinstance(path, tuple) else (None, path)
            label = f"plane {plane} via {t1 or 'its T0'}"
            counts = " ".join(f"{n} {k}" for k, n in sorted(states.items()))
            parts.append(f"{label}: {counts}, probes answered {ok}/{sent}")
        peer_up = nic.peer_port_up(self.peer)
        down = [p for p in range(nic.plane_count) if not nic.port_up[p]]
        peer_down = [p for p in range(nic.plane_count) if not peer_up[p]]
        return (
            "paths: "
            + "; ".join(parts)
            + f"; local ports down: {down or 'none'}; peer ports down: {peer_down or 'none'}"
        )

    def _check_timeouts(self, now: int) -> None:
        send = self.send
        while self.state is QpState.READY:
            oldest = send.oldest_sent_ns()
            if oldest is None:
                return
            rto = self.rto_ns()
            if now < max(oldest + rto, self.hold_until):
                return
            if not self.mrc:
                count = send.rewind(send.snd_una)
                self.counters["gobackn_rewinds"] += 1
                self.cc.on_loss(self.cfg.mtu_payload, now)
                self._silent_timeout(now, f"go-back-N resend of {count} packets")
                return
            pkt = send.pop_expired(now - rto)
            if pkt is None:
                return
            silent = self.last_ack_ns <= pkt.sent_ns
            if silent and pkt.entry is not None:
                # Nothing came back at all: the whole path this packet took is suspect
                # (its EVs cross the same links); probes tell when it works again.
                self.evs.retire_path(pkt.entry.path, "timeout", now)
            self._lost(pkt, "timeout", now)
            if silent:
                # Every other packet past its own RTO is lost too: left in flight (one per
                # backoff) they would keep the window full, as each loss shrinks cwnd by
                # what it takes out of flight, and nothing, not even a retransmission,
                # could be sent again (a blackout longer than the RTO became max_retries).
                while self.state is QpState.READY:
                    late = send.pop_expired(now - rto)
                    if late is None:
                        break
                    self._lost(late, "timeout", now)
                self._silent_timeout(now, f"PSN {pkt.psn & PSN_MASK:#x}")
                return

    def _tail_probe_deadline(self) -> int | None:
        """When to send a tail-loss probe: in-flight data, nothing new to send, no probe out."""
        if not self.mrc or not self.tlp_armed:
            return None
        send = self.send
        if not send.inflight_bytes or send.pending or send.rtx_heap:
            return None
        return self.last_tx_ns + self._tail_probe_timeout()

    def _send_tail_probe(self, now: int) -> None:
        """A reliability probe (opcode 0xDE to the peer QP): its SACK reply shows which of
        the last packets never arrived, without waiting for the retransmission timeout."""
        self.tlp_armed = False
        entry = self.evs.pick(now)
        if entry is None:
            return  # no path at all: the retransmission timeout takes over
        self.tlp_sent_ns = now
        p = self._ptmpl[entry.plane]
        p.dqpn = self.peer_qpn
        p.ev = entry.ev
        p.outer_dst = entry.wire
        p.psn = self.send.snd_una & PSN_MASK
        p.probe_id = 0
        p.probe_ev = entry.ev
        p.timestamp = now & TS_MASK
        p.port_status = self.nic.port_status_bits
        self.nic.out.append((entry.plane, encode_probe(p)))
        self.counters["tx_tail_probe"] += 1

    def _silent_timeout(self, now: int, what: str) -> None:
        """A timeout with no acknowledgement since the packet left: back off, maybe fail."""
        self.backoff += 1
        self.counters["rto_silent"] += 1
        nic = self.nic
        nic.log.record(now, nic.name, ev_kinds.RTO, qpn=self.qpn, backoff=self.backoff, blamed=what)
        limit = self.cfg.max_retries
        if self.backoff > limit:
            self.fail(
                "max_retries",
                f"no acknowledgement from {self.peer} QPN {self.peer_qpn:#x} after "
                f"{limit} retries (last ack {now - self.last_ack_ns} ns ago)",
                now,
            )
            return
        self.hold_until = now + self.rto_ns()

    # ------------------------------------------------------------------ EV events and probes

    def _on_ev_change(self, e: EvEntry, old: EvState, new: EvState, reason: str, now: int) -> None:
        nic = self.nic
        nic.log.record(
            now,
            nic.name,
            ev_kinds.EV_STATE,
            qpn=self.qpn,
            plane=e.plane,
            ev=e.ev,
            old=old.name,
            new=new.name,
            reason=reason,
            last_tx_ns=e.last_tx_ns,
        )
        if new is ASSUMED_BAD and self.probe_next is None:
            self.probe_next = now + self.probe_interval_ns()

    def _on_floor_hold(self, e: EvEntry, reason: str, now: int) -> None:
        nic = self.nic
        nic.log.record(
            now,
            nic.name,
            ev_kinds.EV_FLOOR_HOLD,
            qpn=self.qpn,
            plane=e.plane,
            ev=e.ev,
            reason=reason,
        )

    def _probe_tick(self, now: int) -> None:
        self.probe_next = None
        nic = self.nic
        evs = self.evs
        outstanding = evs.outstanding_probes()
        if outstanding and not self._probe_heard:
            self.probe_misses += 1  # nothing answered: back off (adaptive timers)
        elif self._probe_heard:
            self.probe_misses = 0
        self._probe_heard = False
        for e in outstanding:
            # The probe interval is also the probe timeout.
            nic.forget_probe(e.probe_seq)
            evs.probe_unanswered(e)
            if e.state is ASSUMED_BAD:
                nic.log.record(
                    now, nic.name, ev_kinds.PROBE_LOST, qpn=self.qpn, plane=e.plane, ev=e.ev
                )
        candidates = evs.probe_candidates(self.cfg.probes_per_path)
        if not candidates:
            return
        for e in candidates:
            if nic.port_up[e.plane]:
                self._send_probe(e, now)
        self.probe_next = now + self.probe_interval_ns()

    def _send_probe(self, e: EvEntry, now: int) -> None:
        nic = self.nic
        probe_id = nic.register_probe(self, e)
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
        nic.out.append((e.plane, encode_probe(p)))
        self.counters["tx_probe"] += 1
        nic.log.record(now, nic.name, ev_kinds.PROBE_TX, qpn=self.qpn, plane=e.plane, ev=e.ev)

    def on_probe_answer(self, e: EvEntry, now: int) -> None:
        self.quiet_since = max(self.quiet_since, now)
        self._probe_heard = True
        revived = self.evs.probe_answered(e, self.cfg.probe_success_threshold, now)
        nic = self.nic
        nic.log.record(
            now,
            nic.name,
            ev_kinds.PROBE_OK,
            qpn=self.qpn,
            plane=e.plane,
            ev=e.ev,
            successes=e.probe_successes,
            revived=revived,
        )

    # ------------------------------------------------------------------ ports

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
            self.probe_next = now + self.probe_interval_ns()

    # ------------------------------------------------------------------ failure

    def fail(self, reason: str, detail: str, now: int) -> None:
        if self.state is QpState.ERROR:
            return
        self.state = QpState.ERROR
        self.error = ConnectionFailedError(self.qpn, reason, detail)
        pending = tuple(wr.wr_id for wr in self.send.incomplete)
        self.sack_deadline = None
        self.probe_next = None
        self.pace_at = None
        self.no_ev_since = None
        nic = self.nic
        nic.connection_failed(self)
        for e in self.evs.entries():
            if e.probe_seq >= 0:
                nic.forget_probe(e.probe_seq)
                e.probe_seq = -1
        nic.emit(ConnectionFailed(self.qpn, reason, str(self.error), pending, now))
        nic.log.record(
            now, nic.name, ev_kinds.CONN_FAILED, qpn=self.qpn, reason=reason, message=detail
        )

    # ------------------------------------------------------------------ counters

    def ev_counters(self) -> list[dict[str, object]]:
        return [e.counters() for e in self.evs.entries()]

    def plane_counters(self) -> dict[int, dict[str, int]]:
        """Per plane: data packets and bytes sent, acked, lost, NACKed, ECN-marked."""
        out: dict[int, dict[str, int]] = {}
        for e in self.evs.entries():
            c = out.setdefault(
                e.plane,
                dict.fromkeys(("tx_packets", "tx_bytes", "acked", "losses", "nacks", "ecn"), 0),
            )
            c["tx_packets"] += e.tx_packets
            c["tx_bytes"] += e.tx_bytes
            c["acked"] += e.acked_packets
            c["losses"] += e.losses
            c["nacks"] += e.nacks
            c["ecn"] += e.ecn_marks
        for plane, counts in self.evs.state_counts().items():
            out.setdefault(plane, {}).update(counts)
        return out
