/* TLS sessions against an in-process OpenSSL server, through memory only. Every CA,
 * certificate and key is made at test time, so the tests need no files and no network. */
#include <criterion/criterion.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../support/test_pki.h"
#include "../support/tls_peer.h"
#include "config/config.h"
#include "net/tls.h"
#include "net/tls_internal.h"

static ident_t ca, other_ca, server, expired, self_signed, client_id;

static void make_pki(void)
{
    ca = make_ident("pulsarc test CA", NULL, true, -DAY, 30 * DAY, NULL);
    other_ca = make_ident("another CA", NULL, true, -DAY, 30 * DAY, NULL);
    server = make_ident("localhost", &ca, false, -DAY, 30 * DAY, "DNS:localhost,IP:127.0.0.1");
    expired = make_ident("localhost", &ca, false, -30 * DAY, -DAY, "DNS:localhost");
    self_signed = make_ident("localhost", NULL, false, -DAY, 30 * DAY, "DNS:localhost");
    client_id = make_ident("client-role", &ca, false, -DAY, 30 * DAY, NULL);
}

static void free_pki(void)
{
    ident_t *all[] = { &ca, &other_ca, &server, &expired, &self_signed, &client_id };
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        free_ident(all[i]);
}

TestSuite(tls, .init = make_pki, .fini = free_pki);

static pc_tls_ctx_t *new_ctx(pc_tls_settings_t s)
{
    pc_tls_ctx_t *ctx = NULL;
    pulsarc_result r = pc_tls_ctx_new(&s, &ctx);
    cr_assert_eq(r, PULSARC_OK, "context: %s: %s", pulsarc_result_name(r),
                 pulsarc_last_error_detail());
    return ctx;
}

static pulsarc_result connect_to(pc_tls_settings_t s, const char *host, server_opts_t o)
{
    pc_tls_ctx_t *ctx = new_ctx(s);
    pc_tls_session_t *cl = pc_tls_session_new(ctx, host, 6651);
    cr_assert_not_null(cl);
    SSL *srv = new_server(o);
    pulsarc_result r = handshake(cl, srv);
    if (r != PULSARC_OK)
        cr_log_info("%s: %s", pulsarc_result_name(r), pc_tls_detail(cl));
    SSL_free(srv);
    pc_tls_session_free(cl);
    pc_tls_ctx_free(ctx);
    return r;
}

static pc_tls_settings_t trusting(const ident_t *trusted)
{
    static char *pem; /* one per test process */
    free(pem);
    pem = cert_pem(trusted);
    return (pc_tls_settings_t){ .trust_pem = pem, .verify_hostname = true };
}

/* ---- tests -------------------------------------------------------------------- */

Test(tls, handshake_and_data_with_the_right_ca)
{
    pc_tls_ctx_t *ctx = new_ctx(trusting(&ca));
    pc_tls_session_t *cl = pc_tls_session_new(ctx, "localhost", 6651);
    SSL *srv = new_server((server_opts_t){ .id = &server });
    cr_assert_eq(handshake(cl, srv), PULSARC_OK, "%s", pc_tls_detail(cl));
    cr_assert(pc_tls_established(cl));

    cr_assert_eq(pc_tls_write(cl, (const uint8_t *)"ping", 4), 0);
    client_to_server(cl, srv);
    char got[16] = "";
    cr_assert_eq(SSL_read(srv, got, sizeof got), 4);
    cr_assert_eq(memcmp(got, "ping", 4), 0);

    cr_assert_eq(SSL_write(srv, "pong!", 5), 5);
    server_to_client(srv, cl);
    uint8_t back[16];
    cr_assert_eq(pc_tls_read(cl, back, sizeof back), 5);
    cr_assert_eq(memcmp(back, "pong!", 5), 0);
    cr_assert_eq(pc_tls_read(cl, back, sizeof back), 0, "nothing more buffered");

    SSL_free(srv);
    pc_tls_session_free(cl);
    pc_tls_ctx_free(ctx);
}

Test(tls, ip_literal_is_checked_as_an_address)
{
    server_opts_t o = { .id = &server };
    cr_expect_eq(connect_to(trusting(&ca), "127.0.0.1", o), PULSARC_OK);
    cr_expect_eq(connect_to(trusting(&ca), "127.0.0.2", o), PULSARC_ERR_TLS_HOSTNAME);
}

Test(tls, another_ca_is_untrusted)
{
    cr_expect_eq(connect_to(trusting(&other_ca), "localhost", (server_opts_t){ .id = &server }),
                 PULSARC_ERR_TLS_UNTRUSTED);
}

