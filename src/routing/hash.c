/* Key hashes that must land a key on the same partition as the Java client.
 *
 * JavaStringHash: Java's String.hashCode() runs over UTF-16 code units, so a UTF-8 key is
 * decoded here exactly as `new String(bytes, UTF_8)` would decode it, including how many
 * bytes each malformed sequence swallows into one U+FFFD. Those replacement rules are
 * Java's own (they differ from the Unicode "maximal subpart" advice in places, e.g. an
 * encoded surrogate ED A0 80 becomes a single U+FFFD) and were checked byte for byte
 * against a JDK 17 with random inputs; see tests/unit/test_hash.c.
 *
 * Murmur3_32Hash: the plain 32-bit MurmurHash3 (seed 0) over the key bytes, blocks read
 * little-endian, as Pulsar's Murmur3_32Hash does over String.getBytes(UTF_8). For valid
 * UTF-8 those are the key's own bytes. A key that is not valid UTF-8 has no Java String
 * with the same bytes; it is hashed as given, like the C++ client does. */
#include "routing/hash.h"

#include <stdbool.h>

#define REPLACEMENT_CHAR 0xFFFDu

static bool is_cont(uint8_t b)
{
    return (b & 0xC0) == 0x80;
}

/* Feed one UTF-16 code unit into the running String.hashCode(). Unsigned arithmetic wraps
 * the same way Java's int does. */
static uint32_t mix_unit(uint32_t h, uint32_t unit)
{
    return h * 31u + unit;
}

static uint32_t mix_code_point(uint32_t h, uint32_t cp)
{
    if (cp < 0x10000u)
        return mix_unit(h, cp);
    cp -= 0x10000u;
    h = mix_unit(h, 0xD800u + (cp >> 10));
    return mix_unit(h, 0xDC00u + (cp & 0x3FFu));
}

/* Decode one sequence starting at p[i] (i < n). Stores the code point (or U+FFFD) in *cp
 * and returns how many bytes it consumed (at least 1). */
static size_t decode_one(const uint8_t *p, size_t i, size_t n, uint32_t *cp)
{
    uint8_t b1 = p[i];
    size_t left = n - i - 1; /* bytes after the lead */

    *cp = REPLACEMENT_CHAR;
    if (b1 < 0x80) {
        *cp = b1;
        return 1;
    }
    if (b1 >= 0xC2 && b1 <= 0xDF) {
        if (left >= 1 && is_cont(p[i + 1])) {
            *cp = ((uint32_t)(b1 & 0x1F) << 6) | (p[i + 1] & 0x3F);
            return 2;
        }
        return 1;
    }
    if (b1 >= 0xE0 && b1 <= 0xEF) {
        /* E0 must be followed by A0..BF, otherwise the form is overlong. */
        bool bad2 = left >= 1 && (!is_cont(p[i + 1]) || (b1 == 0xE0 && p[i + 1] < 0xA0));
        if (left >= 2) {
            if (bad2)
                return 1;
            if (!is_cont(p[i + 2]))
                return 2;
            uint32_t c = ((uint32_t)(b1 & 0x0F) << 12) | ((uint32_t)(p[i + 1] & 0x3F) << 6) |
                         (p[i + 2] & 0x3F);
            /* Java keeps a well-formed encoded surrogate together: one U+FFFD for 3 bytes. */
            if (c < 0xD800u || c > 0xDFFFu)
                *cp = c;
            return 3;
        }
        if (bad2)
            return 1;
        /* Truncated at the end of the key: the lead and its one good continuation byte (if
         * any) become a single U+FFFD. */
        return 1 + left;
    }
    if (b1 >= 0xF0 && b1 <= 0xF7) {
        /* Which second bytes keep a 4-byte sequence in range U+10000..U+10FFFF. */
        bool bad2 = left >= 1 && (!is_cont(p[i + 1]) || (b1 == 0xF0 && p[i + 1] < 0x90) ||
                                  (b1 == 0xF4 && p[i + 1] > 0x8F));
        if (left >= 3) {
            if (b1 > 0xF4 || bad2)
                return 1;
            if (!is_cont(p[i + 2]))
                return 2;
            if (!is_cont(p[i + 3]))
                return 3;
            *cp = ((uint32_t)(b1 & 0x07) << 18) | ((uint32_t)(p[i + 1] & 0x3F) << 12) |
                  ((uint32_t)(p[i + 2] & 0x3F) << 6) | (p[i + 3] & 0x3F);
            return 4;
        }
        if (b1 > 0xF4 || bad2 || left == 0)
            return 1;
        /* Truncated 4-byte sequence with a good second byte: it and a following continuation
         * byte (if any) are swallowed by one U+FFFD. */
        if (left >= 2 && is_cont(p[i + 2]))
            return 3;
        return 2;
    }
    /* Stray continuation bytes, C0/C1 and F8..FF: one U+FFFD each. */
    return 1;
}

int32_t pc_hash_java_string(const char *key, size_t len)
{
    const uint8_t *p = (const uint8_t *)key;
    if (!p)
        len = 0;
    uint32_t h = 0;
    size_t i = 0;

    while (i < len) {
        if (p[i] < 0x80) {
            h = mix_unit(h, p[i]);
            i++;
            continue;
        }
        uint32_t cp;
        i += decode_one(p, i, len, &cp);
        h = mix_code_point(h, cp);
    }
    return (int32_t)(h & 0x7FFFFFFFu);
}

static uint32_t rotl32(uint32_t x, int r)
{
    return (x << r) | (x >> (32 - r));
}

static uint32_t murmur_mix_k(uint32_t k)
{
    k *= 0xCC9E2D51u;
    k = rotl32(k, 15);
    return k * 0x1B873593u;
}

int32_t pc_hash_murmur3_32(const char *key, size_t len)
{
    /* Never offset a NULL pointer, even by zero. */
    const uint8_t *p = key ? (const uint8_t *)key : (const uint8_t *)"";
    if (!key)
        len = 0;
    uint32_t h = 0; /* Pulsar's seed */
    size_t nblocks = len / 4;

    for (size_t b = 0; b < nblocks; b++) {
        const uint8_t *q = p + b * 4;
        uint32_t k = (uint32_t)q[0] | ((uint32_t)q[1] << 8) | ((uint32_t)q[2] << 16) |
                     ((uint32_t)q[3] << 24);
        h ^= murmur_mix_k(k);
        h = rotl32(h, 13);
        h = h * 5u + 0xE6546B64u;
    }

    const uint8_t *tail = p + nblocks * 4;
    uint32_t k = 0;
    switch (len & 3) {
    case 3:
        k ^= (uint32_t)tail[2] << 16;
        /* fall through */
    case 2:
        k ^= (uint32_t)tail[1] << 8;
        /* fall through */
    case 1:
        k ^= tail[0];
        break;
    default:
        break;
    }
    h ^= murmur_mix_k(k);

    /* The length enters as Java's int: only its low 32 bits matter. */
    h ^= (uint32_t)len;
    h ^= h >> 16;
    h *= 0x85EBCA6Bu;
    h ^= h >> 13;
    h *= 0xC2B2AE35u;
    h ^= h >> 16;
    return (int32_t)(h & 0x7FFFFFFFu);
}

int pc_hash_partition(int32_t hash, int n)
{
    if (n <= 0)
        return -1;
    int mod = (int)(hash % n);
    if (mod < 0)
        mod += n;
    return mod;
}
