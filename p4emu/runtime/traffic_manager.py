"""The traffic manager between ingress and egress: per-port, per-priority FIFO queues.

Model (BMv2 ``simple_switch`` with ``QueueingLogicPriRL``; see p4lang/behavioral-model/docs/simple_switch.md and
``include/bm/bm_sim/queueing.h``):

- Each egress port has ``priority_queues`` FIFOs (``--priority-queues N``, default 1).
  ``standard_metadata.priority`` picks the queue; queue N-1 is served first, 0 last. A
  priority >= N drops the packet ("Priority out of range, dropping packet").
- Each queue holds at most ``depth`` packets (default 64, BMv2's default capacity;
  ``set_queue_depth`` per port or per port and priority). A full queue drops the new
  packet (tail drop), counted per (port, priority, reason).
- A queue is unlimited by default: its packets leave as soon as they arrive. With a rate
  (``set_queue_rate``), departures are spaced: in packets/s as BMv2 (one packet every
  ``1/rate`` s), or in bits/s (a packet occupies the link ``8*length/rate`` s), a p4emu
  extension.
- Rate scope :attr:`RateScope.queue` (default, BMv2-exact): every (port, priority) queue
  has its own shaper and a packet's departure time is fixed when it is enqueued:
  ``send = max(now, previous_send + gap)``, with BMv2's quirk that a queue first touched
  by a packet (not configured before) delays its first packet by one gap. Packets due at
  the same instant leave highest priority first.
  Rate scope :attr:`RateScope.port` (p4emu extension): one shaper per port shared by its
  priority queues; at each departure the highest-priority non-empty queue is served —
  a strict-priority link, as a hardware switch behaves.

Pause (p4emu extension, port scope only): :meth:`TrafficManager.set_paused` stops one
priority queue of a port, as an IEEE 802.1Qbb PFC pause frame received on that port
does; the packet already leaving finishes, the queue keeps filling, the port's other
priorities go on being served, and the queue is served again once resumed. Nothing here
decides when to pause: the caller (a fabric's PFC) does.

Metadata given to egress (:class:`QueuedPacket`), BMv2 definitions, times in µs since
the clock's origin: ``enq_timestamp`` (at enqueue), ``enq_qdepth`` (packets already in
the packet's queue at enqueue), ``deq_timedelta`` (µs between enqueue and departure),
``deq_qdepth`` (packets left in the queue just after departure), ``qid`` (the priority).

Time: departures are computed exactly, in the order they happen, whatever the clock.
With a :class:`~p4emu.runtime.clock.VirtualClock`, ``clock.advance()`` then
:meth:`TrafficManager.poll` yields exactly the packets the rate lets out. With a real
clock a driver loops on :meth:`next_departure_ns` (sleep until then) and :meth:`poll`.
Calls must come in non-decreasing time (``enqueue`` settles the port's departures up
to now first, so occupancy at each event is exact).
"""

from __future__ import annotations

import enum
import logging

import cython

from p4emu.runtime.clock import NS_PER_S, NS_PER_US, Clock, read_ns
from p4emu.runtime.exceptions import TrafficManagerError

log = logging.getLogger("p4emu.runtime")

DEFAULT_QUEUE_DEPTH = 64
#: a queue's capacity as its C copy (``_Queue.limit``): a larger one is this, which no
#: queue's count of packets held reaches (each is an object in memory)
MAX_HELD = 2**62
_NS_PER_US = NS_PER_US  # its C copy on the compiled path (the queueing times in C)
#: bits per byte times ns per s, the C double a bits/s gap is computed with: a length
#: below 2**53 is exact as a double, so ``length * _BIT_NS`` is the correctly rounded
#: product, as Python's ``length * 8 * NS_PER_S`` (an exact int) converted to float is
_BIT_NS = float(8 * NS_PER_S)
#: ports below this one are also found by index (:attr:`TrafficManager._by_port`, a list
#: grown as ports appear), cheaper than the dict on the per-packet path: v1model's
#: 9-bit port numbers; a higher port (the traffic manager takes any) only by the dict
INDEXED_PORTS = 512
#: the most priority queues a port may have: a port keeps which of its queues hold packets
#: and which are paused as bit masks, C integers of 64 bits on the compiled path (BMv2's
#: simple_switch runs at most 8; more is refused on both paths)
MAX_PRIORITY_QUEUES = 64


class RateUnit(enum.Enum):
    packets_per_second = "pps"
    bits_per_second = "bps"


class RateScope(enum.Enum):
    queue = "queue"
    port = "port"


class DropReason(enum.Enum):
    queue_full = "queue_full"
    priority_out_of_range = "priority_out_of_range"


