# Cython declarations for vfabric/wires.py (pure-Python mode; docs/virtual-fabric.md,
# "Compiled hot path"): read only by the native build, the .py stays the reference.
# Counters and times are integers below 2**63 (ns, bytes, packets of one run).
cimport cython

from vfabric.eventlist cimport EventList, EventSource

cdef double _NS_BITS  # NS_BITS (8e9, exact): size * _NS_BITS / rate in C doubles
cdef Py_ssize_t _NH
cdef Py_ssize_t _TC
cdef long _IPV6  # IPPROTO_IPV6
cdef Py_ssize_t _DATA_HEADER  # DATA_HEADER_BYTES
cdef unsigned long long _DATA_DSCP_BITS  # DATA_DSCPS as a mask of the 64 DSCPs
cdef double _MAX_SERIAL  # MAX_SERIALISATION_NS


cdef class FrameSink(EventSource):
    cpdef receive(self, object port, bytes frame)


cdef class Wire(EventSource):
    cdef public long long _bin_bytes
    cdef public long long _bin_index
    cdef public dict _bins
    cdef public FrameSink _node
    cdef public object _node_sink
    cdef public long long bin_ns
    cdef public long long busy_until
    cdef public long long data_bytes
    cdef public long long delay_ns
    cdef public dict drops
    cdef public object dst
    cdef public object dst_port
    cdef public EventList events
    cdef public tuple filters
    cdef public object kind
    cdef public object link
    cdef public dict lost_bins
    cdef public object name
    cdef public object on_drop
    cdef public list outbox
    cdef public object pcap
    cdef public object plane
    cdef public double rate_bps
    cdef public object sink
    cdef public object src
    cdef public object src_port
    cdef public long long tx_bytes
    cdef public long long tx_packets
    cdef public bint up

    @cython.locals(
        now="long long",
        busy="long long",
        start="long long",
        size=Py_ssize_t,
        done="long long",
        serial=double,
        payload=Py_ssize_t,
        index="long long",
    )
    cpdef receive(self, bytes frame)
    cpdef bint _refused(self, bytes frame) except -1
    @cython.locals(node=FrameSink)
    cpdef fire(self, object frame)
    @cython.locals(bins=dict, index="long long")
    cpdef _flush_bin(self)
    cpdef _drop(self, str reason, bytes frame)
