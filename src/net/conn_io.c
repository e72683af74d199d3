/* The connection's transport: reading and framing what arrives, the write queue (the
 * frames of one loop turn leave together, in writevs of up to CONN_WRITE_BYTES), the TLS
 * path (ciphertext on the socket, plaintext above), and the start of the handshake once
 * the socket is connected.
 * @locality loop thread. */
#include "net/connection_internal.h"

#include <limits.h>
#include <openssl/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/error.h"
#include "wire/pb_arena.h"
#include "wire/pb_receipt.h"

typedef struct write_req {
    uv_write_t req;
    pc_conn_t *conn;
    out_queue_t q;
} write_req_t;

/* ---- writing ----------------------------------------------------------------- */

/* The command bytes an item owns; credentials in them are wiped first. */
static void free_owned(const write_item_t *it)
{
    if (!it->owned) /* an op's frame: its owner lets go of it (done) */
        return;
    if (it->wipe)
        OPENSSL_cleanse(it->owned, it->bytes);
    free(it->owned);
}

/* The items hear how their write went and let go of what they own; the arrays stay. */
static void finish_items_only(out_queue_t *q, int status)
{
    for (size_t i = 0; i < q->n_items; i++) {
        if (q->items[i].done)
            q->items[i].done(q->items[i].ctx, status);
        free_owned(&q->items[i]);
    }
    q->n_items = q->n_bufs = 0;
}

void pc_conn_finish_items(out_queue_t *q, int status)
{
    finish_items_only(q, status);
    free(q->items);
    free(q->bufs);
    memset(q, 0, sizeof *q);
}

/* A finished write's arrays, kept as the connection's spare unless it has one (or they
 * grew large for a burst): the next turn's queue starts with them instead of growing
 * new arrays from 16 entries, a realloc at each doubling, every turn. */
#define SPARE_MAX_BUFS 4096

static void keep_arrays(pc_conn_t *c, out_queue_t *q)
{
    if (!c->spare.bufs && q->cap_bufs <= SPARE_MAX_BUFS) {
        c->spare = *q;
    } else {
        free(q->items);
        free(q->bufs);
    }
    memset(q, 0, sizeof *q);
}

static void on_write(uv_write_t *req, int status)
{
    write_req_t *w = (write_req_t *)req;
    pc_conn_t *c = w->conn;
    c->busy_requests--;
    finish_items_only(&w->q, status);
    keep_arrays(c, &w->q);
    free(w);
    if (status < 0 && status != UV_ECANCELED)
        pc_conn_close(c, PULSARC_ERR_CONNECTION_CLOSED, uv_strerror(status));
    else
        pc_conn_maybe_free(c);
}

static int grow_array(void **items, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t n = *cap ? *cap * 2 : 16;
    while (n < need)
        n *= 2;
    void *p = realloc(*items, n * elem);
    if (!p)
        return -1;
    *items = p;
    *cap = n;
    return 0;
}

/* Hand a queue to libuv as one writev; its items hear how it went. */
static void start_write(pc_conn_t *c, out_queue_t *q)
{
    write_req_t *w = malloc(sizeof *w);
    if (!w) {
        pc_conn_finish_items(q, UV_ENOMEM);
        pc_conn_close(c, PULSARC_ERR_NO_MEMORY, "no memory for a write");
        return;
    }
    w->conn = c;
    w->q = *q;
    memset(q, 0, sizeof *q);
    int rc = uv_write(&w->req, (uv_stream_t *)&c->tcp, w->q.bufs, (unsigned)w->q.n_bufs, on_write);
    if (rc != 0) {
        pc_conn_finish_items(&w->q, rc);
        free(w);
        pc_conn_close(c, PULSARC_ERR_CONNECTION_CLOSED, uv_strerror(rc));
        return;
    }
    c->busy_requests++;
}

/* ---- TLS transport: ciphertext on the socket, plaintext above ---------------- */

/* Write whatever ciphertext the session has ready (handshake messages, alerts, records).
 * Records must reach the peer in the order the session made them: every path that makes
 * ciphertext calls this (or flush_out's encryption) at once, so uv_write order is it. */