class QueuedPacket:
    """A packet held by the traffic manager, with the queueing metadata egress reads.

    ``item`` is whatever the caller enqueued (opaque). Dequeue fields are set when the
    packet leaves (returned by :meth:`TrafficManager.poll`).
    """

    __slots__ = (
        "departure_seq",
        "deq_ns",
        "deq_qdepth",
        "deq_timedelta",
        "enq_ns",
        "enq_qdepth",
        "enq_timestamp",
        "item",
        "length",
        "port",
        "priority",
        "send_ns",
    )

    def __init__(
        self, item: object, port: int, priority: int, length: int, enq_ns: int, enq_qdepth: int
    ) -> None:
        self.renew(item, port, priority, length, enq_ns, enq_qdepth)

    def renew(
        self, item: object, port: int, priority: int, length: int, enq_ns: int, enq_qdepth: int
    ) -> None:
        """Every field set for a packet entering a queue: ``__init__`` of a new one, and a
        released one (:meth:`TrafficManager.release`) taken again from the free list."""
        self.item = item
        self.port = port
        self.priority = priority
        self.length = length
        self.enq_ns = enq_ns
        self.enq_timestamp = enq_ns // _NS_PER_US
        self.enq_qdepth = enq_qdepth
        self.send_ns = enq_ns
        self.deq_ns = 0
        self.departure_seq = 0
        self.deq_timedelta = 0
        self.deq_qdepth = 0

    @property
    def qid(self) -> int:
        return self.priority

    def __repr__(self) -> str:
        return (
            f"QueuedPacket(port={self.port}, priority={self.priority}, length={self.length}, "
            f"enq_timestamp={self.enq_timestamp}, enq_qdepth={self.enq_qdepth}, "
            f"deq_timedelta={self.deq_timedelta}, deq_qdepth={self.deq_qdepth})"
        )


#: the longest shaper gap a rate may give, in ns (2**62, about 146 years): a rate so low
#: that a packet's gap would pass it is refused when the packet is shaped, on both paths
#: (the native build keeps a port's times as C integers)
MAX_GAP_NS = 1 << 62
_MAX_GAP = float(MAX_GAP_NS)  # the gap's bound as the float it is compared as
_MAX_TIME = MAX_GAP_NS  # a shaper's times stay below it too (_later)


class QueueRate:
    """A queue's or port's drain rate: ``value`` in ``unit``. Immutable."""

    __slots__ = ("packet_gap_ns", "per_packet", "unit", "value")

    def __init__(self, value: float, unit: RateUnit) -> None:
        self.value = value
        self.unit = unit
        self.per_packet = unit is RateUnit.packets_per_second
        #: the per-packet gap of a packets/s rate (0 for bits/s)
        self.packet_gap_ns = 0
        if self.per_packet:
            gap = (1.0 / value) * NS_PER_S
            if not gap < _MAX_GAP:
                raise TrafficManagerError(
                    f"queue rate {value} pps is too low: a gap of {gap:.3g} ns passes "
                    f"{MAX_GAP_NS} ns"
                )
            self.packet_gap_ns = int(gap)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, QueueRate):
            return NotImplemented
        return self.value == other.value and self.unit is other.unit

    def __hash__(self) -> int:
        return hash((self.value, self.unit))

    def __repr__(self) -> str:
        return f"QueueRate(value={self.value!r}, unit={self.unit!r})"

    def gap_ns(self, length: int) -> int:
        """Time the shaper keeps after a packet of ``length`` bytes (BMv2 truncates to ns)."""
        if self.per_packet:
            return self.packet_gap_ns
        # compiled: C doubles, the same roundings (see _BIT_NS); a length is a packet's,
        # far below 2**53 (the native build's length is a C long long)
        gap = length * _BIT_NS / self.value
        if not gap < _MAX_GAP:
            raise TrafficManagerError(
                f"queue rate {self.value} bps is too low: a {length}-byte packet's gap of "
                f"{gap:.3g} ns passes {MAX_GAP_NS} ns"
            )
        if cython.compiled:  # 0 <= gap < 2**62: C truncates toward 0, as int() does
            return cython.cast(cython.longlong, gap)
        return int(gap)


