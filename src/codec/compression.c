/* Payload compression in the exact block formats the official clients exchange:
 *
 *   LZ4    a raw LZ4 block, no frame header, no checksum (the reader learns the size from
 *          MessageMetadata.uncompressed_size). Compressed with acceleration 1, as the C++
 *          client's LZ4_compress_default.
 *   ZLIB   a zlib stream (2-byte header, deflate data) at the default level. The C++ client
 *          writes a finished stream with its Adler-32 trailer; the Java client stops after a
 *          SYNC_FLUSH, with no final block and no trailer. Both readers accept both, and so
 *          does pc_decompress. We write the finished form.
 *   ZSTD   one zstd frame, level 3 (both official clients use 3).
 *   SNAPPY a raw snappy block (varint length + elements), not the framing format.
 *
 * Those are the default level's; compressionLevel (compression.h) makes LZ4, ZLIB and ZSTD
 * faster or smaller in the same formats.
 *
 * Decompression never trusts the input: it produces exactly uncompressed_size bytes or
 * fails, and nothing is appended to `out` on failure. */
#include "codec/compression.h"

#include <limits.h>
#include <lz4.h>
#include <lz4hc.h>
#include <snappy-c.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

/* Each codec's levels, by pc_compress_level_t (compression.h says why these). */
static const int zstd_levels[] = { 3, 1, 9 };
static const int zlib_levels[] = { Z_DEFAULT_COMPRESSION, Z_BEST_SPEED, Z_BEST_COMPRESSION };
#define LZ4_FASTER_ACCELERATION 8

/* ---- compress ------------------------------------------------------------------------ */

static int lz4_compress(pc_compress_level_t level, const uint8_t *in, size_t len, pc_buf_t *out)
{
    if (len > LZ4_MAX_INPUT_SIZE)
        return -1;
    int bound = LZ4_compressBound((int)len);
    if (bound <= 0 || pc_buf_reserve(out, (size_t)bound) != 0)
        return -1;
    const char *src = (const char *)in;
    char *dst = (char *)out->data + out->len;
    int n = level == PC_LEVEL_BETTER
                ? LZ4_compress_HC(src, dst, (int)len, bound, LZ4HC_CLEVEL_DEFAULT)
            : level == PC_LEVEL_FASTER
                ? LZ4_compress_fast(src, dst, (int)len, bound, LZ4_FASTER_ACCELERATION)
                : LZ4_compress_default(src, dst, (int)len, bound);
    if (n <= 0)
        return -1;
    out->len += (size_t)n;
    return 0;
}

/* One finished zlib stream with zs (deflate-initialised at the default level, as
 * compress2 does, so the bytes are compress2's). */
static int zlib_compress(z_stream *zs, const uint8_t *in, size_t len, pc_buf_t *out)
{
    uLong bound = compressBound((uLong)len);
    if (len > UINT_MAX || bound > UINT_MAX || pc_buf_reserve(out, (size_t)bound) != 0)
        return -1;
    if (deflateReset(zs) != Z_OK)
        return -1;
    zs->next_in = (Bytef *)in;
    zs->avail_in = (uInt)len;
    zs->next_out = out->data + out->len;
    zs->avail_out = (uInt)bound;
    if (deflate(zs, Z_FINISH) != Z_STREAM_END)
        return -1;
    out->len += (size_t)zs->total_out;
    return 0;
}

static int zstd_compress(ZSTD_CCtx *cctx, int level, const uint8_t *in, size_t len, pc_buf_t *out)
{
    size_t bound = ZSTD_compressBound(len);
    if (ZSTD_isError(bound) || pc_buf_reserve(out, bound) != 0)
        return -1;
    size_t n = ZSTD_compressCCtx(cctx, out->data + out->len, bound, in, len, level);
    if (ZSTD_isError(n))
        return -1;
    out->len += n;
    return 0;
}

