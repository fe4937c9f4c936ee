# Cython declarations for p4emu/runtime/traffic_manager.py (pure-Python mode;
# docs/virtual-fabric.md, "Compiled hot path"): read only by the native build, the .py
# stays the reference. The per-packet classes become extension types, every attribute
# declared here (an attribute added to the .py must be added here too: the native build
# refuses to set an undeclared one). C integers hold only counts and lengths bounded by
# memory (packets held, drops, departures, queue depths) and the enqueue time, read from
# the clock (ns, below 2**63); a shaper's times (a departure time plus a gap the rate
# decides, unbounded) and ports, priorities and capacities given by callers stay Python
# ints, as on the pure path.
cimport cython


cdef class QueuedPacket:
    cdef public long long departure_seq
    cdef public object deq_ns
    cdef public long long deq_qdepth
    cdef public object deq_timedelta
    cdef public long long enq_ns
    cdef public long long enq_qdepth
    cdef public long long enq_timestamp
    cdef public object item
    cdef public object length
    cdef public object port
    cdef public object priority
    cdef public object send_ns


cdef class _Queue:
    cdef public object bit
    cdef public object capacity
    cdef public object fifo
    cdef public object last_length
    cdef public object last_send_ns
    cdef public object rate


cdef class _Port:
    cdef public long long backlog
    cdef public list by_priority
    cdef public object filled
    cdef public object next_free_ns
    cdef public object next_ns
    cdef public object paused
    cdef public object port
    cdef public list queues
    cdef public object rate


cdef class TrafficManager:
    cdef public object clock
    cdef public object priority_queues
    cdef public bint _port_scope
    cdef public object _default_depth
    cdef public object _default_rate
    cdef public dict _ports
    cdef public set _active
    cdef public object _earliest
    cdef public list _ready
    cdef public long long _departures
    cdef public dict drops
    cdef public long long total_drops
    cdef public long long total_enqueued

    @cython.locals(
        state=_Port, queue=_Queue, packet=QueuedPacket, active=set, rate=object,
        send=object,
    )
    cpdef enqueue(self, object port, object item, object length, object priority=*)
    @cython.locals(active=set, ports=dict, state=_Port, ready=list, due=list)
    cpdef list poll(self, object now_ns=*)
    cpdef next_departure_ns(self)
    @cython.locals(active=set)
    cpdef _reschedule(self, _Port state, object now)
    @cython.locals(state=_Port)
    cpdef _Port _port(self, object port)
    cpdef _drop(self, object port, object priority, object reason)
    cpdef _depart_at_once(self, QueuedPacket packet, object now)
    @cython.locals(packet=QueuedPacket)
    cpdef _depart(self, _Port state, _Queue queue, object when)
    @cython.locals(queues=list, queue=_Queue, best=_Queue)
    cpdef _settle(self, _Port state, object now)
    @cython.locals(ports=dict, active=set, state=_Port)
    cpdef _min_next_ns(self)
    @cython.locals(head=QueuedPacket)
    cpdef _next_departure(self, _Port state)
