# Cython declarations for nic_emu/connection/rtt.py (pure-Python mode;
# docs/virtual-fabric.md, "Compiled hot path"): read only by the native build, the .py
# stays the reference. RttTimers becomes an extension type, every attribute declared here
# (an attribute added to the .py must be added here too). C doubles hold what the .py
# always computes as a float (the smoothed queueing delay, SRTT, RTTVAR); C integers the
# minimum RTT (an RTT sample, below 2**32, or NO_RTT), times taken from the driver's ns
# and counts. The timeouts (from the configuration, an int or a float, and shifted by a
# backoff) and the queueing delay's peak (an int sample or a float blend) stay Python
# objects. A sample (``sample``, ``smooth``) is taken as a C integer (the SACK's echoed
# timestamp's age, below 2**32) and its arithmetic done in C (session 20): the queueing
# delay's peak is read as a C double (an int or a float below 2**53: exact) and stored as
# the .py stores it (the sample, an int, or the blend, a float); the blend's gain is the
# same correctly rounded quotient (two exact doubles) as Python's true division.
cimport cython

from nic_emu.nic_host cimport nic_ns_ll


# min_rtt_ns before the first sample, and where a C double stops holding every int
# (rtt.py), as C values
cdef long long _NO_RTT, _EXACT_INT
cdef double _EXACT_DOUBLE


cdef class RttTimers:
    cdef public object cfg
    cdef public bint adaptive
    cdef public long long min_rtt_ns
    cdef public double qdelay_ns
    cdef public object qdelay_peak_ns
    cdef public long long qdelay_peak_at
    cdef public double srtt_ns
    cdef public double rttvar_ns
    cdef public object rto_ceiling
    cdef public object rto_base
    cdef public object rtt_bound
    cdef public long long last_ack_ns
    cdef public long long backoff
    cdef public object hold_until
    cdef public long long probe_misses
    # the configuration's base RTT and the floors of the reorder window, the quarantine
    # window and the RTO (an int or a float each): read per acknowledgement
    cdef public object base_rtt_ns
    cdef public object reorder_floor_ns
    cdef public object quarantine_floor_ns
    cdef public object rto_floor_ns

    cpdef object rto_ns(self)
    cpdef progress(self, object now)
    cpdef object probe_interval_ns(self)
    @cython.locals(sample="long long", peak=double, span=double, gain=double)
    cpdef sample(self, long long rtt, long long now)
    cpdef smooth(self, long long rtt)
    @cython.locals(c_window="long long")
    cpdef object reorder_window(self)
    @cython.locals(c_window="long long", rtt=double, twice=double, padded=double,
                   longest=double)
    cpdef object tail_probe_timeout(self)
    # reorder_window on C integers (-1: its floor is not an int below 2**53)
    @cython.locals(window="long long", term="long long")
    cdef long long _c_window(self) except? -2
    cpdef object hold_delay(self)
    # hold_delay on C integers (-1: its floor is not an int of 0 to 2**53)
    @cython.locals(hold="long long", term="long long")
    cpdef long long exact_hold_delay(self) except? -2
