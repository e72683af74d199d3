/* Pulsar framing: see frame.h for the byte layout. */
#include "wire/frame.h"

#include <string.h>

#include "wire/crc32c.h"
#include "wire/pb_encode.h"

/* magic (2) + checksum (4) + metadata size (4) */
#define PAYLOAD_HEAD_FIXED 10

/* Reserve room for a frame of at most `total` bytes after the size field (the command
 * taking at most cmd_max of them), less the `unwritten` payload bytes the caller sends
 * from its own buffer, and pack the command in place: cmd (of cmd_max bytes exactly), or
 * when send is set, a SEND command of it, unmeasured. Returns a pointer just past the
 * command with *cmd_len its size (the size fields are the caller's to write), or NULL
 * (out untouched apart from capacity). */
static uint8_t *begin_frame(pc_buf_t *out, const Pulsar__Proto__BaseCommand *cmd,
                            const Pulsar__Proto__CommandSend *send, size_t cmd_max, size_t total,
                            size_t unwritten, size_t *cmd_len)
{
    /* The wire holds 32-bit sizes; refuse what cannot be described. Only the bytes
     * written here are reserved: a head for a 1 MiB payload is a few hundred bytes. */
    if (total > UINT32_MAX || pc_buf_reserve(out, 4 + total - unwritten) != 0)
        return NULL;
    uint8_t *p = out->data + out->len;
    size_t n = send ? pc_pb_send_command_pack(send, 0, p + 8)
                    : pulsar__proto__base_command__pack(cmd, p + 8);
    if (n > cmd_max || (!send && n != cmd_max))
        return NULL;
    *cmd_len = n;
    return p + 8 + n;
}

/* The frame's two size fields, once the command's size is known: the frame's (total,
 * after the field) and the command's. */
static void write_sizes(pc_buf_t *out, size_t total, size_t cmd_len)
{
    uint8_t *p = out->data + out->len;
    pc_write_u32be(p, (uint32_t)total);
    pc_write_u32be(p + 4, (uint32_t)cmd_len);
}

int pc_frame_encode_command(pc_buf_t *out, const Pulsar__Proto__BaseCommand *cmd)
{
    size_t cmd_len = pulsar__proto__base_command__get_packed_size(cmd);
    if (cmd_len > SIZE_MAX - 4)
        return -1;
    size_t total = 4 + cmd_len;
    if (!begin_frame(out, cmd, NULL, cmd_len, total, 0, &cmd_len))
        return -1;
    write_sizes(out, total, cmd_len);
    out->len += 4 + total;
    return 0;
}

/* A frame's metadata: a MessageMetadata, or a message's sent alone (pb_encode.h), with a
 * bound on its size (0: none). */
typedef struct meta_src {
    const Pulsar__Proto__MessageMetadata *pb;
    const pc_pb_alone_t *alone;
    size_t bound;
} meta_src;

static size_t meta_size(meta_src m)
{
    return m.alone ? pc_pb_alone_metadata_size(m.alone) : pc_pb_message_metadata_size(m.pb);
}

static size_t meta_pack(meta_src m, uint8_t *out)
{
    return m.alone ? pc_pb_alone_metadata_pack(m.alone, out)
                   : pc_pb_message_metadata_pack(m.pb, out);
}

/* The command is cmd, or a SEND of send when that is set. meta_len: the metadata's size
 * when measured, else 0: then its bound reserves room and it is measured as it is packed
 * (or, without one, measured first). payload is NULL when payload_crc is the payload's
 * CRC already. */