static void send_tls_output(pc_conn_t *c)
{
    size_t len;
    uint8_t *bytes = pc_tls_take_output(c->tls, &len);
    if (!bytes)
        return;
    out_queue_t q;
    memset(&q, 0, sizeof q);
    if (grow_array((void **)&q.bufs, &q.cap_bufs, 1, sizeof *q.bufs) != 0 ||
        grow_array((void **)&q.items, &q.cap_items, 1, sizeof *q.items) != 0) {
        free(bytes);
        free(q.bufs);
        pc_conn_close(c, PULSARC_ERR_NO_MEMORY, "no memory for TLS output");
        return;
    }
    q.bufs[q.n_bufs++] = uv_buf_init((char *)bytes, (unsigned)len);
    q.items[q.n_items++] = (write_item_t){ NULL, NULL, bytes, 1, len, false };
    start_write(c, &q);
}

/* The TLS write path. Everything a loop turn queued joins c->tls_plain; the pump encrypts
 * it in parts of TLS_PART plaintext bytes, each into a ciphertext block of its own that
 * goes to libuv as one write, and stops while TLS_AHEAD bytes of ciphertext are still
 * unwritten: what waits for the socket stays plaintext (which its owners hold anyway),
 * so a burst of large messages costs no second copy of itself in ciphertext. A
 * write's completion pumps again. A block is as large as the part needs; full-size ones
 * are kept for the next parts (CONN_TLS_SPARES of them, as many as can be in flight), since
 * a fresh block of this size is memory the kernel must map and fault in anew.
 *
 * Records carry up to 16 KiB of plaintext. Small frames are gathered (copied) into full
 * records, since one record per frame would cost a header, a tag and an SSL_write each;
 * a large buffer is encrypted where it lies, in whole records, with only its edges
 * gathered. An item's callback runs once its last byte is encrypted: its memory is no
 * longer needed then. */
#define TLS_RECORD 16384
#define TLS_PART (256 * 1024)
#define TLS_AHEAD (512 * 1024)
/* A part's records and their headers and tags (at most 29 bytes each), with room. */
#define TLS_BLOCK (TLS_PART + 8 * 1024)

typedef struct cipher_write {
    uv_write_t req;
    pc_conn_t *conn;
    pc_tls_out_t out;
} cipher_write_t;

static void tls_pump(pc_conn_t *c);

static void keep_or_free_block(pc_conn_t *c, pc_tls_out_t *out)
{
    if (out->cap == TLS_BLOCK && c->n_tls_spares < CONN_TLS_SPARES && c->state != PC_CONN_CLOSED) {
        out->len = 0;
        c->tls_spares[c->n_tls_spares++] = *out;
    } else {
        free(out->data);
    }
    *out = (pc_tls_out_t){ 0 };
}

/* A block for the next part: a kept one when the part fills it, else one of its size. */
static pc_tls_out_t take_block(pc_conn_t *c)
{
    size_t want = c->tls_plain_bytes < TLS_PART ? c->tls_plain_bytes : TLS_PART;
    if (want == TLS_PART && c->n_tls_spares > 0)
        return c->tls_spares[--c->n_tls_spares];
    /* Each record adds at most 29 bytes (header, explicit nonce or type, tag); a key update
     * answer may go first. */
    size_t cap = want == TLS_PART ? TLS_BLOCK : want + (want / TLS_RECORD + 2) * 64 + 512;
    pc_tls_out_t out = { .data = malloc(cap) };
    out.cap = out.data ? cap : 0;
    return out;
}

static void on_cipher_written(uv_write_t *req, int status)
{
    cipher_write_t *w = (cipher_write_t *)req;
    pc_conn_t *c = w->conn;
    c->busy_requests--;
    c->tls_in_flight -= w->out.len;
    keep_or_free_block(c, &w->out);
    free(w);
    if (status < 0 && status != UV_ECANCELED) {
        pc_conn_close(c, PULSARC_ERR_CONNECTION_CLOSED, uv_strerror(status));
        return;
    }
    if (c->state != PC_CONN_CLOSED)
        tls_pump(c);
    pc_conn_maybe_free(c);
}

/* Hand one block of ciphertext to libuv (it owns the block from here). */
static void start_cipher_write(pc_conn_t *c, pc_tls_out_t *out)
{
    cipher_write_t *w = malloc(sizeof *w);
    if (!w) {
        free(out->data);
        pc_conn_close(c, PULSARC_ERR_NO_MEMORY, "no memory for a write");
        return;
    }
    w->conn = c;
    w->out = *out;
    *out = (pc_tls_out_t){ 0 };
    uv_buf_t buf = uv_buf_init((char *)w->out.data, (unsigned)w->out.len);
    int rc = uv_write(&w->req, (uv_stream_t *)&c->tcp, &buf, 1, on_cipher_written);
    if (rc != 0) {
        free(w->out.data);
        free(w);
        pc_conn_close(c, PULSARC_ERR_CONNECTION_CLOSED, uv_strerror(rc));
        return;
    }
    c->busy_requests++;
    c->tls_in_flight += w->out.len;
}