Test(tls, self_signed_is_untrusted)
{
    cr_expect_eq(connect_to(trusting(&ca), "localhost", (server_opts_t){ .id = &self_signed }),
                 PULSARC_ERR_TLS_UNTRUSTED);
}

Test(tls, insecure_accepts_anything)
{
    pc_tls_settings_t s = { .allow_insecure = true, .verify_hostname = true };
    cr_expect_eq(connect_to(s, "elsewhere", (server_opts_t){ .id = &self_signed }), PULSARC_OK);
}

Test(tls, hostname_mismatch_and_switching_it_off)
{
    server_opts_t o = { .id = &server };
    pc_tls_settings_t s = trusting(&ca);
    cr_expect_eq(connect_to(s, "broker.example.com", o), PULSARC_ERR_TLS_HOSTNAME);
    s.verify_hostname = false;
    cr_expect_eq(connect_to(s, "broker.example.com", o), PULSARC_OK);
}

Test(tls, hostname_detail_names_the_host)
{
    pc_tls_ctx_t *ctx = new_ctx(trusting(&ca));
    pc_tls_session_t *cl = pc_tls_session_new(ctx, "broker.example.com", 6651);
    SSL *srv = new_server((server_opts_t){ .id = &server });
    cr_assert_eq(handshake(cl, srv), PULSARC_ERR_TLS_HOSTNAME);
    cr_expect(strstr(pc_tls_detail(cl), "broker.example.com") != NULL, "%s", pc_tls_detail(cl));
    SSL_free(srv);
    pc_tls_session_free(cl);
    pc_tls_ctx_free(ctx);
}

Test(tls, expired_certificate)
{
    cr_expect_eq(connect_to(trusting(&ca), "localhost", (server_opts_t){ .id = &expired }),
                 PULSARC_ERR_TLS_EXPIRED);
}

Test(tls, missing_client_certificate)
{
    server_opts_t o = { .id = &server, .client_ca = &ca };
    cr_expect_eq(connect_to(trusting(&ca), "localhost", o), PULSARC_ERR_TLS_CLIENT_CERT);
    /* TLS 1.2 reports it differently (a handshake_failure alert during the handshake). */
    pc_tls_settings_t s = trusting(&ca);
    s.protocols = "TLSv1.2";
    cr_expect_eq(connect_to(s, "localhost", o), PULSARC_ERR_TLS_CLIENT_CERT);
}

Test(tls, client_certificate_from_memory)
{
    server_opts_t o = { .id = &server, .client_ca = &ca };
    pc_tls_settings_t s = trusting(&ca);
    char *cert = cert_pem(&client_id), *key = key_pem(&client_id);
    s.cert_pem = cert;
    s.key_pem = key;
    cr_expect_eq(connect_to(s, "localhost", o), PULSARC_OK);
    /* A certificate the server's CA did not sign. */
    char *other = cert_pem(&self_signed), *other_key = key_pem(&self_signed);
    s.cert_pem = other;
    s.key_pem = other_key;
    cr_expect_eq(connect_to(s, "localhost", o), PULSARC_ERR_TLS_CLIENT_CERT);
    free(cert);
    free(key);
    free(other);
    free(other_key);
}

Test(tls, plain_text_peer)
{
    pc_tls_ctx_t *ctx = new_ctx(trusting(&ca));
    pc_tls_session_t *cl = pc_tls_session_new(ctx, "localhost", 6651);
    cr_assert_eq(pc_tls_handshake(cl), PC_TLS_WANT_MORE);
    static const uint8_t frame[] = { 0, 0, 0, 12, 0, 0, 0, 8, 8, 3, 'x', 'y', 'z', 'w', 0, 0 };
    cr_assert_eq(pc_tls_feed(cl, frame, sizeof frame), 0);
    cr_expect_eq(pc_tls_handshake(cl), PC_TLS_FAILED);
    cr_expect_eq(pc_tls_result(cl), PULSARC_ERR_TLS_HANDSHAKE, "%s", pc_tls_detail(cl));
    cr_log_info("%s", pc_tls_detail(cl));
    pc_tls_session_free(cl);

    /* A peer that hangs up on the ClientHello. */
    cl = pc_tls_session_new(ctx, "localhost", 6651);
    cr_assert_eq(pc_tls_handshake(cl), PC_TLS_WANT_MORE);
    pc_tls_fail_eof(cl);
    cr_expect_eq(pc_tls_result(cl), PULSARC_ERR_TLS_HANDSHAKE);
    pc_tls_session_free(cl);
    pc_tls_ctx_free(ctx);
}

Test(tls, tls_1_1_refused)
{
    server_opts_t o = { .id = &server, .max_version = TLS1_1_VERSION };
    cr_expect_eq(connect_to(trusting(&ca), "localhost", o), PULSARC_ERR_TLS_HANDSHAKE);
}

