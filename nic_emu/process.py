"""``nic-emu serve``: one emulated NIC as a process (docs/nic-emu-process.md).

:class:`NicProcess` is a thin driver around :class:`nic_emu.core.NicCore` that follows
the driver contract (:func:`nic_emu.core.service`): one selector loop over the plane
ports, the control socket and a signal wake-up socket, a ``time.monotonic_ns()`` clock,
and the core's ``service`` step after every received frame, timer expiry, control
request and port state change. A port taken down over the control socket is a cut cable: the core is told
(``set_port_state``) and the driver neither sends nor delivers frames on it.

A port with a link delay (``delay_us``) holds each transmitted frame in its
:class:`~nic_emu.delay_line.DelayLine` and puts it on the wire once the delay has passed:
the loop wakes for the earliest held frame as it does for the core's timer, and a port
taken down drops what it holds (frames still on the cable).

The event log is drained after every step: each record becomes a JSON line in the
``events`` file (flushed at once) and feeds the repath measurement of the transfer it
belongs to; nothing accumulates in memory.
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import os
import selectors
import signal
import socket
import sys
import time
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any

from nic_emu.config import TransportMode
from nic_emu.connection import Connection, QpState
from nic_emu.connection.host import AppEvent, ConnectionFailed, WriteCompleted, WriteReceived
from nic_emu.control import ControlServer, Field, RequestError, check_fields
from nic_emu.core import NicCore, service
from nic_emu.datasource import PIECE_BYTES, DataSource, RandomSource, open_source, parse_data_spec
from nic_emu.delay_line import DelayLine, delay_ns
from nic_emu.event_log import EventLog
from nic_emu.eventfile import EventFile
from nic_emu.exceptions import DataSourceError, NicEmuError, PortError, ServeConfigError
from nic_emu.ports import AfPacketPort, PortDriver, UdpPort
from nic_emu.serve_config import AfPacketPortSpec, ServeConfig, UdpPortSpec
from nic_emu.streams import StreamPayload
from nic_emu.transfers import (
    DATA_STEP_BYTES,
    DEFAULT_TRANSFER_DEADLINE_S,
    MAX_REGION_BYTES,
    NS_PER_S,
    TIMELINE_STEP_NS,
    MemoryBudget,
    Part,
    QpnPlan,
    ReceivedMessage,
    ResponderQp,
    SendTransfer,
    split,
)
from topologies.exceptions import TopologyError

RX_ROUNDS = 1024  # frames read per port before timers and the control socket get a turn
HOUSEKEEPING_NS = TIMELINE_STEP_NS
RESPONDER_IDLE_RETIRE_NS = 30 * NS_PER_S  # a finished incoming QP is destroyed after this
SENDER_RETIRE_NS = 2 * NS_PER_S  # a finished transfer's QPs are destroyed after this
MAX_CONNECTIONS_PER_TRANSFER = 256
MAX_TRANSFER_BYTES = 4 << 30
MESSAGES_KEPT = 10_000  # received messages the `messages` op can report (the latest)
FINISHED_TRANSFERS_KEPT = 1_000  # finished transfers the `transfer` op can still report

# glibc raises its mmap threshold to the size of every mmapped block freed (up to 32 MiB):
# after the first finished transfer, each transfer's buffers came from the heap, which
# fragments and never shrinks (the soak's NIC RSS crept ~3 MB a minute). Setting the
# threshold fixes it: big buffers stay mmapped and go back to the system when freed.
MMAP_THRESHOLD_BYTES = 128 << 10  # glibc's initial value, now fixed
_M_MMAP_THRESHOLD = -3  # <malloc.h>

SEND_FIELDS = {
    "to": Field(str),
    "bytes": Field(int),
    "connections": Field(int, required=False, default=1),
    "mode": Field(str, required=False, default="mrc"),
    "seed": Field(int, required=False, default=1),
    "data": Field(str, required=False, default="random"),
    "deadline_s": Field((int, float), required=False, default=DEFAULT_TRANSFER_DEADLINE_S),
}
TRANSFER_FIELDS = {"id": Field(int)}
PORT_FIELDS = {"plane": Field(int), "up": Field(bool)}


class NicProcess:
    """One NIC: its core, ports, control socket and event log."""

    def __init__(self, config: ServeConfig) -> None:
        self.config = config
        self.name = config.nic
        self.log = EventLog()
        self.core = NicCore(
            config.nic, config.plan, config.transport, seed=config.seed, log=self.log
        )
        self.core.accept_unknown_qp = self._accept_qp
        self.nic_index = config.topology.nic(config.nic).index
        self.qpns = QpnPlan(config.topology.nic_count)
        self.ports: dict[int, PortDriver] = {}
        self._port_readers: dict[int, tuple[int, PortDriver]] = {}
        self.port_up = [False] * self.core.plane_count
        self.delay_lines: dict[int, DelayLine] = {}  # planes whose link has a delay
        self.release_at: int | None = None  # when the earliest held frame is due
        self._now = 0  # the time of the service step in progress (for _transmit)
        self.selector: selectors.BaseSelector = selectors.SelectSelector()  # us timeouts
        self.control = ControlServer(config.control, self.handle_request)
        self.deadline: int | None = None
        self.stopping = False
        self.stop_signal: int | None = None  # the signal that stopped the loop, if any
        self.started_ns = time.monotonic_ns()
        self.next_housekeeping = self.started_ns + HOUSEKEEPING_NS
        self.transfers: dict[int, SendTransfer] = {}  # running + the latest finished ones
        self.transfers_started = 0  # ids are 1, 2, ...; never reused
        self.finished_ids: deque[int] = deque()  # oldest first; pruned past FINISHED_TRANSFERS_KEPT
        self.transfer_of_qpn: dict[int, SendTransfer] = {}
        self.responders: dict[int, ResponderQp] = {}
        self.retired_qpns: set[int] = set()
        # The latest messages received (what `messages` reports); older ones drop out.
        self.messages: deque[ReceivedMessage] = deque(maxlen=MESSAGES_KEPT)
        self.budget = MemoryBudget()
        self.send_reserved: dict[int, int] = {}  # QPN -> bytes reserved in the budget
        self.next_sequence = 0
        # Preparations of sends: (transfer, its steps, its QPNs)
        self.jobs: deque[tuple[SendTransfer, Iterator[None], list[int]]] = deque()
        self.retiring: deque[tuple[int, int]] = deque()  # (when, QPN) of finished QPs
        self.counters = dict.fromkeys(
            (
                "tx_port_down",
                "rx_port_down",
                "tx_delayed",
                "tx_held_dropped",
                "records_logged",
                "records_not_logged",
                "records_aggregated",
                "event_log_rotations",
            ),
            0,
        )
        self.running: dict[int, SendTransfer] = {}  # transfers not finished yet
        self._events_file: EventFile | None = None
        self._wake_r: socket.socket | None = None
        self._wake_w: socket.socket | None = None
        self._old_handlers: dict[int, Any] = {}
        self._old_wakeup_fd: int | None = None

    # ------------------------------------------------------------------ lifecycle

    def open(self) -> None:
        """Open the ports, the event log and the control socket (ServeConfigError naming
        the key on failure; whatever was opened is closed again)."""
        try:
            self._open()
        except BaseException:
            self.close()
            raise

    def _open(self) -> None:
        now = time.monotonic_ns()
        for plane, spec in sorted(self.config.ports.items()):
            self.ports[plane] = self._open_port(spec)
            self.port_up[plane] = True
            if spec.delay_us > 0:
                self.delay_lines[plane] = DelayLine(delay_ns(spec.delay_us))
            self._port_readers[plane] = (plane, self.ports[plane])
            self.selector.register(self.ports[plane], selectors.EVENT_READ, plane)
        for plane in range(self.core.plane_count):
            if plane not in self.ports:  # no cable on this plane
                self.core.set_port_state(plane, False, now)
        try:
            self._events_file = EventFile(self.config.events, self.config.events_max_bytes)
        except OSError as exc:
            raise ServeConfigError(
                "events", f"cannot open {self.config.events}: {exc.strerror}"
            ) from None
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self.selector.register(self._wake_r, selectors.EVENT_READ, self._on_wake)
        if self._old_handlers:  # wake the loop at once when a signal arrives
            self._old_wakeup_fd = signal.set_wakeup_fd(self._wake_w.fileno())
        self.control.open()
        self.control.register(self.selector)
        self.log.record(
            now,
            self.name,
            "nic_start",
            pid=os.getpid(),
            ports={str(p): port.description for p, port in self.ports.items()},
        )
        self._drain_log()

    def _open_port(self, spec: UdpPortSpec | AfPacketPortSpec) -> PortDriver:
        key = f"ports.{spec.plane}"
        if isinstance(spec, UdpPortSpec):
            try:
                return UdpPort(spec.plane, spec.local, spec.peer)
            except PortError as exc:
                raise ServeConfigError(f"{key}.local", str(exc)) from None
        try:
            port = AfPacketPort(spec.plane, spec.interface)
        except PortError as exc:
            raise ServeConfigError(f"{key}.interface", str(exc)) from None
        if port.max_frame < self.config.max_data_frame:
            port.close()
            raise ServeConfigError(
                f"{key}.interface",
                f"{spec.interface} has MTU {port.mtu}, too small for {self.config.max_data_frame}"
                f"-byte data frames (mtu_payload {self.config.transport.mtu_payload}); raise "
                f"the MTU to at least {self.config.max_data_frame - 14} or lower "
                "transport.mtu_payload",
            )
        return port

    def install_signal_handlers(self) -> None:
        """SIGTERM/SIGINT stop the loop (main thread only; may be called before open())."""
        for signum in (signal.SIGTERM, signal.SIGINT):
            self._old_handlers[signum] = signal.signal(signum, self._on_signal)

    def _on_signal(self, signum: int, frame: object) -> None:
        self.stopping = True
        self.stop_signal = signum

    def request_stop(self) -> None:
        """Stop the loop from another thread."""
        self.stopping = True
        if self._wake_w is not None:
            with contextlib.suppress(OSError):
                self._wake_w.send(b"\0")

    def close(self) -> None:
        """Flush the log, close ports and the control socket (removing its file)."""
        now = time.monotonic_ns()
        if self._events_file is not None:
            self.log.record(now, self.name, "nic_stop")
            self._drain_log()
        self.control.close()
        for port in self.ports.values():
            with contextlib.suppress(KeyError, ValueError):
                self.selector.unregister(port)
            port.close()
        self.ports.clear()
        for signum, handler in self._old_handlers.items():
            signal.signal(signum, handler)
        self._old_handlers.clear()
        if self._old_wakeup_fd is not None:
            signal.set_wakeup_fd(self._old_wakeup_fd)
            self._old_wakeup_fd = None
        for sock in (self._wake_r, self._wake_w):
            if sock is not None:
                sock.close()
        self._wake_r = self._wake_w = None
        if self._events_file is not None:
            self._events_file.close()
            self._events_file = None
        self.selector.close()

    # ------------------------------------------------------------------ the loop

    def run(self) -> None:
        """Serve until stopped (signal, ``shutdown`` or :meth:`request_stop`)."""
        select = self.selector.select
        readers = self._port_readers
        while not self.stopping:
            now = time.monotonic_ns()
            wake = self.next_housekeeping
            if self.deadline is not None and self.deadline < wake:
                wake = self.deadline
            if self.release_at is not None and self.release_at < wake:
                wake = self.release_at
            timeout = max(0, wake - now) / NS_PER_S if not self.jobs else 0.0
            port_ready = False
            for key, mask in select(timeout):
                if key.data in readers:
                    port_ready = True
                else:
                    key.data(mask)
            if port_ready:
                self._read_ports()
            now = time.monotonic_ns()
            if self.release_at is not None and now >= self.release_at:
                self.release_due(now)
            if self.deadline is not None and now >= self.deadline:
                self.core.handle_timer(now)
                self.service(now)
            if now >= self.next_housekeeping:
                self.housekeeping(now)
            if self.jobs:
                self._run_job()

    def _read_ports(self) -> None:
        """Frames from every port, one frame per port per round (so no plane's frames
        overtake another's in bulk), until a round finds every port empty (at most
        RX_ROUNDS rounds): acknowledgements that waited are read before any timer fires."""
        receive_frame = self.core.receive_frame
        clock = time.monotonic_ns
        port_up = self.port_up
        ports = list(self._port_readers.values())
        for _ in range(RX_ROUNDS):
            got = False
            for plane, port in ports:
                frame = port.receive()
                if frame is None:
                    continue
                got = True
                if not port_up[plane]:
                    self.counters["rx_port_down"] += 1  # cut cable: drained, never delivered
                    continue
                now = clock()
                receive_frame(frame, plane, now)
                self.service(now)
            if not got:
                return

    def service(self, now: int) -> None:
        """The driver step: flush frames to the ports, keep the deadline, handle events."""
        if self.release_at is not None and now >= self.release_at:
            self.release_due(now)  # held frames go first, also during long bursts of input
        self._now = now
        deadline, events = service(self.core, now, self._transmit)
        self.deadline = deadline
        if events:
            self._on_app_events(events, now)
        if self.log.records:
            self._drain_log()

    def transmit(self, plane: int, frame: bytes, now: int) -> None:
        """Put ``frame``, transmitted at ``now``, on plane ``plane``'s port: at once, or
        held for the port's link delay."""
        self._now = now
        self._transmit(plane, frame)

    def _transmit(self, plane: int, frame: bytes) -> None:
        port = self.ports.get(plane)
        if port is None or not self.port_up[plane]:
            self.counters["tx_port_down"] += 1
            return
        line = self.delay_lines.get(plane)
        if line is None:
            port.send(frame)
            return
        due = line.push(frame, self._now)
        self.counters["tx_delayed"] += 1
        if self.release_at is None or due < self.release_at:
            self.release_at = due

    def release_due(self, now: int) -> None:
        """Put on the wire every held frame whose delay has passed at ``now`` (per port,
        oldest first) and move :attr:`release_at` to the next one due."""
        release_at: int | None = None
        for plane, line in self.delay_lines.items():
            frames = line.pop_due(now)
            if frames:
                send = self.ports[plane].send
                for frame in frames:
                    send(frame)
            due = line.next_due()
            if due is not None and (release_at is None or due < release_at):
                release_at = due
        self.release_at = release_at

    def drop_held(self, plane: int) -> int:
        """A port went down: the frames it holds were on the cable and are lost."""
        line = self.delay_lines.get(plane)
        if line is None:
            return 0
        dropped = line.clear()
        self.counters["tx_held_dropped"] += dropped
        self.release_at = min(
            (due for due in (ln.next_due() for ln in self.delay_lines.values()) if due is not None),
            default=None,
        )
        return dropped

    def _on_wake(self, mask: int) -> None:
        assert self._wake_r is not None
        with contextlib.suppress(OSError):
            while self._wake_r.recv(4096):
                continue

    def housekeeping(self, now: int) -> None:
        self.next_housekeeping = now + HOUSEKEEPING_NS
        for transfer in self.running.values():
            transfer.sample(now)
            if now >= transfer.deadline_ns:
                self._miss_deadline(transfer, now)
        self._retire_idle_responders(now)
        while self.retiring and self.retiring[0][0] <= now:
            _, qpn = self.retiring.popleft()
            self._destroy(qpn)
        if self.log.records:
            self._drain_log()

    def _destroy(self, qpn: int) -> None:
        """Destroy a QP of this NIC's own sends and give back its budget reservation."""
        if qpn in self.core.connections:
            self.core.destroy_connection(qpn)
        self.budget.give(self.send_reserved.pop(qpn, 0))

    def _miss_deadline(self, transfer: SendTransfer, now: int) -> None:
        """The transfer's deadline passed: its unfinished connections fail, each naming
        the paths (EV states, probe answers) and ports it found down."""
        seconds = (transfer.deadline_ns - transfer.requested_ns) / NS_PER_S
        for part in transfer.parts:
            conn = part.conn
            if conn.state is QpState.READY and not conn.idle:
                conn.fail(
                    "deadline",
                    f"transfer {transfer.id} to {transfer.to} not done within its deadline of "
                    f"{seconds:g} s; {conn.path_report()}",
                    now,
                )

    # ------------------------------------------------------------------ events

    def _drain_log(self) -> None:
        records = self.log.records
        if not records:
            return
        for transfer in self.running.values():
            transfer.repaths.feed(records)
        handle = self._events_file
        if handle is not None:
            try:
                handle.write(records)
                self.counters["records_logged"] += len(records)
                self.counters["records_aggregated"] = handle.aggregated
                self.counters["event_log_rotations"] = handle.rotations
            except OSError as exc:
                # Say so once and keep the NIC running; the count shows what is missing.
                print(
                    f"nic-emu: {self.name}: cannot write the event log "
                    f"{self.config.events}: {exc.strerror}; event logging stopped",
                    file=sys.stderr,
                )
                self._events_file = None
                with contextlib.suppress(OSError):
                    handle.close()
        if self._events_file is None:
            self.counters["records_not_logged"] += len(records)
        records.clear()

    def _on_app_events(self, events: list[AppEvent], now: int) -> None:
        finished: set[int] = set()
        for event in events:
            if isinstance(event, WriteReceived):
                responder = self.responders.get(event.qpn)
                if responder is not None:
                    message = responder.message(event.t_ns)
                    if message is not None:
                        self.messages.append(message)
                continue
            transfer = self.transfer_of_qpn.get(event.qpn)
            if transfer is None:
                continue
            if isinstance(event, WriteCompleted):
                transfer.on_completed(event.qpn)
            elif isinstance(event, ConnectionFailed):
                transfer.on_failed(event.qpn, event.message)
            finished.add(transfer.id)
        for transfer_id in finished:
            transfer = self.transfers[transfer_id]
            if transfer.finish_if_over(now):
                self._drain_log()  # the last records still belong to this transfer
                transfer.repaths.close()
                del self.running[transfer.id]
                self._forget_old_transfers(transfer.id)
                for part in transfer.parts:
                    # Kept a while so that late acknowledgements are absorbed, not dropped.
                    self.retiring.append((now + SENDER_RETIRE_NS, part.conn.qpn))
                    self.transfer_of_qpn.pop(part.conn.qpn, None)
                report = transfer.report(now)
                self.log.record(
                    now,
                    self.name,
                    "transfer_failed" if transfer.failed else "transfer_done",
                    transfer=transfer.id,
                    to=transfer.to,
                    bytes=transfer.size,
                    bytes_acked=report["bytes_acked"],
                    elapsed_s=report["elapsed_s"],
                    goodput_gbps=report["goodput_gbps"],
                    failed=transfer.failed,
                )

    # ------------------------------------------------------------------ incoming QPs

    def _accept_qp(self, peer: str, qpn: int, now: int) -> Connection | None:
        """A packet from ``peer`` for a QPN we do not have: its out-of-band setup."""
        if qpn in self.retired_qpns:
            return None
        conn = self.core.create_connection(
            peer, qpn=qpn, peer_qpn=qpn, mode=QpnPlan.mode_of(qpn), now=now
        )
        self.responders[qpn] = ResponderQp(self.budget, conn, peer)
        self.log.record(now, self.name, "qp_accepted", qpn=qpn, peer=peer, mode=conn.mode.value)
        return conn

    def _retire_idle_responders(self, now: int) -> None:
        for qpn, responder in list(self.responders.items()):
            conn = responder.conn
            if responder.retired or responder.incomplete_bytes():
                continue
            heard = max(conn.rx.reverse.heard)
            if conn.state is QpState.READY and now - heard < RESPONDER_IDLE_RETIRE_NS:
                continue
            if qpn in self.core.connections:
                self.core.destroy_connection(qpn)
            responder.release()
            self.retired_qpns.add(qpn)
            del self.responders[qpn]  # its messages are in self.messages

    # ------------------------------------------------------------------ control ops

    def handle_request(self, request: dict[str, Any]) -> dict[str, Any]:
        op = request["op"]
        handler = self._ops.get(op)
        if handler is None:
            known = ", ".join(sorted(self._ops))
            raise RequestError(f"unknown op {op!r} (ops: {known})")
        now = time.monotonic_ns()
        result = handler(self, request, now)
        self.service(time.monotonic_ns())
        return result

    def op_status(self, request: dict[str, Any], now: int) -> dict[str, Any]:
        check_fields("status", request, {})
        return {
            "nic": self.name,
            "planes": {str(p): "up" if self.port_up[p] else "down" for p in self.port_numbers()},
            "connections": len(self.core.connections),
            "uptime_s": (now - self.started_ns) / NS_PER_S,
            "pid": os.getpid(),
            "topology": self.config.topology.name,
            "transfers": self.transfers_started,
            "ports": {str(p): port.description for p, port in self.ports.items()},
        }

    def port_numbers(self) -> range:
        return range(self.core.plane_count)

    def op_send(self, request: dict[str, Any], now: int) -> dict[str, Any]:
        args = check_fields("send", request, SEND_FIELDS)
        topology = self.config.topology
        try:
            to = topology.nic(args["to"]).name
        except TopologyError:
            raise RequestError(
                f"send: {args['to']!r} is not a NIC of topology {topology.name} "
                f"(nic0..nic{topology.nic_count - 1})"
            ) from None
        if to == self.name:
            raise RequestError(f"send: {to} cannot send to itself")
        size, count = args["bytes"], args["connections"]
        if not 1 <= count <= MAX_CONNECTIONS_PER_TRANSFER:
            raise RequestError(
                f"send: connections must be 1..{MAX_CONNECTIONS_PER_TRANSFER}, got {count}"
            )
        limit = min(MAX_TRANSFER_BYTES, count * MAX_REGION_BYTES)
        if not count <= size <= limit:
            raise RequestError(
                f"send: bytes must be {count}..{limit} for {count} connection(s) "
                f"(at most {MAX_REGION_BYTES} per connection), got {size}"
            )
        try:
            spec = parse_data_spec(args["data"])
        except DataSourceError as exc:
            raise RequestError(f"send: data: {exc}") from None
        reserve = count * self.connection_reservation()
        if not self.budget.can_take(reserve):
            raise RequestError(
                f"send: {count} connection(s) need {reserve} bytes of this NIC's memory "
                f"budget ({self.connection_reservation()} each: "
                f"{self.config.transport.receive_window_psns} unacknowledged packets x "
                f"{self.config.transport.mtu_payload} bytes + a {PIECE_BYTES}-byte data piece); "
                f"the budget is {self.budget.limit} bytes and {self.budget.used} are held by "
                f"{len(self.running)} running transfer(s) and out-of-order data: wait for "
                "them to finish, or use fewer connections"
            )
        deadline_s = args["deadline_s"]
        if not 0 < deadline_s <= 86_400:
            raise RequestError(f"send: deadline_s must be in (0, 86400] seconds, got {deadline_s}")
        modes = {m.value: m for m in TransportMode}
        if args["mode"] not in modes:
            raise RequestError(f"send: mode must be 'mrc' or 'roce', got {args['mode']!r}")
        mode = modes[args["mode"]]
        try:
            source = open_source(spec, size, args["seed"])
        except DataSourceError as exc:
            raise RequestError(f"send: data: {exc}") from None
        qpns = [self.qpns.qpn(self.nic_index, self.next_sequence + i, mode) for i in range(count)]
        self.next_sequence += count
        self.transfers_started += 1
        transfer = SendTransfer(
            id=self.transfers_started,
            nic=self.name,
            to=to,
            mode=mode,
            seed=args["seed"],
            size=size,
            mtu=self.config.transport.mtu_payload,
            planes=self.core.plane_count,
            requested_ns=now,
            data=str(spec),
            deadline_ns=now + int(deadline_s * NS_PER_S),
        )
        self.transfers[transfer.id] = transfer
        self.running[transfer.id] = transfer
        for qpn in qpns:
            self.budget.take(self.connection_reservation())
            self.send_reserved[qpn] = self.connection_reservation()
        # Digesting the data and opening the QPs takes a while for big transfers: it is
        # done a step at a time between frames, so no other traffic of this NIC waits.
        self.jobs.append((transfer, self._prepare(transfer, qpns, source), qpns))
        return {"transfer": transfer.id, "qpns": qpns, "deadline_s": deadline_s}

    def connection_reservation(self) -> int:
        """Budget bytes one sending connection reserves: its most unacknowledged payloads
        (the receive window's packets) and the data piece its reader holds."""
        transport = self.config.transport
        return transport.receive_window_psns * transport.mtu_payload + PIECE_BYTES

    def _prepare(
        self, transfer: SendTransfer, qpns: list[int], source: DataSource
    ) -> Iterator[None]:
        """Digest the data (a pass over the source, a step at a time, nothing kept), open
        the QPs, post one streamed WRITE per QP."""
        shares = split(transfer.size, len(qpns))
        if isinstance(source, RandomSource):
            source.mark([start for start, _ in shares])  # each share's reader starts at once
        total = hashlib.sha256()
        part_hashes = [hashlib.sha256() for _ in shares] if len(shares) > 1 else []
        offset = 0
        step = 0
        for piece in source.pieces(0, transfer.size):
            end = offset + len(piece)
            total.update(piece)
            view = memoryview(piece)
            for (start, length), hasher in zip(shares, part_hashes):
                lo, hi = max(start, offset), min(start + length, end)
                if lo < hi:
                    hasher.update(view[lo - offset : hi - offset])
            offset = end
            step += len(piece)
            if step >= DATA_STEP_BYTES:
                step = 0
                yield
        conns = []
        for qpn in qpns:
            conns.append(
                self.core.create_connection(
                    transfer.to,
                    qpn=qpn,
                    peer_qpn=qpn,
                    mode=transfer.mode,
                    now=time.monotonic_ns(),
                )
            )
            # No usable EV: keep probing until the transfer's deadline, not the core's.
            conns[-1].no_ev_timeout_ns = max(1, transfer.deadline_ns - time.monotonic_ns())
            yield
        digest = total.hexdigest()
        now = time.monotonic_ns()
        for i, (conn, (start, length)) in enumerate(zip(conns, shares)):
            part_digest = part_hashes[i].hexdigest() if part_hashes else digest
            transfer.parts.append(Part(conn, start, length, part_digest))
            transfer.repaths.watch(conn)
            self.transfer_of_qpn[conn.qpn] = transfer
            what = f"transfer {transfer.id} data ({transfer.data})"
            payload = StreamPayload(source.pieces(start, length), length, what)
            conn.post_write(payload, 0, conn.qpn, now)
        transfer.start(digest, now)
        self.log.record(
            now,
            self.name,
            "transfer_start",
            transfer=transfer.id,
            to=transfer.to,
            bytes=transfer.size,
            connections=len(qpns),
            mode=transfer.mode.value,
            data=transfer.data,
            qpns=qpns,
            sha256=digest,
        )

    def _run_job(self) -> None:
        """One step of the oldest preparation; a finished or failed one leaves the queue."""
        transfer, job, qpns = self.jobs[0]
        try:
            next(job)
        except StopIteration:
            self._finish_job()  # the preparation is complete
        except NicEmuError as exc:
            now = time.monotonic_ns()
            transfer.fail_setup(f"cannot set the transfer up: {exc}", now)
            self.running.pop(transfer.id, None)
            self._forget_old_transfers(transfer.id)
            for qpn in qpns:  # those opened, and the budget reserved for each
                self._destroy(qpn)
            self.log.record(
                now, self.name, "transfer_failed", transfer=transfer.id, failed=transfer.error
            )
            self._finish_job()

    def _forget_old_transfers(self, finished_id: int) -> None:
        """Keeps the reports of the latest finished transfers only: a NIC that runs for
        days must not grow with every transfer it ever made (benchmarks/soak.py)."""
        self.finished_ids.append(finished_id)
        while len(self.finished_ids) > FINISHED_TRANSFERS_KEPT:
            self.transfers.pop(self.finished_ids.popleft(), None)

    def _finish_job(self) -> None:
        self.jobs.popleft()
        self.service(time.monotonic_ns())

    def op_transfer(self, request: dict[str, Any], now: int) -> dict[str, Any]:
        args = check_fields("transfer", request, TRANSFER_FIELDS)
        transfer = self.transfers.get(args["id"])
        if transfer is None:
            wanted = args["id"]
            if isinstance(wanted, int) and 1 <= wanted <= self.transfers_started:
                raise RequestError(
                    f"transfer: transfer {wanted} on {self.name} finished and was forgotten "
                    f"(only the latest {FINISHED_TRANSFERS_KEPT} finished transfers are kept)"
                )
            have = f"1..{self.transfers_started}" if self.transfers_started else "none yet"
            raise RequestError(f"transfer: no transfer {wanted} on {self.name} ({have})")
        return {"id": transfer.id, **transfer.report(now)}

    def op_received(self, request: dict[str, Any], now: int) -> dict[str, Any]:
        check_fields("received", request, {})
        messages = [m.as_dict() for m in self.messages]
        for qpn, responder in sorted(self.responders.items()):
            pending = responder.incomplete_bytes()
            if pending:
                messages.append(
                    {
                        "from": responder.source,
                        "qpn": qpn,
                        "bytes": pending,
                        "sha256": None,
                        "complete": False,
                    }
                )
        return {"messages": messages}

    def op_port(self, request: dict[str, Any], now: int) -> dict[str, Any]:
        args = check_fields("port", request, PORT_FIELDS)
        plane, up = args["plane"], args["up"]
        if plane not in self.ports:
            if 0 <= plane < self.core.plane_count:
                raise RequestError(f"port: plane {plane} has no port on {self.name}")
            raise RequestError(
                f"port: plane {plane} is out of range (planes 0..{self.core.plane_count - 1})"
            )
        self.port_up[plane] = up
        if not up:
            self.drop_held(plane)
        self.core.set_port_state(plane, up, now)
        return {"plane": plane, "up": up}

    def op_stats(self, request: dict[str, Any], now: int) -> dict[str, Any]:
        check_fields("stats", request, {})
        snapshot = self.core.snapshot()
        planes = {}
        for p in self.port_numbers():
            port = self.ports.get(p)
            planes[str(p)] = {
                "up": self.port_up[p],
                "port": port.description if port is not None else None,
                "driver": dict(port.counters) if port is not None else {},
                "frames_tx": self.core.plane_tx[p],
                "frames_rx": self.core.plane_rx[p],
                "delay_us": self.delay_lines[p].delay_ns / 1000 if p in self.delay_lines else 0.0,
                "frames_held": len(self.delay_lines[p]) if p in self.delay_lines else 0,
            }
        return {
            "nic": self.name,
            "planes": planes,
            "core": snapshot,
            "evs": {str(qpn): c.ev_counters() for qpn, c in self.core.connections.items()},
            "process": {
                **self.counters,
                "control_requests": self.control.requests,
                "control_errors": self.control.errors,
                "memory_budget_bytes": self.budget.limit,
                "memory_held_bytes": self.budget.used,
                "send_reserved_bytes": sum(self.send_reserved.values()),
                "received_bytes_held": sum(r.sink.held_bytes for r in self.responders.values()),
                "received_bytes_peak": max(
                    (r.sink.peak_held_bytes for r in self.responders.values()), default=0
                ),
                "memory_refusals": self.budget.refused,
            },
        }

    def op_shutdown(self, request: dict[str, Any], now: int) -> dict[str, Any]:
        check_fields("shutdown", request, {})
        self.stopping = True
        return {}

    _ops: dict[str, Callable[[NicProcess, dict[str, Any], int], dict[str, Any]]] = {
        "status": op_status,
        "send": op_send,
        "transfer": op_transfer,
        "received": op_received,
        "port": op_port,
        "stats": op_stats,
        "shutdown": op_shutdown,
    }


def fix_mmap_threshold() -> bool:
    """Fix the C allocator's mmap threshold at :data:`MMAP_THRESHOLD_BYTES` (glibc's
    ``mallopt``); False where the C library has no such setting (nothing changes)."""
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    return bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES))


def serve(config: ServeConfig, *, handle_signals: bool = True) -> int | None:
    """Open, serve until stopped, close (the socket file is removed on every exit path).
    Returns the signal that stopped the NIC (SIGTERM, SIGINT), None for ``shutdown``."""
    fix_mmap_threshold()
    process = NicProcess(config)
    if handle_signals:
        process.install_signal_handlers()
    process.open()
    try:
        process.run()
    finally:
        process.close()
    return process.stop_signal
