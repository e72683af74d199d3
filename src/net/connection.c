#include "net/connection.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "auth/auth.h"
#include "common/clock.h"
#include "common/error.h"
#include "net/tls.h"

#define TICK_MS 100
#define READ_CHUNK (64 * 1024)

int (*pc_conn_test_socket)(const pc_host_port_t *physical);

typedef struct request {
    struct request *next;
    uint64_t id;
    uint64_t deadline_ms;
    pc_request_cb cb;
    void *ctx;
} request_t;

typedef struct ready_waiter {
    struct ready_waiter *next;
    pc_conn_ready_cb cb;
    void *ctx;
} ready_waiter_t;

/* One caller's part of a write: told when its bytes are written (or dropped). */
typedef struct write_item {
    pc_write_done_cb done;
    void *ctx;
    uint8_t *owned; /* command bytes this write owns */
} write_item_t;

/* Everything queued during one loop turn, handed to libuv as one writev. */
typedef struct out_queue {
    uv_buf_t *bufs;
    size_t n_bufs, cap_bufs;
    write_item_t *items;
    size_t n_items, cap_items;
} out_queue_t;

typedef struct write_req {
    uv_write_t req;
    pc_conn_t *conn;
    out_queue_t q;
} write_req_t;

struct pc_conn {
    pc_runtime_t *rt;
    pc_conn_closed_cb on_closed; /* the owner's hook, NULL until set */
    void *owner;
    pc_host_port_t logical;
    pc_host_port_t physical;
    pc_conn_state_t state;

    uv_tcp_t tcp;
    uv_timer_t timer;
    uv_idle_t flusher;  /* runs the coalesced write at the start of the next loop turn */
    out_queue_t out;
    uv_getaddrinfo_t gai;
    uv_connect_t connect_req;
    pc_tls_session_t *tls; /* NULL: plain TCP */
    int live_handles;   /* handles not yet closed; the struct is freed at zero */
    int busy_requests;  /* getaddrinfo/connect/write in flight */

    pc_frame_reader_t reader;
    uint8_t rbuf[READ_CHUNK];
    uint32_t max_message_size;
    int server_protocol;

    uint64_t opened_ms;
    uint64_t last_rx_ms;
    uint64_t last_ping_ms;

    request_t *requests;
    ready_waiter_t *waiters;
    pc_conn_listener_t *listeners;

    /* Waiting for the provider's data (pc_auth_prepare) before CONNECT or before an
     * AUTH_RESPONSE; cancelled when the connection closes, so the provider never calls
     * into a freed connection. */
    pc_auth_wait_t auth_wait;
    bool auth_for_challenge;  /* what the wait is for: a challenge's answer, or CONNECT */
    uint64_t auth_started_ms; /* a challenge's wait is bounded like the handshake */
    uint8_t *challenge;       /* the pending challenge's data (copied), or NULL */
    size_t challenge_len;
};


static void finish_items(out_queue_t *q, int status);

/* ---- lifetime ---------------------------------------------------------------- */

static void maybe_free(pc_conn_t *c)
{
    if (c->state != PC_CONN_CLOSED || c->live_handles > 0 || c->busy_requests > 0)
        return;
    pc_frame_reader_free(&c->reader);
    pc_tls_session_free(c->tls);
    free(c->challenge);
    free(c);
}

static void on_handle_closed(uv_handle_t *h)
{
    pc_conn_t *c = h->data;
    c->live_handles--;
    maybe_free(c);
}

pc_conn_state_t pc_conn_state(const pc_conn_t *c) { return c->state; }
uint32_t pc_conn_max_message_size(const pc_conn_t *c) { return c->max_message_size; }
const pc_host_port_t *pc_conn_logical(const pc_conn_t *c) { return &c->logical; }
const pc_host_port_t *pc_conn_physical(const pc_conn_t *c) { return &c->physical; }
uint64_t pc_conn_new_request_id(pc_conn_t *c) { return c->rt->next_request_id++; }

void pc_conn_set_owner(pc_conn_t *c, pc_conn_closed_cb on_closed, void *ctx)
{
    c->on_closed = on_closed;
    c->owner = ctx;
}

