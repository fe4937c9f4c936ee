# Cython declarations for p4emu/switch.py (pure-Python mode; docs/virtual-fabric.md,
# "Compiled hot path"): read only by the native build, the .py stays the reference.
# Switch becomes an extension type, every attribute declared here (an attribute added
# to the .py must be added here too: the native build refuses to set an undeclared
# one); its per-packet methods are cpdef and reach the packet context and the traffic
# manager as C structs and C calls. C integers: the packet counters and a packet's
# length (bytes), nothing else.
cimport cython

from p4emu.backend.rt cimport Blocks, PacketContext, StandardMetadata
from p4emu.runtime.clock cimport read_us
from p4emu.runtime.traffic_manager cimport QueuedPacket, TrafficManager

cdef long long _NS_PER_US  # NS_PER_US (1000): deq_ns is a C integer, and so the quotient
cdef long long _MASK32  # 2**32 - 1, 2**48 - 1: the queueing fields' masks as C integers
cdef long long _MASK48
cdef long long _NORMAL  # PKT_INSTANCE_TYPE_NORMAL, compared with a C instance type


cdef class PortOutput:
    cpdef output(self, object port, object frame)


cdef class Switch:
    cdef public object clock
    # the drop port and the CPU port (-1: none), read by the properties drop_port, cpu_port
    cdef readonly long long _drop_port
    cdef readonly long long _cpu_port
    cdef public object pre
    cdef public object digest_queue
    cdef public object random
    cdef public object program
    cdef public object objects
    cdef public TrafficManager tm
    cdef public list _hi
    cdef public list _outputs
    cdef public object output_callback
    cdef public PortOutput output_sink
    cdef public object admission_callback
    cdef public object release_callback
    cdef public object packet_in_callback
    cdef public object log_callback
    cdef public object trace_callback
    cdef public bint _trace_enabled
    cdef public set _down
    cdef public dict drops
    cdef public long long packets_in
    cdef public long long packets_out
    # the program's blocks (program.blocks): each called through its C vtable
    cdef public Blocks _blocks
    cdef public bint _verify
    cdef public bint _compute
    cdef public long long _egress_spec
    cdef public list _spare
    cdef public Py_ssize_t _spare_count

    # inject_c and poll_c: a time in ns (below 2**62), -1 for None
    @cython.locals(due="long long")
    cpdef inject(self, object port, object data)
    cpdef long long inject_c(self, object port, object data) except? -2
    @cython.locals(due="long long")
    cpdef poll(self)
    cpdef long long poll_c(self) except? -2
    @cython.locals(
        ctx=PacketContext, c_ctx=PacketContext, length=Py_ssize_t,
        sm=StandardMetadata, c_sm=StandardMetadata, now_us="long long", offset="long long",
        egress_port="long long",
    )
    cpdef _ingress(
        self, object port, bytes data, long long instance_type, object preserved, object copier
    )
    @cython.locals(copy=PacketContext, sm=StandardMetadata)
    cpdef _replicate(self, PacketContext packet, object replicas, object port)
    @cython.locals(length="long long", sm=StandardMetadata, priority="long long")
    cpdef _enqueue(self, object port, PacketContext packet)
    @cython.locals(tm=TrafficManager, ready=list, queued=QueuedPacket, index=Py_ssize_t)
    cpdef _drain(self)
    cpdef _run_hi(self)
    @cython.locals(
        ctx=PacketContext, c_ctx=PacketContext, parts=list, frame=bytes,
        sm=StandardMetadata, c_sm=StandardMetadata, spare=list, port_c="long long",
    )
    cpdef _egress(self, QueuedPacket queued)
    cpdef _drop(self, object port, object reason)


@cython.locals(copy=PacketContext)
cpdef PacketContext _copy_ctx(PacketContext ctx)
