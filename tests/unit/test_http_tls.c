/* pc_http over TLS against a server on a thread of its own (tests/support): tlsProtocols
 * and tlsCiphers apply to HTTPS as they do to the binary protocol, an https request is
 * never redirected to plain http, the OAuth2 issuer is verified whatever the broker's
 * insecure settings say, and curl keeps no copy of a client key given as PEM. */
#include <criterion/criterion.h>
#include <curl/curl.h>
#include <malloc.h>
#include <openssl/ssl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

#include "../support/test_http_server.h"
#include "../support/test_outcomes.h"
#include "../support/test_pki.h"
#include "auth/auth.h"
#include "config/config.h"
#include "common/error.h"
#include "net/http.h"

static ident_t ca, server_id, self_signed, client_id;
static uv_loop_t loop;
static pc_logger_t logger = { .level = PULSARC_LOG_ERROR };

static void setup(void)
{
    ca = make_ident("pulsarc test CA", NULL, true, -DAY, 30 * DAY, NULL);
    server_id = make_ident("localhost", &ca, false, -DAY, 30 * DAY, "DNS:localhost,IP:127.0.0.1");
    self_signed = make_ident("localhost", NULL, false, -DAY, 30 * DAY, "DNS:localhost");
    client_id = make_ident("client-role", &ca, false, -DAY, 30 * DAY, NULL);
    uv_loop_init(&loop);
}

static void teardown(void)
{
    ident_t *all[] = { &ca, &server_id, &self_signed, &client_id };
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        free_ident(all[i]);
}

TestSuite(http_tls, .init = setup, .fini = teardown);

static const char OK_ANSWER[] = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n"
                                "\r\nok";

/* The server side: id's certificate, at most max_version (0: any), only these TLS 1.2
 * ciphers (NULL: OpenSSL's), and the client's certificate required when asked. */
static SSL_CTX *server_ctx(const ident_t *id, int max_version, const char *ciphers,
                           bool require_client_cert)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    cr_assert(SSL_CTX_use_certificate(ctx, id->cert) == 1);
    cr_assert(SSL_CTX_use_PrivateKey(ctx, id->key) == 1);
    if (max_version)
        SSL_CTX_set_max_proto_version(ctx, max_version);
    if (ciphers)
        cr_assert(SSL_CTX_set_cipher_list(ctx, ciphers) == 1);
    if (require_client_cert) {
        X509_STORE_add_cert(SSL_CTX_get_cert_store(ctx), ca.cert);
        SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
    }
    return ctx;
}

/* One GET with tls to port's path (as https://localhost), run to its end; the client is
 * freed and the loop run dry before returning. */
static outcome_t get_once(const pc_http_tls_t *tls, int port, const char *header)
{
    pc_http_t *h = pc_http_new(&loop, &logger, tls);
    cr_assert_not_null(h);
    char url[128];
    snprintf(url, sizeof url, "https://localhost:%d/x", port);
    outcome_t o = { 0 };
    cr_assert_eq(pc_http_get(h, url, header, 10000, on_done, &o), 0, "%s",
                 pulsarc_last_error_detail());
    while (o.calls == 0 && uv_run(&loop, UV_RUN_ONCE))
        ;
    pc_http_free(h);
    uv_run(&loop, UV_RUN_DEFAULT);
    cr_assert_eq(o.calls, 1);
    return o;
}

/* pc_http_tls_t trusting the test CA (PEM in memory). */
static pc_http_tls_t trusting_ca(void)
{
    static char *pem;
    free(pem);
    pem = cert_pem(&ca);
    return (pc_http_tls_t){ .trust_certs_pem = pem, .verify_hostname = 1 };
}

/* A file holding id's certificate, for settings that take a path. */
static const char *cert_file(const ident_t *id, char *path, size_t cap)
{
    snprintf(path, cap, "/tmp/pulsarc-test-cert-XXXXXX");
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    char *pem = cert_pem(id);
    cr_assert_eq(write(fd, pem, strlen(pem)), (ssize_t)strlen(pem));
    close(fd);
    free(pem);
    return path;
}

/* ---- tlsProtocols and tlsCiphers ------------------------------------------------- */

Test(http_tls, protocols_apply_to_https)
{
    test_server_t s = { .ctx = server_ctx(&server_id, TLS1_2_VERSION, NULL, false),
                        .answer = OK_ANSWER };
    ts_start(&s);
    pc_http_tls_t tls = trusting_ca();
    tls.protocols = "TLSv1.3";
    outcome_t o = get_once(&tls, s.port, NULL);
    cr_expect_eq(o.res, PULSARC_ERR_TLS_HANDSHAKE,
                 "a TLS 1.2 server with tlsProtocols=TLSv1.3: "
                 "%s %s",
                 pulsarc_result_name(o.res), o.detail);
    cr_expect_eq(ts_requests(&s), 0);

    tls.protocols = "TLSv1.2,TLSv1.3";
    o = get_once(&tls, s.port, NULL);
    cr_expect_eq(o.res, PULSARC_OK, "%s %s", pulsarc_result_name(o.res), o.detail);
    cr_expect_eq(o.status, 200);
    ts_stop(&s);
    SSL_CTX_free(s.ctx);
}

