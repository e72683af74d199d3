/*
 * uv_echo_producer — pulsarc on the application's own libuv loop: a TCP echo server and a
 * timer that also publish, all on one thread, with no thread of pulsarc's.
 *
 *   uv_echo_producer [SERVICE_URL [TOPIC [PORT]]]
 *   (defaults: pulsar://localhost:6650, persistent://public/default/pulsarc-echo, 7000;
 *   PORT 0 takes any free port)
 *
 * Every line a TCP client sends (try: nc 127.0.0.1 7000) is echoed back and published; a
 * timer publishes "tick N" every second. SIGINT or SIGTERM shuts it down: the server and
 * the timer stop, the producer closes (sending what is pending first), the client closes,
 * and the loop ends with nothing left on it. The last line it prints says what was
 * published.
 *
 * It shows:
 *   - pulsarc_client_new_on_loop and pulsarc_client_create_producer_async;
 *   - pulsarc_producer_send_async from the application's own callbacks, where it never
 *     blocks: a full queue returns PULSARC_ERR_QUEUE_FULL at once (the memory limit:
 *     PULSARC_ERR_MEMORY_LIMIT), whatever blockIfQueueFull says. Here the line is then
 *     held, in order, and the room callback (pulsarc_producer_config_set_room_cb) sends
 *     what is held once receipts have made room; when too much is held, the peer is told
 *     its line was not published;
 *   - send callbacks on the same thread as the server's: plain counters, no locks;
 *   - the shutdown: pulsarc_producer_close_async, then pulsarc_client_close_async, then
 *     pulsarc_client_destroy in its callback; uv_loop_close then returns 0.
 *
 * Build: cc uv_echo_producer.c $(pkg-config --cflags --libs pulsarc-uv)
 * (pulsarc-uv is pulsarc plus libuv, which this program calls itself; with CMake, link
 * pulsarc::pulsarc_uv). It exits 1 when the producer could not be created or a message
 * failed.
 */
/* uv.h needs POSIX's types (pthread_rwlock_t), which strict C11 (-std=c11) hides. */
#define _POSIX_C_SOURCE 200809L

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uv.h>

#include <pulsarc/pulsarc.h>
#include <pulsarc/pulsarc_uv.h>

#define MAX_LINE 1024
#define MAX_HELD 64 /* lines refused for want of room, sent by the room callback */

struct conn;

/* Everything runs on the loop's thread, pulsarc's callbacks included: no atomics. */
struct app {
    uv_loop_t loop;
    uv_tcp_t server;
    uv_timer_t ticker;
    uv_signal_t sigint, sigterm;
    int port;
    pulsarc_client_t *client;
    pulsarc_producer_t *producer;
    pulsarc_message_t *msg; /* one builder, reused: a send copies the payload */
    struct conn *conns;     /* open connections, closed at shutdown */
    bool serving;           /* server and ticker are initialised */
    bool stopping;
    bool not_created; /* the producer could not be created */
    long ticks, accepted, published, failed, refused;
    struct held {
        size_t len;
        char data[MAX_LINE];
    } held[MAX_HELD]; /* a ring: held[first] is the oldest */
    size_t first, n_held;
};

struct conn {
    uv_tcp_t tcp;
    struct app *app;
    struct conn *next, **prev;
    char line[MAX_LINE];
    size_t len;
};

/* ---- publishing ------------------------------------------------------------------------ */

static void on_sent(pulsarc_producer_t *producer, pulsarc_result res,
                    const pulsarc_message_id_t *id, void *ctx)
{
    (void)producer;
    (void)id;
    struct app *a = ctx;
    if (res == PULSARC_OK) {
        a->published++;
        return;
    }
    a->failed++;
    const char *description = pulsarc_strerror(res);
    fprintf(stderr, "send failed: %s: %s\n", description, pulsarc_last_error_detail());
}

/* Returns false when the message was not accepted. */
static bool publish(struct app *a, const char *data, size_t len)
{
    if (!a->producer || a->stopping)
        return false;
    pulsarc_message_set_payload(a->msg, data, len);
    pulsarc_result res = pulsarc_producer_send_async(a->producer, a->msg, on_sent, a);
    if (res == PULSARC_OK)
        return true;
    /* On the loop's thread a send never waits for room: the queue (maxPendingMessages) or
     * the memory limit is full right now. The receipts that make room arrive on this very
     * loop, so waiting here could never end. */
    a->refused++;
    if (res != PULSARC_ERR_QUEUE_FULL && res != PULSARC_ERR_MEMORY_LIMIT) {
        const char *description = pulsarc_strerror(res);
        fprintf(stderr, "send refused: %s: %s\n", description, pulsarc_last_error_detail());
    }
    return false;
}

/* A line to publish: at once, or after the lines held before it. False when it was
 * neither published nor held (too many held already). */
