/* The connection's transport: reading and framing what arrives, the write queue (the
 * frames of one loop turn leave together, in writevs of up to CONN_WRITE_BYTES), the TLS
 * path (ciphertext on the socket, plaintext above), and the start of the handshake once
 * the socket is connected.
 * @locality loop thread. */
#include "net/connection_internal.h"

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
    if (it->wipe && it->owned)
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

/* Replace the queue's plaintext buffers by their encryption, gathered into records of up
 * to 16 KiB (one record per small frame would cost a header and a MAC each). The items
 * keep their callbacks and owned plaintext; one more item owns the ciphertext. */
static int encrypt_queue(pc_conn_t *c, out_queue_t *q)
{
    uint8_t chunk[16384];
    size_t used = 0;
    for (size_t i = 0; i < q->n_bufs; i++) {
        const uint8_t *p = (const uint8_t *)q->bufs[i].base;
        size_t left = q->bufs[i].len;
        while (left > 0) {
            size_t n = left < sizeof chunk - used ? left : sizeof chunk - used;
            memcpy(chunk + used, p, n);
            used += n;
            p += n;
            left -= n;
            if (used == sizeof chunk && pc_tls_write(c->tls, chunk, used) != 0) {
                OPENSSL_cleanse(chunk, sizeof chunk);
                return -1;
            }
            used = used == sizeof chunk ? 0 : used;
        }
    }
    int rc = used > 0 ? pc_tls_write(c->tls, chunk, used) : 0;
    /* Credentials (CONNECT, AUTH_RESPONSE) passed through the stack copy: wipe it. */
    for (size_t i = 0; i < q->n_items; i++) {
        if (q->items[i].wipe) {
            OPENSSL_cleanse(chunk, sizeof chunk);
            break;
        }
    }
    if (rc != 0)
        return -1;
    size_t len;
    uint8_t *cipher = pc_tls_take_output(c->tls, &len);
    if (!cipher ||
        grow_array((void **)&q->items, &q->cap_items, q->n_items + 1, sizeof *q->items) != 0) {
        free(cipher);
        return -1;
    }
    q->items[q->n_items++] = (write_item_t){ NULL, NULL, cipher, 0, 0, false };
    q->bufs[0] = uv_buf_init((char *)cipher, (unsigned)len);
    q->n_bufs = 1;
    return 0;
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

/* Hand q to libuv as writes of about CONN_WRITE_BYTES each, in order; q is left empty
 * (before any write starts, since a failed one closes the connection, which finishes
 * whatever its queue still holds). */
static void write_in_parts(pc_conn_t *c, out_queue_t *q)
{
    size_t total = 0;
    for (size_t i = 0; i < q->n_items; i++)
        total += q->items[i].bytes;
    if (total <= CONN_WRITE_BYTES) {
        start_write(c, q);
        return;
    }
    out_queue_t all = *q;
    memset(q, 0, sizeof *q);
    size_t from = 0, buf_from = 0;
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
    free(all.items);
    free(all.bufs);
}

static void flush_out(uv_idle_t *h)
{
    pc_conn_t *c = h->data;
    uv_idle_stop(h);
    if (c->out.n_bufs == 0 || c->state == PC_CONN_CLOSED)
        return;
    if (c->tls && encrypt_queue(c, &c->out) != 0) {
        pulsarc_result why = pc_tls_result(c->tls);
        pc_conn_close(c, why != PULSARC_OK ? why : PULSARC_ERR_NO_MEMORY,
                      why != PULSARC_OK ? pc_tls_detail(c->tls) : "no memory for TLS output");
        return;
    }
    /* TLS writes its one buffer of ciphertext; plain connections write the callers'
     * buffers as they are (zero copy), in parts. */
    if (c->tls)
        start_write(c, &c->out);
    else
        write_in_parts(c, &c->out);
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
    if (!uv_is_active((uv_handle_t *)&c->flusher))
        uv_idle_start(&c->flusher, flush_out);
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
    while (c->state != PC_CONN_CLOSED &&
           (st = pc_frame_reader_next(&c->reader, &f)) == PC_FRAME_OK) {
        c->framed = true;
        /* Receipts, one per op, take the fast decoder; it declines anything unusual. */
        Pulsar__Proto__CommandSendReceipt receipt;
        Pulsar__Proto__MessageIdData receipt_id;
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

static void on_plaintext(pc_conn_t *c, const uint8_t *data, size_t n)
{
    if (pc_frame_reader_feed(&c->reader, data, n) != 0) {
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
        PC_DEBUG(c->rt->log, "TLS established with %s:%d", c->physical.host, c->physical.port);
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
    c->tls = pc_tls_session_new(c->tls_ctx, c->physical.host);
    if (!c->tls) {
        pc_conn_close(c, PULSARC_ERR_NO_MEMORY, "no memory for a TLS session");
        return;
    }
    advance_tls_handshake(c);
}
