# Cython declarations for nic_emu/congestion.py (pure-Python mode; docs/virtual-fabric.md,
# "Compiled hot path"): read only by the native build, the .py stays the reference.
# The window controls become extension types under one base (WindowControl: the sender
# reads either's window as one C struct and calls its methods through one table), every
# attribute declared here (an attribute added to the .py must be added here too). C
# integers hold byte counts (windows, bytes acknowledged) and times taken from the
# driver's ns; C doubles only what the .py always computes as a float (a true division
# or a float's product: the rate, the gains scaled by the BDP, the average delay and the
# accumulated increase). A value taken from the configuration as given (an int or a
# float: base RTT, gains, thresholds) stays a Python object. An acknowledgement's bytes,
# the bytes in flight and its delay (``on_ack``, session 20) are C values: the delay an
# int below 2**53 (an RTT sample minus the base RTT: exact as a double) or the average
# (a float), so every comparison and product with it gives what the .py's int or float
# gives; a comparison with a Python-object threshold boxes it (exactly).
# On the native build on_ack takes its steps on C numbers (_exact_ack, session 28) when
# every term it reads is exact: times as C integers (nic_host.pxd's nic_ns_ll), the
# thresholds and the gain as C doubles that compare and compute as the Python numbers do
# (_exact_double); any other term takes the .py's expressions.
cimport cython

from nic_emu.nic_host cimport NIC_NS_INEXACT, nic_ns_ll

# _exact_ack's bounds and _exact_double's "not exact" (congestion.py), as C values
cdef long long _TIME_LIMIT, _EXACT_INT
cdef double _NOT_EXACT

@cython.locals(x=double, n="long long")
cdef double _exact_double(object value) except? -2.0


cdef class WindowControl:
    cdef public long long cwnd
    cdef public long long max_wnd

    cpdef on_ack(
        self, long long nbytes, object ecn, object rtt_ns, object now, long long inflight=*
    )
    cpdef on_nack(self, object nbytes, object now, object inflight=*)
    cpdef on_loss(self, object nbytes, object now)


cdef class FixedWindow(WindowControl):
    pass


cdef class Nscc(WindowControl):
    cdef public long long mtu
    cdef public object network_rtt_ns
    cdef public double rate
    cdef public object max_window_bdps
    cdef public long long target_ns
    cdef public object gamma
    cdef public object max_md_jump
    cdef public double fair_inc
    cdef public double fast_scale
    cdef public double eta
    cdef public double alpha
    cdef public object adjust_bytes
    cdef public long long adjust_period_ns
    cdef public object clear_delay_ns
    cdef public object delay_gain
    cdef public bint quick_adapt
    cdef public object qa_threshold_ns
    cdef public long long qa_gate
    cdef public object base_rtt_ns
    cdef public double avg_delay
    cdef public double inc_bytes
    cdef public long long acked_since_adjust
    cdef public long long last_adjust_ns
    cdef public long long last_decrease_ns
    cdef public long long fast_count
    cdef public bint fast_mode
    cdef public long long achieved
    cdef public object qa_end_ns
    cdef public bint qa_trigger
    cdef public long long ignore_bytes
    cdef public long long ignored
    cdef public long long decreases
    cdef public long long quick_adapts
    cdef public object delay_md
    cdef public object last_rtt_ns

    @cython.locals(delay=double, target="long long")
    cpdef on_ack(
        self, long long nbytes, object ecn, object rtt_ns, object now, long long inflight=*
    )
    @cython.locals(
        n="long long", rtt="long long", base="long long", qa_end="long long", gain=object,
        clear=double, qa_threshold=double, adjust_bytes=double, target="long long",
        mark=bint, delay=double, sample=double, done=bint,
    )
    cdef bint _exact_ack(
        self, long long nbytes, object ecn, object rtt_ns, object now, long long inflight
    ) except -1
    cpdef on_nack(self, object nbytes, object now, object inflight=*)
    cpdef on_loss(self, object nbytes, object now)
    cpdef _base_rtt(self, object rtt_ns)
    cpdef _average(self, double delay, object ecn)
    cpdef bint _quick_adapt(
        self, object loss, object ecn, double delay, object now, long long inflight
    ) except -1
    cpdef bint _fast_increase(self, long long nbytes, double delay) except -1
    cpdef _multiplicative_decrease(self, object now)
    cpdef _adjust(self, object now)
    cpdef _bound(self)
    cpdef _shrink(self, object nbytes)
