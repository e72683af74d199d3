#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "wire/crc32c.h"
#include "wire/frame.h"

/* BaseCommand{type=PING(18), ping={}}:
 *   08 12    field 1 (type), varint 18
 *   92 01 00 field 18 (ping), length-delimited, empty */
static const uint8_t ping_frame[] = {
    0x00, 0x00, 0x00, 0x09, /* total size: 4 + 5 */
    0x00, 0x00, 0x00, 0x05, /* command size */
    0x08, 0x12, 0x92, 0x01, 0x00,
};

/* BaseCommand{type=SEND(6), send={producer_id=1, sequence_id=2}},
 * MessageMetadata{producer_name="p", sequence_id=2, publish_time=3}, payload "hi". */
static const uint8_t send_frame[] = {
    0x00, 0x00, 0x00, 0x1f,                         /* total: 4+8+2+4+4+7+2 = 31 */
    0x00, 0x00, 0x00, 0x08,                         /* command size */
    0x08, 0x06, 0x32, 0x04, 0x08, 0x01, 0x10, 0x02, /* type=6, send{1: 1, 2: 2} */
    0x0e, 0x01,                                     /* magic */
    0x41, 0x95, 0x52, 0x13,                         /* crc32c of the 13 bytes below */
    0x00, 0x00, 0x00, 0x07,                         /* metadata size */
    0x0a, 0x01, 'p',  0x10, 0x02, 0x18, 0x03,       /* metadata */
    'h',  'i',                                      /* payload */
};

static void encode_ping(pc_buf_t *b)
{
    Pulsar__Proto__BaseCommand cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    Pulsar__Proto__CommandPing ping = PULSAR__PROTO__COMMAND_PING__INIT;
    cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__PING;
    cmd.ping = &ping;
    cr_assert_eq(pc_frame_encode_command(b, &cmd), 0);
}

static void encode_send(pc_buf_t *b, uint64_t seq, const char *payload)
{
    Pulsar__Proto__BaseCommand cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    Pulsar__Proto__CommandSend send = PULSAR__PROTO__COMMAND_SEND__INIT;
    Pulsar__Proto__MessageMetadata meta = PULSAR__PROTO__MESSAGE_METADATA__INIT;
    char name[] = "p";
    cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__SEND;
    cmd.send = &send;
    send.producer_id = 1;
    send.sequence_id = seq;
    meta.producer_name = name;
    meta.sequence_id = seq;
    meta.publish_time = 3;
    size_t n = strlen(payload);
    cr_assert_eq(pc_frame_encode_payload_head(b, &cmd, &meta, (const uint8_t *)payload, n), 0);
    cr_assert_eq(pc_buf_append(b, payload, n), 0);
}

static pc_frame_status_t feed_and_next(pc_frame_reader_t *r, const void *data, size_t len,
                                       pc_frame_t *f)
{
    cr_assert_eq(pc_frame_reader_feed(r, data, len), 0);
    return pc_frame_reader_next(r, f);
}

Test(frame, golden_ping)
{
    pc_buf_t b;
    pc_buf_init(&b);
    encode_ping(&b);
    cr_assert_eq(b.len, sizeof(ping_frame));
    cr_assert_arr_eq(b.data, ping_frame, sizeof(ping_frame));
    pc_buf_free(&b);
}

Test(frame, golden_send)
{
    pc_buf_t b;
    pc_buf_init(&b);
    encode_send(&b, 2, "hi");
    cr_assert_eq(b.len, sizeof(send_frame));
    cr_assert_arr_eq(b.data, send_frame, sizeof(send_frame));
    cr_assert_eq(pc_read_u16be(b.data + 16), PC_FRAME_MAGIC);
    cr_assert_eq(pc_read_u32be(b.data + 18),
                 pc_crc32c(0, send_frame + 22, sizeof(send_frame) - 22));
    pc_buf_free(&b);
}

Test(frame, golden_send_head_only_after_existing_bytes)
{
    Pulsar__Proto__BaseCommand cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    Pulsar__Proto__CommandSend send = PULSAR__PROTO__COMMAND_SEND__INIT;
    Pulsar__Proto__MessageMetadata meta = PULSAR__PROTO__MESSAGE_METADATA__INIT;
    char name[] = "p";
    cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__SEND;
    cmd.send = &send;
    send.producer_id = 1;
    send.sequence_id = 2;
    meta.producer_name = name;
    meta.sequence_id = 2;
    meta.publish_time = 3;

    pc_buf_t b;
    pc_buf_init(&b);
    cr_assert_eq(pc_buf_append(&b, "xy", 2), 0); /* appends after existing bytes */
    cr_assert_eq(pc_frame_encode_payload_head(&b, &cmd, &meta, (const uint8_t *)"hi", 2), 0);
    /* Head only: the payload is the caller's to write, yet the checksum covers it. */
    cr_assert_eq(b.len, 2 + sizeof(send_frame) - 2);
    cr_assert_arr_eq(b.data, "xy", 2);
    cr_assert_arr_eq(b.data + 2, send_frame, sizeof(send_frame) - 2);
    pc_buf_free(&b);
}

