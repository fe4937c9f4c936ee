# Cython declarations for p4emu/runtime/externs.py (pure-Python mode;
# docs/virtual-fabric.md, "Compiled hot path"): read only by the native build, the .py
# stays the reference. The externs a packet runs (registers, counters, meters, random)
# become extension types, every attribute declared here (an attribute added to the .py
# must be added here too: the native build refuses to set an undeclared one). Their
# cells, sizes, indexes and token counts are numbers of any width a program or the
# control plane gives: they stay Python ints; a meter's rates are floats on both paths.
cimport cython


cdef class Register:
    cdef public object _mask
    cdef public list _values
    cdef public object name
    cdef public object out_of_range
    cdef public object size
    cdef public object width

    cpdef read(self, object index, object unchanged=*)
    cpdef write(self, object index, object value)


cdef unsigned long long _CELL_MAX  # CELL_MAX (2**64 - 1): a C cell's largest value
cdef inline unsigned long long* _cell_array(bytearray cells)


# final (nothing derives from it): its final methods are called without the check
# for a Python override
@cython.final
cdef class Counter:
    # cells in C (two unsigned 64-bit integers per index in _cells) until _wide: then
    # Python ints in the lists (externs.py, "Counter")
    cdef public list _bytes
    cdef bytearray _cells
    # _cells' bytes as C cells for count_at (externs.py, Counter): taken when _cells is
    # made or rewritten (never resized while not _wide)
    cdef unsigned long long *_c_cellp
    cdef public list _packets
    cdef Py_ssize_t _size
    cdef bint _wide
    cdef public object name
    cdef public object out_of_range
    cdef public object size
    cdef public object type

    cpdef count(self, object index, object length)
    @cython.final
    @cython.locals(packets="unsigned long long", byte_count="unsigned long long")
    cpdef count_at(self, Py_ssize_t index, long long length)
    cdef _widen(self)


cdef class MeterCell:
    cdef public object _init_ns
    cdef public bint bytes_mode
    cdef public object c_burst
    cdef public object c_last
    cdef public double c_rate
    cdef public object c_tokens
    cdef public object config
    cdef public object p_burst
    cdef public object p_last
    cdef public double p_rate
    cdef public object p_tokens

    cpdef execute(self, object now_ns, object length)


cdef class Meter:
    cdef public list _cells
    cdef public object clock
    cdef public object name
    cdef public object out_of_range
    cdef public object size
    cdef public object type

    cpdef execute(self, object index, object length, object unchanged=*)


# _bit_length's argument a C unsigned 64-bit integer (uniform_at's range: at most
# sys.maxsize + 1)
@cython.locals(k=int, step=int)
cdef inline int _bit_length(unsigned long long n)


# final (nothing derives from it): uniform_at, final, is called without the check for a
# Python override
@cython.final
cdef class RandomSource:
    cdef public object _bits
    cdef public object _rng

    cpdef uniform(self, object lo, object hi)
    # generated code's draw of at most 63 bits (externs.py, RandomSource.uniform_at): C
    # bounds and counts (Py_ssize_t, not long long: Cython 3.3.1 writes a final class's
    # long long error value -1 as "-1LLLL", which gcc refuses)
    @cython.final
    @cython.locals(n="unsigned long long", r="unsigned long long", k=int)
    cpdef Py_ssize_t uniform_at(self, Py_ssize_t lo, Py_ssize_t hi) except? -1
