/* The C++ client's BoostHash: boost::hash<std::string> of the key's bytes on a 64-bit
 * platform, as libpulsar computes it to pick a key's partition. Boost has hashed strings
 * three ways over the releases users meet, so each is here under its own name:
 *
 *   1.56 .. 1.80  each byte, widened to size_t as `char` is (sign-extended where char is
 *                 signed, as on x86-64; zero-extended where it is unsigned, as on Linux
 *                 arm64), folded in with a 64-bit MurmurHash2-style combine;
 *   1.81          the bytes read 4 at a time (little-endian) with a 0x01 byte after the
 *                 last one, each word folded in with hash_combine over Jon Maiga's mx3 mixer;
 *   1.82 ..       Peter Dimov's mulxp1_hash: 8-byte words (little-endian), a 128-bit
 *                 multiply folded to 64 bits per word, seeded with the length.
 *
 * Written from Boost's container_hash sources (the tags boost-1.80.0, boost-1.81.0 and
 * boost-1.90.0; 1.82 to 1.91 hash strings alike) and checked against programs compiled
 * with those headers: tests/unit/test_hash_boost.c says how its vectors were made.
 * 32-bit platforms (a 32-bit size_t) hash differently again and are not reproduced. */
#include "routing/hash.h"

#define GOLDEN64 0x9e3779b97f4a7c15u /* 2^64 / phi */

static uint64_t load32le(const uint8_t *p)
{
    return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 24;
}

static uint64_t load64le(const uint8_t *p)
{
    return load32le(p) | load32le(p + 4) << 32;
}

/* ---- Boost 1.56 .. 1.80 ---------------------------------------------------------------- */

static uint64_t combine_1_80(uint64_t h, uint64_t k)
{
    const uint64_t m = 0xc6a4a7935bd1e995u;
    k *= m;
    k ^= k >> 47;
    k *= m;
    h ^= k;
    h *= m;
    return h + 0xe6546b64u;
}

static uint64_t boost_1_80(const uint8_t *p, size_t len, int char_is_signed)
{
    uint64_t seed = 0;
    for (size_t i = 0; i < len; i++) {
        uint64_t v = char_is_signed ? (uint64_t)(int64_t)(int8_t)p[i] : p[i];
        seed = combine_1_80(seed, v);
    }
    return seed;
}

/* ---- Boost 1.81 ------------------------------------------------------------------------ */

static uint64_t mix_1_81(uint64_t x)
{
    const uint64_t m = 0x0e9846af9b1a615du;
    x ^= x >> 32;
    x *= m;
    x ^= x >> 32;
    x *= m;
    return x ^ (x >> 28);
}

static uint64_t combine_1_81(uint64_t seed, uint64_t word)
{
    /* The constant added is the 32-bit golden ratio, also with a 64-bit size_t. */
    return mix_1_81(seed + 0x9e3779b9u + word);
}

static uint64_t boost_1_81(const uint8_t *p, size_t len)
{
    uint64_t seed = 0;
    for (; len >= 4; p += 4, len -= 4)
        seed = combine_1_81(seed, load32le(p));
    /* The tail's bytes and then a 0x01 marker, so that trailing zero bytes count. */
    uint64_t last = 0;
    for (size_t i = 0; i < len; i++)
        last |= (uint64_t)p[i] << (8 * i);
    last |= (uint64_t)1 << (8 * len);
    return combine_1_81(seed, last);
}

/* ---- Boost 1.82 and later -------------------------------------------------------------- */

/* The 128-bit product of x and y, its two halves xor-ed. */
static uint64_t mul_fold(uint64_t x, uint64_t y)
{
#if defined(__SIZEOF_INT128__)
    unsigned __int128 r = (unsigned __int128)x * y;
    return (uint64_t)r ^ (uint64_t)(r >> 64);
#else
    uint64_t xl = x & 0xffffffffu, xh = x >> 32, yl = y & 0xffffffffu, yh = y >> 32;
    uint64_t ll = xl * yl, lh = xl * yh, hl = xh * yl, hh = xh * yh;
    uint64_t mid = (ll >> 32) + (lh & 0xffffffffu) + (hl & 0xffffffffu);
    uint64_t lo = (mid << 32) | (ll & 0xffffffffu);
    uint64_t hi = hh + (lh >> 32) + (hl >> 32) + (mid >> 32);
    return lo ^ hi;
#endif
}

static uint64_t boost_1_82(const uint8_t *p, size_t len)
{
    const uint64_t k = 0xdf442d22ce4859b9u; /* GOLDEN64 squared, mod 2^64 */
    uint64_t w = mul_fold(GOLDEN64, k);     /* the seed (0) + GOLDEN64 */
    uint64_t h = w ^ (uint64_t)len;

    for (; len >= 8; p += 8, len -= 8) {
        w += GOLDEN64;
        h ^= mul_fold(load64le(p) + w, k);
    }
    /* The last 0..7 bytes as one word: 4..7 bytes as two 32-bit reads that may overlap,
     * 1..3 bytes as the first, middle and last byte. */
    uint64_t v = 0;
    if (len >= 4) {
        v = load32le(p + len - 4) << (8 * (len - 4)) | load32le(p);
    } else if (len >= 1) {
        size_t a = (len - 1) & 2, b = len >> 1;
        v = (uint64_t)p[a] << (8 * a) | (uint64_t)p[b] << (8 * b) | p[0];
    }
    w += GOLDEN64;
    h ^= mul_fold(v + w, k);
    return mul_fold(h + w, k);
}

uint64_t pc_hash_boost_64(pc_boost_hash_variant variant, const char *key, size_t len)
{
    /* Never offset a NULL pointer, even by zero. */
    const uint8_t *p = key ? (const uint8_t *)key : (const uint8_t *)"";
    if (!key)
        len = 0;
    switch (variant) {
    case PC_BOOST_1_80:
        return boost_1_80(p, len, 1);
    case PC_BOOST_1_80_UNSIGNED_CHAR:
        return boost_1_80(p, len, 0);
    case PC_BOOST_1_81:
        return boost_1_81(p, len);
    case PC_BOOST_1_82:
    default:
        return boost_1_82(p, len);
    }
}

int32_t pc_hash_boost(pc_boost_hash_variant variant, const char *key, size_t len)
{
    /* libpulsar's BoostHash::makeHash keeps the low 31 bits of the size_t. */
    return (int32_t)(pc_hash_boost_64(variant, key, len) & 0x7fffffffu);
}