Test(frame, decode_golden_frames)
{
    pc_frame_reader_t r;
    pc_frame_t f;
    pc_frame_reader_init(&r, 1024);

    cr_assert_eq(feed_and_next(&r, ping_frame, sizeof(ping_frame), &f), PC_FRAME_OK);
    cr_expect_not(f.has_payload);
    cr_expect_eq(f.command_len, 5);
    Pulsar__Proto__BaseCommand *cmd = pc_frame_unpack_command(&f);
    cr_assert_not_null(cmd);
    cr_expect_eq(cmd->type, PULSAR__PROTO__BASE_COMMAND__TYPE__PING);
    cr_expect_not_null(cmd->ping);
    pulsar__proto__base_command__free_unpacked(cmd, NULL);

    cr_assert_eq(feed_and_next(&r, send_frame, sizeof(send_frame), &f), PC_FRAME_OK);
    cr_expect(f.has_payload);
    cr_expect(f.checksum_ok);
    cr_expect_eq(f.command_len, 8);
    cr_expect_eq(f.metadata_len, 7);
    cr_expect_arr_eq(f.metadata, send_frame + 26, 7);
    cr_expect_eq(f.payload_len, 2);
    cr_expect_arr_eq(f.payload, "hi", 2);
    cmd = pc_frame_unpack_command(&f);
    cr_assert_not_null(cmd);
    cr_expect_eq(cmd->type, PULSAR__PROTO__BASE_COMMAND__TYPE__SEND);
    cr_assert_not_null(cmd->send);
    cr_expect_eq(cmd->send->producer_id, 1);
    cr_expect_eq(cmd->send->sequence_id, 2);
    pulsar__proto__base_command__free_unpacked(cmd, NULL);

    cr_expect_eq(pc_frame_reader_next(&r, &f), PC_FRAME_NEED_MORE);
    pc_frame_reader_free(&r);
}

Test(frame, round_trip_producer_and_metadata)
{
    Pulsar__Proto__BaseCommand cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    Pulsar__Proto__CommandProducer prod = PULSAR__PROTO__COMMAND_PRODUCER__INIT;
    char topic[] = "persistent://public/default/t";
    cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__PRODUCER;
    cmd.producer = &prod;
    prod.topic = topic;
    prod.producer_id = 7;
    prod.request_id = 1ull << 40;

    Pulsar__Proto__BaseCommand scmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    Pulsar__Proto__CommandSend send = PULSAR__PROTO__COMMAND_SEND__INIT;
    Pulsar__Proto__MessageMetadata meta = PULSAR__PROTO__MESSAGE_METADATA__INIT;
    char name[] = "producer-1", uuid[] = "u-1";
    scmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__SEND;
    scmd.send = &send;
    send.producer_id = 7;
    send.sequence_id = 99;
    send.has_num_messages = 1;
    send.num_messages = 3;
    meta.producer_name = name;
    meta.sequence_id = 99;
    meta.publish_time = 1700000000000ull;
    meta.has_compression = 1;
    meta.compression = PULSAR__PROTO__COMPRESSION_TYPE__ZSTD;
    meta.uuid = uuid;
    meta.has_chunk_id = 1;
    meta.chunk_id = 2;
    uint8_t payload[3000];
    for (size_t i = 0; i < sizeof(payload); i++)
        payload[i] = (uint8_t)(i ^ (i >> 8));

    pc_buf_t b;
    pc_buf_init(&b);
    cr_assert_eq(pc_frame_encode_command(&b, &cmd), 0);
    cr_assert_eq(pc_frame_encode_payload_head(&b, &scmd, &meta, payload, sizeof(payload)), 0);
    cr_assert_eq(pc_buf_append(&b, payload, sizeof(payload)), 0);

    pc_frame_reader_t r;
    pc_frame_t f;
    pc_frame_reader_init(&r, PC_FRAME_DEFAULT_MAX_MESSAGE_SIZE + PC_FRAME_OVERHEAD_ALLOWANCE);
    cr_assert_eq(feed_and_next(&r, b.data, b.len, &f), PC_FRAME_OK);
    Pulsar__Proto__BaseCommand *got = pc_frame_unpack_command(&f);
    cr_assert_not_null(got);
    cr_expect_eq(got->type, PULSAR__PROTO__BASE_COMMAND__TYPE__PRODUCER);
    cr_assert_not_null(got->producer);
    cr_expect_str_eq(got->producer->topic, topic);
    cr_expect_eq(got->producer->producer_id, 7);
    cr_expect_eq(got->producer->request_id, 1ull << 40);
    pulsar__proto__base_command__free_unpacked(got, NULL);

    cr_assert_eq(pc_frame_reader_next(&r, &f), PC_FRAME_OK);
    cr_expect(f.has_payload);
    cr_expect(f.checksum_ok);
    cr_assert_eq(f.payload_len, sizeof(payload));
    cr_expect_arr_eq(f.payload, payload, sizeof(payload));
    got = pc_frame_unpack_command(&f);
    cr_assert_not_null(got);
    cr_expect_eq(got->send->sequence_id, 99);
    cr_expect_eq(got->send->num_messages, 3);
    pulsar__proto__base_command__free_unpacked(got, NULL);
    Pulsar__Proto__MessageMetadata *m = pulsar__proto__message_metadata__unpack(NULL,
                                                                                f.metadata_len,
                                                                                f.metadata);
    cr_assert_not_null(m);
    cr_expect_str_eq(m->producer_name, name);
    cr_expect_eq(m->publish_time, 1700000000000ull);
    cr_expect_eq(m->compression, PULSAR__PROTO__COMPRESSION_TYPE__ZSTD);
    cr_expect_str_eq(m->uuid, uuid);
    cr_expect_eq(m->chunk_id, 2);
    cr_expect_eq(m->num_messages_in_batch, 1, "upstream default");
    pulsar__proto__message_metadata__free_unpacked(m, NULL);

    cr_expect_eq(pc_frame_reader_next(&r, &f), PC_FRAME_NEED_MORE);
    pc_frame_reader_free(&r);
    pc_buf_free(&b);
}

