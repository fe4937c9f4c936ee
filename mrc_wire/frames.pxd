# Cython declarations for mrc_wire/frames.py (pure-Python mode; docs/virtual-fabric.md,
# "Typed declarations: the NIC's wire codecs"): read only by the native build, the .py
# stays the reference. The private offsets are C values; the public constants
# (DATA_HEADER_BYTES, DATA_DSCPS, ...) stay module attributes, which vfabric imports.
# frame_outer, which a NIC node runs for every frame it sends and receives, computes the
# EV, DSCP and ECN in C (at most 32 bits each).
cimport cython

cdef Py_ssize_t _INNER, _INNER_SRC, _INNER_DST, _UDP_SPORT, _BTH, _DQPN
cdef object _unpack_outer

@cython.locals(vtcfl="long long", nh="long long", sport="long long")
cpdef tuple frame_outer(object frame)
