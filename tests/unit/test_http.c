/* pc_http on a real libuv loop against a tiny HTTP server on the same loop: answers and
 * statuses pass through, the extra header and the form arrive, and failures come back as
 * named results (connect refused, timeout, TLS spoken to a plain server, closing). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "../support/test_outcomes.h"
#include "common/error.h"
#include "net/http.h"

/* ---- a one-connection-at-a-time HTTP server -------------------------------------- */

typedef struct server {
    uv_tcp_t listener;
    int port;
    bool silent;        /* accept, read, never answer */
    bool eager;         /* answer whatever arrives first (a TLS ClientHello) */
    const char *answer; /* the whole response */
    char request[8192]; /* what the last client sent */
    size_t len;
    uv_tcp_t *conn;
} server_t;

static void on_alloc(uv_handle_t *h, size_t want, uv_buf_t *b)
{
    (void)h;
    b->base = malloc(want);
    b->len = b->base ? want : 0;
}

static void free_handle(uv_handle_t *h)
{
    free(h);
}

static void on_written(uv_write_t *w, int status)
{
    (void)status;
    uv_close((uv_handle_t *)w->handle, free_handle);
    free(w);
}

/* Complete once the headers are in and, for a POST, Content-Length more bytes. */
static bool request_complete(const server_t *s)
{
    const char *end = strstr(s->request, "\r\n\r\n");
    if (!end)
        return false;
    const char *cl = strstr(s->request, "Content-Length: ");
    size_t want = cl ? (size_t)strtoul(cl + 16, NULL, 10) : 0;
    return s->len >= (size_t)(end + 4 - s->request) + want;
}

static void on_read(uv_stream_t *st, ssize_t n, const uv_buf_t *b)
{
    server_t *s = st->data;
    if (n > 0 && s->len + (size_t)n < sizeof s->request) {
        memcpy(s->request + s->len, b->base, (size_t)n);
        s->len += (size_t)n;
        s->request[s->len] = '\0';
    }
    free(b->base);
    if (n < 0) {
        if (!uv_is_closing((uv_handle_t *)st))
            uv_close((uv_handle_t *)st, free_handle);
        s->conn = NULL;
        return;
    }
    if (s->silent || (!s->eager && !request_complete(s)))
        return;
    uv_read_stop(st);
    uv_write_t *w = malloc(sizeof *w);
    uv_buf_t out = uv_buf_init((char *)s->answer, (unsigned)strlen(s->answer));
    uv_write(w, st, &out, 1, on_written);
    s->conn = NULL;
}

static void on_connection(uv_stream_t *l, int status)
{
    server_t *s = l->data;
    if (status < 0)
        return;
    uv_tcp_t *c = malloc(sizeof *c);
    uv_tcp_init(l->loop, c);
    c->data = s;
    s->len = 0;
    s->request[0] = '\0';
    s->conn = c;
    uv_accept(l, (uv_stream_t *)c);
    uv_read_start((uv_stream_t *)c, on_alloc, on_read);
}

static void server_start(uv_loop_t *loop, server_t *s)
{
    struct sockaddr_in addr;
    uv_ip4_addr("127.0.0.1", 0, &addr);
    uv_tcp_init(loop, &s->listener);
    s->listener.data = s;
    cr_assert_eq(uv_tcp_bind(&s->listener, (const struct sockaddr *)&addr, 0), 0);
    cr_assert_eq(uv_listen((uv_stream_t *)&s->listener, 8, on_connection), 0);
    struct sockaddr_in bound;
    int blen = sizeof bound;
    uv_tcp_getsockname(&s->listener, (struct sockaddr *)&bound, &blen);
    s->port = ntohs(bound.sin_port);
}

static void server_stop(server_t *s)
{
    if (s->conn && !uv_is_closing((uv_handle_t *)s->conn))
        uv_close((uv_handle_t *)s->conn, free_handle);
    uv_close((uv_handle_t *)&s->listener, NULL);
}

/* ---- the client side ------------------------------------------------------------- */

static uv_loop_t loop;
static pc_logger_t logger = { .level = PULSARC_LOG_ERROR };

static void setup(void)
{
    uv_loop_init(&loop);
    logger.cb = NULL;
}

/* Run until the outcome is in, then close everything: the loop must run dry (no handle
 * left behind by pc_http). */
