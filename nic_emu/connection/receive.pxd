# Cython declarations for nic_emu/connection/receive.py (pure-Python mode;
# docs/virtual-fabric.md, "Compiled hot path"): read only by the native build, the .py
# stays the reference. Receiver becomes an extension type, every attribute declared here
# (an attribute added to the .py must be added here too); it reaches the reverse EV set
# and the message tracker as C structs and vtable calls. C integers hold counts of bytes
# and packets; PSNs (unwrapped from 24 bits, shifted against the bitmap), times and the
# configured values stay Python objects.
cimport cython

from mrc_wire.codec cimport DataPacket, Nack, Probe, Sack, encode_nack, encode_sack
from nic_emu.connection.records cimport ConnectionCounters
from nic_emu.connection.reverse cimport ReverseEvs
from nic_emu.nic_host cimport NicHost, time_reached
from nic_emu.receiver cimport MessageTracker, ReceiveState
from nic_emu.streams cimport StreamReceiver


# An int's bit_count() read from its digits (CPython 3.11's layout: 30-bit digits holding
# the magnitude, whose popcount int.bit_count() returns); -1 where that layout is not
# known (another Python, another compiler, not an exact int): the caller then calls
# int.bit_count(). The SACK's count of PSNs beyond the cumulative point, per SACK.
# Inline: every module that cimports this file compiles a copy, which only receive.py
# calls (a static one, unused, drew "defined but not used" from gcc elsewhere).
cdef extern from *:
    """
    static CYTHON_INLINE Py_ssize_t nic_int_bit_count(PyObject *v) {
    #if PY_VERSION_HEX < 0x030C0000 && !defined(Py_LIMITED_API) && (defined(__GNUC__) || defined(__clang__))
        if (PyLong_CheckExact(v)) {
            Py_ssize_t n = Py_SIZE(v), i, count = 0;
            const digit *d = ((PyLongObject *)v)->ob_digit;
            if (n < 0) n = -n;
            for (i = 0; i < n; i++) count += __builtin_popcount((unsigned int)d[i]);
            return count;
        }
    #endif
        (void)v;
        return -1;
    }
    """
    Py_ssize_t nic_int_bit_count(object v) noexcept


# the PSN unwrap's masks, the SACK's byte count's and accept's answers (receive.py), as
# C values
cdef long long _PSN_MASK, _PSN_HALF, _TS_MASK, _DUPLICATE, _NEW_IN_ORDER, _OUT_OF_WINDOW


cdef class Receiver:
    cdef public object host
    cdef public object peer
    cdef public object qpn
    cdef public object peer_addrs
    cdef public bint mrc
    cdef public bint ready
    cdef public object recv
    cdef public MessageTracker msgs
    cdef public object va_prune_at
    cdef public long long rcvd_bytes
    cdef public long long sack_pending
    cdef public object sack_deadline
    cdef public object sack_every
    cdef public object sack_delay
    cdef public tuple sack_trigger
    cdef public object regions
    cdef public StreamReceiver sink
    cdef public ReverseEvs reverse
    cdef public list _heard
    cdef public list _last_ev
    cdef public list _refreshed
    cdef public object _refresh_ns
    cdef public list _src_ok
    cdef public list stmpl
    cdef public list ntmpl
    cdef public ConnectionCounters counters
    cdef public object log
    cdef public object cnp

    @cython.locals(
        counters=ConnectionCounters, msgs=MessageTracker, length="long long", mrc=bint, sink=StreamReceiver,
        host=NicHost, mrc_state=bint, rcv_nxt="long long", wire_psn="long long", cum="long long",
        psn=object, src=bytes, result="long long",
    )
    cpdef object on_data(self, DataPacket m, Py_ssize_t plane, object now)
    cpdef bint already_received(self, object psn) except -1
    cpdef object on_reliability_probe(self, Probe p, object plane, object now)
    cpdef object on_timer(self, object now)
    @cython.locals(s=Sack, rs=ReceiveState, cum="long long", count=Py_ssize_t)
    cpdef object send_sack(
        self, object now, object echoed_ev, object trigger_psn, object echoed_ts,
        object ecn, object probe_reply=*
    )
    @cython.locals(n=Nack)
    cpdef object send_nack(
        self, object now, object reason, object psn, object echoed_ev, object echoed_ts,
        object ecn
    )
