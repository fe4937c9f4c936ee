# Cython declarations for nic_emu/mtbytes.py (pure-Python mode; docs/virtual-fabric.md,
# "Compiled hot path"): read only by the native build, the .py stays the reference.
# MT19937's words are 32-bit unsigned integers (uint32_t: every shift and mask wraps as
# the algorithm's C definition does).
cimport cython
from libc.stdint cimport uint32_t, uint64_t

# MT19937's tempering, twist and seeding in C (docs/virtual-fabric.md, "NIC per packet,
# round 4", "round 7" and "Payload bytes: made, copied and compared"): eight words per
# AVX2 instruction where the CPU has AVX2 (asked once at run time; those functions alone
# are compiled for it), else four per SSE2 instruction where the compiler targets SSE2
# (every x86-64), on a little-endian machine (a word's bytes are then its memory); one at
# a time otherwise and for the remainders. A whole block of 624 words wanted at once is twisted and tempered in
# one pass where AVX2 runs (each new word tempered from the register it was made in).
# All are the scalar algorithm of Matsumoto and Nishimura word for word (the twist's
# vector steps read only words that the scalar order has already written or not yet
# touched: 397 and 227 words apart, sixteen at a time at most); the seeding is CPython's
# init_by_array (Modules/_randommodule.c) of a seed's 32-bit words.
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

    /* words per vector step: 8 (AVX2), 4 (SSE2) or 1, the machine's (asked once) unless
       a test lowered it (nic_mt_limit_step) */
    static int nic_mt_step = 0;
    static int nic_mt_machine_step(void) {
    #if NIC_MT_AVX2
        __builtin_cpu_init();
        if (__builtin_cpu_supports("avx2")) return 8;
    #endif
        return NIC_MT_SSE2 ? 4 : 1;
    }
    static inline int nic_mt_step_words(void) {
        if (!nic_mt_step) nic_mt_step = nic_mt_machine_step();
        return nic_mt_step;
    }
    /* the step made the largest of 8, 4, 1 that is at most limit and the machine's
       (limit >= 8: the machine's again); returns it */
    static int nic_mt_limit_step(int limit) {
        int machine = nic_mt_machine_step();
        if (limit > machine) limit = machine;
        nic_mt_step = limit >= 8 ? 8 : limit >= 4 ? 4 : 1;
        return nic_mt_step;
    }

    /* one word tempered */
    static inline uint32_t nic_mt_temper1(uint32_t y) {
        y ^= y >> 11;
        y ^= (y << 7) & NIC_MT_TEMPER_B;
        y ^= (y << 15) & NIC_MT_TEMPER_C;
        return y ^ (y >> 18);
    }

    /* a word's 4 bytes, little endian (one store where the compiler merges them) */
    static inline void nic_mt_put(unsigned char *out, uint32_t y) {
        out[0] = (unsigned char)y;
        out[1] = (unsigned char)(y >> 8);
        out[2] = (unsigned char)(y >> 16);
        out[3] = (unsigned char)(y >> 24);
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
    /* eight words tempered */
    __attribute__((target("avx2")))
    static inline __m256i nic_mt_temper8v(__m256i y) {
        const __m256i b = _mm256_set1_epi32((int)NIC_MT_TEMPER_B);
        const __m256i c = _mm256_set1_epi32((int)NIC_MT_TEMPER_C);
        y = _mm256_xor_si256(y, _mm256_srli_epi32(y, 11));
        y = _mm256_xor_si256(y, _mm256_and_si256(_mm256_slli_epi32(y, 7), b));
        y = _mm256_xor_si256(y, _mm256_and_si256(_mm256_slli_epi32(y, 15), c));
        return _mm256_xor_si256(y, _mm256_srli_epi32(y, 18));
    }

    /* the first words of n tempered sixteen, then eight at a time; returns how many (a
       multiple of 8) */
    __attribute__((target("avx2")))
    static Py_ssize_t nic_mt_temper8(const uint32_t *mt, unsigned char *out, Py_ssize_t n) {
        Py_ssize_t k = 0;
        for (; k + 16 <= n; k += 16) {
            __m256i y0 = _mm256_loadu_si256((const __m256i *)(mt + k));
            __m256i y1 = _mm256_loadu_si256((const __m256i *)(mt + k + 8));
            _mm256_storeu_si256((__m256i *)(out + 4 * k), nic_mt_temper8v(y0));
            _mm256_storeu_si256((__m256i *)(out + 4 * k + 32), nic_mt_temper8v(y1));
        }
        if (k + 8 <= n) {
            __m256i y = _mm256_loadu_si256((const __m256i *)(mt + k));
            _mm256_storeu_si256((__m256i *)(out + 4 * k), nic_mt_temper8v(y));
            k += 8;
        }
        return k;
    }

    /* the next values of the eight words at p from them, the word after them and the
       eight at q (q = p + M modulo N); MATRIX_A where y is odd is MATRIX_A's sign taken
       by y's low bit (vpsignd: by 1 itself, by 0 zero), y's low bit being word p + 1's */
    __attribute__((target("avx2")))
    static inline __m256i nic_mt_mix8(const uint32_t *p, const uint32_t *q) {
        const __m256i upper = _mm256_set1_epi32((int)NIC_MT_UPPER);
        const __m256i lower = _mm256_set1_epi32((int)NIC_MT_LOWER);
        const __m256i a = _mm256_set1_epi32((int)NIC_MT_MATRIX_A);
        const __m256i one = _mm256_set1_epi32(1);
        __m256i next = _mm256_loadu_si256((const __m256i *)(p + 1));
        __m256i y = _mm256_or_si256(
            _mm256_and_si256(_mm256_loadu_si256((const __m256i *)p), upper),
            _mm256_and_si256(next, lower));
        __m256i odd = _mm256_sign_epi32(a, _mm256_and_si256(next, one));
        return _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)q),
                                _mm256_xor_si256(_mm256_srli_epi32(y, 1), odd));
    }

    /* words k .. k + 15 of the twist (k + 15 < N - 1; q = k + M modulo N), each eight
       made before either is stored (the second eight read word k + 8 as it was), tempered
       into out + 4 k when out is not NULL */
    __attribute__((target("avx2")))
    static inline void nic_mt_step16(uint32_t *mt, int k, int q, unsigned char *out) {
        __m256i r0 = nic_mt_mix8(mt + k, mt + q);
        __m256i r1 = nic_mt_mix8(mt + k + 8, mt + q + 8);
        _mm256_storeu_si256((__m256i *)(mt + k), r0);
        _mm256_storeu_si256((__m256i *)(mt + k + 8), r1);
        if (out) {
            _mm256_storeu_si256((__m256i *)(out + 4 * k), nic_mt_temper8v(r0));
            _mm256_storeu_si256((__m256i *)(out + 4 * k + 32), nic_mt_temper8v(r1));
        }
    }

    /* the same for words k .. k + 7 */
    __attribute__((target("avx2")))
    static inline void nic_mt_step8(uint32_t *mt, int k, int q, unsigned char *out) {
        __m256i r = nic_mt_mix8(mt + k, mt + q);
        _mm256_storeu_si256((__m256i *)(mt + k), r);
        if (out) _mm256_storeu_si256((__m256i *)(out + 4 * k), nic_mt_temper8v(r));
    }

    /* the next N words of state in place, eight and sixteen at a time, and, when out is
       not NULL, all N tempered into out (4 N bytes): its first run (words read 397
       further on) is 14 steps of sixteen then 3 words one at a time, its second (words
       read 227 back) 24 of sixteen, one of eight, one of four and the last word */
    __attribute__((target("avx2"), always_inline))
    static inline void nic_mt_twist8_body(uint32_t *mt, unsigned char *out) {
        int k;
        for (k = 0; k < 224; k += 16) nic_mt_step16(mt, k, k + NIC_MT_M, out);
        for (; k < NIC_MT_N - NIC_MT_M; k++) {
            mt[k] = nic_mt_mix(mt[k], mt[k + 1], mt[k + NIC_MT_M]);
            if (out) nic_mt_put(out + 4 * k, nic_mt_temper1(mt[k]));
        }
        for (; k < 611; k += 16) nic_mt_step16(mt, k, k + NIC_MT_M - NIC_MT_N, out);
        nic_mt_step8(mt, 611, 611 + NIC_MT_M - NIC_MT_N, out);
        nic_mt_mix4(mt, 619, 619 + NIC_MT_M - NIC_MT_N);
        if (out)
            for (k = 619; k < NIC_MT_N - 1; k++) nic_mt_put(out + 4 * k, nic_mt_temper1(mt[k]));
        mt[NIC_MT_N - 1] = nic_mt_mix(mt[NIC_MT_N - 1], mt[0], mt[NIC_MT_M - 1]);
        if (out) nic_mt_put(out + 4 * (NIC_MT_N - 1), nic_mt_temper1(mt[NIC_MT_N - 1]));
    }

    /* the body made twice (out a constant in each: no test per step) */
    __attribute__((target("avx2")))
    static void nic_mt_twist8(uint32_t *mt) { nic_mt_twist8_body(mt, NULL); }
    __attribute__((target("avx2")))
    static void nic_mt_twist_temper8(uint32_t *mt, unsigned char *out) {
        nic_mt_twist8_body(mt, out);
    }
    #endif

    /* the n words from mt tempered, written to out little endian (4 n bytes) */
    static void nic_mt_temper(const uint32_t *mt, unsigned char *out, Py_ssize_t n) {
        Py_ssize_t k = 0;
        int step = nic_mt_step_words();
    #if NIC_MT_AVX2
        if (step == 8) k = nic_mt_temper8(mt, out, n);
    #endif
    #if NIC_MT_SSE2
        if (step >= 4) {
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
        }
    #endif
        for (; k < n; k++) nic_mt_put(out + 4 * k, nic_mt_temper1(mt[k]));
    }

    /* the next N words of state, in place */
    static void nic_mt_twist(uint32_t *mt) {
        int k = 0;
        int step = nic_mt_step_words();
    #if NIC_MT_AVX2
        if (step == 8) {
            nic_mt_twist8(mt);
            return;
        }
    #endif
    #if NIC_MT_SSE2
        if (step >= 4)
            for (; k + 4 <= NIC_MT_N - NIC_MT_M; k += 4) nic_mt_mix4(mt, k, k + NIC_MT_M);
    #endif
        for (; k < NIC_MT_N - NIC_MT_M; k++) mt[k] = nic_mt_mix(mt[k], mt[k + 1], mt[k + NIC_MT_M]);
    #if NIC_MT_SSE2
        if (step >= 4)
            for (; k + 4 <= NIC_MT_N - 1; k += 4) nic_mt_mix4(mt, k, k + NIC_MT_M - NIC_MT_N);
    #endif
        for (; k < NIC_MT_N - 1; k++)
            mt[k] = nic_mt_mix(mt[k], mt[k + 1], mt[k + NIC_MT_M - NIC_MT_N]);
        mt[NIC_MT_N - 1] = nic_mt_mix(mt[NIC_MT_N - 1], mt[0], mt[NIC_MT_M - 1]);
    }

    /* the next N words of state, in place, all N tempered into out (4 N bytes): in one
       pass where AVX2 runs, else the twist then the tempering */
    static void nic_mt_twist_temper(uint32_t *mt, unsigned char *out) {
    #if NIC_MT_AVX2
        if (nic_mt_step_words() == 8) {
            nic_mt_twist_temper8(mt, out);
            return;
        }
    #endif
        nic_mt_twist(mt);
        nic_mt_temper(mt, out, NIC_MT_N);
    }

    /* the state random.Random(seed) starts from, for 0 <= seed < 2**64: CPython's
       init_genrand(19650218) then init_by_array of the seed's 32-bit words, least
       significant first (one word for a seed below 2**32, 0 included), its loops laid
       out without their wrap tests: the first makes words 1 .. N-1 then word 1 again
       (word 0 = word N-1 before it), adding key word j plus j at its step t (j = t mod
       the key's length); the second makes words 2 .. N-1 then word 1 again; word 0 is
       then 0x80000000 */
    static void nic_mt_seed(uint32_t *mt, uint64_t seed) {
        const uint32_t mask = (seed >> 32) ? 1u : 0u;
        const uint32_t add[2] = {(uint32_t)seed, (uint32_t)(seed >> 32) + 1u};
        uint32_t prev = 19650218u;
        int i;
        mt[0] = prev;
        for (i = 1; i < NIC_MT_N; i++) {
            prev = 1812433253u * (prev ^ (prev >> 30)) + (uint32_t)i;
            mt[i] = prev;
        }
        prev = mt[0];
        for (i = 1; i < NIC_MT_N; i++) {
            prev = (mt[i] ^ ((prev ^ (prev >> 30)) * 1664525u)) + add[(uint32_t)(i - 1) & mask];
            mt[i] = prev;
        }
        mt[0] = prev;
        prev = (mt[1] ^ ((prev ^ (prev >> 30)) * 1664525u)) + add[(uint32_t)(NIC_MT_N - 1) & mask];
        mt[1] = prev;
        for (i = 2; i < NIC_MT_N; i++) {
            prev = (mt[i] ^ ((prev ^ (prev >> 30)) * 1566083941u)) - (uint32_t)i;
            mt[i] = prev;
        }
        mt[1] = (mt[1] ^ ((prev ^ (prev >> 30)) * 1566083941u)) - 1u;
        mt[0] = 0x80000000u;
    }
    """
    uint32_t nic_mt_temper1(uint32_t y) noexcept nogil
    void nic_mt_temper(const uint32_t *mt, unsigned char *out, Py_ssize_t n) noexcept nogil
    void nic_mt_twist(uint32_t *mt) noexcept nogil
    void nic_mt_twist_temper(uint32_t *mt, unsigned char *out) noexcept nogil
    void nic_mt_seed(uint32_t *mt, uint64_t seed) noexcept nogil
    int nic_mt_step_words() noexcept nogil
    int nic_mt_limit_step(int limit) noexcept nogil

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
    @cython.locals(clone=WordStream)
    cpdef WordStream copy(self)
    cpdef tuple state(self)
    cdef inline uint32_t _next(self) noexcept
    cdef void _twist(self) noexcept
    cdef void _seed(self, uint64_t key) noexcept


@cython.locals(stream=WordStream)
cpdef WordStream seeded(object seed)
cpdef int step_words(int limit=*)
