/* The spool's bytes on disk: a segment file is a header, then records, each
 *
 *   u32 body length | u32 CRC32C of the body | u32 state | body
 *   body: u64 sequence id, i32 partition, u32 flags, u64 event time, u64 deliver-at,
 *         u32 key length, u32 ordering key length, u32 property count, u32 property
 *         bytes, u32 payload length, then the key (and a NUL), the ordering key, the
 *         properties (u32 length, bytes, NUL; twice per property), with PC_SPOOL_SEALED
 *         the seal (u32 length, bytes: the producer's, opaque here), the payload.
 *
 * The state is outside the CRC: 0 when written, PC_SPOOL_RELEASED once the message is
 * done with (stored, or failed for good), written in place by the producer that spooled
 * it, so that a restart skips it even when its segment is still there. All integers
 * little-endian. The segment header carries the producer name and topic it
 * was written for, so that a spool is never replayed by another producer; the spool's
 * identity file ("spool.id") is the same header with segment number 0.
 *
 * Everything read here came from a file, which a crash cut short or a disk corrupted:
 * it is checked like bytes from the network (lengths against what is there, the CRC,
 * every string terminated and free of NULs). A segment is allocated ahead and written in
 * place: a zero length and CRC where a record would start is its clean end. A record
 * that fails a check stops the scan there (CUT); pc_spool_scan_resync then looks for the
 * next whole record after it, at the frame level (length, CRC, state), which tells damage
 * in the middle (whole records follow) from a torn tail (none do). Pure functions over
 * memory and a read callback: no file handling. Any thread. */
#ifndef PC_SPOOL_FORMAT_H
#define PC_SPOOL_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PC_SPOOL_MAGIC "pcspool1"
#define PC_SPOOL_MAGIC_LEN 8
#define PC_SPOOL_VERSION 1
#define PC_SPOOL_NAME_MAX 255 /* producerName's limit */
#define PC_SPOOL_TOPIC_MAX 2048
#define PC_SPOOL_HEADER_MAX (32 + PC_SPOOL_NAME_MAX + PC_SPOOL_TOPIC_MAX)
#define PC_SPOOL_FRAME 12                      /* length, CRC and state before each body */
#define PC_SPOOL_RELEASED UINT32_C(0x444c5352) /* a state: "RSLD"; anything else: pending */
#define PC_SPOOL_BODY_FIXED 52                 /* the body's fixed fields */
/* The largest body a reader accepts: a payload below 2 GiB (PC_MAX_PAYLOAD) and its
 * metadata, with room to spare; anything longer is a corrupt length. */
#define PC_SPOOL_BODY_MAX ((UINT32_C(1) << 31) + (UINT32_C(64) << 20))

/* Flags of a record. */
#define PC_SPOOL_HAS_KEY 1u
#define PC_SPOOL_KEY_B64 2u
#define PC_SPOOL_NULL_KEY 4u
#define PC_SPOOL_NULL_VALUE 8u
#define PC_SPOOL_SEALED 16u /* the payload is ciphertext; the seal says how to send it */
#define PC_SPOOL_FLAGS_KNOWN 31u

/* A segment's (or the identity file's) header. name and topic point into the bytes it
 * was decoded from. */
typedef struct pc_spool_header {
    uint64_t segment;
    const char *name;
    size_t name_len;
    const char *topic;
    size_t topic_len;
} pc_spool_header_t;

typedef enum pc_spool_header_status {
    PC_SPOOL_HEADER_OK,
    PC_SPOOL_HEADER_SHORT, /* fewer bytes than a header: a file whose creation was cut */
    PC_SPOOL_HEADER_BAD,   /* not a spool header, another version, or a wrong CRC */
} pc_spool_header_status_t;

/* The header's size for these lengths (name <= PC_SPOOL_NAME_MAX, topic <=
 * PC_SPOOL_TOPIC_MAX), and the header written into out (at least that many bytes). */
size_t pc_spool_header_size(size_t name_len, size_t topic_len);
size_t pc_spool_header_encode(uint8_t *out, uint64_t segment, const char *name, const char *topic);
/* Decode the header at the start of buf (len bytes: the file's first bytes, at most
 * PC_SPOOL_HEADER_MAX of them); *size is its length on OK. */
pc_spool_header_status_t pc_spool_header_decode(const uint8_t *buf, size_t len,
                                                pc_spool_header_t *out, size_t *size);

/* A message as the spool keeps it: what a resend needs to be the same message. */
typedef struct pc_spool_msg {
    int64_t sequence_id;
    int32_t partition;
    uint32_t flags; /* PC_SPOOL_* (HAS_KEY follows key) */
    uint64_t event_time;
    uint64_t deliver_at;
    const char *key; /* NULL: none */
    const uint8_t *ordering_key;
    size_t ordering_key_len;
    size_t n_props;
    /* Property i's name and value (NUL-terminated), from the caller's own table. */
    void (*prop_at)(const void *props, size_t i, const char **name, const char **value);
    const void *props;
    const uint8_t *seal; /* with PC_SPOOL_SEALED: kept beside the payload */
    size_t seal_len;
    const uint8_t *payload;
    size_t payload_len;
} pc_spool_msg_t;

/* The body's metadata (everything before the payload) for m: its size, and the bytes
 * (out holds at least that many), written with m->sequence_id (patch it later with
 * pc_spool_meta_set_id). */