/* The next item of tls_plain is encrypted to its end: tell its owner. Returns false when
 * that closed the connection (which then finished the rest of the queue). */
static bool finish_encrypted_item(pc_conn_t *c)
{
    write_item_t it = c->tls_plain.items[c->tls_item];
    c->tls_item++;
    c->tls_off = 0;
    if (it.done)
        it.done(it.ctx, 0);
    free_owned(&it);
    return c->state != PC_CONN_CLOSED;
}

/* Encrypt up to TLS_PART bytes of tls_plain into out, from where the last part stopped. */
static int encrypt_part(pc_conn_t *c, pc_tls_out_t *out)
{
    out_queue_t *q = &c->tls_plain;
    uint8_t chunk[TLS_RECORD];
    size_t used = 0, taken = 0;
    bool wipe = false;
    int rc = 0;
    while (rc == 0 && c->tls_item < q->n_items && taken < TLS_PART) {
        write_item_t *it = &q->items[c->tls_item];
        wipe |= it->wipe;
        if (c->tls_buf == c->tls_item_end) { /* every buffer of the item is encrypted */
            if (!finish_encrypted_item(c))
                return -1;
            if (c->tls_item < q->n_items)
                c->tls_item_end += q->items[c->tls_item].n_bufs;
            continue;
        }
        const uint8_t *p = (const uint8_t *)q->bufs[c->tls_buf].base + c->tls_off;
        size_t left = q->bufs[c->tls_buf].len - c->tls_off;
        if (left > TLS_PART - taken)
            left = TLS_PART - taken;
        size_t n;
        size_t whole = left / TLS_RECORD * TLS_RECORD;
        if (used == 0 && whole > 0) {
            n = whole; /* whole records, straight from the caller's memory */
            rc = pc_tls_write_to(c->tls, p, n, out);
        } else {
            n = left < TLS_RECORD - used ? left : TLS_RECORD - used;
            memcpy(chunk + used, p, n);
            used += n;
            if (used == TLS_RECORD) {
                rc = pc_tls_write_to(c->tls, chunk, used, out);
                used = 0;
            }
        }
        taken += n;
        c->tls_off += n;
        c->tls_plain_bytes -= n;
        if (c->tls_off == q->bufs[c->tls_buf].len) {
            c->tls_buf++;
            c->tls_off = 0;
        }
    }
    if (rc == 0 && used > 0)
        rc = pc_tls_write_to(c->tls, chunk, used, out);
    /* Credentials (CONNECT, AUTH_RESPONSE) passed through the stack copy: wipe it. */
    if (wipe)
        OPENSSL_cleanse(chunk, sizeof chunk);
    return rc;
}

/* Encrypt and write while the socket keeps up (see above). */
static void tls_pump(pc_conn_t *c)
{
    out_queue_t *q = &c->tls_plain;
    while (c->state != PC_CONN_CLOSED && c->tls_item < q->n_items && c->tls_in_flight < TLS_AHEAD) {
        pc_tls_out_t out = take_block(c);
        if (!out.data || encrypt_part(c, &out) != 0) {
            free(out.data);
            if (c->state == PC_CONN_CLOSED)
                return;
            pulsarc_result why = pc_tls_result(c->tls);
            pc_conn_close(c, why != PULSARC_OK ? why : PULSARC_ERR_NO_MEMORY,
                          why != PULSARC_OK ? pc_tls_detail(c->tls) : "no memory for TLS output");
            return;
        }
        if (out.len > 0)
            start_cipher_write(c, &out);
        else
            keep_or_free_block(c, &out);
    }
    /* Everything encrypted (the last items may have had no bytes left to encrypt):
     * the arrays serve the next turn's queue. */
    while (c->state != PC_CONN_CLOSED && c->tls_item < q->n_items &&
           c->tls_buf == c->tls_item_end) {
        if (!finish_encrypted_item(c))
            return;
        if (c->tls_item < q->n_items)
            c->tls_item_end += q->items[c->tls_item].n_bufs;
    }
    if (c->state != PC_CONN_CLOSED && c->tls_item == q->n_items) {
        q->n_items = q->n_bufs = 0;
        c->tls_item = c->tls_buf = c->tls_off = c->tls_item_end = 0;
        c->tls_plain_bytes = 0;
    }
}