/* A stream of mixed frames, and what the reader must hand back for it. */
static void build_stream(pc_buf_t *b)
{
    pc_buf_init(b);
    encode_ping(b);
    encode_send(b, 10, "first");
    encode_send(b, 11, "");
    encode_ping(b);
    encode_send(b, 12, "third payload");
}

static void check_frame(const pc_frame_t *f, int i)
{
    static const int types[] = { 18, 6, 6, 18, 6 };
    static const char *const payloads[] = { NULL, "first", "", NULL, "third payload" };
    Pulsar__Proto__BaseCommand *cmd = pc_frame_unpack_command(f);
    cr_assert_not_null(cmd, "frame %d", i);
    cr_expect_eq((int)cmd->type, types[i], "frame %d", i);
    if (payloads[i]) {
        cr_expect(f->has_payload);
        cr_expect(f->checksum_ok);
        cr_expect_eq(f->payload_len, strlen(payloads[i]), "frame %d", i);
        cr_expect(memcmp(f->payload, payloads[i], f->payload_len) == 0, "frame %d", i);
        cr_expect_eq(cmd->send->sequence_id, (uint64_t)(9 + i - (i > 2)), "frame %d", i);
    } else {
        cr_expect_not(f->has_payload);
    }
    pulsar__proto__base_command__free_unpacked(cmd, NULL);
}

/* Take every frame the reader has, each checked against the stream; how many. */
static int take_stream(pc_frame_reader_t *r)
{
    pc_frame_t f;
    pc_frame_status_t st;
    int n = 0;
    while ((st = pc_frame_reader_next(r, &f)) == PC_FRAME_OK)
        check_frame(&f, n++);
    cr_expect_eq(st, PC_FRAME_NEED_MORE);
    return n;
}

Test(frame, several_frames_in_one_feed)
{
    pc_buf_t b;
    build_stream(&b);
    pc_frame_reader_t r;
    pc_frame_reader_init(&r, 4096);
    cr_assert_eq(pc_frame_reader_feed(&r, b.data, b.len), 0);
    cr_expect_eq(take_stream(&r), 5);
    pc_frame_reader_free(&r);
    pc_buf_free(&b);
}

Test(frame, byte_by_byte)
{
    pc_buf_t b;
    build_stream(&b);
    pc_frame_reader_t r;
    pc_frame_t f;
    pc_frame_reader_init(&r, 4096);
    int n = 0;
    for (size_t i = 0; i < b.len; i++) {
        cr_assert_eq(pc_frame_reader_feed(&r, b.data + i, 1), 0);
        pc_frame_status_t st;
        while ((st = pc_frame_reader_next(&r, &f)) == PC_FRAME_OK)
            check_frame(&f, n++);
        cr_assert_eq(st, PC_FRAME_NEED_MORE, "at byte %zu", i);
    }
    cr_expect_eq(n, 5);
    /* Everything consumed: the next feed compacts the buffer to nothing. */
    cr_assert_eq(pc_frame_reader_feed(&r, NULL, 0), 0);
    cr_expect_eq(r.buf.len, 0);
    pc_frame_reader_free(&r);
    pc_buf_free(&b);
}

