# Cython declarations for p4emu/runtime/clock.py (pure-Python mode;
# docs/virtual-fabric.md, "Compiled hot path"): read only by the native build, the .py
# stays the reference. The clocks become extension types whose reads are C methods (the
# traffic manager, the switch and the fabric's event list read or set the clock on every
# packet and event); the time stays a Python int (a virtual clock may be set anywhere).


cdef class RealClock:
    cdef public object _origin_ns

    cpdef now_ns(self)
    cpdef now_us(self)


cdef class VirtualClock:
    cdef public object _ns

    cpdef now_ns(self)
    cpdef now_us(self)
    cpdef set_ns(self, object ns)