static int encode_payload_head(pc_buf_t *out, const Pulsar__Proto__BaseCommand *cmd,
                               const Pulsar__Proto__CommandSend *send, meta_src meta,
                               size_t meta_len, const uint8_t *payload, size_t payload_len,
                               uint32_t payload_crc)
{
    /* A SEND is packed unmeasured, within its bound; the frame's sizes follow it. */
    size_t cmd_max = send ? pc_pb_send_command_bound(send)
                          : pulsar__proto__base_command__get_packed_size(cmd);
    if (!meta_len && !meta.bound)
        meta_len = meta_size(meta);
    size_t meta_max = meta_len ? meta_len : meta.bound;
    if (meta_max > UINT32_MAX)
        return -1;
    /* Sums checked piecewise so no size_t wrap can sneak past the u32 check. */
    size_t total = 4;
    if (cmd_max > SIZE_MAX - total)
        return -1;
    total += cmd_max;
    if (PAYLOAD_HEAD_FIXED + meta_max > SIZE_MAX - total)
        return -1;
    total += PAYLOAD_HEAD_FIXED + meta_max;
    if (payload_len > SIZE_MAX - total)
        return -1;
    total += payload_len;

    size_t cmd_len;
    uint8_t *p = begin_frame(out, cmd, send, cmd_max, total, payload_len, &cmd_len);
    if (!p)
        return -1;
    uint8_t *crc_at = p + 2;
    uint8_t *sum_from = p + 6;
    size_t packed = meta_pack(meta, sum_from + 4);
    if (meta_len ? packed != meta_len : packed > meta_max)
        return -1;
    total -= (cmd_max - cmd_len) + (meta_max - packed);
    meta_len = packed;
    write_sizes(out, total, cmd_len);
    p[0] = (uint8_t)(PC_FRAME_MAGIC >> 8);
    p[1] = (uint8_t)(PC_FRAME_MAGIC & 0xff);
    pc_write_u32be(sum_from, (uint32_t)meta_len);
    uint32_t crc = pc_crc32c(0, sum_from, 4 + meta_len);
    if (payload)
        crc = pc_crc32c(crc, payload, payload_len);
    else
        crc = pc_crc32c_combine(crc, payload_crc, payload_len);
    pc_write_u32be(crc_at, crc);
    /* The payload bytes are the caller's to write; count only what we wrote. */
    out->len += 4 + total - payload_len;
    return 0;
}

int pc_frame_encode_payload_head(pc_buf_t *out, const Pulsar__Proto__BaseCommand *cmd,
                                 const Pulsar__Proto__MessageMetadata *meta, const uint8_t *payload,
                                 size_t payload_len)
{
    static const uint8_t none[1];
    return encode_payload_head(out, cmd, NULL, (meta_src){ meta, NULL, 0 }, 0,
                               payload ? payload : none, payload_len, 0);
}

int pc_frame_encode_payload_head_crc(pc_buf_t *out, const Pulsar__Proto__BaseCommand *cmd,
                                     const Pulsar__Proto__MessageMetadata *meta, size_t payload_len,
                                     uint32_t payload_crc)
{
    return encode_payload_head(out, cmd, NULL, (meta_src){ meta, NULL, 0 }, 0, NULL, payload_len,
                               payload_crc);
}

int pc_frame_encode_send_head(pc_buf_t *out, const Pulsar__Proto__CommandSend *send,
                              const Pulsar__Proto__MessageMetadata *meta, size_t meta_len,
                              const uint8_t *payload, size_t payload_len)
{
    static const uint8_t none[1];
    return encode_payload_head(out, NULL, send, (meta_src){ meta, NULL, 0 }, meta_len,
                               payload ? payload : none, payload_len, 0);
}

int pc_frame_encode_send_head_crc(pc_buf_t *out, const Pulsar__Proto__CommandSend *send,
                                  const Pulsar__Proto__MessageMetadata *meta, size_t meta_len,
                                  size_t payload_len, uint32_t payload_crc)
{
    return encode_payload_head(out, NULL, send, (meta_src){ meta, NULL, 0 }, meta_len, NULL,
                               payload_len, payload_crc);
}