static void run_until(outcome_t *o, pc_http_t *h, server_t *s)
{
    while (o->calls == 0 && uv_run(&loop, UV_RUN_ONCE))
        ;
    pc_http_free(h);
    if (s)
        server_stop(s);
    uv_run(&loop, UV_RUN_DEFAULT);
    cr_assert_eq(uv_loop_close(&loop), 0, "a handle was left open");
}

static char *url_of(const server_t *s, const char *scheme, const char *path)
{
    static char url[128];
    snprintf(url, sizeof url, "%s://127.0.0.1:%d%s", scheme, s->port, path);
    return url;
}

TestSuite(http, .init = setup);

/* A pc_http_answer_cb (pc_http_get_with) recording as on_done does. */
static void on_answer(pulsarc_result res, const pc_http_answer_t *a, void *ctx)
{
    on_done(res, a ? a->status : 0, a ? a->body : NULL, a ? a->len : 0, ctx);
}

Test(http, get_passes_status_body_and_header)
{
    server_t s = { .answer = "HTTP/1.1 404 Not Found\r\nContent-Length: 10\r\n"
                             "Connection: close\r\n\r\n{\"x\":\"y\"} " };
    server_start(&loop, &s);
    pc_http_t *h = pc_http_new(&loop, &logger, NULL);
    cr_assert_not_null(h);
    outcome_t o = { 0 };
    cr_assert_eq(pc_http_get(h, url_of(&s, "http", "/a/b"), "Authorization: Bearer t0k", 5000,
                             on_done, &o),
                 0);
    run_until(&o, h, &s);
    cr_expect_eq(o.calls, 1);
    cr_expect_eq(o.res, PULSARC_OK, "%s", o.detail);
    cr_expect_eq(o.status, 404);
    cr_expect_str_eq(o.body, "{\"x\":\"y\"} ");
    cr_expect(strstr(s.request, "GET /a/b HTTP/1.1\r\n") != NULL, "%s", s.request);
    cr_expect(strstr(s.request, "\r\nAuthorization: Bearer t0k\r\n") != NULL);
}

Test(http, post_sends_the_form)
{
    server_t s = { .answer = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n"
                             "Connection: close\r\n\r\nok" };
    server_start(&loop, &s);
    pc_http_t *h = pc_http_new(&loop, &logger, NULL);
    outcome_t o = { 0 };
    cr_assert_eq(pc_http_post_form(h, url_of(&s, "http", "/token"),
                                   "grant_type=client_credentials&client_secret=s3", 5000, on_done,
                                   &o),
                 0);
    run_until(&o, h, &s);
    cr_expect_eq(o.res, PULSARC_OK, "%s", o.detail);
    cr_expect_eq(o.status, 200);
    cr_expect_str_eq(o.body, "ok");
    cr_expect(strstr(s.request, "POST /token HTTP/1.1\r\n") != NULL, "%s", s.request);
    cr_expect(strstr(s.request, "application/x-www-form-urlencoded") != NULL);
    cr_expect(strstr(s.request, "\r\n\r\ngrant_type=client_credentials&client_secret=s3"));
}

Test(http, refused_connection_is_connect_failed)
{
    server_t s = { 0 };
    server_start(&loop, &s);
    int port = s.port;
    server_stop(&s); /* the port is free again: nobody listens */
    uv_run(&loop, UV_RUN_DEFAULT);
    pc_http_t *h = pc_http_new(&loop, &logger, NULL);
    outcome_t o = { 0 };
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/x", port);
    cr_assert_eq(pc_http_get(h, url, "Authorization: Bearer secret-token", 5000, on_done, &o), 0);
    run_until(&o, h, NULL);
    cr_expect_eq(o.res, PULSARC_ERR_CONNECT_FAILED, "%s", pulsarc_result_name(o.res));
    cr_expect(strstr(o.detail, url) != NULL, "%s", o.detail);
    cr_expect(strstr(o.detail, "secret-token") == NULL, "the header leaked into the detail");
}