void pc_conn_close(pc_conn_t *c, pulsarc_result why, const char *detail)
{
    if (c->state == PC_CONN_CLOSED)
        return;
    PC_INFO(c->rt->log, "connection to %s:%d closed: %s%s%s", c->physical.host,
            c->physical.port, pulsarc_strerror(why), detail ? ": " : "", detail ? detail : "");
    c->state = PC_CONN_CLOSED;
    if (c->rt->auth)
        pc_auth_cancel(c->rt->auth, &c->auth_wait); /* no-op unless one is pending */
    if (c->on_closed)
        c->on_closed(c, c->owner);

    /* Hold a busy count so that callbacks below cannot free the struct under us. */
    c->busy_requests++;
    uv_close((uv_handle_t *)&c->timer, on_handle_closed);
    uv_close((uv_handle_t *)&c->flusher, on_handle_closed);
    uv_close((uv_handle_t *)&c->tcp, on_handle_closed);
    finish_items(&c->out, UV_ECANCELED); /* queued, never written */
    uv_cancel((uv_req_t *)&c->gai); /* harmless when no lookup is running */

    ready_waiter_t *w = c->waiters;
    c->waiters = NULL;
    while (w) {
        ready_waiter_t *next = w->next;
        pc_set_detail(detail);
        w->cb(c, why, w->ctx);
        free(w);
        w = next;
    }
    request_t *r = c->requests;
    c->requests = NULL;
    while (r) {
        request_t *next = r->next;
        pc_set_detail(detail);
        r->cb(c, why, NULL, r->ctx);
        free(r);
        r = next;
    }
    pc_conn_listener_t *l = c->listeners;
    c->listeners = NULL;
    while (l) {
        pc_conn_listener_t *next = l->next;
        l->next = NULL;
        pc_set_detail(detail);
        l->on_disconnect(l->ctx, why);
        l = next;
    }
    c->busy_requests--;
    maybe_free(c);
}

/* ---- writing ----------------------------------------------------------------- */

static void finish_items(out_queue_t *q, int status)
{
    for (size_t i = 0; i < q->n_items; i++) {
        if (q->items[i].done)
            q->items[i].done(q->items[i].ctx, status);
        free(q->items[i].owned);
    }
    free(q->items);
    free(q->bufs);
    memset(q, 0, sizeof *q);
}

static void on_write(uv_write_t *req, int status)
{
    write_req_t *w = (write_req_t *)req;
    pc_conn_t *c = w->conn;
    c->busy_requests--;
    finish_items(&w->q, status);
    free(w);
    if (status < 0 && status != UV_ECANCELED)
        pc_conn_close(c, PULSARC_ERR_CONNECTION_CLOSED, uv_strerror(status));
    else
        maybe_free(c);
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
        finish_items(q, UV_ENOMEM);
        pc_conn_close(c, PULSARC_ERR_NO_MEMORY, "no memory for a write");
        return;
    }
    w->conn = c;
    w->q = *q;
    memset(q, 0, sizeof *q);
    int rc = uv_write(&w->req, (uv_stream_t *)&c->tcp, w->q.bufs, (unsigned)w->q.n_bufs, on_write);
    if (rc != 0) {
        finish_items(&w->q, rc);
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
    q.items[q.n_items++] = (write_item_t){ NULL, NULL, bytes };
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
            if (used == sizeof chunk && pc_tls_write(c->tls, chunk, used) != 0)
                return -1;
            used = used == sizeof chunk ? 0 : used;
        }
    }
    if (used > 0 && pc_tls_write(c->tls, chunk, used) != 0)
        return -1;
    size_t len;
    uint8_t *cipher = pc_tls_take_output(c->tls, &len);
    if (!cipher ||
        grow_array((void **)&q->items, &q->cap_items, q->n_items + 1, sizeof *q->items) != 0) {
        free(cipher);
        return -1;
    }
    q->items[q->n_items++] = (write_item_t){ NULL, NULL, cipher };
    q->bufs[0] = uv_buf_init((char *)cipher, (unsigned)len);
    q->n_bufs = 1;
    return 0;
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
    /* Plain connections write the callers' buffers as they are: zero copy. */
    start_write(c, &c->out);
}

/* Queue buffers for the next coalesced write: every frame produced in one loop turn
 * (a burst of sends, a resend of the whole pending queue) leaves in one writev. */