static bool publish_line(struct app *a, const char *data, size_t len)
{
    if (a->n_held == 0 && publish(a, data, len))
        return true;
    if (a->n_held == MAX_HELD || !a->producer || a->stopping)
        return false;
    struct held *h = &a->held[(a->first + a->n_held++) % MAX_HELD];
    memcpy(h->data, data, len);
    h->len = len;
    return true;
}

/* The room callback: a send here was refused for want of room, and receipts have made
 * some. Send the held lines, oldest first, until one is refused again (which arms this
 * callback again). */
static void on_room(pulsarc_producer_t *producer, void *ctx)
{
    (void)producer;
    struct app *a = ctx;
    while (a->n_held > 0) {
        struct held *h = &a->held[a->first];
        if (!publish(a, h->data, h->len))
            return;
        a->first = (a->first + 1) % MAX_HELD;
        a->n_held--;
    }
}

/* ---- the echo server ------------------------------------------------------------------- */

static void free_conn(uv_handle_t *h)
{
    free(h->data);
}

static void close_conn(struct conn *c)
{
    if (uv_is_closing((uv_handle_t *)&c->tcp))
        return;
    *c->prev = c->next;
    if (c->next)
        c->next->prev = c->prev;
    uv_close((uv_handle_t *)&c->tcp, free_conn);
}

static void on_written(uv_write_t *req, int status)
{
    (void)status; /* a peer that went away is noticed by the read side */
    free(req);
}

static void reply(struct conn *c, const char *data, size_t len)
{
    uv_write_t *req = malloc(sizeof *req + len);
    if (!req)
        return;
    char *copy = (char *)(req + 1);
    memcpy(copy, data, len);
    uv_buf_t buf = uv_buf_init(copy, (unsigned)len);
    if (uv_write(req, (uv_stream_t *)&c->tcp, &buf, 1, on_written) != 0)
        free(req);
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    (void)h;
    buf->base = malloc(suggested);
    buf->len = buf->base ? suggested : 0;
}

/* A complete line (or MAX_LINE bytes of one): publish it, tell the peer if it was not. */
static void line_done(struct conn *c)
{
    if (!publish_line(c->app, c->line, c->len)) {
        static const char busy[] = "(not published: the producer's queue is full)\n";
        reply(c, busy, sizeof busy - 1);
    }
    c->len = 0;
}

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
    struct conn *c = s->data;
    if (n < 0) {
        close_conn(c);
    } else if (n > 0) {
        reply(c, buf->base, (size_t)n); /* the echo */
        for (ssize_t i = 0; i < n; i++) {
            char ch = buf->base[i];
            if (ch == '\n') {
                line_done(c);
                continue;
            }
            c->line[c->len++] = ch;
            if (c->len == MAX_LINE)
                line_done(c);
        }
    }
    free(buf->base);
}

static void on_connection(uv_stream_t *server, int status)
{
    struct app *a = server->data;
    if (status < 0)
        return;
    struct conn *c = calloc(1, sizeof *c);
    if (!c)
        return;
    c->app = a;
    uv_tcp_init(&a->loop, &c->tcp);
    c->tcp.data = c;
    c->next = a->conns;
    c->prev = &a->conns;
    if (a->conns)
        a->conns->prev = &c->next;
    a->conns = c;
    if (uv_accept(server, (uv_stream_t *)&c->tcp) != 0) {
        close_conn(c);
        return;
    }
    a->accepted++;
    uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read);
}

/* ---- the timer ------------------------------------------------------------------------- */

static void on_tick(uv_timer_t *t)
{
    struct app *a = t->data;
    char text[32];
    int len = snprintf(text, sizeof text, "tick %ld", a->ticks);
    /* A tick is not held: the next one comes in a second. */
    if (a->n_held == 0 && publish(a, text, (size_t)len))
        a->ticks++;
}

/* ---- start and shutdown ---------------------------------------------------------------- */

static void on_client_closed(pulsarc_client_t *client, pulsarc_result res, void *ctx)
{
    (void)res;
    struct app *a = ctx;
    /* Nothing of pulsarc's is left on the loop now; the client's memory goes at once. */
    pulsarc_client_destroy(client);
    a->client = NULL;
}

static void on_producer_closed(pulsarc_producer_t *producer, pulsarc_result res, void *ctx)
{
    struct app *a = ctx;
    if (res != PULSARC_OK) {
        const char *description = pulsarc_strerror(res);
        fprintf(stderr, "producer close: %s: %s\n", description, pulsarc_last_error_detail());
    }
    pulsarc_producer_free(producer);
    a->producer = NULL;
    pulsarc_client_close_async(a->client, on_client_closed, a);
}

