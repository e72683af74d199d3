/* HTTP lookups (lookup_http.c) on a real loop against servers on threads of their own
 * (tests/support): the authentication provider is prepared before each request (an
 * OAuth2 provider fetches or renews its token then), and the credentials follow a
 * redirect only to the service URL's hosts, or anywhere when httpLookupAuthAllowRedirect
 * says so. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "../support/test_http_server.h"
#include "auth/auth.h"
#include "common/error.h"
#include "net/curl_lib.h"
#include "net/http.h"
#include "net/lookup_http.h"

#define TOPIC "persistent://public/default/lookup-test"

static uv_loop_t loop;
static pc_logger_t logger = { .level = PULSARC_LOG_ERROR };
static pc_service_url_t service;
static pc_runtime_t rt;

/* ---- a provider that must be prepared, as OAuth2 must ---------------------------- */

/* Each prepare "fetches" a new token, asynchronously; the data may be taken once per
 * prepare ("tok-<n>"), as an OAuth2 provider's cached token may not be used unprepared. */
typedef struct fake_auth {
    pc_auth_t base;
    uv_timer_t timer;
    pc_auth_wait_t *pending;
    int prepared, taken;
    bool fail;
    bool switch_on_take; /* the client switches cluster as the request goes out */
} fake_auth_t;

static void fake_fire(uv_timer_t *t)
{
    fake_auth_t *f = t->data;
    pc_auth_wait_t *w = f->pending;
    f->pending = NULL;
    if (f->fail)
        pc_set_detail("fake issuer: down");
    pc_auth_wait_done(w, f->fail ? PULSARC_ERR_AUTH_PROVIDER : PULSARC_OK);
}

static void fake_prepare(pc_auth_t *a, pc_auth_wait_t *w)
{
    fake_auth_t *f = (fake_auth_t *)a;
    cr_assert_null(f->pending, "prepared twice at once");
    f->prepared++;
    f->pending = w;
    uv_timer_start(&f->timer, fake_fire, 0, 0);
}

static void fake_cancel(pc_auth_t *a, pc_auth_wait_t *w)
{
    fake_auth_t *f = (fake_auth_t *)a;
    if (f->pending == w) {
        f->pending = NULL;
        uv_timer_stop(&f->timer);
    }
}

static pulsarc_result fake_initial(pc_auth_t *a, pc_auth_data_t *out)
{
    fake_auth_t *f = (fake_auth_t *)a;
    if (f->taken == f->prepared)
        return pc_fail(PULSARC_ERR_AUTH_PROVIDER, "fake: no fresh token (not prepared)");
    f->taken = f->prepared;
    if (f->switch_on_take)
        rt.cluster_switches++;
    char token[32];
    snprintf(token, sizeof token, "tok-%d", f->prepared);
    return pc_auth_data_set(out, token) == 0 ? PULSARC_OK : PULSARC_ERR_NO_MEMORY;
}

static void fake_destroy(pc_auth_t *a)
{
    (void)a; /* static; its timer is closed by the test */
}

static const pc_auth_ops_t fake_ops = {
    .method = "token",
    .initial = fake_initial,
    .destroy = fake_destroy,
    .prepare = fake_prepare,
    .cancel = fake_cancel,
};

static fake_auth_t fake;

/* ---- set-up ------------------------------------------------------------------------ */

static void setup_runtime(void)
{
    uv_loop_init(&loop);
    memset(&fake, 0, sizeof fake);
    fake.base.ops = &fake_ops;
    uv_timer_init(&loop, &fake.timer);
    fake.timer.data = &fake;
    memset(&rt, 0, sizeof rt);
    rt.loop = &loop;
    rt.log = &logger;
    rt.limits.operation_timeout_ms = 10000;
    rt.limits.max_lookup_redirects = 5;
    rt.service = &service;
    rt.auth = &fake.base;
}

static void setup(void)
{
    setup_runtime();
    rt.http = pc_http_new(&loop, &logger, NULL);
    cr_assert_not_null(rt.http);
}

#define NO_CURL "libpulsarc-test-no-such-curl.so.4"