Test(http, silent_server_times_out)
{
    server_t s = { .silent = true };
    server_start(&loop, &s);
    pc_http_t *h = pc_http_new(&loop, &logger, NULL);
    outcome_t o = { 0 };
    cr_assert_eq(pc_http_get(h, url_of(&s, "http", "/slow"), NULL, 300, on_done, &o), 0);
    uint64_t t0 = uv_hrtime();
    run_until(&o, h, &s);
    cr_expect_eq(o.res, PULSARC_ERR_TIMEOUT, "%s: %s", pulsarc_result_name(o.res), o.detail);
    cr_expect_lt(uv_hrtime() - t0, 5000000000u);
}

Test(http, tls_to_a_plain_server_is_a_handshake_failure)
{
    server_t s = { .eager = true, .answer = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n" };
    server_start(&loop, &s);
    pc_http_tls_t tls = { .verify_hostname = 1 };
    pc_http_t *h = pc_http_new(&loop, &logger, &tls);
    outcome_t o = { 0 };
    cr_assert_eq(pc_http_get(h, url_of(&s, "https", "/"), NULL, 5000, on_done, &o), 0);
    run_until(&o, h, &s);
    cr_expect_eq(o.res, PULSARC_ERR_TLS_HANDSHAKE, "%s: %s", pulsarc_result_name(o.res), o.detail);
}

Test(http, free_cancels_what_is_in_flight)
{
    server_t s = { .silent = true };
    server_start(&loop, &s);
    pc_http_t *h = pc_http_new(&loop, &logger, NULL);
    outcome_t o = { 0 };
    cr_assert_eq(pc_http_get(h, url_of(&s, "http", "/"), NULL, 60000, on_done, &o), 0);
    /* Let the request connect and go out before cancelling it. */
    for (int i = 0; i < 20 && s.len == 0; i++)
        uv_run(&loop, UV_RUN_ONCE);
    pc_http_free(h);
    cr_expect_eq(o.calls, 1);
    cr_expect_eq(o.res, PULSARC_ERR_ALREADY_CLOSED);
    server_stop(&s);
    uv_run(&loop, UV_RUN_DEFAULT);
    cr_assert_eq(uv_loop_close(&loop), 0, "a handle was left open");
}

Test(http, bad_requests_do_not_start)
{
    pc_http_t *h = pc_http_new(&loop, &logger, NULL);
    outcome_t o = { 0 };
    cr_expect_eq(pc_http_get(h, "http://127.0.0.1:1/", "X: a\r\nY: b", 1000, on_done, &o), -1);
    /* A header meant as several lines: "\r\n" between non-empty lines, nothing else. */
    const char *bad_lines[] = { "X: a\nY: b", "X: a\r\n\r\nY: b", "X: a\rY: b", "X: a\r\n", "" };
    for (size_t i = 0; i < sizeof bad_lines / sizeof bad_lines[0]; i++) {
        pc_http_get_opts_t opts = { .header = bad_lines[i], .header_lines = true };
        cr_expect_eq(pc_http_get_with(h, "http://127.0.0.1:1/", &opts, 1000, on_answer, &o), -1,
                     "lines case %zu started", i);
    }
    cr_expect_eq(pc_http_get(h, NULL, NULL, 1000, on_done, &o), -1);
    cr_expect_eq(pc_http_post_form(h, "http://127.0.0.1:1/", NULL, 1000, on_done, &o), -1);
    cr_expect_eq(o.calls, 0);
    pc_http_free(h);
    uv_run(&loop, UV_RUN_DEFAULT);
    cr_assert_eq(uv_loop_close(&loop), 0);
}

/* ---- answer headers kept for the caller ------------------------------------------- */

typedef struct kept_outcome {
    outcome_t o;
    char values[4][64];
    bool present[4];
    unsigned bad;
} kept_outcome_t;

static void on_kept(pulsarc_result res, const pc_http_answer_t *a, void *ctx)
{
    kept_outcome_t *k = ctx;
    on_answer(res, a, &k->o);
    for (int i = 0; a && i < 4; i++) {
        k->present[i] = a->kept->values[i] != NULL;
        snprintf(k->values[i], sizeof k->values[i], "%s",
                 a->kept->values[i] ? a->kept->values[i] : "");
    }
    k->bad = a ? a->kept->bad : 0;
}

/* Feed pc_http_keep_line the lines of block (separated by "\n", each given with "\r\n"). */
static void keep_block(pc_http_kept_t *k, const char *const *names, const char *block)
{
    for (const char *p = block; *p;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        char line[10000];
        cr_assert_lt(n + 2, sizeof line);
        memcpy(line, p, n);
        memcpy(line + n, "\r\n", 2);
        cr_assert_eq(pc_http_keep_line(k, names, line, n + 2), 0);
        p = nl ? nl + 1 : p + n;
    }
}

Test(http, keep_line_refuses_what_is_not_plain_text)
{
    static const char *const names[] = { "A", "B", "C", "D", "E", NULL };
    pc_http_kept_t k = { 0 };
    /* Interim answer first: what it had is dropped with the next status line. */
    keep_block(&k, names,
               "HTTP/1.1 100 Continue\nA: early\n\nHTTP/1.1 200 OK\n"
               "a:\t spaced value \t\nB: folded\n  more\nC: bad\x01byte\n"
               "D: high\xc3\xa9\nno colon here\nE:\nZ: other");
    cr_expect_str_eq(k.values[0], "spaced value");
    cr_expect_null(k.values[1]);
    cr_expect_null(k.values[2]);
    cr_expect_null(k.values[3]);
    cr_expect_str_eq(k.values[4], "");
    cr_expect_eq(k.bad, (1u << 1) | (1u << 2) | (1u << 3), "bad 0x%x", k.bad);
    pc_http_kept_clear(&k);
    cr_expect_eq(k.bad, 0);

    /* A NUL inside a value; a value at and over the limit. */
    pc_http_keep_line(&k, names, "A: x\0y\r\n", 8);
    cr_expect_null(k.values[0]);
    static char line[PC_HTTP_KEPT_VALUE_MAX + 8];
    memcpy(line, "B: ", 3);
    memset(line + 3, 'v', PC_HTTP_KEPT_VALUE_MAX);
    cr_expect_eq(pc_http_keep_line(&k, names, line, 3 + PC_HTTP_KEPT_VALUE_MAX), 0);
    cr_expect_eq(strlen(k.values[1]), PC_HTTP_KEPT_VALUE_MAX);
    memcpy(line, "C: ", 3);
    memset(line + 3, 'v', PC_HTTP_KEPT_VALUE_MAX + 1);
    pc_http_keep_line(&k, names, line, 3 + PC_HTTP_KEPT_VALUE_MAX + 1);
    cr_expect_null(k.values[2]);
    cr_expect_eq(k.bad, (1u << 0) | (1u << 2), "bad 0x%x", k.bad);
    /* A new answer starts clean. */
    keep_block(&k, names, "HTTP/1.1 200 OK\nA: again");
    cr_expect_str_eq(k.values[0], "again");
    cr_expect_null(k.values[1]);
    cr_expect_eq(k.bad, 0);
    pc_http_kept_clear(&k);
}

static const char *const keep_names[] = { "State", "SASL-Token", "Dup", "Missing", NULL };

Test(http, get_with_keeps_the_named_answer_headers_and_sends_empty_values)
{
    server_t s = { .answer = "HTTP/1.1 401 Unauthorized\r\nstate:  ING \r\nSASL-Token: YWJj\r\n"
                             "Dup: 1\r\nDup: 2\r\nOther: x\r\nContent-Length: 0\r\n"
                             "Connection: close\r\n\r\n" };
    server_start(&loop, &s);
    pc_http_t *h = pc_http_new(&loop, &logger, NULL);
    static kept_outcome_t got;
    memset(&got, 0, sizeof got);
    pc_http_get_opts_t opts = { .header = "X-Empty: \r\nX-Full: v",
                                .header_lines = true,
                                .keep = keep_names };
    cr_assert_eq(pc_http_get_with(h, url_of(&s, "http", "/k"), &opts, 5000, on_kept, &got), 0);
    run_until(&got.o, h, &s);
    cr_expect_eq(got.o.res, PULSARC_OK, "%s", got.o.detail);
    cr_expect_eq(got.o.status, 401);
    cr_expect_str_eq(got.values[0], "ING");
    cr_expect_str_eq(got.values[1], "YWJj");
    cr_expect(!got.present[2] && !got.present[3]);
    cr_expect_eq(got.bad, 1u << 2, "bad 0x%x: a repeated header is refused", got.bad);
    cr_expect(strstr(s.request, "\r\nX-Empty:\r\n") != NULL, "%s", s.request);
    cr_expect(strstr(s.request, "\r\nX-Full: v\r\n") != NULL, "%s", s.request);
}
