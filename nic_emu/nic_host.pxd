# Cython declarations for nic_emu/nic_host.py (pure-Python mode; docs/virtual-fabric.md,
# "Compiled hot path" and "NIC per packet, round 2"): read only by the native build, the
# .py stays the reference. NicHost becomes an extension type that NicCore derives from
# (nic_emu/core.pxd); the connection parts type their host as it, so the per-packet
# calls (heard_from, path_key, path_heard_ns, note_peer_ports, peer_port_up) and the
# ports up and bytes placed are C.
# Times stay Python objects; the plane count and the bytes placed are C integers.
cimport cython


# the EV's plane and T1 shifts (nic_host.py), as C values
cdef long long _PLANE_SHIFT, _T1_SHIFT


cdef class NicHost:
    cdef public Py_ssize_t plane_count
    cdef public list _t1_counts
    cdef public list port_up
    cdef public dict _peer_ports
    cdef public dict _peer_bits
    cdef public dict peer_heard_ns
    cdef public dict _peer_paths
    cdef public long long placed_bytes

    cpdef object path_key(self, object ev)
    @cython.locals(plane="long long", key="long long", t1_count="long long")
    cdef long long _path_key(self, long long ev) except? -2
    @cython.locals(paths=dict)
    cpdef heard_from(self, object peer, object ev, object now)
    @cython.locals(paths=dict)
    cpdef object path_heard_ns(self, object peer, object key)
    @cython.locals(found=list)
    cpdef list peer_port_up(self, object peer)
    cpdef note_peer_ports(self, object peer, object bits, object now)
    cpdef peer_ports_changed(self, object peer, object bits, object now)
