# Cython declarations for nic_emu/core.py (pure-Python mode; docs/virtual-fabric.md,
# "Compiled hot path"): read only by the native build, the .py stays the reference.
# NicCore becomes an extension type deriving from NicHost (nic_emu/nic_host.pxd: the
# per-packet state its connection parts call in C): every other attribute is declared
# here (an attribute added to the .py must be added here too, or the native build
# refuses to set it).
# C integers hold counters and sequence numbers only (below 2**63 in any run). The
# connections are typed (nic_emu/connection/queue_pair.pxd): the core reads their
# scheduling fields and calls their parts (send turn, feedback, receive side,
# deadlines) through C structs and method tables.
cimport cython

from mrc_wire.codec cimport DataPacket, Envelope, Nack, Probe, Sack, decode, encode_probe
from nic_emu.connection.queue_pair cimport Connection
from nic_emu.connection.records cimport Counters
from nic_emu.connection.timers cimport Deadlines, time_key
from nic_emu.connection.transmit cimport Transmitter
from nic_emu.nic_host cimport NicHost


# A NIC's own counters as C integers (session 26; read as a mapping, records.py): one
# field per name of NIC_COUNTERS, the same names.
cdef class NicCounters(Counters):
    cdef public long long rx_frames
    cdef public long long rx_malformed
    cdef public long long rx_foreign
    cdef public long long rx_unknown_qpn
    cdef public long long rx_dropped
    cdef public long long rx_port_down
    cdef public long long tx_probe_reply
    cdef public long long rx_probe_reply_unknown
    cdef public long long paths_shared
    cdef public long long paths_held


# the timer heap's "no deadline" and "not an int" (core.py), as C values
cdef long long _INEXACT, _NO_DEADLINE


# The timer heap (core.py, _schedule): connections, each knowing its place (heap_pos), in
# order of their deadlines, compared as C integers when both are exact ints (sched_key,
# nic_emu/connection/timers.pxd's time_key), as objects otherwise.
@cython.locals(ka="long long", kb="long long", ta=object, tb=object)
cdef bint _earlier(Connection a, Connection b) except -1
@cython.locals(conn=Connection, parent_pos=Py_ssize_t, parent=Connection)
cdef int _sift_up(list heap, Py_ssize_t pos) except -1
@cython.locals(conn=Connection, end=Py_ssize_t, child=Py_ssize_t, right=Py_ssize_t,
               first=Connection)
cdef int _sift_down(list heap, Py_ssize_t pos) except -1
@cython.locals(pos=Py_ssize_t, last=Connection)
cdef int _heap_remove(list heap, Connection conn) except -1
@cython.locals(pos=Py_ssize_t)
cpdef _schedule(list heap, Connection conn, object t)


cdef class NicCore(NicHost):
    cdef public object config
    cdef public object plan
    cdef public object name
    cdef public object index
    cdef public object seed
    cdef public object log
    cdef public object trace_packets
    cdef public list addrs
    cdef public object _addr_set
    cdef public list macs
    cdef public list gateway_macs
    cdef public list port_free_at
    cdef public object ns_per_byte
    cdef public long long _rr
    cdef public object port_status_bits
    cdef public object memory
    cdef public dict connections
    cdef public set _sendable
    cdef public set _stale
    cdef public set _fresh
    cdef public list _timers
    cdef public long long _created
    cdef public list _ready
    cdef public list _parked
    cdef public list out
    cdef public object _events
    cdef public object _next_qpn
    cdef public dict _path_cache
    cdef public dict _route_cache
    cdef public dict _probes
    cdef public object _next_probe_id
    cdef public list plane_tx
    cdef public list plane_rx
    cdef public NicCounters counters
    cdef public dict _failed_paths
    cdef public dict drop_reasons
    cdef public object accept_unknown_qp

    cpdef bint has_events(self)
    cpdef list events(self)
    @cython.locals(
        counters=NicCounters, conn=Connection, m=Envelope, port=Py_ssize_t, dst=bytes, own=bytes
    )
    cpdef receive_frame(self, object frame, object plane, object now)
    @cython.locals(
        out=list, sendable=set, parked=list, free=list, p=Py_ssize_t, group=set, ready=list,
        n=Py_ssize_t, start=Py_ssize_t, order=dict, turn=list, tried=list, still=list,
        conn=Connection, tx=Transmitter,
    )
    cpdef list frames_to_send(self, object now)
    @cython.locals(p=Py_ssize_t, group=set)
    cdef _unpark(self, Connection conn)
    @cython.locals(tx=Transmitter, p=Py_ssize_t, group=set)
    cdef _settle(self, Connection conn, set sendable)
    @cython.locals(ready=list, i=Py_ssize_t, conn=Connection)
    cpdef list _ready_connections(self)
    cpdef touch(self, Connection conn)
    cpdef wake(self, object qpn)
    cpdef _unschedule(self, Connection conn)
    @cython.locals(
        timers=list, fresh=set, spare=set, conn=Connection, deadlines=Deadlines,
        key="long long",
    )
    cpdef set _refresh_timers(self)
    @cython.locals(timers=list, conn=Connection)
    cpdef Connection _earliest(self, set fresh)
    @cython.locals(fresh=set, parked=list, free=list, p=Py_ssize_t, group=set, found=Connection)
    cpdef object next_timer(self)
    @cython.locals(
        fresh=set, sendable=set, free=list, p=Py_ssize_t, group=set, due=list, timers=list,
        conn=Connection, stale=set, out=list,
    )
    cpdef handle_timer(self, object now)
    cpdef emit(self, object event)
    cpdef peer_ports_changed(self, object peer, object bits, object now)


cpdef tuple service(NicCore core, object now, object transmit)
