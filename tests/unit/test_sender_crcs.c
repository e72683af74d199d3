/* Frames built from the sending thread's block CRCs are the frames built without them:
 * byte for byte, for single messages and for chunks at many sizes and boundaries (the
 * last, short chunk included), copied and borrowed payloads. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "publish/send.h"
#include "producer/op_build.h"
#include "pulsarc/pulsarc.h"
#include "wire/crc32c.h"
#include "wire/crc32c_blocks.h"
#include "wire/frame.h"

#define B PC_CRC32C_BLOCK

enum mode { COPIED, BORROWED, BORROWED_KNOWN };

static void no_free(void *data, size_t len, void *ctx)
{
    (void)data;
    (void)len;
    (void)ctx;
}

static pc_msg_t *accept_send(const uint8_t *payload, size_t len, enum mode mode, bool crcs)
{
    pulsarc_message_t *b = pulsarc_message_new();
    cr_assert_not_null(b);
    if (mode == COPIED)
        pulsarc_message_set_payload(b, payload, len);
    else
        pulsarc_message_set_payload_borrowed(b, payload, len, no_free, NULL);
    pulsarc_message_set_property(b, "k", "v");
    uint32_t *known = NULL;
    if (crcs && mode == BORROWED_KNOWN) {
        known = malloc((pc_crc32c_block_count(len) + 1) * sizeof *known);
        cr_assert_not_null(known);
        pc_crc32c_blocks(payload, len, known);
    }
    pc_send_t *s = crcs ? pc_send_from_builder_crcs(NULL, b, known) : pc_send_from_builder(NULL, b);
    free(known);
    cr_assert_not_null(s);
    pulsarc_message_free(b);
    s->msg.sequence_id = 7;
    cr_assert_eq(s->msg.block_crcs != NULL, crcs && len > 0);
    return &s->msg;
}

static void release_ops(pc_op_t *op)
{
    for (pc_op_t *next; op; op = next) {
        next = op->next;
        pc_op_release(op);
    }
}

/* One op's frame, read back: the reader recomputes the checksum from the frame's bytes. */
typedef struct read_frame {
    pc_frame_reader_t r;
    pc_frame_t f;
    Pulsar__Proto__MessageMetadata *meta;
} read_frame;

static void read_back(const pc_op_t *op, read_frame *out)
{
    pc_frame_reader_init(&out->r, 64u << 20);
    cr_assert_eq(pc_frame_reader_feed(&out->r, op->head.data, op->head.len), 0);
    cr_assert_eq(pc_frame_reader_feed(&out->r, op->payload, op->payload_len), 0);
    cr_assert_eq(pc_frame_reader_next(&out->r, &out->f), PC_FRAME_OK);
    cr_assert(out->f.checksum_ok, "chunk %d of %zu bytes: checksum", op->chunk_id, op->payload_len);
    out->meta = pulsar__proto__message_metadata__unpack(NULL, out->f.metadata_len, out->f.metadata);
    cr_assert_not_null(out->meta);
}

static void free_read(read_frame *rf)
{
    pulsar__proto__message_metadata__free_unpacked(rf->meta, NULL);
    pc_frame_reader_free(&rf->r);
}

/* Both chains hold the same frames, byte for byte: heads, checksums included, and
 * payloads. Only the publish time may differ (a frame built in another millisecond); then
 * the checksums of both were checked against their own bytes, and everything else is
 * compared with the publish times made equal. */
