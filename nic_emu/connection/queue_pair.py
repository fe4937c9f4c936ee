"""One queue pair (:class:`Connection`): the parts it is composed of, built with what
each needs (the send state, the RTT timers, the EV set and its probes, congestion
control, go-back-N for RoCE; the send turn, the acknowledgements, losses and the
tail-loss probe, the timers, repath, the receive side), the application calls, failure
and counters (docs/nic-emu.md, "Inside a connection").
"""

from __future__ import annotations

import random
from dataclasses import replace

from nic_emu import event_log as ev_kinds
from nic_emu.config import TransportMode
from nic_emu.congestion import make_congestion_control
from nic_emu.connection.common import QpState
from nic_emu.connection.feedback import Feedback, Losses, TailProbe
from nic_emu.connection.gobackn import GoBackN
from nic_emu.connection.host import ConnectionFailed, ConnectionHost
from nic_emu.connection.probes import PathProbes
from nic_emu.connection.receive import Receiver
from nic_emu.connection.records import ConnectionCounters, ConnectionLog
from nic_emu.connection.repath import Repath, build_evs
from nic_emu.connection.reverse import ReverseEvs
from nic_emu.connection.rtt import RttTimers
from nic_emu.connection.templates import (
    data_templates,
    nack_templates,
    probe_templates,
    sack_templates,
)
from nic_emu.connection.timers import NO_DEADLINE, Deadlines
from nic_emu.connection.transmit import DataTransmitter, Transmitter
from nic_emu.ev_set import EvSet
from nic_emu.exceptions import ConnectionFailedError, MemoryAccessError
from nic_emu.sender import BufferPayload, Payload, SendState, WriteRequest
from nic_emu.streams import StreamPayload, StreamReceiver