Test(tls, protocols_narrow_but_never_widen)
{
    pc_tls_settings_t s = trusting(&ca);
    s.protocols = "TLSv1.3";
    cr_expect_eq(connect_to(s, "localhost",
                            (server_opts_t){ .id = &server, .max_version = TLS1_2_VERSION }),
                 PULSARC_ERR_TLS_HANDSHAKE);
    pc_tls_ctx_t *ctx = NULL;
    s.protocols = "TLSv1.1";
    cr_expect_eq(pc_tls_ctx_new(&s, &ctx), PULSARC_ERR_TLS_CONFIG);
    s.protocols = "TLSv9";
    cr_expect_eq(pc_tls_ctx_new(&s, &ctx), PULSARC_ERR_TLS_CONFIG);
    cr_expect_null(ctx);
}

Test(tls, ciphers_take_iana_and_openssl_names)
{
    pc_tls_settings_t s = trusting(&ca);
    s.ciphers = "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256";
    s.protocols = "TLSv1.2";
    cr_expect_eq(connect_to(s, "localhost", (server_opts_t){ .id = &server }), PULSARC_OK);
    s.ciphers = "TLS_AES_256_GCM_SHA384";
    s.protocols = NULL;
    cr_expect_eq(connect_to(s, "localhost", (server_opts_t){ .id = &server }), PULSARC_OK);
    pc_tls_ctx_t *ctx = NULL;
    s.ciphers = "NOT-A-CIPHER";
    cr_expect_eq(pc_tls_ctx_new(&s, &ctx), PULSARC_ERR_TLS_CONFIG);
}

/* Only TLS 1.2 ciphers named and no tlsProtocols: TLS 1.2 is negotiated (OpenSSL would
 * otherwise offer TLS 1.3 with no suite and refuse to send a ClientHello at all). */
Test(tls, tls12_ciphers_alone_mean_tls12)
{
    pc_tls_settings_t s = trusting(&ca);
    s.ciphers = "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256";
    cr_expect_eq(connect_to(s, "localhost", (server_opts_t){ .id = &server }), PULSARC_OK);
    s.ciphers = "ECDHE-ECDSA-AES128-GCM-SHA256";
    cr_expect_eq(connect_to(s, "localhost", (server_opts_t){ .id = &server }), PULSARC_OK);
    pc_tls_ctx_t *ctx = NULL;
    s.protocols = "TLSv1.3";
    cr_expect_eq(pc_tls_ctx_new(&s, &ctx), PULSARC_ERR_TLS_CONFIG, "no version left");
    s.ciphers = "TLS_AES_128_GCM_SHA256";
    s.protocols = "TLSv1.2";
    cr_expect_eq(pc_tls_ctx_new(&s, &ctx), PULSARC_ERR_TLS_CONFIG, "no version left");
}

Test(tls, bad_material_is_a_config_error_without_secrets)
{
    pc_tls_ctx_t *ctx = NULL;
    pc_tls_settings_t s = { .trust_pem = "not a certificate" };
    cr_expect_eq(pc_tls_ctx_new(&s, &ctx), PULSARC_ERR_TLS_CONFIG);
    s = (pc_tls_settings_t){ .trust_file = "/nonexistent/ca.pem" };
    cr_expect_eq(pc_tls_ctx_new(&s, &ctx), PULSARC_ERR_TLS_CONFIG);
    cr_expect(strstr(pulsarc_last_error_detail(), "/nonexistent/ca.pem") != NULL);

    char *cert = cert_pem(&client_id);
    const char *key = "-----BEGIN PRIVATE KEY-----\nSECRETKEYMATERIAL\n-----END PRIVATE KEY-----\n";
    s = (pc_tls_settings_t){ .allow_insecure = true, .cert_pem = cert, .key_pem = key };
    cr_expect_eq(pc_tls_ctx_new(&s, &ctx), PULSARC_ERR_TLS_CONFIG);
    cr_expect(strstr(pulsarc_last_error_detail(), "SECRETKEYMATERIAL") == NULL);
    /* A key that is fine but not the certificate's. */
    char *wrong = key_pem(&server);
    s.key_pem = wrong;
    cr_expect_eq(pc_tls_ctx_new(&s, &ctx), PULSARC_ERR_TLS_CONFIG);
    s.key_pem = NULL;
    cr_expect_eq(pc_tls_ctx_new(&s, &ctx), PULSARC_ERR_TLS_CONFIG, "certificate without key");
    cr_expect_null(ctx);
    free(cert);
    free(wrong);
}

