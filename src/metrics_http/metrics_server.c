/* A /metrics endpoint on a libuv loop (pulsarc_uv_metrics_serve in pulsarc/pulsarc_uv.h):
 * a listening TCP handle and one small state per scrape. Each connection gets one answer
 * and is closed: the request head is read into a fixed buffer (at most
 * PC_METRICS_HTTP_MAX_REQUEST bytes) and checked as it grows (http_request.c); garbage,
 * an oversized head and a client that stays silent for IDLE_MS are answered (or not) and
 * closed. Uses the public API only.
 * @locality the thread that runs loop (every function), except as pulsarc_uv.h says. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pulsarc/pulsarc_uv.h>

#include "common/error.h"
#include "metrics_http/http_request.h"

#define IDLE_MS 10000  /* a scrape's request must arrive within this */
#define MAX_SCRAPES 16 /* connections at once; more are closed at once */
#define LINGER_MS 2000 /* after the answer: the client's last bytes are read and dropped */

typedef struct scrape scrape;

struct pulsarc_uv_metrics_server {
    uv_tcp_t listener;
    pulsarc_client_t *client;
    scrape *scrapes; /* open connections */
    int open;        /* scrapes plus the listener, not yet closed */
    int port;
    bool closing;
    void (*done)(void *ctx);
    void *done_ctx;
};

struct scrape {
    uv_tcp_t tcp;
    uv_timer_t idle;
    uv_write_t write;
    uv_shutdown_t shutdown;
    pulsarc_uv_metrics_server_t *server;
    scrape *next, *prev;
    int handles; /* of tcp and idle, not yet closed */
    bool answered;
    char *body; /* the metrics text being written */
    char head[256];
    size_t len;
    char buf[PC_METRICS_HTTP_MAX_REQUEST];
};

static void on_idle(uv_timer_t *t);
static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *out);
static void on_read(uv_stream_t *stream, ssize_t n, const uv_buf_t *buf);

static void server_release(pulsarc_uv_metrics_server_t *s)
{
    if (--s->open > 0)
        return;
    void (*done)(void *) = s->done;
    void *ctx = s->done_ctx;
    free(s);
    if (done)
        done(ctx);
}

static void scrape_handle_closed(uv_handle_t *h)
{
    scrape *sc = h->data;
    if (--sc->handles > 0)
        return;
    pulsarc_uv_metrics_server_t *s = sc->server;
    pulsarc_metrics_text_free(sc->body);
    free(sc);
    server_release(s);
}

static void scrape_close(scrape *sc)
{
    if (uv_is_closing((uv_handle_t *)&sc->tcp))
        return;
    pulsarc_uv_metrics_server_t *s = sc->server;
    if (sc->prev)
        sc->prev->next = sc->next;
    else
        s->scrapes = sc->next;
    if (sc->next)
        sc->next->prev = sc->prev;
    uv_close((uv_handle_t *)&sc->tcp, scrape_handle_closed);
    uv_close((uv_handle_t *)&sc->idle, scrape_handle_closed);
}

static void on_shutdown(uv_shutdown_t *req, int status)
{
    if (status != 0)
        scrape_close(req->data);
}

/* The answer is out: send FIN, then read what the client still sends (a head cut short by
 * the limit, say) and drop it until it closes or LINGER_MS pass. Closing with unread
 * bytes would reset the connection, and the client could lose the answer with it. */
static void on_written(uv_write_t *w, int status)
{
    scrape *sc = w->data;
    sc->shutdown.data = sc;
    if (status != 0 || uv_shutdown(&sc->shutdown, (uv_stream_t *)&sc->tcp, on_shutdown) != 0) {
        scrape_close(sc);
        return;
    }
    sc->len = 0;
    uv_timer_start(&sc->idle, on_idle, LINGER_MS, 0);
    if (uv_read_start((uv_stream_t *)&sc->tcp, on_alloc, on_read) != 0)
        scrape_close(sc);
}

/* The one answer; the connection closes once it is written. */
static void answer(scrape *sc, const char *status, const char *body, size_t len)
{
    sc->answered = true;
    uv_read_stop((uv_stream_t *)&sc->tcp);
    int n = snprintf(sc->head, sizeof sc->head,
                     "HTTP/1.1 %s\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"
                     "Content-Length: %zu\r\nConnection: close\r\n\r\n",
                     status, len);
    uv_buf_t bufs[2] = { uv_buf_init(sc->head, (unsigned)n),
                         uv_buf_init((char *)body, (unsigned)len) };
    sc->write.data = sc;
    if (uv_write(&sc->write, (uv_stream_t *)&sc->tcp, bufs, len ? 2 : 1, on_written) != 0)
        scrape_close(sc);
}

