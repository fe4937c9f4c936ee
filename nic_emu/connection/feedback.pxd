# Cython declarations for nic_emu/connection/feedback.py (pure-Python mode;
# docs/virtual-fabric.md, "Compiled hot path"): read only by the native build, the .py
# stays the reference. Losses, TailProbe and Feedback become extension types, every
# attribute declared here (an attribute added to the .py must be added here too); they
# reach the send state and its packets, the EV set and its entries, the window control,
# the RTT timers, the reverse EV set and the probes as C structs and vtable calls. The
# SACK's cumulative PSN and the wider record of what is acknowledged (``send.sacked``,
# shifted past 64 bits) stay Python ints, as do the configured thresholds; C integers
# hold the probe's send time (the driver's ns) and on_sack's walk of the SACK's 64-bit
# bitmap (each PSN it names: the bitmap's base plus a set bit's index).
cimport cython

from mrc_wire.codec cimport Nack, Sack
from nic_emu.congestion cimport WindowControl
from nic_emu.connection.probes cimport PathProbes
from nic_emu.connection.records cimport ConnectionCounters
from nic_emu.connection.reverse cimport ReverseEvs
from nic_emu.connection.rtt cimport RttTimers
from nic_emu.connection.transmit cimport DataTransmitter
from nic_emu.ev_set cimport EvEntry, EvSet
from nic_emu.nic_host cimport NicHost, nic_ns_ll, time_reached
from nic_emu.sender cimport SendState, TxPacket, WriteRequest, unwrap

cdef object _BITS64
# on_sack's bounds for times read as C integers, nic_ns_ll's "not read" and the echoed
# timestamp's mask (feedback.py), as C values
cdef long long _TIME_LIMIT, _RTT_LIMIT, _INEXACT, _TS_MASK
# The index of the lowest set bit of a non-zero 64-bit word (on_sack's walk of a SACK's
# bitmap; docs/virtual-fabric.md, "NIC per packet, round 10").
cdef extern from *:
    """
    static CYTHON_INLINE int nic_lowest_bit(unsigned long long x) {
    #if defined(__GNUC__) || defined(__clang__)
        return __builtin_ctzll(x);
    #else
        int i = 0;
        while (!(x & 1)) { x >>= 1; i++; }
        return i;
    #endif
    }
    """
    int _lowest_bit "nic_lowest_bit"(unsigned long long x) noexcept


cdef class Losses:
    cdef public object qp
    cdef public SendState send
    cdef public EvSet evs
    cdef public WindowControl cc
    cdef public RttTimers timers
    cdef public PathProbes probes
    cdef public bint mrc
    cdef public object quarantine
    cdef public object max_transmissions
    cdef public ConnectionCounters counters
    cdef public object log

    @cython.locals(entry=EvEntry, timers=RttTimers)
    cpdef lost(self, TxPacket pkt, object reason, object now)
    cpdef queue_retransmit(self, TxPacket pkt, object reason, object now)


cdef class TailProbe:
    cdef public object qp
    cdef public SendState send
    cdef public EvSet evs
    cdef public WindowControl cc
    cdef public RttTimers timers
    cdef public DataTransmitter frames
    cdef public PathProbes probes
    cdef public Losses losses
    cdef public bint mrc
    cdef public long long mtu
    cdef public object window
    cdef public bint armed
    cdef public long long sent_ns

    @cython.locals(send=SendState, inflight="long long")
    cpdef object deadline(self)
    @cython.locals(w="long long")
    cdef bint _room(self, SendState send) except -1
    @cython.locals(entry=EvEntry)
    cpdef object send_probe(self, object now)
    @cython.locals(pkt=TxPacket)
    cpdef bint answered(self, object window, object now) except -1


cdef class Feedback:
    cdef public object host
    cdef public object qp
    cdef public object qpn
    cdef public object peer
    cdef public object peer_addrs
    cdef public list _src_ok
    cdef public bint mrc
    cdef public object window_psns
    cdef public object reorder_threshold
    cdef public object quarantine
    cdef public SendState send
    cdef public EvSet evs
    cdef public WindowControl cc
    cdef public RttTimers timers
    cdef public ReverseEvs reverse
    cdef public PathProbes probes
    cdef public Losses losses
    cdef public TailProbe tail
    cdef public object gbn
    cdef public object dcqcn
    cdef public ConnectionCounters counters
    cdef public object log

    @cython.locals(
        reverse=ReverseEvs, send=SendState, timers=RttTimers, pkt=TxPacket, entry=EvEntry,
        probes=list, host=NicHost, ambiguous_after="long long", acked="long long",
        rtt="long long", bits="unsigned long long", known="unsigned long long", low=int,
        base="long long", shift="long long", nxt="long long", psn="long long", news=object,
        src=bytes, n="long long", t="long long", min_rtt="long long",
    )
    cpdef object on_sack(self, Sack s, Py_ssize_t plane, object now)
    @cython.locals(send=SendState, w="long long", th="long long", pkt=TxPacket)
    cdef bint _reorder_losses(self, object window, object now) except -1
    @cython.locals(send=SendState, done=list, wr=WriteRequest)
    cpdef complete_writes(self, object now)
    @cython.locals(send=SendState, pkt=TxPacket, host=NicHost)
    cpdef on_nack(self, Nack n, object plane, object now)