Test(tls, config_pem_api_copies_and_checks)
{
    pulsarc_client_config_t *conf = pulsarc_client_config_new();
    char *ca_pem = cert_pem(&ca), *cert = cert_pem(&client_id), *key = key_pem(&client_id);
    cr_expect_eq(pulsarc_client_config_set_tls_trust_certs_pem(conf, "garbage"),
                 PULSARC_ERR_TLS_CONFIG);
    cr_expect_eq(pulsarc_client_config_set_tls_trust_certs_pem(conf, ca_pem), PULSARC_OK);
    cr_expect_eq(pulsarc_client_config_set_tls_cert_pem(conf, cert, NULL),
                 PULSARC_ERR_INVALID_ARGUMENT);
    cr_expect_eq(pulsarc_client_config_set_tls_cert_pem(conf, cert, key), PULSARC_OK);

    pulsarc_client_config_t copy;
    cr_assert_eq(pc_client_config_copy(&copy, conf), 0);
    cr_expect_str_eq(copy.tls_key_pem, key);
    cr_expect_neq(copy.tls_key_pem, conf->tls_key_pem, "a copy, not the same buffer");
    char dump[8192];
    pulsarc_client_config_dump(conf, dump, sizeof dump);
    cr_expect(strstr(dump, "PRIVATE KEY") == NULL, "the key never shows in a dump");

    /* A pulsar+ssl:// client builds its context from all of it. */
    struct pc_tls_ctx *ctx = NULL;
    pc_service_url_t url;
    cr_assert_eq(pc_service_url_parse("pulsar+ssl://localhost:6651", &url, NULL, 0), 0);
    cr_expect_eq(pc_client_tls_new(&copy, &url, &ctx), PULSARC_OK);
    cr_expect_not_null(ctx);
    pc_client_tls_free(ctx);
    cr_assert_eq(pc_service_url_parse("pulsar://localhost:6650", &url, NULL, 0), 0);
    cr_expect_eq(pc_client_tls_new(&copy, &url, &ctx), PULSARC_OK);
    cr_expect_null(ctx, "plain URL: no TLS");

    pc_client_config_clear(&copy);
    cr_expect_null(copy.tls_key_pem);
    cr_expect_eq(pulsarc_client_config_set_tls_cert_pem(conf, NULL, NULL), PULSARC_OK);
    cr_expect_null(conf->tls_key_pem);
    pulsarc_client_config_free(conf);
    free(ca_pem);
    free(cert);
    free(key);
}

Test(tls, client_accepts_pulsar_ssl_urls)
{
    pulsarc_client_config_t *conf = pulsarc_client_config_new();
    char *ca_pem = cert_pem(&ca);
    cr_assert_eq(pulsarc_client_config_set_tls_trust_certs_pem(conf, ca_pem), PULSARC_OK);
    pulsarc_client_t *client = NULL;
    cr_assert_eq(pulsarc_client_new("pulsar+ssl://localhost:6651", conf, &client), PULSARC_OK, "%s",
                 pulsarc_last_error_detail());
    pulsarc_client_destroy(client);
    cr_assert_eq(pulsarc_client_config_set(conf, "tlsTrustCertsFilePath", "/nonexistent.pem"),
                 PULSARC_OK);
    cr_expect_eq(pulsarc_client_config_set_tls_trust_certs_pem(conf, NULL), PULSARC_OK);
    cr_expect_eq(pulsarc_client_new("pulsar+ssl://localhost:6651", conf, &client),
                 PULSARC_ERR_TLS_CONFIG);
    pulsarc_client_config_free(conf);
    free(ca_pem);
}

/* A file that cannot be opened is reported with the system's reason, not OpenSSL's last
 * queued one ("system lib"). */
Test(tls, unreadable_files_say_why)
{
    pc_tls_ctx_t *ctx = NULL;
    pc_tls_settings_t s = { .trust_file = "/nonexistent/ca.pem" };
    cr_assert_eq(pc_tls_ctx_new(&s, &ctx), PULSARC_ERR_TLS_CONFIG);
    cr_assert_str_eq(pulsarc_last_error_detail(),
                     "cannot load tlsTrustCertsFilePath '/nonexistent/ca.pem': No such file or "
                     "directory");
    s = (pc_tls_settings_t){ .allow_insecure = true,
                             .cert_file = "/nonexistent/client.pem",
                             .key_file = "/nonexistent/client.key" };
    cr_assert_eq(pc_tls_ctx_new(&s, &ctx), PULSARC_ERR_TLS_CONFIG);
    cr_assert_str_eq(pulsarc_last_error_detail(),
                     "cannot load tlsCertificateFilePath '/nonexistent/client.pem': No such file "
                     "or directory");
    cr_assert_null(ctx);
}