/* Move the turn's queue behind what still waits for encryption. */
static int join_tls_plain(pc_conn_t *c)
{
    out_queue_t *dst = &c->tls_plain, *src = &c->out;
    if (grow_array((void **)&dst->bufs, &dst->cap_bufs, dst->n_bufs + src->n_bufs,
                   sizeof *dst->bufs) != 0 ||
        grow_array((void **)&dst->items, &dst->cap_items, dst->n_items + src->n_items,
                   sizeof *dst->items) != 0)
        return -1;
    if (dst->n_items == 0)
        c->tls_item_end = src->n_items ? src->items[0].n_bufs : 0;
    for (size_t i = 0; i < src->n_items; i++)
        c->tls_plain_bytes += src->items[i].bytes;
    memcpy(dst->bufs + dst->n_bufs, src->bufs, src->n_bufs * sizeof *src->bufs);
    memcpy(dst->items + dst->n_items, src->items, src->n_items * sizeof *src->items);
    dst->n_bufs += src->n_bufs;
    dst->n_items += src->n_items;
    src->n_bufs = src->n_items = 0; /* its arrays serve the next turn */
    return 0;
}

void pc_conn_tls_drop_plain(pc_conn_t *c)
{
    out_queue_t *q = &c->tls_plain;
    for (size_t i = c->tls_item; i < q->n_items; i++) {
        if (q->items[i].done)
            q->items[i].done(q->items[i].ctx, UV_ECANCELED);
        free_owned(&q->items[i]);
    }
    free(q->items);
    free(q->bufs);
    memset(q, 0, sizeof *q);
    c->tls_item = c->tls_buf = c->tls_off = c->tls_item_end = 0;
    c->tls_plain_bytes = 0;
    while (c->n_tls_spares > 0)
        free(c->tls_spares[--c->n_tls_spares].data);
}

/* A write request holds every buffer in it until its last byte is written, and the
 * frames' owners (ops and their payloads) wait for that: one writev for all a loop turn
 * produced would keep messages whose receipts came long ago. Requests of about this many
 * bytes still coalesce small frames, and free large ones soon after they are sent. */
#define CONN_WRITE_BYTES (256 * 1024)

/* Copy items [from, to) and their buffers out of q into part. */
static int take_part(const out_queue_t *q, size_t from, size_t to, size_t buf_from,
                     out_queue_t *part)
{
    size_t n_bufs = 0;
    for (size_t i = from; i < to; i++)
        n_bufs += q->items[i].n_bufs;
    memset(part, 0, sizeof *part);
    if (grow_array((void **)&part->bufs, &part->cap_bufs, n_bufs ? n_bufs : 1,
                   sizeof *part->bufs) != 0 ||
        grow_array((void **)&part->items, &part->cap_items, to - from, sizeof *part->items) != 0) {
        free(part->bufs);
        free(part->items);
        return -1;
    }
    memcpy(part->bufs, q->bufs + buf_from, n_bufs * sizeof *part->bufs);
    memcpy(part->items, q->items + from, (to - from) * sizeof *part->items);
    part->n_bufs = n_bufs;
    part->n_items = to - from;
    return 0;
}

/* Write what the socket takes now, straight from q's arrays: uv_try_write needs no request,
 * and copies no array of buffers (uv_write copies any above four: a pair per unbatched
 * message). It writes nothing while libuv still has writes queued, so the order holds.
 * Returns how many of q's items went whole; the next one's written bytes are cut from it,
 * and *buf_from is its first buffer. An error is left to uv_write, which reports it. */
static size_t write_at_once(pc_conn_t *c, out_queue_t *q, size_t *buf_from)
{
    size_t whole = 0, b = 0; /* items written whole; the next one's first buffer */
    while (whole < q->n_items) {
        size_t n = q->n_bufs - b;
        int w = uv_try_write((uv_stream_t *)&c->tcp, q->bufs + b,
                             n > INT_MAX ? INT_MAX : (unsigned)n);
        if (w <= 0)
            break;
        size_t left = (size_t)w;
        for (; whole < q->n_items && left >= q->items[whole].bytes; whole++) {
            left -= q->items[whole].bytes;
            b += q->items[whole].n_bufs;
        }
        /* The next item, written in part: it loses the buffers written, and the written
         * start of the one cut (queued buffers are never empty). */
        for (write_item_t *it = &q->items[whole]; left; it->n_bufs--, b++) {
            size_t cut = left < q->bufs[b].len ? left : q->bufs[b].len;
            it->bytes -= cut;
            left -= cut;
            if (cut < q->bufs[b].len) {
                q->bufs[b].base += cut;
                q->bufs[b].len -= cut;
                break;
            }
        }
    }
    *buf_from = b;
    return whole;
}

