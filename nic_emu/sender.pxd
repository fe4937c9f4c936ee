# Cython declarations for nic_emu/sender.py (pure-Python mode; docs/virtual-fabric.md,
# "Compiled hot path"): read only by the native build, the .py stays the reference.
# WriteRequest, TxPacket and SendState become extension types, every attribute declared
# here (an attribute added to the .py must be added here too: the native build refuses
# to set an undeclared one). C integers hold counts and byte counts (lengths, offsets,
# packets, bytes in flight), send times (the driver's ns, below 2**63) and PSNs (the
# initial 24-bit PSN plus a count of packets). The SACK bitmap (``sacked``: a PSN
# offset may reach the window, past 64 bits), a WRITE's VA (64 bits, unsigned) and
# R_Key, and the configured window stay Python ints: no shift or mask here runs on C
# operands.
cimport cython

from nic_emu.ev_set cimport EvEntry
from nic_emu.streams cimport StreamPayload


cpdef object unwrap(object psn24, object reference)

# a packet's states (sender.py: IN_FLIGHT, LOST, ACKED), as C values
cdef long long _IN_FLIGHT, _LOST, _ACKED


cdef class WriteRequest:
    cdef public object wr_id
    cdef public object data
    cdef public long long length
    cdef public object remote_va
    cdef public object rkey
    cdef public long long npkts
    cdef public object posted_ns
    cdef public long long first_psn
    cdef public long long last_psn
    cdef public long long next_offset
    cdef public long long segmented
    cdef public long long acked_pkts


cdef class TxPacket:
    cdef public EvEntry entry
    cdef public bint first
    cdef public bint last
    cdef public long long length
    cdef public long long offset
    cdef public object payload
    cdef public long long psn
    cdef public long long sent_ns
    cdef public long long state
    cdef public long long transmissions
    cdef public long long tx_seq
    cdef public WriteRequest wr


@cython.locals(pkt=TxPacket)
cdef TxPacket _new_packet(
    long long psn, WriteRequest wr, long long offset, long long length, bint first, bint last
)


cdef class SendState:
    cdef public long long mtu
    cdef public object window_psns
    cdef public long long next_psn
    cdef public long long snd_una
    cdef public dict unacked
    cdef public object sacked
    cdef public list rtx_heap
    cdef public long long inflight_bytes
    cdef public long long tx_seq
    cdef public list outstanding
    cdef public Py_ssize_t out_head
    cdef public long long acked_max_tx_seq
    cdef public long long acked_max_sent_ns
    cdef public object pending
    cdef public object incomplete
    cdef public long long retransmissions

    cpdef post(self, WriteRequest wr)
    cpdef bint has_work(self) except -1
    cpdef bint idle(self) except -1
    @cython.locals(
        heap=list, pkt=TxPacket, wr=WriteRequest, offset="long long", length="long long",
        psn="long long", last=bint, data=object,
    )
    cpdef TxPacket next_packet(self)
    @cython.locals(seq="long long")
    cpdef sent(self, TxPacket pkt, EvEntry entry, object now)
    @cython.locals(pkt=TxPacket)
    cpdef TxPacket ack(self, object psn, long long ambiguous_after)
    @cython.locals(
        unacked=dict, acked="long long", max_seq="long long", max_sent="long long",
        pkt=TxPacket, length="long long", entry=EvEntry, psn="long long",
    )
    cpdef object ack_below(self, object cumulative, long long ambiguous_after)
    @cython.locals(unacked=dict, old="long long", una="long long", nxt="long long")
    cpdef bint advance_una(self, object cumulative) except -1
    @cython.locals(wr=WriteRequest)
    cpdef bint write_done(self) except -1
    @cython.locals(out=list, wr=WriteRequest)
    cpdef list completed_writes(self)
    @cython.locals(q=list, pkt=TxPacket, head=Py_ssize_t, end=Py_ssize_t)
    cpdef TxPacket _front(self)
    @cython.locals(pkt=TxPacket)
    cpdef bint front_lost(self, long long max_seq, long long max_sent_ns) except -1
    @cython.locals(lost=list, pkt=TxPacket)
    cpdef list detect_losses(self, object threshold_pkts, object window_ns)
    @cython.locals(lost=list, pkt=TxPacket)
    cpdef list lost_before(self, object sent_ns_limit)
    @cython.locals(pkt=TxPacket)
    cpdef object oldest_sent_ns(self)
    @cython.locals(pkt=TxPacket)
    cpdef TxPacket pop_expired(self, object deadline_sent_ns)
    @cython.locals(q=list, i=Py_ssize_t)
    cpdef mark_lost(self, TxPacket pkt)
    cpdef _lose(self, TxPacket pkt)