/* ---- session resumption -------------------------------------------------------- */

/* One connection from ctx to host on the server context srv_ctx, and what the broker
 * made of it: the result, and whether the server resumed a session. The client reads once
 * after the handshake, which takes in TLS 1.3 tickets. */
typedef struct outcome {
    pulsarc_result result;
    bool client_resumed, server_resumed;
} outcome_t;

static outcome_t connect_on(pc_tls_ctx_t *ctx, const char *host, SSL_CTX *srv_ctx)
{
    pc_tls_session_t *cl = pc_tls_session_new(ctx, host, 6651);
    cr_assert_not_null(cl);
    SSL *srv = server_on(srv_ctx);
    outcome_t o = { .result = handshake(cl, srv) };
    if (o.result != PULSARC_OK)
        cr_log_info("%s: %s", pulsarc_result_name(o.result), pc_tls_detail(cl));
    o.client_resumed = pc_tls_resumed(cl);
    o.server_resumed = SSL_session_reused(srv) == 1;
    SSL_free(srv);
    pc_tls_session_free(cl);
    return o;
}

static pc_tls_settings_t resuming(const ident_t *trusted)
{
    pc_tls_settings_t s = trusting(trusted);
    s.session_resumption = true;
    return s;
}

Test(tls, reconnect_resumes_the_session)
{
    SSL_CTX *srv = new_server_ctx((server_opts_t){ .id = &server });
    pc_tls_ctx_t *ctx = new_ctx(resuming(&ca));
    outcome_t first = connect_on(ctx, "localhost", srv);
    cr_assert_eq(first.result, PULSARC_OK);
    cr_expect_not(first.client_resumed, "nothing to resume yet");
    size_t tickets = pc_tls_cache_count(ctx->cache, "localhost", 6651);
    cr_assert_gt(tickets, 0, "the broker's TLS 1.3 tickets are kept");

    outcome_t second = connect_on(ctx, "localhost", srv);
    cr_assert_eq(second.result, PULSARC_OK);
    cr_expect(second.client_resumed && second.server_resumed, "the second connect resumes");
    cr_expect(pc_tls_cache_count(ctx->cache, "localhost", 6651) > 0,
              "the resumed connection brought a fresh ticket");
    SSL_CTX_free(srv);
    pc_tls_ctx_free(ctx);
}

/* Our own certificate has expired: a resumed session would carry its identity past the
 * broker's check, so none is offered and the handshake is a full one. */
Test(tls, no_resumption_once_our_certificate_expired)
{
    ident_t worn = make_ident("client-role", &ca, false, -2 * DAY, -DAY, NULL);
    char *cert = cert_pem(&worn), *key = key_pem(&worn);
    pc_tls_settings_t s = resuming(&ca);
    s.cert_pem = cert;
    s.key_pem = key;
    SSL_CTX *srv = new_server_ctx((server_opts_t){ .id = &server }); /* asks for none */
    pc_tls_ctx_t *ctx = new_ctx(s);
    cr_assert_eq(connect_on(ctx, "localhost", srv).result, PULSARC_OK);
    cr_assert_gt(pc_tls_cache_count(ctx->cache, "localhost", 6651), 0, "nothing to offer: no test");
    outcome_t o = connect_on(ctx, "localhost", srv);
    cr_assert_eq(o.result, PULSARC_OK);
    cr_expect_not(o.client_resumed, "a session was resumed with an expired certificate");
    SSL_CTX_free(srv);
    pc_tls_ctx_free(ctx);
    free(cert);
    free(key);
    free_ident(&worn);
}

/* A ticket is taken out of the cache to be offered: connecting uses one up, and with none
 * left the next connection makes a full handshake. */
Test(tls, each_ticket_is_offered_once)
{
    SSL_CTX *srv = new_server_ctx((server_opts_t){ .id = &server });
    SSL_CTX_set_num_tickets(srv, 1);
    pc_tls_ctx_t *ctx = new_ctx(resuming(&ca));
    cr_assert_eq(connect_on(ctx, "localhost", srv).result, PULSARC_OK);
    cr_assert_eq(pc_tls_cache_count(ctx->cache, "localhost", 6651), 1);

    pc_tls_session_t *cl = pc_tls_session_new(ctx, "localhost", 6651);
    cr_expect_eq(pc_tls_cache_count(ctx->cache, "localhost", 6651), 0, "taken when offered");
    pc_tls_session_free(cl); /* never connected: its ticket is gone with it */

    outcome_t o = connect_on(ctx, "localhost", srv);
    cr_assert_eq(o.result, PULSARC_OK);
    cr_expect_not(o.client_resumed, "no ticket was left to offer");
    SSL_CTX_set_num_tickets(srv, 0);
    o = connect_on(ctx, "localhost", srv);
    cr_expect(o.client_resumed, "the full handshake's ticket");
    o = connect_on(ctx, "localhost", srv);
    cr_expect_not(o.client_resumed, "the broker sent no new ticket, and none is reused");
    SSL_CTX_free(srv);
    pc_tls_ctx_free(ctx);
}