static z_stream *zlib_context(pc_compressor_t *cx)
{
    if (!cx->zlib) {
        z_stream *zs = calloc(1, sizeof *zs);
        if (!zs)
            return NULL;
        if (deflateInit(zs, zlib_levels[cx->level <= PC_LEVEL_BETTER ? cx->level : 0]) != Z_OK) {
            free(zs);
            return NULL;
        }
        cx->zlib = zs;
    }
    return cx->zlib;
}

static ZSTD_CCtx *zstd_context(pc_compressor_t *cx)
{
    if (!cx->zstd)
        cx->zstd = ZSTD_createCCtx();
    return cx->zstd;
}

void pc_compressor_clear(pc_compressor_t *cx)
{
    if (!cx)
        return;
    ZSTD_freeCCtx(cx->zstd);
    if (cx->zlib) {
        deflateEnd(cx->zlib);
        free(cx->zlib);
    }
    cx->zstd = NULL;
    cx->zlib = NULL;
}

static int snappy_compress_block(const uint8_t *in, size_t len, pc_buf_t *out)
{
    size_t bound = snappy_max_compressed_length(len);
    if (pc_buf_reserve(out, bound) != 0)
        return -1;
    size_t n = bound;
    if (snappy_compress((const char *)in, len, (char *)out->data + out->len, &n) != SNAPPY_OK)
        return -1;
    out->len += n;
    return 0;
}

int pc_compress_with(pc_compressor_t *cx, pc_codec_t codec, const uint8_t *in, size_t len,
                     pc_buf_t *out)
{
    static const uint8_t empty[1] = { 0 };
    if (!out || (!in && len > 0))
        return -1;
    if (!in)
        in = empty; /* the libraries want a valid pointer even for zero bytes */
    if (!cx && (codec == PC_CODEC_ZLIB || codec == PC_CODEC_ZSTD))
        return pc_compress_level(codec, PC_LEVEL_DEFAULT, in, len, out);
    pc_compress_level_t level = cx && cx->level <= PC_LEVEL_BETTER ? cx->level : PC_LEVEL_DEFAULT;

    switch (codec) {
    case PC_CODEC_NONE:
        return pc_buf_append(out, in, len);
    case PC_CODEC_LZ4:
        return lz4_compress(level, in, len, out);
    case PC_CODEC_ZLIB: {
        z_stream *zs = zlib_context(cx);
        return zs ? zlib_compress(zs, in, len, out) : -1;
    }
    case PC_CODEC_ZSTD: {
        ZSTD_CCtx *cctx = zstd_context(cx);
        return cctx ? zstd_compress(cctx, zstd_levels[level], in, len, out) : -1;
    }
    case PC_CODEC_SNAPPY:
        return snappy_compress_block(in, len, out);
    }
    return -1;
}

int pc_compress_level(pc_codec_t codec, pc_compress_level_t level, const uint8_t *in, size_t len,
                      pc_buf_t *out)
{
    pc_compressor_t once = { .level = level };
    int rc = pc_compress_with(&once, codec, in, len, out);
    pc_compressor_clear(&once);
    return rc;
}

int pc_compress(pc_codec_t codec, const uint8_t *in, size_t len, pc_buf_t *out)
{
    return pc_compress_level(codec, PC_LEVEL_DEFAULT, in, len, out);
}

/* ---- decompress ---------------------------------------------------------------------- */
/* Each decoder writes into dst[0..size) (dst is valid even when size is 0) and returns 0
 * only if the input decodes to exactly size bytes. */

static int lz4_decompress(const uint8_t *in, size_t len, uint8_t *dst, size_t size)
{
    if (len > INT_MAX || size > INT_MAX)
        return -1;
    /* The safe decoder never reads past len nor writes past size; a block that would
     * produce more than size bytes is an error, so a short count is the only other case. */
    int n = LZ4_decompress_safe((const char *)in, (char *)dst, (int)len, (int)size);
    return n >= 0 && (size_t)n == size ? 0 : -1;
}

