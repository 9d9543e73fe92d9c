// The first stage of SiftJSON's scanner: bytes classified 64 at a time into bit masks (bit k of a
// mask is byte k of the block), with SSE2 on x86_64 (AVX2 when the processor has it) and a
// portable loop elsewhere. The scanner walks a record over the set bits instead of byte by byte.

#ifndef CJSONBLOCKS_H
#define CJSONBLOCKS_H

#include <stddef.h>
#include <stdint.h>

/// The masks of one 64-byte block.
typedef struct {
    /// A quote, a backslash or a control character (below 0x20): where a string's plain run ends.
    uint64_t special;
    /// A blank between tokens: space, tab, line feed or carriage return.
    uint64_t blank;
} CJSONBlockMasks;

/// Classifies `blocks` blocks of 64 bytes from `bytes` (all readable) into `masks[0..<blocks]`.
void cjson_classify_blocks(const uint8_t *bytes, size_t blocks, CJSONBlockMasks *masks);

/// Which implementation `cjson_classify_blocks` runs: "avx2", "sse2" or "scalar".
const char *cjson_classifier_name(void);

/// The scalar classification, whatever the processor (for the tests' comparison).
void cjson_classify_blocks_scalar(const uint8_t *bytes, size_t blocks, CJSONBlockMasks *masks);

#endif
