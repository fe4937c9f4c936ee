# Cython declarations for nic_emu/connection/timers.py (pure-Python mode;
# docs/virtual-fabric.md, "Compiled hot path"): read only by the native build, the .py
# stays the reference. Deadlines becomes an extension type, every attribute declared
# here (an attribute added to the .py must be added here too); it reads the send state,
# the RTT timers, the probes and the tail-loss probe as C structs and calls them through
# vtables. The receive side's and the send turn's waits (``acks``, ``waits``) stay
# Python objects: the deadlines know them through protocols (AckSchedule, SendWaits),
# which unit tests fill with doubles; timer_deadline reads them as C fields when they are
# the connection's own Receiver and Transmitter (cimported). Deadlines are None or a time
# that may add a configured value (an int or a float): Python objects, as timer_deadline
# returns them; it computes them on C integers (exact_deadline: each term read as one
# when it is an int below 2**60 in magnitude, NO_DEADLINE for None) and takes the .py's
# general path only when a term is not (a float).
cimport cython

from nic_emu.connection.feedback cimport Losses, TailProbe
from nic_emu.connection.probes cimport PathProbes
from nic_emu.connection.receive cimport Receiver
from nic_emu.connection.rtt cimport RttTimers
from nic_emu.connection.transmit cimport Transmitter
from nic_emu.ev_set cimport EvSet
from nic_emu.nic_host cimport NicHost
from nic_emu.sender cimport SendState, TxPacket


# A deadline term as a C integer (timers.py, time_key): an exact int of magnitude below
# 2**60 itself (CPython 3.11's layout: at most two 30-bit digits, read in place; else
# PyLong_AsLongLongAndOverflow), None NIC_NO_TIME, anything else NIC_INEXACT.
cdef extern from *:
    """
    #define NIC_NO_TIME ((long long)0x7FFFFFFFFFFFFFFFLL)
    #define NIC_INEXACT (-NIC_NO_TIME - 1)
    #define NIC_TIME_LIMIT ((long long)1 << 60)
    static CYTHON_INLINE long long nic_time_ll(PyObject *v) {
        if (v == Py_None) return NIC_NO_TIME;
        if (!PyLong_CheckExact(v)) return NIC_INEXACT;
    #if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030C0000 && !defined(Py_LIMITED_API) && PyLong_SHIFT == 30
        {
            const digit *d = ((PyLongObject *)v)->ob_digit;
            switch (Py_SIZE(v)) {
            case 0: return 0;
            case 1: return (long long)d[0];
            case -1: return -(long long)d[0];
            case 2: return ((long long)d[1] << 30) | (long long)d[0];
            case -2: return -(((long long)d[1] << 30) | (long long)d[0]);
            default: return NIC_INEXACT;
            }
        }
    #else
        {
            int overflow = 0;
            long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
            if (x == -1 && PyErr_Occurred()) { PyErr_Clear(); return NIC_INEXACT; }
            if (overflow || x >= NIC_TIME_LIMIT || x <= -NIC_TIME_LIMIT) return NIC_INEXACT;
            return x;
        }
    #endif
    }
    """
    long long nic_time_ll(object v) noexcept


# the C integers' bound, "no deadline" and "not an int" (timers.py), as C values
cdef long long _TIME_LIMIT, _NO_DEADLINE, _INEXACT

cpdef long long time_key(object value) noexcept
@cython.locals(up=object)
cdef bint _any_port_up(list ports) except -1


cdef class Deadlines:
    cdef public NicHost host
    cdef public object qp
    cdef public SendState send
    cdef public EvSet evs
    cdef public RttTimers timers
    cdef public object acks
    cdef public object waits
    cdef public PathProbes probes
    cdef public TailProbe tail
    cdef public Losses losses
    cdef public object peer
    cdef public object peer_qpn
    cdef public bint mrc
    cdef public object gbn
    cdef public object counters
    cdef public object log
    cdef public object peer_timeout_ns
    cdef public object max_retries
    cdef public object quiet_since
    cdef public object no_ev_timeout_ns
    cdef public bint by_peer

    cpdef object next_deadline(self)
    @cython.locals(send=SendState, timers=RttTimers, exact="long long")
    cpdef object timer_deadline(self)
    @cython.locals(
        best="long long", rate_wait="long long", no_ev_since="long long", t="long long",
        sent="long long", rto="long long", hold="long long", quiet="long long",
        heard="long long", limit="long long", pkt=TxPacket, timers=RttTimers,
        tail=TailProbe, host=NicHost,
    )
    cpdef long long exact_deadline(self) except? -1
    @cython.locals(host=NicHost)
    cpdef object peer_deadline(self)
    cpdef peer_answered(self, object now)
    @cython.locals(out=list)
    cpdef list on_timer(self, object now)
    @cython.locals(send=SendState, timers=RttTimers, pkt=TxPacket, late=TxPacket)
    cpdef check_timeouts(self, object now)
    @cython.locals(timers=RttTimers)
    cpdef silent_timeout(self, object now, object what)
