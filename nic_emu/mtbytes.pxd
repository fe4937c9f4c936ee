# Cython declarations for nic_emu/mtbytes.py (pure-Python mode; docs/virtual-fabric.md,
# "Compiled hot path"): read only by the native build, the .py stays the reference.
# MT19937's words are 32-bit unsigned integers (uint32_t: every shift and mask wraps as
# the algorithm's C definition does).
cimport cython
from libc.stdint cimport uint32_t

# MT19937's tempering and twist in C (docs/virtual-fabric.md, "NIC per packet, round 4"):
# four words per SSE2 instruction where the compiler targets SSE2 (every x86-64) and the
# machine is little endian (a word's bytes are then its memory), one at a time otherwise.
# Both are the scalar algorithm of Matsumoto and Nishimura word for word (the twist's
# vector steps read only words that the scalar order has already written or not yet
# touched: 397 and 227 words apart, four at a time).
cdef extern from *:
    """
    #include <stdint.h>
    #if defined(__SSE2__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    #include <emmintrin.h>
    #define NIC_MT_SSE2 1
    #else
    #define NIC_MT_SSE2 0
    #endif
    #define NIC_MT_N 624
    #define NIC_MT_M 397
    #define NIC_MT_MATRIX_A 0x9908B0DFu
    #define NIC_MT_UPPER 0x80000000u
    #define NIC_MT_LOWER 0x7FFFFFFFu
    #define NIC_MT_TEMPER_B 0x9D2C5680u
    #define NIC_MT_TEMPER_C 0xEFC60000u

    /* one word tempered */
    static inline uint32_t nic_mt_temper1(uint32_t y) {
        y ^= y >> 11;
        y ^= (y << 7) & NIC_MT_TEMPER_B;
        y ^= (y << 15) & NIC_MT_TEMPER_C;
        return y ^ (y >> 18);
    }

    /* the n words from mt tempered, written to out little endian (4 n bytes) */
    static void nic_mt_temper(const uint32_t *mt, unsigned char *out, Py_ssize_t n) {
        Py_ssize_t k = 0;
    #if NIC_MT_SSE2
        const __m128i b = _mm_set1_epi32((int)NIC_MT_TEMPER_B);
        const __m128i c = _mm_set1_epi32((int)NIC_MT_TEMPER_C);
        for (; k + 4 <= n; k += 4) {
            __m128i y = _mm_loadu_si128((const __m128i *)(mt + k));
            y = _mm_xor_si128(y, _mm_srli_epi32(y, 11));
            y = _mm_xor_si128(y, _mm_and_si128(_mm_slli_epi32(y, 7), b));
            y = _mm_xor_si128(y, _mm_and_si128(_mm_slli_epi32(y, 15), c));
            y = _mm_xor_si128(y, _mm_srli_epi32(y, 18));
            _mm_storeu_si128((__m128i *)(out + 4 * k), y);
        }
    #endif
        for (; k < n; k++) {
            uint32_t y = nic_mt_temper1(mt[k]);
            out[4 * k] = (unsigned char)y;
            out[4 * k + 1] = (unsigned char)(y >> 8);
            out[4 * k + 2] = (unsigned char)(y >> 16);
            out[4 * k + 3] = (unsigned char)(y >> 24);
        }
    }

    /* word k's next value from words k, k + 1 and j (j = k + M modulo N) */
    static inline uint32_t nic_mt_mix(uint32_t wk, uint32_t wk1, uint32_t wj) {
        uint32_t y = (wk & NIC_MT_UPPER) | (wk1 & NIC_MT_LOWER);
        /* (0 - (y & 1)) & MATRIX_A: MATRIX_A when y is odd, else 0 (uint32_t wraps) */
        return wj ^ (y >> 1) ^ ((0u - (y & 1u)) & NIC_MT_MATRIX_A);
    }

    #if NIC_MT_SSE2
    /* words k .. k + 3 at once (j = k + M modulo N) */
    static inline void nic_mt_mix4(uint32_t *mt, int k, int j) {
        const __m128i upper = _mm_set1_epi32((int)NIC_MT_UPPER);
        const __m128i lower = _mm_set1_epi32((int)NIC_MT_LOWER);
        const __m128i a = _mm_set1_epi32((int)NIC_MT_MATRIX_A);
        const __m128i one = _mm_set1_epi32(1);
        __m128i y = _mm_or_si128(
            _mm_and_si128(_mm_loadu_si128((const __m128i *)(mt + k)), upper),
            _mm_and_si128(_mm_loadu_si128((const __m128i *)(mt + k + 1)), lower));
        __m128i odd = _mm_and_si128(
            _mm_sub_epi32(_mm_setzero_si128(), _mm_and_si128(y, one)), a);
        __m128i r = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(mt + j)),
                                  _mm_xor_si128(_mm_srli_epi32(y, 1), odd));
        _mm_storeu_si128((__m128i *)(mt + k), r);
    }
    #endif

    /* the next N words of state, in place */
    static void nic_mt_twist(uint32_t *mt) {
        int k = 0;
    #if NIC_MT_SSE2
        for (; k + 4 <= NIC_MT_N - NIC_MT_M; k += 4) nic_mt_mix4(mt, k, k + NIC_MT_M);
    #endif
        for (; k < NIC_MT_N - NIC_MT_M; k++) mt[k] = nic_mt_mix(mt[k], mt[k + 1], mt[k + NIC_MT_M]);
    #if NIC_MT_SSE2
        for (; k + 4 <= NIC_MT_N - 1; k += 4) nic_mt_mix4(mt, k, k + NIC_MT_M - NIC_MT_N);
    #endif
        for (; k < NIC_MT_N - 1; k++)
            mt[k] = nic_mt_mix(mt[k], mt[k + 1], mt[k + NIC_MT_M - NIC_MT_N]);
        mt[NIC_MT_N - 1] = nic_mt_mix(mt[NIC_MT_N - 1], mt[0], mt[NIC_MT_M - 1]);
    }
    """
    uint32_t nic_mt_temper1(uint32_t y) noexcept nogil
    void nic_mt_temper(const uint32_t *mt, unsigned char *out, Py_ssize_t n) noexcept nogil
    void nic_mt_twist(uint32_t *mt) noexcept nogil

cdef Py_ssize_t N


cdef class WordStream:
    cdef object _gauss
    cdef object _rng
    cdef uint32_t _mt[624]
    cdef Py_ssize_t _index

    @cython.locals(i=Py_ssize_t)
    cpdef bytes take(self, Py_ssize_t n)
    @cython.locals(out=bytes, buf="unsigned char*", words=Py_ssize_t, i=Py_ssize_t,
                   y=uint32_t, rest=Py_ssize_t, run=Py_ssize_t)
    cdef bytes _take(self, Py_ssize_t n)
    @cython.locals(run=Py_ssize_t)
    cpdef skip(self, Py_ssize_t words)
    cpdef tuple state(self)
    cdef inline uint32_t _next(self) noexcept
    cdef void _twist(self) noexcept
