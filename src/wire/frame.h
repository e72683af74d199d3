/* Pulsar frames: bytes in and out, no sockets.
 *
 * Simple command:  [total size u32][command size u32][BaseCommand]
 * Payload command: [total size u32][command size u32][BaseCommand]
 *                  [magic 0x0e01 u16][crc32c u32][metadata size u32][MessageMetadata][payload]
 * The checksum covers everything after itself: metadata size, metadata and payload.
 * All integers are big-endian; total size counts every byte after itself. */
#ifndef PC_FRAME_H
#define PC_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "PulsarApi.pb-c.h"
#include "wire/pb_encode.h"

#define PC_FRAME_MAGIC 0x0e01
/* The broker's default max_message_size: what a producer sends until CONNECTED tells it
 * the broker's own, and what it accepts from the broker whatever CONNECTED says (a
 * producer only receives small commands). A frame may exceed max_message_size by the
 * command and metadata overhead. */
#define PC_FRAME_DEFAULT_MAX_MESSAGE_SIZE (5 * 1024 * 1024)
#define PC_FRAME_OVERHEAD_ALLOWANCE (10 * 1024)

/* Append a simple command frame to out. Returns 0, or -1 when out of memory. */
int pc_frame_encode_command(pc_buf_t *out, const Pulsar__Proto__BaseCommand *cmd);

/* Append everything of a payload frame except the payload bytes themselves
 * (which the caller writes right after, e.g. by writev without copying).
 * The checksum is computed over the metadata and the given payload. */
int pc_frame_encode_payload_head(pc_buf_t *out, const Pulsar__Proto__BaseCommand *cmd,
                                 const Pulsar__Proto__MessageMetadata *meta, const uint8_t *payload,
                                 size_t payload_len);

/* The same, with the payload's CRC computed already (pc_crc32c(0, payload, payload_len),
 * e.g. on another thread): the payload is not read. */
int pc_frame_encode_payload_head_crc(pc_buf_t *out, const Pulsar__Proto__BaseCommand *cmd,
                                     const Pulsar__Proto__MessageMetadata *meta, size_t payload_len,
                                     uint32_t payload_crc);

/* The same two for a SEND command (what producers write), encoded by hand from send
 * (wire/pb_encode.h) instead of through a BaseCommand. meta_len is meta's encoded size
 * when the caller measured it already (exactly: pc_pb_message_metadata_size of this
 * meta, unchanged since), or 0 to have it measured here. */
int pc_frame_encode_send_head(pc_buf_t *out, const Pulsar__Proto__CommandSend *send,
                              const Pulsar__Proto__MessageMetadata *meta, size_t meta_len,
                              const uint8_t *payload, size_t payload_len);
int pc_frame_encode_send_head_crc(pc_buf_t *out, const Pulsar__Proto__CommandSend *send,
                                  const Pulsar__Proto__MessageMetadata *meta, size_t meta_len,
                                  size_t payload_len, uint32_t payload_crc);
/* The same for a message sent alone, its metadata written from its fields
 * (pc_pb_alone_t): meta_len its size when measured, else 0 and meta_bound
 * (pc_pb_alone_metadata_bound): room is reserved for that and the metadata measured as it
 * is written. payload_crc: the payload's CRC when known (then the payload is not read), or
 * NULL. */
int pc_frame_encode_send_head_alone(pc_buf_t *out, const Pulsar__Proto__CommandSend *send,
                                    const pc_pb_alone_t *meta, size_t meta_len, size_t meta_bound,
                                    const uint8_t *payload, size_t payload_len,
                                    const uint32_t *payload_crc);

/* One decoded frame. Pointers point into the reader's buffer, or into bytes lent to it, and
 * are valid until the next call to pc_frame_reader_feed, _lend or _next. */
typedef struct pc_frame {
    const uint8_t *command; /* serialised BaseCommand */
    size_t command_len;
    bool has_payload;        /* magic present after the command */
    bool checksum_ok;        /* only meaningful when has_payload */
    const uint8_t *metadata; /* serialised MessageMetadata */
    size_t metadata_len;
    const uint8_t *payload;
    size_t payload_len;
} pc_frame_t;

typedef enum pc_frame_status {
    PC_FRAME_OK = 1,         /* a frame was produced */
    PC_FRAME_NEED_MORE = 0,  /* feed more bytes */
    PC_FRAME_TOO_BIG = -1,   /* total size above the reader's limit */
    PC_FRAME_MALFORMED = -2, /* sizes inconsistent; the connection must be closed */
    PC_FRAME_NO_MEMORY = -3,
} pc_frame_status_t;

typedef struct pc_frame_reader {
    pc_buf_t buf;
    size_t pos;          /* start of the next unread frame in buf */
    size_t max_frame;    /* largest accepted total size */
    int error;           /* sticky error status once a bad frame was seen */
    const uint8_t *lent; /* bytes lent (pc_frame_reader_lend), not yet taken; after buf's */
    size_t lent_len;
} pc_frame_reader_t;

void pc_frame_reader_init(pc_frame_reader_t *r, size_t max_frame);
void pc_frame_reader_free(pc_frame_reader_t *r);
void pc_frame_reader_set_max(pc_frame_reader_t *r, size_t max_frame);
/* Append received bytes (any split: partial frames, several frames); they are copied. */
int pc_frame_reader_feed(pc_frame_reader_t *r, const uint8_t *data, size_t len);
/* The same without the copy, for a caller that drains the reader after each read: the
 * frames lying whole in data are handed out from data itself, and only what next() cannot
 * hand out whole (a frame's first part, at the end) is copied, when next() returns
 * PC_FRAME_NEED_MORE. data must stay as it is until next() has returned anything but
 * PC_FRAME_OK (a read buffer used anew for each read: the connection's). Returns 0, or -1
 * when out of memory (only when the bytes lent before were not all taken). */
int pc_frame_reader_lend(pc_frame_reader_t *r, const uint8_t *data, size_t len);
/* Take the next complete frame. Errors are sticky. */
pc_frame_status_t pc_frame_reader_next(pc_frame_reader_t *r, pc_frame_t *out);

/* What a peer's first bytes are when they may not be Pulsar frames at all (a client that
 * dialled the wrong port): "HTTP/" starts an HTTP server's answer (read as a frame, a size
 * of 0x48545450 bytes, far above any reader's limit), and a type 0x14..0x17 with version
 * 0x03 0x00..0x04 starts a TLS record (a TLS port's answer to a plain CONNECT, usually an
 * alert; as a size, over 335 MB). Reads at most n bytes; fewer than 3 (4 for HTTP) say
 * nothing. */
typedef enum pc_peer_kind {
    PC_PEER_UNKNOWN = 0,
    PC_PEER_HTTP,
    PC_PEER_TLS,
} pc_peer_kind_t;
pc_peer_kind_t pc_frame_peer_kind(const uint8_t *p, size_t n);

/* Unpack a frame's command; NULL if it does not parse. Free with
 * pulsar__proto__base_command__free_unpacked(cmd, NULL). */
Pulsar__Proto__BaseCommand *pc_frame_unpack_command(const pc_frame_t *f);
/* The same, allocating from arena (wire/pb_arena.h): the command lives until the arena is
 * reset, and is not freed by itself. */
Pulsar__Proto__BaseCommand *pc_frame_unpack_command_in(const pc_frame_t *f,
                                                       ProtobufCAllocator *arena);

#endif
