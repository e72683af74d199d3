/* libFuzzer target for the frame reader.
 *
 * Input: 4 bytes choosing how the rest is split into feeds (each byte, cycled, is
 * the size of the next piece; 0 means "everything left"), then the byte stream.
 * Every frame the reader hands out is unpacked, fully read (so ASan sees any
 * out-of-bounds pointer), re-encoded with the library's encoders and decoded again, which
 * must round-trip. A payload frame re-encodes only when its metadata parses (the encoder
 * takes a MessageMetadata), and its metadata comes back as that message packs. Input that
 * pc_frame_peer_kind names as another protocol's (an HTTP answer, a TLS record) never
 * yields a frame. The same pieces lent (pc_frame_reader_lend), each from a copy of its own
 * freed once the reader needs more (so ASan sees a frame that outlives its piece), must
 * yield the same frames and statuses. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wire/crc32c.h"
#include "wire/frame.h"

#define CHECK(cond)           \
    do {                      \
        if (!(cond))          \
            __builtin_trap(); \
    } while (0)

static void roundtrip(const pc_frame_t *f, const Pulsar__Proto__BaseCommand *cmd,
                      const Pulsar__Proto__MessageMetadata *meta)
{
    uint8_t *meta_bytes = NULL;
    size_t meta_len = 0;
    if (f->has_payload) {
        meta_len = pulsar__proto__message_metadata__get_packed_size(meta);
        meta_bytes = malloc(meta_len ? meta_len : 1);
        CHECK(meta_bytes != NULL);
        CHECK(pulsar__proto__message_metadata__pack(meta, meta_bytes) == meta_len);
    }
    pc_buf_t b;
    pc_buf_init(&b);
    int rc = f->has_payload
                 ? pc_frame_encode_payload_head(&b, cmd, meta, f->payload, f->payload_len)
                 : pc_frame_encode_command(&b, cmd);
    CHECK(rc == 0);
    if (f->has_payload)
        CHECK(pc_buf_append(&b, f->payload, f->payload_len) == 0);

    pc_frame_reader_t r;
    pc_frame_t g;
    pc_frame_reader_init(&r, b.len);
    CHECK(pc_frame_reader_feed(&r, b.data, b.len) == 0);
    CHECK(pc_frame_reader_next(&r, &g) == PC_FRAME_OK);
    CHECK(g.has_payload == f->has_payload);
    CHECK(g.command_len == pulsar__proto__base_command__get_packed_size(cmd));
    if (g.has_payload) {
        CHECK(g.checksum_ok);
        CHECK(g.metadata_len == meta_len && g.payload_len == f->payload_len);
        CHECK(memcmp(g.metadata, meta_bytes, meta_len) == 0);
        CHECK(memcmp(g.payload, f->payload, f->payload_len) == 0);
    }
    CHECK(pc_frame_reader_next(&r, &g) == PC_FRAME_NEED_MORE);
    pc_frame_reader_free(&r);
    pc_buf_free(&b);
    free(meta_bytes);
}

static void handle(const pc_frame_t *f)
{
    /* Touch every byte the frame points at. */
    uint32_t c = pc_crc32c(0, f->command, f->command_len);
    Pulsar__Proto__MessageMetadata *meta = NULL;
    if (f->has_payload) {
        c = pc_crc32c(c, f->metadata, f->metadata_len);
        c = pc_crc32c(c, f->payload, f->payload_len);
        meta = pulsar__proto__message_metadata__unpack(NULL, f->metadata_len, f->metadata);
    }
    (void)c;

    Pulsar__Proto__BaseCommand *cmd = pc_frame_unpack_command(f);
    if (cmd && (meta || !f->has_payload))
        roundtrip(f, cmd, meta);
    if (cmd)
        pulsar__proto__base_command__free_unpacked(cmd, NULL);
    if (meta)
        pulsar__proto__message_metadata__free_unpacked(meta, NULL);
}

/* What a frame says, folded into a running digest of the stream's frames. */
static uint32_t digest(uint32_t d, const pc_frame_t *f)
{
    uint8_t flags[2] = { f->has_payload, f->has_payload && f->checksum_ok };
    d = pc_crc32c(d, f->command, f->command_len);
    d = pc_crc32c(d, flags, sizeof flags);
    if (f->has_payload) {
        d = pc_crc32c(d, f->metadata, f->metadata_len);
        d = pc_crc32c(d, f->payload, f->payload_len);
    }
    return d;
}

/* The pieces lent instead of fed; the digest of the frames and the last status. */
static uint32_t lend_pieces(const uint8_t *splits, const uint8_t *data, size_t size,
                            pc_frame_status_t *last)
{
    pc_frame_reader_t r;
    pc_frame_reader_init(&r, 64 * 1024);
    uint32_t d = 0;
    *last = PC_FRAME_NEED_MORE;
    size_t off = 0;
    for (unsigned i = 0; off < size && *last == PC_FRAME_NEED_MORE; i++) {
        size_t piece = splits[i % 4] ? splits[i % 4] : size - off;
        if (piece > size - off)
            piece = size - off;
        uint8_t *copy = malloc(piece);
        CHECK(copy != NULL);
        memcpy(copy, data + off, piece);
        CHECK(pc_frame_reader_lend(&r, copy, piece) == 0);
        off += piece;
        pc_frame_t f;
        while ((*last = pc_frame_reader_next(&r, &f)) == PC_FRAME_OK)
            d = digest(d, &f);
        free(copy);
        CHECK(r.buf.len - r.pos <= 64 * 1024 + 4 + piece);
    }
    pc_frame_reader_free(&r);
    return d;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 4)
        return 0;
    const uint8_t *splits = data;
    data += 4;
    size -= 4;

    /* Bytes named as another protocol's (conn_io.c names a wrong port's peer so) are never
     * a frame the reader takes. */
    bool foreign = pc_frame_peer_kind(data, size) != PC_PEER_UNKNOWN;
    pc_frame_reader_t r;
    pc_frame_reader_init(&r, 64 * 1024);
    size_t off = 0;
    int done = 0;
    uint32_t d = 0;
    pc_frame_status_t last = PC_FRAME_NEED_MORE;
    for (unsigned i = 0; off < size && !done; i++) {
        size_t piece = splits[i % 4] ? splits[i % 4] : size - off;
        if (piece > size - off)
            piece = size - off;
        CHECK(pc_frame_reader_feed(&r, data + off, piece) == 0);
        off += piece;
        pc_frame_t f;
        pc_frame_status_t st;
        while ((st = pc_frame_reader_next(&r, &f)) == PC_FRAME_OK) {
            CHECK(!foreign);
            d = digest(d, &f);
            handle(&f);
        }
        last = st;
        CHECK(st == PC_FRAME_NEED_MORE || st == PC_FRAME_TOO_BIG || st == PC_FRAME_MALFORMED);
        if (st != PC_FRAME_NEED_MORE) {
            /* Errors are sticky. */
            pc_frame_t g;
            CHECK(pc_frame_reader_next(&r, &g) == st);
            done = 1;
        }
        /* Whatever is buffered is at most one partial frame plus this piece. */
        CHECK(r.buf.len - r.pos <= 64 * 1024 + 4 + piece);
    }
    pc_frame_reader_free(&r);

    pc_frame_status_t lent_last;
    CHECK(lend_pieces(splits, data, size, &lent_last) == d);
    CHECK(lent_last == last);
    return 0;
}