static int write_bufs(pc_conn_t *c, const uv_buf_t *bufs, unsigned n, pc_write_done_cb done,
                      void *ctx, uint8_t *owned)
{
    out_queue_t *q = &c->out;
    if (c->state == PC_CONN_CLOSED || c->state == PC_CONN_CONNECTING ||
        grow_array((void **)&q->bufs, &q->cap_bufs, q->n_bufs + n, sizeof *q->bufs) != 0 ||
        grow_array((void **)&q->items, &q->cap_items, q->n_items + 1, sizeof *q->items) != 0) {
        free(owned);
        return -1;
    }
    for (unsigned i = 0; i < n; i++)
        if (bufs[i].len > 0)
            q->bufs[q->n_bufs++] = bufs[i];
    q->items[q->n_items++] = (write_item_t){ done, ctx, owned };
    if (!uv_is_active((uv_handle_t *)&c->flusher))
        uv_idle_start(&c->flusher, flush_out);
    return 0;
}

int pc_conn_write(pc_conn_t *c, const uv_buf_t *bufs, unsigned n, pc_write_done_cb done,
                  void *ctx)
{
    return write_bufs(c, bufs, n, done, ctx, NULL);
}

int pc_conn_send_command(pc_conn_t *c, const Pulsar__Proto__BaseCommand *cmd)
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
    return write_bufs(c, &ub, 1, NULL, NULL, bytes);
}

/* ---- requests ---------------------------------------------------------------- */

void pc_conn_request(pc_conn_t *c, Pulsar__Proto__BaseCommand *cmd, uint64_t request_id,
                     pc_request_cb cb, void *ctx)
{
    if (c->state != PC_CONN_READY) {
        pc_set_detail("connection is not ready");
        cb(c, PULSARC_ERR_CONNECTION_CLOSED, NULL, ctx);
        return;
    }
    request_t *r = malloc(sizeof *r);
    if (!r) {
        pc_set_detail("out of memory");
        cb(c, PULSARC_ERR_NO_MEMORY, NULL, ctx);
        return;
    }
    r->id = request_id;
    r->deadline_ms = pc_mono_ms() + c->rt->limits.operation_timeout_ms;
    r->cb = cb;
    r->ctx = ctx;
    r->next = c->requests;
    c->requests = r;
    if (pc_conn_send_command(c, cmd) != 0 && c->state != PC_CONN_CLOSED)
        pc_conn_close(c, PULSARC_ERR_CONNECTION_CLOSED, "cannot write a request");
}

static request_t *take_request(pc_conn_t *c, uint64_t id)
{
    for (request_t **pp = &c->requests; *pp; pp = &(*pp)->next) {
        if ((*pp)->id == id) {
            request_t *r = *pp;
            *pp = r->next;
            return r;
        }
    }
    return NULL;
}

static void complete_request(pc_conn_t *c, uint64_t id, pulsarc_result res,
                             const Pulsar__Proto__BaseCommand *resp, const char *detail)
{
    request_t *r = take_request(c, id);
    if (!r) {
        PC_DEBUG(c->rt->log, "answer for unknown request %llu ignored",
                 (unsigned long long)id);
        return;
    }
    pc_set_detail(detail);
    r->cb(c, res, resp, r->ctx);
    free(r);
}

/* ---- listeners --------------------------------------------------------------- */

void pc_conn_add_listener(pc_conn_t *c, pc_conn_listener_t *l)
{
    l->next = c->listeners;
    c->listeners = l;
}

void pc_conn_remove_listener(pc_conn_t *c, pc_conn_listener_t *l)
{
    for (pc_conn_listener_t **pp = &c->listeners; *pp; pp = &(*pp)->next) {
        if (*pp == l) {
            *pp = l->next;
            l->next = NULL;
            return;
        }
    }
}

static pc_conn_listener_t *find_listener(pc_conn_t *c, uint64_t producer_id)
{
    for (pc_conn_listener_t *l = c->listeners; l; l = l->next)
        if (l->producer_id == producer_id)
            return l;
    return NULL;
}

/* ---- handshake and incoming commands ---------------------------------------- */

/* The provider failed: its detail (which names a source, never a secret) explains the
 * close. Copied first, since closing sets the detail from it. */
