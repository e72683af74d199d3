/* CRC32C (Castagnoli, reflected polynomial 0x82F63B78) in three implementations, chosen
 * once at run time from what the CPU has:
 *
 *   table    slicing-by-8, any CPU;
 *   sse42    the crc32 instruction on one stream of 8-byte words;
 *   sse42x3  three streams over adjacent blocks at once, then joined with PCLMULQDQ. The
 *            crc32 instruction takes 3 cycles but starts one per cycle, so one stream
 *            runs at a third of the speed the CPU can give; three independent streams
 *            keep it busy and run at memory speed.
 *
 * The SSE4.2 and PCLMUL code is compiled with target attributes, so the library needs no
 * -march flag, and only runs once cpuid has said the instructions exist. */
#include "wire/crc32c.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define HAVE_X86_PATHS 1
#include <nmmintrin.h>
#include <wmmintrin.h>
#endif

#define POLY 0x82F63B78u

/* The three streams each take a block of this many bytes: long blocks while at least
 * three remain, then short ones, then one stream for the rest. */
#define LONG_BLOCK 8192
#define SHORT_BLOCK 256

typedef uint32_t (*crc_fn)(uint32_t, const void *, size_t);

/* table[k][b]: the CRC contribution of byte b followed by k zero bytes. */
static uint32_t table[8][256];
/* x^(2^k) mod P for k = 0..63, for pc_crc32c_combine: appending n zero bytes multiplies
 * by x^(8n), a product of these. */
static uint32_t x2k[64];
/* x^(8 * block - 33) mod P: the multiplier that, with the crc32 instruction's own
 * reduction, moves a CRC past one block of zero bytes (see shift_clmul). */
static uint64_t k_long, k_short;
static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static _Atomic(crc_fn) chosen;
static int hw_ok, hw3_ok;

#ifdef HAVE_X86_PATHS
__attribute__((target("sse4.2"))) static uint32_t crc_sse42(uint32_t crc, const void *data,
                                                            size_t len);
__attribute__((target("sse4.2,pclmul"))) static uint32_t crc_sse42x3(uint32_t crc, const void *data,
                                                                     size_t len);
#endif

/* a * b mod P, both in the reflected form (bit 31 is x^0). */
static uint32_t multmodp(uint32_t a, uint32_t b)
{
    uint32_t m = 1u << 31, p = 0;
    if (a == 0)
        return 0;
    for (;;) {
        if (a & m) {
            p ^= b;
            if ((a & (m - 1)) == 0)
                break;
        }
        m >>= 1;
        b = b & 1 ? (b >> 1) ^ POLY : b >> 1;
    }
    return p;
}

/* x^n mod P, reflected. */
static uint32_t xpow(uint64_t n)
{
    uint32_t p = 1u << 31; /* x^0 */
    for (int k = 0; n; n >>= 1, k++)
        if (n & 1)
            p = multmodp(x2k[k], p);
    return p;
}

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
    x2k[0] = 1u << 30; /* x^1 */
    for (int k = 1; k < 64; k++)
        x2k[k] = multmodp(x2k[k - 1], x2k[k - 1]);
    k_long = xpow(8u * LONG_BLOCK - 33);
    k_short = xpow(8u * SHORT_BLOCK - 33);
}

