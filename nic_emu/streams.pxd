# Cython declarations for nic_emu/streams.py (pure-Python mode; docs/virtual-fabric.md,
# "Typed declarations: the NIC's wire codecs"): read only by the native build, the .py
# stays the reference. The streamed payload and the receiving sink become extension
# types, every attribute declared here (an attribute added to the .py must be added here
# too). C integers hold byte counts and offsets within one WRITE and the sink's next PSN
# (the initial PSN plus a count of packets); a VA, an R_Key, the budget, the pieces'
# iterator and the running SHA-256 stay Python objects. The comparing sink (a subclass)
# reads its expected bytes through a StreamPayload, a C call per packet. The memory
# budget is an extension type of C integers, called in C by a sink whose budget is one.
cimport cython

from nic_emu.nic_host cimport nic_ns_ll

# StreamReceiver._outside's bound and nic_ns_ll's "not read" (streams.py), as C values
cdef long long _VA_LIMIT, _INEXACT


cdef class StreamPayload:
    cdef public long long length
    cdef public object what
    cdef public object _pieces
    cdef public bytes _piece
    cdef public Py_ssize_t _used
    cdef public long long _pos

    @cython.locals(end="long long", piece=bytes, used=Py_ssize_t, out=bytearray, want=Py_ssize_t,
                   have=Py_ssize_t, result=bytes, dst="char *")
    cpdef bytes take(self, long long offset, long long length)
    @cython.locals(length=Py_ssize_t, piece=bytes, used=Py_ssize_t, end="long long")
    cpdef bint matches(self, long long offset, object data) except -1


cdef class MemoryBudget:
    # C integers: byte counts (a limit up to sys.maxsize) and a count of refusals
    cdef public long long limit
    cdef public long long used
    cdef public long long refused

    cpdef bint can_take(self, long long nbytes) except -1
    cpdef bint take(self, long long nbytes) except -1
    cpdef give(self, long long nbytes)


cdef class StreamReceiver:
    cdef public object budget
    cdef public object min_va
    cdef public object max_va
    cdef public long long next_psn
    cdef public object rkey
    cdef public dict held
    cdef public long long held_bytes
    cdef public long long peak_held_bytes
    cdef public long long fed_bytes
    cdef public object _hash
    cdef public long long _message_bytes
    cdef public object _done

    @cython.locals(budget=object, fits=bint)
    cpdef object admit(self, long long psn, object rkey, object va, object length)
    @cython.locals(v="long long", n="long long", lo="long long", hi="long long")
    cdef bint _outside(self, object va, object length) except -1
    @cython.locals(data=bytes, held=dict, nxt="long long", found=object, is_last=object,
                   freed="long long", budget=object)
    cpdef place(self, long long psn, object payload, object last)
    @cython.locals(n=Py_ssize_t)
    cpdef _feed(self, object payload, object last)


cdef class ComparingReceiver(StreamReceiver):
    cdef public list lengths
    cdef public object expected
    cdef public Py_ssize_t _index
    cdef public StreamPayload _reader
    cdef public bint _equal
    cdef public object _checked

    @cython.locals(n=Py_ssize_t, pos="long long", index=Py_ssize_t, size="long long", equal=bint)
    cpdef _feed(self, object payload, object last)
    @cython.locals(index=Py_ssize_t, reader=StreamPayload)
    cpdef bint _matches(self, long long pos, object payload, Py_ssize_t n) except -1
