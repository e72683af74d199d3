#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "wire/crc32c.h"

/* Vectors from RFC 3720 (iSCSI), appendix B.4, plus the common check value. */
static void check_vectors(uint32_t (*fn)(uint32_t, const void *, size_t))
{
    uint8_t buf[32];

    cr_expect_eq(fn(0, "123456789", 9), 0xE3069283u);
    memset(buf, 0, sizeof(buf));
    cr_expect_eq(fn(0, buf, sizeof(buf)), 0x8A9136AAu);
    memset(buf, 0xff, sizeof(buf));
    cr_expect_eq(fn(0, buf, sizeof(buf)), 0x62A8AB43u);
    for (int i = 0; i < 32; i++)
        buf[i] = (uint8_t)i;
    cr_expect_eq(fn(0, buf, sizeof(buf)), 0x46DD794Eu);
    cr_expect_eq(fn(0, NULL, 0), 0u);
    cr_expect_eq(fn(0x12345678u, buf, 0), 0x12345678u, "empty input leaves the crc unchanged");
}

Test(crc32c, dispatched_known_vectors)
{
    check_vectors(pc_crc32c);
}

Test(crc32c, software_known_vectors)
{
    check_vectors(pc_crc32c_sw);
}

Test(crc32c, hardware_known_vectors)
{
    if (!pc_crc32c_hw_available())
        cr_skip_test("no SSE4.2 on this CPU");
    check_vectors(pc_crc32c_hw);
}

Test(crc32c, three_stream_known_vectors)
{
    if (!pc_crc32c_hw3_available())
        cr_skip_test("no SSE4.2 and PCLMULQDQ on this CPU");
    check_vectors(pc_crc32c_hw3);
}

/* The definition, one bit at a time: what every implementation must equal. */
static uint32_t crc_reference(uint32_t crc, const uint8_t *p, size_t len)
{
    crc = ~crc;
    while (len--) {
        crc ^= *p++;
        for (int i = 0; i < 8; i++)
            crc = (crc >> 1) ^ (crc & 1 ? 0x82F63B78u : 0);
    }
    return ~crc;
}

typedef uint32_t (*crc_impl)(uint32_t, const void *, size_t);

/* Every implementation the CPU runs, with its name. */
static int implementations(crc_impl *fns, const char **names)
{
    int n = 0;
    fns[n] = pc_crc32c, names[n++] = "dispatched";
    fns[n] = pc_crc32c_sw, names[n++] = "table";
    if (pc_crc32c_hw_available())
        fns[n] = pc_crc32c_hw, names[n++] = "sse4.2";
    if (pc_crc32c_hw3_available())
        fns[n] = pc_crc32c_hw3, names[n++] = "sse4.2 x3";
    return n;
}

/* Random lengths around and across the three-stream block sizes (3 x 256 and 3 x 8192
 * bytes), at every alignment, with random seeds, against the bit-at-a-time definition. */
Test(crc32c, every_implementation_equals_the_definition)
{
    enum { MAX = 3 * 3 * 8192 + 4096 };
    uint8_t *buf = malloc(MAX + 16);
    cr_assert_not_null(buf);
    srand(4242);
    for (size_t i = 0; i < MAX + 16; i++)
        buf[i] = (uint8_t)rand();
    crc_impl fns[4];
    const char *names[4];
    int n = implementations(fns, names);
    static const size_t edges[] = { 767,         768,          769,   1535,  1536,
                                    1537,        24575,        24576, 24577, 24576 + 768,
                                    49152 + 767, 3 * 3 * 8192, MAX };
    for (int round = 0; round < 300; round++) {
        size_t off = (size_t)rand() % 16;
        size_t len = round < (int)(sizeof edges / sizeof *edges) ? edges[round]
                     : round % 3 == 0                            ? (size_t)rand() % 2048
                                                                 : (size_t)rand() % MAX;
        uint32_t seed = round % 2 ? (uint32_t)rand() : 0;
        uint32_t want = crc_reference(seed, buf + off, len);
        for (int f = 0; f < n; f++)
            cr_assert_eq(fns[f](seed, buf + off, len), want, "%s: off %zu len %zu seed %08x",
                         names[f], off, len, seed);
    }
    free(buf);
}

Test(crc32c, combine_joins_separate_crcs)
{
    enum { MAX = 70000 };
    uint8_t *buf = malloc(MAX);
    cr_assert_not_null(buf);
    srand(77);
    for (size_t i = 0; i < MAX; i++)
        buf[i] = (uint8_t)rand();
    static const size_t cuts[] = { 0, 1, 7, 100, 4096, 40000, MAX };
    for (size_t i = 0; i < sizeof cuts / sizeof *cuts; i++) {
        size_t a = cuts[i];
        uint32_t whole = crc_reference(0, buf, MAX);
        uint32_t joined = pc_crc32c_combine(pc_crc32c(0, buf, a), pc_crc32c(0, buf + a, MAX - a),
                                            MAX - a);
        cr_assert_eq(joined, whole, "cut at %zu", a);
    }
    cr_assert_eq(pc_crc32c_combine(pc_crc32c(0, "1234", 4), pc_crc32c(0, "56789", 5), 5),
                 0xE3069283u);
    cr_assert_eq(pc_crc32c_combine(0, 0, 0), 0u);
    free(buf);
}

Test(crc32c, chaining_in_pieces_equals_whole)
{
    uint8_t buf[1000];
    for (size_t i = 0; i < sizeof(buf); i++)
        buf[i] = (uint8_t)(i * 31 + 7);
    uint32_t whole = pc_crc32c(0, buf, sizeof(buf));
    uint32_t (*fns[])(uint32_t, const void *, size_t) = { pc_crc32c, pc_crc32c_sw };

    for (size_t f = 0; f < 2; f++) {
        for (size_t cut = 0; cut <= sizeof(buf); cut += 37) {
            uint32_t c = fns[f](0, buf, cut);
            cr_expect_eq(fns[f](c, buf + cut, sizeof(buf) - cut), whole, "fn %zu cut %zu", f, cut);
        }
        uint32_t c = 0;
        for (size_t i = 0; i < sizeof(buf); i++)
            c = fns[f](c, buf + i, 1);
        cr_expect_eq(c, whole, "byte by byte, fn %zu", f);
    }
    /* "123456789" in two calls */
    cr_expect_eq(pc_crc32c(pc_crc32c(0, "1234", 4), "56789", 5), 0xE3069283u);
}

Test(crc32c, hardware_and_software_agree)
{
    if (!pc_crc32c_hw_available())
        cr_skip_test("no SSE4.2 on this CPU");
    enum { MAX = 4096 + 64 };
    uint8_t *buf = malloc(MAX);
    cr_assert_not_null(buf);
    srand(12345);
    for (size_t i = 0; i < MAX; i++)
        buf[i] = (uint8_t)rand();
    /* Every alignment against every short length, then longer lengths. */
    for (size_t off = 0; off < 16; off++) {
        for (size_t len = 0; len < 300; len++)
            cr_assert_eq(pc_crc32c_hw(0, buf + off, len), pc_crc32c_sw(0, buf + off, len),
                         "off %zu len %zu", off, len);
        for (size_t len = 300; len + off <= MAX; len += 97) {
            uint32_t seed = (uint32_t)rand();
            cr_assert_eq(pc_crc32c_hw(seed, buf + off, len), pc_crc32c_sw(seed, buf + off, len),
                         "off %zu len %zu", off, len);
        }
    }
    free(buf);
}
