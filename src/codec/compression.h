/* Payload compression in the block formats the official Pulsar clients read.
 * Pure functions over buffers. The codec numbers are the protocol's CompressionType. */
#ifndef PC_COMPRESSION_H
#define PC_COMPRESSION_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"

typedef enum pc_codec {
    PC_CODEC_NONE = 0,
    PC_CODEC_LZ4 = 1,
    PC_CODEC_ZLIB = 2,
    PC_CODEC_ZSTD = 3,
    PC_CODEC_SNAPPY = 4,
} pc_codec_t;

/* How hard to compress (compressionLevel, as the Go client's): the formats stay the same,
 * so every reader decodes any level. LZ4: LZ4_compress_fast with acceleration 8, the
 * default (acceleration 1), or LZ4 HC at level 9 (the same raw block format). ZLIB: 1, 6
 * (zlib's default), 9. ZSTD: 1, 3 (the official clients' level), 9. SNAPPY has none. */
typedef enum pc_compress_level {
    PC_LEVEL_DEFAULT = 0,
    PC_LEVEL_FASTER = 1,
    PC_LEVEL_BETTER = 2,
} pc_compress_level_t;

/* Compress in[0..len) and append the result to out. Returns 0, -1 on failure (out is then
 * unchanged). Formats: LZ4 raw block (no frame), ZLIB zlib stream at the default level,
 * ZSTD one frame at level 3, SNAPPY raw block; the same as the official clients. */
int pc_compress(pc_codec_t codec, const uint8_t *in, size_t len, pc_buf_t *out);
/* pc_compress at a level. */
int pc_compress_level(pc_codec_t codec, pc_compress_level_t level, const uint8_t *in, size_t len,
                      pc_buf_t *out);
/* Compression contexts kept between calls: building a zstd or zlib context costs more
 * than compressing a small batch, so a producer keeps one set. Zeroed memory is an empty
 * set; each context is made on first use. One thread at a time. */
typedef struct pc_compressor {
    void *zstd;                /* ZSTD_CCtx */
    void *zlib;                /* z_stream, deflate-initialised at level */
    pc_compress_level_t level; /* for every codec; set before the first use */
} pc_compressor_t;

/* pc_compress with the contexts in cx (NULL: make and drop them in this call). The bytes
 * are the same as pc_compress's. */
int pc_compress_with(pc_compressor_t *cx, pc_codec_t codec, const uint8_t *in, size_t len,
                     pc_buf_t *out);
/* Free the contexts; cx is an empty set again. */
void pc_compressor_clear(pc_compressor_t *cx);

/* Decompress; the original size is known from MessageMetadata.uncompressed_size.
 * Appends exactly uncompressed_size bytes to out or returns -1 (out unchanged). Input that
 * would decode to more or fewer bytes is an error. Also reads the Java client's ZLIB form
 * (sync-flushed, no trailer) and treats empty input as an empty payload for every codec. */
int pc_decompress(pc_codec_t codec, const uint8_t *in, size_t len, size_t uncompressed_size,
                  pc_buf_t *out);

#endif
