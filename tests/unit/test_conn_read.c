/* A connection's read path: what the broker writes in one burst, far more than the first
 * read buffer holds (net/conn_io.c starts small and grows), reaches the listeners whole
 * and in order; and a peer that is no broker's binary port (an HTTP server, a TLS port
 * dialled with pulsar://, a plain-text port dialled with pulsar+ssl://) is named as such;
 * and a write after the close is refused without keeping anything.
 * The test plays the peer on the other end of a socketpair handed to the connection
 * through the runtime's transport seam, and runs the loop itself. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <uv.h>

#include "../support/broker_commands.h"
#include "../support/leak_check.h"
#include "net/connection.h"
#include "net/tls.h"

#define PRODUCER_ID 7
#define RECEIPTS 3000 /* about 80 KiB of receipts */

static int broker_fd = -1;

static int hand_over(void *ctx, const pc_host_port_t *to)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
        return -1;
    broker_fd = sv[1];
    return sv[0];
}

/* What a connection to the socketpair runs on: no log, long timeouts, TLS with tls. */
static const pc_logger_t quiet = { 0 };
static const pc_transport_t seam = { .open_socket = hand_over };

static pc_runtime_t runtime_on(uv_loop_t *loop, pc_tls_ctx_t *tls)
{
    return (pc_runtime_t){
        .loop = loop,
        .log = &quiet,
        .limits = { .operation_timeout_ms = 30000,
                    .connection_timeout_ms = 30000,
                    .keepalive_interval_ms = 30000 },
        .net = { .connections_per_broker = 1 },
        .transport = &seam,
        .tls = tls,
    };
}

typedef struct seen {
    bool ready;
    int receipts;
    bool in_order;
} seen_t;

static void on_ready(pc_conn_t *conn, pulsarc_result res, void *ctx)
{
    cr_assert_eq(res, PULSARC_OK, "the connection failed: %s", pulsarc_result_name(res));
    ((seen_t *)ctx)->ready = true;
}

static void on_receipt(void *ctx, const Pulsar__Proto__CommandSendReceipt *r)
{
    seen_t *s = ctx;
    s->in_order &= r->sequence_id == (uint64_t)s->receipts;
    s->receipts++;
}

static void on_disconnect(void *ctx, pulsarc_result why)
{
}

/* Everything the client wrote so far, read and dropped (CONNECT). */
static void drain(void)
{
    uint8_t buf[4096];
    while (recv(broker_fd, buf, sizeof buf, MSG_DONTWAIT) > 0) {
    }
}

/* Write everything, giving the loop a turn whenever the socket is full. */
static void write_all(uv_loop_t *loop, const uint8_t *p, size_t len)
{
    while (len > 0) {
        ssize_t n = send(broker_fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            p += n;
            len -= (size_t)n;
        } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            uv_run(loop, UV_RUN_NOWAIT);
        } else {
            cr_assert(n < 0 && errno == EINTR, "send: %s", strerror(errno));
        }
    }
}

/* Turn the loop until cond holds (bounded: the bytes are all there already). */
static bool run_until(uv_loop_t *loop, const bool *cond, const int *count, int want)
{
    for (int i = 0; i < 100000; i++) {
        if ((cond && *cond) || (count && *count >= want))
            return true;
        uv_run(loop, UV_RUN_NOWAIT);
    }
    return false;
}

/* A connection on loop that the peer accepted (CONNECTED handled); out holds the answer. */
static pc_conn_t *open_connected(uv_loop_t *loop, pc_runtime_t *rt, seen_t *s, pc_buf_t *out)
{
    const pc_host_port_t broker = { .host = "broker", .port = 6650 };
    pc_conn_t *conn = pc_conn_open(rt, &broker, &broker);
    cr_assert(conn && broker_fd >= 0, "no connection");
    pc_conn_when_ready(conn, on_ready, s);
    uv_run(loop, UV_RUN_NOWAIT); /* CONNECT goes out */
    drain();
    pc_buf_init(out);
    cr_assert_eq(bc_connected(out, "Pulsar Server", 21, 5 * 1024 * 1024), 0);
    write_all(loop, out->data, out->len);
    cr_assert(run_until(loop, &s->ready, NULL, 0), "no CONNECTED handled");
    return conn;
}

