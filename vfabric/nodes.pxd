# Cython declarations for vfabric/nodes.py (pure-Python mode; docs/virtual-fabric.md,
# "Compiled hot path"): read only by the native build, the .py stays the reference.
# Counters and times are integers below 2**63 (ns, bytes, packets of one run).
cimport cython

from cpython.object cimport PyObject

from nic_emu.core cimport NicCore
from p4emu.switch cimport PortOutput, Switch
from vfabric.eventlist cimport EventList
from vfabric.wires cimport FrameSink, Wire

cdef int _ECN_CE
cdef long long _NO_TIMER  # NO_TIMER
cdef Py_ssize_t _DATA_HEADER  # DATA_HEADER_BYTES
cdef int _RETX_DSCP
cdef unsigned long long _DATA_DSCP_BITS  # DATA_DSCPS, bit d for DSCP d (0-63)
cdef unsigned long long _TRIMMED_DSCP_BITS  # TRIMMED_DSCPS, likewise
cdef Py_ssize_t _TC, _NH, _SPORT  # the offsets _outer_fields reads
cdef long _IPV6  # IPPROTO_IPV6

# frame_outer's three fields in one C integer (the EV is 32 bits: ev << 8 fits), -1: None;
# -2 with an exception set (frame None)
@cython.locals(vtcfl="long long", ev="long long")
cpdef long long _outer_fields(bytes frame) except? -2

# A dict's version (CPython's ma_version_tag, 3.11): it changes whenever the dict does, and
# no two dicts share one. SwitchNode's table of its out wires is read again when out's
# version is not the one it was read at (_HAS_DICT_VERSION 0: no table, out.get).
cdef extern from *:
    """
    #if PY_VERSION_HEX < 0x030C0000 && !defined(PYPY_VERSION)
    #define vf_has_dict_version 1
    #define vf_dict_version(d) (((PyDictObject *)(d))->ma_version_tag)
    #else
    #define vf_has_dict_version 0
    #define vf_dict_version(d) 0
    #endif
    """
    bint _HAS_DICT_VERSION "vf_has_dict_version"
    unsigned long long _dict_version "vf_dict_version"(dict d) noexcept

# the highest port (+ 1) SwitchNode's table of out wires holds
cdef Py_ssize_t _PORT_TABLE_MAX


cdef class SwitchNode(FrameSink):
    cdef public long long _armed
    # the pending wake-up times: the first _wake_count of _wake_at (room: _wake_room)
    cdef long long* _wake_at
    cdef Py_ssize_t _wake_count
    cdef Py_ssize_t _wake_room
    cdef public EventList events
    cdef public object name
    cdef public dict out
    cdef public Switch switch
    cdef public long long traversals
    cdef public long long unwired
    # SwitchOutput.output's table of out: _port_wires[p] is out.get(p) for 0 <= p <
    # _port_count (NULL: None), borrowed from _ports_of (the dict out was), read at its
    # version _ports_at (_ports_of None: not read yet); _port_count 0 when out has a key
    # or value the table cannot hold (out.get then)
    cdef PyObject** _port_wires
    cdef Py_ssize_t _port_count
    cdef object _ports_of
    cdef unsigned long long _ports_at

    @cython.locals(due="long long")  # Switch.inject_c: -1 for none
    cpdef receive(self, object port, bytes frame)
    @cython.locals(
        out=dict, count=Py_ssize_t, wires="PyObject**", key=object, value=object, p=long,
        overflow=int,
    )
    cdef _read_ports(self)
    # due: a time in ns (below 2**62, the event list's limit)
    @cython.locals(room=Py_ssize_t, at="long long*")
    cdef int _grow_wakes(self) except -1
    cpdef _arm(self, long long due)
    @cython.final  # receive's and fire_int's direct C call (_arm: the same from Python)
    @cython.locals(now="long long", count=Py_ssize_t, i=Py_ssize_t)
    cdef _wake_at_due(self, long long due)
    cpdef fire(self, object due)
    @cython.locals(count=Py_ssize_t, i=Py_ssize_t, after="long long")
    cpdef fire_int(self, long long due)


