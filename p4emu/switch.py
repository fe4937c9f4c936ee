"""In-process v1model switch: the BMv2 ``simple_switch`` pipeline around a compiled program.

Packet flow (``targets/simple_switch/simple_switch.cpp``)::

    inject(port, frame) -> Parser -> VerifyChecksum -> Ingress
        -> I2E clones, digest, resubmit, multicast, drop (egress_spec == drop port)
        -> traffic manager (per port / priority FIFO, depth, rate, tail drop)
        -> Egress -> E2E clones, drop -> ComputeChecksum -> Deparser
        -> recirculate, truncate -> output(port, frame)

``standard_metadata`` as BMv2 sets it: all fields 0 for a new packet except
``ingress_port``, ``packet_length`` and ``ingress_global_timestamp`` (µs since the switch
started); ``parser_error``/``checksum_error`` after parsing; at egress ``egress_port``,
``egress_spec`` reset to ``(drop_port + 1) & 0x1FF``, ``packet_length`` (ingress length
plus/minus headers added/removed by ``setValid``/``setInvalid`` in ingress), the queueing
fields (``enq_timestamp``, ``enq_qdepth``, ``deq_timedelta``, ``deq_qdepth``) and
``egress_global_timestamp``. Copies (clones, resubmitted and recirculated packets) start
with all metadata reset, except ``instance_type`` and the fields of the preserved field
list, exactly like BMv2 (``copy_field_list_and_set_type``). ``instance_type`` values:
NORMAL 0, INGRESS_CLONE 1, EGRESS_CLONE 2, RECIRC 4, REPLICATION 5, RESUBMIT 6.

Time: with a :class:`~p4emu.runtime.clock.VirtualClock` nothing moves until
:meth:`Switch.advance`; departures from rate-limited queues happen at their exact
times, so ``enq_qdepth``/``deq_timedelta`` show real queue build-up. With the default
real clock, :meth:`Switch.run_until_idle` sleeps until pending departures are due.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import cython

from p4emu.backend.native import build_in_background
from p4emu.backend.program import CompiledProgram, compile_program
from p4emu.backend.pytypes import standard_metadata_problem
from p4emu.backend.rt import Blocks, ExitSignal, PacketContext, StandardMetadata
from p4emu.exceptions import SwitchError
from p4emu.frontend import load_program
from p4emu.frontend.ast import CheckedProgram
from p4emu.runtime.clock import NS_PER_US, Clock, RealClock, VirtualClock, read_us
from p4emu.runtime.externs import DigestQueue, RandomSource
from p4emu.runtime.objects import ProgramObjects
from p4emu.runtime.pre import ReplicationEngine
from p4emu.runtime.traffic_manager import (
    DropReason,
    QueuedPacket,
    RateScope,
    RateUnit,
    TrafficManager,
)

log = logging.getLogger("p4emu.switch")

PKT_INSTANCE_TYPE_NORMAL = 0
PKT_INSTANCE_TYPE_INGRESS_CLONE = 1
PKT_INSTANCE_TYPE_EGRESS_CLONE = 2
PKT_INSTANCE_TYPE_COALESCED = 3
PKT_INSTANCE_TYPE_RECIRC = 4
PKT_INSTANCE_TYPE_REPLICATION = 5
PKT_INSTANCE_TYPE_RESUBMIT = 6

MAX_PORT = 511
# C copies on the compiled path (egress sets the queueing fields in C; Cython keeps a
# literal beyond 32 bits a Python object, so a mask written inline would not be C)
_NS_PER_US = NS_PER_US
_MASK32 = 0xFFFFFFFF
_MASK48 = 0xFFFFFFFFFFFF
_NORMAL = PKT_INSTANCE_TYPE_NORMAL

#: drop reasons counted in :attr:`Switch.drops` (keyed ``(port, reason)``)
DROP_INGRESS = "ingress_drop"  # egress_spec == drop port at the end of ingress
DROP_EGRESS = "egress_drop"  # egress_spec == drop port at the end of egress
DROP_QUEUE_FULL = "queue_full"
DROP_PRIORITY = "priority_out_of_range"
DROP_PORT_DOWN_RX = "port_down_rx"
DROP_PORT_DOWN_TX = "port_down_tx"
DROP_NO_REPLICA = "multicast_no_replica"  # mcast_grp set but the group has no replica
DROP_ADMISSION = "ingress_buffer"  # refused by the admission hook (buffer full)

OutputCallback = Callable[[int, bytes], None]
#: (ingress port, egress port, priority, length) -> admit? (before the traffic manager)
AdmissionCallback = Callable[[int, int, int, int], bool]
#: (ingress port, priority, length): a packet admitted by the hook left the queues
ReleaseCallback = Callable[[int, int, int], None]
PacketInCallback = Callable[[bytes, dict[str, int]], None]


class PortOutput:
    """Where a switch sends the frames it transmits, called through C on the compiled
    path (:attr:`Switch.output_sink`; an extension type there, whose ``output`` a
    subclass overrides: a subclass compiled against ``p4emu/switch.pxd`` is called
    through its C vtable, a Python subclass through Python, as any ``cpdef`` method).
    The base sends nowhere: it refuses."""

    __slots__ = ()

    def output(self, port: int, frame: bytes) -> None:
        """Transmit ``frame`` on ``port``."""
        raise NotImplementedError(f"{type(self).__name__} must override PortOutput.output")


class Switch:
    """A software v1model switch running one P4 program (see the module docs).

    ``program``: a path to a P4 source, or an already checked program. Options mirror
    ``simple_switch``: ``drop_port`` (511), ``priority_queues`` (``--priority-queues``),
    ``queue_depth`` (packets per queue, 64), ``queue_rate_pps`` (None: unlimited),
    ``cpu_port`` (``--cpu-port``). ``queue_rate_scope``: :attr:`RateScope.queue` (BMv2:
    every priority queue has its own shaper) or :attr:`RateScope.port` (one shaper per
    port, strict priority between its queues). ``seed`` seeds ``random()``.
    ``no_match_error`` and ``trace`` are passed to :func:`p4emu.backend.compile_program`
    (``trace=True`` also reports pipeline events, see :func:`format_trace`).

    Not thread-safe: one thread (or a lock held by the caller) drives a switch.
    """

    def __init__(
        self,
        program: str | Path | CheckedProgram,
        *,
        clock: Clock | None = None,
        cpu_port: int | None = None,
        drop_port: int = 511,
        priority_queues: int = 1,
        queue_depth: int = 64,
        queue_rate_pps: float | None = None,
        queue_rate_scope: RateScope = RateScope.queue,
        seed: int = 0,
        include_dirs: tuple[str | Path, ...] = (),
        defines: dict[str, str] | None = None,
        no_match_error: bool = False,
        trace: bool = False,
    ) -> None:
        if not 0 <= drop_port <= MAX_PORT:
            raise SwitchError(f"drop port {drop_port} out of range [0, {MAX_PORT}]")
        if cpu_port is not None and not 0 <= cpu_port <= MAX_PORT:
            raise SwitchError(f"CPU port {cpu_port} out of range [0, {MAX_PORT}]")
        if cpu_port is not None and cpu_port == drop_port:
            raise SwitchError(f"CPU port and drop port are both {cpu_port}")
        checked = (
            program
            if isinstance(program, CheckedProgram)
            else load_program(program, include_dirs, defines)
        )
        params = checked.parser.decl.params
        if len(params) > 3:  # (the generator refuses a parser without it)
            problem = standard_metadata_problem(params[3].type)
            if problem is not None:  # BMv2 needs v1model's fields, and so do the paths below
                raise SwitchError(f"the standard metadata is not v1model's: {problem}")
        self.clock: Clock = clock or RealClock()
        # C integers on the compiled path (read per packet): drop_port and cpu_port (the
        # properties) read them; no CPU port is -1
        self._drop_port = drop_port
        self._cpu_port = -1 if cpu_port is None else cpu_port
        self.pre = ReplicationEngine()
        self.digest_queue = DigestQueue(self.clock)
        self.random = RandomSource(seed)
        self.program: CompiledProgram = compile_program(
            checked,
            clock=self.clock,
            pre=self.pre,
            digest_queue=self.digest_queue,
            random=self.random,
            drop_port=drop_port,
            no_match_error=no_match_error,
            trace=trace,
        )
        self.objects: ProgramObjects = self.program.objects
        self.tm = TrafficManager(
            self.clock,
            priority_queues=priority_queues,
            default_depth=queue_depth,
            rate_scope=queue_rate_scope,
        )
        if queue_rate_pps:
            self.tm.set_all_queue_rates(queue_rate_pps, RateUnit.packets_per_second)
        # resubmitted and recirculated packets, first in first out (a list: compiled, its
        # emptiness a C size test on every packet; it holds a packet or two at most)
        self._hi: list[tuple[int, bytes, int, Any, Any]] = []
        self._outputs: list[tuple[int, bytes]] = []
        self.output_callback: OutputCallback | None = None
        # a PortOutput, called through C on the compiled path; when set, it is called
        # instead of output_callback (both None: frames wait in collect())
        self.output_sink: PortOutput | None = None
        # Buffer accounting by ingress port (a fabric's PFC, docs/p4emu-runtime.md): asked
        # before every enqueue, told when an admitted packet leaves the traffic manager.
        self.admission_callback: AdmissionCallback | None = None
        self.release_callback: ReleaseCallback | None = None
        self.packet_in_callback: PacketInCallback | None = None
        self.log_callback: Callable[[str], None] | None = None
        self.trace_callback: Callable[[str, Any, Any, Any], None] | None = None
        self.program.hooks.log_sink = self._log_msg
        self.program.hooks.trace_sink = self._trace
        self._trace_enabled = trace
        self._down: set[int] = set()
        self.drops: dict[tuple[int, str], int] = {}
        self.packets_in = 0
        self.packets_out = 0
        # the program's blocks: methods of one object, called through C when compiled
        self._blocks: Blocks = self.program.blocks
        # checksum blocks that do nothing are not called
        self._verify = self.program.has_verify_checksum
        self._compute = self.program.has_compute_checksum
        self._egress_spec = (drop_port + 1) & 0x1FF  # egress_spec as egress starts
        # the packet contexts of transmitted packets with their (hdr, meta, sm), reset and
        # reused by the next ingress: resetting in place is cheaper than allocating every
        # header object again
        self._spare: list[PacketContext] = []
        # the spares are _spare[:_spare_count]; the list never shrinks (a list popped to
        # empty and appended again frees and allocates its storage each time), a slot past
        # the count may still name a context in use: it is overwritten before it is taken
        self._spare_count = 0

    # ------------------------------------------------------------------ properties

    @property
    def drop_port(self) -> int:
        """The drop port (``drop_port``): a packet whose egress_spec is this one is dropped."""
        return self._drop_port

    @property
    def cpu_port(self) -> int | None:
        """The CPU port (``cpu_port``; None: none)."""
        return None if self._cpu_port < 0 else self._cpu_port

    @property
    def p4info(self) -> Any:
        """The program's ``p4.config.v1.P4Info`` (None if P4Runtime cannot describe it)."""
        return self.objects.p4info

    # ------------------------------------------------------------------ packet I/O

    def inject(self, port: int, data: bytes) -> int | None:
        """Receive ``data`` on ``port``: run ingress now, then everything that is due.
        Returns :meth:`next_departure_ns` (a driver's next wake-up)."""
        due = self.inject_c(port, data)
        return None if due < 0 else due

    def inject_c(self, port: int, data: bytes) -> int:
        """:meth:`inject`, returning -1 where it returns None: a C integer on the compiled
        path, so a compiled caller boxes no int per packet."""
        # MAX_PORT written out: compiled, compared in C with a small int (the module's
        # name was looked up and compared as an object per packet)
        if not 0 <= port <= 511:
            raise SwitchError(f"ingress port {port} out of range [0, {MAX_PORT}]")
        if self._down and port in self._down:  # compiled: an empty set is a C size test
            self._drop(port, DROP_PORT_DOWN_RX)
            return self.tm.next_departure_c()
        self.packets_in += 1
        if type(data) is not bytes:  # a frame already bytes is kept (bytes() would return it)
            data = bytes(data)
        self._ingress(port, data, _NORMAL, None, None)  # compiled: a C constant
        if self._hi:
            self._run_hi()
        self._drain()
        return self.tm.next_departure_c()

    def packet_out(self, payload: bytes, metadata: dict[str, int] | None = None) -> None:
        """P4Runtime PacketOut: prepend the ``packet_out`` header, inject on the CPU port."""
        if self.cpu_port is None:
            raise SwitchError("packet_out needs a CPU port (Switch(cpu_port=...))")
        header = self.objects.controller_headers.get("packet_out")
        if header is None:
            if metadata:
                raise SwitchError('the program has no @controller_header("packet_out") header')
            frame = bytes(payload)
        else:
            frame = header.encode(metadata or {}) + bytes(payload)
        self.inject(self.cpu_port, frame)

    def collect(self, port: int | None = None) -> list[tuple[int, bytes]]:
        """Frames transmitted so far (and not collected yet), optionally for one port."""
        if port is None:
            out, self._outputs = self._outputs, []
            return out
        out = [item for item in self._outputs if item[0] == port]
        self._outputs = [item for item in self._outputs if item[0] != port]
        return out

    def poll(self) -> int | None:
        """Process everything due now (departures, resubmits, recirculations) without
        waiting; a real-time driver calls it when :meth:`next_departure_ns` is reached.
        Returns :meth:`next_departure_ns`."""
        due = self.poll_c()
        return None if due < 0 else due

    def poll_c(self) -> int:
        """:meth:`poll`, returning -1 where it returns None (a C integer when compiled)."""
        if self._hi:
            self._run_hi()
        self._drain()
        return self.tm.next_departure_c()

    def next_departure_ns(self) -> int | None:
        """Clock time (ns) of the next queued departure, None when every queue is empty."""
        return self.tm.next_departure_ns()

    def run_until_idle(self, max_wait_s: float = 60.0) -> None:
        """Process until no packet is waiting anywhere (sleeping on a real clock, jumping
        a virtual clock to each departure)."""
        deadline = time.monotonic() + max_wait_s
        while True:
            self._run_hi()
            self._drain()
            due = self.tm.next_departure_ns()
            if due is None and not self._hi:
                return
            if due is None:
                continue
            now = self.clock.now_ns()
            if due > now:
                if isinstance(self.clock, VirtualClock):
                    self.clock.set_ns(due)
                else:
                    if time.monotonic() > deadline:
                        raise SwitchError("run_until_idle: packets still queued after max_wait_s")
                    time.sleep((due - now) / 1e9)

    def advance(self, us: float) -> None:
        """Move a virtual clock forward by ``us`` µs, processing departures on the way."""
        if not isinstance(self.clock, VirtualClock):
            raise SwitchError("advance() needs a VirtualClock (Switch(clock=VirtualClock()))")
        target = self.clock.now_ns() + round(us * NS_PER_US)
        while True:
            self._run_hi()
            self._drain()
            due = self.tm.next_departure_ns()
            if due is None or due > target:
                break
            if due > self.clock.now_ns():
                self.clock.set_ns(due)
        if target > self.clock.now_ns():
            self.clock.set_ns(target)
        self._run_hi()
        self._drain()

    # ------------------------------------------------------------------ ports

    def set_port_up(self, port: int, up: bool) -> None:
        """A down port drops frames received on it and frames sent to it (counted)."""
        if not 0 <= port <= MAX_PORT:
            raise SwitchError(f"port {port} out of range [0, {MAX_PORT}]")
        if up:
            self._down.discard(port)
        else:
            self._down.add(port)

    def is_port_up(self, port: int) -> bool:
        return port not in self._down

    # ------------------------------------------------------------------ queues

    def set_queue_depth(
        self, depth: int, port: int | None = None, priority: int | None = None
    ) -> None:
        """``set_queue_depth`` of simple_switch_CLI (all ports, one port, or one queue)."""
        if port is None:
            self.tm.set_all_queue_depths(depth)
        else:
            self.tm.set_queue_depth(port, depth, priority)

    def set_queue_rate(
        self,
        rate: float | None,
        port: int | None = None,
        priority: int | None = None,
        unit: RateUnit = RateUnit.packets_per_second,
    ) -> None:
        """``set_queue_rate`` (packets/s by default; None or 0: unlimited)."""
        if port is None:
            self.tm.set_all_queue_rates(rate, unit)
        else:
            self.tm.set_queue_rate(port, rate, unit, priority)

    def set_paused(self, port: int, priority: int, paused: bool) -> int | None:
        """Stop or resume serving queue ``priority`` of ``port`` (an 802.1Qbb pause
        received on it; needs ``queue_rate_scope=RateScope.port``). Returns
        :meth:`next_departure_ns` (a driver's next wake-up)."""
        if not 0 <= port <= MAX_PORT:
            raise SwitchError(f"port {port} out of range [0, {MAX_PORT}]")
        self.tm.set_paused(port, priority, paused)
        if not paused:
            self._drain()
        return self.tm.next_departure_ns()

    # ------------------------------------------------------------------ statistics

    def dropped(self, port: int | None = None, reason: str | None = None) -> int:
        return sum(
            count
            for (p, r), count in self.drops.items()
            if (port is None or p == port) and (reason is None or r == reason)
        )

    # ------------------------------------------------------------------ pipeline

    def _ingress(
        self,
        port: int,
        data: bytes,
        instance_type: int,
        preserved: Any,
        copier: Any,
    ) -> None:
        prog = self.program
        length = len(data)
        if self._spare_count:
            self._spare_count -= 1
            # only contexts are kept there (compiled: no type test)
            ctx = cython.cast(PacketContext, self._spare[self._spare_count])
            hdr, meta = ctx.hdr, ctx.meta
            # a context's sm is its program's standard metadata, which the switch and the
            # program's code set: compiled, no type test (a generated subclass's walked
            # its MRO per packet); pure, that class is no StandardMetadata to cast to
            if cython.compiled:
                sm = cython.cast(StandardMetadata, ctx.sm)
            else:
                sm = ctx.sm
            self._blocks.init_packet(hdr, meta, sm)
            ctx.renew(length)
        else:
            hdr = prog.new_headers()
            meta = prog.new_metadata()
            sm = prog.new_standard_metadata()
            ctx = PacketContext(length, b"", hdr, meta, sm)
        sm.packet_length = length
        if instance_type == _NORMAL:  # standard metadata all 0 but these
            sm.ingress_port = port
            now_us = read_us(self.clock)
            # a C constant: Cython keeps a literal past 32 bits a Python object
            sm.ingress_global_timestamp = now_us & _MASK48
        else:
            sm.instance_type = instance_type
            if copier is not None and preserved is not None:
                copier(preserved, meta)
        if self._trace_enabled:
            self._trace("ingress", port, instance_type, data)
        # the parser sets sm.parser_error itself (0 when none) and returns the offset
        offset = self._blocks.parse_block(data, hdr, meta, sm, ctx)
        ctx.set_payload(data, offset)  # not copied: the deparser copies it once
        if self._verify:
            self._blocks.verify_block(hdr, meta, ctx)
            sm.checksum_error = ctx.checksum_error
        self._blocks.ingress_block(hdr, meta, sm, ctx)

        # INGRESS CLONING
        session = ctx.clone_session
        if session is not None:
            clone_copier = ctx.clone_copier
            ctx.clone_session = None
            ctx.clone_copier = None
            replicas, truncate = self.pre.clone(session & 0xFFFF)
            if replicas:
                c_hdr = prog.new_headers()
                c_meta = prog.new_metadata()
                c_sm = prog.new_standard_metadata()
                c_ctx = PacketContext(length)
                c_sm.ingress_port = port  # the parser may branch on it (BMv2 sets it too)
                c_ctx.set_payload(data, prog.parse(data, c_hdr, c_meta, c_sm, c_ctx))
                # copy_field_list_and_set_type: metadata reset, field list copied
                c_meta = prog.new_metadata()
                c_sm = prog.new_standard_metadata()
                if clone_copier is not None:
                    clone_copier(meta, c_meta)
                c_sm.instance_type = PKT_INSTANCE_TYPE_INGRESS_CLONE
                c_ctx.length_reg = length
                if truncate:
                    c_ctx.truncate = truncate
                c_ctx.hdr, c_ctx.meta, c_ctx.sm = c_hdr, c_meta, c_sm
                self._replicate(c_ctx, replicas, port)

        # LEARNING
        if ctx.digest is not None:
            digest_id, sample = ctx.digest
            ctx.digest = None
            self.digest_queue.push(digest_id, sample)

        # RESUBMIT
        if ctx.resubmit is not None:
            resubmit_copier = ctx.resubmit
            ctx.resubmit = None
            self._hi.append((port, data, PKT_INSTANCE_TYPE_RESUBMIT, meta, resubmit_copier))
            return

        # MULTICAST
        mgid = sm.mcast_grp
        if mgid:
            sm.instance_type = PKT_INSTANCE_TYPE_REPLICATION
            replicas = self.pre.replicate(mgid)
            if not replicas:
                self._drop(port, DROP_NO_REPLICA)
            self._replicate(ctx, replicas, port)
            return
        egress_port = sm.egress_spec
        if egress_port == self._drop_port:
            self._drop(port, DROP_INGRESS)
            if self._trace_enabled:
                self._trace("drop", port, DROP_INGRESS, None)
            return
        sm.instance_type = _NORMAL
        self._enqueue(egress_port, ctx)

    def _replicate(self, packet: PacketContext, replicas: Any, port: int) -> None:
        """Copies of ``packet`` (PHV copied), one per replica, ``egress_rid`` = instance."""
        prog = self.program
        for replica in replicas:
            copy = _copy_ctx(packet)
            copy.hdr = prog.copy_headers(packet.hdr)
            copy.meta = prog.copy_metadata(packet.meta)
            sm = prog.copy_standard_metadata(packet.sm)
            sm.egress_rid = replica.instance
            copy.sm = sm
            self._enqueue(replica.egress_port, copy)

    def _enqueue(self, port: int, packet: PacketContext) -> None:
        """Hand ``packet`` to the traffic manager. A packet the program truncated is
        charged its truncated length: it is cut when it leaves, and only those bytes
        occupy a bits/s shaper (packets/s shaping, BMv2's, does not look at lengths)."""
        length = packet.length_reg
        truncate = packet.truncate
        if truncate is not None and truncate < length:
            length = truncate
        if cython.compiled:  # no type test (see _ingress)
            sm = cython.cast(StandardMetadata, packet.sm)
        else:
            sm = packet.sm
        priority = sm.priority
        admit = self.admission_callback
        if admit is not None and not admit(sm.ingress_port, port, priority, length):
            self._drop(port, DROP_ADMISSION)
            return
        reason = self.tm.enqueue_c(port, packet, length, priority)  # compiled: C integers
        if reason is not None and admit is not None and self.release_callback is not None:
            self.release_callback(sm.ingress_port, priority, length)
        if reason is None:
            if self._trace_enabled:
                self._trace("enqueue", port, priority, None)
        elif reason is DropReason.queue_full:
            self._drop(port, DROP_QUEUE_FULL)
        elif reason is DropReason.priority_out_of_range:
            self._drop(port, DROP_PRIORITY)

    @cython.boundscheck(False)  # indexes below len(ready), a list nothing else changes
    @cython.wraparound(False)
    def _drain(self) -> None:
        tm = self.tm
        while True:
            ready = tm.take_ready()
            if ready is None:
                return
            for index in range(len(ready)):
                # the traffic manager's packets only (compiled: no type test per packet)
                queued = cython.cast(QueuedPacket, ready[index])
                self._egress(queued)
                tm.release(queued)  # egress is done with it
            tm.recycle(ready)  # the next take's list (no list made per take)
            if self._hi:
                self._run_hi()

    def _run_hi(self) -> None:
        hi = self._hi
        while hi:
            port, data, instance_type, preserved, copier = hi.pop(0)
            self._ingress(port, data, instance_type, preserved, copier)

    def _egress(self, queued: QueuedPacket) -> None:
        # _enqueue queues contexts only (compiled: no type test)
        ctx = cython.cast(PacketContext, queued.item)
        hdr, meta = ctx.hdr, ctx.meta
        if cython.compiled:  # no type test (see _ingress)
            sm = cython.cast(StandardMetadata, ctx.sm)
        else:
            sm = ctx.sm
        if self.release_callback is not None:
            self.release_callback(sm.ingress_port, queued.priority, queued.length)
        port = queued.port
        port_c = port  # compiled: the port as a C integer, converted once
        sm.egress_global_timestamp = (queued.deq_ns // _NS_PER_US) & _MASK48
        sm.enq_timestamp = queued.enq_timestamp & _MASK32
        sm.enq_qdepth = queued.enq_qdepth & 0x7FFFF
        sm.deq_timedelta = queued.deq_timedelta & _MASK32
        sm.deq_qdepth = queued.deq_qdepth & 0x7FFFF
        sm.egress_port = port_c
        sm.egress_spec = self._egress_spec
        sm.packet_length = ctx.length_reg & _MASK32
        if self._trace_enabled:
            self._trace("egress", port, sm.instance_type, None)
        self._blocks.egress_block(hdr, meta, sm, ctx)

        # EGRESS CLONING
        session = ctx.clone_session
        if session is not None:
            clone_copier = ctx.clone_copier
            ctx.clone_session = None
            ctx.clone_copier = None
            replicas, truncate = self.pre.clone(session & 0xFFFF)
            if replicas:
                prog = self.program
                c_meta = prog.new_metadata()
                c_sm = prog.new_standard_metadata()
                if clone_copier is not None:
                    clone_copier(meta, c_meta)
                c_sm.instance_type = PKT_INSTANCE_TYPE_EGRESS_CLONE
                c_ctx = PacketContext(ctx.ingress_length, b"", prog.copy_headers(hdr), c_meta, c_sm)
                c_ctx.set_payload(ctx.packet, ctx.payload_at)
                c_ctx.length_reg = ctx.length_reg
                if truncate:
                    c_ctx.truncate = truncate
                self._replicate(c_ctx, replicas, port)

        if sm.egress_spec == self._drop_port:
            self._drop(port, DROP_EGRESS)
            if self._trace_enabled:
                self._trace("drop", port, DROP_EGRESS, None)
            return
        if self._compute:
            self._blocks.compute_block(hdr, meta, ctx)
        frame = self._blocks.deparse_block(hdr, ctx)  # the emitted headers and the payload

        # RECIRCULATE
        if ctx.recirculate is not None:
            recirc_copier = ctx.recirculate
            ctx.recirculate = None
            self._hi.append((0, frame, PKT_INSTANCE_TYPE_RECIRC, meta, recirc_copier))
            return
        truncate = ctx.truncate
        if truncate is not None and truncate < len(frame):
            frame = frame[:truncate]
        # nothing refers to it (nor its hdr, meta, sm) any more: a spare
        spare = self._spare
        if self._spare_count < len(spare):
            spare[self._spare_count] = ctx
        else:
            spare.append(ctx)
        self._spare_count += 1

        # TRANSMIT
        if self._down and port in self._down:
            self._drop(port, DROP_PORT_DOWN_TX)
            return
        self.packets_out += 1
        if self._trace_enabled:
            self._trace("transmit", port, len(frame), frame)
        if port_c == self._cpu_port and self.packet_in_callback is not None:
            self._packet_in(port, frame)
        elif self.output_sink is not None:
            self.output_sink.output(port, frame)
        elif self.output_callback is not None:
            self.output_callback(port, frame)
        else:
            self._outputs.append((port, frame))

    def _packet_in(self, port: int, frame: bytes) -> None:
        """A frame sent to the CPU port, to the packet_in callback (header decoded)."""
        header = self.objects.controller_headers.get("packet_in")
        if header is None:
            self.packet_in_callback(frame, {})  # type: ignore[misc]
            return
        try:
            metadata, payload = header.decode(frame)
        except Exception as error:
            log.error("frame to the CPU port cannot be decoded: %s", error)
            self._drop(port, "packet_in_malformed")
            return
        self.packet_in_callback(payload, metadata)  # type: ignore[misc]

    def _drop(self, port: int, reason: str) -> None:
        key = (port, reason)
        self.drops[key] = self.drops.get(key, 0) + 1

    # ------------------------------------------------------------------ hooks

    def _log_msg(self, text: str) -> None:
        if self.log_callback is not None:
            self.log_callback(text)
        else:
            log.info("%s", text)

    def _trace(self, kind: str, name: Any, a: Any, b: Any) -> None:
        if self.trace_callback is not None:
            self.trace_callback(kind, name, a, b)
        elif log.isEnabledFor(logging.DEBUG):
            log.debug("%s", format_trace(kind, name, a, b, self.objects))


def format_trace(
    kind: str, name: Any, a: Any, b: Any, objects: ProgramObjects | None = None
) -> str:
    """One line of text for a trace event, in the spirit of BMv2's ``--log-console``.

    Events: ``ingress`` (port, instance type, frame), ``state`` (parser state, offset),
    ``extract`` (header type, offset after, header), ``table`` (name, key, entry or
    default action), ``checksum_error``, ``drop`` (port, reason), ``enqueue`` (port,
    priority), ``egress`` (port, instance type), ``transmit`` (port, length, frame).
    """
    if kind == "ingress":
        return f"Processing packet received on port {name} (instance type {a}, {len(b)} bytes)"
    if kind == "state":
        return f"Parser entering state '{name}' at byte {a}"
    if kind == "extract":
        return f"Extracted header {name}: {b!r}"
    if kind == "table":
        action = getattr(b, "action_id", None)
        action_name = action
        if objects is not None and action in objects.names_by_id:
            action_name = objects.names_by_id[action]
        outcome = "hit" if getattr(b, "hit", False) else "miss"
        return (
            f"Table '{name}': key {a!r}, {outcome}, action {action_name} {getattr(b, 'args', ())!r}"
        )
    if kind == "checksum_error":
        return "Checksum verification failed"
    if kind == "drop":
        return f"Dropping packet (port {name}, {a})"
    if kind == "enqueue":
        return f"Egress port is {name}, priority {a}"
    if kind == "egress":
        return f"Egress processing on port {name} (instance type {a})"
    if kind == "transmit":
        return f"Transmitting packet of size {a} out of port {name}"
    return f"{kind} {name} {a!r} {b!r}"


def _copy_ctx(ctx: PacketContext) -> PacketContext:
    """A replica's registers: cleared (BMv2 ``RegisterAccess::clear_all``), lengths kept
    (its PHV objects are set by the caller)."""
    copy = PacketContext(ctx.ingress_length)
    copy.set_payload(ctx.packet, ctx.payload_at)
    copy.length_reg = ctx.length_reg
    copy.truncate = ctx.truncate
    return copy


__all__ = [
    "DROP_EGRESS",
    "DROP_INGRESS",
    "DROP_NO_REPLICA",
    "DROP_PORT_DOWN_RX",
    "DROP_PORT_DOWN_TX",
    "DROP_PRIORITY",
    "DROP_QUEUE_FULL",
    "ExitSignal",
    "RateScope",
    "RateUnit",
    "Switch",
    "build_in_background",
    "format_trace",
]