/* As a process without libcurl: the runtime has no HTTP client (a failover cluster's
 * lookups meet that; the first cluster's fail the client's creation). */
static void setup_without_libcurl(void)
{
    pc_curl_lib_set_soname_for_tests(NO_CURL);
    setup_runtime();
    rt.http = pc_http_new(&loop, &logger, NULL);
    cr_assert_null(rt.http, "an HTTP client without libcurl");
}

static void finish_loop(void)
{
    pc_http_free(rt.http);
    uv_close((uv_handle_t *)&fake.timer, NULL);
    uv_run(&loop, UV_RUN_DEFAULT);
    cr_assert_eq(uv_loop_close(&loop), 0, "a handle was left open");
}

TestSuite(http_lookup, .init = setup);

static void use_service(const char *url)
{
    char err[128];
    cr_assert_eq(pc_service_url_parse(url, &service, err, sizeof err), 0, "%s", err);
}

typedef struct answer {
    int calls;
    pulsarc_result res;
    pc_host_port_t broker;
    char detail[512];
} answer_t;

static void on_lookup(pulsarc_result res, const pc_host_port_t *logical,
                      const pc_host_port_t *physical, void *ctx)
{
    (void)physical;
    answer_t *a = ctx;
    a->calls++;
    a->res = res;
    if (logical)
        a->broker = *logical;
    snprintf(a->detail, sizeof a->detail, "%s", res ? pulsarc_last_error_detail() : "");
}

static answer_t lookup(void)
{
    answer_t a = { 0 };
    pc_http_lookup_topic(&rt, TOPIC, on_lookup, &a);
    while (a.calls == 0 && uv_run(&loop, UV_RUN_ONCE))
        ;
    cr_assert_eq(a.calls, 1);
    return a;
}

static const char BROKER_ANSWER[] =
    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 84\r\n"
    "Connection: close\r\n\r\n"
    "{\"brokerUrl\":\"pulsar://127.0.0.1:6650\",\"brokerUrlTls\":\"pulsar+ssl://127.0.0.1:6651\"}";

/* A 307 to http://<host>:<port>/same/path, into buf. */
static const char *redirect_to(char *buf, size_t cap, const char *host, int port)
{
    snprintf(buf, cap,
             "HTTP/1.1 307 Temporary Redirect\r\nLocation: http://%s:%d/lookup/v2/"
             "topic/persistent/public/default/lookup-test\r\nContent-Length: 0\r\n"
             "Connection: close\r\n\r\n",
             host, port);
    return buf;
}

static bool has_credentials(test_server_t *s)
{
    return strstr(ts_last_request(s), "\r\nAuthorization: Bearer tok-") != NULL;
}

/* ---- the provider is prepared before each request ---------------------------------- */

Test(http_lookup, provider_is_prepared_before_each_lookup)
{
    test_server_t s = { .answer = BROKER_ANSWER };
    ts_start(&s);
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d", s.port);
    use_service(url);
    answer_t a = lookup();
    cr_expect_eq(a.res, PULSARC_OK, "%s: %s", pulsarc_result_name(a.res), a.detail);
    cr_expect_str_eq(a.broker.host, "127.0.0.1");
    cr_expect_eq(a.broker.port, 6650);
    cr_expect(strstr(ts_last_request(&s), "\r\nAuthorization: Bearer tok-1\r\n") != NULL, "%s",
              ts_last_request(&s));
    /* The next lookup prepares again: a token that expired in between is renewed. */
    a = lookup();
    cr_expect_eq(a.res, PULSARC_OK, "%s: %s", pulsarc_result_name(a.res), a.detail);
    cr_expect(strstr(ts_last_request(&s), "\r\nAuthorization: Bearer tok-2\r\n") != NULL, "%s",
              ts_last_request(&s));
    cr_expect_eq(fake.prepared, 2);
    ts_stop(&s);
    finish_loop();
}

Test(http_lookup, failed_prepare_fails_the_lookup_before_any_request)
{
    test_server_t s = { .answer = BROKER_ANSWER };
    ts_start(&s);
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d", s.port);
    use_service(url);
    fake.fail = true;
    answer_t a = lookup();
    cr_expect_eq(a.res, PULSARC_ERR_AUTH_PROVIDER, "%s", pulsarc_result_name(a.res));
    cr_expect(strstr(a.detail, "fake issuer: down") != NULL, "%s", a.detail);
    cr_expect_eq(ts_requests(&s), 0);
    ts_stop(&s);
    finish_loop();
}

