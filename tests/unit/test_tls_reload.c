/* autoCertRefreshSeconds (net/tls_reload.c): a context's files in a temporary directory,
 * replaced between connections; which certificate each session presents is what the
 * in-process server (tests/support/tls_peer.h) received. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../support/test_pki.h"
#include "../support/tls_peer.h"
#include "net/tls.h"
#include "net/tls_internal.h"

static ident_t ca, other_ca, server, first, second;
static char dir[] = "/tmp/pulsarc-tls-reload-XXXXXX";
static char trust_path[64], cert_path[64], key_path[64];

static void install(const ident_t *cert_of, const ident_t *key_of)
{
    pki_write_file(cert_path, cert_pem(cert_of));
    pki_write_file(key_path, key_pem(key_of));
}

static void setup(void)
{
    ca = make_ident("pulsarc test CA", NULL, true, -DAY, 30 * DAY, NULL);
    other_ca = make_ident("another CA", NULL, true, -DAY, 30 * DAY, NULL);
    server = make_ident("localhost", &ca, false, -DAY, 30 * DAY, "DNS:localhost");
    first = make_ident("client-first", &ca, false, -DAY, 30 * DAY, NULL);
    second = make_ident("client-second", &ca, false, -DAY, 30 * DAY, NULL);
    cr_assert_not_null(mkdtemp(dir));
    snprintf(trust_path, sizeof trust_path, "%s/ca.pem", dir);
    snprintf(cert_path, sizeof cert_path, "%s/client.pem", dir);
    snprintf(key_path, sizeof key_path, "%s/client.key", dir);
    pki_write_file(trust_path, cert_pem(&ca));
    install(&first, &first);
}

static void teardown(void)
{
    unlink(trust_path);
    unlink(cert_path);
    unlink(key_path);
    rmdir(dir);
    ident_t *all[] = { &ca, &other_ca, &server, &first, &second };
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        free_ident(all[i]);
}

TestSuite(tls_reload, .init = setup, .fini = teardown);

static pc_tls_ctx_t *ctx_reading_files(unsigned refresh_s, bool resumption)
{
    pc_tls_settings_t s = { .trust_file = trust_path,
                            .cert_file = cert_path,
                            .key_file = key_path,
                            .verify_hostname = true,
                            .session_resumption = resumption,
                            .refresh_s = refresh_s };
    pc_tls_ctx_t *made = NULL;
    pulsarc_result r = pc_tls_ctx_new(&s, &made);
    cr_assert_eq(r, PULSARC_OK, "%s", pulsarc_last_error_detail());
    return made;
}

/* A session on srv_ctx made before the handshake runs (so it may be older than a reload):
 * the certificate the server received, or NULL when the handshake failed. */
typedef struct seen {
    pulsarc_result result;
    bool resumed;
    X509 *client_cert; /* the caller frees it */
} seen_t;

static seen_t finish(pc_tls_session_t *cl, SSL_CTX *srv_ctx)
{
    SSL *srv = server_on(srv_ctx);
    seen_t seen = { .result = handshake(cl, srv) };
    if (seen.result != PULSARC_OK)
        cr_log_info("%s: %s", pulsarc_result_name(seen.result), pc_tls_detail(cl));
    if (seen.result == PULSARC_OK) {
        seen.resumed = pc_tls_resumed(cl);
        seen.client_cert = SSL_get1_peer_certificate(srv);
    }
    SSL_free(srv);
    pc_tls_session_free(cl);
    return seen;
}

static seen_t connect_now(pc_tls_ctx_t *ctx, SSL_CTX *srv_ctx)
{
    pc_tls_session_t *cl = pc_tls_session_new(ctx, "localhost", 6651);
    cr_assert_not_null(cl);
    return finish(cl, srv_ctx);
}

