# Cython declarations for p4emu/runtime/clock.py (pure-Python mode;
# docs/virtual-fabric.md, "Compiled hot path"): read only by the native build, the .py
# stays the reference. The clocks become extension types whose reads are C methods (the
# traffic manager, the switch and the fabric's event list read or set the clock on every
# packet and event); the time stays a Python int (a virtual clock may be set anywhere).
# ClockBase: the base whose reads code that knows a clock's class makes as C calls (the
# switch and the traffic manager, for a clock that derives from it).
cimport cython

cdef long long _NS_PER_US  # NS_PER_US


cdef class ClockBase:
    cpdef now_ns(self)
    cpdef now_us(self)


cdef class RealClock(ClockBase):
    cdef public object _origin_ns

    cpdef now_ns(self)
    cpdef now_us(self)


cdef class VirtualClock(ClockBase):
    # the time: an int object (None compiled when only _c_ns holds it: _time makes it)
    cdef object _ns
    # the time as a C integer when it is an int from 0 to 2**63 - 1, else -1 (_mirror):
    # what read_ns, read_us and the event list's _c_set use
    cdef long long _c_ns

    cpdef now_ns(self)
    cpdef now_us(self)
    cpdef set_ns(self, object ns)
    cdef object _time(self)
    @cython.locals(ns=object)
    cdef int _mirror(self) except -1
    # set_ns(ns) as a C call (the event list's move to an event's time)
    cdef int _c_set(self, long long ns) except -1


# a clock's time as a C call when it derives from ClockBase (the switch, the traffic
# manager), a C integer (the callers keep it as one; a VirtualClock's read in C)
@cython.locals(vc=VirtualClock)
cpdef long long read_ns(object clock) except? -1
@cython.locals(vc=VirtualClock)
cpdef long long read_us(object clock) except? -1