static void respond(scrape *sc, pc_http_verdict v)
{
    static const char not_found[] = "only /metrics is served\n";
    static const char bad_method[] = "only GET is served\n";
    static const char bad_request[] = "bad request\n";
    switch (v) {
    case PC_HTTP_GET_METRICS: {
        size_t len = 0;
        if (pulsarc_client_metrics_text(sc->server->client, &sc->body, &len) != PULSARC_OK) {
            static const char failed[] = "statistics unavailable\n";
            answer(sc, "503 Service Unavailable", failed, sizeof failed - 1);
            return;
        }
        answer(sc, "200 OK", sc->body, len);
        return;
    }
    case PC_HTTP_NOT_FOUND:
        answer(sc, "404 Not Found", not_found, sizeof not_found - 1);
        return;
    case PC_HTTP_BAD_METHOD:
        answer(sc, "405 Method Not Allowed", bad_method, sizeof bad_method - 1);
        return;
    case PC_HTTP_BAD_REQUEST:
    case PC_HTTP_INCOMPLETE:
        answer(sc, "400 Bad Request", bad_request, sizeof bad_request - 1);
        return;
    }
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *out)
{
    (void)suggested;
    scrape *sc = h->data;
    *out = uv_buf_init(sc->buf + sc->len, (unsigned)(sizeof sc->buf - sc->len));
}

static void on_read(uv_stream_t *stream, ssize_t n, const uv_buf_t *buf)
{
    (void)buf;
    scrape *sc = stream->data;
    if (n < 0) { /* the client went away, or closed before its request was complete */
        scrape_close(sc);
        return;
    }
    if (n == 0)
        return;
    if (sc->answered) { /* lingering: dropped */
        sc->len = 0;
        return;
    }
    sc->len += (size_t)n;
    pc_http_verdict v = pc_http_request_check(sc->buf, sc->len);
    if (v == PC_HTTP_INCOMPLETE && sc->len < sizeof sc->buf)
        return;
    respond(sc, v);
}

static void on_idle(uv_timer_t *t)
{
    scrape_close(t->data); /* silent too long: no answer */
}

static void on_connection(uv_stream_t *listener, int status)
{
    pulsarc_uv_metrics_server_t *s = listener->data;
    if (status < 0)
        return;
    scrape *sc = calloc(1, sizeof *sc);
    if (!sc)
        return; /* out of memory: it waits in the backlog */
    sc->server = s;
    sc->handles = 2;
    uv_tcp_init(listener->loop, &sc->tcp);
    uv_timer_init(listener->loop, &sc->idle);
    sc->tcp.data = sc->idle.data = sc;
    s->open++;
    sc->next = s->scrapes;
    if (s->scrapes)
        s->scrapes->prev = sc;
    s->scrapes = sc;
    int count = 0;
    for (scrape *o = s->scrapes; o; o = o->next)
        count++;
    if (uv_accept(listener, (uv_stream_t *)&sc->tcp) != 0 || count > MAX_SCRAPES ||
        uv_read_start((uv_stream_t *)&sc->tcp, on_alloc, on_read) != 0) {
        scrape_close(sc);
        return;
    }
    uv_timer_start(&sc->idle, on_idle, IDLE_MS, 0);
}

static void listener_closed(uv_handle_t *h)
{
    server_release(h->data);
}

pulsarc_result pulsarc_uv_metrics_serve(uv_loop_t *loop, pulsarc_client_t *client, const char *host,
                                        int port, pulsarc_uv_metrics_server_t **out)
{
    if (out)
        *out = NULL;
    if (!loop || !client || !host || !out || port < 0 || port > 65535)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT,
                       "loop, client, host and out must not be NULL; port 0..65535");
    struct sockaddr_storage addr;
    if (uv_ip4_addr(host, port, (struct sockaddr_in *)&addr) != 0 &&
        uv_ip6_addr(host, port, (struct sockaddr_in6 *)&addr) != 0)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT, "not an IPv4 or IPv6 address: '%s'", host);
    pulsarc_uv_metrics_server_t *s = calloc(1, sizeof *s);
    if (!s)
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    s->client = client;
    s->open = 1;
    uv_tcp_init(loop, &s->listener);
    s->listener.data = s;
    int rc = uv_tcp_bind(&s->listener, (const struct sockaddr *)&addr, 0);
    if (rc == 0)
        rc = uv_listen((uv_stream_t *)&s->listener, 64, on_connection);
    struct sockaddr_storage bound;
    int blen = sizeof bound;
    if (rc == 0)
        rc = uv_tcp_getsockname(&s->listener, (struct sockaddr *)&bound, &blen);
    if (rc != 0) {
        uv_close((uv_handle_t *)&s->listener, listener_closed);
        return pc_fail(PULSARC_ERR_CONNECT_FAILED, "cannot listen on %s:%d: %s", host, port,
                       uv_strerror(rc));
    }
    s->port = ntohs(bound.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&bound)->sin6_port
                                                : ((struct sockaddr_in *)&bound)->sin_port);
    *out = s;
    return PULSARC_OK;
}

int pulsarc_uv_metrics_port(const pulsarc_uv_metrics_server_t *s)
{
    return s ? s->port : -1;
}

void pulsarc_uv_metrics_close(pulsarc_uv_metrics_server_t *s, void (*done)(void *ctx), void *ctx)
{
    if (!s || s->closing)
        return;
    s->closing = true;
    s->done = done;
    s->done_ctx = ctx;
    while (s->scrapes)
        scrape_close(s->scrapes);
    uv_close((uv_handle_t *)&s->listener, listener_closed);
}
