"""The sans-IO core of an emulated MRC NIC (modelled on h11 / aioquic).

A :class:`NicCore` is a pure state machine. A driver feeds it

- frames from the wire: :meth:`NicCore.receive_frame` (Ethernet frames, one port per plane),
- time: every call takes ``now`` in nanoseconds; :meth:`NicCore.next_timer` says when
  the core next needs :meth:`NicCore.handle_timer`,
- port state: :meth:`NicCore.set_port_state`,

and collects

- frames to put on the wire: :meth:`NicCore.frames_to_send` -> ``[(plane, frame)]``,
- application events: :meth:`NicCore.events` (WRITE completions, arrivals, failures).

The core has no socket, thread or clock. Everything a driver must do is in
:func:`service`'s docstring (the driver contract); it is the loop body every driver shares.
"""

from __future__ import annotations

import operator
from collections import deque
from collections.abc import Callable

import cython

from mrc_wire import EV_PROBE_QPN
from mrc_wire.codec import DataPacket, Nack, Probe, Sack, decode, encode_probe
from mrc_wire.exceptions import MalformedPacket, MrcWireError
from nic_emu import event_log as ev_kinds
from nic_emu.config import NicConfig, TransportMode
from nic_emu.connection import TS_MASK, QpState
from nic_emu.connection.host import AppEvent, ConnectionFailed, EvRoute
from nic_emu.connection.queue_pair import Connection
from nic_emu.connection.records import Counters
from nic_emu.connection.timers import INEXACT, NO_DEADLINE, time_key
from nic_emu.ev_set import EvEntry
from nic_emu.event_log import EventLog
from nic_emu.exceptions import (
    ConfigError,
    ConnectionSetupError,
    NicEmuError,
    UnknownConnectionError,
)
from nic_emu.memory import MemoryRegion, MemoryTable
from nic_emu.nic_host import PORT_STATUS_BITS, NicHost
from nic_emu.sender import PSN_MASK
from topologies import AddressPlan, Path, mac_bytes
from topologies.addressing import EV_T1_SHIFT
from topologies.exceptions import TopologyError

FIRST_QPN = 0x100  # QPNs below this are reserved (0x2 is the EV-probe QPN)
MAX_QPN = 0xFF_FFFF

#: a NIC's own counters, in this order (``NicCore.counters``, in ``snapshot()``)
NIC_COUNTERS = (
    "rx_frames",
    "rx_malformed",
    "rx_foreign",
    "rx_unknown_qpn",
    "rx_dropped",
    "rx_port_down",
    "tx_probe_reply",
    "rx_probe_reply_unknown",
    "paths_shared",
    "paths_held",
)


class NicCounters(Counters):
    """A NIC's own counters (:data:`NIC_COUNTERS`; C integers on the native build,
    core.pxd), read as a mapping of those names as a connection's are."""

    __slots__ = NIC_COUNTERS
    NAMES = NIC_COUNTERS


_NONE_FRESH: set[Connection] = set()  # never written: no deadline was just recomputed
_CREATED_SEQ = operator.attrgetter("created_seq")  # handle_timer: due in creation order
# a module global (one dictionary read, cached by the native build) rather than the enum
# class's attribute, read for every frame received
_READY = QpState.READY
# the timer heap's C integers (nic_emu.connection.timers.time_key), as C values
_INEXACT = INEXACT
_NO_DEADLINE = NO_DEADLINE


# The timer heap: a binary min-heap of the connections that have a deadline, one entry
# each, every connection knowing its place (``heap_pos``, -1: not in it), so a deadline
# that moves moves its entry (no stale entries to skip or compact). Ordered by
# ``sched_deadline`` (an int or a float), compared as C integers on the native build when
# both are exact ints (``sched_key``, nic_emu.connection.timers), as Python compares them
# otherwise; equal ones by creation (``created_seq``). The heap's order decides no result:
# next_timer returns the earliest deadline, and handle_timer runs every connection due in
# creation order.
def _earlier(a: Connection, b: Connection) -> bool:
    """``a``'s deadline is before ``b``'s (or the same and ``a`` older)."""
    ka = a.sched_key
    kb = b.sched_key
    if ka != _INEXACT and kb != _INEXACT:
        if ka != kb:
            return ka < kb
    else:
        ta = a.sched_deadline
        tb = b.sched_deadline
        if ta != tb:
            return ta < tb  # type: ignore[operator]
    return a.created_seq < b.created_seq


def _sift_up(heap: list[Connection], pos: int) -> None:
    conn = heap[pos]
    while pos > 0:
        parent_pos = (pos - 1) >> 1
        parent = heap[parent_pos]
        if not _earlier(conn, parent):
            break
        heap[pos] = parent
        parent.heap_pos = pos
        pos = parent_pos
    heap[pos] = conn
    conn.heap_pos = pos