/* Hand q to the socket: what it takes at once, the rest to libuv as writes of about
 * CONN_WRITE_BYTES each, in order. q is left empty before any write starts, since a
 * failed one closes the connection, which finishes whatever its queue still holds. */
static void write_in_parts(pc_conn_t *c, out_queue_t *q)
{
    out_queue_t all = *q;
    memset(q, 0, sizeof *q);
    size_t buf_from;
    size_t whole = write_at_once(c, &all, &buf_from), from = whole;
    size_t total = 0;
    for (size_t i = from; i < all.n_items; i++)
        total += all.items[i].bytes;
    if (from == 0 && buf_from == 0 && total <= CONN_WRITE_BYTES) {
        start_write(c, &all); /* its arrays go with it */
        return;
    }
    while (from < all.n_items && c->state != PC_CONN_CLOSED) {
        size_t to = from, bytes = 0;
        do
            bytes += all.items[to++].bytes;
        while (to < all.n_items && bytes + all.items[to].bytes <= CONN_WRITE_BYTES);
        out_queue_t part;
        if (take_part(&all, from, to, buf_from, &part) != 0) {
            pc_conn_close(c, PULSARC_ERR_NO_MEMORY, "no memory for a write");
            break;
        }
        for (size_t i = from; i < to; i++)
            buf_from += all.items[i].n_bufs;
        from = to;
        start_write(c, &part);
    }
    /* What a failed write left unwritten hears that it was cancelled. */
    for (size_t i = from; i < all.n_items; i++) {
        if (all.items[i].done)
            all.items[i].done(all.items[i].ctx, UV_ECANCELED);
        free_owned(&all.items[i]);
    }
    /* Those written at once hear so last: their callbacks may write again, or close. */
    all.n_items = whole;
    finish_items_only(&all, 0);
    keep_arrays(c, &all);
}

static void flush_out(uv_idle_t *h)
{
    pc_conn_t *c = h->data;
    uv_idle_stop(h);
    c->flush_due = false;
    if (c->out.n_bufs == 0 || c->state == PC_CONN_CLOSED)
        return;
    /* TLS encrypts as the socket takes it; plain connections write the callers' buffers
     * as they are (zero copy), in parts. */
    if (c->tls) {
        if (join_tls_plain(c) != 0) {
            pc_conn_close(c, PULSARC_ERR_NO_MEMORY, "no memory for a write");
            return;
        }
        tls_pump(c);
    } else {
        write_in_parts(c, &c->out);
    }
}

/* Queue buffers for the next coalesced write: the frames produced in one loop turn (a
 * burst of sends, a resend of the whole pending queue) leave together at its end. */
static int write_bufs(pc_conn_t *c, const uv_buf_t *bufs, unsigned n, pc_write_done_cb done,
                      void *ctx, uint8_t *owned, bool wipe)
{
    out_queue_t *q = &c->out;
    /* The spare arrays move to the queue only on a connection that writes: a closed one
     * frees its spare but never again its queue. */
    bool writes = c->state != PC_CONN_CLOSED && c->state != PC_CONN_CONNECTING;
    if (writes && !q->bufs && c->spare.bufs) {
        *q = c->spare;
        memset(&c->spare, 0, sizeof c->spare);
    }
    if (!writes ||
        grow_array((void **)&q->bufs, &q->cap_bufs, q->n_bufs + n, sizeof *q->bufs) != 0 ||
        grow_array((void **)&q->items, &q->cap_items, q->n_items + 1, sizeof *q->items) != 0) {
        write_item_t dropped = { .owned = owned, .bytes = owned ? bufs[0].len : 0, .wipe = wipe };
        free_owned(&dropped);
        return -1;
    }
    size_t used = 0, bytes = 0;
    for (unsigned i = 0; i < n; i++) {
        if (bufs[i].len > 0) {
            q->bufs[q->n_bufs++] = bufs[i];
            used++;
            bytes += bufs[i].len;
        }
    }
    q->items[q->n_items++] = (write_item_t){ done, ctx, owned, used, bytes, wipe };
    if (!c->flush_due) {
        uv_idle_start(&c->flusher, flush_out);
        c->flush_due = true;
    }
    return 0;
}

