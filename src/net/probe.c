/* The TCP reachability probe (probe.h). Each host of the service URL is one attempt
 * (resolve, then connect); the probe is answered by the first success, by the last
 * failure, or by its timer. Its memory goes once every libuv request and handle it
 * started has called back. @locality loop thread. */
#include "net/probe.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct attempt {
    struct pc_probe *probe;
    pc_host_port_t host;
    uv_getaddrinfo_t gai;
    uv_tcp_t tcp;
    uv_connect_t connect;
    bool tcp_open; /* tcp is initialised: it must be closed */
} attempt_t;

struct pc_probe {
    pc_probe_cb cb; /* NULL once answered or cancelled */
    void *ctx;
    uint64_t timeout_ms;
    uv_timer_t timer;
    int failed;       /* attempts that ended without a connection */
    bool starting;    /* inside pc_probe_start: answers wait for the next loop turn */
    int busy;         /* requests and handles that will still call back */
    char detail[320]; /* the first failure */
    int n;
    attempt_t attempts[];
};

static void maybe_free(pc_probe_t *p)
{
    if (!p->cb && p->busy == 0)
        free(p);
}

static void on_closed(uv_handle_t *h)
{
    pc_probe_t *p = h->data;
    p->busy--;
    maybe_free(p);
}

static void close_tcp(attempt_t *a)
{
    if (a->tcp_open && !uv_is_closing((uv_handle_t *)&a->tcp))
        uv_close((uv_handle_t *)&a->tcp, on_closed);
}

/* Stop everything still running: the timer, the sockets (a pending connect calls back
 * with UV_ECANCELED), the resolutions not yet started. */
static void wind_down(pc_probe_t *p)
{
    if (!uv_is_closing((uv_handle_t *)&p->timer))
        uv_close((uv_handle_t *)&p->timer, on_closed);
    for (int i = 0; i < p->n; i++) {
        close_tcp(&p->attempts[i]);
        uv_cancel((uv_req_t *)&p->attempts[i].gai); /* harmless when not pending */
    }
}

static void answer(pc_probe_t *p, bool reachable)
{
    pc_probe_cb cb = p->cb;
    if (!cb)
        return;
    p->cb = NULL;
    wind_down(p);
    cb(reachable, reachable ? "" : p->detail, p->ctx);
    maybe_free(p);
}

static void attempt_failed(attempt_t *a, const char *why)
{
    pc_probe_t *p = a->probe;
    if (!p->detail[0])
        snprintf(p->detail, sizeof p->detail, "%s:%d: %s", a->host.host, a->host.port, why);
    close_tcp(a);
    if (++p->failed == p->n && !p->starting)
        answer(p, false);
}

static void on_connect(uv_connect_t *req, int status)
{
    attempt_t *a = req->data;
    if (!a->probe->cb)
        return; /* answered already; the socket is closing */
    if (status == 0)
        answer(a->probe, true);
    else
        attempt_failed(a, uv_strerror(status));
}

static void on_resolved(uv_getaddrinfo_t *req, int status, struct addrinfo *res)
{
    attempt_t *a = req->data;
    pc_probe_t *p = a->probe;
    p->busy--;
    if (!p->cb || status < 0 || !res) {
        if (p->cb)
            attempt_failed(a, status < 0 ? uv_strerror(status) : "no address");
        if (res)
            uv_freeaddrinfo(res);
        maybe_free(p);
        return;
    }
    uv_tcp_init(req->loop, &a->tcp);
    a->tcp.data = p;
    a->tcp_open = true;
    p->busy++;
    a->connect.data = a;
    int rc = uv_tcp_connect(&a->connect, &a->tcp, pc_preferred_address(res)->ai_addr, on_connect);
    uv_freeaddrinfo(res);
    if (rc != 0)
        attempt_failed(a, uv_strerror(rc));
}

static void on_timeout(uv_timer_t *t)
{
    pc_probe_t *p = t->data;
    snprintf(p->detail, sizeof p->detail, "no connection within %llu ms",
             (unsigned long long)p->timeout_ms);
    answer(p, false);
}

/* Every attempt failed while the probe was starting: answer now, on a later turn, so that
 * the caller has its pointer before the callback runs. */
static void on_failed_at_start(uv_timer_t *t)
{
    answer(t->data, false);
}

pc_probe_t *pc_probe_start(uv_loop_t *loop, const pc_service_url_t *url, uint64_t timeout_ms,
                           pc_probe_cb cb, void *ctx)
{
    int n = url->n_hosts > 0 ? url->n_hosts : 0;
    pc_probe_t *p = calloc(1, sizeof *p + (size_t)n * sizeof(attempt_t));
    if (!p)
        return NULL;
    p->cb = cb;
    p->ctx = ctx;
    p->timeout_ms = timeout_ms;
    p->n = n;
    uv_timer_init(loop, &p->timer);
    p->timer.data = p;
    p->busy = 1;
    p->starting = true;
    struct addrinfo hints;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    for (int i = 0; i < n; i++) {
        attempt_t *a = &p->attempts[i];
        a->probe = p;
        a->host = url->hosts[i];
        a->gai.data = a;
        char port[16];
        snprintf(port, sizeof port, "%d", a->host.port);
        int rc = uv_getaddrinfo(loop, &a->gai, on_resolved, a->host.host, port, &hints);
        if (rc != 0)
            attempt_failed(a, uv_strerror(rc));
        else
            p->busy++;
    }
    p->starting = false;
    if (n == 0)
        snprintf(p->detail, sizeof p->detail, "the service URL has no host");
    if (p->failed == n)
        uv_timer_start(&p->timer, on_failed_at_start, 0, 0);
    else
        uv_timer_start(&p->timer, on_timeout, timeout_ms, 0);
    return p;
}

void pc_probe_cancel(pc_probe_t *p)
{
    if (!p || !p->cb)
        return;
    p->cb = NULL;
    wind_down(p);
    maybe_free(p);
}