def _sift_down(heap: list[Connection], pos: int) -> None:
    conn = heap[pos]
    end = len(heap)
    child = 2 * pos + 1
    while child < end:
        right = child + 1
        if right < end and _earlier(heap[right], heap[child]):
            child = right
        first = heap[child]
        if not _earlier(first, conn):
            break
        heap[pos] = first
        first.heap_pos = pos
        pos = child
        child = 2 * pos + 1
    heap[pos] = conn
    conn.heap_pos = pos


def _heap_remove(heap: list[Connection], conn: Connection) -> None:
    """``conn`` leaves the heap (it must be in it)."""
    pos = conn.heap_pos
    conn.heap_pos = -1
    last = heap.pop()
    if last is not conn:
        heap[pos] = last
        last.heap_pos = pos
        _sift_down(heap, pos)
        if last.heap_pos == pos:
            _sift_up(heap, pos)


def _schedule(heap: list[Connection], conn: Connection, t: object) -> None:
    """``conn``'s deadline is now ``t`` (None: none): its entry moves, comes or goes."""
    conn.sched_deadline = t
    conn.sched_key = time_key(t)
    pos = conn.heap_pos
    if t is None:
        if pos >= 0:
            _heap_remove(heap, conn)
    elif pos < 0:
        heap.append(conn)
        _sift_up(heap, len(heap) - 1)
    else:
        _sift_down(heap, pos)
        if conn.heap_pos == pos:
            _sift_up(heap, pos)


