# Cython declarations for nic_emu/connection/probes.py (pure-Python mode;
# docs/virtual-fabric.md, "Compiled hot path"): read only by the native build, the .py
# stays the reference. PathProbes becomes an extension type, every attribute declared
# here (an attribute added to the .py must be added here too); it reads the EV set, the
# RTT timers, the send state and their packets as C structs. Times that add a configured
# interval (``next_ns``, ``round_ns``) and the configured thresholds stay Python objects.
cimport cython

from mrc_wire.codec cimport Probe, encode_probe
from nic_emu.connection.records cimport ConnectionCounters
from nic_emu.connection.rtt cimport RttTimers
from nic_emu.nic_host cimport NIC_NS_INEXACT, nic_ns_ll
from nic_emu.ev_set cimport EvEntry, EvSet
from nic_emu.sender cimport SendState, TxPacket


# quarantine_overdue's bound for a threshold read as a C integer (probes.py)
cdef long long _LIMIT


cdef class PathProbes:
    cdef public object host
    cdef public EvSet evs
    cdef public RttTimers timers
    cdef public list templates
    cdef public object peer_qpn
    cdef public ConnectionCounters counters
    cdef public object log
    cdef public object qpn
    cdef public object per_path
    cdef public object success_threshold
    cdef public object overdue_threshold
    cdef public bint share
    cdef public object next_ns
    cdef public object round_ns
    cdef public dict held
    cdef public set shared
    cdef public bint heard

    cpdef arm(self, object now)
    cpdef _due(self, object t)
    @cython.locals(
        evs=EvSet, pkt=TxPacket, e=EvEntry, q=list, i=Py_ssize_t, threshold="long long",
        hold="long long",
    )
    cpdef quarantine_overdue(self, SendState send, object now)
    @cython.locals(evs=EvSet, pkt=TxPacket, e=EvEntry, q=list, i=Py_ssize_t)
    cdef _hold_overdue(self, SendState send, long long limit_seq, long long limit_sent, object now)
    @cython.locals(evs=EvSet)
    cpdef bint hold_path(
        self, EvEntry e, object psn, object sent_ns, object why, object now
    ) except -1
    @cython.locals(evs=EvSet, probes=dict, e=EvEntry)
    cpdef review_quarantine(self, object now, list out)
    cpdef clear_quarantine(self, object path, object by, object now)
    @cython.locals(p=Probe)
    cpdef send_probe(self, EvEntry e, object now, list out)
    @cython.locals(p=Probe)
    cpdef tuple send_tail_probe(self, EvEntry e, object psn, object now)