static void shutdown_app(struct app *a)
{
    if (a->stopping)
        return;
    a->stopping = true;
    uv_close((uv_handle_t *)&a->sigint, NULL);
    uv_close((uv_handle_t *)&a->sigterm, NULL);
    if (a->serving) {
        uv_close((uv_handle_t *)&a->server, NULL);
        uv_close((uv_handle_t *)&a->ticker, NULL);
    }
    while (a->conns)
        close_conn(a->conns);
    /* The producer's close sends what is pending first (the client's close alone would
     * fail it), then the client closes. */
    if (a->producer)
        pulsarc_producer_close_async(a->producer, on_producer_closed, a);
    else
        pulsarc_client_close_async(a->client, on_client_closed, a);
}

static void on_signal(uv_signal_t *s, int signum)
{
    (void)signum;
    shutdown_app(s->data);
}

static void on_created(pulsarc_client_t *client, pulsarc_result res, pulsarc_producer_t *producer,
                       void *ctx)
{
    (void)client;
    struct app *a = ctx;
    if (res != PULSARC_OK) {
        const char *description = pulsarc_strerror(res);
        fprintf(stderr, "create_producer: %s: %s\n", description, pulsarc_last_error_detail());
        a->not_created = true;
        shutdown_app(a);
        return;
    }
    a->producer = producer;
    struct sockaddr_in addr;
    uv_ip4_addr("127.0.0.1", a->port, &addr);
    uv_tcp_init(&a->loop, &a->server);
    a->server.data = a;
    uv_timer_init(&a->loop, &a->ticker);
    a->ticker.data = a;
    a->serving = true;
    int rc = uv_tcp_bind(&a->server, (const struct sockaddr *)&addr, 0);
    if (rc == 0)
        rc = uv_listen((uv_stream_t *)&a->server, 16, on_connection);
    if (rc != 0) {
        fprintf(stderr, "listen on 127.0.0.1:%d: %s\n", a->port, uv_strerror(rc));
        shutdown_app(a);
        return;
    }
    int len = sizeof addr;
    uv_tcp_getsockname(&a->server, (struct sockaddr *)&addr, &len);
    a->port = ntohs(addr.sin_port);
    uv_timer_start(&a->ticker, on_tick, 1000, 1000);
    printf("listening on 127.0.0.1:%d\n", a->port);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    const char *service_url = argc > 1 ? argv[1] : "pulsar://localhost:6650";
    const char *topic = argc > 2 ? argv[2] : "persistent://public/default/pulsarc-echo";
    int port = argc > 3 ? atoi(argv[3]) : 7000;
    if (port < 0 || port > 65535) {
        fprintf(stderr, "usage: %s [SERVICE_URL [TOPIC [PORT]]]\n", argv[0]);
        return 2;
    }
    /* The echo server's own writes: a peer that resets its connection must not kill the
     * program (pulsarc takes care of its own writes to the brokers). */
    signal(SIGPIPE, SIG_IGN);

    static struct app a;
    a.port = port; /* on_created listens there */
    uv_loop_init(&a.loop);
    a.msg = pulsarc_message_new();
    pulsarc_result res = pulsarc_client_new_on_loop(&a.loop, service_url, NULL, &a.client);
    if (res != PULSARC_OK) {
        const char *description = pulsarc_strerror(res);
        fprintf(stderr, "client: %s: %s\n", description, pulsarc_last_error_detail());
        return 1;
    }
    uv_signal_init(&a.loop, &a.sigint);
    uv_signal_init(&a.loop, &a.sigterm);
    a.sigint.data = a.sigterm.data = &a;
    uv_signal_start(&a.sigint, on_signal, SIGINT);
    uv_signal_start(&a.sigterm, on_signal, SIGTERM);
    /* The room callback tells when a producer that refused a send on this loop has room
     * again. */
    pulsarc_producer_config_t *conf = pulsarc_producer_config_new();
    res = conf ? pulsarc_producer_config_set_room_cb(conf, on_room, &a) : PULSARC_ERR_NO_MEMORY;
    if (res == PULSARC_OK)
        res = pulsarc_client_create_producer_async(a.client, topic, conf, on_created, &a);
    pulsarc_producer_config_free(conf);
    if (res != PULSARC_OK) {
        const char *description = pulsarc_strerror(res);
        fprintf(stderr, "create_producer: %s: %s\n", description, pulsarc_last_error_detail());
        a.not_created = true;
        shutdown_app(&a);
    }

    uv_run(&a.loop, UV_RUN_DEFAULT);

    int rc = uv_loop_close(&a.loop);
    pulsarc_message_free(a.msg);
    printf("published=%ld failed=%ld refused=%ld held=%zu ticks=%ld connections=%ld "
           "loop_close=%d\n",
           a.published, a.failed, a.refused, a.n_held, a.ticks, a.accepted, rc);
    return rc == 0 && a.failed == 0 && !a.not_created ? 0 : 1;
}
