/* CRC32C (Castagnoli, reflected polynomial 0x82F63B78): slicing-by-8 tables for any
 * CPU, the SSE4.2 crc32 instruction on x86 when present. The choice is made once and
 * cached, so pc_crc32c costs one atomic load more than the chosen implementation. */
#include "wire/crc32c.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define HAVE_SSE42_PATH 1
#include <nmmintrin.h>
#endif

#define POLY 0x82F63B78u

typedef uint32_t (*crc_fn)(uint32_t, const void *, size_t);

/* table[k][b]: the CRC contribution of byte b followed by k zero bytes. */
static uint32_t table[8][256];
static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static _Atomic(crc_fn) chosen;
static int hw_ok;
#ifdef HAVE_SSE42_PATH
__attribute__((target("sse4.2"))) static uint32_t crc_sse42(uint32_t crc, const void *data, size_t len);
#endif

static void build_tables(void)
{
    for (uint32_t b = 0; b < 256; b++) {
        uint32_t c = b;
        for (int i = 0; i < 8; i++)
            c = (c >> 1) ^ ((c & 1) ? POLY : 0);
        table[0][b] = c;
    }
    for (int k = 1; k < 8; k++)
        for (int b = 0; b < 256; b++)
            table[k][b] = (table[k - 1][b] >> 8) ^ table[0][table[k - 1][b] & 0xff];
}

static void init(void)
{
    build_tables();
#ifdef HAVE_SSE42_PATH
    __builtin_cpu_init();
    hw_ok = __builtin_cpu_supports("sse4.2") ? 1 : 0;
#endif
    crc_fn f = pc_crc32c_sw;
#ifdef HAVE_SSE42_PATH
    if (hw_ok)
        f = crc_sse42;
#endif
    atomic_store_explicit(&chosen, f, memory_order_release);
}

/* Byte-assembled loads keep the table code independent of alignment and endianness;
 * compilers turn them into single loads where that is allowed. */
static inline uint32_t load_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

uint32_t pc_crc32c_sw(uint32_t crc, const void *data, size_t len)
{
    pthread_once(&init_once, init);
    const uint8_t *p = data;
    crc = ~crc;
    while (len >= 8) {
        uint32_t lo = crc ^ load_le32(p);
        uint32_t hi = load_le32(p + 4);
        crc = table[7][lo & 0xff] ^ table[6][(lo >> 8) & 0xff] ^ table[5][(lo >> 16) & 0xff] ^
              table[4][lo >> 24] ^ table[3][hi & 0xff] ^ table[2][(hi >> 8) & 0xff] ^
              table[1][(hi >> 16) & 0xff] ^ table[0][hi >> 24];
        p += 8;
        len -= 8;
    }
    for (; len; len--)
        crc = table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
    return ~crc;
}

#ifdef HAVE_SSE42_PATH
/* Compiled for SSE4.2 on its own so the rest of the library needs no -msse4.2;
 * only called once the CPU has been checked. */
__attribute__((target("sse4.2"))) static uint32_t crc_sse42(uint32_t crc, const void *data, size_t len)
{
    const uint8_t *p = data;
    uint64_t c = ~crc;
    /* Align to 8 so the wide loads never straddle a cache line needlessly. */
    while (len && ((uintptr_t)p & 7)) {
        c = _mm_crc32_u8((uint32_t)c, *p++);
        len--;
    }
    while (len >= 8) {
        uint64_t v;
        memcpy(&v, p, 8);
        c = _mm_crc32_u64(c, v);
        p += 8;
        len -= 8;
    }
    for (; len; len--)
        c = _mm_crc32_u8((uint32_t)c, *p++);
    return ~(uint32_t)c;
}
#endif

uint32_t pc_crc32c_hw(uint32_t crc, const void *data, size_t len)
{
#ifdef HAVE_SSE42_PATH
    if (pc_crc32c_hw_available())
        return crc_sse42(crc, data, len);
#endif
    /* Documented as invalid without hardware; answer correctly anyway. */
    return pc_crc32c_sw(crc, data, len);
}

int pc_crc32c_hw_available(void)
{
    pthread_once(&init_once, init);
    return hw_ok;
}

uint32_t pc_crc32c(uint32_t crc, const void *data, size_t len)
{
    crc_fn f = atomic_load_explicit(&chosen, memory_order_acquire);
    if (!f) {
        pthread_once(&init_once, init);
        f = atomic_load_explicit(&chosen, memory_order_relaxed);
    }
    return f(crc, data, len);
}
