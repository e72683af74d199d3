#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "routing/hash.h"

/* Every expected value below was printed by the real Java client: Pulsar 4.0.8's
 * JavaStringHash.getInstance().makeHash(key), Murmur3Hash32.getInstance().makeHash(key) and
 * MathUtils.signSafeMod(hash, n), run on OpenJDK 17 with the key given as a Java String
 * (the C string is its UTF-8 form). The k1/k2/key1/key2/key01/key02 and keykey... values
 * also match the constants in the C++ client's HashTest. A NULL key stands for 1000 'x'. */
struct vector {
    const char *key;
    int32_t java;
    int32_t murmur;
    int java_p7, java_p13, murmur_p7, murmur_p13;
};

static const struct vector vectors[] = {
    { "", 0, 0, 0, 0, 0, 0 },
    { "a", 97, 1009084850, 6, 6, 4, 7 },
    { "ab", 3105, 465557343, 4, 11, 6, 4 },
    { "abc", 96354, 870159354, 6, 11, 1, 12 },
    { "abcd", 2987074, 1139631978, 6, 12, 2, 4 },
    { "abcde", 92599395, 1755028214, 0, 5, 2, 4 },
    { "key", 106079, 1654417988, 1, 12, 6, 2 },
    { "k1", 3366, 2110152746, 6, 12, 2, 0 },
    { "k2", 3367, 1479966664, 0, 0, 1, 7 },
    { "key1", 3288498, 462881061, 3, 5, 6, 6 },
    { "key2", 3288499, 1936800180, 4, 6, 0, 3 },
    { "key01", 101943456, 39696932, 6, 4, 2, 2 },
    { "key02", 101943457, 751761803, 0, 5, 2, 0 },
    { "keykeykeykeykey1", 434058482, 19350382, 4, 0, 2, 12 },
    { "keykeykey2", 42978643, 304171170, 1, 6, 2, 4 },
    { "The quick brown fox jumps over the lazy dog", 1538055507, 776992547, 2, 1, 2, 6 },
    { "order-12345", 478832884, 1785094598, 5, 10, 0, 1 },
    { "user:42", 2000313485, 1202103157, 2, 1, 3, 8 },
    { "\xe4\xbd\xa0\xe5\xa5\xbd\xe4\xb8\x96\xe7\x95\x8c", 628018387, 806296289, 3, 9, 1, 6 },
    { "\xe6\xb6\x88\xe6\x81\xaf\xe9\x94\xae", 27749927, 564537236, 2, 10, 4, 3 },
    { "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e\xe3\x83\x86\xe3\x82\xad\xe3\x82\xb9\xe3\x83\x88",
      1842841645, 1724429869, 1, 8, 1, 6 },
    { "\xf0\x9f\x98\x80", 1772899, 1051995898, 2, 11, 2, 5 },
    { "key-\xf0\x9f\x98\x80-1", 7662837, 1867569957, 0, 0, 1, 6 },
    { "\xf0\x9f\x8e\x89\xf0\x9f\x8e\x8a", 1705877083, 2060178619, 1, 1, 2, 5 },
    { "\xf0\x9d\x84\x9e", 1772394, 1256635425, 1, 0, 3, 6 },
    { "caf\xc3\xa9", 3045921, 605818632, 4, 8, 6, 3 },
    { "na\xc3\xafve", 104710475, 992511445, 2, 12, 2, 3 },
    { "\xc3\x9cn\xc3\xaf"
      "c\xc3\xb6"
      "d\xc3\xa9",
      1055431381, 198920051, 4, 4, 1, 5 },
    { "\xc3\x9f", 223, 336885798, 6, 2, 4, 2 },
    { "\xc3\xbf\xc3\xbe", 8159, 226289726, 4, 8, 5, 0 },
    { "\xe2\x82\xac"
      "100",
      249220549, 232209034, 4, 6, 1, 5 },
    { "\xef\xbf\xbf", 65535, 1061879644, 1, 2, 0, 7 },
    { "\xe0\xa0\x80", 2048, 2057557023, 4, 7, 4, 2 },
    { "\xdf\xbf", 2047, 212333181, 3, 6, 4, 8 },
    { "key-1", 101943363, 414258592, 4, 2, 6, 7 },
    { "key-2", 101943364, 1945654540, 5, 3, 4, 11 },
    { "key-3", 101943365, 2034982562, 6, 4, 4, 2 },
    { "key-4", 101943366, 1641740710, 0, 5, 1, 12 },
    { "key-5", 101943367, 512346046, 1, 6, 2, 4 },
    { "key-6", 101943368, 136335094, 2, 7, 0, 12 },
    { "key-7", 101943369, 2054334308, 3, 8, 5, 0 },
    { "key-8", 101943370, 339503824, 4, 9, 2, 10 },
    { "key-9", 101943371, 955406708, 5, 10, 4, 9 },
    { "key-10", 1012760653, 568422892, 2, 8, 2, 11 },
    { "key-11", 1012760654, 2041436440, 3, 9, 1, 4 },
    { "key-12", 1012760655, 1202461888, 4, 10, 5, 4 },
    { "key-13", 1012760656, 1281609033, 5, 11, 5, 3 },
    { "key-14", 1012760657, 1259448991, 6, 12, 3, 8 },
    { "key-15", 1012760658, 747651370, 0, 0, 4, 11 },
    { "key-16", 1012760659, 1556390581, 1, 1, 4, 5 },
    { "key-17", 1012760660, 889600087, 2, 2, 5, 12 },
    { "key-18", 1012760661, 1557465016, 3, 3, 2, 3 },
    { "key-19", 1012760662, 2061163855, 4, 4, 2, 10 },
    { "key-20", 1012760684, 737228380, 5, 0, 0, 5 },
    { NULL, 432065536, 1897939982, 0, 6, 1, 3 },
};