class _Queue:
    """One FIFO of a port: its packets in a ring over a list (``slots``), the oldest at
    ``slots[head]``, ``size`` of them. Compiled, adding, taking and reading the oldest are
    C calls indexing a typed list (a ``deque``'s ``append``, ``popleft`` and ``len`` were
    Python method calls per packet)."""

    __slots__ = (
        "bit",
        "capacity",
        "head",
        "last_length",
        "last_send_ns",
        "limit",
        "rate",
        "size",
        "slots",
    )

    def __init__(
        self, priority: int, capacity: int, rate: QueueRate | None, created_ns: int
    ) -> None:
        self.bit = 1 << priority  # this queue in its port's ``filled`` mask
        #: the ring: ``size`` packets from ``head`` on, wrapping at the list's end; a
        #: slot not holding one is None. It grows (in order) when full, never shrinks
        self.slots: list[QueuedPacket | None] = []
        self.head = 0
        self.size = 0
        self.capacity = capacity
        self.limit = 0
        self.set_capacity(capacity)
        self.rate = rate
        # BMv2 starts last_sent at the queue's creation and spaces the next packet by the
        # per-packet delay; a bits/s shaper has sent nothing yet.
        self.last_send_ns = created_ns
        self.last_length = 1 if rate is None or rate.unit is RateUnit.packets_per_second else 0

    def set_capacity(self, capacity: int) -> None:
        """``capacity`` (packets, not negative, any int), and ``limit``, its C copy that
        enqueue compares with: the same below MAX_HELD, which no queue can reach (compiled,
        a C integer; a capacity is a Python int as the caller gave it)."""
        self.capacity = capacity
        self.limit = capacity if capacity < MAX_HELD else MAX_HELD

    @cython.boundscheck(False)  # an index below len(slots), a slot the ring holds
    @cython.wraparound(False)
    @cython.boundscheck(False)
    @cython.wraparound(False)
    def push(self, packet: QueuedPacket) -> None:
        """``packet`` joins the end of the queue."""
        slots = self.slots
        n = len(slots)
        if self.size == n:  # full: grown by one slot, right after the newest packet
            if self.head:  # wrapped: the newest is at head - 1, the oldest moves up one
                slots.insert(self.head, packet)
                self.head += 1
            else:
                slots.append(packet)
        else:
            index = self.head + self.size
            if index >= n:
                index -= n
            slots[index] = packet
        self.size += 1

    @cython.boundscheck(False)
    @cython.wraparound(False)
    def pop(self) -> QueuedPacket:
        """The oldest packet, taken out (the queue holds one)."""
        slots = self.slots
        index = self.head
        packet = cython.cast(QueuedPacket, slots[index])
        slots[index] = None
        index += 1
        if index == len(slots):
            index = 0
        self.head = index
        self.size -= 1
        return packet

    @cython.boundscheck(False)
    @cython.wraparound(False)
    def first(self) -> QueuedPacket:
        """The oldest packet, left in (the queue holds one)."""
        index = self.head
        return cython.cast(QueuedPacket, self.slots[index])


class _Port:
    __slots__ = (
        "active",
        "backlog",
        "by_priority",
        "filled",
        "next_free_ns",
        "next_ns",
        "paused",
        "port",
        "queues",
        "rate",
    )

    def __init__(self, port: int, queues: list[_Queue], rate: QueueRate | None) -> None:
        self.port = port
        self.queues = queues
        self.by_priority = queues[::-1]  # highest priority first: the order queues are served
        self.backlog = 0
        self.filled = 0  # bit p set: queue p holds packets
        self.next_free_ns = 0
        # time of the port's next departure while backlog > 0 (kept by enqueue and
        # _settle, so polling a port with nothing due costs one comparison)
        self.next_ns = 0
        self.rate = rate  # port scope only
        self.paused = 0  # bit p set: queue p is paused (set_paused), not served
        self.active = False  # in its traffic manager's active ports (_activate)