int pc_conn_write(pc_conn_t *c, const uv_buf_t *bufs, unsigned n, pc_write_done_cb done, void *ctx)
{
    return write_bufs(c, bufs, n, done, ctx, NULL, false);
}

static int send_command(pc_conn_t *c, const Pulsar__Proto__BaseCommand *cmd, bool wipe)
{
    pc_buf_t b;
    pc_buf_init(&b);
    if (pc_frame_encode_command(&b, cmd) != 0) {
        pc_buf_free(&b);
        return -1;
    }
    size_t len;
    uint8_t *bytes = pc_buf_detach(&b, &len);
    uv_buf_t ub = uv_buf_init((char *)bytes, (unsigned)len);
    return write_bufs(c, &ub, 1, NULL, NULL, bytes, wipe);
}

int pc_conn_send_command(pc_conn_t *c, const Pulsar__Proto__BaseCommand *cmd)
{
    return send_command(c, cmd, false);
}

int pc_conn_send_secret_command(pc_conn_t *c, const Pulsar__Proto__BaseCommand *cmd)
{
    return send_command(c, cmd, true);
}

/* ---- reading ------------------------------------------------------------------ */

/* A peer that is no broker's binary port, named by its first bytes (c->head), instead of
 * the frame reader's or OpenSSL's words for what they look like to it. */

#define QUOTE_MAX 60 /* of an HTTP status line, in a detail */

/* The first line of c->head, cut at QUOTE_MAX bytes ("..."); its bytes are the peer's:
 * the detail and log line are made safe where they are set (common/safe_text.h). */
static void quote_first_line(const pc_conn_t *c, char *out, size_t cap)
{
    size_t n = 0;
    while (n < c->head_len && n < QUOTE_MAX && c->head[n] != '\r' && c->head[n] != '\n' &&
           c->head[n] != '\0')
        n++;
    bool cut = n == QUOTE_MAX && n < c->head_len && c->head[n] != '\r' && c->head[n] != '\n';
    snprintf(out, cap, "%.*s%s", (int)n, (const char *)c->head, cut ? "..." : "");
}

static const char *tls_record_name(uint8_t type)
{
    static const char *const names[] = { "change_cipher_spec", "alert", "handshake",
                                         "application_data" };
    return type >= 0x14 && type <= 0x17 ? names[type - 0x14] : "?";
}

/* Close c and return true when its peer is an HTTP server (over_tls: its plain-text answer
 * to our ClientHello) or, without TLS, a TLS port; false when it looks like neither. */
static bool close_if_foreign(pc_conn_t *c, bool over_tls)
{
    pc_peer_kind_t kind = pc_frame_peer_kind(c->head, c->head_len);
    char why[512], line[QUOTE_MAX + 4];
    if (kind == PC_PEER_HTTP) {
        quote_first_line(c, line, sizeof line);
        snprintf(why, sizeof why,
                 "%s:%d is %s HTTP server (it answered '%s'), not a broker's "
                 "binary port: use http:// for lookups over HTTP, or the broker's port (6650 "
                 "with pulsar://, 6651 with pulsar+ssl://)",
                 c->dial->host, c->dial->port, over_tls ? "a plain-text" : "an", line);
    } else if (kind == PC_PEER_TLS && !over_tls) {
        snprintf(why, sizeof why,
                 "%s:%d answered with TLS (a TLS %s record): it is a TLS "
                 "port: use pulsar+ssl://",
                 c->dial->host, c->dial->port, tls_record_name(c->head[0]));
    } else {
        return false;
    }
    pc_conn_close(c, over_tls ? PULSARC_ERR_TLS_HANDSHAKE : PULSARC_ERR_PROTOCOL, why);
    return true;
}

