# Cython declarations for nic_emu/mtbytes.py (pure-Python mode; docs/virtual-fabric.md,
# "Compiled hot path"): read only by the native build, the .py stays the reference.
# MT19937's words are 32-bit unsigned integers (uint32_t: every shift and mask wraps as
# the algorithm's C definition does).
cimport cython
from libc.stdint cimport uint32_t

cdef Py_ssize_t N
cdef Py_ssize_t M
cdef uint32_t MATRIX_A
cdef uint32_t UPPER_MASK
cdef uint32_t LOWER_MASK
cdef uint32_t TEMPER_B
cdef uint32_t TEMPER_C


cdef class WordStream:
    cdef object _gauss
    cdef object _rng
    cdef uint32_t _mt[624]
    cdef Py_ssize_t _index

    @cython.locals(i=Py_ssize_t)
    cpdef bytes take(self, Py_ssize_t n)
    @cython.locals(out=bytes, buf="unsigned char*", words=Py_ssize_t, i=Py_ssize_t,
                   y=uint32_t, rest=Py_ssize_t, run=Py_ssize_t, k=Py_ssize_t, mt="uint32_t*")
    cdef bytes _take(self, Py_ssize_t n)
    @cython.locals(_i=Py_ssize_t)
    cpdef skip(self, Py_ssize_t words)
    cpdef tuple state(self)
    @cython.locals(y=uint32_t)
    cdef inline uint32_t _next(self) noexcept
    @cython.locals(mt="uint32_t*", k=Py_ssize_t, y=uint32_t)
    cdef void _twist(self) noexcept