Test(frame, uneven_splits)
{
    pc_buf_t b;
    build_stream(&b);
    for (size_t step = 2; step < 40; step += 3) {
        pc_frame_reader_t r;
        pc_frame_t f;
        pc_frame_reader_init(&r, 4096);
        int n = 0;
        for (size_t off = 0; off < b.len; off += step) {
            size_t len = b.len - off < step ? b.len - off : step;
            cr_assert_eq(pc_frame_reader_feed(&r, b.data + off, len), 0);
            while (pc_frame_reader_next(&r, &f) == PC_FRAME_OK)
                check_frame(&f, n++);
        }
        cr_expect_eq(n, 5, "step %zu", step);
        pc_frame_reader_free(&r);
    }
    pc_buf_free(&b);
}

/* Lent bytes, as a connection's read buffer lends them: each piece is lent from a buffer
 * of its own, which is wiped once the reader has said it needs more, as the next read
 * overwrites the read buffer. Frames lying whole in a piece point into it; a frame split
 * between pieces comes back whole all the same. */
Test(frame, lent_pieces_any_split)
{
    pc_buf_t b;
    build_stream(&b);
    for (size_t step = 1; step < 60; step += 2) {
        pc_frame_reader_t r;
        pc_frame_t f;
        pc_frame_reader_init(&r, 4096);
        int n = 0, in_place = 0;
        uint8_t piece[64];
        for (size_t off = 0; off < b.len; off += step) {
            size_t len = b.len - off < step ? b.len - off : step;
            memcpy(piece, b.data + off, len);
            cr_assert_eq(pc_frame_reader_lend(&r, piece, len), 0);
            pc_frame_status_t st;
            while ((st = pc_frame_reader_next(&r, &f)) == PC_FRAME_OK) {
                in_place += f.command >= piece && f.command < piece + len;
                check_frame(&f, n++);
            }
            cr_assert_eq(st, PC_FRAME_NEED_MORE, "step %zu at %zu", step, off);
            memset(piece, 0xa5, sizeof piece);
        }
        cr_expect_eq(n, 5, "step %zu", step);
        if (step >= 59)
            cr_expect_gt(in_place, 0, "no frame was read in place");
        pc_frame_reader_free(&r);
    }
    pc_buf_free(&b);
}

/* Feeding and lending mix in stream order: lent bytes not yet taken come before what is
 * fed next. */
Test(frame, lent_then_fed_keeps_the_order)
{
    pc_buf_t b;
    build_stream(&b);
    pc_frame_reader_t r;
    pc_frame_reader_init(&r, 4096);
    size_t half = b.len / 2;
    cr_assert_eq(pc_frame_reader_lend(&r, b.data, half), 0);
    cr_assert_eq(pc_frame_reader_feed(&r, b.data + half, b.len - half), 0);
    cr_expect_eq(take_stream(&r), 5);
    pc_frame_reader_free(&r);
    pc_buf_free(&b);
}

/* A bad size is refused as soon as it is lent, as when fed, and nothing of it is kept. */
Test(frame, lent_bad_sizes_are_refused_at_once)
{
    pc_frame_reader_t r;
    pc_frame_t f;
    const uint8_t huge[] = { 0x7f, 0xff, 0xff, 0xff, 0, 0 };
    pc_frame_reader_init(&r, 1024);
    cr_assert_eq(pc_frame_reader_lend(&r, huge, 2), 0);
    cr_expect_eq(pc_frame_reader_next(&r, &f), PC_FRAME_NEED_MORE);
    cr_assert_eq(pc_frame_reader_lend(&r, huge + 2, sizeof huge - 2), 0);
    cr_expect_eq(pc_frame_reader_next(&r, &f), PC_FRAME_TOO_BIG);
    cr_expect_leq(r.buf.len, 8);
    pc_frame_reader_free(&r);
}