static void process_frames(pc_conn_t *c)
{
    pc_frame_t f;
    pc_frame_status_t st;
    /* Nothing keeps a command past its dispatch, so one arena serves them all. */
    pc_pb_arena_t arena;
    pc_pb_arena_init(&arena);
    /* Receipts, one per op, take the fast decoder; it declines anything unusual. It
     * writes only a plain receipt's fields, so these are initialised once per read. */
    Pulsar__Proto__CommandSendReceipt receipt = PULSAR__PROTO__COMMAND_SEND_RECEIPT__INIT;
    Pulsar__Proto__MessageIdData receipt_id = PULSAR__PROTO__MESSAGE_ID_DATA__INIT;
    while (c->state != PC_CONN_CLOSED &&
           (st = pc_frame_reader_next(&c->reader, &f)) == PC_FRAME_OK) {
        c->framed = true;
        if (!f.has_payload &&
            pc_pb_decode_send_receipt(f.command, f.command_len, &receipt, &receipt_id)) {
            pc_conn_dispatch_receipt(c, &receipt);
            continue;
        }
        Pulsar__Proto__BaseCommand *cmd = pc_frame_unpack_command_in(&f, &arena.allocator);
        if (!cmd) {
            pc_pb_arena_reset(&arena);
            pc_conn_close(c, PULSARC_ERR_PROTOCOL, "command does not parse");
            return;
        }
        pc_conn_dispatch(c, cmd);
        pc_pb_arena_reset(&arena);
    }
    if (c->state == PC_CONN_CLOSED)
        return;
    /* Not one frame yet, and the first bytes are none: the peer is not a broker. */
    if ((st == PC_FRAME_TOO_BIG || st == PC_FRAME_MALFORMED) && !c->framed &&
        close_if_foreign(c, false))
        return;
    if (st == PC_FRAME_TOO_BIG) {
        char why[160];
        snprintf(why, sizeof why,
                 "the broker sent a frame larger than %zu bytes, the most a "
                 "producer accepts",
                 c->reader.max_frame);
        pc_conn_close(c, PULSARC_ERR_PROTOCOL, why);
    } else if (st == PC_FRAME_MALFORMED)
        pc_conn_close(c, PULSARC_ERR_PROTOCOL, "malformed frame");
    else if (st == PC_FRAME_NO_MEMORY)
        pc_conn_close(c, PULSARC_ERR_NO_MEMORY, "no memory for an incoming frame");
}

/* The buffer for the next read: allocated at the first, doubled (up to READ_BUF_MAX)
 * after a read that filled it. Without memory it keeps the buffer it has; with none at
 * all libuv reports UV_ENOBUFS to on_read. */
static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    pc_conn_t *c = h->data;
    if (!c->rbuf || (c->rbuf_filled && c->rbuf_len < READ_BUF_MAX)) {
        size_t len = c->rbuf ? c->rbuf_len * 2 : READ_BUF_MIN;
        /* Nothing in it is kept between reads: no copy. */
        uint8_t *bigger = malloc(len);
        if (bigger) {
            free(c->rbuf);
            c->rbuf = bigger;
            c->rbuf_len = len;
        }
    }
    c->rbuf_filled = false;
    *buf = uv_buf_init((char *)c->rbuf, c->rbuf ? (unsigned)c->rbuf_len : 0);
}

/* data is rbuf (or a TLS read's plaintext in it), which the next read reuses: the reader
 * reads the frames in it where they lie, and process_frames takes all of them before this
 * returns, or closes the connection (which reads no more). */
static void on_plaintext(pc_conn_t *c, const uint8_t *data, size_t n)
{
    if (pc_frame_reader_lend(&c->reader, data, n) != 0) {
        pc_conn_close(c, PULSARC_ERR_NO_MEMORY, "no memory for incoming data");
        return;
    }
    process_frames(c);
}

static void close_tls_failed(pc_conn_t *c)
{
    if (!pc_tls_established(c->tls) && close_if_foreign(c, true))
        return;
    pulsarc_result why = pc_tls_result(c->tls);
    pc_conn_close(c, why != PULSARC_OK ? why : PULSARC_ERR_TLS_HANDSHAKE, pc_tls_detail(c->tls));
}

/* Advance the TLS handshake; CONNECT (and with it any credentials) goes out only once
 * the broker's certificate and name have been verified. */
static void advance_tls_handshake(pc_conn_t *c)
{
    pc_tls_status_t st = pc_tls_handshake(c->tls);
    send_tls_output(c); /* ClientHello, our Finished, or the alert of a failure */
    if (c->state == PC_CONN_CLOSED)
        return;
    if (st == PC_TLS_FAILED) {
        close_tls_failed(c);
    } else if (st == PC_TLS_DONE) {
        PC_DEBUG(c->rt->log, "TLS established with %s:%d%s", c->physical.host, c->physical.port,
                 pc_tls_resumed(c->tls) ? " (session resumed)" : "");
        pc_conn_send_connect(c);
    }
}