cdef class SwitchOutput(PortOutput):
    cdef public SwitchNode node

    @cython.locals(node=SwitchNode, wire=Wire, p=long, overflow=int)
    cpdef output(self, object port, object frame)


cdef class EvStats:
    cdef public long long ce_marked
    cdef public long long data_bytes
    cdef public long long dropped
    cdef public long long rx_packets
    cdef public long long trimmed
    cdef public long long tx_bytes
    cdef public long long tx_packets


cdef EvStats _new_stats()

cdef Py_ssize_t _EV_FIELDS, _CE_MARKED, _DATA_BYTES, _DROPPED, _RX_PACKETS, _TRIMMED
cdef Py_ssize_t _TX_BYTES, _TX_PACKETS
cdef unsigned long long _FIB
cdef Py_ssize_t _EV_FIRST


# one NIC node's per-EV counters in one direction (EvCounters): the EVs met (_count of
# them, room for _cap), their counters (_EV_FIELDS each, in EvStats' order) and the table
# of positions + 1 (0: free), 2 * _cap slots, picked by the top bits of ev * _FIB
cdef class EvCounters:
    cdef Py_ssize_t _cap
    cdef Py_ssize_t _count
    cdef long long* _counts
    cdef long long* _evs
    cdef dict _index  # the pure path's EV -> position (None compiled)
    cdef int _shift
    cdef int* _slots

    @cython.locals(
        cap=Py_ssize_t, evs="long long*", counts="long long*", slots="int*",
        size=Py_ssize_t, mask="unsigned long long", i=Py_ssize_t, h="unsigned long long",
    )
    cdef int _grow(self) except -1
    @cython.locals(
        mask="unsigned long long", h="unsigned long long", slots="int*", i=Py_ssize_t,
        counts="long long*", k=Py_ssize_t,
    )
    cdef Py_ssize_t _find(self, long long ev) except -1
    @cython.locals(result=dict, counts="long long*", i=Py_ssize_t, k=Py_ssize_t, s=EvStats)
    cpdef dict stats(self)


cdef class NicNode(FrameSink):
    cdef public long long _bin_ns
    cdef public long long _timer_at  # NO_TIMER: none pending
    cdef public object app_sink
    cdef public NicCore core
    cdef EvCounters _ev_rx
    cdef EvCounters _ev_tx
    cdef public EventList events
    cdef public object name
    cdef public object pfc
    cdef public dict retx_bytes
    cdef public list uplinks
    # per port (plane, _ports of them): data bytes arrived, placed_bins' open time bin
    # (-1: none) and its bytes; _placed holds the closed bins (NicNode.__init__)
    cdef dict _placed
    cdef Py_ssize_t _ports
    cdef long long* _rx_bytes
    cdef long long* _open_bin
    cdef long long* _open_bytes

    # dscp and ecn: 6 and 2 bits of the frame (mrc_wire.frames.frame_outer)
    @cython.locals(
        counters=EvCounters, i=Py_ssize_t, counts="long long*", now="long long",
        bins=dict, core=NicCore, dscp=int, fields="long long", ev="long long",
        p=Py_ssize_t, index="long long", placed="long long", before="long long",
    )
    cpdef receive(self, object port, bytes frame)
    @cython.locals(
        counters=EvCounters, i=Py_ssize_t, counts="long long*", wire=Wire,
        size=Py_ssize_t, payload=Py_ssize_t, dscp=int, fields="long long", ev="long long",
        uplinks=list, p=long, overflow=int,
    )
    cpdef _transmit(self, object plane, bytes frame)
    @cython.locals(counters=EvCounters, i=Py_ssize_t)
    cpdef count_drop(self, long long ev)
    @cython.locals(now="long long", core=NicCore, at="long long")
    cpdef service(self)
    cpdef fire(self, object deadline)
    cpdef fire_int(self, long long deadline)