/* Without libcurl, the lookup fails through its callback, naming the library and the
 * loader's reason (PULSARC_ERR_UNSUPPORTED: terminal, no retrying), and asks nobody. */
TestSuite(http_lookup_without_libcurl, .init = setup_without_libcurl);

Test(http_lookup_without_libcurl, the_lookup_fails_by_name_through_its_callback)
{
    test_server_t s = { .answer = BROKER_ANSWER };
    ts_start(&s);
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d", s.port);
    use_service(url);
    answer_t a = lookup();
    cr_expect_eq(a.res, PULSARC_ERR_UNSUPPORTED, "%s: %s", pulsarc_result_name(a.res), a.detail);
    cr_expect(strstr(a.detail, "HTTP lookup of") && strstr(a.detail, NO_CURL) &&
                  strstr(a.detail, "cannot open shared object file"),
              "%s", a.detail);
    cr_expect_eq(ts_requests(&s), 0);
    ts_stop(&s);
    finish_loop();
}

/* ---- credentials and redirects --------------------------------------------------- */

/* The service host redirects to target_host:<the second server's port>; what did the
 * second server get? */
static bool credentials_after_redirect(const char *target_host, bool both_in_service)
{
    test_server_t target = { .answer = BROKER_ANSWER };
    ts_start(&target);
    char redirect[512];
    test_server_t first = { .answer = redirect_to(redirect, sizeof redirect, target_host,
                                                  target.port) };
    ts_start(&first);
    char url[128];
    if (both_in_service)
        snprintf(url, sizeof url, "http://127.0.0.1:%d,%s:%d", first.port, target_host,
                 target.port);
    else
        snprintf(url, sizeof url, "http://127.0.0.1:%d", first.port);
    use_service(url);
    answer_t a = lookup();
    cr_expect_eq(a.res, PULSARC_OK, "%s: %s", pulsarc_result_name(a.res), a.detail);
    cr_expect(has_credentials(&first), "the service host got no credentials");
    cr_assert_eq(ts_requests(&target), 1, "the redirect was not followed");
    bool got = has_credentials(&target);
    ts_stop(&first);
    ts_stop(&target);
    finish_loop();
    return got;
}

Test(http_lookup, redirect_to_another_port_goes_without_credentials)
{
    cr_expect_not(credentials_after_redirect("127.0.0.1", false),
                  "the Authorization header followed a redirect to another port");
}

Test(http_lookup, redirect_to_another_host_goes_without_credentials)
{
    cr_expect_not(credentials_after_redirect("localhost", false),
                  "the Authorization header followed a redirect to another host");
}

Test(http_lookup, redirect_to_another_service_host_keeps_credentials)
{
    cr_expect(credentials_after_redirect("localhost", true),
              "a host of the service URL got no credentials");
}

Test(http_lookup, allow_redirect_setting_sends_credentials_anywhere)
{
    rt.limits.http_auth_any_redirect = true;
    cr_expect(credentials_after_redirect("localhost", false),
              "httpLookupAuthAllowRedirect=true: the credentials should have followed");
}

/* listenerName: the broker answers with that listener's addresses. A broker that sends
 * the lookup on (to the leader, or to the broker it chose) writes the listener into the
 * redirect's query itself (Pulsar's TopicLookupBase, 2.10 to 4.0), as the Java client
 * relies on: the redirect is followed as it was written. */