Test(tls, no_resumption_when_switched_off)
{
    SSL_CTX *srv = new_server_ctx((server_opts_t){ .id = &server });
    pc_tls_ctx_t *ctx = new_ctx(trusting(&ca)); /* session_resumption false */
    cr_expect_null(ctx->cache);
    cr_assert_eq(connect_on(ctx, "localhost", srv).result, PULSARC_OK);
    outcome_t o = connect_on(ctx, "localhost", srv);
    cr_assert_eq(o.result, PULSARC_OK);
    cr_expect_not(o.client_resumed || o.server_resumed);
    SSL_CTX_free(srv);
    pc_tls_ctx_free(ctx);

    /* Through the configuration: the key turns it off. */
    pulsarc_client_config_t *conf = pulsarc_client_config_new();
    cr_assert_eq(pulsarc_client_config_set(conf, "tlsEnableSessionResumption", "false"),
                 PULSARC_OK);
    cr_assert_eq(pulsarc_client_config_set(conf, "tlsAllowInsecureConnection", "true"), PULSARC_OK);
    pc_service_url_t url;
    cr_assert_eq(pc_service_url_parse("pulsar+ssl://localhost:6651", &url, NULL, 0), 0);
    cr_assert_eq(pc_client_tls_new(conf, &url, &ctx), PULSARC_OK);
    cr_expect_null(ctx->cache);
    pc_client_tls_free(ctx);
    cr_assert_eq(pulsarc_client_config_set(conf, "tlsEnableSessionResumption", "true"), PULSARC_OK);
    cr_assert_eq(pc_client_tls_new(conf, &url, &ctx), PULSARC_OK);
    cr_expect_not_null(ctx->cache, "on by default");
    pc_client_tls_free(ctx);
    pulsarc_client_config_free(conf);
}

/* Sessions are kept per host name and port as given: a session made with "localhost" is
 * never offered to "127.0.0.1", though one certificate names both. */
Test(tls, sessions_stay_with_their_host_name)
{
    SSL_CTX *srv = new_server_ctx((server_opts_t){ .id = &server });
    pc_tls_ctx_t *ctx = new_ctx(resuming(&ca));
    cr_assert_eq(connect_on(ctx, "localhost", srv).result, PULSARC_OK);
    outcome_t o = connect_on(ctx, "127.0.0.1", srv);
    cr_assert_eq(o.result, PULSARC_OK);
    cr_expect_not(o.client_resumed, "another host name");
    cr_expect_eq(pc_tls_cache_count(ctx->cache, "localhost", 6652), 0, "nor another port");
    cr_expect(connect_on(ctx, "localhost", srv).client_resumed);
    cr_expect(connect_on(ctx, "127.0.0.1", srv).client_resumed, "its own, from its first");
    SSL_CTX_free(srv);
    pc_tls_ctx_free(ctx);
}

/* Should a session reach another host's connection, resuming it must not pass for that
 * host's certificate check: the server takes the ticket (it does not care for the name),
 * and the client refuses the handshake as it would refuse the certificate. */
Test(tls, a_session_resumed_for_another_name_fails)
{
    SSL_CTX *srv = new_server_ctx((server_opts_t){ .id = &server });
    pc_tls_ctx_t *ctx = new_ctx(resuming(&ca));
    cr_assert_eq(connect_on(ctx, "localhost", srv).result, PULSARC_OK);
    SSL_SESSION *made = pc_tls_cache_take(ctx->cache, "localhost", 6651);
    cr_assert_not_null(made);
    pc_tls_cache_put(ctx->cache, "broker.example.com", 6651, made);

    outcome_t o = connect_on(ctx, "broker.example.com", srv);
    cr_expect(o.server_resumed, "the server resumed: only the client's own check is left");
    cr_expect_eq(o.result, PULSARC_ERR_TLS_HOSTNAME);
    cr_expect_eq(pc_tls_cache_count(ctx->cache, "broker.example.com", 6651), 0,
                 "nothing kept from the refused connection");
    SSL_CTX_free(srv);
    pc_tls_ctx_free(ctx);
}

