/* Block CRCs of a payload, the copy that checksums as it goes, and range CRCs derived from
 * block CRCs: each checked against the table-driven CRC over the same bytes. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "wire/crc32c.h"
#include "wire/crc32c_blocks.h"

#define B PC_CRC32C_BLOCK

static uint8_t *random_bytes(size_t len, unsigned seed)
{
    uint8_t *p = malloc(len ? len : 1);
    cr_assert_not_null(p);
    srand(seed);
    for (size_t i = 0; i < len; i++)
        p[i] = (uint8_t)rand();
    return p;
}

/* Lengths at and around the block size and its multiples, and odd ones. */
static const size_t lengths[] = { 0,        1,         7,     4095,      B - 1,         B,
                                  B + 1,    2 * B - 3, 2 * B, 2 * B + 5, 3 * B + 12345, 5 * B,
                                  5 * B + 1 };

static void check_blocks(const uint8_t *data, size_t len, const uint32_t *crcs)
{
    for (size_t i = 0; i < pc_crc32c_block_count(len); i++) {
        size_t n = len - i * B < B ? len - i * B : B;
        cr_assert_eq(crcs[i], pc_crc32c_sw(0, data + i * B, n), "len %zu block %zu", len, i);
    }
}

Test(crc32c_blocks, block_count)
{
    cr_assert_eq(pc_crc32c_block_count(0), 0);
    cr_assert_eq(pc_crc32c_block_count(1), 1);
    cr_assert_eq(pc_crc32c_block_count(B), 1);
    cr_assert_eq(pc_crc32c_block_count(B + 1), 2);
    cr_assert_eq(pc_crc32c_block_count(100 * 1024 * 1024), 1600);
}

/* Every length above, from buffers at every alignment of 0..7. */
Test(crc32c_blocks, blocks_equal_the_crc_of_each_block)
{
    size_t max = 5 * B + 1 + 8;
    uint8_t *buf = random_bytes(max, 1);
    uint32_t crcs[8];
    for (size_t l = 0; l < sizeof lengths / sizeof *lengths; l++)
        for (size_t off = 0; off < 8; off++) {
            memset(crcs, 0xab, sizeof crcs);
            pc_crc32c_blocks(buf + off, lengths[l], crcs);
            check_blocks(buf + off, lengths[l], crcs);
            cr_assert_eq(crcs[pc_crc32c_block_count(lengths[l])], 0xabababab,
                         "nothing written past the last block (len %zu)", lengths[l]);
        }
    free(buf);
}

/* The copy is exact, leaves the bytes around the destination alone, and its CRCs are
 * those of the copied bytes; source and destination at different alignments. */
Test(crc32c_blocks, copy_blocks_copies_and_checksums)
{
    size_t max = 5 * B + 1 + 8;
    uint8_t *src = random_bytes(max, 2);
    uint8_t *dst = malloc(max + 16);
    cr_assert_not_null(dst);
    uint32_t crcs[8];
    for (size_t l = 0; l < sizeof lengths / sizeof *lengths; l++)
        for (size_t so = 0; so < 8; so += 3)
            for (size_t d_off = 1; d_off < 9; d_off += 4) {
                size_t len = lengths[l];
                memset(dst, 0x5a, max + 16);
                memset(crcs, 0xab, sizeof crcs);
                pc_crc32c_copy_blocks(dst + d_off, src + so, len, crcs);
                cr_assert_eq(memcmp(dst + d_off, src + so, len), 0, "len %zu", len);
                for (size_t i = 0; i < d_off; i++)
                    cr_assert_eq(dst[i], 0x5a, "byte before the copy (len %zu)", len);
                for (size_t i = d_off + len; i < max + 16; i++)
                    cr_assert_eq(dst[i], 0x5a, "byte after the copy (len %zu)", len);
                check_blocks(src + so, len, crcs);
                cr_assert_eq(crcs[pc_crc32c_block_count(len)], 0xabababab);
            }
    free(src);
    free(dst);
}

/* Ranges starting and ending on, just before and just after block boundaries, inside one
 * block, spanning many, and reaching the short last block, on payloads whose lengths sit
 * around multiples of the block size; plus random ranges. */
Test(crc32c_blocks, range_equals_the_crc_of_the_range)
{
    static const size_t totals[] = { 1, B - 1, B, B + 1, 3 * B, 3 * B + 777, 7 * B - 1 };
    uint8_t *buf = random_bytes(7 * B, 3);
    uint32_t *crcs = malloc(8 * sizeof *crcs);
    cr_assert_not_null(crcs);
    srand(99);
    for (size_t t = 0; t < sizeof totals / sizeof *totals; t++) {
        size_t total = totals[t];
        pc_crc32c_blocks(buf, total, crcs);
        size_t points[32], n = 0;
        for (size_t k = 0; k * B <= total + B && n + 3 <= 30; k++) {
            size_t at = k * B;
            if (at >= 1 && at - 1 <= total)
                points[n++] = at - 1;
            if (at <= total)
                points[n++] = at;
            if (at + 1 <= total)
                points[n++] = at + 1;
        }
        points[n++] = total;
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < n; j++) {
                if (points[j] < points[i])
                    continue;
                size_t off = points[i], len = points[j] - points[i];
                cr_assert_eq(pc_crc32c_range(crcs, buf, total, off, len),
                             pc_crc32c_sw(0, buf + off, len), "total %zu off %zu len %zu", total,
                             off, len);
            }
        for (int r = 0; r < 200; r++) {
            size_t off = (size_t)rand() % (total + 1);
            size_t len = (size_t)rand() % (total - off + 1);
            cr_assert_eq(pc_crc32c_range(crcs, buf, total, off, len),
                         pc_crc32c_sw(0, buf + off, len), "total %zu off %zu len %zu", total, off,
                         len);
        }
    }
    free(crcs);
    free(buf);
}
