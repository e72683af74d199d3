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