static void on_ciphertext(pc_conn_t *c, const uint8_t *data, size_t n)
{
    if (pc_tls_feed(c->tls, data, n) != 0) {
        pc_conn_close(c, PULSARC_ERR_NO_MEMORY, "no memory for incoming data");
        return;
    }
    if (!pc_tls_established(c->tls)) {
        advance_tls_handshake(c);
        if (c->state == PC_CONN_CLOSED || !pc_tls_established(c->tls))
            return;
    }
    /* The session holds the ciphertext now, so rbuf is free to take plaintext. */
    long got = 0;
    while (c->state != PC_CONN_CLOSED && (got = pc_tls_read(c->tls, c->rbuf, c->rbuf_len)) > 0)
        on_plaintext(c, c->rbuf, (size_t)got);
    if (c->state == PC_CONN_CLOSED)
        return;
    if (got < 0)
        close_tls_failed(c);
    else
        send_tls_output(c); /* what reading made: a key update's answer, say */
}

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
    pc_conn_t *c = s->data;
    if (n < 0 && c->tls && n == UV_EOF) {
        pc_tls_fail_eof(c->tls);
        close_tls_failed(c);
        return;
    }
    if (n == UV_ENOBUFS) {
        pc_conn_close(c, PULSARC_ERR_NO_MEMORY, "no memory for incoming data");
        return;
    }
    if (n < 0) {
        /* A TLS port answers a plain CONNECT by hanging up: say so. */
        const char *why = n != UV_EOF ? uv_strerror((int)n)
                          : c->state == PC_CONN_HANDSHAKE
                              ? "closed by the peer during the handshake (a TLS port? use "
                                "pulsar+ssl://)"
                              : "closed by the peer";
        pc_conn_close(c, PULSARC_ERR_CONNECTION_CLOSED, why);
        return;
    }
    if (n == 0)
        return;
    c->rbuf_filled = (size_t)n == c->rbuf_len;
    c->last_rx_ms = pc_mono_ms();
    if (c->head_len < sizeof c->head) {
        size_t keep = sizeof c->head - c->head_len;
        keep = (size_t)n < keep ? (size_t)n : keep;
        memcpy(c->head + c->head_len, buf->base, keep);
        c->head_len += keep;
    }
    if (c->tls)
        on_ciphertext(c, (const uint8_t *)buf->base, (size_t)n);
    else
        on_plaintext(c, (const uint8_t *)buf->base, (size_t)n);
}

/* ---- connected ---------------------------------------------------------------- */

/* autoCertRefreshSeconds: the TLS files as they are when this connection starts, when
 * due (net/tls.h); the connections already open keep what they were made with. */
static void refresh_tls_files(pc_conn_t *c)
{
    char what[512];
    switch (pc_tls_ctx_refresh(c->tls_ctx, pc_clock_now_ms(c->rt->clock), what, sizeof what)) {
    case PC_TLS_REFRESH_RELOADED:
        c->rt->tls_reloads++;
        PC_INFO(c->rt->log, "TLS files changed; new connections use them: %s", what);
        break;
    case PC_TLS_REFRESH_FAILED:
        c->rt->tls_reload_failures++;
        PC_WARN(c->rt->log,
                "TLS files changed but cannot be used; connections keep the previous ones "
                "(tried again after autoCertRefreshSeconds): %s",
                what);
        break;
    case PC_TLS_REFRESH_NONE:
        break;
    }
}

/* The socket is connected: start reading and open the session with CONNECT, after the
 * TLS handshake on a TLS client. The certificate must name the host we dialled (through
 * a proxy, the proxy). */
void pc_conn_start_handshake(pc_conn_t *c)
{
    uv_tcp_nodelay(&c->tcp, 1);
    uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read);
    if (!c->tls_ctx) {
        pc_conn_send_connect(c);
        return;
    }
    refresh_tls_files(c);
    c->tls = pc_tls_session_new(c->tls_ctx, c->physical.host, (uint16_t)c->physical.port);
    if (!c->tls) {
        pc_conn_close(c, PULSARC_ERR_NO_MEMORY, "no memory for a TLS session");
        return;
    }
    advance_tls_handshake(c);
}