static void close_for_auth(pc_conn_t *c, pulsarc_result r)
{
    char detail[256];
    snprintf(detail, sizeof detail, "authentication: %s", pulsarc_last_error_detail());
    pc_conn_close(c, r, detail);
}

/* The provider has its data ready (or there is no provider). */
static void write_connect(pc_conn_t *c)
{
    Pulsar__Proto__CommandConnect connect = PULSAR__PROTO__COMMAND_CONNECT__INIT;
    Pulsar__Proto__BaseCommand cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    char proxy_to[300];
    pc_auth_data_t auth = { 0 };
    if (c->rt->auth) {
        /* Asked afresh on every connect: a token file or supplier may have a new token. */
        pulsarc_result r = pc_auth_initial_data(c->rt->auth, &auth);
        if (r != PULSARC_OK) {
            close_for_auth(c, r);
            return;
        }
        connect.auth_method_name = (char *)pc_auth_method(c->rt->auth);
        connect.has_auth_data = 1;
        connect.auth_data = (ProtobufCBinaryData){ auth.len, auth.bytes };
    }
    connect.client_version = (char *)PC_CLIENT_VERSION;
    connect.has_protocol_version = 1;
    connect.protocol_version = PC_PROTOCOL_VERSION;
    /* Without this flag the broker drops the connection when a token expires instead of
     * asking for a fresh one (AUTH_CHALLENGE), which answer_auth_challenge handles. */
    Pulsar__Proto__FeatureFlags features = PULSAR__PROTO__FEATURE_FLAGS__INIT;
    features.has_supports_auth_refresh = 1;
    features.supports_auth_refresh = 1;
    connect.feature_flags = &features;
    if (strcmp(c->logical.host, c->physical.host) || c->logical.port != c->physical.port) {
        /* Through a proxy: tell it which broker we mean. */
        snprintf(proxy_to, sizeof proxy_to, "%s:%d", c->logical.host, c->logical.port);
        connect.proxy_to_broker_url = proxy_to;
    }
    cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__CONNECT;
    cmd.connect = &connect;
    c->state = PC_CONN_HANDSHAKE;
    int rc = pc_conn_send_command(c, &cmd);
    pc_auth_data_free(&auth);
    if (rc != 0 && c->state != PC_CONN_CLOSED)
        pc_conn_close(c, PULSARC_ERR_CONNECT_FAILED, "cannot send CONNECT");
}

/* The broker re-checks credentials (a "refresh" challenge once the token it holds
 * expires, authenticationRefreshCheckSeconds) or runs a multi-step method: answer with
 * fresh data and keep the connection. */
static void write_auth_response(pc_conn_t *c)
{
    pc_auth_data_t data;
    pulsarc_result r = pc_auth_challenge_data(c->rt->auth, c->challenge, c->challenge_len, &data);
    free(c->challenge);
    c->challenge = NULL;
    c->challenge_len = 0;
    if (r != PULSARC_OK) {
        close_for_auth(c, r);
        return;
    }
    Pulsar__Proto__AuthData out = PULSAR__PROTO__AUTH_DATA__INIT;
    out.auth_method_name = (char *)pc_auth_method(c->rt->auth);
    out.has_auth_data = 1;
    out.auth_data = (ProtobufCBinaryData){ data.len, data.bytes };
    Pulsar__Proto__CommandAuthResponse resp = PULSAR__PROTO__COMMAND_AUTH_RESPONSE__INIT;
    resp.client_version = (char *)PC_CLIENT_VERSION;
    resp.response = &out;
    resp.has_protocol_version = 1;
    resp.protocol_version = PC_PROTOCOL_VERSION;
    Pulsar__Proto__BaseCommand cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__AUTH_RESPONSE;
    cmd.authresponse = &resp;
    int rc = pc_conn_send_command(c, &cmd);
    pc_auth_data_free(&data);
    if (rc != 0 && c->state != PC_CONN_CLOSED)
        pc_conn_close(c, PULSARC_ERR_CONNECTION_CLOSED, "cannot answer an auth challenge");
    else
        PC_DEBUG(c->rt->log, "answered an auth challenge from %s:%d (method %s)",
                 c->physical.host, c->physical.port, out.auth_method_name);
}

/* The provider's data is ready (or cannot be had): go on with what waited for it. A
 * closed connection cancelled its wait, so c is alive here. */