/* TLS 1.2 sessions are the server's to renew and may be resumed again. */
Test(tls, tls12_session_resumes_again)
{
    SSL_CTX *srv = new_server_ctx((server_opts_t){ .id = &server, .max_version = TLS1_2_VERSION });
    pc_tls_ctx_t *ctx = new_ctx(resuming(&ca));
    cr_assert_eq(connect_on(ctx, "localhost", srv).result, PULSARC_OK);
    for (int i = 0; i < 3; i++) {
        outcome_t o = connect_on(ctx, "localhost", srv);
        cr_assert_eq(o.result, PULSARC_OK);
        cr_expect(o.client_resumed && o.server_resumed, "reconnect %d resumes", i + 1);
    }
    cr_expect_eq(pc_tls_cache_count(ctx->cache, "localhost", 6651), 1);
    SSL_CTX_free(srv);
    pc_tls_ctx_free(ctx);
}

/* A shared handle starts with a cache of its own: one client's sessions never reach
 * another's. */
Test(tls, a_shared_context_has_its_own_cache)
{
    SSL_CTX *srv = new_server_ctx((server_opts_t){ .id = &server });
    pc_tls_ctx_t *ctx = new_ctx(resuming(&ca)), *other = NULL;
    cr_assert_eq(connect_on(ctx, "localhost", srv).result, PULSARC_OK);
    cr_assert_eq(pc_tls_ctx_share(ctx, &other), PULSARC_OK);
    cr_assert_not_null(other->cache);
    cr_expect_neq(other->cache, ctx->cache);
    cr_expect_not(connect_on(other, "localhost", srv).client_resumed);
    cr_expect(connect_on(ctx, "localhost", srv).client_resumed);
    pc_tls_ctx_free(other);
    SSL_CTX_free(srv);
    pc_tls_ctx_free(ctx);
}

/* ---- the cache's bounds ----------------------------------------------------------- */

static SSL_SESSION *fake_session(unsigned id, long age_s, long timeout_s)
{
    SSL_SESSION *s = SSL_SESSION_new();
    cr_assert_not_null(s);
    unsigned char sid[4] = { (unsigned char)(id >> 24), (unsigned char)(id >> 16),
                             (unsigned char)(id >> 8), (unsigned char)id };
    cr_assert_eq(SSL_SESSION_set1_id(s, sid, sizeof sid), 1);
    SSL_SESSION_set_time(s, (long)time(NULL) - age_s);
    SSL_SESSION_set_timeout(s, timeout_s);
    return s;
}

static unsigned session_number(const SSL_SESSION *s)
{
    unsigned len;
    const unsigned char *sid = SSL_SESSION_get_id(s, &len);
    cr_assert_eq(len, 4);
    return (unsigned)sid[0] << 24 | (unsigned)sid[1] << 16 | (unsigned)sid[2] << 8 | sid[3];
}

Test(tls, cache_bounds_per_peer_and_in_all)
{
    pc_tls_cache_t *c = pc_tls_cache_new(PC_TLS_PEERS * PC_TLS_PER_PEER, PC_TLS_PER_PEER);
    cr_assert_not_null(c);
    /* One peer: only its newest PC_TLS_PER_PEER stay, taken newest first, each once. */
    for (unsigned i = 0; i < 3 * PC_TLS_PER_PEER; i++)
        pc_tls_cache_put(c, "a.example", 6651, fake_session(i, 0, 300));
    cr_expect_eq(pc_tls_cache_count(c, "a.example", 6651), PC_TLS_PER_PEER);
    for (unsigned i = 0; i < PC_TLS_PER_PEER; i++) {
        SSL_SESSION *s = pc_tls_cache_take(c, "a.example", 6651);
        cr_assert_not_null(s);
        cr_expect_eq(session_number(s), 3 * PC_TLS_PER_PEER - 1 - i);
        SSL_SESSION_free(s);
    }
    cr_expect_null(pc_tls_cache_take(c, "a.example", 6651), "each one once");

    /* Many peers (a broker names the hosts): never more than PC_TLS_PEERS * PC_TLS_PER_PEER, the oldest
     * going first. */
    char host[32];
    for (unsigned i = 0; i < 4 * PC_TLS_PEERS * PC_TLS_PER_PEER; i++) {
        snprintf(host, sizeof host, "broker-%u.example", i);
        pc_tls_cache_put(c, host, 6651, fake_session(i, 0, 300));
        cr_assert_leq(pc_tls_cache_count(c, NULL, 0), PC_TLS_PEERS * PC_TLS_PER_PEER);
    }
    cr_expect_eq(pc_tls_cache_count(c, NULL, 0), PC_TLS_PEERS * PC_TLS_PER_PEER);
    cr_expect_null(pc_tls_cache_take(c, "broker-0.example", 6651), "the oldest went");
    snprintf(host, sizeof host, "broker-%u.example", 4 * PC_TLS_PEERS * PC_TLS_PER_PEER - 1);
    SSL_SESSION *s = pc_tls_cache_take(c, host, 6651);
    cr_expect_not_null(s, "the newest stayed");
    SSL_SESSION_free(s);
    pc_tls_cache_free(c);
}