static void expect_presented(seen_t seen, const ident_t *id, const char *when)
{
    cr_assert_eq(seen.result, PULSARC_OK, "%s: %s", when, pulsarc_result_name(seen.result));
    cr_assert_not_null(seen.client_cert, "%s: no client certificate", when);
    cr_expect_eq(X509_cmp(seen.client_cert, id->cert), 0, "%s: not the expected certificate", when);
    X509_free(seen.client_cert);
}

static SSL_CTX *mtls_server(void)
{
    return new_server_ctx((server_opts_t){ .id = &server, .client_ca = &ca });
}

/* What most tests need: a server asking for a client certificate, a context on the files. */
static SSL_CTX *srv;
static pc_tls_ctx_t *ctx;
static char what[256];

static void open_rig(unsigned refresh_s, bool resumption)
{
    srv = mtls_server();
    ctx = ctx_reading_files(refresh_s, resumption);
}

static void close_rig(void)
{
    pc_tls_ctx_free(ctx);
    SSL_CTX_free(srv);
}

Test(tls_reload, unchanged_files_keep_the_context)
{
    ctx = ctx_reading_files(1, false);
    SSL_CTX *before = ctx->ssl_ctx;
    cr_expect_eq(pc_tls_ctx_refresh(ctx, 0, what, sizeof what), PC_TLS_REFRESH_NONE);
    cr_expect_eq(pc_tls_ctx_refresh(ctx, 5000, what, sizeof what), PC_TLS_REFRESH_NONE);
    cr_expect_eq(ctx->ssl_ctx, before, "a context was built although nothing changed");
    pc_tls_ctx_free(ctx);
}

/* New files serve the next session once the period has passed; a session made before
 * keeps presenting the old certificate, even when its handshake runs after the change. */
Test(tls_reload, changed_cert_and_key_serve_the_next_session_only)
{
    open_rig(1, false);
    cr_assert_eq(pc_tls_ctx_refresh(ctx, 10000, what, sizeof what), PC_TLS_REFRESH_NONE);
    pc_tls_session_t *old = pc_tls_session_new(ctx, "localhost", 6651);
    install(&second, &second);
    cr_expect_eq(pc_tls_ctx_refresh(ctx, 10500, what, sizeof what), PC_TLS_REFRESH_NONE,
                 "looked again before autoCertRefreshSeconds had passed");
    expect_presented(connect_now(ctx, srv), &first, "within the period");
    cr_assert_eq(pc_tls_ctx_refresh(ctx, 11000, what, sizeof what), PC_TLS_REFRESH_RELOADED);
    cr_expect(strstr(what, "CN=client-second") != NULL, "%s", what);
    cr_expect(strstr(what, "serial") != NULL, "%s", what);
    expect_presented(connect_now(ctx, srv), &second, "after the reload");
    expect_presented(finish(old, srv), &first, "the session made before");
    close_rig();
}

/* A key that does not match (the certificate replaced, its key not yet): the old
 * context stays, the reason names no secret, and the next due look tries again. */
Test(tls_reload, a_key_not_matching_keeps_the_old_context)
{
    open_rig(1, false);
    SSL_CTX *before = ctx->ssl_ctx;
    pki_write_file(cert_path, cert_pem(&second));
    cr_assert_eq(pc_tls_ctx_refresh(ctx, 1000, what, sizeof what), PC_TLS_REFRESH_FAILED);
    cr_expect(strstr(what, "match") != NULL, "%s", what);
    cr_expect(strstr(what, "PRIVATE") == NULL && strstr(what, "BEGIN") == NULL, "%s", what);
    cr_expect_eq(ctx->ssl_ctx, before);
    expect_presented(connect_now(ctx, srv), &first, "after the failed reload");
    pki_write_file(key_path, key_pem(&second));
    cr_assert_eq(pc_tls_ctx_refresh(ctx, 2000, what, sizeof what), PC_TLS_REFRESH_RELOADED, "%s",
                 what);
    expect_presented(connect_now(ctx, srv), &second, "once the key was there");
    close_rig();
}

