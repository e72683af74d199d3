/* The spool's on-disk format: headers and records, encoded and checked (spool_format.h). */
#include "spool/spool_format.h"

#include <stdlib.h>
#include <string.h>

#include "wire/crc32c.h"

static void put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint16_t get16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t get32(const uint8_t *p)
{
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static uint64_t get64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* ---- headers ----------------------------------------------------------------------- */

/* magic 8 | u32 size | u32 version | u64 segment | u16 name | u16 topic | name | topic |
 * u32 CRC32C of everything before it */
#define HEADER_FIXED 28

size_t pc_spool_header_size(size_t name_len, size_t topic_len)
{
    return HEADER_FIXED + name_len + topic_len + 4;
}

size_t pc_spool_header_encode(uint8_t *out, uint64_t segment, const char *name, const char *topic)
{
    size_t nl = strlen(name), tl = strlen(topic);
    size_t size = pc_spool_header_size(nl, tl);
    memcpy(out, PC_SPOOL_MAGIC, PC_SPOOL_MAGIC_LEN);
    put32(out + 8, (uint32_t)size);
    put32(out + 12, PC_SPOOL_VERSION);
    put64(out + 16, segment);
    put16(out + 24, (uint16_t)nl);
    put16(out + 26, (uint16_t)tl);
    memcpy(out + HEADER_FIXED, name, nl);
    memcpy(out + HEADER_FIXED + nl, topic, tl);
    put32(out + size - 4, pc_crc32c(0, out, size - 4));
    return size;
}

pc_spool_header_status_t pc_spool_header_decode(const uint8_t *buf, size_t len,
                                                pc_spool_header_t *out, size_t *size)
{
    if (len < PC_SPOOL_MAGIC_LEN)
        return PC_SPOOL_HEADER_SHORT;
    if (memcmp(buf, PC_SPOOL_MAGIC, PC_SPOOL_MAGIC_LEN) != 0)
        return PC_SPOOL_HEADER_BAD;
    if (len < HEADER_FIXED)
        return PC_SPOOL_HEADER_SHORT;
    size_t nl = get16(buf + 24), tl = get16(buf + 26);
    if (nl == 0 || nl > PC_SPOOL_NAME_MAX || tl == 0 || tl > PC_SPOOL_TOPIC_MAX ||
        get32(buf + 8) != pc_spool_header_size(nl, tl))
        return PC_SPOOL_HEADER_BAD;
    size_t n = pc_spool_header_size(nl, tl);
    if (len < n)
        return PC_SPOOL_HEADER_SHORT;
    if (get32(buf + n - 4) != pc_crc32c(0, buf, n - 4) || get32(buf + 12) != PC_SPOOL_VERSION)
        return PC_SPOOL_HEADER_BAD;
    out->segment = get64(buf + 16);
    out->name = (const char *)buf + HEADER_FIXED;
    out->name_len = nl;
    out->topic = out->name + nl;
    out->topic_len = tl;
    *size = n;
    return PC_SPOOL_HEADER_OK;
}

/* ---- records ----------------------------------------------------------------------- */

static size_t props_size(const pc_spool_msg_t *m)
{
    size_t n = 0;
    for (size_t i = 0; i < m->n_props; i++) {
        const char *k, *v;
        m->prop_at(m->props, i, &k, &v);
        n += 4 + strlen(k) + 1 + 4 + strlen(v) + 1;
    }
    return n;
}

static size_t seal_size(const pc_spool_msg_t *m)
{
    return m->flags & PC_SPOOL_SEALED ? 4 + m->seal_len : 0;
}

size_t pc_spool_meta_size(const pc_spool_msg_t *m)
{
    return PC_SPOOL_BODY_FIXED + (m->key ? strlen(m->key) + 1 : 0) + m->ordering_key_len +
           props_size(m) + seal_size(m);
}

static uint8_t *put_string(uint8_t *p, const char *s)
{
    size_t n = strlen(s);
    put32(p, (uint32_t)n);
    memcpy(p + 4, s, n + 1);
    return p + 4 + n + 1;
}

void pc_spool_meta_encode(uint8_t *out, const pc_spool_msg_t *m)
{
    size_t key_len = m->key ? strlen(m->key) : 0;
    uint32_t flags = (m->flags & ~PC_SPOOL_HAS_KEY) | (m->key ? PC_SPOOL_HAS_KEY : 0);
    put64(out, (uint64_t)m->sequence_id);
    put32(out + 8, (uint32_t)m->partition);
    put32(out + 12, flags);
    put64(out + 16, m->event_time);
    put64(out + 24, m->deliver_at);
    put32(out + 32, (uint32_t)key_len);
    put32(out + 36, (uint32_t)m->ordering_key_len);
    put32(out + 40, (uint32_t)m->n_props);
    put32(out + 44, (uint32_t)props_size(m));
    put32(out + 48, (uint32_t)m->payload_len);
    uint8_t *p = out + PC_SPOOL_BODY_FIXED;
    if (m->key) {
        memcpy(p, m->key, key_len + 1);
        p += key_len + 1;
    }
    if (m->ordering_key_len) {
        memcpy(p, m->ordering_key, m->ordering_key_len);
        p += m->ordering_key_len;
    }
    for (size_t i = 0; i < m->n_props; i++) {
        const char *k, *v;
        m->prop_at(m->props, i, &k, &v);
        p = put_string(p, k);
        p = put_string(p, v);
    }
    if (m->flags & PC_SPOOL_SEALED) {
        put32(p, (uint32_t)m->seal_len);
        memcpy(p + 4, m->seal, m->seal_len);
    }
}

void pc_spool_meta_set_id(uint8_t *meta, int64_t sequence_id)
{
    put64(meta, (uint64_t)sequence_id);
}

void pc_spool_frame_encode(uint8_t out[PC_SPOOL_FRAME], const uint8_t *meta, size_t meta_len,
                           const uint8_t *payload, size_t payload_len, const uint32_t *payload_crc)
{
    uint32_t crc = pc_crc32c(0, meta, meta_len);
    crc = payload_crc ? pc_crc32c_combine(crc, *payload_crc, payload_len)
                      : pc_crc32c(crc, payload, payload_len);
    put32(out, (uint32_t)(meta_len + payload_len));
    put32(out + 4, crc);
    put32(out + 8, 0);
}

/* A string of the properties at *p (end: the properties' end): its length field, bytes
 * and NUL, with no NUL inside. Advances *p; NULL when it does not fit or is not one. */
static const char *take_string(const uint8_t **p, const uint8_t *end)
{
    if (end - *p < 5)
        return NULL;
    uint32_t n = get32(*p);
    if ((size_t)(end - *p - 4) < (size_t)n + 1)
        return NULL;
    const char *s = (const char *)*p + 4;
    if (s[n] != '\0' || memchr(s, '\0', n))
        return NULL;
    *p += 4 + (size_t)n + 1;
    return s;
}

const char *pc_spool_record_decode(const uint8_t *body, size_t len, pc_spool_record_t *out)
{
    if (len < PC_SPOOL_BODY_FIXED)
        return "a record shorter than its fixed fields";
    uint64_t id = get64(body);
    if (id > INT64_MAX)
        return "a negative sequence id";
    memset(out, 0, sizeof *out);
    out->sequence_id = (int64_t)id;
    out->partition = (int32_t)get32(body + 8);
    out->flags = get32(body + 12);
    out->event_time = get64(body + 16);
    out->deliver_at = get64(body + 24);
    uint64_t key_len = get32(body + 32), ok_len = get32(body + 36);
    out->n_props = get32(body + 40);
    uint64_t props_len = get32(body + 44), payload_len = get32(body + 48);
    if (out->partition < 0)
        return "a negative partition";
    if (out->flags & ~PC_SPOOL_FLAGS_KNOWN)
        return "unknown flags";
    bool has_key = out->flags & PC_SPOOL_HAS_KEY;
    if (!has_key && key_len)
        return "a key length without a key";
    /* 64-bit sums of 32-bit fields cannot overflow. A seal takes what the others leave. */
    uint64_t want = PC_SPOOL_BODY_FIXED + (has_key ? key_len + 1 : 0) + ok_len + props_len +
                    payload_len;
    if (out->flags & PC_SPOOL_SEALED ? want + 5 > len : want != len)
        return "field lengths that do not add up to the record's";
    const uint8_t *p = body + PC_SPOOL_BODY_FIXED;
    if (has_key) {
        out->key = (const char *)p;
        if (p[key_len] != '\0' || memchr(p, '\0', key_len))
            return "a key that is not one string";
        p += key_len + 1;
    }
    if (ok_len) {
        out->ordering_key = p;
        out->ordering_key_len = ok_len;
        p += ok_len;
    }
    out->props = p;
    out->props_len = props_len;
    const uint8_t *end = p + props_len;
    /* Every property is at least two empty strings (10 bytes). */
    if (out->n_props > props_len / 10)
        return "more properties than their bytes can hold";
    for (size_t i = 0; i < out->n_props; i++)
        if (!take_string(&p, end) || !take_string(&p, end))
            return "a property that is not two strings";
    if (p != end)
        return "bytes after the last property";
    if (out->flags & PC_SPOOL_SEALED) {
        /* The seal sits between the properties and the payload: what is left of the body
         * beyond the payload is its length field and bytes. */
        size_t rest = len - (size_t)(end - body) - payload_len;
        if (rest < 5 || get32(end) != rest - 4)
            return "a seal whose length does not fit the record";
        out->seal = end + 4;
        out->seal_len = rest - 4;
        end += rest;
    }
    out->payload = end;
    out->payload_len = payload_len;
    return NULL;
}

bool pc_spool_record_prop(const pc_spool_record_t *r, size_t *pos, const char **name,
                          const char **value)
{
    const uint8_t *p = r->props + *pos, *end = r->props + r->props_len;
    if (p >= end)
        return false;
    *name = take_string(&p, end);
    *value = take_string(&p, end);
    *pos = (size_t)(p - r->props);
    return *name && *value;
}

/* ---- scanning a segment -------------------------------------------------------------- */

void pc_spool_scan_init(pc_spool_scan_t *sc, uint64_t offset)
{
    memset(sc, 0, sizeof *sc);
    sc->offset = offset;
}

void pc_spool_scan_free(pc_spool_scan_t *sc)
{
    free(sc->body);
    sc->body = NULL;
    sc->cap = 0;
}

static pc_spool_scan_status_t cut(pc_spool_scan_t *sc, const char *why)
{
    sc->why = why;
    return PC_SPOOL_SCAN_CUT;
}

pc_spool_scan_status_t pc_spool_scan_next(pc_spool_scan_t *sc, const pc_spool_source_t *src,
                                          pc_spool_record_t *rec)
{
    if (sc->offset >= src->size)
        return sc->offset == src->size ? PC_SPOOL_SCAN_END
                                       : cut(sc, "a segment shorter than its header");
    uint8_t frame[PC_SPOOL_FRAME];
    if (src->size - sc->offset < PC_SPOOL_FRAME)
        return cut(sc, "a record's length and CRC cut short");
    if (src->read(src->ctx, sc->offset, frame, sizeof frame) != (int64_t)sizeof frame)
        return PC_SPOOL_SCAN_IO;
    uint32_t len = get32(frame), crc = get32(frame + 4), state = get32(frame + 8);
    /* Room allocated ahead and never written: the records end here. */
    if (len == 0 && crc == 0)
        return PC_SPOOL_SCAN_END;
    if (len < PC_SPOOL_BODY_FIXED || len > PC_SPOOL_BODY_MAX)
        return cut(sc, "an impossible record length");
    if (src->size - sc->offset - PC_SPOOL_FRAME < len)
        return cut(sc, "a record cut short");
    if (len > sc->cap) {
        uint8_t *b = realloc(sc->body, len);
        if (!b)
            return PC_SPOOL_SCAN_NO_MEMORY;
        sc->body = b;
        sc->cap = len;
    }
    int64_t got = src->read(src->ctx, sc->offset + PC_SPOOL_FRAME, sc->body, len);
    if (got < 0)
        return PC_SPOOL_SCAN_IO;
    if (got != (int64_t)len)
        return cut(sc, "a record cut short");
    if (pc_crc32c(0, sc->body, len) != crc)
        return cut(sc, "a record whose CRC does not match");
    const char *why = pc_spool_record_decode(sc->body, len, rec);
    if (why)
        return cut(sc, why);
    rec->released = state == PC_SPOOL_RELEASED;
    sc->offset += PC_SPOOL_FRAME + len;
    return PC_SPOOL_SCAN_RECORD;
}

/* ---- resynchronising after damage ------------------------------------------------------ */

/* The bytes read at a time: candidates' frames, and bodies whose CRC is checked. */
#define RESYNC_CHUNK (64 * 1024)

/* Could the frame f (at off in a source of size bytes; off + PC_SPOOL_FRAME <= size)
 * start a record? Its length within the bounds and what is left, its state one a writer
 * writes. Only the CRC of the body then decides. */
static bool plausible_frame(const uint8_t *f, uint64_t off, uint64_t size)
{
    uint32_t len = get32(f), state = get32(f + 8);
    return len >= PC_SPOOL_BODY_FIXED && len <= PC_SPOOL_BODY_MAX &&
           size - off - PC_SPOOL_FRAME >= len && (state == 0 || state == PC_SPOOL_RELEASED);
}

/* Does the plausible frame f at off frame a body with its CRC? 1, 0, or -1 (I/O). buf:
 * RESYNC_CHUNK bytes of scratch. */
static int body_matches(const pc_spool_source_t *src, const uint8_t *f, uint64_t off, uint8_t *buf)
{
    uint32_t len = get32(f), crc = 0;
    for (uint64_t done = 0; done < len;) {
        size_t n = len - done < RESYNC_CHUNK ? (size_t)(len - done) : RESYNC_CHUNK;
        int64_t got = src->read(src->ctx, off + PC_SPOOL_FRAME + done, buf, n);
        if (got < 0)
            return -1;
        if ((size_t)got != n)
            return 0;
        crc = pc_crc32c(crc, buf, n);
        done += n;
    }
    return crc == get32(f + 4);
}

/* A whole record at off? 1, 0, or -1 (I/O). */
static int record_at(const pc_spool_source_t *src, uint64_t off, uint8_t *buf)
{
    uint8_t f[PC_SPOOL_FRAME];
    if (off > src->size || src->size - off < PC_SPOOL_FRAME)
        return 0;
    int64_t got = src->read(src->ctx, off, f, sizeof f);
    if (got < 0)
        return -1;
    if (got != (int64_t)sizeof f || !plausible_frame(f, off, src->size))
        return 0;
    return body_matches(src, f, off, buf);
}

/* The damaged record's own end, when its length is possible: 0 when there is none. */
static uint64_t claimed_end(const pc_spool_source_t *src, uint64_t cut)
{
    uint8_t f[PC_SPOOL_FRAME];
    if (src->size - cut < PC_SPOOL_FRAME ||
        src->read(src->ctx, cut, f, sizeof f) != (int64_t)sizeof f)
        return 0;
    uint32_t len = get32(f);
    if (len < PC_SPOOL_BODY_FIXED || len > PC_SPOOL_BODY_MAX ||
        src->size - cut - PC_SPOOL_FRAME < len)
        return 0;
    return cut + PC_SPOOL_FRAME + len;
}

/* Every offset from `from` on, a window of frames at a time: the first whole record's
 * offset in *at; 1, 0 (none), -1 (I/O). */
static int first_record_from(const pc_spool_source_t *src, uint64_t from, uint8_t *win,
                             uint8_t *buf, uint64_t *at)
{
    for (uint64_t base = from; base < src->size && src->size - base >= PC_SPOOL_FRAME;
         base += RESYNC_CHUNK) {
        uint64_t left = src->size - base;
        size_t want = left < RESYNC_CHUNK + PC_SPOOL_FRAME - 1 ? (size_t)left
                                                               : RESYNC_CHUNK + PC_SPOOL_FRAME - 1;
        int64_t got = src->read(src->ctx, base, win, want);
        if (got < 0)
            return -1;
        for (size_t i = 0; i < RESYNC_CHUNK && i + PC_SPOOL_FRAME <= (size_t)got; i++) {
            if (!plausible_frame(win + i, base + i, src->size))
                continue;
            int r = body_matches(src, win + i, base + i, buf);
            if (r != 0) {
                *at = base + i;
                return r;
            }
        }
        if ((size_t)got < want)
            return 0;
    }
    return 0;
}

pc_spool_resync_status_t pc_spool_scan_resync(pc_spool_scan_t *sc, const pc_spool_source_t *src)
{
    uint64_t cut = sc->offset;
    if (cut >= src->size)
        return PC_SPOOL_RESYNC_NONE;
    uint8_t *win = malloc(RESYNC_CHUNK + PC_SPOOL_FRAME), *buf = malloc(RESYNC_CHUNK);
    int found = -2;
    if (win && buf) {
        uint64_t at = claimed_end(src, cut);
        found = at ? record_at(src, at, buf) : 0;
        if (found == 0)
            found = first_record_from(src, cut + 1, win, buf, &at);
        if (found == 1)
            sc->offset = at;
    }
    free(win);
    free(buf);
    return found == 1    ? PC_SPOOL_RESYNC_FOUND
           : found == 0  ? PC_SPOOL_RESYNC_NONE
           : found == -1 ? PC_SPOOL_RESYNC_IO
                         : PC_SPOOL_RESYNC_NO_MEMORY;
}

static int64_t mem_read(void *ctx, uint64_t off, void *buf, size_t len)
{
    const pc_spool_mem_t *m = ctx;
    if (off >= m->len)
        return 0;
    size_t n = m->len - off < len ? m->len - off : len;
    memcpy(buf, m->data + off, n);
    return (int64_t)n;
}

pc_spool_source_t pc_spool_mem_source(pc_spool_mem_t *m)
{
    return (pc_spool_source_t){ .read = mem_read, .ctx = m, .size = m->len };
}