int pc_frame_encode_send_head_alone(pc_buf_t *out, const Pulsar__Proto__CommandSend *send,
                                    const pc_pb_alone_t *meta, size_t meta_len, size_t meta_bound,
                                    const uint8_t *payload, size_t payload_len,
                                    const uint32_t *payload_crc)
{
    static const uint8_t none[1];
    meta_src src = { NULL, meta, meta_bound };
    if (payload_crc)
        return encode_payload_head(out, NULL, send, src, meta_len, NULL, payload_len, *payload_crc);
    return encode_payload_head(out, NULL, send, src, meta_len, payload ? payload : none,
                               payload_len, 0);
}

pc_peer_kind_t pc_frame_peer_kind(const uint8_t *p, size_t n)
{
    if (n >= 4 && !memcmp(p, "HTTP", 4) && (n == 4 || p[4] == '/'))
        return PC_PEER_HTTP;
    if (n >= 3 && p[0] >= 0x14 && p[0] <= 0x17 && p[1] == 0x03 && p[2] <= 0x04)
        return PC_PEER_TLS;
    return PC_PEER_UNKNOWN;
}

void pc_frame_reader_init(pc_frame_reader_t *r, size_t max_frame)
{
    pc_buf_init(&r->buf);
    r->pos = 0;
    r->max_frame = max_frame;
    r->error = 0;
    r->lent = NULL;
    r->lent_len = 0;
}

void pc_frame_reader_free(pc_frame_reader_t *r)
{
    pc_buf_free(&r->buf);
    r->pos = 0;
    r->lent = NULL;
    r->lent_len = 0;
}

void pc_frame_reader_set_max(pc_frame_reader_t *r, size_t max_frame)
{
    r->max_frame = max_frame;
}

/* Append bytes behind the unread ones in buf. Frames handed out by next() stay valid until
 * the next call, so consumed bytes are dropped here rather than in next(). Only a partial
 * frame is ever moved. */
static int keep(pc_frame_reader_t *r, const uint8_t *data, size_t len)
{
    if (r->pos) {
        pc_buf_consume(&r->buf, r->pos);
        r->pos = 0;
    }
    return pc_buf_append(&r->buf, data, len);
}

/* Lent bytes not taken yet join buf, in their place before what comes next. */
static int keep_lent(pc_frame_reader_t *r)
{
    if (!r->lent_len)
        return 0;
    int rc = keep(r, r->lent, r->lent_len);
    r->lent = NULL;
    r->lent_len = 0;
    return rc;
}

int pc_frame_reader_feed(pc_frame_reader_t *r, const uint8_t *data, size_t len)
{
    /* After an error the connection is finished; keeping bytes would only grow. */
    if (r->error)
        return 0;
    if (keep_lent(r) != 0)
        return -1;
    return keep(r, data, len);
}

int pc_frame_reader_lend(pc_frame_reader_t *r, const uint8_t *data, size_t len)
{
    if (r->error)
        return 0;
    if (keep_lent(r) != 0)
        return -1;
    r->lent = data;
    r->lent_len = len;
    return 0;
}

static pc_frame_status_t fail(pc_frame_reader_t *r, pc_frame_status_t st)
{
    r->error = st;
    return st;
}

/* The frame at the start of p's avail bytes into out, and its size (*size); NEED_MORE when
 * they hold only its first part. Inlined in both its places: it is most of a receipt's
 * framing. */