class TrafficManager:
    """Egress queues of one switch; see the module docstring."""

    def __init__(
        self,
        clock: Clock,
        *,
        priority_queues: int = 1,
        default_depth: int = DEFAULT_QUEUE_DEPTH,
        rate_scope: RateScope = RateScope.queue,
    ) -> None:
        if not 1 <= priority_queues <= MAX_PRIORITY_QUEUES:
            raise TrafficManagerError(
                f"priority_queues must be in [1, {MAX_PRIORITY_QUEUES}], got {priority_queues}"
            )
        if default_depth < 0:
            raise TrafficManagerError(f"queue depth must not be negative, got {default_depth}")
        self.clock = clock
        self.priority_queues = priority_queues
        self._queue_count = priority_queues  # its C copy (enqueue_c)
        self._port_scope = rate_scope is RateScope.port
        self._default_depth = default_depth
        self._default_rate: QueueRate | None = None
        self._ports: dict[int, _Port] = {}
        #: ``_ports`` of the ports below INDEXED_PORTS by index (None: no such port yet)
        self._by_port: list[_Port | None] = []
        #: packets the caller released (:meth:`release`), reused by enqueue
        self._free: list[QueuedPacket] = []
        # the released packets are _free[:_free_count]: the list never shrinks (popped to
        # empty and appended again, a list frees and allocates its storage each time); a
        # slot past the count may still name a packet in use, overwritten before it is taken
        self._free_count = 0
        #: the states of the active ports (a packet queued in a queue that may be served),
        #: in the order they became active; each state's ``active`` flag says it is here.
        #: The polls walk this list (compiled, a C loop reading C fields)
        self._active_states: list[_Port] = []
        # min(next_ns) over the active ports (kept exact by enqueue and every settle), so
        # a poll with nothing due and next_departure_ns() look at no port
        self._earliest = 0
        self._ready: list[QueuedPacket] = []
        #: a list :meth:`recycle` got back, emptied: the next ready list (None: make one)
        self._spare_ready: list[QueuedPacket] | None = None
        #: take_ready's due ports (emptied at the start of each take that walks the ports)
        self._due: list[int] = []
        self._indexed = True  # every port is in _by_port (none at or past INDEXED_PORTS)
        self._departures = 0
        self.drops: dict[tuple[int, int, DropReason], int] = {}
        self.total_drops = 0
        self.total_enqueued = 0

    @property
    def rate_scope(self) -> RateScope:
        return RateScope.port if self._port_scope else RateScope.queue

    # --- configuration ----------------------------------------------------------------

    def set_queue_depth(self, port: int, depth: int, priority: int | None = None) -> None:
        """Capacity in packets of one port's queues (all priorities, or one)."""
        if depth < 0:
            raise TrafficManagerError(f"queue depth must not be negative, got {depth}")
        for queue in self._select(port, priority):
            queue.set_capacity(depth)

    def set_all_queue_depths(self, depth: int) -> None:
        """Capacity of every queue, current and future (BMv2 ``set_queue_depth DEPTH``)."""
        if depth < 0:
            raise TrafficManagerError(f"queue depth must not be negative, got {depth}")
        self._default_depth = depth
        for port in self._ports.values():
            for queue in port.queues:
                queue.set_capacity(depth)

    def set_queue_rate(
        self,
        port: int,
        rate: float | None,
        unit: RateUnit = RateUnit.packets_per_second,
        priority: int | None = None,
    ) -> None:
        """Drain rate of a port (``None`` or 0: unlimited).

        Queue scope: sets the rate of the port's queues (all priorities, or one).
        Port scope: sets the port's shared rate (``priority`` must be None).
        """
        queue_rate = self._make_rate(rate, unit)
        if self._port_scope:
            if priority is not None:
                raise TrafficManagerError(
                    "with rate_scope=port the rate is per port, not per priority"
                )
            self._port(port).rate = queue_rate
            return
        for queue in self._select(port, priority):
            queue.rate = queue_rate

    def set_all_queue_rates(
        self, rate: float | None, unit: RateUnit = RateUnit.packets_per_second
    ) -> None:
        """Rate of every port/queue, current and future (BMv2 ``set_queue_rate RATE``)."""
        queue_rate = self._make_rate(rate, unit)
        self._default_rate = queue_rate
        for port in self._ports.values():
            port.rate = queue_rate
            for queue in port.queues:
                queue.rate = queue_rate

    def queue_rate(self, port: int, priority: int = 0) -> float | None:
        """The configured drain rate of a port's queue (None: unlimited), in its own unit."""
        state = self._port(port)
        rate = state.rate if self._port_scope else state.queues[priority].rate
        return None if rate is None else rate.value

    def queue_depth_limit(self, port: int, priority: int = 0) -> int:
        return self._select(port, priority)[0].capacity

    # --- packet path ------------------------------------------------------------------

    def enqueue(self, port: int, item: object, length: int, priority: int = 0) -> DropReason | None:
        """Queue ``item`` (a packet of ``length`` bytes) for ``port``.

        Returns None if queued, else the :class:`DropReason` (also counted in ``drops``).
        """
        if not 0 <= priority < self.priority_queues:  # any int (a C one below)
            log.error("Priority out of range, dropping packet (priority %d)", priority)
            self._drop(port, priority, DropReason.priority_out_of_range)
            return DropReason.priority_out_of_range
        return self.enqueue_c(port, item, length, priority)

    def enqueue_c(self, port: int, item: object, length: int, priority: int) -> DropReason | None:
        """:meth:`enqueue` of a length and a priority the caller holds as C integers (the
        switch, whose packet context and standard metadata hold them so): compiled, no
        Python int made for them. The same checks and results."""
        if not 0 <= priority < self._queue_count:
            log.error("Priority out of range, dropping packet (priority %d)", priority)
            self._drop(port, priority, DropReason.priority_out_of_range)
            return DropReason.priority_out_of_range
        now = read_ns(self.clock)
        # a port below INDEXED_PORTS (written out: compiled, compared in C with a small
        # int) is found by index, None if it has no state yet (every state of such a port
        # is in _by_port, grown to hold it); a higher one by the dict
        if 0 <= port < 512:
            index = port  # in range: compiled, a C index into the typed list
            by_port = self._by_port
            # a port's state or None (compiled: no type test, None passes a cast as is)
            state = cython.cast(_Port, by_port[index]) if index < len(by_port) else None
        else:
            state = self._ports.get(port)
        if state is None:
            state = self._port(port)
        elif state.backlog and state.next_ns <= now:
            self._settle(state, now)
            self._earliest = self._min_next_ns()
        index = priority  # checked in range above: a C index
        queue = cython.cast(_Queue, state.queues[index])  # compiled: no type test
        if queue.size >= queue.limit:
            self._drop(port, priority, DropReason.queue_full)
            return DropReason.queue_full
        if self._free_count:
            self._free_count -= 1
            packet = cython.cast(QueuedPacket, self._free[self._free_count])  # no type test
            packet.renew(item, port, priority, length, now, queue.size)
        else:
            packet = QueuedPacket(item, port, priority, length, now, queue.size)
        self.total_enqueued += 1
        active = self._active_states
        # a packet that leaves at once from an idle port while no port has a departure
        # due by now goes straight to the ready list: what queueing it and settling the
        # due ports in the next poll would do (it would be the only one), without the queue
        if self._port_scope:
            if state.paused:
                queue.push(packet)
                state.backlog += 1
                state.filled |= queue.bit
                self._reschedule(state, now)
                return None
            if not state.backlog:
                if state.next_free_ns <= now and (not active or self._earliest > now):
                    self._depart_at_once(packet, now)
                    rate = state.rate
                    if rate is not None:
                        state.next_free_ns = _later(now, rate.gap_ns(length))
                    else:
                        state.next_free_ns = now
                    return None
                # port scope: a queued packet (enqueued at or before now) already leaves
                # no later than max(next_free, now), so only an idle port's next
                # departure moves
                state.next_ns = state.next_free_ns if state.next_free_ns > now else now
                if not active or state.next_ns < self._earliest:
                    self._earliest = state.next_ns
        else:
            rate = queue.rate
            if rate is not None:
                send = _later(queue.last_send_ns, rate.gap_ns(queue.last_length))
                if send < now:
                    send = now
                packet.send_ns = queue.last_send_ns = send
                queue.last_length = length
            if packet.send_ns == now and not state.backlog and (not active or self._earliest > now):
                self._depart_at_once(packet, now)
                return None
            # another queue of the port may leave later than this packet
            if not state.backlog or packet.send_ns < state.next_ns:
                state.next_ns = packet.send_ns
                if not active or packet.send_ns < self._earliest:
                    self._earliest = packet.send_ns
        queue.push(packet)
        state.backlog += 1
        state.filled |= queue.bit
        if not state.active:
            self._activate(state)
        return None

    def poll(self, now_ns: int | None = None) -> list[QueuedPacket]:
        """Packets whose departure time is <= now, in departure order.

        Ties (same instant): within a port, the order the queues released them (highest
        priority first); across ports, lower port number first unless one was already
        settled by an earlier enqueue (or left at once: its port idle, nothing due).
        """
        ready = self.take_ready(now_ns)
        return ready if ready is not None else []

    def take_ready(self, now_ns: int | None = None) -> list[QueuedPacket] | None:
        """:meth:`poll`, but None when no packet is ready (no empty list made: the
        switch drains through it, the last call of every drain finds nothing)."""
        active = self._active_states
        if active:
            now = read_ns(self.clock) if now_ns is None else now_ns
            if self._earliest <= now:
                if len(active) == 1:
                    state = cython.cast(_Port, active[0])  # compiled: no type test
                    self._settle(state, now)
                    self._earliest = state.next_ns  # read only while the port is active
                else:
                    self._settle_due(active, now)
        ready = self._ready
        if not ready:
            return None
        spare = self._spare_ready
        if spare is not None:  # a list handed back (recycle): no new list per take
            self._ready = spare
            self._spare_ready = None
        else:
            self._ready = []
        if len(ready) > 1:
            _sort_departures(ready)
        return ready

    @cython.boundscheck(False)  # indexes below len(active), which the scan leaves as is
    @cython.wraparound(False)
    def _settle_due(self, active: list[_Port], now: int) -> None:
        """Settle the ports of ``active`` (several) due by ``now``, lowest port number
        first, and bring ``_earliest`` up to date: one pass over the active ports finds
        the due ones and the earliest next departure of the others (settling a port
        changes no other port's). One port due, the usual case, is settled without the
        list of due ports (compiled: no Python int per port, no list append, clear or
        sort); several are sorted by port number in ``_due``."""
        due = self._due  # one list for every take (none made per take)
        first: _Port | None = None  # the first due port found
        count = 0
        earliest = 0
        found = False
        for index in range(len(active)):
            state = cython.cast(_Port, active[index])  # compiled: no type test
            when = state.next_ns
            if when <= now:
                if count:
                    if count == 1:  # a second due port: the list is needed
                        due.clear()  # emptied first: a take that raised may have left ports
                        due.append(first.port)
                    due.append(state.port)
                else:
                    first = state
                count += 1
            elif not found or when < earliest:
                earliest = when
                found = True
        if count == 1:
            state = first
            self._settle(state, now)
            # still active: its next departure, kept exact by the settle
            if state.active and (not found or state.next_ns < earliest):
                earliest = state.next_ns
        elif count:
            due.sort()
            for port in due:
                state = self._active_port(port)
                self._settle(state, now)
                if state.active and (not found or state.next_ns < earliest):
                    earliest = state.next_ns
                    found = True
        self._earliest = earliest

    def recycle(self, ready: list[QueuedPacket]) -> None:
        """The caller is done with ``ready``, a list :meth:`take_ready` gave (its packets
        released, or kept elsewhere): emptied here, it becomes the next ready list, so a
        drain makes no list per take. Hand a list back once at most, and do not read it
        after. The list being filled (not given yet) is refused (it would be returned
        while still filled)."""
        if ready is self._ready:
            raise TrafficManagerError("recycle: this list was not given by take_ready")
        ready.clear()
        self._spare_ready = ready

    @cython.boundscheck(False)
    @cython.wraparound(False)
    def release(self, packet: QueuedPacket) -> None:
        """The caller is done with ``packet`` (one :meth:`poll` returned): a later
        :meth:`enqueue` reuses it, every field set again (its item is dropped now). A
        packet must be released once at most, and not read after."""
        packet.item = None
        free = self._free
        if self._free_count < len(free):
            free[self._free_count] = packet
        else:
            free.append(packet)
        self._free_count += 1

    def next_departure_ns(self) -> int | None:
        """Earliest time a packet will leave (may be in the past), or None when all empty."""
        due = self.next_departure_c()
        return None if due < 0 else due

    def next_departure_c(self) -> int:
        """:meth:`next_departure_ns`, -1 for None: a C integer on the compiled path, so a
        caller in C boxes nothing. -1 is never a departure: a departure is a clock time at
        an enqueue plus gaps >= 0, and the clocks count from 0 and never go back
        (VirtualClock refuses a start before 0 and any move back; RealClock is
        monotonic, 0 at construction; the vfabric's clock is a VirtualClock)."""
        if self._ready:
            best = self._ready[0].deq_ns
            for packet in self._ready:
                if packet.deq_ns < best:
                    best = packet.deq_ns
            if self._active_states and self._earliest < best:
                return self._earliest
            return best
        return self._earliest if self._active_states else -1

    # --- pause (PFC) ------------------------------------------------------------------

    def set_paused(self, port: int, priority: int, paused: bool) -> None:
        """Stop (``paused``) or resume serving queue ``priority`` of ``port`` (see the
        module docstring). Port rate scope only: with per-queue shapers a departure time
        is fixed at enqueue, so a queue cannot be held back."""
        if not self._port_scope:
            raise TrafficManagerError("pausing a queue needs rate_scope=port")
        if not 0 <= priority < self.priority_queues:
            raise TrafficManagerError(
                f"priority {priority} out of range [0, {self.priority_queues})"
            )
        state = self._port(port)
        now = self.clock.now_ns()
        if state.backlog and state.next_ns <= now and state.active:
            self._settle(state, now)  # what left before the pause took effect
        bit = 1 << priority
        state.paused = state.paused | bit if paused else state.paused & ~bit
        self._reschedule(state, now)

    def is_paused(self, port: int, priority: int) -> bool:
        state = self._ports.get(port)
        return state is not None and bool(state.paused >> priority & 1)

    def _reschedule(self, state: _Port, now: int) -> None:
        """After a pause change or an enqueue on a port with paused queues: the port's
        next departure among the queues that may be served (none: the port waits)."""
        if state.filled & ~state.paused:
            when = self._next_departure(state)
            state.next_ns = when if when > now else now
            if not state.active:
                self._activate(state)
        else:
            self._deactivate(state)
        self._earliest = self._min_next_ns()

    def _activate(self, state: _Port) -> None:
        """``state``'s port joins the active ports (it is not one yet)."""
        state.active = True
        self._active_states.append(state)

    def _deactivate(self, state: _Port) -> None:
        """``state``'s port leaves the active ports, if it is one."""
        if state.active:
            state.active = False
            # found by identity (what list.remove finds: no equality is defined), in a C
            # loop: remove() was a Python method call comparing each state before it
            active = self._active_states
            for index in range(len(active)):
                if active[index] is state:
                    del active[index]
                    break

    # --- observation ----------------------------------------------------------------

    def queue_depth(self, port: int, priority: int | None = None) -> int:
        """Packets in the port's queue(s) now (one priority, or all)."""
        state = self._ports.get(port)
        if state is None:
            return 0
        if state.backlog:
            now = self.clock.now_ns()
            if state.next_ns <= now:
                self._settle(state, now)
                self._earliest = self._min_next_ns()
        if priority is None:
            return state.backlog
        return self._select(port, priority)[0].size

    def dropped(self, port: int | None = None, reason: DropReason | None = None) -> int:
        """Number of drops, optionally filtered by port and/or reason."""
        return sum(
            count
            for (p, _prio, r), count in self.drops.items()
            if (port is None or p == port) and (reason is None or r is reason)
        )

    # --- internals --------------------------------------------------------------------

    def _make_rate(self, rate: float | None, unit: RateUnit) -> QueueRate | None:
        if rate is None or rate == 0:
            return None
        if rate < 0:
            raise TrafficManagerError(f"queue rate must not be negative, got {rate}")
        return QueueRate(float(rate), unit)

    def _port(self, port: int) -> _Port:
        state = self._ports.get(port)
        if state is None:
            if port < 0:
                raise TrafficManagerError(f"port must not be negative, got {port}")
            created = self.clock.now_ns()
            queues = [
                _Queue(priority, self._default_depth, self._default_rate, created)
                for priority in range(self.priority_queues)
            ]
            state = self._ports[port] = _Port(port, queues, self._default_rate)
            if port < INDEXED_PORTS:
                by_port = self._by_port
                while len(by_port) <= port:
                    by_port.append(None)
                by_port[port] = state
            else:
                self._indexed = False  # a port only the dict finds
        return state

    def _select(self, port: int, priority: int | None) -> list[_Queue]:
        state = self._port(port)
        if priority is None:
            return state.queues
        if not 0 <= priority < self.priority_queues:
            raise TrafficManagerError(
                f"priority {priority} out of range [0, {self.priority_queues})"
            )
        return [state.queues[priority]]

    def _drop(self, port: int, priority: int, reason: DropReason) -> None:
        key = (port, priority, reason)
        self.drops[key] = self.drops.get(key, 0) + 1
        self.total_drops += 1

    def _depart_at_once(self, packet: QueuedPacket, now: int) -> None:
        """``packet``, enqueued now into an empty queue, leaves now (queueing fields 0)."""
        packet.deq_ns = now
        self._departures += 1
        packet.departure_seq = self._departures
        self._ready.append(packet)

    def _depart(self, state: _Port, queue: _Queue, when: int) -> None:
        packet = queue.pop()
        if not queue.size:
            state.filled ^= queue.bit
        state.backlog -= 1
        packet.deq_ns = when
        self._departures += 1
        packet.departure_seq = self._departures
        packet.deq_timedelta = when // _NS_PER_US - packet.enq_timestamp
        packet.deq_qdepth = queue.size
        self._ready.append(packet)

    def _settle(self, state: _Port, now: int) -> None:
        """Move every packet of ``state`` that leaves at or before ``now`` to the ready list.
        The caller brings ``_earliest`` up to date afterwards."""
        queues = state.queues
        if state.next_ns > now:
            return
        if not self._port_scope:
            if len(queues) == 1:
                queue = queues[0]
                while queue.size and queue.first().send_ns <= now:
                    self._depart(state, queue, queue.first().send_ns)
            else:
                while state.backlog:
                    best: _Queue | None = None
                    best_send = 0
                    for queue in reversed(queues):  # highest priority wins ties
                        if queue.size:
                            send = queue.first().send_ns
                            if best is None or send < best_send:
                                best, best_send = queue, send
                    if best is None or best_send > now:
                        break
                    self._depart(state, best, best_send)
        else:
            # at each departure (next_ns: max(next_free, earliest head)) the highest
            # priority queue whose head has arrived by then is served
            rate = state.rate
            when = state.next_ns
            while True:
                filled = state.filled & ~state.paused
                if not filled:
                    break  # every queue that holds packets is paused
                if filled & (filled - 1):  # several queues hold packets
                    for queue in state.by_priority:
                        if queue.size:
                            head = queue.first()  # compiled: its fields C reads
                            if head.enq_ns <= when and not queue.bit & state.paused:
                                break
                else:  # one queue: its head has arrived (when >= its enq_ns)
                    queue = queues[_top_bit(filled)]
                head = queue.first()
                length = head.length
                self._depart(state, queue, when)
                state.next_free_ns = _later(when, rate.gap_ns(length)) if rate is not None else when
                if not state.backlog or not state.filled & ~state.paused:
                    break
                when = state.next_ns = self._next_departure(state)
                if when > now:
                    return
            self._deactivate(state)
            return
        if state.backlog:
            state.next_ns = self._next_departure(state)
        else:
            self._deactivate(state)

    def _active_port(self, port: int) -> _Port:
        """An active port's state: from the list while every port is indexed (compiled,
        a C index into a typed list), else from the dict."""
        if self._indexed:
            index = port  # below INDEXED_PORTS: compiled, a C index
            # an active port has its state there (compiled: no type test)
            return cython.cast(_Port, self._by_port[index])
        return self._ports[port]

    def _min_next_ns(self) -> int:
        """The earliest next departure of the active ports (0 when none is active)."""
        earliest = 0
        found = False
        active = self._active_states
        for index in range(len(active)):  # not min(): the native build reads C fields
            state = cython.cast(_Port, active[index])  # compiled: no type test
            if not found or state.next_ns < earliest:
                earliest = state.next_ns
                found = True
        return earliest

    def _next_departure(self, state: _Port) -> int:
        """Time of the next departure of a port with a backlog in a queue not paused."""
        filled = state.filled & ~state.paused
        if filled & (filled - 1):  # several queues hold packets
            # a queue's bit is in ``filled`` while it holds packets and it is not
            # paused: the earliest of those heads' times (no list made, C reads compiled)
            earliest = 0
            found = False
            for queue in state.queues:
                if queue.bit & filled:
                    head = queue.first()
                    when = head.enq_ns if self._port_scope else head.send_ns
                    if not found or when < earliest:
                        earliest = when
                        found = True
            if not self._port_scope:
                return earliest
        else:
            head = cython.cast(_Queue, state.queues[_top_bit(filled)]).first()
            if not self._port_scope:
                return head.send_ns
            earliest = head.enq_ns
        return state.next_free_ns if state.next_free_ns > earliest else earliest