Test(frame, truncated_needs_more)
{
    pc_frame_reader_t r;
    pc_frame_t f;
    pc_frame_reader_init(&r, 1024);
    cr_expect_eq(pc_frame_reader_next(&r, &f), PC_FRAME_NEED_MORE, "empty reader");
    cr_expect_eq(feed_and_next(&r, send_frame, 3, &f), PC_FRAME_NEED_MORE);
    cr_expect_eq(feed_and_next(&r, send_frame + 3, 4, &f), PC_FRAME_NEED_MORE);
    cr_expect_eq(feed_and_next(&r, send_frame + 7, sizeof(send_frame) - 8, &f), PC_FRAME_NEED_MORE);
    cr_expect_eq(pc_frame_reader_next(&r, &f), PC_FRAME_NEED_MORE, "asking again changes nothing");
    cr_expect_eq(r.error, 0);
    cr_expect_eq(feed_and_next(&r, send_frame + sizeof(send_frame) - 1, 1, &f), PC_FRAME_OK);
    cr_expect(f.checksum_ok);
    pc_frame_reader_free(&r);
}

Test(frame, too_big_is_sticky)
{
    pc_frame_reader_t r;
    pc_frame_t f;
    /* Exactly the limit is fine. */
    pc_frame_reader_init(&r, sizeof(send_frame) - 4);
    cr_expect_eq(feed_and_next(&r, send_frame, sizeof(send_frame), &f), PC_FRAME_OK);
    pc_frame_reader_free(&r);

    pc_frame_reader_init(&r, sizeof(send_frame) - 5);
    /* Judged from the size field alone, before the rest arrives. */
    cr_expect_eq(feed_and_next(&r, send_frame, 4, &f), PC_FRAME_TOO_BIG);
    cr_expect_eq(feed_and_next(&r, send_frame + 4, sizeof(send_frame) - 4, &f), PC_FRAME_TOO_BIG);
    cr_expect_eq(pc_frame_reader_next(&r, &f), PC_FRAME_TOO_BIG);
    pc_frame_reader_free(&r);

    static const uint8_t huge[] = { 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 1, 0x08 };
    pc_frame_reader_init(&r, PC_FRAME_DEFAULT_MAX_MESSAGE_SIZE + PC_FRAME_OVERHEAD_ALLOWANCE);
    cr_expect_eq(feed_and_next(&r, huge, sizeof(huge), &f), PC_FRAME_TOO_BIG);
    pc_frame_reader_free(&r);
}

static void expect_malformed(const uint8_t *bytes, size_t len, const char *what)
{
    pc_frame_reader_t r;
    pc_frame_t f;
    pc_frame_reader_init(&r, 1024);
    cr_expect_eq(feed_and_next(&r, bytes, len, &f), PC_FRAME_MALFORMED, "%s", what);
    /* Sticky: a good frame afterwards does not revive the stream. */
    cr_expect_eq(feed_and_next(&r, ping_frame, sizeof(ping_frame), &f), PC_FRAME_MALFORMED, "%s",
                 what);
    cr_expect_eq(pc_frame_reader_next(&r, &f), PC_FRAME_MALFORMED, "%s", what);
    pc_frame_reader_free(&r);
}

Test(frame, malformed_sizes)
{
    static const uint8_t total_0[] = { 0, 0, 0, 0 };
    static const uint8_t total_3[] = { 0, 0, 0, 3, 0, 0, 0 };
    static const uint8_t cmd_0[] = { 0, 0, 0, 4, 0, 0, 0, 0 };
    static const uint8_t cmd_over[] = { 0, 0, 0, 6, 0, 0, 0, 3, 0x08, 0x12 };
    /* Judged as soon as the command size arrives, before the body. */
    static const uint8_t cmd_huge[] = { 0, 0, 0, 9, 0xff, 0xff, 0xff, 0xff };
    /* Payload section of 1..9 bytes: not even magic + crc + metadata size. */
    static const uint8_t short_payload[] = { 0,    0,    0,    12,   0, 0, 0, 2,
                                             0x08, 0x12, 0x0e, 0x01, 0, 0, 0, 0 };
    /* Payload section without the magic. */
    static const uint8_t no_magic[] = { 0,    0,    0, 16, 0, 0, 0, 2, 0x08, 0x12,
                                        0x0e, 0x02, 0, 0,  0, 0, 0, 0, 0,    0 };
    /* Metadata size larger than what follows it. */
    static const uint8_t meta_over[] = { 0,    0, 0, 17, 0, 0, 0, 2, 0x08, 0x12, 0x0e,
                                         0x01, 0, 0, 0,  0, 0, 0, 0, 2,    0x00 };
    expect_malformed(total_0, sizeof(total_0), "total 0");
    expect_malformed(total_3, sizeof(total_3), "total 3");
    expect_malformed(cmd_0, sizeof(cmd_0), "command size 0");
    expect_malformed(cmd_over, sizeof(cmd_over), "command size > total - 4");
    expect_malformed(cmd_huge, sizeof(cmd_huge), "command size 0xffffffff");
    expect_malformed(short_payload, sizeof(short_payload), "payload section too short");
    expect_malformed(no_magic, sizeof(no_magic), "no magic");
    expect_malformed(meta_over, sizeof(meta_over), "metadata size too large");

    /* The boundary cases that are legal: empty metadata and empty payload. */
    static const uint8_t meta_exact[] = { 0,    0,    0,    16,   0,    0,    0, 2, 0x08, 0x12,
                                          0x0e, 0x01, 0x48, 0x67, 0x4b, 0xc7, 0, 0, 0,    0 };
    pc_frame_reader_t r;
    pc_frame_t f;
    pc_frame_reader_init(&r, 1024);
    cr_assert_eq(feed_and_next(&r, meta_exact, sizeof(meta_exact), &f), PC_FRAME_OK);
    cr_expect(f.has_payload);
    cr_expect_eq(f.metadata_len, 0);
    cr_expect_eq(f.payload_len, 0);
    cr_expect(f.checksum_ok, "crc32c of 00 00 00 00 is 0x48674bc7");
    pc_frame_reader_free(&r);
}

