/* libFuzzer target for the spool's segment reader (spool/spool_format.c): a segment file
 * is input the disk controls (a crash cuts it, a bad disk flips its bits), read back at
 * every producer start, so it gets the care of network input.
 *
 * Input: one mode byte, then the file's bytes (frames are length, CRC, state). Mode bit 0 set: the CRCs are made right
 * first (the header's, and each record's whose length fits), so that the fuzzer gets past
 * them to the header's and the records' fields; clear: the bytes as they are.
 *
 * Checks: the scan never reads out of bounds (ASan) and always moves forward or stops;
 * every record it accepts encodes back to exactly the bytes it was read from (the reader
 * accepts nothing the writer would not have written); a cut is within the file, and the
 * resync after it (pc_spool_scan_resync, as the replay does) either finds nothing (a
 * torn tail) or moves forward to a frame whose length fits and whose CRC matches its
 * body, from which the scan goes on. A sealed record's seal (producer/sealed.c, read at
 * replay before anything of it is sent) is decoded too, and what it accepts describes
 * exactly the record's payload. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "producer/sealed.h"
#include "spool/spool_format.h"
#include "wire/crc32c.h"

#define CHECK(cond)           \
    do {                      \
        if (!(cond))          \
            __builtin_trap(); \
    } while (0)

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* The header's CRC right for the lengths it claims, then each record's. */
static void fix_crcs(uint8_t *d, size_t n)
{
    if (n < 28)
        return;
    size_t hsize = 28 + (size_t)(d[24] | d[25] << 8) + (size_t)(d[26] | d[27] << 8) + 4;
    if (hsize > n)
        return;
    put32(d + hsize - 4, pc_crc32c(0, d, hsize - 4));
    for (size_t off = hsize; n - off >= PC_SPOOL_FRAME;) {
        uint32_t len = get32(d + off);
        if (len > n - off - PC_SPOOL_FRAME)
            return;
        put32(d + off + 4, pc_crc32c(0, d + off + PC_SPOOL_FRAME, len));
        off += PC_SPOOL_FRAME + len;
    }
}

static void prop_at(const void *ctx, size_t i, const char **name, const char **value)
{
    const pc_spool_record_t *r = ctx;
    size_t pos = 0;
    for (size_t k = 0; k <= i; k++)
        CHECK(pc_spool_record_prop(r, &pos, name, value));
}

/* The record re-encoded through the writer's functions equals its bytes in the file. */
static void check_roundtrip(const pc_spool_record_t *r, const uint8_t *frame, size_t frame_len)
{
    pc_spool_msg_t m = {
        .sequence_id = r->sequence_id,
        .partition = r->partition,
        .flags = r->flags,
        .event_time = r->event_time,
        .deliver_at = r->deliver_at,
        .key = r->key,
        .ordering_key = r->ordering_key,
        .ordering_key_len = r->ordering_key_len,
        .n_props = r->n_props,
        .prop_at = prop_at,
        .props = r,
        .seal = r->seal,
        .seal_len = r->seal_len,
        .payload = r->payload,
        .payload_len = r->payload_len,
    };
    size_t meta_len = pc_spool_meta_size(&m);
    CHECK(PC_SPOOL_FRAME + meta_len + r->payload_len == frame_len);
    uint8_t *meta = malloc(meta_len);
    CHECK(meta != NULL);
    pc_spool_meta_encode(meta, &m);
    CHECK(memcmp(meta, frame + PC_SPOOL_FRAME, meta_len) == 0);
    uint8_t head[PC_SPOOL_FRAME];
    uint32_t payload_crc = pc_crc32c(0, r->payload, r->payload_len);
    pc_spool_frame_encode(head, meta, meta_len, r->payload, r->payload_len,
                          r->payload_len % 2 ? &payload_crc : NULL); /* both ways */
    CHECK(memcmp(head, frame, 8) == 0); /* length and CRC; the state is the file's */
    CHECK(r->released == (get32(frame + 8) == PC_SPOOL_RELEASED));
    free(meta);
}

/* A seal the replay accepts covers the payload piece by piece. */
static void check_seal(const pc_spool_record_t *r)
{
    if (!r->seal)
        return;
    pc_sealed_t *sd;
    if (pc_sealed_decode(r->seal, r->seal_len, r->payload, r->payload_len, &sd) != PULSARC_OK)
        return;
    size_t total = 0;
    for (size_t i = 0; i < sd->n_pieces; i++)
        total += sd->pieces[i].len;
    CHECK(total == r->payload_len && sd->n_keys > 0 && sd->block_len == r->seal_len);
    for (size_t i = 0; i < sd->n_keys; i++)
        CHECK(sd->keys[i]->key && sd->keys[i]->value.len > 0);
    pc_sealed_free(sd);
}

/* After a cut at `before`: the resync finds nothing and stays, or moves forward to a
 * whole record (its frame within the file, its CRC right). False: the scan is over. */
static bool resync_checked(pc_spool_scan_t *sc, const pc_spool_source_t *src, const uint8_t *file,
                           size_t n, uint64_t before)
{
    pc_spool_resync_status_t rs = pc_spool_scan_resync(sc, src);
    CHECK(rs != PC_SPOOL_RESYNC_IO);
    if (rs != PC_SPOOL_RESYNC_FOUND) {
        CHECK(sc->offset == before);
        return false;
    }
    CHECK(sc->offset > before && sc->offset <= n && n - sc->offset >= PC_SPOOL_FRAME);
    uint32_t len = get32(file + sc->offset);
    CHECK(len <= n - sc->offset - PC_SPOOL_FRAME);
    CHECK(pc_crc32c(0, file + sc->offset + PC_SPOOL_FRAME, len) == get32(file + sc->offset + 4));
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    size_t n = size - 1;
    uint8_t *file = malloc(n ? n : 1);
    if (!file)
        return 0;
    memcpy(file, data + 1, n);
    if (data[0] & 1)
        fix_crcs(file, n);
    pc_spool_header_t h;
    size_t hsize = 0;
    if (pc_spool_header_decode(file, n, &h, &hsize) == PC_SPOOL_HEADER_OK) {
        CHECK(hsize <= n && h.name + h.name_len <= (const char *)file + hsize);
        pc_spool_mem_t mem = { file, n };
        pc_spool_source_t src = pc_spool_mem_source(&mem);
        pc_spool_scan_t sc;
        pc_spool_scan_init(&sc, hsize);
        pc_spool_record_t rec;
        for (;;) {
            uint64_t before = sc.offset;
            pc_spool_scan_status_t st = pc_spool_scan_next(&sc, &src, &rec);
            if (st != PC_SPOOL_SCAN_RECORD) {
                CHECK(st != PC_SPOOL_SCAN_IO);
                CHECK(sc.offset == before && sc.offset <= n);
                if (st == PC_SPOOL_SCAN_CUT && resync_checked(&sc, &src, file, n, before))
                    continue;
                break;
            }
            CHECK(sc.offset > before && sc.offset <= n);
            check_roundtrip(&rec, file + before, (size_t)(sc.offset - before));
            check_seal(&rec);
        }
        pc_spool_scan_free(&sc);
    }
    /* Any bytes as one record body: checked, never read past. */
    pc_spool_record_t rec;
    if (!pc_spool_record_decode(file, n, &rec)) {
        size_t pos = 0;
        const char *k, *v;
        while (pc_spool_record_prop(&rec, &pos, &k, &v))
            CHECK(strlen(k) < n && strlen(v) < n);
        check_seal(&rec);
    }
    free(file);
    return 0;
}