static void key_of(const struct vector *v, const char **key, size_t *len, char *big)
{
    if (v->key) {
        *key = v->key;
        *len = strlen(v->key);
    } else {
        memset(big, 'x', 1000);
        *key = big;
        *len = 1000;
    }
}

Test(hash, java_string_hash_matches_java_client)
{
    static char big[1000];
    for (size_t i = 0; i < sizeof vectors / sizeof vectors[0]; i++) {
        const char *key;
        size_t len;
        key_of(&vectors[i], &key, &len, big);
        int32_t h = pc_hash_java_string(key, len);
        cr_expect_eq(h, vectors[i].java, "JavaStringHash of vector %zu: %d, want %d", i, h,
                     vectors[i].java);
        cr_expect_eq(pc_hash_partition(h, 7), vectors[i].java_p7, "vector %zu, 7 partitions", i);
        cr_expect_eq(pc_hash_partition(h, 13), vectors[i].java_p13, "vector %zu, 13 partitions", i);
    }
}

Test(hash, murmur3_32_matches_java_client)
{
    static char big[1000];
    for (size_t i = 0; i < sizeof vectors / sizeof vectors[0]; i++) {
        const char *key;
        size_t len;
        key_of(&vectors[i], &key, &len, big);
        int32_t h = pc_hash_murmur3_32(key, len);
        cr_expect_eq(h, vectors[i].murmur, "Murmur3 of vector %zu: %d, want %d", i, h,
                     vectors[i].murmur);
        cr_expect_eq(pc_hash_partition(h, 7), vectors[i].murmur_p7, "vector %zu, 7 partitions", i);
        cr_expect_eq(pc_hash_partition(h, 13), vectors[i].murmur_p13, "vector %zu, 13 partitions",
                     i);
    }
}

/* Invalid UTF-8: String.hashCode() & Integer.MAX_VALUE of new String(bytes, UTF_8) on
 * OpenJDK 17 (Pulsar's JavaStringHash.makeHash(byte[]) gave the same). Java's decoder
 * decides how many bytes one U+FFFD swallows; e.g. "eda080" (an encoded surrogate) is one
 * U+FFFD, "e08080" (overlong) is three. The implementation was also compared with Java on
 * 600,000 random byte strings rich in lead, continuation and invalid bytes: no difference. */
