# Cython declarations for nic_emu/connection/transmit.py (pure-Python mode;
# docs/virtual-fabric.md, "Compiled hot path"): read only by the native build, the .py
# stays the reference. The data frames and the send turn become extension types, every
# attribute declared here (an attribute added to the .py must be added here too); they
# reach the send state, the EV set, its entries and the window control as C structs and
# vtable calls. C integers hold the payload size, a plane and a send time (the driver's
# ns); the waits (None or a time) and the configured window stay Python objects.
cimport cython

from mrc_wire.codec cimport DataPacket, encode_data
from nic_emu.congestion cimport WindowControl
from nic_emu.connection.records cimport ConnectionCounters
from nic_emu.ev_set cimport EvEntry, EvSet
from nic_emu.nic_host cimport nic_ns_ll
from nic_emu.sender cimport SendState, TxPacket, WriteRequest

# a data packet's masks, a send time's bound and nic_ns_ll's "not read" (transmit.py), as
# C values
cdef long long _PSN_MASK, _TS_MASK, _NOW_LIMIT, _INEXACT


cdef class DataTransmitter:
    cdef public list templates
    cdef public list port_free_at
    cdef public object ns_per_byte
    cdef public list plane_tx
    cdef public object trace
    cdef public ConnectionCounters counters
    cdef public object log
    cdef public long long last_tx_ns

    @cython.locals(
        plane=Py_ssize_t, wr=WriteRequest, offset="long long", length="long long",
        rtx=bint, size=Py_ssize_t, frame=bytes, counters=ConnectionCounters, t=DataPacket,
        ns_per_byte=object, wire_ns=object, n="long long",
    )
    cpdef tuple transmit(self, TxPacket pkt, EvEntry entry, SendState send, object now)


cdef class Transmitter:
    cdef public object qp
    cdef public DataTransmitter frames
    cdef public SendState send
    cdef public EvSet evs
    cdef public WindowControl cc
    cdef public object dcqcn
    cdef public long long _mtu
    cdef public object _window
    cdef public list _port_free_at
    cdef public object rate_wait_ns
    cdef public object no_ev_since
    cdef public object pace_at
    cdef public Py_ssize_t pace_plane
    cdef public bint pace_fixed

    cpdef stop(self)
    cpdef on_timer(self, object now)
    @cython.locals(send=SendState, inflight="long long")
    cpdef bint window_blocked(self) except -1
    @cython.locals(w="long long")
    cdef bint _room(self, SendState send) except -1
    @cython.locals(
        send=SendState, inflight="long long", entry=EvEntry, pkt=TxPacket, sent=tuple,
    )
    cpdef object send_one(self, object now)