class NicCore(NicHost):
    """One emulated NIC: its ports (one per plane), memory regions and connections.

    ``name`` is the NIC's name in ``plan``'s topology (e.g. ``"nic0"``). ``seed`` makes
    every pseudo-random choice (EV rotation order) reproducible. ``log`` may be shared
    by many cores; a fresh one is made if omitted.
    """

    def __init__(
        self,
        name: str,
        plan: AddressPlan,
        config: NicConfig | None = None,
        *,
        seed: int = 0,
        log: EventLog | None = None,
    ) -> None:
        self.config = config if config is not None else NicConfig()
        if not isinstance(self.config, NicConfig):
            raise ConfigError(f"config must be a NicConfig, got {type(config).__name__}")
        self.plan = plan
        topo = plan.topology
        try:
            nic = topo.nic(name)
        except TopologyError as exc:
            raise ConfigError(f"cannot build NIC {name!r}: {exc}") from None
        self.name = nic.name
        self.index = nic.index
        self.seed = seed
        self.log = log if log is not None else EventLog()
        self.trace_packets = self.config.trace_packets
        NicHost.__init__(self, topo.plane_count, [p.t1_count for p in topo.planes])
        if self.config.evs_per_connection < self.plane_count:
            raise ConfigError(
                f"evs_per_connection={self.config.evs_per_connection} cannot be split across "
                f"{self.plane_count} planes (need at least one EV per plane)"
            )
        planes = range(self.plane_count)
        self.addrs = [plan.nic_address(self.name, p).packed for p in planes]
        self._addr_set = frozenset(self.addrs)
        self.macs = [mac_bytes(plan.nic_mac(self.name, p)) for p in planes]
        self.gateway_macs = [
            mac_bytes(plan.switch_mac(topo.nic_port(self.name, p).t0)) for p in planes
        ]
        self.port_free_at = [0] * self.plane_count  # data transmit pacing per port
        self.ns_per_byte = 8e9 / self.config.port_rate_bps
        self._rr = 0
        self.port_status_bits = self._status_bits()
        self.memory = MemoryTable()
        self.connections: dict[int, Connection] = {}
        # Incremental scheduling state (see frames_to_send / next_timer): connections an
        # event touched since they last proved blocked, connections whose deadline must be
        # recomputed, the heap of the connections with a deadline (_schedule), and the
        # READY connections in creation order (None: rebuild).
        self._sendable: set[Connection] = set()
        self._stale: set[Connection] = set()
        self._fresh: set[Connection] = set()  # the last _refresh_timers() result, reused
        self._timers: list[Connection] = []
        self._created = 0
        self._ready: list[Connection] | None = None
        self._parked: list[set[Connection]] = [set() for _ in planes]
        self.out: list[tuple[int, bytes]] = []
        self._events: deque[AppEvent] = deque()
        self._next_qpn = FIRST_QPN
        self._path_cache: dict[tuple[str, int], Path] = {}
        self._route_cache: dict[tuple[str, int], EvRoute] = {}
        self._probes: dict[int, tuple[int, EvEntry]] = {}  # probe id -> (QPN, EV)
        self._next_probe_id = 1
        self.plane_tx = [0] * self.plane_count
        self.plane_rx = [0] * self.plane_count
        self.counters = NicCounters()  # read as a mapping of its names
        # Paths (plane, T1) connections retired on their own evidence: path -> far T0 ->
        # when (path_failed), kept for a probe revival time.
        self._failed_paths: dict[object, dict[str, int]] = {}
        self.drop_reasons: dict[str, int] = {}
        # Set by a driver whose peers open queue pairs out of band without telling this NIC
        # (``nic-emu serve``): called as (source NIC, QPN, now) for a data packet or a
        # reliability probe to a QPN with no connection; a Connection it returns takes the
        # packet, None refuses it (dropped as ``unknown_qpn``).
        self.accept_unknown_qp: Callable[[str, int, int], Connection | None] | None = None

    # ------------------------------------------------------------------ application API

    def register_memory(self, length: int) -> MemoryRegion:
        """A zeroed memory region of ``length`` bytes that peers may WRITE into."""
        return self.memory.register(length)

    def reserve_memory(self, length: int) -> tuple[int, int]:
        """(R_Key, VA) for ``length`` bytes that peers may WRITE into a streamed sink
        (nothing is allocated: :meth:`MemoryTable.reserve`)."""
        return self.memory.reserve(length)

    def create_connection(
        self,
        peer: str,
        *,
        peer_qpn: int,
        qpn: int | None = None,
        mode: TransportMode | None = None,
        send_psn: int = 0,
        recv_psn: int = 0,
        now: int = 0,
    ) -> Connection:
        """Open a queue pair to ``peer``'s QP ``peer_qpn`` (set up out of band, as RDMA
        QPs are). ``send_psn`` is this side's first PSN, ``recv_psn`` the peer's."""
        try:
            peer_name = self.plan.topology.nic(peer).name
        except TopologyError as exc:
            raise ConnectionSetupError(f"{self.name}: unknown peer {peer!r}: {exc}") from None
        if peer_name == self.name:
            raise ConnectionSetupError(f"{self.name}: a connection to itself cannot use the fabric")
        if qpn is None:
            qpn = self.allocate_qpn()
        for label, value in (("qpn", qpn), ("peer_qpn", peer_qpn)):
            if isinstance(value, bool) or not isinstance(value, int):
                raise ConnectionSetupError(f"{label} must be an integer, got {value!r}")
            if not FIRST_QPN <= value <= MAX_QPN:
                raise ConnectionSetupError(
                    f"{label} {value:#x} is outside {FIRST_QPN:#x}..{MAX_QPN:#x} "
                    "(lower QPNs are reserved, 0x2 is the EV-probe QPN)"
                )
        if qpn in self.connections:
            raise ConnectionSetupError(f"{self.name}: QPN {qpn:#x} is already in use")
        for label, value in (("send_psn", send_psn), ("recv_psn", recv_psn)):
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= PSN_MASK:
                raise ConnectionSetupError(f"{label} must be a 24-bit PSN, got {value!r}")
        mode = self.config.mode if mode is None else mode
        if not isinstance(mode, TransportMode):
            raise ConnectionSetupError(f"mode must be a TransportMode, got {mode!r}")
        conn = Connection(self, qpn, peer_name, peer_qpn, mode, send_psn, recv_psn, now)
        self.connections[qpn] = conn
        self._created += 1
        conn.created_seq = self._created
        self._ready = None
        self.touch(conn)
        peer_up = self.peer_port_up(peer_name)
        for p in range(self.plane_count):
            if not self.port_up[p]:
                conn.plane_down(p, now, remote=False)
            if not peer_up[p]:
                conn.plane_down(p, now, remote=True)
        return conn

    def destroy_connection(self, qpn: int) -> Connection:
        """Destroy queue pair ``qpn`` (``ibv_destroy_qp``): it leaves the NIC, later packets
        to it are dropped as ``unknown_qpn``, and its unfinished work never completes."""
        conn = self.connection(qpn)
        del self.connections[qpn]
        self._unschedule(conn)
        self._stale.discard(conn)
        self._fresh.discard(conn)
        _schedule(self._timers, conn, None)  # it leaves the timer heap
        for entry in conn.evs.entries():
            if entry.probe_seq >= 0:
                self.forget_probe(entry.probe_seq)
                entry.probe_seq = -1
        conn.release()
        return conn

    def allocate_qpn(self) -> int:
        """A QPN no connection of this NIC uses (and that no later call returns)."""
        while self._next_qpn in self.connections:
            self._next_qpn += 1
        qpn = self._next_qpn
        self._next_qpn += 1
        return qpn

    def connection(self, qpn: int) -> Connection:
        conn = self.connections.get(qpn)
        if conn is None:
            raise UnknownConnectionError(f"{self.name} has no connection with QPN {qpn!r}")
        return conn

    def post_write(
        self, qpn: int, data: bytes | bytearray | memoryview, remote_va: int, rkey: int, now: int
    ) -> int:
        """Post an RDMA WRITE on connection ``qpn``; returns its work-request id."""
        return self.connection(qpn).post_write(data, remote_va, rkey, now)

    def deny_ev(self, qpn: int, ev: int, now: int) -> None:
        """Management: never use ``ev`` on connection ``qpn`` (state DENIED)."""
        self.connection(qpn).deny_ev(ev, now)

    def allow_ev(self, qpn: int, ev: int, now: int) -> None:
        """Management: lift a DENIED state."""
        self.connection(qpn).allow_ev(ev, now)

    def has_events(self) -> bool:
        """Whether :meth:`events` has something to hand (a look, without making a list)."""
        return bool(self._events)

    def events(self) -> list[AppEvent]:
        """Application events since the last call, oldest first."""
        if not self._events:
            return []
        out = list(self._events)
        self._events.clear()
        return out

    # ------------------------------------------------------------------ driver API

    def receive_frame(self, frame: bytes, plane: int, now: int) -> None:
        """One Ethernet frame arrived on the port of ``plane``. Never raises for bad frames:
        they are counted (``counters``, ``drop_reasons``) and logged as ``rx_drop``."""
        counters = self.counters
        counters.rx_frames += 1
        if not 0 <= plane < self.plane_count:
            self.drop(now, "bad_port", None)
            return
        port = plane  # in range: a C index on the native build
        if not self.port_up[port]:
            counters.rx_port_down += 1
            return
        try:
            m = decode(frame)
        except MrcWireError as exc:
            counters.rx_malformed += 1
            reason = exc.reason.value if isinstance(exc, MalformedPacket) else "undecodable"
            self.drop(now, "malformed", plane, detail=reason)
            return
        # The arriving port's own address first (one bytes comparison, nearly every
        # frame), the set of all of this NIC's addresses only when it differs: the same
        # answer as the set alone (a frame for another of its addresses is still taken).
        dst = m.inner_dst
        own = self.addrs[port]
        if dst != own and dst not in self._addr_set:
            counters.rx_foreign += 1
            self.drop(now, "not_for_this_nic", plane)
            return
        self.plane_rx[port] += 1
        kind = type(m)
        dqpn = m.dqpn
        if kind is Probe and dqpn == EV_PROBE_QPN:
            self._on_ev_probe(m, plane, now)  # type: ignore[arg-type]
            return
        conn = self.connections.get(dqpn)
        if conn is None:
            if self.accept_unknown_qp is not None and (kind is DataPacket or kind is Probe):
                conn = self._accept_unknown_qp(m.inner_src, dqpn, now)
            if conn is None:
                counters.rx_unknown_qpn += 1
                self.drop(now, "unknown_qpn", plane, qpn=dqpn)
                return
        # The connection's parts directly (its entry points are their bound methods):
        # the native build calls them through their C method tables.
        if kind is DataPacket:
            frame = conn.rx.on_data(m, plane, now)  # type: ignore[arg-type]
            if frame is not None:
                self.out.append(frame)
        elif kind is Sack:
            frames = conn.feedback.on_sack(m, port, now)  # type: ignore[arg-type]
            if frames:
                self.out.extend(frames)
        elif kind is Nack:
            conn.feedback.on_nack(m, plane, now)  # type: ignore[arg-type]
        else:
            frame = conn.rx.on_reliability_probe(m, plane, now)  # type: ignore[arg-type]
            if frame is not None:
                self.out.append(frame)
        if conn.state is _READY:
            self._sendable.add(conn)
            self._stale.add(conn)

    def frames_to_send(self, now: int) -> list[tuple[int, bytes]]:
        """Every frame ready to go, as (plane, frame); the driver sends each on that port.

        Connections take turns, one packet each, starting with a different READY
        connection on every call. Only connections that may have something to send are
        asked. One that proved blocked by its window (:meth:`Connection.window_blocked`)
        stays out until an event touches it (:meth:`touch`); one that waits for a busy
        port with its next EV fixed waits in that port's queue until the port is free or
        an event touches it. Asking either earlier would change nothing.
        """
        out = self.out
        sendable = self._sendable
        parked = self._parked
        free = self.port_free_at
        # A loop, not any(parked): the native build tests each set's size in C.
        for p in range(len(parked)):
            group = parked[p]
            if group and free[p] <= now:
                sendable.update(group)
        ready = self._ready
        if ready is None:
            ready = self._ready_connections()
        n = len(ready)
        start = 0
        if n > 1:
            start = self._rr % n
            self._rr += 1
        if sendable:
            if len(sendable) == 1:
                for conn in sendable:  # its one member, without a list or an iterator's
                    self._unpark(conn)
                    break
                tx = conn.tx
                while (frame := tx.send_one(now)) is not None:
                    out.append(frame)
                self._settle(conn, sendable)
            else:
                order = {c: (c.ready_index - start) % n for c in sendable}
                turn = sorted(sendable, key=order.__getitem__)
                tried = turn
                for conn in turn:
                    self._unpark(conn)
                while turn:
                    still = []
                    for conn in turn:
                        frame = conn.tx.send_one(now)
                        if frame is not None:
                            out.append(frame)
                            still.append(conn)
                    turn = still
                for conn in tried:
                    self._settle(conn, sendable)
        self.out = []
        return out

    def _unpark(self, conn: Connection) -> None:
        """``conn`` takes its turn: it no longer waits for a port."""
        conn.tx.pace_at = None
        p = conn.parked_plane
        if p >= 0:
            group = self._parked[p]
            group.discard(conn)
            conn.parked_plane = -1

    def _settle(self, conn: Connection, sendable: set[Connection]) -> None:
        """After ``conn``'s turn: its deadline may have moved; it waits for the port its
        next packet needs, or out of ``sendable`` while that wait or its window holds."""
        self._stale.add(conn)
        tx = conn.tx
        if tx.pace_at is not None:
            p = tx.pace_plane
            group = self._parked[p]
            group.add(conn)
            conn.parked_plane = p
            if tx.pace_fixed:
                sendable.discard(conn)
        elif tx.window_blocked():
            sendable.discard(conn)

    def _ready_connections(self) -> list[Connection]:
        ready = [c for c in self.connections.values() if c.state is _READY]
        for i, conn in enumerate(ready):
            conn.ready_index = i
        self._ready = ready
        return ready

    def touch(self, conn: Connection) -> None:
        """Something happened to ``conn`` (a frame, a timer, a port, an application
        call): it may have something to send, and its deadline may have moved."""
        if conn.state is _READY and self.connections.get(conn.qpn) is conn:
            self._sendable.add(conn)
            self._stale.add(conn)

    def wake(self, qpn: int) -> None:
        """An application call changed connection ``qpn`` (:class:`ConnectionHost`)."""
        conn = self.connections.get(qpn)
        if conn is not None:
            self.touch(conn)

    def _unschedule(self, conn: Connection) -> None:
        self._ready = None
        self._sendable.discard(conn)
        if conn.parked_plane >= 0:
            self._parked[conn.parked_plane].discard(conn)
            conn.parked_plane = -1

    def _refresh_timers(self) -> set[Connection]:
        """Recompute the deadline of every touched connection; move the ones that moved
        in the timer heap. Returns those connections (their deadlines are current: no need
        to confirm them).

        Invariant: every hosted connection's ``sched_deadline`` is its place in the heap
        and is no later than its :meth:`Connection.timer_deadline` (state shared between
        connections only moves deadlines later: a peer heard from again), so the heap's
        first entry, once confirmed, is the earliest deadline of all. Only a deadline set
        by the peer's silence (``sched_by_peer``) needs confirming: every other term
        changes only with the connection's own state, which marks it stale.
        """
        timers = self._timers
        fresh = self._stale
        # The set handed out by the previous call is no longer read (its caller is done
        # with it): emptied, it takes the stale connections from now on.
        spare = self._fresh
        spare.clear()
        self._stale = spare
        self._fresh = fresh
        for conn in fresh:
            deadlines = conn.deadlines
            if cython.compiled:
                # The deadline as a C integer (exact_deadline): an unchanged one is
                # known without making it an int object or comparing objects.
                key = deadlines.exact_deadline() if conn.state is _READY else _NO_DEADLINE
                if key != _INEXACT:
                    conn.sched_by_peer = deadlines.by_peer
                    if key != conn.sched_key:
                        t = None if key == _NO_DEADLINE else key
                        # a float scheduled (no key) stays if equal, as on the general path
                        if conn.sched_key != _INEXACT or t != conn.sched_deadline:
                            _schedule(timers, conn, t)
                    continue
            t = deadlines.timer_deadline()
            conn.sched_by_peer = deadlines.by_peer
            if t != conn.sched_deadline:
                _schedule(timers, conn, t)
        return fresh

    def _earliest(self, fresh: set[Connection]) -> Connection | None:
        """The connection with the earliest confirmed deadline (its ``sched_deadline``),
        left on top of the heap; connections in ``fresh`` were just recomputed."""
        timers = self._timers
        while timers:
            conn = timers[0]
            if not conn.sched_by_peer or conn in fresh:
                return conn
            d = conn.sched_deadline
            t = conn.deadlines.timer_deadline()
            conn.sched_by_peer = conn.deadlines.by_peer
            if t == d:
                return conn
            _schedule(timers, conn, t)
        return None

    def next_timer(self) -> int | None:
        """When :meth:`handle_timer` must next be called (None: nothing pending): the
        earliest connection deadline, or a busy port that connections wait for."""
        fresh = self._refresh_timers() if self._stale else _NONE_FRESH
        found = self._earliest(fresh)
        best = None if found is None else found.sched_deadline
        parked = self._parked
        free = self.port_free_at
        for p in range(len(parked)):
            group = parked[p]
            if group and (best is None or free[p] < best):
                best = free[p]
        return best

    def handle_timer(self, now: int) -> None:
        """Run the timers of every connection whose deadline has come, in creation order."""
        fresh = self._refresh_timers() if self._stale else _NONE_FRESH
        sendable = self._sendable
        free = self.port_free_at
        for p, group in enumerate(self._parked):
            if group and free[p] <= now:
                # The port is free: its waiting connections try again (their on_timer
                # would only clear pace_at).
                for conn in group:
                    conn.tx.pace_at = None
                    conn.parked_plane = -1
                sendable.update(group)
                group.clear()
        due: list[Connection] = []
        timers = self._timers
        while True:
            conn = self._earliest(fresh)
            if conn is None or conn.sched_deadline > now:
                break
            _schedule(timers, conn, None)
            due.append(conn)
        if len(due) > 1:
            due.sort(key=_CREATED_SEQ)
        stale = self._stale
        out = self.out
        for conn in due:
            frames = conn.deadlines.on_timer(now)
            if frames:
                out.extend(frames)
            stale.add(conn)
            if conn.state is _READY:
                sendable.add(conn)

    def set_port_state(self, plane: int, up: bool, now: int) -> None:
        """The link of port ``plane`` went down or came back (driver-detected)."""
        if not 0 <= plane < self.plane_count:
            raise ConfigError(f"{self.name} has ports 0..{self.plane_count - 1}, not {plane}")
        if self.port_up[plane] == up:
            return
        self.port_up[plane] = up
        self.port_status_bits = self._status_bits()
        self.log.record(now, self.name, ev_kinds.PORT_UP if up else ev_kinds.PORT_DOWN, plane=plane)
        for conn in self.connections.values():
            if up:
                conn.plane_up(plane, now, remote=False)
            else:
                conn.plane_down(plane, now, remote=False)
            self.touch(conn)

    # ------------------------------------------------------------------ services for connections

    def emit(self, event: AppEvent) -> None:
        self._events.append(event)
        if type(event) is ConnectionFailed:
            # It went to ERROR: it leaves the turns, the port queues and the timers.
            conn = self.connections.get(event.qpn)
            if conn is not None:
                self._unschedule(conn)
                self._stale.add(conn)

    def drop(self, now: int, reason: str, plane: int | None, **detail: object) -> None:
        self.counters.rx_dropped += 1
        self.drop_reasons[reason] = self.drop_reasons.get(reason, 0) + 1
        qpn = detail.pop("qpn", None)
        psn = detail.pop("psn", None)
        self.log.record(
            now,
            self.name,
            ev_kinds.RX_DROP,
            qpn=qpn,
            plane=plane,
            psn=psn,
            reason=reason,
            **detail,  # type: ignore[arg-type]
        )

    def path(self, peer: str, ev: int) -> Path:
        """The path ``ev`` takes to ``peer``: a function of the EV's plane and T1 fields
        only (its salt picks nothing), cached per peer and those fields."""
        if not 0 <= ev <= 0xFFFF_FFFF:
            return self.plan.path_for_ev(self.name, peer, ev)  # raises: not an EV
        key = (peer, ev >> EV_T1_SHIFT)
        found = self._path_cache.get(key)
        if found is None:
            found = self.plan.path_for_ev(self.name, peer, ev)
            self._path_cache[key] = found
        return found

    def ev_route(self, peer: str, ev: int) -> EvRoute:
        """(plane, path key (plane, T1), carrier bytes) of the path ``ev`` takes to
        ``peer``: what an EV-set entry keeps. Cached as :meth:`path` is."""
        key = (peer, ev >> EV_T1_SHIFT)
        found = self._route_cache.get(key)
        if found is None:
            path = self.path(peer, ev)
            found = (path.plane, (path.plane, path.t1), path.carrier_bytes)
            if 0 <= ev <= 0xFFFF_FFFF:
                self._route_cache[key] = found
        return found

    def path_or_none(self, peer: str, ev: int) -> bytes | None:
        try:
            return self.ev_route(peer, ev)[2]
        except TopologyError:
            return None

    def plan_ev_plane(self, ev: int) -> int:
        return (ev >> 28) % self.plane_count if 0 <= ev <= 0xFFFF_FFFF else -1

    def peer_ports_changed(self, peer: str, bits: int, now: int) -> None:
        """A new port-status bitmap from ``peer`` (:meth:`NicHost.note_peer_ports`):
        planes whose bit changed go down / come up."""
        current = self.peer_port_up(peer)
        for p in range(min(self.plane_count, PORT_STATUS_BITS)):
            up = bool((bits >> p) & 1)
            if current[p] == up:
                continue
            current[p] = up
            self.log.record(now, self.name, ev_kinds.REMOTE_PORT, plane=p, peer=peer, up=up)
            for conn in self.connections.values():
                if conn.peer == peer:
                    if up:
                        conn.plane_up(p, now, remote=True)
                    else:
                        conn.plane_down(p, now, remote=True)
                    self.touch(conn)

    def register_probe(self, qpn: int, entry: EvEntry) -> int:
        probe_id = self._next_probe_id
        self._next_probe_id = (probe_id + 1) & 0xFFFF_FFFF or 1
        self._probes[probe_id] = (qpn, entry)
        return probe_id

    def forget_probe(self, probe_id: int) -> None:
        self._probes.pop(probe_id, None)

    def path_failed(self, qpn: int, path: object, now: int, *, retired: bool) -> None:
        """Connection ``qpn`` retired ``path`` on its own evidence, or (``retired``
        False) lost a first packet on it with nothing sent since delivered
        (:class:`ConnectionHost`).

        The path is this NIC's T0, the uplink to the path's T1, the T1, and its downlink
        to the peer's T0 (the far T0); one of them failed. Every connection to a peer under
        the same far T0 crosses all of them, so when one retires the path, they retire it
        too. Once the path failed or lost a packet toward two far T0s within a probe
        revival time (``probe_interval_ns`` x ``probe_success_threshold``), the failed
        element is one they share, the uplink or the T1, and every connection through the
        T1 retires it. Probes revive each as they revive any retired path (docs/nic-emu.md
        section 3). Only with ``NicConfig.path_verdicts``."""
        cfg = self.config
        found = self._beyond_t0(qpn, path) if cfg.path_verdicts else None
        if found is None:
            return
        conn, first = found
        far = self._far_t0(conn.peer, first.ev)
        seen = self._failed_paths.setdefault(path, {})
        seen[far] = now
        horizon = now - cfg.probe_interval_ns * cfg.probe_success_threshold
        for t0 in [t0 for t0, at in seen.items() if at < horizon]:
            del seen[t0]
        common = len(seen) >= 2
        if not common and not retired:
            return
        for other in self._ready_mrc():
            if other is conn and retired:
                continue
            entries = other.evs.by_path.get(path)
            if not entries or (not common and self._far_t0(other.peer, entries[0].ev) != far):
                continue
            if other.shared_path_failure(path, now):
                self.counters.paths_shared += 1
                self.touch(other)

    def path_suspect(self, qpn: int, path: object, sent_ns: int, now: int) -> None:
        """Connection ``qpn`` quarantined ``path`` (:class:`ProbeHost`): a packet it sent
        on it at ``sent_ns`` is overdue or lost, and nothing it sent on it since was
        delivered. Unless another connection through the path's T1 delivered a packet
        sent on it at or after ``sent_ns`` (which refutes a failure of the uplink or the
        T1), every connection through it holds it out too: a quarantine costs little
        when wrong, since the first delivery of a later packet on the path, in any of
        them, clears it in all (:meth:`path_cleared`), and a probe clears it otherwise.
        Only with ``NicConfig.path_verdicts``."""
        found = self._beyond_t0(qpn, path)
        if found is None:
            return
        conn = found[0]
        through = [o for o in self._ready_mrc() if o is not conn and path in o.evs.by_path]
        if any(other.evs.delivered_ns(path) >= sent_ns for other in through):
            return
        for other in through:
            if other.shared_hold(path, sent_ns, now):
                self.counters.paths_held += 1
                self.touch(other)

    def path_cleared(self, qpn: int, path: object, delivered_ns: int, now: int) -> None:
        """Connection ``qpn`` ended its quarantine of ``path``: it delivered a packet sent
        on it at ``delivered_ns``, or a probe answered on it (``delivered_ns`` = now). The
        holds the NIC shared (:meth:`path_suspect`) for an older packet end with it."""
        for other in self._ready_mrc():
            if other.qpn != qpn and other.release_shared_hold(path, delivered_ns, now):
                self.touch(other)

    def _beyond_t0(self, qpn: int, path: object) -> tuple[Connection, EvEntry] | None:
        """Connection ``qpn`` and its first EV on ``path``, when the path leaves this NIC's
        T0 (one inside it shares nothing with other connections); else None."""
        conn = self.connections.get(qpn)
        if conn is None or path not in conn.evs.by_path:
            return None
        first = conn.evs.by_path[path][0]
        if self.path(conn.peer, first.ev).t1 is None:
            return None
        return conn, first

    def _ready_mrc(self) -> list[Connection]:
        """The NIC's MRC connections that are ready, in creation order: those a path
        verdict or hold is shared with."""
        return [c for c in self.connections.values() if c.mrc and c.state is _READY]

    def _far_t0(self, peer: str, ev: int) -> str:
        """The T0 where ``ev``'s path to ``peer`` ends (the peer's T0 on its plane)."""
        return self.path(peer, ev).switches[-1]

    def _accept_unknown_qp(self, inner_src: bytes, qpn: int, now: int) -> Connection | None:
        assert self.accept_unknown_qp is not None
        try:
            peer, _ = self.plan.nic_for_address(inner_src)
        except TopologyError:
            return None
        if peer == self.name:
            return None
        try:
            return self.accept_unknown_qp(peer, qpn, now)
        except NicEmuError:
            return None  # e.g. a reserved QPN: refused like any unknown one

    # ------------------------------------------------------------------ EV probes

    def _on_ev_probe(self, p: Probe, plane: int, now: int) -> None:
        try:
            requester, _ = self.plan.nic_for_address(p.inner_src)
        except TopologyError:
            self.counters.rx_foreign += 1
            self.drop(now, "probe_from_unknown_nic", plane)
            return
        if requester == self.name:
            self.drop(now, "probe_from_self", plane)
            return
        self.note_peer_ports(requester, p.port_status, now)
        self.heard_from(requester, p.ev, now)
        if p.reply:
            found = self._probes.pop(p.probe_id, None)
            if found is None:
                self.counters.rx_probe_reply_unknown += 1
                return
            qpn, entry = found
            conn = self.connections.get(qpn)
            if conn is not None and conn.state is _READY and entry.probe_seq == p.probe_id:
                conn.on_probe_answer(entry, now)
                self.touch(conn)
            return
        # Answer on the same EV, so the reply tests the reverse direction of that path.
        carrier = self.path_or_none(requester, p.ev)
        reply_plane = self.plan_ev_plane(p.ev)
        if carrier is None or reply_plane < 0 or not self.port_up[reply_plane]:
            self.drop(now, "probe_unanswerable", plane)
            return
        reply = Probe(
            dst_mac=self.gateway_macs[reply_plane],
            src_mac=self.macs[reply_plane],
            outer_src=self.addrs[reply_plane],
            outer_dst=carrier,
            inner_src=self.addrs[reply_plane],
            inner_dst=p.inner_src,
            ev=p.ev,
            dqpn=EV_PROBE_QPN,
            reply=True,
            probe_id=p.probe_id,
            probe_ev=p.probe_ev,
            timestamp=p.timestamp & TS_MASK,
            port_status=self.port_status_bits,
        )
        self.out.append((reply_plane, encode_probe(reply)))
        self.counters.tx_probe_reply += 1

    # ------------------------------------------------------------------ counters

    def _status_bits(self) -> int:
        bits = 0
        for p in range(PORT_STATUS_BITS):
            # Planes beyond this NIC (or beyond the 8-bit field) are reported up.
            if p >= self.plane_count or self.port_up[p]:
                bits |= 1 << p
        return bits

    def snapshot(self) -> dict[str, object]:
        """All counters as plain JSON-serialisable data."""
        return {
            "nic": self.name,
            "counters": dict(self.counters),
            "drop_reasons": dict(self.drop_reasons),
            "plane_tx": list(self.plane_tx),
            "plane_rx": list(self.plane_rx),
            "ports_up": list(self.port_up),
            "connections": {
                qpn: {
                    "peer": c.peer,
                    "peer_qpn": c.peer_qpn,
                    "mode": c.mode.value,
                    "state": c.state.value,
                    "cwnd": c.cc.cwnd,
                    "counters": dict(c.counters),
                    "planes": c.plane_counters(),
                }
                for qpn, c in self.connections.items()
            },
        }