static const struct {
    const char *hex;
    int32_t java;
} malformed[] = {
    { "80", 65533 },                /* U+FFFD */
    { "c0af", 2097056 },            /* U+FFFD U+FFFD */
    { "c3", 65533 },                /* U+FFFD */
    { "c328", 2031563 },            /* U+FFFD U+0028 */
    { "e282", 65533 },              /* U+FFFD */
    { "e28228", 2031563 },          /* U+FFFD U+0028 */
    { "e08080", 65074269 },         /* U+FFFD U+FFFD U+FFFD */
    { "eda080", 65533 },            /* U+FFFD */
    { "edbfbf", 65533 },            /* U+FFFD */
    { "f09f98", 65533 },            /* U+FFFD */
    { "f09f", 65533 },              /* U+FFFD */
    { "f0", 65533 },                /* U+FFFD */
    { "f4908080", 2017367872 },     /* U+FFFD U+FFFD U+FFFD U+FFFD */
    { "f5808080", 2017367872 },     /* U+FFFD U+FFFD U+FFFD U+FFFD */
    { "f888808080", 261443773 },    /* U+FFFD U+FFFD U+FFFD U+FFFD U+FFFD */
    { "ff", 65533 },                /* U+FFFD */
    { "fe", 65533 },                /* U+FFFD */
    { "61ff62", 2124838 },          /* U+0061 U+FFFD U+0062 */
    { "f09f9828", 2031563 },        /* U+FFFD U+0028 */
    { "e0a0", 65533 },              /* U+FFFD */
    { "e080", 2097056 },            /* U+FFFD U+FFFD */
    { "f08f", 2097056 },            /* U+FFFD U+FFFD */
    { "f09f41", 2031588 },          /* U+FFFD U+0041 */
    { "6b6579ff2d31", 1075694498 }, /* U+006B U+0065 U+0079 U+FFFD U+002D U+0031 */
    { "c0", 65533 },                /* U+FFFD */
    { "c1bf", 2097056 },            /* U+FFFD U+FFFD */
    { "e0a080", 2048 },             /* U+0800 */
    { "f0908080", 1770496 },        /* U+D800 U+DC00 */
    { "f48fbfbf", 1803232 },        /* U+DBFF U+DFFF */
};

static size_t unhex(const char *hex, char *out)
{
    size_t n = strlen(hex) / 2;
    for (size_t i = 0; i < n; i++) {
        unsigned hi = (unsigned)(hex[2 * i] <= '9' ? hex[2 * i] - '0' : hex[2 * i] - 'a' + 10);
        unsigned lo = (unsigned)(hex[2 * i + 1] <= '9' ? hex[2 * i + 1] - '0'
                                                       : hex[2 * i + 1] - 'a' + 10);
        out[i] = (char)(hi << 4 | lo);
    }
    return n;
}

Test(hash, java_string_hash_of_invalid_utf8_matches_java)
{
    for (size_t i = 0; i < sizeof malformed / sizeof malformed[0]; i++) {
        char key[32];
        size_t len = unhex(malformed[i].hex, key);
        cr_expect_eq(pc_hash_java_string(key, len), malformed[i].java, "bytes %s: %d, want %d",
                     malformed[i].hex, pc_hash_java_string(key, len), malformed[i].java);
    }
}

Test(hash, key_with_embedded_nul_uses_the_length)
{
    /* "a\0b": 31*31*97 + 31*0 + 98 */
    cr_expect_eq(pc_hash_java_string("a\0b", 3), 93315);
    cr_expect_neq(pc_hash_java_string("a\0b", 3), pc_hash_java_string("a", 1));
    cr_expect_neq(pc_hash_murmur3_32("a\0b", 3), pc_hash_murmur3_32("a", 1));
    cr_expect_eq(pc_hash_java_string(NULL, 0), 0);
    cr_expect_eq(pc_hash_murmur3_32(NULL, 0), 0);
}

Test(hash, results_are_never_negative)
{
    char key[8];
    for (int i = 0; i < 20000; i++) {
        size_t len = (size_t)(i % 8);
        for (size_t j = 0; j < len; j++)
            key[j] = (char)(i * 7 + (int)j * 131);
        cr_assert_geq(pc_hash_java_string(key, len), 0);
        cr_assert_geq(pc_hash_murmur3_32(key, len), 0);
    }
}

Test(hash, sign_safe_mod)
{
    /* Java's MathUtils.signSafeMod(dividend, divisor). */
    cr_expect_eq(pc_hash_partition(0, 7), 0);
    cr_expect_eq(pc_hash_partition(13, 7), 6);
    cr_expect_eq(pc_hash_partition(INT32_MAX, 7), 1);
    cr_expect_eq(pc_hash_partition(-1, 7), 6);
    cr_expect_eq(pc_hash_partition(-7, 7), 0);
    cr_expect_eq(pc_hash_partition(INT32_MIN, 7), 5);
    cr_expect_eq(pc_hash_partition(INT32_MIN, 13), 2);
    cr_expect_eq(pc_hash_partition(12345, 1), 0);
    cr_expect_eq(pc_hash_partition(5, 0), -1);
    cr_expect_eq(pc_hash_partition(5, -3), -1);
}
