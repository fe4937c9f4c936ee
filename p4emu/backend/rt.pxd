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
    cdef public bytes packet
    cdef public Py_ssize_t payload_at
    cdef public object recirculate
    cdef public object resubmit
    cdef public object sm
    cdef public object truncate

    cpdef reset_requests(self)
    cpdef renew(self, long long ingress_length)
    cpdef set_payload(self, object packet, Py_ssize_t at)


# v1model's standard metadata (STANDARD_METADATA_FIELDS): every field is a bit<W> with W
# at most 48, held as a C integer; parser_error (an error code) stays an object.
cdef class StandardMetadata:
    cdef public long long ingress_port
    cdef public long long egress_spec
    cdef public long long egress_port
    cdef public long long instance_type
    cdef public long long packet_length
    cdef public long long enq_timestamp
    cdef public long long enq_qdepth
    cdef public long long deq_timedelta
    cdef public long long deq_qdepth
    cdef public long long ingress_global_timestamp
    cdef public long long egress_global_timestamp
    cdef public long long mcast_grp
    cdef public long long egress_rid
    cdef public long long checksum_error
    cdef public object parser_error
    cdef public long long priority


# A program's blocks (rt.Blocks): its generated ProgramBlocks derives from this and
# overrides every method (p4emu.backend.native.BLOCKS_METHODS repeats these lines), so
# the switch calls them through the C vtable. The parser's offset is a byte offset into
# a frame (far below 2**63; never -1).
cdef class Blocks:
    cpdef long long parse_block(
        self, object data, object hdr, object meta, object sm, PacketContext ctx
    ) except? -1
    cpdef verify_block(self, object hdr, object meta, PacketContext ctx)
    cpdef ingress_block(self, object hdr, object meta, object sm, PacketContext ctx)
    cpdef egress_block(self, object hdr, object meta, object sm, PacketContext ctx)
    cpdef compute_block(self, object hdr, object meta, PacketContext ctx)
    cpdef deparse_block(self, object hdr, PacketContext ctx)
    cpdef init_packet(self, object hdr, object meta, object sm)