Test(frame, corrupted_byte_fails_checksum)
{
    /* Flip one bit in turn in every checksummed byte and in the crc itself. */
    for (size_t i = 18; i < sizeof(send_frame); i++) {
        uint8_t bad[sizeof(send_frame)];
        memcpy(bad, send_frame, sizeof(bad));
        bad[i] ^= 0x10;
        if (i >= 22 && i < 26)
            continue; /* the metadata size: changes the layout, covered elsewhere */
        pc_frame_reader_t r;
        pc_frame_t f;
        pc_frame_reader_init(&r, 1024);
        cr_assert_eq(feed_and_next(&r, bad, sizeof(bad), &f), PC_FRAME_OK, "byte %zu", i);
        cr_expect(f.has_payload);
        cr_expect_not(f.checksum_ok, "byte %zu", i);
        /* A bad checksum is the caller's decision, not a stream error. */
        cr_expect_eq(feed_and_next(&r, send_frame, sizeof(send_frame), &f), PC_FRAME_OK);
        cr_expect(f.checksum_ok);
        pc_frame_reader_free(&r);
    }
}

Test(frame, garbage_command_does_not_unpack)
{
    /* Well framed, but the command bytes are not a BaseCommand. */
    static const uint8_t garbage[] = { 0, 0, 0, 8, 0, 0, 0, 4, 0xff, 0xff, 0xff, 0xff };
    /* Parses as protobuf but lacks the required `type`. */
    static const uint8_t no_type[] = { 0, 0, 0, 7, 0, 0, 0, 3, 0x92, 0x01, 0x00 };
    /* A field truncated inside the command. */
    static const uint8_t cut[] = { 0, 0, 0, 7, 0, 0, 0, 3, 0x08, 0x12, 0x92 };
    const uint8_t *cases[] = { garbage, no_type, cut };
    size_t lens[] = { sizeof(garbage), sizeof(no_type), sizeof(cut) };
    for (int i = 0; i < 3; i++) {
        pc_frame_reader_t r;
        pc_frame_t f;
        pc_frame_reader_init(&r, 1024);
        cr_assert_eq(feed_and_next(&r, cases[i], lens[i], &f), PC_FRAME_OK, "case %d", i);
        cr_expect_null(pc_frame_unpack_command(&f), "case %d", i);
        pc_frame_reader_free(&r);
    }
}

Test(frame, buffer_stays_bounded)
{
    pc_buf_t b;
    pc_buf_init(&b);
    encode_send(&b, 5, "some payload bytes");
    pc_frame_reader_t r;
    pc_frame_t f;
    pc_frame_reader_init(&r, 1024);
    /* Feed frames in pieces that straddle frame boundaries, consuming as we go. */
    int n = 0;
    size_t off = 0, piece = 7;
    for (int round = 0; round < 20000; round++) {
        size_t len = b.len - off < piece ? b.len - off : piece;
        cr_assert_eq(pc_frame_reader_feed(&r, b.data + off, len), 0);
        off = (off + len) % b.len;
        while (pc_frame_reader_next(&r, &f) == PC_FRAME_OK) {
            cr_assert(f.checksum_ok);
            n++;
        }
    }
    cr_expect_geq(n, 20000 / (int)((b.len + piece - 1) / piece) - 1, "n %d", n);
    cr_expect_leq(r.buf.cap, 256, "cap %zu", r.buf.cap);
    pc_frame_reader_free(&r);
    pc_buf_free(&b);
}