Test(conn_read, a_burst_larger_than_the_read_buffer_arrives_whole_and_in_order)
{
    uv_loop_t loop;
    cr_assert_eq(uv_loop_init(&loop), 0);
    pc_runtime_t rt = runtime_on(&loop, NULL);
    seen_t s = { .in_order = true };
    pc_buf_t out;
    pc_conn_t *conn = open_connected(&loop, &rt, &s, &out);

    pc_conn_listener_t listener = { .producer_id = PRODUCER_ID,
                                    .ctx = &s,
                                    .on_receipt = on_receipt,
                                    .on_disconnect = on_disconnect };
    pc_conn_add_listener(conn, &listener);
    /* The receipts written at once (as far as the socket takes them) before the loop reads
     * any: reads fill the buffer, which grows. */
    out.len = 0;
    for (uint64_t seq = 0; seq < RECEIPTS; seq++)
        cr_assert_eq(bc_receipt(&out, PRODUCER_ID, seq, seq, 1, seq), 0);
    cr_assert_gt(out.len, 64 * 1024, "the burst must exceed the largest read buffer");
    write_all(&loop, out.data, out.len);
    cr_assert(run_until(&loop, NULL, &s.receipts, RECEIPTS), "%d of %d receipts handled",
              s.receipts, RECEIPTS);
    cr_assert_eq(s.receipts, RECEIPTS);
    cr_assert(s.in_order, "receipts out of order");

    pc_buf_free(&out);
    pc_conn_remove_listener(conn, &listener);
    pc_conn_close(conn, PULSARC_ERR_ALREADY_CLOSED, "test over");
    cr_assert_eq(uv_run(&loop, UV_RUN_DEFAULT), 0);
    cr_assert_eq(uv_loop_close(&loop), 0);
    close(broker_fd);
}

/* ---- a peer that is not a broker's binary port ------------------------------------------ */

typedef struct refused {
    bool done;
    pulsarc_result res;
    char detail[512];
} refused_t;

static void on_refused(pc_conn_t *conn, pulsarc_result res, void *ctx)
{
    refused_t *r = ctx;
    r->done = true;
    r->res = res;
    snprintf(r->detail, sizeof r->detail, "%s", pulsarc_last_error_detail());
}

/* Open a connection (TLS with tls set, verifying nothing), let its first bytes out (CONNECT
 * or the ClientHello), answer with `answer` in pieces of `piece` bytes (0: at once) and
 * return how the connection ended. */
static refused_t answered_with(const char *answer, size_t len, size_t piece, bool tls)
{
    uv_loop_t loop;
    cr_assert_eq(uv_loop_init(&loop), 0);
    pc_tls_ctx_t *ctx = NULL;
    if (tls) {
        const pc_tls_settings_t set = { .allow_insecure = true };
        cr_assert_eq(pc_tls_ctx_new(&set, &ctx), PULSARC_OK, "%s", pulsarc_last_error_detail());
    }
    pc_runtime_t rt = runtime_on(&loop, ctx);
    const pc_host_port_t broker = { .host = "web", .port = 8080 };
    pc_conn_t *conn = pc_conn_open(&rt, &broker, &broker);
    cr_assert(conn && broker_fd >= 0, "no connection");
    refused_t r = { 0 };
    pc_conn_when_ready(conn, on_refused, &r);
    uv_run(&loop, UV_RUN_NOWAIT); /* CONNECT or the ClientHello goes out */
    drain();
    for (size_t at = 0; at < len && !r.done;) {
        size_t n = piece && len - at > piece ? piece : len - at;
        write_all(&loop, (const uint8_t *)answer + at, n);
        at += n;
        for (int i = 0; i < 100 && !r.done; i++) /* a few turns: the bytes are there */
            uv_run(&loop, UV_RUN_NOWAIT);
    }
    cr_assert(run_until(&loop, &r.done, NULL, 0), "the connection neither failed nor closed");
    cr_assert_eq(uv_run(&loop, UV_RUN_DEFAULT), 0);
    cr_assert_eq(uv_loop_close(&loop), 0);
    close(broker_fd);
    pc_tls_ctx_free(ctx);
    return r;
}

#define JETTY_400                                                            \
    "HTTP/1.1 400 Illegal character CNTL=0x0\r\nContent-Type: text/html\r\n" \
    "Content-Length: 69\r\nConnection: close\r\n\r\n<h1>Bad Message 400</h1>"

/* pulsar:// at the broker's web service port: its HTTP answer would read as a frame of
 * 0x48545450 bytes ("HTTP"); the detail quotes the status line and names the way out.
 * Arriving in pieces ("HT", "TP", ...), it is named all the same, quoting what came. */
Test(conn_read, an_http_server_is_named_and_quoted)
{
    for (size_t piece = 0; piece <= 2; piece += 2) {
        refused_t r = answered_with(JETTY_400, strlen(JETTY_400), piece, false);
        cr_assert_eq(r.res, PULSARC_ERR_PROTOCOL, "%s", pulsarc_result_name(r.res));
        cr_assert(strstr(r.detail, piece ? "web:8080 is an HTTP server (it answered 'HTTP"
                                         : "web:8080 is an HTTP server (it answered "
                                           "'HTTP/1.1 400 Illegal character CNTL=0x0')"),
                  "%s", r.detail);
        cr_assert(strstr(r.detail, "use http://"), "%s", r.detail);
        cr_assert(strstr(r.detail, "6650"), "%s", r.detail);
        cr_assert_null(strstr(r.detail, "frame larger"), "%s", r.detail);
    }
}