static void on_auth_ready(pc_auth_wait_t *w, pulsarc_result res)
{
    pc_conn_t *c = w->ctx;
    if (res != PULSARC_OK)
        close_for_auth(c, res);
    else if (c->auth_for_challenge)
        write_auth_response(c);
    else
        write_connect(c);
}

static void prepare_auth(pc_conn_t *c, bool for_challenge)
{
    c->auth_for_challenge = for_challenge;
    c->auth_started_ms = pc_mono_ms();
    pc_auth_prepare(c->rt->auth, &c->auth_wait, on_auth_ready, c);
}

/* CONNECT goes out once the provider has its data: an OAuth2 token may have to be
 * fetched first (on the loop, without blocking it). The connection timeout still bounds
 * the whole, since the state stays short of READY. */
static void send_connect(pc_conn_t *c)
{
    if (!c->rt->auth) {
        write_connect(c);
        return;
    }
    prepare_auth(c, false);
}

/* Without a provider there is nothing to answer. A challenge that comes while an answer
 * is being prepared replaces the earlier one: one answer, with the latest data. */
static void answer_auth_challenge(pc_conn_t *c, const Pulsar__Proto__CommandAuthChallenge *m)
{
    if (!c->rt->auth) {
        pc_conn_close(c, PULSARC_ERR_UNSUPPORTED,
                      "broker asked for authentication, but no authPlugin is configured");
        return;
    }
    const Pulsar__Proto__AuthData *in = m->challenge;
    size_t len = in && in->has_auth_data ? in->auth_data.len : 0;
    uint8_t *copy = len ? malloc(len) : NULL;
    if (len && !copy) {
        pc_conn_close(c, PULSARC_ERR_NO_MEMORY, "no memory for an auth challenge");
        return;
    }
    if (len)
        memcpy(copy, in->auth_data.data, len);
    free(c->challenge);
    c->challenge = copy;
    c->challenge_len = len;
    if (!c->auth_wait.pending)
        prepare_auth(c, true);
}

static void on_connected(pc_conn_t *c, const Pulsar__Proto__CommandConnected *m)
{
    if (c->state != PC_CONN_HANDSHAKE)
        return;
    c->server_protocol = m->has_protocol_version ? m->protocol_version : 0;
    if (m->has_max_message_size && m->max_message_size > 0)
        c->max_message_size = (uint32_t)m->max_message_size;
    pc_frame_reader_set_max(&c->reader, c->max_message_size + PC_FRAME_OVERHEAD_ALLOWANCE);
    c->state = PC_CONN_READY;
    PC_INFO(c->rt->log, "connected to %s:%d (server %s, protocol %d, max message %u)",
            c->physical.host, c->physical.port, m->server_version ? m->server_version : "?",
            c->server_protocol, c->max_message_size);
    ready_waiter_t *w = c->waiters;
    c->waiters = NULL;
    while (w && c->state == PC_CONN_READY) {
        ready_waiter_t *next = w->next;
        w->cb(c, PULSARC_OK, w->ctx);
        free(w);
        w = next;
    }
    /* A waiter closed the connection: the rest hear about it too. */
    while (w) {
        ready_waiter_t *next = w->next;
        w->cb(c, PULSARC_ERR_CONNECTION_CLOSED, w->ctx);
        free(w);
        w = next;
    }
}

static void send_simple(pc_conn_t *c, Pulsar__Proto__BaseCommand__Type type)
{
    Pulsar__Proto__BaseCommand cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    Pulsar__Proto__CommandPing ping = PULSAR__PROTO__COMMAND_PING__INIT;
    Pulsar__Proto__CommandPong pong = PULSAR__PROTO__COMMAND_PONG__INIT;
    cmd.type = type;
    if (type == PULSAR__PROTO__BASE_COMMAND__TYPE__PING)
        cmd.ping = &ping;
    else
        cmd.pong = &pong;
    pc_conn_send_command(c, &cmd);
}