class Connection:
    """A queue pair to one peer QP. Create it with :meth:`NicCore.create_connection`.

    It is composed of parts that own their state (docs/nic-emu.md, "Inside a
    connection"), built here with what each needs: the send turn (``tx``, a
    :class:`~nic_emu.connection.transmit.Transmitter`), the acknowledgements
    (``feedback``), losses (``losses``) and the tail-loss probe (``tail``), the timers
    (``deadlines``), repath (``repath``) and the receive side (``rx``). Its entry
    points are the parts' bound methods (``conn.send_one == conn.tx.send_one``): no call
    in between. The parts call back into it only through
    :class:`~nic_emu.connection.common.QpStatus` (its state, :meth:`fail`)."""

    def __init__(
        self,
        nic: ConnectionHost,
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
        self._acked_per_path: dict[object, int] | None = None  # kept by release()
        self._rng = random.Random(f"{nic.seed}/{nic.name}/{qpn}")
        self.peer_addrs = [nic.plan.nic_address(peer, p).packed for p in range(nic.plane_count)]
        self._peer_addr_set = frozenset(self.peer_addrs)
        self.log = ConnectionLog(nic.log, nic.name, qpn)
        self.counters = ConnectionCounters()  # read as a mapping of its names
        self._next_wr_id = 1
        # The host's scheduling of this connection (NicCore.frames_to_send, next_timer).
        self.created_seq = 0
        self.ready_index = 0
        self.sched_deadline: int | None = None
        self.sched_by_peer = False  # the peer's silence set sched_deadline (timer_deadline)
        self.sched_key = NO_DEADLINE  # sched_deadline as a C integer (timers.time_key)
        self.heap_pos = -1  # its place in the host's timer heap (-1: none)
        self.parked_plane = -1  # the host's queue of connections waiting for a port
        self._build_parts(send_psn, recv_psn, now)
        self._bind_entry_points()

    def _bind_entry_points(self) -> None:
        """The entry points: the parts' methods, bound once (no call in between). Read
        from locals of no C type (queue_pair.pxd): the native build reads a typed part's
        ``cpdef`` method, not called, as its C function, which takes ``self``."""
        tx = self.tx
        feedback = self.feedback
        deadlines = self.deadlines
        repath = self.repath
        probes = self.probes
        rx = self.rx
        self.send_one = tx.send_one
        self.window_blocked = tx.window_blocked
        self.on_sack = feedback.on_sack
        self.on_nack = feedback.on_nack
        self.on_timer = deadlines.on_timer
        self.timer_deadline = deadlines.timer_deadline
        self.next_deadline = deadlines.next_deadline
        self.path_report = deadlines.path_report
        self.on_probe_answer = repath.on_probe_answer
        self.shared_path_failure = repath.shared_path_failure
        self.shared_hold = probes.shared_hold
        self.release_shared_hold = probes.release_shared_hold
        self.plane_down = repath.plane_down
        self.plane_up = repath.plane_up
        self.on_data = rx.on_data
        self.on_reliability_probe = rx.on_reliability_probe

    def _build_parts(self, send_psn: int, recv_psn: int, now: int) -> None:
        """The parts, each built with what it needs (the order is that of their needs:
        the state first, the EV set before what uses it, repath, which listens to it,
        last)."""
        nic = self.nic
        cfg = self.cfg
        mrc = self.mrc
        counters = self.counters
        log = self.log
        mtu = cfg.mtu_payload
        window = cfg.receive_window_psns
        self._mtu = mtu
        self._window = window
        self.send = SendState(send_psn, mtu, window)
        self.timers = timers = RttTimers(cfg, now, adaptive=cfg.adaptive_timers)
        self.gbn: GoBackN | None = None  # RoCE: go-back-N and its DCQCN rate
        if not mrc:
            label = f"{self.peer} QPN {self.peer_qpn:#x}"
            self.gbn = GoBackN(
                cfg.roce, cfg.port_rate_bps, now, peer_label=label, counters=counters, log=log
            )
            timers.fix(self.gbn.ack_timeout_ns)  # fixed, as configured on the QP
        gbn = self.gbn
        self.dcqcn = None if gbn is None else gbn.dcqcn
        self.evs = evs = build_evs(
            nic, cfg, self.peer, qpn=self.qpn, peer_qpn=self.peer_qpn, mrc=mrc, rng=self._rng
        )
        bdp = len(evs.planes) * cfg.port_rate_bps * cfg.base_rtt_ns // 8_000_000_000
        # RoCE has no window congestion control (DCQCN is a rate: GoBackN)
        cc_cfg = cfg.cc if mrc else replace(cfg.cc, enabled=False)
        self.cc = make_congestion_control(cc_cfg, mtu, max(bdp, mtu), cfg.base_rtt_ns, now)
        frames = DataTransmitter(
            nic,
            data_templates(nic, self.peer_addrs, self.peer_qpn),
            trace=cfg.trace_packets,
            counters=counters,
            log=log,
            now=now,
        )
        self.probes = PathProbes(
            nic,
            cfg,
            evs,
            timers,
            probe_templates(nic, self.peer_addrs),
            peer_qpn=self.peer_qpn,
            counters=counters,
            log=log,
        )
        self.rx = self._receiver(recv_psn, now)
        self._build_sender(frames, now)

    def _build_sender(self, frames: DataTransmitter, now: int) -> None:
        """The sender's parts, over the state :meth:`_build_parts` built."""
        nic = self.nic
        cfg = self.cfg
        mrc = self.mrc
        counters = self.counters
        log = self.log
        mtu = self._mtu
        window = self._window
        send = self.send
        evs = self.evs
        cc = self.cc
        timers = self.timers
        probes = self.probes
        rx = self.rx
        gbn = self.gbn
        self.tx = tx = Transmitter(
            self, frames, send, evs, cc, dcqcn=self.dcqcn, mtu=mtu, window=window
        )
        self.losses = losses = Losses(
            self, cfg, send, evs, cc, timers, probes, mrc=mrc, counters=counters, log=log
        )
        self.tail = tail = TailProbe(
            self, send, evs, cc, timers, frames, probes, losses, mrc=mrc, mtu=mtu, window=window
        )
        self.feedback = Feedback(
            nic,
            self,
            cfg,
            send,
            evs,
            cc,
            timers,
            rx.reverse,
            probes,
            losses,
            tail,
            peer=self.peer,
            peer_addrs=self._peer_addr_set,
            mrc=mrc,
            gbn=gbn,
            counters=counters,
            log=log,
        )
        self.deadlines = deadlines = Deadlines(
            nic,
            self,
            cfg,
            send,
            evs,
            timers,
            rx,
            tx,
            probes,
            tail,
            losses,
            peer=self.peer,
            peer_qpn=self.peer_qpn,
            mrc=mrc,
            gbn=gbn,
            counters=counters,
            log=log,
            now=now,
        )
        self.repath = Repath(
            nic,
            self,
            cfg,
            evs,
            send,
            probes,
            losses,
            deadlines,
            mrc=mrc,
            counters=counters,
            log=log,
        )

    def _receiver(self, recv_psn: int, now: int) -> Receiver:
        """The receive side: acknowledgements go back over a reverse EV set (a baseline
        QP's: its one path)."""
        nic = self.nic
        cfg = self.cfg
        peer = self.peer
        single = None if self.mrc else (self.evs.ring[0].plane, self.evs.ring[0].ev)
        return Receiver(
            nic,
            cfg,
            peer=peer,
            peer_addrs=self._peer_addr_set,
            recv_psn=recv_psn,
            mrc=self.mrc,
            regions=nic.memory.regions,
            reverse=ReverseEvs(nic, cfg, peer, self.qpn, now, single),
            templates=(
                sack_templates(nic, self.peer_addrs, self.peer_qpn),
                nack_templates(nic, self.peer_addrs, self.peer_qpn),
            ),
            counters=self.counters,
            log=self.log,
        )

    @property
    def no_ev_timeout_ns(self) -> int:
        """How long the connection may go without a usable EV before it fails."""
        return self.deadlines.no_ev_timeout_ns

    @no_ev_timeout_ns.setter
    def no_ev_timeout_ns(self, value: int) -> None:
        self.deadlines.no_ev_timeout_ns = value
        self.nic.wake(self.qpn)

    def post_write(
        self,
        data: bytes | bytearray | memoryview | StreamPayload,
        remote_va: int,
        rkey: int,
        now: int,
    ) -> int:
        """Queue an RDMA WRITE of ``data`` to the peer's [remote_va, +len) under ``rkey``.

        ``data`` is bytes-like (packets are views into it: keep it unchanged until the
        WRITE completes) or a :class:`~nic_emu.streams.StreamPayload` (made as it is
        sent, never held whole)."""
        if self.state is QpState.ERROR:
            assert self.error is not None
            raise self.error
        payload: Payload
        if isinstance(data, StreamPayload):
            payload, size = data, data.length
        elif isinstance(data, bytes | bytearray | memoryview):
            view = memoryview(data).cast("B")
            payload, size = BufferPayload(view), len(view)
        else:
            raise MemoryAccessError(
                f"WRITE data must be bytes-like or a StreamPayload, got {type(data).__name__}"
            )
        if isinstance(remote_va, bool) or not isinstance(remote_va, int):
            raise MemoryAccessError(f"remote VA must be an integer, got {remote_va!r}")
        if remote_va < 0 or remote_va + size > 1 << 64:
            raise MemoryAccessError(
                f"WRITE of {size} bytes at VA {remote_va:#x} does not fit 64-bit addresses"
            )
        if isinstance(rkey, bool) or not isinstance(rkey, int) or not 0 <= rkey <= 0xFFFF_FFFF:
            raise MemoryAccessError(f"R_Key must be a 32-bit unsigned integer, got {rkey!r}")
        wr_id = self._next_wr_id
        self._next_wr_id += 1
        mtu = self.cfg.mtu_payload
        npkts = max(1, -(-size // mtu))
        if self.send.idle():
            self.deadlines.quiet_since = now  # the peer's silence counts from the first post
        self.send.post(WriteRequest(wr_id, payload, size, remote_va, rkey, npkts, now))
        self.nic.wake(self.qpn)
        return wr_id

    def attach_responder_sink(self, sink: StreamReceiver) -> None:
        """Check this QP's incoming WRITEs into ``sink`` (a running digest per message,
        out-of-order payloads held until their gap fills) instead of placing them in the
        NIC's registered regions; a packet the sink does not admit is dropped with the
        reason it names (``memory_access``, ``memory_budget``)."""
        self.rx.attach_sink(sink)

    def deny_ev(self, ev: int, now: int) -> None:
        self.evs.deny(ev, now)
        self.nic.wake(self.qpn)

    def allow_ev(self, ev: int, now: int) -> None:
        self.evs.allow(ev, now)
        self.nic.wake(self.qpn)

    def release(self) -> None:
        """Drop the buffers of a destroyed QP: posted WRITEs (and the frame templates'
        views into their data), in-flight state, receive bookkeeping, the EV set (its
        per-plane acknowledged packets are kept). Counters stay."""
        self._acked_per_plane = self.acked_per_plane()
        self._acked_per_path = self.acked_per_path()
        planes = self.evs.planes
        self.evs = evs = EvSet(
            {p: [] for p in planes}, {}, min_active_per_plane=0, skip_ns=1, rng=self._rng
        )
        self.send = send = SendState(self.send.next_psn, self._mtu, self._window)
        # Every part that holds the EV set or the send state lets go of the old ones.
        self.probes.evs = evs
        for part in self._send_parts():
            part.evs = evs
            part.send = send
        self.tx.frames.release()
        self.rx.release()

    def _send_parts(self) -> tuple[Transmitter, Losses, TailProbe, Feedback, Deadlines, Repath]:
        """The parts that hold both the EV set and the send state."""
        return (self.tx, self.losses, self.tail, self.feedback, self.deadlines, self.repath)

    def acked_per_plane(self) -> list[int]:
        """Acknowledged data packets per plane (of their last transmission's EV)."""
        if self._acked_per_plane is not None:
            return list(self._acked_per_plane)
        counts = [0] * self.nic.plane_count
        for entry in self.evs.entries():
            counts[entry.plane] += entry.acked_packets
        return counts

    def acked_per_path(self) -> dict[object, int]:
        """Acknowledged data packets per path (plane, T1) of their last transmission's EV."""
        if self._acked_per_path is not None:
            return dict(self._acked_per_path)
        counts: dict[object, int] = {}
        for entry in self.evs.entries():
            counts[entry.path] = counts.get(entry.path, 0) + entry.acked_packets
        return counts

    @property
    def idle(self) -> bool:
        """Nothing posted is still unacknowledged."""
        return self.send.idle()

    def fail(self, reason: str, detail: str, now: int) -> None:
        if self.state is QpState.ERROR:
            return
        self.state = QpState.ERROR
        self.error = ConnectionFailedError(self.qpn, reason, detail)
        pending = tuple(wr.wr_id for wr in self.send.incomplete)
        self.rx.stop()
        self.probes.stop()
        self.tx.stop()
        nic = self.nic
        nic.emit(ConnectionFailed(self.qpn, reason, str(self.error), pending, now))
        self.log.record(now, ev_kinds.CONN_FAILED, reason=reason, message=detail)

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