def _top_bit(mask: int) -> int:
    """``mask.bit_length() - 1``: the highest queue whose bit is set in a nonzero mask of a
    port's queues (compiled, a C loop over at most MAX_PRIORITY_QUEUES bits)."""
    if cython.compiled:
        top = -1
        while mask:
            mask >>= 1
            top += 1
        return top
    return mask.bit_length() - 1


def _later(t: int, gap: int) -> int:
    """``t + gap``: a shaper's next time (both below MAX_GAP_NS), refused at or past it."""
    later = t + gap
    if later >= _MAX_TIME:
        raise TrafficManagerError(
            f"a shaper's next departure passes {MAX_GAP_NS} ns ({t} + {gap}): the queue "
            f"rate is too low for this much traffic"
        )
    return later


def _sort_departures(ready: list[QueuedPacket]) -> None:
    """Sort ``ready`` by (deq_ns, departure_seq). Every departure_seq differs (a count of
    departures), so the order is total and any sort gives the same list: compiled, an
    insertion sort comparing C fields (the list is short: what left since the last poll)
    instead of a key tuple made per packet."""
    if cython.compiled:
        n = len(ready)
        for i in range(1, n):
            item = cython.cast(QueuedPacket, ready[i])
            j = i - 1
            while j >= 0:
                other = cython.cast(QueuedPacket, ready[j])
                if other.deq_ns < item.deq_ns or (
                    other.deq_ns == item.deq_ns and other.departure_seq < item.departure_seq
                ):
                    break
                ready[j + 1] = other
                j -= 1
            ready[j + 1] = item
        return
    ready.sort(key=_departure_order)


def _departure_order(packet: QueuedPacket) -> tuple[int, int]:
    # settling is in time order per port; equal times keep the order they were settled
    return (packet.deq_ns, packet.departure_seq)
