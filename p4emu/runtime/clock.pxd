# Cython declarations for p4emu/runtime/clock.py (pure-Python mode;
# docs/virtual-fabric.md, "Compiled hot path"): read only by the native build, the .py
# stays the reference. The clocks become extension types whose reads are C methods (the
# traffic manager, the switch and the fabric's event list read or set the clock on every
# packet and event); the time stays a Python int (a virtual clock may be set anywhere).
# ClockBase: the base whose reads code that knows a clock's class makes as C calls (the
# switch and the traffic manager, for a clock that derives from it).


cdef class ClockBase:
    cpdef now_ns(self)
    cpdef now_us(self)


cdef class RealClock(ClockBase):
    cdef public object _origin_ns

    cpdef now_ns(self)
    cpdef now_us(self)


cdef class VirtualClock(ClockBase):
    cdef public object _ns

    cpdef now_ns(self)
    cpdef now_us(self)
    cpdef set_ns(self, object ns)


# a clock read as a C call when it derives from ClockBase (the switch, the traffic manager)
cpdef object read_ns(object clock)
cpdef object read_us(object clock)
