# Cython declarations for nic_emu/receiver.py (pure-Python mode; docs/virtual-fabric.md,
# "Compiled hot path"): read only by the native build, the .py stays the reference. The
# receive states and the message tracker become extension types, every attribute
# declared here (an attribute added to the .py must be added here too). C integers hold
# the cumulative PSN and a message's first PSN (the initial 24-bit PSN plus a count of
# packets); the arrival bitmap (``ooo``: as wide as the window, past 64 bits) and the
# configured window stay Python ints, and so does every offset that is shifted.
cimport cython


cdef class ReceiveState:
    cdef public long long rcv_nxt
    cdef public object ooo
    cdef public object window

    cpdef object accept(self, object psn)
    cpdef tuple sack_view(self, object trigger_psn)


cdef class GoBackNReceiveState:
    cdef public bint nak_outstanding
    cdef public long long rcv_nxt
    cdef public object window

    cpdef object accept(self, object psn)


cdef class MessageTracker:
    cdef public list _end_heap
    cdef public dict _ends
    cdef public long long msg_first_psn
    cdef public dict va_by_psn

    cpdef note(self, object psn, object va)
    cpdef note_last(self, object psn, object rkey, object end_va)
    @cython.locals(heap=list)
    cpdef bint has_due(self, object rcv_nxt) except -1
