# Cython declarations for nic_emu/nic_host.py (pure-Python mode; docs/virtual-fabric.md,
# "Compiled hot path" and "NIC per packet, round 2"): read only by the native build, the
# .py stays the reference. NicHost becomes an extension type that NicCore derives from
# (nic_emu/core.pxd); the connection parts type their host as it, so the per-packet
# calls (heard_from, path_key, path_heard_ns, note_peer_ports, peer_port_up) and the
# ports up and bytes placed are C.
# Times stay Python objects; the plane count and the bytes placed are C integers.
cimport cython


# the EV's plane and T1 shifts, a path key's T1 bits and its end (nic_host.py), as C
# values
cdef long long _PLANE_SHIFT, _T1_SHIFT, _T1_FIELD, _KEY_END, _TIME_LIMIT


# An EV as a C integer (nic_host.py, _ev_index): an int in [0, 2**62) itself (CPython
# 3.11's layout: up to two 30-bit digits read in place; else PyLong_AsLongLongAndOverflow),
# -1 for any other int (negative, or 2**62 and past: beyond the fabric, as path_key says),
# -2 for a value that is not an int (the caller takes the Python expressions).
cdef extern from *:
    """
    static CYTHON_INLINE long long nic_ev_ll(PyObject *v) {
        int overflow = 0;
        long long x;
        if (!PyLong_Check(v)) return -2;
    #if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030C0000 && !defined(Py_LIMITED_API) && PyLong_SHIFT == 30
        if (PyLong_CheckExact(v)) {
            const digit *d = ((PyLongObject *)v)->ob_digit;
            switch (Py_SIZE(v)) {
            case 0: return 0;
            case 1: return (long long)d[0];
            case 2: return ((long long)d[1] << 30) | (long long)d[0];
            default: break;
            }
        }
    #endif
        x = PyLong_AsLongLongAndOverflow(v, &overflow);
        if (x == -1 && PyErr_Occurred()) { PyErr_Clear(); return -1; }
        if (overflow || x < 0 || x >= ((long long)1 << 62)) return -1;
        return x;
    }
    """
    long long nic_ev_ll(object v) noexcept


# A time as a C integer, for the parts' per-packet time arithmetic (reverse.py, pick):
# an exact int of magnitude at most ``limit`` (below 2**63) itself (CPython 3.11's
# layout: up to two 30-bit digits read in place; else PyLong_AsLongLongAndOverflow),
# NIC_NS_INEXACT (LLONG_MIN) for anything else (a float, a bool, a larger int), where the
# caller takes the .py's Python expressions.
cdef extern from *:
    """
    #define NIC_NS_INEXACT ((long long)(-0x7FFFFFFFFFFFFFFFLL - 1))
    static CYTHON_INLINE long long nic_ns_ll(PyObject *v, long long limit) {
        int overflow = 0;
        long long x;
        if (!PyLong_CheckExact(v)) return NIC_NS_INEXACT;
    #if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030C0000 && !defined(Py_LIMITED_API) && PyLong_SHIFT == 30
        {
            const digit *d = ((PyLongObject *)v)->ob_digit;
            switch (Py_SIZE(v)) {
            case 0: return 0;
            case 1: x = (long long)d[0]; return x <= limit ? x : NIC_NS_INEXACT;
            case -1: x = (long long)d[0]; return x <= limit ? -x : NIC_NS_INEXACT;
            case 2: x = ((long long)d[1] << 30) | (long long)d[0]; return x <= limit ? x : NIC_NS_INEXACT;
            case -2: x = ((long long)d[1] << 30) | (long long)d[0]; return x <= limit ? -x : NIC_NS_INEXACT;
            default: break;
            }
        }
    #endif
        x = PyLong_AsLongLongAndOverflow(v, &overflow);
        if (x == -1 && PyErr_Occurred()) { PyErr_Clear(); return NIC_NS_INEXACT; }
        if (overflow || x > limit || x < -limit) return NIC_NS_INEXACT;
        return x;
    }
    """
    long long NIC_NS_INEXACT
    long long nic_ns_ll(object v, long long limit) noexcept


@cython.locals(n="long long", t="long long", p="long long")
cpdef bint time_reached(object now, object since, object period) except -1


cdef class NicHost:
    cdef public Py_ssize_t plane_count
    cdef public list _t1_counts
    cdef public list port_up
    cdef public dict _peer_ports
    cdef public dict _peer_bits
    cdef public dict peer_heard_ns
    cdef public list _path_base
    cdef public Py_ssize_t _path_total
    cdef public dict _peer_paths
    cdef object _last_peer
    cdef list _last_paths
    cdef object _ports_peer
    cdef list _ports_last
    cdef object _bits_peer
    cdef object _bits_last
    cdef public long long placed_bytes

    cpdef object path_key(self, object ev)
    @cython.locals(plane="long long", key="long long", t1_count="long long")
    cdef long long _path_key(self, long long ev) except? -2
    @cython.locals(plane="long long", t1="long long", t1_count="long long", base="long long")
    cdef Py_ssize_t _key_index(self, long long key) except? -9
    @cython.locals(e="long long")
    cdef Py_ssize_t _ev_index(self, object ev) except? -9
    @cython.locals(paths=list, found=list, i=Py_ssize_t)
    cpdef heard_from(self, object peer, object ev, object now)
    @cython.locals(paths=list, i=Py_ssize_t)
    cpdef object path_heard_ns(self, object peer, object key)
    @cython.locals(paths=list, i=Py_ssize_t)
    cpdef object ev_heard_ns(self, object peer, object ev)
    @cython.locals(found=list)
    cpdef list peer_port_up(self, object peer)
    cpdef note_peer_ports(self, object peer, object bits, object now)
    cpdef peer_ports_changed(self, object peer, object bits, object now)
