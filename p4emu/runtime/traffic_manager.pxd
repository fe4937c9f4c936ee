# Cython declarations for p4emu/runtime/traffic_manager.py (pure-Python mode;
# docs/virtual-fabric.md, "Compiled hot path"): read only by the native build, the .py
# stays the reference. The per-packet classes become extension types, every attribute
# declared here (an attribute added to the .py must be added here too: the native build
# refuses to set an undeclared one). C integers hold counts and lengths bounded by
# memory (packets held, drops, departures, queue depths) and times in ns: the clock's
# (below 2**62, the event list's limit) and a shaper's, a departure time plus gaps that
# QueueRate keeps below MAX_GAP_NS = 2**62 (a rate that would pass it is refused on both
# paths), so a sum of a time and a gap stays below 2**63. Ports, priorities and
# capacities given by callers stay Python ints, as on the pure path.
cimport cython

from p4emu.runtime.clock cimport read_ns


cdef double _MAX_GAP  # the C copy of MAX_GAP_NS
cdef long long _NS_PER_US  # NS_PER_US: a queued packet's times are C integers
cdef long long _MAX_TIME  # the C copy of MAX_GAP_NS: a shaper's times stay below it
cdef double _BIT_NS  # 8 * NS_PER_S as a C double: a bits/s gap in C (QueueRate.gap_ns)

# a mask of a port's queues (bit p: priority p), at most MAX_PRIORITY_QUEUES = 64 bits
@cython.locals(top=int)
cpdef int _top_bit(unsigned long long mask)
@cython.locals(later="long long")
cdef long long _later(long long t, long long gap) except? -1


cdef class QueuedPacket:
    cdef public long long departure_seq
    cdef public long long deq_ns
    cdef public long long deq_qdepth
    cdef public long long deq_timedelta
    cdef public long long enq_ns
    cdef public long long enq_qdepth
    cdef public long long enq_timestamp
    cdef public object item
    cdef public long long length
    cdef public object port
    cdef public object priority
    cdef public long long send_ns

    cpdef renew(
        self, object item, object port, object priority, long long length, long long enq_ns,
        long long enq_qdepth,
    )


cdef class QueueRate:
    cdef public long long packet_gap_ns
    cdef public bint per_packet
    cdef public object unit
    cdef public double value

    @cython.locals(gap=double)
    cpdef long long gap_ns(self, long long length) except? -1


cdef class _Queue:
    cdef public unsigned long long bit
    cdef public object capacity
    cdef public Py_ssize_t head
    cdef public long long limit
    cdef public long long last_length
    cdef public long long last_send_ns
    cdef public QueueRate rate
    cdef public Py_ssize_t size
    cdef public list slots

    cpdef set_capacity(self, object capacity)
    # the ring's three operations: direct C calls, inlined (not through the vtable)
    @cython.final
    @cython.locals(slots=list, n=Py_ssize_t, index=Py_ssize_t)
    cdef inline push(self, QueuedPacket packet)
    @cython.final
    @cython.locals(slots=list, index=Py_ssize_t, packet=QueuedPacket)
    cdef inline QueuedPacket pop(self)
    @cython.final
    @cython.locals(index=Py_ssize_t)
    cdef inline QueuedPacket first(self)


cdef class _Port:
    cdef public bint active
    cdef public long long backlog
    cdef public list by_priority
    cdef public unsigned long long filled
    cdef public long long next_free_ns
    cdef public long long next_ns
    cdef public unsigned long long paused
    cdef public object port
    cdef public list queues
    cdef public QueueRate rate


cdef class TrafficManager:
    cdef public object clock
    cdef public object priority_queues
    cdef public long long _queue_count
    cdef public bint _port_scope
    cdef public object _default_depth
    cdef public QueueRate _default_rate
    cdef public dict _ports
    cdef public list _by_port
    cdef public list _free
    cdef public Py_ssize_t _free_count
    cdef public bint _indexed
    cdef public list _active_states
    cdef public long long _earliest
    cdef public list _ready
    cdef public list _spare_ready
    cdef public list _due
    cdef public long long _departures
    cdef public dict drops
    cdef public long long total_drops
    cdef public long long total_enqueued

    @cython.locals(
        state=_Port, queue=_Queue, packet=QueuedPacket, active=list, rate=QueueRate,
        send="long long", now="long long", by_port=list,
        index=Py_ssize_t,
    )
    cpdef enqueue_c(self, object port, object item, long long length, long long priority)
    cpdef enqueue(self, object port, object item, object length, object priority=*)
    @cython.locals(ready=list)
    cpdef list poll(self, object now_ns=*)
    @cython.locals(active=list, state=_Port, ready=list, now="long long", spare=list)
    cpdef list take_ready(self, object now_ns=*)
    @cython.locals(
        due=list, first=_Port, state=_Port, count=Py_ssize_t, earliest="long long",
        found=bint, when="long long", index=Py_ssize_t,
    )
    @cython.final  # a direct C call (not through the vtable)
    cdef _settle_due(self, list active, long long now)
    cpdef recycle(self, list ready)
    @cython.locals(free=list)
    cpdef release(self, QueuedPacket packet)
    cpdef next_departure_ns(self)
    # a time in ns (below 2**62), -1: none
    @cython.locals(best="long long", packet=QueuedPacket)
    cpdef long long next_departure_c(self) except? -2
    @cython.locals(when="long long")
    cpdef _reschedule(self, _Port state, long long now)
    cdef _activate(self, _Port state)
    @cython.locals(active=list, index=Py_ssize_t)
    cdef _deactivate(self, _Port state)
    @cython.locals(state=_Port, by_port=list)
    cpdef _Port _port(self, object port)
    cpdef _drop(self, object port, object priority, object reason)
    # the packet path's own steps, called from this class only: direct C calls (final,
    # not through the vtable, no Python override check), not callable from Python compiled
    @cython.final
    cdef _depart_at_once(self, QueuedPacket packet, long long now)
    @cython.final
    @cython.locals(packet=QueuedPacket)
    cdef _depart(self, _Port state, _Queue queue, long long when)
    @cython.locals(
        queues=list, queue=_Queue, best=_Queue, best_send="long long", send="long long",
        rate=QueueRate, when="long long", length="long long", head=QueuedPacket,
        filled="unsigned long long",
    )
    @cython.final
    cdef _settle(self, _Port state, long long now)
    @cython.final  # a direct C call, inlined (not through the vtable)
    @cython.locals(index=Py_ssize_t)
    cdef inline _Port _active_port(self, object port)
    @cython.locals(state=_Port, earliest="long long", found=bint, active=list, index=Py_ssize_t)
    cpdef long long _min_next_ns(self) except? -1
    @cython.locals(
        head=QueuedPacket, earliest="long long", filled="unsigned long long", queue=_Queue,
        when="long long", found=bint,
    )
    @cython.final
    cdef long long _next_departure(self, _Port state) except? -1


@cython.locals(n=Py_ssize_t, i=Py_ssize_t, j=Py_ssize_t, item=QueuedPacket, other=QueuedPacket)
cpdef _sort_departures(list ready)