Test(http_tls, ciphers_apply_to_https)
{
    test_server_t s = { .ctx = server_ctx(&server_id, TLS1_2_VERSION,
                                          "ECDHE-ECDSA-AES128-GCM-SHA256", false),
                        .answer = OK_ANSWER };
    ts_start(&s);
    pc_http_tls_t tls = trusting_ca();
    tls.ciphers = "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384"; /* the server lacks it */
    outcome_t o = get_once(&tls, s.port, NULL);
    cr_expect_eq(o.res, PULSARC_ERR_TLS_HANDSHAKE, "%s %s", pulsarc_result_name(o.res), o.detail);
    cr_expect_eq(ts_requests(&s), 0);

    tls.ciphers = "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"; /* IANA names, as Java's */
    o = get_once(&tls, s.port, NULL);
    cr_expect_eq(o.res, PULSARC_OK, "%s %s", pulsarc_result_name(o.res), o.detail);
    ts_stop(&s);
    SSL_CTX_free(s.ctx);
}

Test(http_tls, bad_protocol_list_is_a_config_error)
{
    test_server_t s = { .ctx = server_ctx(&server_id, 0, NULL, false), .answer = OK_ANSWER };
    ts_start(&s);
    pc_http_tls_t tls = trusting_ca();
    tls.protocols = "TLSv9";
    outcome_t o = get_once(&tls, s.port, NULL);
    cr_expect_eq(o.res, PULSARC_ERR_TLS_CONFIG, "%s %s", pulsarc_result_name(o.res), o.detail);
    cr_expect(strstr(o.detail, "tlsProtocols") != NULL, "%s", o.detail);
    ts_stop(&s);
    SSL_CTX_free(s.ctx);
}

/* ---- redirects ------------------------------------------------------------------- */

Test(http_tls, redirect_from_https_to_plain_http_is_refused)
{
    test_server_t plain = { .answer = OK_ANSWER };
    ts_start(&plain);
    char redirect[256];
    snprintf(redirect, sizeof redirect,
             "HTTP/1.1 307 Temporary Redirect\r\nLocation: "
             "http://localhost:%d/x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
             plain.port);
    test_server_t s = { .ctx = server_ctx(&server_id, 0, NULL, false), .answer = redirect };
    ts_start(&s);
    pc_http_tls_t tls = trusting_ca();
    outcome_t o = get_once(&tls, s.port, "Authorization: Bearer do-not-downgrade");
    cr_expect_eq(o.res, PULSARC_ERR_PROTOCOL, "%s %s", pulsarc_result_name(o.res), o.detail);
    cr_expect(strstr(o.detail, "plain http") != NULL, "%s", o.detail);
    cr_expect_eq(ts_requests(&s), 1);
    cr_expect_eq(ts_requests(&plain), 0, "the request went on over plain http");
    ts_stop(&s);
    ts_stop(&plain);
    SSL_CTX_free(s.ctx);
}

/* ---- the OAuth2 issuer's TLS ----------------------------------------------------- */

static pulsarc_client_config_t *insecure_broker_settings(void)
{
    pulsarc_client_config_t *conf = pulsarc_client_config_new();
    cr_assert_eq(pulsarc_client_config_set(conf, "tlsAllowInsecureConnection", "true"), PULSARC_OK);
    cr_assert_eq(pulsarc_client_config_set(conf, "tlsEnableHostnameVerification", "false"),
                 PULSARC_OK);
    return conf;
}

/* The broker may be tested insecurely; the issuer, which receives the client secret, is
 * verified anyway: a self-signed certificate is refused unless the issuer's own CA file
 * holds it. */
Test(http_tls, issuer_tls_ignores_the_broker_insecure_settings)
{
    test_server_t s = { .ctx = server_ctx(&self_signed, 0, NULL, false), .answer = OK_ANSWER };
    ts_start(&s);
    pulsarc_client_config_t *conf = insecure_broker_settings();
    pc_http_tls_t tls;
    cr_assert_eq(pc_client_issuer_http_tls(conf, NULL, &tls), PULSARC_OK);
    outcome_t o = get_once(&tls, s.port, NULL);
    cr_expect_eq(o.res, PULSARC_ERR_TLS_UNTRUSTED, "%s %s", pulsarc_result_name(o.res), o.detail);
    cr_expect_eq(ts_requests(&s), 0);

    char path[64];
    cr_assert_eq(pc_client_issuer_http_tls(conf, cert_file(&self_signed, path, sizeof path), &tls),
                 PULSARC_OK);
    o = get_once(&tls, s.port, NULL);
    cr_expect_eq(o.res, PULSARC_OK, "the issuer's own CA file: %s %s", pulsarc_result_name(o.res),
                 o.detail);
    unlink(path);
    pulsarc_client_config_free(conf);
    ts_stop(&s);
    SSL_CTX_free(s.ctx);
}

