# Cython declarations for nic_emu/connection/reverse.py (pure-Python mode;
# docs/virtual-fabric.md, "Compiled hot path"): read only by the native build, the .py
# stays the reference. ReverseEvs becomes an extension type, every attribute declared
# here (an attribute added to the .py must be added here too). C integers hold planes
# and slot positions (below the plane count and a count of acknowledgements); EVs, times
# and the configured periods stay Python objects.
cimport cython

from nic_emu.nic_host cimport NIC_NS_INEXACT, NicHost, nic_ns_ll

# pick's C path's bounds and its answer when a time is not an exact int (reverse.py)
cdef long long _HEARD_LIMIT, _PERIOD_LIMIT
cdef object _NOT_EXACT


cdef class ReverseEvs:
    cdef public object host
    cdef public object peer
    cdef public bint mrc
    cdef public list slots
    cdef public list pos
    cdef public list refreshed
    cdef public list heard
    cdef public list last_ev
    cdef public dict carrier
    cdef public object refresh_ns
    cdef public object stale_ns
    cdef public Py_ssize_t plane_rr

    cpdef seen(self, Py_ssize_t plane, object ev, object now)
    @cython.locals(slots=list)
    cpdef heard_on(self, Py_ssize_t plane, object ev, object now)
    @cython.locals(
        planes=Py_ssize_t, heard=list, slots=list, fallback=Py_ssize_t, start=Py_ssize_t,
        i=Py_ssize_t, p=Py_ssize_t, host=NicHost, peer_up=list, port_up=list,
    )
    cpdef object pick(self, object now)
    @cython.locals(
        n="long long", stale_ns="long long", refresh="long long", latest="long long",
        t="long long", stale="long long", fresh="long long", heard=list, slots=list,
        planes=Py_ssize_t, fallback=Py_ssize_t, start=Py_ssize_t, i=Py_ssize_t, p=Py_ssize_t,
        host=NicHost, peer_up=list, port_up=list,
    )
    cdef object _pick_exact(self, object now)
    @cython.locals(
        slots=list, n=Py_ssize_t, start=Py_ssize_t, k=Py_ssize_t, i=Py_ssize_t, host=NicHost,
    )
    cpdef object _fresh(self, Py_ssize_t plane, object stale)
    @cython.locals(slots=list, i=Py_ssize_t)
    cpdef object _next(self, Py_ssize_t plane)