static void dispatch(pc_conn_t *c, const Pulsar__Proto__BaseCommand *cmd)
{
    pc_conn_listener_t *l;
    switch (cmd->type) {
    case PULSAR__PROTO__BASE_COMMAND__TYPE__CONNECTED:
        if (cmd->connected)
            on_connected(c, cmd->connected);
        break;
    case PULSAR__PROTO__BASE_COMMAND__TYPE__PING:
        send_simple(c, PULSAR__PROTO__BASE_COMMAND__TYPE__PONG);
        break;
    case PULSAR__PROTO__BASE_COMMAND__TYPE__PONG:
        break;
    case PULSAR__PROTO__BASE_COMMAND__TYPE__ERROR:
        if (!cmd->error)
            break;
        if (c->state == PC_CONN_HANDSHAKE) {
            pc_conn_close(c, pc_result_from_server_error(cmd->error->error), cmd->error->message);
            break;
        }
        complete_request(c, cmd->error->request_id, pc_result_from_server_error(cmd->error->error),
                         cmd, cmd->error->message);
        break;
    case PULSAR__PROTO__BASE_COMMAND__TYPE__SUCCESS:
        if (cmd->success)
            complete_request(c, cmd->success->request_id, PULSARC_OK, cmd, NULL);
        break;
    case PULSAR__PROTO__BASE_COMMAND__TYPE__PRODUCER_SUCCESS:
        /* producer_ready=false means "queued for exclusive access"; the real answer follows. */
        if (cmd->producer_success &&
            !(cmd->producer_success->has_producer_ready && !cmd->producer_success->producer_ready))
            complete_request(c, cmd->producer_success->request_id, PULSARC_OK, cmd, NULL);
        break;
    case PULSAR__PROTO__BASE_COMMAND__TYPE__LOOKUP_RESPONSE:
        if (cmd->lookuptopicresponse)
            complete_request(c, cmd->lookuptopicresponse->request_id, PULSARC_OK, cmd, NULL);
        break;
    case PULSAR__PROTO__BASE_COMMAND__TYPE__PARTITIONED_METADATA_RESPONSE:
        if (cmd->partitionmetadataresponse)
            complete_request(c, cmd->partitionmetadataresponse->request_id, PULSARC_OK, cmd, NULL);
        break;
    case PULSAR__PROTO__BASE_COMMAND__TYPE__SEND_RECEIPT:
        if (cmd->send_receipt && (l = find_listener(c, cmd->send_receipt->producer_id)))
            l->on_receipt(l->ctx, cmd->send_receipt);
        break;
    case PULSAR__PROTO__BASE_COMMAND__TYPE__SEND_ERROR:
        if (cmd->send_error && (l = find_listener(c, cmd->send_error->producer_id)))
            l->on_send_error(l->ctx, cmd->send_error);
        break;
    case PULSAR__PROTO__BASE_COMMAND__TYPE__CLOSE_PRODUCER:
        if (cmd->close_producer && (l = find_listener(c, cmd->close_producer->producer_id))) {
            pc_conn_remove_listener(c, l);
            l->on_broker_close(l->ctx);
        }
        break;
    case PULSAR__PROTO__BASE_COMMAND__TYPE__TOPIC_MIGRATED:
        if (cmd->topicmigrated &&
            cmd->topicmigrated->resource_type ==
                PULSAR__PROTO__COMMAND_TOPIC_MIGRATED__RESOURCE_TYPE__Producer &&
            (l = find_listener(c, cmd->topicmigrated->resource_id))) {
            pc_conn_remove_listener(c, l);
            l->on_broker_close(l->ctx);
        }
        break;
    case PULSAR__PROTO__BASE_COMMAND__TYPE__AUTH_CHALLENGE:
        if (cmd->authchallenge)
            answer_auth_challenge(c, cmd->authchallenge);
        break;
    default:
        PC_DEBUG(c->rt->log, "ignoring command type %d", (int)cmd->type);
        break;
    }
}