static void init(void)
{
    build_tables();
    crc_fn f = pc_crc32c_sw;
#ifdef HAVE_X86_PATHS
    __builtin_cpu_init();
    hw_ok = __builtin_cpu_supports("sse4.2") ? 1 : 0;
    hw3_ok = hw_ok && __builtin_cpu_supports("pclmul") ? 1 : 0;
    if (hw3_ok)
        f = crc_sse42x3;
    else if (hw_ok)
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

#ifdef HAVE_X86_PATHS
static inline uint64_t load64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

static inline uint32_t load32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static inline uint16_t load16(const uint8_t *p)
{
    uint16_t v;
    memcpy(&v, p, 2);
    return v;
}

/* One stream over whatever length; c is the running state (not inverted). The last 0 to 7
 * bytes go in at most three steps (a frame's metadata and a small payload end anywhere). */
__attribute__((target("sse4.2"))) static inline uint64_t stream1(uint64_t c, const uint8_t *p,
                                                                 size_t len)
{
    /* Four words a step: one pointer step and one test for 32 bytes (the crc32 chain is
     * the same; the loop's own instructions were 3 of every 4 at a payload of 100 bytes). */
    for (const uint8_t *end32 = p + (len & ~(size_t)31); p < end32; p += 32) {
        c = _mm_crc32_u64(c, load64(p));
        c = _mm_crc32_u64(c, load64(p + 8));
        c = _mm_crc32_u64(c, load64(p + 16));
        c = _mm_crc32_u64(c, load64(p + 24));
    }
    len &= 31;
    while (len >= 8) {
        c = _mm_crc32_u64(c, load64(p));
        p += 8;
        len -= 8;
    }
    if (len & 4) {
        c = _mm_crc32_u32((uint32_t)c, load32(p));
        p += 4;
    }
    if (len & 2) {
        c = _mm_crc32_u16((uint32_t)c, load16(p));
        p += 2;
    }
    if (len & 1)
        c = _mm_crc32_u8((uint32_t)c, *p);
    return c;
}

__attribute__((target("sse4.2"))) static uint32_t crc_sse42(uint32_t crc, const void *data,
                                                            size_t len)
{
    return ~(uint32_t)stream1((uint32_t)~crc, data, len);
}

/* c * x^(8 * block) mod P for the k of that block. The carry-less product of two
 * reflected values lands one bit low (it is c * k * x in the 64-bit reflected form), and
 * crc32 of a zero state over that word multiplies by x^32 and reduces: c * k * x^33,
 * which is why k holds x^(8 * block - 33). */
__attribute__((target("sse4.2,pclmul"))) static inline uint64_t shift_clmul(uint64_t c, uint64_t k)
{
    __m128i prod = _mm_clmulepi64_si128(_mm_cvtsi64_si128((long long)c),
                                        _mm_cvtsi64_si128((long long)k), 0);
    return _mm_crc32_u64(0, (uint64_t)_mm_cvtsi128_si64(prod));
}

/* Three blocks of `block` bytes from p on, in three streams, joined into c. */
#define THREE_STREAMS(block, k)                              \
    while (len >= 3 * (block)) {                             \
        uint64_t c1 = 0, c2 = 0;                             \
        const uint8_t *end = p + (block);                    \
        do {                                                 \
            c = _mm_crc32_u64(c, load64(p));                 \
            c1 = _mm_crc32_u64(c1, load64(p + (block)));     \
            c2 = _mm_crc32_u64(c2, load64(p + 2 * (block))); \
            p += 8;                                          \
        } while (p < end);                                   \
        c = shift_clmul(c, (k)) ^ c1;                        \
        c = shift_clmul(c, (k)) ^ c2;                        \
        p += 2 * (block);                                    \
        len -= 3 * (block);                                  \
    }

__attribute__((target("sse4.2,pclmul"))) static uint32_t crc_sse42x3(uint32_t crc, const void *data,
                                                                     size_t len)
{
    const uint8_t *p = data;
    uint64_t c = (uint32_t)~crc;
    /* Short input (metadata, a small payload) in one stream as it lies: unaligned loads
     * cost less than the byte steps to align. */
    if (len < 3 * SHORT_BLOCK)
        return ~(uint32_t)stream1(c, p, len);
    /* Align to 8 so the wide loads never straddle a cache line needlessly. */
    while (len && ((uintptr_t)p & 7)) {
        c = _mm_crc32_u8((uint32_t)c, *p++);
        len--;
    }
    THREE_STREAMS(LONG_BLOCK, k_long)
    THREE_STREAMS(SHORT_BLOCK, k_short)
    return ~(uint32_t)stream1(c, p, len);
}
#endif

uint32_t pc_crc32c_hw(uint32_t crc, const void *data, size_t len)
{
#ifdef HAVE_X86_PATHS
    if (pc_crc32c_hw_available())
        return crc_sse42(crc, data, len);
#endif
    /* Documented as invalid without hardware; answer correctly anyway. */
    return pc_crc32c_sw(crc, data, len);
}

uint32_t pc_crc32c_hw3(uint32_t crc, const void *data, size_t len)
{
#ifdef HAVE_X86_PATHS
    if (pc_crc32c_hw3_available())
        return crc_sse42x3(crc, data, len);
#endif
    return pc_crc32c_sw(crc, data, len);
}

int pc_crc32c_hw_available(void)
{
    pthread_once(&init_once, init);
    return hw_ok;
}

int pc_crc32c_hw3_available(void)
{
    pthread_once(&init_once, init);
    return hw3_ok;
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

uint32_t pc_crc32c_combine(uint32_t crc_a, uint32_t crc_b, size_t len_b)
{
    pthread_once(&init_once, init);
    return multmodp(xpow(8 * (uint64_t)len_b), crc_a) ^ crc_b;
}
