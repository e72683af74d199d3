/* The /metrics request check (metrics_http/http_request.c): good requests, bad ones,
 * requests cut anywhere, and oversized heads. */
#include <criterion/criterion.h>

#include <stdlib.h>
#include <string.h>

#include "metrics_http/http_request.h"

static pc_http_verdict check(const char *s)
{
    return pc_http_request_check(s, strlen(s));
}

static const char prometheus[] =
    "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1:9100\r\nUser-Agent: Prometheus/2.53.0\r\n"
    "Accept: text/plain;version=0.0.4;q=0.9,*/*;q=0.1\r\n"
    "X-Prometheus-Scrape-Timeout-Seconds: 10\r\n\r\n";

/* Each request and the verdict it must get. */
static const struct {
    const char *request;
    pc_http_verdict want;
} cases[] = {
    { "GET /metrics HTTP/1.0\r\n\r\n", PC_HTTP_GET_METRICS },
    { "GET /metrics?name[]=x HTTP/1.1\r\nHost: a\r\n\r\n", PC_HTTP_GET_METRICS },
    { "GET /metrics HTTP/1.1\r\n\r\nbody ignored", PC_HTTP_GET_METRICS },
    { "GET / HTTP/1.1\r\n\r\n", PC_HTTP_NOT_FOUND },
    { "GET /metricsx HTTP/1.1\r\n\r\n", PC_HTTP_NOT_FOUND },
    { "GET /metrics/ HTTP/1.1\r\n\r\n", PC_HTTP_NOT_FOUND },
    { "POST /metrics HTTP/1.1\r\n\r\n", PC_HTTP_BAD_METHOD },
    { "HEAD /metrics HTTP/1.1\r\n\r\n", PC_HTTP_BAD_METHOD },
    { "\r\n\r\n", PC_HTTP_BAD_REQUEST },
    { "GET /metrics\r\n\r\n", PC_HTTP_BAD_REQUEST },
    { "GET /metrics HTTP/2.0\r\n\r\n", PC_HTTP_BAD_REQUEST },
    { "GET metrics HTTP/1.1\r\n\r\n", PC_HTTP_BAD_REQUEST },
    { "get /metrics HTTP/1.1\r\n\r\n", PC_HTTP_BAD_REQUEST },
    { "GET  /metrics HTTP/1.1\r\n\r\n", PC_HTTP_BAD_REQUEST },
    { "GET /metrics HTTP/1.1\nHost: a\n\n", PC_HTTP_BAD_REQUEST },
    { "GET /metrics HTTP/1.1\r\nno colon\r\n\r\n", PC_HTTP_BAD_REQUEST },
    { "GET /metrics HTTP/1.1\r\n folded: x\r\n\r\n", PC_HTTP_BAD_REQUEST },
    { "GET /met\x01rics HTTP/1.1\r\n\r\n", PC_HTTP_BAD_REQUEST },
    { "\x16\x03\x01\x02\x00", PC_HTTP_BAD_REQUEST }, /* a TLS hello */
};

Test(metrics_http, verdicts)
{
    cr_assert_eq(check(prometheus), PC_HTTP_GET_METRICS);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        cr_assert_eq(check(cases[i].request), cases[i].want, "case %zu: %s", i, cases[i].request);
    cr_assert_eq(pc_http_request_check("GET /\0metrics HTTP/1.1\r\n\r\n", 26), PC_HTTP_BAD_REQUEST);
}

Test(metrics_http, every_cut_of_a_good_request_is_incomplete)
{
    size_t n = strlen(prometheus);
    for (size_t i = 0; i < n; i++)
        cr_assert_eq(pc_http_request_check(prometheus, i), PC_HTTP_INCOMPLETE, "cut at %zu", i);
    cr_assert_eq(pc_http_request_check(prometheus, n), PC_HTTP_GET_METRICS);
}

Test(metrics_http, oversized_head)
{
    size_t n = PC_METRICS_HTTP_MAX_REQUEST + 100;
    char *buf = malloc(n);
    cr_assert_not_null(buf);
    const char start[] = "GET /metrics HTTP/1.1\r\nX-Pad: ";
    memcpy(buf, start, sizeof start - 1);
    memset(buf + sizeof start - 1, 'a', n - (sizeof start - 1));
    cr_assert_eq(pc_http_request_check(buf, PC_METRICS_HTTP_MAX_REQUEST - 1), PC_HTTP_INCOMPLETE);
    cr_assert_eq(pc_http_request_check(buf, PC_METRICS_HTTP_MAX_REQUEST), PC_HTTP_BAD_REQUEST);
    cr_assert_eq(pc_http_request_check(buf, n), PC_HTTP_BAD_REQUEST);
    /* a complete head just under the limit is still served */
    size_t fit = PC_METRICS_HTTP_MAX_REQUEST - 4;
    memcpy(buf + fit, "\r\n\r\n", 4);
    cr_assert_eq(pc_http_request_check(buf, PC_METRICS_HTTP_MAX_REQUEST), PC_HTTP_GET_METRICS);
    free(buf);
}
