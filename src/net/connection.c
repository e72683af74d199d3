/* One connection's lifecycle: open (resolve, TCP connect), close, free, accessors, the
 * owner hook, ready waiters and listeners. The rest is in the files connection_internal.h
 * lists. @locality loop thread. */
#include "net/connection_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/error.h"

#define TICK_MS 100

/* ---- lifetime ---------------------------------------------------------------- */

void pc_conn_maybe_free(pc_conn_t *c)
{
    if (c->state != PC_CONN_CLOSED || c->live_handles > 0 || c->busy_requests > 0)
        return;
    pc_frame_reader_free(&c->reader);
    free(c->spare.bufs);
    free(c->spare.items);
    free(c->rbuf);
    pc_tls_session_free(c->tls);
    free(c->challenge);
    pc_listener_index_clear(&c->listener_index);
    free(c);
}

static void on_handle_closed(uv_handle_t *h)
{
    pc_conn_t *c = h->data;
    c->live_handles--;
    pc_conn_maybe_free(c);
}

pc_conn_state_t pc_conn_state(const pc_conn_t *c)
{
    return c->state;
}
uint32_t pc_conn_max_message_size(const pc_conn_t *c)
{
    return c->max_message_size;
}
const pc_host_port_t *pc_conn_logical(const pc_conn_t *c)
{
    return &c->logical;
}
const pc_host_port_t *pc_conn_physical(const pc_conn_t *c)
{
    return &c->physical;
}
uint64_t pc_conn_new_request_id(pc_conn_t *c)
{
    return c->rt->next_request_id++;
}

void pc_conn_set_owner(pc_conn_t *c, pc_conn_closed_cb on_closed, void *ctx)
{
    c->on_closed = on_closed;
    c->owner = ctx;
}

void pc_conn_close(pc_conn_t *c, pulsarc_result why, const char *detail)
{
    if (c->state == PC_CONN_CLOSED)
        return;
    PC_INFO(c->rt->log, "connection to %s:%d closed: %s%s%s", c->physical.host, c->physical.port,
            pulsarc_strerror(why), detail ? ": " : "", detail ? detail : "");
    c->state = PC_CONN_CLOSED;
    if (c->auth) {
        pc_auth_cancel(c->auth, &c->auth_wait); /* no-op unless one is pending */
        pc_auth_session_end(c->auth, &c->auth_session);
    }
    if (c->on_closed)
        c->on_closed(c, c->owner);

    /* Hold a busy count so that callbacks below cannot free the struct under us. */
    c->busy_requests++;
    uv_close((uv_handle_t *)&c->timer, on_handle_closed);
    uv_close((uv_handle_t *)&c->flusher, on_handle_closed);
    uv_close((uv_handle_t *)&c->tcp, on_handle_closed);
    pc_conn_finish_items(&c->out, UV_ECANCELED); /* queued, never written */
    pc_conn_tls_drop_plain(c);                   /* the same, waiting for encryption */
    uv_cancel((uv_req_t *)&c->gai);              /* harmless when no lookup is running */

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
    c->requests_tail = &c->requests;
    while (r) {
        request_t *next = r->next;
        pc_set_detail(detail);
        r->cb(c, why, NULL, r->ctx);
        free(r);
        r = next;
    }
    pc_conn_listener_t *l = c->listeners;
    c->listeners = NULL;
    pc_listener_index_clear(&c->listener_index);
    c->listener_index_incomplete = false;
    while (l) {
        pc_conn_listener_t *next = l->next;
        l->next = NULL;
        pc_set_detail(detail);
        l->on_disconnect(l->ctx, why);
        l = next;
    }
    c->busy_requests--;
    pc_conn_maybe_free(c);
}

/* ---- listeners --------------------------------------------------------------- */

void pc_conn_add_listener(pc_conn_t *c, pc_conn_listener_t *l)
{
    l->next = c->listeners;
    c->listeners = l;
    if (pc_listener_index_add(&c->listener_index, l->producer_id, l) != 0)
        c->listener_index_incomplete = true;
    pc_conn_update_ref(c);
}

void pc_conn_remove_listener(pc_conn_t *c, pc_conn_listener_t *l)
{
    for (pc_conn_listener_t **pp = &c->listeners; *pp; pp = &(*pp)->next) {
        if (*pp == l) {
            *pp = l->next;
            l->next = NULL;
            pc_listener_index_remove(&c->listener_index, l->producer_id);
            pc_conn_update_ref(c);
            return;
        }
    }
}

pc_conn_listener_t *pc_conn_find_listener(const pc_conn_t *c, uint64_t producer_id)
{
    /* The newest listener first: a connection of one producer, the usual case, needs no
     * hashing. */
    if (c->listeners && c->listeners->producer_id == producer_id)
        return c->listeners;
    if (!c->listener_index_incomplete)
        return pc_listener_index_find(&c->listener_index, producer_id);
    for (pc_conn_listener_t *l = c->listeners; l; l = l->next)
        if (l->producer_id == producer_id)
            return l;
    return NULL;
}