Test(frame, unknown_command_type_still_unpacks)
{
    /* protobuf-c keeps unknown enum values, so a type from a newer broker reaches
     * the caller (who must treat it as unknown) rather than failing the parse. */
    static const uint8_t future[] = { 0, 0, 0, 6, 0, 0, 0, 2, 0x08, 0x63 };
    pc_frame_reader_t r;
    pc_frame_t f;
    pc_frame_reader_init(&r, 1024);
    cr_assert_eq(feed_and_next(&r, future, sizeof(future), &f), PC_FRAME_OK);
    Pulsar__Proto__BaseCommand *cmd = pc_frame_unpack_command(&f);
    cr_assert_not_null(cmd);
    cr_expect_eq((int)cmd->type, 99);
    pulsar__proto__base_command__free_unpacked(cmd, NULL);
    pc_frame_reader_free(&r);
}

/* A payload CRC computed apart (on the sending thread) gives the same frame head as one
 * computed over the payload here. */
Test(frame, payload_head_with_precomputed_crc_is_identical)
{
    static uint8_t payload[100000];
    for (size_t i = 0; i < sizeof payload; i++)
        payload[i] = (uint8_t)(i * 7 + 3);
    Pulsar__Proto__CommandSend send = PULSAR__PROTO__COMMAND_SEND__INIT;
    Pulsar__Proto__BaseCommand cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    Pulsar__Proto__MessageMetadata meta = PULSAR__PROTO__MESSAGE_METADATA__INIT;
    send.producer_id = 3;
    send.sequence_id = 9;
    cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__SEND;
    cmd.send = &send;
    meta.producer_name = (char *)"p";
    meta.sequence_id = 9;
    meta.publish_time = 1234;
    static const size_t lens[] = { 0, 1, 64 * 1024, sizeof payload };
    for (size_t i = 0; i < sizeof lens / sizeof *lens; i++) {
        pc_buf_t a, b;
        pc_buf_init(&a);
        pc_buf_init(&b);
        cr_assert_eq(pc_frame_encode_payload_head(&a, &cmd, &meta, payload, lens[i]), 0);
        cr_assert_eq(pc_frame_encode_payload_head_crc(&b, &cmd, &meta, lens[i],
                                                      pc_crc32c(0, payload, lens[i])),
                     0);
        cr_assert_eq(a.len, b.len);
        cr_assert(!memcmp(a.data, b.data, a.len), "payload of %zu bytes", lens[i]);
        pc_buf_free(&a);
        pc_buf_free(&b);
    }
}

/* A message sent alone (pc_pb_alone_t): the same frame as through a MessageMetadata of
 * the same fields and protobuf-c's SEND, whether its metadata was measured first or is
 * measured as it is written within its bound, with the payload's CRC given or not, into
 * an op's small fixed head or a growing buffer. */
Test(frame, send_head_of_a_message_alone_is_the_generic_one)
{
    static uint8_t payload[3000];
    for (size_t i = 0; i < sizeof payload; i++)
        payload[i] = (uint8_t)(i * 13 + 1);
    pc_property_t props[] = { { (char *)"a", (char *)"1" }, { (char *)"long key", (char *)"" } };
    Pulsar__Proto__KeyValue kv[2], *kvp[2] = { &kv[0], &kv[1] };
    for (int i = 0; i < 2; i++) {
        pulsar__proto__key_value__init(&kv[i]);
        kv[i].key = props[i].key;
        kv[i].value = props[i].value;
    }
    for (int round = 0; round < 16; round++) {
        pc_pb_alone_t a = { .producer_name = "standalone-0-1",
                            .producer_name_len = 14,
                            .sequence_id = (uint64_t)round << (round * 3),
                            .publish_time = 1765000000000u + (uint64_t)round,
                            .uncompressed_size = (uint32_t)(round * 200) };
        Pulsar__Proto__MessageMetadata m = PULSAR__PROTO__MESSAGE_METADATA__INIT;
        m.producer_name = (char *)a.producer_name;
        m.sequence_id = a.sequence_id;
        m.publish_time = a.publish_time;
        m.has_uncompressed_size = 1;
        m.uncompressed_size = a.uncompressed_size;
        if (round & 1) {
            a.props = props;
            a.n_props = m.n_properties = 2;
            m.properties = kvp;
            a.partition_key = m.partition_key = (char *)"key";
        }
        if (round & 2) {
            a.event_time = m.event_time = 77;
            m.has_event_time = 1;
            m.has_txnid_least_bits = m.has_txnid_most_bits = 1;
            a.has_txn = true;
            a.txnid_least_bits = m.txnid_least_bits = 5;
            a.txnid_most_bits = m.txnid_most_bits = 6;
        }
        Pulsar__Proto__CommandSend send = PULSAR__PROTO__COMMAND_SEND__INIT;
        send.producer_id = 4;
        send.sequence_id = a.sequence_id;
        send.has_num_messages = 1;
        send.num_messages = 1;
        size_t len = (size_t)round * 200;
        uint32_t crc = pc_crc32c(0, payload, len);
        pc_buf_t want;
        pc_buf_init(&want);
        cr_assert_eq(pc_frame_encode_send_head(&want, &send, &m, 0, payload, len), 0);
        for (int way = 0; way < 4; way++) {
            uint8_t space[160];
            pc_buf_t got;
            if (way & 2)
                pc_buf_init_fixed(&got, space, sizeof space);
            else
                pc_buf_init(&got);
            size_t measured = way & 1 ? pc_pb_alone_metadata_size(&a) : 0;
            int rc = pc_frame_encode_send_head_alone(&got, &send, &a, measured,
                                                     pc_pb_alone_metadata_bound(&a), payload, len,
                                                     round & 4 ? &crc : NULL);
            cr_assert_eq(rc, 0);
            cr_assert_eq(got.len, want.len, "round %d way %d", round, way);
            cr_assert(!memcmp(got.data, want.data, want.len), "round %d way %d", round, way);
            pc_buf_free(&got);
        }
        pc_buf_free(&want);
    }
}

