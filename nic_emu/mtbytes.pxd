# Cython declarations for nic_emu/mtbytes.py (pure-Python mode; docs/virtual-fabric.md,
# "Compiled hot path"): read only by the native build, the .py stays the reference.
# MT19937's words are 32-bit unsigned integers (uint32_t: every shift and mask wraps as
# the algorithm's C definition does).
cimport cython
from libc.stdint cimport uint32_t

# MT19937's tempering and twist in C (docs/virtual-fabric.md, "NIC per packet, round 4"
# and "round 7"): eight words per AVX2 instruction where the CPU has AVX2 (asked once at
# run time; those functions alone are compiled for it), else four per SSE2 instruction
# where the compiler targets SSE2 (every x86-64), on a little-endian machine (a word's
# bytes are then its memory); one at a time otherwise and for the remainders.
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
    /* eight words at a time where the machine has AVX2 (asked at run time: the build
       targets no particular CPU), in functions compiled for it alone */
    #if NIC_MT_SSE2 && defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    #include <immintrin.h>
    #define NIC_MT_AVX2 1
    #else
    #define NIC_MT_AVX2 0
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
    #if NIC_MT_AVX2
    /* 1 if the CPU runs AVX2, else 0 (looked up once) */
    static int nic_mt_avx2 = -1;
    static inline int nic_mt_has_avx2(void) {
        if (nic_mt_avx2 < 0) {
            __builtin_cpu_init();
            nic_mt_avx2 = __builtin_cpu_supports("avx2") ? 1 : 0;
        }
        return nic_mt_avx2;
    }

    /* the first words of n tempered eight at a time; returns how many (a multiple of 8) */
    __attribute__((target("avx2")))
    static Py_ssize_t nic_mt_temper8(const uint32_t *mt, unsigned char *out, Py_ssize_t n) {
        const __m256i b = _mm256_set1_epi32((int)NIC_MT_TEMPER_B);
        const __m256i c = _mm256_set1_epi32((int)NIC_MT_TEMPER_C);
        Py_ssize_t k = 0;
        for (; k + 8 <= n; k += 8) {
            __m256i y = _mm256_loadu_si256((const __m256i *)(mt + k));
            y = _mm256_xor_si256(y, _mm256_srli_epi32(y, 11));
            y = _mm256_xor_si256(y, _mm256_and_si256(_mm256_slli_epi32(y, 7), b));
            y = _mm256_xor_si256(y, _mm256_and_si256(_mm256_slli_epi32(y, 15), c));
            y = _mm256_xor_si256(y, _mm256_srli_epi32(y, 18));
            _mm256_storeu_si256((__m256i *)(out + 4 * k), y);
        }
        return k;
    }
    #endif

    static void nic_mt_temper(const uint32_t *mt, unsigned char *out, Py_ssize_t n) {
        Py_ssize_t k = 0;
    #if NIC_MT_AVX2
        if (nic_mt_has_avx2()) k = nic_mt_temper8(mt, out, n);
    #endif
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

    #if NIC_MT_AVX2
    /* words k .. k + 7 at once (j = k + M modulo N) */
    __attribute__((target("avx2")))
    static inline void nic_mt_mix8(uint32_t *mt, int k, int j) {
        const __m256i upper = _mm256_set1_epi32((int)NIC_MT_UPPER);
        const __m256i lower = _mm256_set1_epi32((int)NIC_MT_LOWER);
        const __m256i a = _mm256_set1_epi32((int)NIC_MT_MATRIX_A);
        const __m256i one = _mm256_set1_epi32(1);
        __m256i y = _mm256_or_si256(
            _mm256_and_si256(_mm256_loadu_si256((const __m256i *)(mt + k)), upper),
            _mm256_and_si256(_mm256_loadu_si256((const __m256i *)(mt + k + 1)), lower));
        __m256i odd = _mm256_and_si256(
            _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_and_si256(y, one)), a);
        __m256i r = _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(mt + j)),
                                     _mm256_xor_si256(_mm256_srli_epi32(y, 1), odd));
        _mm256_storeu_si256((__m256i *)(mt + k), r);
    }

    /* the twist's first run (words read 397 further on) eight words at a time, as far
       as it goes; returns where it stopped */
    __attribute__((target("avx2")))
    static int nic_mt_twist8a(uint32_t *mt) {
        int k = 0;
        for (; k + 8 <= NIC_MT_N - NIC_MT_M; k += 8) nic_mt_mix8(mt, k, k + NIC_MT_M);
        return k;
    }

    /* its second run (words read 227 back) from word k, the same way */
    __attribute__((target("avx2")))
    static int nic_mt_twist8b(uint32_t *mt, int k) {
        for (; k + 8 <= NIC_MT_N - 1; k += 8) nic_mt_mix8(mt, k, k + NIC_MT_M - NIC_MT_N);
        return k;
    }
    #endif

    /* the next N words of state, in place */
    static void nic_mt_twist(uint32_t *mt) {
        int k = 0;
    #if NIC_MT_AVX2
        int wide = nic_mt_has_avx2();
        if (wide) k = nic_mt_twist8a(mt);
    #endif
    #if NIC_MT_SSE2
        for (; k + 4 <= NIC_MT_N - NIC_MT_M; k += 4) nic_mt_mix4(mt, k, k + NIC_MT_M);
    #endif
        for (; k < NIC_MT_N - NIC_MT_M; k++) mt[k] = nic_mt_mix(mt[k], mt[k + 1], mt[k + NIC_MT_M]);
    #if NIC_MT_AVX2
        if (wide) k = nic_mt_twist8b(mt, k);
    #endif
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
