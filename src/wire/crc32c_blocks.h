/* CRC32C of a large payload kept as the CRCs of its fixed-size blocks, so that the CRC of
 * any range of it (a whole message, or one chunk whose bounds are only known when frames
 * are built) can be derived later without reading the payload again, apart from the
 * partial blocks at the range's two ends.
 *
 * Block i covers bytes [i * PC_CRC32C_BLOCK, (i + 1) * PC_CRC32C_BLOCK) of the payload;
 * the last block may be shorter. Each block's CRC starts from 0. Any thread. */
#ifndef PC_CRC32C_BLOCKS_H
#define PC_CRC32C_BLOCKS_H

#include <stddef.h>
#include <stdint.h>

/* Small enough that the two partial blocks of a chunk cost little to checksum again,
 * large enough that a 100 MiB payload needs only 1600 CRCs (6.4 KB). Copies go in pieces
 * of this size too: a piece just checksummed is still in the L2 cache when it is copied. */
#define PC_CRC32C_BLOCK (64 * 1024)

/* How many blocks a payload of len bytes has (0 for an empty one). */
static inline size_t pc_crc32c_block_count(size_t len)
{
    return (len + PC_CRC32C_BLOCK - 1) / PC_CRC32C_BLOCK;
}

/* out[i] = the CRC of block i of data; out holds pc_crc32c_block_count(len) values. */
void pc_crc32c_blocks(const void *data, size_t len, uint32_t *out);

/* memcpy(dst, src, len) and pc_crc32c_blocks(src, len, out) in one pass, block by block,
 * so the payload is read from memory once (on x86-64 the copy bypasses the cache: see
 * crc32c_blocks.c). The buffers must not overlap. */
void pc_crc32c_copy_blocks(void *dst, const void *src, size_t len, uint32_t *out);

/* pc_crc32c(0, data + off, len) from the block CRCs of the whole payload of total bytes
 * (blocks, from pc_crc32c_blocks(data, total)): whole blocks are combined, only the bytes
 * of partially covered blocks at either end are read. off + len must not exceed total. */
uint32_t pc_crc32c_range(const uint32_t *blocks, const uint8_t *data, size_t total, size_t off,
                         size_t len);

#endif