static void process_frames(pc_conn_t *c)
{
    pc_frame_t f;
    pc_frame_status_t st;
    while (c->state != PC_CONN_CLOSED && (st = pc_frame_reader_next(&c->reader, &f)) == PC_FRAME_OK) {
        Pulsar__Proto__BaseCommand *cmd = pc_frame_unpack_command(&f);
        if (!cmd) {
            pc_conn_close(c, PULSARC_ERR_PROTOCOL, "command does not parse");
            return;
        }
        dispatch(c, cmd);
        pulsar__proto__base_command__free_unpacked(cmd, NULL);
    }
    if (c->state == PC_CONN_CLOSED)
        return;
    if (st == PC_FRAME_TOO_BIG)
        pc_conn_close(c, PULSARC_ERR_PROTOCOL, "frame larger than the maximum message size");
    else if (st == PC_FRAME_MALFORMED)
        pc_conn_close(c, PULSARC_ERR_PROTOCOL, "malformed frame");
    else if (st == PC_FRAME_NO_MEMORY)
        pc_conn_close(c, PULSARC_ERR_NO_MEMORY, "no memory for an incoming frame");
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    pc_conn_t *c = h->data;
    *buf = uv_buf_init((char *)c->rbuf, sizeof c->rbuf);
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
        send_connect(c);
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
    while (c->state != PC_CONN_CLOSED && (got = pc_tls_read(c->tls, c->rbuf, sizeof c->rbuf)) > 0)
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
    c->last_rx_ms = pc_mono_ms();
    if (c->tls)
        on_ciphertext(c, (const uint8_t *)buf->base, (size_t)n);
    else
        on_plaintext(c, (const uint8_t *)buf->base, (size_t)n);
}

/* ---- timer: connect timeout, request timeouts, keep-alive ------------------- */

static void on_tick(uv_timer_t *t)
{
    pc_conn_t *c = t->data;
    uint64_t now = pc_mono_ms();
    const pc_limits_t *limits = &c->rt->limits;
    if (c->state != PC_CONN_READY) {
        if (now - c->opened_ms >= limits->connection_timeout_ms)
            pc_conn_close(c, PULSARC_ERR_CONNECT_FAILED,
                          c->auth_wait.pending ? "connection timed out (waiting for the "
                                                 "authentication provider)"
                                               : "connection timed out");
        return;
    }
    if (c->auth_wait.pending && now - c->auth_started_ms >= limits->connection_timeout_ms) {
        pc_conn_close(c, PULSARC_ERR_AUTH_PROVIDER,
                      "the authentication provider did not answer a challenge in time");
        return;
    }
    for (request_t **pp = &c->requests; *pp;) {
        request_t *r = *pp;
        if (r->deadline_ms <= now) {
            *pp = r->next;
            pc_set_detail("no answer from the broker within operationTimeoutMs");
            r->cb(c, PULSARC_ERR_TIMEOUT, NULL, r->ctx);
            free(r);
            if (c->state == PC_CONN_CLOSED)
                return;
        } else {
            pp = &r->next;
        }
    }
    uint64_t ka = limits->keepalive_interval_ms;
    if (now - c->last_rx_ms >= 2 * ka) {
        pc_conn_close(c, PULSARC_ERR_CONNECTION_CLOSED, "broker did not answer keep-alive pings");
    } else if (now - c->last_rx_ms >= ka && now - c->last_ping_ms >= ka) {
        c->last_ping_ms = now;
        send_simple(c, PULSAR__PROTO__BASE_COMMAND__TYPE__PING);
    }
}

/* ---- connecting -------------------------------------------------------------- */

/* The socket is connected: start reading and open the session with CONNECT, after the
 * TLS handshake on a TLS client. The certificate must name the host we dialled (through
 * a proxy, the proxy). */
static void start_handshake(pc_conn_t *c)
{
    uv_tcp_nodelay(&c->tcp, 1);
    uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read);
    if (!c->rt->tls) {
        send_connect(c);
        return;
    }
    c->tls = pc_tls_session_new(c->rt->tls, c->physical.host);
    if (!c->tls) {
        pc_conn_close(c, PULSARC_ERR_NO_MEMORY, "no memory for a TLS session");
        return;
    }
    advance_tls_handshake(c);
}

static void on_tcp_connect(uv_connect_t *req, int status)
{
    pc_conn_t *c = req->data;
    c->busy_requests--;
    if (c->state == PC_CONN_CLOSED) {
        maybe_free(c);
        return;
    }
    if (status < 0) {
        char why[300];
        snprintf(why, sizeof why, "%s:%d: %s", c->physical.host, c->physical.port,
                 uv_strerror(status));
        pc_conn_close(c, PULSARC_ERR_CONNECT_FAILED, why);
        return;
    }
    start_handshake(c);
}