Test(http_tls, issuer_trust_file_that_does_not_load_fails_at_once)
{
    pulsarc_client_config_t *conf = pulsarc_client_config_new();
    pc_http_tls_t tls;
    pulsarc_result r = pc_client_issuer_http_tls(conf, "/nonexistent/ca.pem", &tls);
    cr_expect_eq(r, PULSARC_ERR_TLS_CONFIG, "%s", pulsarc_result_name(r));
    cr_expect(strstr(pulsarc_last_error_detail(), "trustCertsFilePath") != NULL, "%s",
              pulsarc_last_error_detail());
    cr_assert_eq(pulsarc_client_config_set(conf, "tlsProtocols", "TLSv1"), PULSARC_OK);
    cr_expect_eq(pc_client_issuer_http_tls(conf, NULL, &tls), PULSARC_ERR_TLS_CONFIG);
    pulsarc_client_config_free(conf);
}

/* The same through the client's own set-up of the provider's HTTP client: with the
 * broker's verification switched off, an issuer with a self-signed certificate still
 * gets no request, and the token fetch fails naming the TLS trouble. */
Test(http_tls, oauth2_fetch_refuses_an_untrusted_issuer_under_insecure_broker_settings)
{
    test_server_t s = { .ctx = server_ctx(&self_signed, 0, NULL, false), .answer = OK_ANSWER };
    ts_start(&s);
    char issuer[64];
    snprintf(issuer, sizeof issuer, "https://localhost:%d", s.port);
    pc_auth_t *a;
    pc_auth_oauth2_params_t p = { .issuer_url = issuer,
                                  .client_id = "id",
                                  .client_secret = "never-sent" };
    cr_assert_eq(pc_auth_oauth2(&p, &a), PULSARC_OK);
    pulsarc_client_config_t *conf = insecure_broker_settings();
    pc_runtime_t rt = { .loop = &loop, .log = &logger };
    cr_assert_eq(pc_client_auth_http(conf, &rt, a), PULSARC_OK, "%s", pulsarc_last_error_detail());
    waiter_t x = { 0 };
    pc_auth_prepare(a, &x.w, on_ready, &x);
    while (x.calls == 0 && uv_run(&loop, UV_RUN_ONCE))
        ;
    cr_expect_eq(x.res, PULSARC_ERR_AUTH_PROVIDER, "%s", pulsarc_result_name(x.res));
    cr_expect(strstr(x.detail, "TLS_UNTRUSTED") != NULL, "%s", x.detail);
    cr_expect_eq(ts_requests(&s), 0, "the issuer was talked to");
    pc_auth_use_http(a, NULL);
    uv_run(&loop, UV_RUN_DEFAULT);
    pc_auth_free(a);
    pulsarc_client_config_free(conf);
    ts_stop(&s);
    SSL_CTX_free(s.ctx);
}

/* ---- curl's copy of a client key --------------------------------------------------- */

/* curl's allocator, watching what curl frees for the key's text. */
static char key_marker[48];
static atomic_int key_left_behind, curl_frees;

static void watch(void *p)
{
    if (!p)
        return;
    atomic_fetch_add(&curl_frees, 1);
    if (memmem(p, malloc_usable_size(p), key_marker, strlen(key_marker)))
        atomic_fetch_add(&key_left_behind, 1);
}

static void w_free(void *p)
{
    watch(p);
    free(p);
}

static void *w_realloc(void *p, size_t n)
{
    if (!p)
        return malloc(n);
    size_t old = malloc_usable_size(p);
    void *q = malloc(n ? n : 1);
    if (!q)
        return NULL;
    memcpy(q, p, old < n ? old : n);
    w_free(p);
    return q;
}

static char *w_strdup(const char *s)
{
    return strdup(s);
}

/* A key given as PEM reaches curl without a copy (CURL_BLOB_NOCOPY): a copy would be
 * freed with the transfer, unwiped. The mTLS request itself must work. */
Test(http_tls, client_key_pem_is_not_copied_by_curl)
{
    cr_assert_eq(curl_global_init_mem(CURL_GLOBAL_DEFAULT, malloc, w_free, w_realloc, w_strdup,
                                      calloc),
                 CURLE_OK);
    char *cert = cert_pem(&client_id), *key = key_pem(&client_id);
    const char *body = strchr(key, '\n') + 1; /* the first line of base64 */
    snprintf(key_marker, sizeof key_marker, "%.40s", body);
    test_server_t s = { .ctx = server_ctx(&server_id, 0, NULL, true), .answer = OK_ANSWER };
    ts_start(&s);
    pc_http_tls_t tls = trusting_ca();
    tls.cert_pem = cert;
    tls.key_pem = key;
    outcome_t o = get_once(&tls, s.port, NULL);
    cr_expect_eq(o.res, PULSARC_OK, "mTLS: %s %s", pulsarc_result_name(o.res), o.detail);
    cr_expect_eq(ts_requests(&s), 1);
    cr_expect_gt(atomic_load(&curl_frees), 0, "curl did not use the watching allocator");
    cr_expect_eq(atomic_load(&key_left_behind), 0, "curl freed %d block(s) holding the client key",
                 atomic_load(&key_left_behind));
    ts_stop(&s);
    SSL_CTX_free(s.ctx);
    free(cert);
    free(key);
    curl_global_cleanup();
}