static int zlib_decompress(const uint8_t *in, size_t len, uint8_t *dst, size_t size)
{
    if (len > UINT_MAX || size > UINT_MAX)
        return -1;
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    if (inflateInit(&zs) != Z_OK)
        return -1;

    zs.next_in = (Bytef *)in;
    zs.avail_in = (uInt)len;
    zs.next_out = dst;
    zs.avail_out = (uInt)size;
    int rc = inflate(&zs, Z_SYNC_FLUSH);
    int ok = -1;
    if (rc == Z_STREAM_END) {
        ok = zs.total_out == size ? 0 : -1;
    } else if ((rc == Z_OK || rc == Z_BUF_ERROR) && zs.total_out == size) {
        /* The output is full but the stream has not ended: that is the Java client's
         * sync-flushed form, unless the stream still holds more data than announced. */
        uint8_t extra;
        zs.next_out = &extra;
        zs.avail_out = 1;
        rc = inflate(&zs, Z_SYNC_FLUSH);
        if ((rc == Z_OK || rc == Z_BUF_ERROR || rc == Z_STREAM_END) && zs.total_out == size)
            ok = 0;
    }
    inflateEnd(&zs);
    return ok;
}

static int zstd_decompress(const uint8_t *in, size_t len, uint8_t *dst, size_t size)
{
    /* Bounded by size: a frame that decodes to more is dstSize_tooSmall. */
    size_t n = ZSTD_decompress(dst, size, in, len);
    return !ZSTD_isError(n) && n == size ? 0 : -1;
}

static int snappy_decompress_block(const uint8_t *in, size_t len, uint8_t *dst, size_t size)
{
    size_t announced;
    if (snappy_uncompressed_length((const char *)in, len, &announced) != SNAPPY_OK ||
        announced != size)
        return -1;
    size_t n = size;
    /* snappy validates offsets and lengths against both buffers while decoding. */
    if (snappy_uncompress((const char *)in, len, (char *)dst, &n) != SNAPPY_OK || n != size)
        return -1;
    return 0;
}

int pc_decompress(pc_codec_t codec, const uint8_t *in, size_t len, size_t uncompressed_size,
                  pc_buf_t *out)
{
    static const uint8_t empty[1] = { 0 };
    if (!out || (!in && len > 0))
        return -1;
    if (!in)
        in = empty;

    if (codec == PC_CODEC_NONE) {
        if (len != uncompressed_size)
            return -1;
        return pc_buf_append(out, in, len);
    }
    if (codec != PC_CODEC_LZ4 && codec != PC_CODEC_ZLIB && codec != PC_CODEC_ZSTD &&
        codec != PC_CODEC_SNAPPY)
        return -1;

    /* An empty payload may arrive with no compressed bytes at all: the Java client's ZLIB
     * codec emits nothing for empty input. Whatever the codec, that can only mean "". */
    if (len == 0)
        return uncompressed_size == 0 ? 0 : -1;

    if (pc_buf_reserve(out, uncompressed_size) != 0)
        return -1;
    uint8_t scratch[1];
    uint8_t *dst = uncompressed_size > 0 ? out->data + out->len : scratch;

    int rc = -1;
    switch (codec) {
    case PC_CODEC_LZ4:
        rc = lz4_decompress(in, len, dst, uncompressed_size);
        break;
    case PC_CODEC_ZLIB:
        rc = zlib_decompress(in, len, dst, uncompressed_size);
        break;
    case PC_CODEC_ZSTD:
        rc = zstd_decompress(in, len, dst, uncompressed_size);
        break;
    case PC_CODEC_SNAPPY:
        rc = snappy_decompress_block(in, len, dst, uncompressed_size);
        break;
    default:
        break;
    }
    if (rc != 0)
        return -1;
    out->len += uncompressed_size;
    return 0;
}