void pc_conn_update_ref(pc_conn_t *c)
{
    if (c->state == PC_CONN_CLOSED)
        return;
    bool idle = c->state == PC_CONN_READY && !c->listeners && !c->requests && !c->waiters;
    if (idle) {
        uv_unref((uv_handle_t *)&c->tcp);
        uv_unref((uv_handle_t *)&c->timer);
    } else {
        uv_ref((uv_handle_t *)&c->tcp);
        uv_ref((uv_handle_t *)&c->timer);
    }
}

/* ---- connecting -------------------------------------------------------------- */

/* Close for a failed resolve or connect, naming the address dialled (and the broker
 * behind it, through an SNI proxy). */
static void connect_failed(pc_conn_t *c, const char *why)
{
    char detail[700];
    if (c->dial == &c->physical)
        snprintf(detail, sizeof detail, "%s:%d: %s", c->dial->host, c->dial->port, why);
    else
        snprintf(detail, sizeof detail, "SNI proxy %s:%d (for %s:%d): %s", c->dial->host,
                 c->dial->port, c->physical.host, c->physical.port, why);
    pc_conn_close(c, PULSARC_ERR_CONNECT_FAILED, detail);
}

static void on_tcp_connect(uv_connect_t *req, int status)
{
    pc_conn_t *c = req->data;
    c->busy_requests--;
    if (c->state == PC_CONN_CLOSED) {
        pc_conn_maybe_free(c);
        return;
    }
    if (status < 0) {
        connect_failed(c, uv_strerror(status));
        return;
    }
    pc_conn_start_handshake(c);
}

static void on_resolved(uv_getaddrinfo_t *req, int status, struct addrinfo *res)
{
    pc_conn_t *c = req->data;
    c->busy_requests--;
    if (c->state == PC_CONN_CLOSED || status < 0 || !res) {
        char why[300];
        snprintf(why, sizeof why, "cannot resolve %s: %s", c->dial->host,
                 status < 0 ? uv_strerror(status) : "no address");
        if (res)
            uv_freeaddrinfo(res);
        if (c->state == PC_CONN_CLOSED)
            pc_conn_maybe_free(c);
        else
            connect_failed(c, why);
        return;
    }
    c->connect_req.data = c;
    int rc = uv_tcp_connect(&c->connect_req, &c->tcp, pc_preferred_address(res)->ai_addr,
                            on_tcp_connect);
    uv_freeaddrinfo(res);
    if (rc != 0) {
        connect_failed(c, uv_strerror(rc));
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
    c->requests_tail = &c->requests;
    c->rt = rt;
    c->auth = rt->auth;
    c->tls_ctx = rt->tls;
    c->logical = *logical;
    c->physical = *physical;
    /* Through an SNI proxy every connection opens TCP to the proxy; TLS then names the
     * broker (physical) as SNI and verifies its certificate against that name, as the
     * Java client does (conn_io.c starts the session with physical's host). */
    c->dial = rt->net.sni_proxy ? &rt->net.sni_proxy_addr : &c->physical;
    c->state = PC_CONN_CONNECTING;
    c->max_message_size = PC_FRAME_DEFAULT_MAX_MESSAGE_SIZE;
    pc_frame_reader_init(&c->reader,
                         PC_FRAME_DEFAULT_MAX_MESSAGE_SIZE + PC_FRAME_OVERHEAD_ALLOWANCE);
    c->opened_ms = c->last_rx_ms = c->last_ping_ms = pc_mono_ms();
    /* Three handles live for the whole connection: timer, write flusher, TCP socket. */
    c->live_handles = 3;
    uv_idle_init(rt->loop, &c->flusher);
    c->flusher.data = c;
    uv_timer_init(rt->loop, &c->timer);
    c->timer.data = c;
    uv_timer_start(&c->timer, pc_conn_on_tick, TICK_MS, TICK_MS);
    uv_tcp_init(rt->loop, &c->tcp);
    c->tcp.data = c;

    if (rt->transport && rt->transport->open_socket) {
        int fd = rt->transport->open_socket(rt->transport->ctx, c->dial);
        int rc = fd < 0 ? UV_ECONNREFUSED : uv_tcp_open(&c->tcp, fd);
        if (rc != 0) {
            if (fd >= 0)
                close(fd);
            pc_conn_close(c, PULSARC_ERR_CONNECT_FAILED, uv_strerror(rc));
            return c;
        }
        pc_conn_start_handshake(c);
        return c;
    }

    char port[16];
    snprintf(port, sizeof port, "%d", c->dial->port);
    struct addrinfo hints;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    c->gai.data = c;
    int rc = uv_getaddrinfo(rt->loop, &c->gai, on_resolved, c->dial->host, port, &hints);
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