size_t pc_spool_meta_size(const pc_spool_msg_t *m);
void pc_spool_meta_encode(uint8_t *out, const pc_spool_msg_t *m);
void pc_spool_meta_set_id(uint8_t *meta, int64_t sequence_id);
/* The length, CRC and state (pending) that go before a body of meta (meta_len bytes) and the payload. With
 * payload_crc (its CRC32C from 0, computed apart, e.g. outside a lock) the payload is not
 * read; joining the two CRCs costs about as much as reading 16 KiB, so small payloads
 * are better read. */
void pc_spool_frame_encode(uint8_t out[PC_SPOOL_FRAME], const uint8_t *meta, size_t meta_len,
                           const uint8_t *payload, size_t payload_len, const uint32_t *payload_crc);

/* A record read back. Pointers into the body it was decoded from. */
typedef struct pc_spool_record {
    bool released; /* its state says it is done with (set by a scan) */
    int64_t sequence_id;
    int32_t partition;
    uint32_t flags;
    uint64_t event_time;
    uint64_t deliver_at;
    const char *key;             /* NUL-terminated, or NULL */
    const uint8_t *ordering_key; /* NULL when none */
    size_t ordering_key_len;
    size_t n_props;
    const uint8_t *props; /* the encoded properties (pc_spool_record_prop) */
    size_t props_len;
    const uint8_t *seal; /* with PC_SPOOL_SEALED (at least a byte), else NULL */
    size_t seal_len;
    const uint8_t *payload;
    size_t payload_len;
} pc_spool_record_t;

/* Decode and check a body. NULL on success, else what is wrong with it. */
const char *pc_spool_record_decode(const uint8_t *body, size_t len, pc_spool_record_t *out);
/* The next property of a decoded record (*pos starts at 0): false after the last. The
 * strings are NUL-terminated, checked by pc_spool_record_decode. */
bool pc_spool_record_prop(const pc_spool_record_t *r, size_t *pos, const char **name,
                          const char **value);

/* Where a scan reads from: a file, or memory (tests, the fuzzer). read returns the bytes
 * read into buf at off (fewer than len only at the end), or -1 on an I/O error; size is
 * how many there are, so that a corrupt length is caught before anything is allocated
 * for it. */
typedef struct pc_spool_source {
    int64_t (*read)(void *ctx, uint64_t off, void *buf, size_t len);
    void *ctx;
    uint64_t size;
} pc_spool_source_t;

typedef enum pc_spool_scan_status {
    PC_SPOOL_SCAN_RECORD, /* a good record: *rec is valid until the next call (one
                              released is checked and returned like the others) */
    PC_SPOOL_SCAN_END,    /* the records end at `offset`: the file does, or a zero
                              length and CRC there (room allocated ahead, never written) */
    PC_SPOOL_SCAN_CUT,    /* the record at `offset` fails a check (`why`): torn or
                              damaged; pc_spool_scan_resync says which */
    PC_SPOOL_SCAN_IO,     /* the source failed to read */
    PC_SPOOL_SCAN_NO_MEMORY,
} pc_spool_scan_status_t;

/* The records of one segment, in order, from `offset` (the header's end) on. */
typedef struct pc_spool_scan {
    uint64_t offset; /* where the next record starts (the cut, after CUT) */
    uint8_t *body;   /* the last record's body (owned) */
    size_t cap;
    const char *why; /* after CUT: what was wrong */
} pc_spool_scan_t;

void pc_spool_scan_init(pc_spool_scan_t *sc, uint64_t offset);
pc_spool_scan_status_t pc_spool_scan_next(pc_spool_scan_t *sc, const pc_spool_source_t *src,
                                          pc_spool_record_t *rec);
void pc_spool_scan_free(pc_spool_scan_t *sc);

typedef enum pc_spool_resync_status {
    PC_SPOOL_RESYNC_FOUND, /* a whole record starts at the scan's offset, moved there:
                                  the bytes passed over are the damage */
    PC_SPOOL_RESYNC_NONE,  /* no whole record after the cut: a torn tail */
    PC_SPOOL_RESYNC_IO,    /* the source failed to read */
    PC_SPOOL_RESYNC_NO_MEMORY,
} pc_spool_resync_status_t;

/* After PC_SPOOL_SCAN_CUT at sc->offset: find the next whole record after it, to scan on
 * from there. Records are not aligned, so every offset is a candidate; nothing of one is
 * trusted before its frame checks (a length within the bounds and within what is left, a
 * state a writer writes: 0 or PC_SPOOL_RELEASED) and then the CRC of the body it frames
 * (read in bounded pieces: a lying length allocates nothing). The first candidate is
 * where the damaged record's own length says it ends, when that length is possible (a
 * damaged body with an intact frame: exactly one record skipped, and no false record
 * taken from inside its payload); then every offset from the cut + 1 on. Frame level
 * only: the body's fields are pc_spool_scan_next's to check once it scans on (a failure
 * there is a cut again, and a resync from there). The limit of any such scan: a payload
 * that itself holds a whole spool record passes for one when the damaged record's own
 * end is no record (the next one damaged too, or its length). */
pc_spool_resync_status_t pc_spool_scan_resync(pc_spool_scan_t *sc, const pc_spool_source_t *src);

/* A source over memory (data stays the caller's). */
typedef struct pc_spool_mem {
    const uint8_t *data;
    size_t len;
} pc_spool_mem_t;
pc_spool_source_t pc_spool_mem_source(pc_spool_mem_t *m);

#endif