/* Prefer IPv4: "localhost" often lists ::1 first while brokers commonly bind 127.0.0.1. */
static const struct addrinfo *pick_address(const struct addrinfo *res)
{
    for (const struct addrinfo *ai = res; ai; ai = ai->ai_next)
        if (ai->ai_family == AF_INET)
            return ai;
    return res;
}

static void on_resolved(uv_getaddrinfo_t *req, int status, struct addrinfo *res)
{
    pc_conn_t *c = req->data;
    c->busy_requests--;
    if (c->state == PC_CONN_CLOSED || status < 0 || !res) {
        char why[300];
        snprintf(why, sizeof why, "cannot resolve %s: %s", c->physical.host,
                 status < 0 ? uv_strerror(status) : "no address");
        if (res)
            uv_freeaddrinfo(res);
        if (c->state == PC_CONN_CLOSED)
            maybe_free(c);
        else
            pc_conn_close(c, PULSARC_ERR_CONNECT_FAILED, why);
        return;
    }
    c->connect_req.data = c;
    int rc = uv_tcp_connect(&c->connect_req, &c->tcp, pick_address(res)->ai_addr, on_tcp_connect);
    uv_freeaddrinfo(res);
    if (rc != 0) {
        char why[300];
        snprintf(why, sizeof why, "%s:%d: %s", c->physical.host, c->physical.port, uv_strerror(rc));
        pc_conn_close(c, PULSARC_ERR_CONNECT_FAILED, why);
        return;
    }
    c->busy_requests++;
}

pc_conn_t *pc_conn_open(pc_runtime_t *rt, const pc_host_port_t *logical,
                        const pc_host_port_t *physical)
{
    pc_conn_t *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->rt = rt;
    c->logical = *logical;
    c->physical = *physical;
    c->state = PC_CONN_CONNECTING;
    c->max_message_size = PC_FRAME_DEFAULT_MAX_MESSAGE_SIZE;
    pc_frame_reader_init(&c->reader, PC_FRAME_DEFAULT_MAX_MESSAGE_SIZE + PC_FRAME_OVERHEAD_ALLOWANCE);
    c->opened_ms = c->last_rx_ms = c->last_ping_ms = pc_mono_ms();
    /* Three handles live for the whole connection: timer, write flusher, TCP socket. */
    c->live_handles = 3;
    uv_idle_init(rt->loop, &c->flusher);
    c->flusher.data = c;
    uv_timer_init(rt->loop, &c->timer);
    c->timer.data = c;
    uv_timer_start(&c->timer, on_tick, TICK_MS, TICK_MS);
    uv_tcp_init(rt->loop, &c->tcp);
    c->tcp.data = c;

    if (pc_conn_test_socket) {
        int fd = pc_conn_test_socket(physical);
        int rc = fd < 0 ? UV_ECONNREFUSED : uv_tcp_open(&c->tcp, fd);
        if (rc != 0) {
            if (fd >= 0)
                close(fd);
            pc_conn_close(c, PULSARC_ERR_CONNECT_FAILED, uv_strerror(rc));
            return c;
        }
        start_handshake(c);
        return c;
    }

    char port[16];
    snprintf(port, sizeof port, "%d", physical->port);
    struct addrinfo hints;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    c->gai.data = c;
    int rc = uv_getaddrinfo(rt->loop, &c->gai, on_resolved, physical->host, port, &hints);
    if (rc != 0) {
        pc_conn_close(c, PULSARC_ERR_CONNECT_FAILED, uv_strerror(rc));
        return c;
    }
    c->busy_requests++;
    return c;
}

void pc_conn_when_ready(pc_conn_t *c, pc_conn_ready_cb cb, void *ctx)
{
    if (c->state == PC_CONN_READY) {
        cb(c, PULSARC_OK, ctx);
        return;
    }
    if (c->state == PC_CONN_CLOSED) {
        pc_set_detail("connection closed");
        cb(c, PULSARC_ERR_CONNECT_FAILED, ctx);
        return;
    }
    ready_waiter_t *w = malloc(sizeof *w);
    if (!w) {
        cb(c, PULSARC_ERR_NO_MEMORY, ctx);
        return;
    }
    w->cb = cb;
    w->ctx = ctx;
    w->next = NULL;
    /* Keep arrival order. */
    ready_waiter_t **pp = &c->waiters;
    while (*pp)
        pp = &(*pp)->next;
    *pp = w;
}