Test(http_lookup, listener_name_is_asked_for_and_the_redirect_followed_as_written)
{
    test_server_t target = { .answer = BROKER_ANSWER };
    ts_start(&target);
    char redirect[512];
    snprintf(redirect, sizeof redirect,
             "HTTP/1.1 307 Temporary Redirect\r\nLocation: "
             "http://127.0.0.1:%d/lookup/v2/topic/persistent/public/default/lookup-test"
             "?authoritative=true&listenerName=external\r\nContent-Length: 0\r\n"
             "Connection: close\r\n\r\n",
             target.port);
    test_server_t first = { .answer = redirect };
    ts_start(&first);
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d", first.port);
    use_service(url);
    rt.net.listener_name = "external";
    answer_t a = lookup();
    cr_expect_eq(a.res, PULSARC_OK, "%s: %s", pulsarc_result_name(a.res), a.detail);
    static const char asked[] =
        "GET /lookup/v2/topic/persistent/public/default/lookup-test?listenerName=external "
        "HTTP/1.1\r\n";
    cr_expect(strncmp(ts_last_request(&first), asked, sizeof asked - 1) == 0, "%s",
              ts_last_request(&first));
    static const char followed[] = "GET /lookup/v2/topic/persistent/public/default/lookup-test"
                                   "?authoritative=true&listenerName=external HTTP/1.1\r\n";
    cr_expect(strncmp(ts_last_request(&target), followed, sizeof followed - 1) == 0, "%s",
              ts_last_request(&target));
    ts_stop(&first);
    ts_stop(&target);
    finish_loop();
}

Test(http_lookup, redirects_stop_at_max_lookup_redirects)
{
    /* A relative Location: back to the same server, for ever. */
    test_server_t s = { .answer = "HTTP/1.1 307 Temporary Redirect\r\nLocation: /again\r\n"
                                  "Content-Length: 0\r\nConnection: close\r\n\r\n" };
    ts_start(&s);
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d", s.port);
    use_service(url);
    rt.limits.max_lookup_redirects = 3;
    answer_t a = lookup();
    cr_expect_eq(a.res, PULSARC_ERR_TOO_MANY_REDIRECTS, "%s: %s", pulsarc_result_name(a.res),
                 a.detail);
    cr_expect_eq(ts_requests(&s), 4, "the first request and 3 redirects");
    ts_stop(&s);
    finish_loop();
}

/* ---- a lookup that outlives a cluster switch (net/service_provider.h) --------------- */

/* The old cluster's answer names its brokers: after a switch nobody may be sent there with
 * the new cluster's credentials, whatever it says; the producer looks up again. */
Test(http_lookup, an_answer_from_a_cluster_left_behind_is_dropped)
{
    test_server_t s = { .answer = BROKER_ANSWER };
    ts_start(&s);
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d", s.port);
    use_service(url);
    fake.switch_on_take = true;
    answer_t a = lookup();
    cr_expect_eq(ts_requests(&s), 1, "the request did not go out before the switch");
    cr_expect_eq(a.res, PULSARC_ERR_CONNECTION_CLOSED, "%s: %s", pulsarc_result_name(a.res),
                 a.detail);
    cr_expect_eq(a.broker.port, 0, "the old cluster's broker was handed out");
    cr_expect(strstr(a.detail, "switched to another cluster"), "%s", a.detail);
    ts_stop(&s);
    finish_loop();
}

/* Prepared by the old cluster's provider, finished after the switch: no request at all
 * (the new cluster's provider was never prepared for it). */
Test(http_lookup, a_lookup_prepared_across_a_switch_asks_nobody)
{
    test_server_t s = { .answer = BROKER_ANSWER };
    ts_start(&s);
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d", s.port);
    use_service(url);
    answer_t a = { 0 };
    pc_http_lookup_topic(&rt, TOPIC, on_lookup, &a);
    rt.cluster_switches++; /* before the provider's prepare has finished */
    while (a.calls == 0 && uv_run(&loop, UV_RUN_ONCE))
        ;
    cr_expect_eq(a.res, PULSARC_ERR_CONNECTION_CLOSED, "%s: %s", pulsarc_result_name(a.res),
                 a.detail);
    cr_expect_eq(ts_requests(&s), 0, "a request went out after the switch");
    ts_stop(&s);
    finish_loop();
}

/* ---- a custom provider's own header lines (pulsarc_auth_provider_t.http_headers) ----- */

static int custom_header_calls;
static const char *custom_headers = "X-Auth-One: first\r\nX-Auth-Two: second";