/* A wrong port's first bytes: an HTTP answer and TLS records are named, and none of them
 * could be a frame the reader takes (each, read as a size, is far above its limit). */
Test(frame, a_wrong_ports_first_bytes_are_named)
{
    static const struct {
        const char *bytes;
        size_t n;
        pc_peer_kind_t want;
    } cases[] = {
        { "HTTP/1.1 400 Bad Request\r\n", 26, PC_PEER_HTTP },
        { "HTTP", 4, PC_PEER_HTTP }, /* all that arrived so far */
        { "HTTPS", 5, PC_PEER_UNKNOWN },
        { "HTT", 3, PC_PEER_UNKNOWN },
        { "\x15\x03\x03\x00\x02\x02\x46", 7, PC_PEER_TLS }, /* alert */
        { "\x16\x03\x01\x00\x50", 5, PC_PEER_TLS },         /* handshake */
        { "\x15\x03", 2, PC_PEER_UNKNOWN },
        { "\x18\x03\x03", 3, PC_PEER_UNKNOWN },
        { "\x15\x02\x00", 3, PC_PEER_UNKNOWN },
        { "\x15\x03\x05", 3, PC_PEER_UNKNOWN },
        { "\x00\x00\x00\x09\x00\x00\x00\x05", 8, PC_PEER_UNKNOWN }, /* a frame */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const uint8_t *p = (const uint8_t *)cases[i].bytes;
        cr_expect_eq(pc_frame_peer_kind(p, cases[i].n), cases[i].want, "case %zu", i);
        if (cases[i].want != PC_PEER_UNKNOWN) {
            pc_frame_reader_t r;
            pc_frame_t f;
            pc_frame_reader_init(&r,
                                 PC_FRAME_DEFAULT_MAX_MESSAGE_SIZE + PC_FRAME_OVERHEAD_ALLOWANCE);
            cr_assert_eq(pc_frame_reader_feed(&r, p, cases[i].n), 0);
            cr_expect_eq(pc_frame_reader_next(&r, &f), PC_FRAME_TOO_BIG, "case %zu", i);
            pc_frame_reader_free(&r);
        }
    }
}

/* A buffer that starts in its owner's space moves to the heap when it outgrows it, with
 * its bytes; freeing it leaves the owner's space alone; detaching hands out heap memory. */
Test(frame, a_fixed_buffer_moves_to_the_heap_when_it_grows)
{
    uint8_t space[8];
    pc_buf_t b;
    pc_buf_init_fixed(&b, space, sizeof space);
    cr_assert_eq(pc_buf_append(&b, "abcdefgh", 8), 0);
    cr_assert_eq(b.data, space, "8 bytes fit the owner's space");
    cr_assert_eq(pc_buf_append(&b, "ij", 2), 0);
    cr_assert_neq(b.data, space);
    cr_assert(!b.fixed);
    cr_assert_eq(b.len, 10);
    cr_assert_arr_eq(b.data, "abcdefghij", 10);
    pc_buf_free(&b); /* the heap copy (ASan would report a leak, or a free of space) */

    pc_buf_init_fixed(&b, space, sizeof space);
    cr_assert_eq(pc_buf_append(&b, "xyz", 3), 0);
    size_t len;
    uint8_t *d = pc_buf_detach(&b, &len);
    cr_assert(d && d != space);
    cr_assert_eq(len, 3);
    cr_assert_arr_eq(d, "xyz", 3);
    free(d);
    pc_buf_init_fixed(&b, space, sizeof space);
    pc_buf_free(&b);
}
