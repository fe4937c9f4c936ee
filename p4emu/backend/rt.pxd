# Cython declarations for p4emu/backend/rt.py (pure-Python mode; docs/virtual-fabric.md,
# "Compiled hot path"): read only by the native build, the .py stays the reference.
# PacketContext becomes an extension type that p4emu.switch and the generated code of
# every P4 program (its .pxd cimports this one) read as a C struct. Its two lengths are
# packet lengths in bytes (a frame's length plus or minus the header bytes setValid /
# setInvalid add or remove: far below 2**63); everything else keeps its Python type.


cdef class PacketContext:
    cdef public long long checksum_error
    cdef public object clone_copier
    cdef public object clone_session
    cdef public object digest
    cdef public object hdr
    cdef public long long ingress_length
    cdef public long long length_reg
    cdef public object meta
    cdef public object payload
    cdef public object recirculate
    cdef public object resubmit
    cdef public object sm
    cdef public object truncate

    cpdef reset_requests(self)