static inline __attribute__((always_inline)) pc_frame_status_t
take(pc_frame_reader_t *r, const uint8_t *p, size_t avail, pc_frame_t *out, size_t *size)
{
    if (avail < 4)
        return PC_FRAME_NEED_MORE;

    /* Judge the sizes as soon as they arrive, not after buffering a bogus frame. */
    uint32_t total = pc_read_u32be(p);
    if (total > r->max_frame)
        return fail(r, PC_FRAME_TOO_BIG);
    if (total < 4)
        return fail(r, PC_FRAME_MALFORMED);
    if (avail < 8)
        return PC_FRAME_NEED_MORE;
    uint32_t cmd_len = pc_read_u32be(p + 4);
    if (cmd_len == 0 || cmd_len > total - 4)
        return fail(r, PC_FRAME_MALFORMED);
    if (avail - 4 < total)
        return PC_FRAME_NEED_MORE;

    memset(out, 0, sizeof(*out));
    out->command = p + 8;
    out->command_len = cmd_len;
    const uint8_t *rest = p + 8 + cmd_len;
    size_t rest_len = total - 4 - cmd_len;
    if (rest_len > 0) {
        /* We announce a protocol version with checksums, so every payload section
         * starts with the magic; anything else cannot be trusted. (Broker entry
         * metadata, magic 0x0e02, only comes when a client asks for it.) */
        if (rest_len < PAYLOAD_HEAD_FIXED || pc_read_u16be(rest) != PC_FRAME_MAGIC)
            return fail(r, PC_FRAME_MALFORMED);
        uint32_t sum = pc_read_u32be(rest + 2);
        uint32_t meta_len = pc_read_u32be(rest + 6);
        if (meta_len > rest_len - PAYLOAD_HEAD_FIXED)
            return fail(r, PC_FRAME_MALFORMED);
        out->has_payload = true;
        out->checksum_ok = pc_crc32c(0, rest + 6, rest_len - 6) == sum;
        out->metadata = rest + PAYLOAD_HEAD_FIXED;
        out->metadata_len = meta_len;
        out->payload = out->metadata + meta_len;
        out->payload_len = rest_len - PAYLOAD_HEAD_FIXED - meta_len;
    }
    *size = 4 + (size_t)total;
    return PC_FRAME_OK;
}

/* The frame begun in buf takes from the lent bytes what it lacks: its sizes, then its
 * end; as much as there is. A size take() refuses takes nothing more. */
static int complete_from_lent(pc_frame_reader_t *r)
{
    size_t have = r->buf.len - r->pos;
    size_t want = have < 8 ? 8 - have : 0;
    if (!want) {
        uint32_t total = pc_read_u32be(r->buf.data + r->pos);
        if (total >= 4 && total <= r->max_frame && 4 + (size_t)total > have)
            want = 4 + (size_t)total - have;
    }
    size_t n = want < r->lent_len ? want : r->lent_len;
    if (keep(r, r->lent, n) != 0)
        return -1;
    r->lent += n;
    r->lent_len -= n;
    return 0;
}

pc_frame_status_t pc_frame_reader_next(pc_frame_reader_t *r, pc_frame_t *out)
{
    if (r->error)
        return (pc_frame_status_t)r->error;
    size_t size = 0;
    pc_frame_status_t st;
    /* A frame begun in buf (copied from an earlier read) is completed there: up to two
     * rounds, one for its sizes and one for the rest. */
    for (int round = 0; r->pos < r->buf.len; round++) {
        st = take(r, r->buf.data + r->pos, r->buf.len - r->pos, out, &size);
        if (st == PC_FRAME_OK)
            r->pos += size;
        if (st != PC_FRAME_NEED_MORE || !r->lent_len || round == 2)
            return st;
        if (complete_from_lent(r) != 0)
            return fail(r, PC_FRAME_NO_MEMORY);
    }
    if (!r->lent_len)
        return PC_FRAME_NEED_MORE;
    /* Frames lying whole in the lent bytes are handed out where they are. */
    st = take(r, r->lent, r->lent_len, out, &size);
    if (st == PC_FRAME_OK) {
        r->lent += size;
        r->lent_len -= size;
    } else if (st == PC_FRAME_NEED_MORE && keep_lent(r) != 0) {
        return fail(r, PC_FRAME_NO_MEMORY);
    }
    return st;
}

Pulsar__Proto__BaseCommand *pc_frame_unpack_command(const pc_frame_t *f)
{
    return pulsar__proto__base_command__unpack(NULL, f->command_len, f->command);
}

Pulsar__Proto__BaseCommand *pc_frame_unpack_command_in(const pc_frame_t *f,
                                                       ProtobufCAllocator *arena)
{
    return pulsar__proto__base_command__unpack(arena, f->command_len, f->command);
}