Test(tls_reload, a_file_half_written_keeps_the_old_context)
{
    ctx = ctx_reading_files(1, false);
    char *pem = cert_pem(&second);
    pem[strlen(pem) / 2] = '\0';
    pki_write_file(cert_path, pem);
    cr_expect_eq(pc_tls_ctx_refresh(ctx, 1000, what, sizeof what), PC_TLS_REFRESH_FAILED);
    cr_expect(strstr(what, "tlsCertificateFilePath") != NULL, "%s", what);
    pc_tls_ctx_free(ctx);
}

Test(tls_reload, zero_reads_the_files_once)
{
    open_rig(0, false);
    install(&second, &second);
    cr_expect_eq(pc_tls_ctx_refresh(ctx, 3600 * 1000, what, sizeof what), PC_TLS_REFRESH_NONE);
    expect_presented(connect_now(ctx, srv), &first, "with autoCertRefreshSeconds=0");
    close_rig();
}

/* A resumed session presents the identity of the handshake that made it: after a change
 * none made before is offered, not even one whose ticket arrives after it. */
Test(tls_reload, no_session_made_before_the_change_is_resumed)
{
    open_rig(1, true);
    seen_t s1 = connect_now(ctx, srv);
    expect_presented(s1, &first, "first");
    cr_assert_gt(pc_tls_cache_count(ctx->cache, NULL, 0), 0, "nothing to resume: no test");
    pc_tls_session_t *old = pc_tls_session_new(ctx, "localhost", 6651);
    install(&second, &second);
    cr_assert_eq(pc_tls_ctx_refresh(ctx, 1000, what, sizeof what), PC_TLS_REFRESH_RELOADED);
    cr_expect_eq(pc_tls_cache_count(ctx->cache, NULL, 0), 0, "sessions of the old identity kept");
    seen_t s_old = finish(old, srv); /* resumes the old identity's session; gets tickets */
    cr_assert_eq(s_old.result, PULSARC_OK, "%s", pulsarc_result_name(s_old.result));
    X509_free(s_old.client_cert);
    cr_expect_eq(pc_tls_cache_count(ctx->cache, NULL, 0), 0, "an old connection's ticket kept");
    seen_t s2 = connect_now(ctx, srv);
    cr_expect_not(s2.resumed, "the first session after the change was resumed");
    expect_presented(s2, &second, "after the change");
    seen_t s3 = connect_now(ctx, srv);
    cr_expect(s3.resumed, "the new identity's session was not resumed");
    expect_presented(s3, &second, "resumed after the change");
    close_rig();
}

Test(tls_reload, a_new_trust_file_is_used)
{
    srv = mtls_server();
    pki_write_file(trust_path, cert_pem(&other_ca));
    ctx = ctx_reading_files(1, false);
    seen_t refused = connect_now(ctx, srv);
    cr_assert_eq(refused.result, PULSARC_ERR_TLS_UNTRUSTED, "%s",
                 pulsarc_result_name(refused.result));
    pki_write_file(trust_path, cert_pem(&ca));
    cr_assert_eq(pc_tls_ctx_refresh(ctx, 1000, what, sizeof what), PC_TLS_REFRESH_RELOADED);
    expect_presented(connect_now(ctx, srv), &first, "with the new trust file");
    close_rig();
}

/* A shared handle (the test seam's) re-reads on its own: the original keeps its context. */
Test(tls_reload, a_shared_handle_reloads_on_its_own)
{
    ctx = ctx_reading_files(1, false);
    pc_tls_ctx_t *shared = NULL;
    cr_assert_eq(pc_tls_ctx_share(ctx, &shared), PULSARC_OK);
    install(&second, &second);
    cr_expect_eq(pc_tls_ctx_refresh(shared, 1000, what, sizeof what), PC_TLS_REFRESH_RELOADED);
    cr_expect_neq(shared->ssl_ctx, ctx->ssl_ctx);
    pc_tls_ctx_free(shared);
    cr_expect_eq(pc_tls_ctx_refresh(ctx, 1000, what, sizeof what), PC_TLS_REFRESH_RELOADED);
    pc_tls_ctx_free(ctx);
}
