// The block classifier behind CJSONBlocks.h. On x86_64 the SSE2 version is the baseline (every
// x86_64 processor has SSE2) and an AVX2 version is chosen once, at the first call, when the
// processor reports it; other architectures run the scalar loop, which defines the answer.

#include "CJSONBlocks.h"

void cjson_classify_blocks_scalar(const uint8_t *bytes, size_t blocks, CJSONBlockMasks *masks) {
    for (size_t b = 0; b < blocks; b++) {
        const uint8_t *p = bytes + 64 * b;
        uint64_t special = 0, blank = 0;
        for (unsigned k = 0; k < 64; k++) {
            uint8_t c = p[k];
            uint64_t bit = (uint64_t)1 << k;
            if (c == '"' || c == '\\' || c < 0x20) special |= bit;
            if (c == ' ' || c == '\t' || c == '\n' || c == '\r') blank |= bit;
        }
        masks[b].special = special;
        masks[b].blank = blank;
    }
}

#if defined(__x86_64__)
#include <immintrin.h>

/// The masks of 16 bytes: special in the low 16 bits, blank in the next 16.
static inline uint32_t classify16(__m128i v) {
    __m128i quote = _mm_cmpeq_epi8(v, _mm_set1_epi8('"'));
    __m128i backslash = _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'));
    // Below 0x20: the unsigned minimum with 0x1F is the byte itself.
    __m128i control = _mm_cmpeq_epi8(_mm_min_epu8(v, _mm_set1_epi8(0x1F)), v);
    __m128i special = _mm_or_si128(_mm_or_si128(quote, backslash), control);
    __m128i blank = _mm_or_si128(
        _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8(' ')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\t'))),
        _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('\n')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\r'))));
    return (uint32_t)_mm_movemask_epi8(special) | ((uint32_t)_mm_movemask_epi8(blank) << 16);
}

static void classify_sse2(const uint8_t *bytes, size_t blocks, CJSONBlockMasks *masks) {
    for (size_t b = 0; b < blocks; b++) {
        const uint8_t *p = bytes + 64 * b;
        uint64_t special = 0, blank = 0;
        for (unsigned k = 0; k < 4; k++) {
            uint32_t m = classify16(_mm_loadu_si128((const __m128i *)(p + 16 * k)));
            special |= (uint64_t)(m & 0xFFFF) << (16 * k);
            blank |= (uint64_t)(m >> 16) << (16 * k);
        }
        masks[b].special = special;
        masks[b].blank = blank;
    }
}

/// The masks of 32 bytes, as classify16 computes them.
__attribute__((target("avx2"))) static inline void classify32(__m256i v, uint32_t *special, uint32_t *blank) {
    __m256i quote = _mm256_cmpeq_epi8(v, _mm256_set1_epi8('"'));
    __m256i backslash = _mm256_cmpeq_epi8(v, _mm256_set1_epi8('\\'));
    __m256i control = _mm256_cmpeq_epi8(_mm256_min_epu8(v, _mm256_set1_epi8(0x1F)), v);
    __m256i s = _mm256_or_si256(_mm256_or_si256(quote, backslash), control);
    __m256i w = _mm256_or_si256(
        _mm256_or_si256(_mm256_cmpeq_epi8(v, _mm256_set1_epi8(' ')), _mm256_cmpeq_epi8(v, _mm256_set1_epi8('\t'))),
        _mm256_or_si256(_mm256_cmpeq_epi8(v, _mm256_set1_epi8('\n')), _mm256_cmpeq_epi8(v, _mm256_set1_epi8('\r'))));
    *special = (uint32_t)_mm256_movemask_epi8(s);
    *blank = (uint32_t)_mm256_movemask_epi8(w);
}

__attribute__((target("avx2"))) static void classify_avx2(const uint8_t *bytes, size_t blocks,
                                                          CJSONBlockMasks *masks) {
    for (size_t b = 0; b < blocks; b++) {
        const uint8_t *p = bytes + 64 * b;
        uint32_t s0, w0, s1, w1;
        classify32(_mm256_loadu_si256((const __m256i *)p), &s0, &w0);
        classify32(_mm256_loadu_si256((const __m256i *)(p + 32)), &s1, &w1);
        masks[b].special = (uint64_t)s0 | ((uint64_t)s1 << 32);
        masks[b].blank = (uint64_t)w0 | ((uint64_t)w1 << 32);
    }
}

typedef void (*classifier)(const uint8_t *, size_t, CJSONBlockMasks *);

/// The implementation chosen at the first call (both threads of a pass may choose; they choose
/// the same, so the relaxed store is enough).
static classifier chosen = 0;

static classifier choose(void) {
    classifier c = __atomic_load_n(&chosen, __ATOMIC_RELAXED);
    if (c) return c;
    __builtin_cpu_init();
    c = __builtin_cpu_supports("avx2") ? classify_avx2 : classify_sse2;
    __atomic_store_n(&chosen, c, __ATOMIC_RELAXED);
    return c;
}

void cjson_classify_blocks(const uint8_t *bytes, size_t blocks, CJSONBlockMasks *masks) {
    choose()(bytes, blocks, masks);
}

const char *cjson_classifier_name(void) { return choose() == classify_avx2 ? "avx2" : "sse2"; }

#else

void cjson_classify_blocks(const uint8_t *bytes, size_t blocks, CJSONBlockMasks *masks) {
    cjson_classify_blocks_scalar(bytes, blocks, masks);
}

const char *cjson_classifier_name(void) { return "scalar"; }

#endif