static pulsarc_result custom_initial(void *ctx, pulsarc_auth_data_t *out)
{
    (void)ctx;
    return pulsarc_auth_data_set(out, "unused", 6);
}

static pulsarc_result custom_http(void *ctx, pulsarc_auth_data_t *out)
{
    (void)ctx;
    custom_header_calls++;
    return pulsarc_auth_data_set(out, custom_headers, strlen(custom_headers));
}

/* rt.auth becomes a custom provider of method "vault" with custom_http. */
static pc_auth_t *use_custom_provider(void)
{
    pulsarc_auth_provider_t p = { .method_name = "vault",
                                  .initial_data = custom_initial,
                                  .http_headers = custom_http };
    pc_auth_custom_t *cu;
    pc_auth_t *a;
    cr_assert_eq(pc_auth_custom_new(&p, sizeof p, NULL, &cu), PULSARC_OK);
    cr_assert_eq(pc_auth_custom(cu, &a), PULSARC_OK);
    pc_auth_custom_unref(cu);
    rt.auth = a;
    custom_header_calls = 0;
    return a;
}

/* Start s and make it the service URL. */
static void serve(test_server_t *s)
{
    ts_start(s);
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d", s->port);
    use_service(url);
}

Test(http_lookup, custom_provider_headers_go_with_each_lookup)
{
    pc_auth_t *a = use_custom_provider();
    test_server_t s = { .answer = BROKER_ANSWER };
    serve(&s);
    answer_t r = lookup();
    cr_expect_eq(r.res, PULSARC_OK, "%s: %s", pulsarc_result_name(r.res), r.detail);
    cr_expect(strstr(ts_last_request(&s), "\r\nX-Auth-One: first\r\nX-Auth-Two: second\r\n"), "%s",
              ts_last_request(&s));
    cr_expect_null(strstr(ts_last_request(&s), "Authorization"), "%s", ts_last_request(&s));
    r = lookup();
    cr_expect_eq(r.res, PULSARC_OK);
    cr_expect_eq(custom_header_calls, 2, "asked %d times for 2 lookups", custom_header_calls);
    ts_stop(&s);
    pc_auth_free(a);
    finish_loop();
}

Test(http_lookup, custom_provider_headers_stay_off_other_hosts)
{
    pc_auth_t *a = use_custom_provider();
    test_server_t target = { .answer = BROKER_ANSWER };
    ts_start(&target);
    char answer[512];
    test_server_t first = { .answer = redirect_to(answer, sizeof answer, "localhost",
                                                  target.port) };
    serve(&first);
    answer_t r = lookup();
    cr_expect_eq(r.res, PULSARC_OK, "%s: %s", pulsarc_result_name(r.res), r.detail);
    cr_expect(strstr(ts_last_request(&first), "X-Auth-Two: second"), "%s", ts_last_request(&first));
    cr_expect_eq(ts_requests(&target), 1);
    cr_expect_null(strstr(ts_last_request(&target), "X-Auth-"),
                   "a header line followed the redirect: %s", ts_last_request(&target));
    ts_stop(&first);
    ts_stop(&target);
    pc_auth_free(a);
    finish_loop();
}

Test(http_lookup, custom_provider_header_injection_fails_the_lookup_unsent)
{
    pc_auth_t *a = use_custom_provider();
    const char *bad[] = { "X-A: 1\nX-B: 2", "X-A: 1\r\n\r\nGET /x", "X-A: 1\r", "" };
    test_server_t s = { .answer = BROKER_ANSWER };
    serve(&s);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        custom_headers = bad[i];
        answer_t r = lookup();
        cr_expect_eq(r.res, PULSARC_ERR_AUTH_PROVIDER, "case %zu: %s", i,
                     pulsarc_result_name(r.res));
        cr_expect(strstr(r.detail, "\"vault\""), "case %zu: %s", i, r.detail);
        cr_expect_null(strstr(r.detail, "X-A"), "the detail quotes the headers: %s", r.detail);
    }
    custom_headers = "X-Auth-One: first\r\nX-Auth-Two: second";
    cr_expect_eq(ts_requests(&s), 0, "a request went out with bad headers");
    ts_stop(&s);
    pc_auth_free(a);
    finish_loop();
}
