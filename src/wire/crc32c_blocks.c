/* Block CRCs of a payload and the CRC of any range derived from them: see
 * crc32c_blocks.h. */
#include "wire/crc32c_blocks.h"

#include <string.h>

#include "wire/crc32c.h"

void pc_crc32c_blocks(const void *data, size_t len, uint32_t *out)
{
    const uint8_t *p = data;
    for (size_t off = 0; off < len; off += PC_CRC32C_BLOCK) {
        size_t n = len - off < PC_CRC32C_BLOCK ? len - off : PC_CRC32C_BLOCK;
        *out++ = pc_crc32c(0, p + off, n);
    }
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <emmintrin.h>

/* memcpy with non-temporal stores: the copy of a large payload is read next by the kernel
 * when the frame is written, which comes after many more megabytes of other messages
 * (up to memoryLimitBytes in flight), so the copy has left the cache by then anyway.
 * Streaming it out saves the read of every destination line that an ordinary store
 * first makes, and keeps the cache for the source. SSE2 is part of x86-64. */
static void copy_streaming(uint8_t *d, const uint8_t *s, size_t n)
{
    size_t head = (16 - (uintptr_t)d % 16) % 16;
    if (head > n)
        head = n;
    memcpy(d, s, head);
    d += head;
    s += head;
    n -= head;
    for (; n >= 64; d += 64, s += 64, n -= 64) {
        __m128i a = _mm_loadu_si128((const __m128i *)s);
        __m128i b = _mm_loadu_si128((const __m128i *)(s + 16));
        __m128i c = _mm_loadu_si128((const __m128i *)(s + 32));
        __m128i e = _mm_loadu_si128((const __m128i *)(s + 48));
        _mm_stream_si128((__m128i *)d, a);
        _mm_stream_si128((__m128i *)(d + 16), b);
        _mm_stream_si128((__m128i *)(d + 32), c);
        _mm_stream_si128((__m128i *)(d + 48), e);
    }
    memcpy(d, s, n);
}

/* The source is checksummed first, which brings it into the cache, then streamed to the
 * destination from there: the source is read from memory once and the destination
 * written once. */
static uint32_t crc_and_copy(uint8_t *d, const uint8_t *s, size_t n)
{
    uint32_t crc = pc_crc32c(0, s, n);
    copy_streaming(d, s, n);
    return crc;
}

/* Orders the streaming stores before whatever publishes the copy to another thread. */
static void copies_done(void)
{
    _mm_sfence();
}
#else
/* The block is copied, then checksummed while it is still in the cache. */
static uint32_t crc_and_copy(uint8_t *d, const uint8_t *s, size_t n)
{
    memcpy(d, s, n);
    return pc_crc32c(0, d, n);
}

static void copies_done(void)
{
}
#endif

void pc_crc32c_copy_blocks(void *dst, const void *src, size_t len, uint32_t *out)
{
    uint8_t *d = dst;
    const uint8_t *s = src;
    for (size_t off = 0; off < len; off += PC_CRC32C_BLOCK) {
        size_t n = len - off < PC_CRC32C_BLOCK ? len - off : PC_CRC32C_BLOCK;
        *out++ = crc_and_copy(d + off, s + off, n);
    }
    copies_done();
}

uint32_t pc_crc32c_range(const uint32_t *blocks, const uint8_t *data, size_t total, size_t off,
                         size_t len)
{
    size_t end = off + len;
    uint32_t crc = 0;
    /* The head: from off to the next block boundary (or the end, if that comes first). */
    size_t head = (PC_CRC32C_BLOCK - off % PC_CRC32C_BLOCK) % PC_CRC32C_BLOCK;
    if (head > len)
        head = len;
    crc = pc_crc32c(crc, data + off, head);
    size_t pos = off + head;
    /* Whole blocks: each ends at the next boundary, or at the payload's end (a short last
     * block), and must end within the range. */
    for (;;) {
        size_t block_end = total - pos < PC_CRC32C_BLOCK ? total : pos + PC_CRC32C_BLOCK;
        if (pos >= end || block_end > end)
            break;
        crc = pc_crc32c_combine(crc, blocks[pos / PC_CRC32C_BLOCK], block_end - pos);
        pos = block_end;
    }
    /* The tail: the start of a block the range ends inside. */
    return pc_crc32c(crc, data + pos, end - pos);
}