static void same_frames(const pc_op_t *a, const pc_op_t *b)
{
    for (; a && b; a = a->next, b = b->next) {
        cr_assert(!a->has_payload_crc, "built without sender CRCs");
        cr_assert(b->has_payload_crc, "chunk %d: built from the sender's CRCs", b->chunk_id);
        cr_assert_eq(a->payload_len, b->payload_len);
        cr_assert_eq(memcmp(a->payload, b->payload, a->payload_len), 0);
        read_frame ra, rb;
        read_back(a, &ra);
        read_back(b, &rb);
        if (ra.meta->publish_time == rb.meta->publish_time) {
            cr_assert_eq(a->head.len, b->head.len);
            cr_assert_eq(memcmp(a->head.data, b->head.data, a->head.len), 0,
                         "chunk %d: heads differ", a->chunk_id);
        } else {
            cr_assert_eq(ra.f.command_len, rb.f.command_len);
            cr_assert_eq(memcmp(ra.f.command, rb.f.command, ra.f.command_len), 0);
            rb.meta->publish_time = ra.meta->publish_time;
            size_t n = pulsar__proto__message_metadata__get_packed_size(ra.meta);
            cr_assert_eq(pulsar__proto__message_metadata__get_packed_size(rb.meta), n);
            uint8_t *ma = malloc(n + 1), *mb = malloc(n + 1);
            cr_assert(ma && mb);
            pulsar__proto__message_metadata__pack(ra.meta, ma);
            pulsar__proto__message_metadata__pack(rb.meta, mb);
            cr_assert_eq(memcmp(ma, mb, n), 0, "chunk %d: metadata differ", a->chunk_id);
            free(ma);
            free(mb);
        }
        free_read(&ra);
        free_read(&rb);
    }
    cr_assert(!a && !b, "as many frames");
}

static void compare(const uint8_t *payload, size_t len, enum mode mode, const pc_op_params_t *p,
                    size_t expect_ops)
{
    pc_msg_t *plain = accept_send(payload, len, mode, false);
    pc_msg_t *summed = accept_send(payload, len, mode, true);
    pc_op_t *a, *a_last, *b, *b_last;
    cr_assert_eq(pc_op_build_message(p, plain, &a, &a_last), PULSARC_OK);
    cr_assert_eq(pc_op_build_message(p, summed, &b, &b_last), PULSARC_OK);
    size_t n = 0;
    for (pc_op_t *op = a; op; op = op->next)
        n++;
    cr_assert_eq(n, expect_ops, "len %zu chunk size %zu", len, p->chunk_size);
    same_frames(a, b);
    release_ops(a);
    release_ops(b);
}

static uint8_t *pattern(size_t len)
{
    uint8_t *p = malloc(len);
    cr_assert_not_null(p);
    uint32_t x = 12345;
    for (size_t i = 0; i < len; i++) {
        x = x * 1103515245u + 12345u;
        p[i] = (uint8_t)(x >> 16);
    }
    return p;
}

static const size_t sizes[] = { 1, B - 1, B, B + 1, 3 * B + 12345, 5 * B };

Test(sender_crcs, single_frames_are_identical)
{
    uint8_t *payload = pattern(5 * B);
    pc_op_params_t p = { .producer_id = 1,
                         .producer_name = "p",
                         .max_message_size = 5 * 1024 * 1024 };
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
        for (int mode = COPIED; mode <= BORROWED_KNOWN; mode++)
            compare(payload, sizes[s], (enum mode)mode, &p, 1);
    free(payload);
}

/* Chunk sizes below, at and above the block size and its multiples, odd ones that move
 * every boundary, and the size derived from a small max_message_size. */
Test(sender_crcs, chunk_frames_are_identical)
{
    static const size_t chunk_sizes[] = { 1000, B - 1, B, B + 1, 2 * B, 100003, 0 };
    size_t max = 5 * B;
    uint8_t *payload = pattern(max);
    for (size_t c = 0; c < sizeof chunk_sizes / sizeof *chunk_sizes; c++) {
        pc_op_params_t p = { .producer_id = 1,
                             .producer_name = "p",
                             .max_message_size = chunk_sizes[c] ? 5 * 1024 * 1024 : 150000,
                             .chunking = true,
                             .chunk_size = chunk_sizes[c] };
        for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
            size_t len = sizes[s];
            pc_op_t *probe, *probe_last;
            pc_msg_t *m = accept_send(payload, len, COPIED, false);
            cr_assert_eq(pc_op_build_message(&p, m, &probe, &probe_last), PULSARC_OK);
            size_t chunk = probe->payload_len, n = 0;
            for (pc_op_t *op = probe; op; op = op->next)
                n++;
            release_ops(probe);
            cr_assert_eq(n, len > chunk ? pc_chunk_count(len, chunk) : 1);
            for (int mode = COPIED; mode <= BORROWED_KNOWN; mode++)
                compare(payload, len, (enum mode)mode, &p, n);
        }
    }
    free(payload);
}