Test(tls, cache_drops_expired_and_keeps_no_cut_names)
{
    pc_tls_cache_t *c = pc_tls_cache_new(PC_TLS_PEERS * PC_TLS_PER_PEER, PC_TLS_PER_PEER);
    pc_tls_cache_put(c, "a.example", 6651, fake_session(1, 400, 300));
    cr_expect_null(pc_tls_cache_take(c, "a.example", 6651), "expired: not offered");
    cr_expect_eq(pc_tls_cache_count(c, NULL, 0), 0, "and dropped");

    char long_name[PC_TLS_HOST_MAX + 8];
    memset(long_name, 'a', sizeof long_name - 1);
    long_name[sizeof long_name - 1] = '\0';
    pc_tls_cache_put(c, long_name, 6651, fake_session(2, 0, 300));
    cr_expect_eq(pc_tls_cache_count(c, NULL, 0), 0, "a name too long to key by is not kept");
    cr_expect_null(pc_tls_cache_take(c, long_name, 6651));
    pc_tls_cache_free(c);
}

/* Every connection to one broker needs a session of its own to resume at once: with
 * connectionsPerBroker above the default bound, the cache keeps that many per peer. */
Test(tls, cache_keeps_a_session_per_connection_to_a_broker)
{
    pc_tls_settings_t s = resuming(&ca);
    s.connections_per_peer = 3 * PC_TLS_PER_PEER;
    pc_tls_ctx_t *ctx = new_ctx(s), *shared = NULL;
    cr_assert_eq(pc_tls_ctx_share(ctx, &shared), PULSARC_OK);
    pc_tls_ctx_t *both[] = { ctx, shared };
    for (int k = 0; k < 2; k++) {
        for (unsigned i = 0; i < 4 * PC_TLS_PER_PEER; i++)
            pc_tls_cache_put(both[k]->cache, "a.example", 6651, fake_session(i, 0, 300));
        cr_expect_eq(pc_tls_cache_count(both[k]->cache, "a.example", 6651), 3 * PC_TLS_PER_PEER);
    }
    pc_tls_ctx_free(shared);
    pc_tls_ctx_free(ctx);

    /* Through the configuration. */
    pulsarc_client_config_t *conf = pulsarc_client_config_new();
    cr_assert_eq(pulsarc_client_config_set(conf, "connectionsPerBroker", "100"), PULSARC_OK);
    cr_assert_eq(pulsarc_client_config_set(conf, "tlsAllowInsecureConnection", "true"), PULSARC_OK);
    pc_service_url_t url;
    cr_assert_eq(pc_service_url_parse("pulsar+ssl://localhost:6651", &url, NULL, 0), 0);
    cr_assert_eq(pc_client_tls_new(conf, &url, &ctx), PULSARC_OK);
    cr_expect_eq(ctx->cache_per_peer, 100);
    pc_client_tls_free(ctx);
    pulsarc_client_config_free(conf);
}

/* A broker decides how large its tickets are: one beyond PC_TLS_TICKET_MAX is not kept. */
static int pad_session(SSL *ssl, void *arg)
{
    (void)arg;
    /* Application data the server stores in its tickets makes them as large as it likes. */
    static unsigned char filler[PC_TLS_TICKET_MAX];
    return SSL_SESSION_set1_ticket_appdata(SSL_get_session(ssl), filler, sizeof filler);
}

Test(tls, oversized_tickets_are_not_kept)
{
    SSL_CTX *srv = new_server_ctx((server_opts_t){ .id = &server });
    SSL_CTX_set_session_ticket_cb(srv, pad_session, NULL, NULL);
    pc_tls_ctx_t *ctx = new_ctx(resuming(&ca));
    cr_assert_eq(connect_on(ctx, "localhost", srv).result, PULSARC_OK);
    cr_expect_eq(pc_tls_cache_count(ctx->cache, "localhost", 6651), 0);
    cr_expect_not(connect_on(ctx, "localhost", srv).client_resumed);

    /* The same server with tickets of the usual size: kept. */
    SSL_CTX_set_session_ticket_cb(srv, NULL, NULL, NULL);
    cr_assert_eq(connect_on(ctx, "localhost", srv).result, PULSARC_OK);
    cr_expect_gt(pc_tls_cache_count(ctx->cache, "localhost", 6651), 0);
    SSL_CTX_free(srv);
    pc_tls_ctx_free(ctx);
}