/* A status line is the server's text: quoted short, and safe (as every detail is). */
Test(conn_read, an_http_status_line_is_quoted_short_and_safe)
{
    static const char answer[] = "HTTP/1.0 418 \x1b[2J"
                                 "0123456789012345678901234567890123456789"
                                 "0123456789012345678901234567890123456789\r\n\r\n";
    refused_t r = answered_with(answer, sizeof answer - 1, 0, false);
    cr_assert(strstr(r.detail, "(it answered 'HTTP/1.0 418 ?[2J0123"), "%s", r.detail);
    cr_assert(strstr(r.detail, "...')"), "a long status line is cut: %s", r.detail);
    cr_assert_null(strstr(r.detail, "\x1b"), "%s", r.detail);
}

/* pulsar:// at a TLS port that answers CONNECT with an alert record. */
Test(conn_read, a_tls_server_is_named)
{
    static const char alert[] = { 0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x46 };
    refused_t r = answered_with(alert, sizeof alert, 0, false);
    cr_assert_eq(r.res, PULSARC_ERR_PROTOCOL, "%s", pulsarc_result_name(r.res));
    cr_assert(strstr(r.detail, "web:8080 answered with TLS"), "%s", r.detail);
    cr_assert(strstr(r.detail, "use pulsar+ssl://"), "%s", r.detail);
}

/* pulsar+ssl:// at a plain-text HTTP port: the ClientHello gets the HTTP answer. */
Test(conn_read, an_http_server_reached_with_tls_is_named)
{
    refused_t r = answered_with(JETTY_400, strlen(JETTY_400), 0, true);
    cr_assert_eq(r.res, PULSARC_ERR_TLS_HANDSHAKE, "%s", pulsarc_result_name(r.res));
    cr_assert(strstr(r.detail, "web:8080 is a plain-text HTTP server (it answered "
                               "'HTTP/1.1 400 Illegal character CNTL=0x0')"),
              "%s", r.detail);
    cr_assert(strstr(r.detail, "use http://"), "%s", r.detail);
}

/* Bytes that are neither keep the frame reader's own words. */
Test(conn_read, other_oversized_first_bytes_keep_the_frame_message)
{
    static const char big[] = { 0x7f, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04 };
    refused_t r = answered_with(big, sizeof big, 0, false);
    cr_assert_eq(r.res, PULSARC_ERR_PROTOCOL, "%s", pulsarc_result_name(r.res));
    cr_assert(strstr(r.detail, "the broker sent a frame larger than"), "%s", r.detail);
}

/* ---- writing after the close ----------------------------------------------------------- */

static void on_written(void *ctx, int status)
{
    *(int *)ctx = status + 1; /* 1: written */
}

/* A connection keeps a finished write's arrays for its next one; a write refused after the
 * close must not take them (the close freed the queue already, the free frees the spare
 * only: LeakSanitizer caught the arrays lost, from the broker-session fuzz target). */
Test(conn_read, a_write_after_the_close_is_refused_and_keeps_nothing)
{
    uv_loop_t loop;
    cr_assert_eq(uv_loop_init(&loop), 0);
    pc_runtime_t rt = runtime_on(&loop, NULL);
    seen_t s = { .in_order = true };
    pc_buf_t out;
    pc_conn_t *conn = open_connected(&loop, &rt, &s, &out);
    static char bytes[] = "frame";
    uv_buf_t b = uv_buf_init(bytes, sizeof bytes);
    int written = 0;
    cr_assert_eq(pc_conn_write(conn, &b, 1, on_written, &written), 0);
    for (int i = 0; i < 1000 && !written; i++)
        uv_run(&loop, UV_RUN_NOWAIT);
    cr_assert_eq(written, 1, "the write did not finish (status %d)", written - 1);

    pc_conn_close(conn, PULSARC_ERR_ALREADY_CLOSED, "test over");
    int late = 0;
    cr_assert_eq(pc_conn_write(conn, &b, 1, on_written, &late), -1);
    cr_assert_eq(late, 0, "a refused write has no callback");
    pc_buf_free(&out);
    cr_assert_eq(uv_run(&loop, UV_RUN_DEFAULT), 0);
    cr_assert_eq(uv_loop_close(&loop), 0);
    close(broker_fd);
    pc_test_assert_no_leaks();
}