# ---------------------------------------------------------------------- drivers


def service(
    core: NicCore, now: int, transmit: Callable[[int, bytes], None]
) -> tuple[int | None, list[AppEvent]]:
    """Flush the core's frames to ``transmit``; return (next timer deadline, app events).

    The driver contract: every driver of a core (:mod:`nic_emu.testing.sim`,
    :mod:`nic_emu.testing.loopback`, :mod:`nic_emu.process`, ``vfabric.nodes``) does this.

    1. On every frame received on port ``plane``: ``core.receive_frame(frame, plane, now)``,
       then :func:`service`.
    2. When the time returned by :func:`service` (``core.next_timer()``) is reached:
       ``core.handle_timer(now)``, then :func:`service`. A later :func:`service` may move
       the deadline earlier or later; only the latest one counts.
    3. After every application call (``post_write``, ``create_connection``...):
       :func:`service`.
    4. When a port's link goes down or up: ``core.set_port_state(plane, up, now)``, then
       :func:`service`.
    5. Put each ``(plane, frame)`` that :func:`service` hands to ``transmit`` on that
       port, in order; frames for a port that is down are dropped.
    6. Hand the events :func:`service` returns to the application.

    ``now`` is integer nanoseconds from any fixed origin, never decreasing. How a driver
    keeps time, sends and waits is its own (virtual time, a selector loop, a heap).
    """
    for plane, frame in core.frames_to_send(now):
        transmit(plane, frame)
    return core.next_timer(), core.events()
