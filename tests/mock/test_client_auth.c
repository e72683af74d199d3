/* Authentication against the mock broker: what CONNECT carries for each provider, when
 * credentials are read again (reconnect, AUTH_CHALLENGE), how bad configuration and a
 * broker's refusal surface, and that no secret reaches a log line or a config dump. */
#include "client_harness.h"

#include <stdatomic.h>
#include <unistd.h>

#include "client/client.h"

TestSuite(client_auth, .init = h_setup, .fini = h_teardown, .timeout = H_SUITE_TIMEOUT(60));

typedef void (*conf_fn)(pulsarc_client_config_t *cc);

/* h_client with debug logging and a hook that configures authentication. */
static pulsarc_result try_auth_client(conf_fn setup, pulsarc_client_t **out)
{
    pulsarc_client_config_t *cc = pulsarc_client_config_new();
    cr_assert_not_null(cc);
    cr_assert_eq(pulsarc_client_config_set(cc, "operationTimeoutMs", "3000"), PULSARC_OK);
    cr_assert_eq(pulsarc_client_config_set(cc, "initialBackoffIntervalMs", "20"), PULSARC_OK);
    cr_assert_eq(pulsarc_client_config_set(cc, "maxBackoffIntervalMs", "200"), PULSARC_OK);
    cr_assert_eq(pulsarc_client_config_set(cc, "logLevel", "debug"), PULSARC_OK);
    if (setup)
        setup(cc);
    pulsarc_client_config_set_logger(cc, h_logger, NULL);
    *out = NULL;
    pulsarc_result r = pulsarc_client_new(mock_broker_url(mb), cc, out);
    pulsarc_client_config_free(cc);
    return r;
}

static pulsarc_client_t *auth_client(conf_fn setup)
{
    pulsarc_client_t *c = NULL;
    pulsarc_result r = try_auth_client(setup, &c);
    cr_assert_eq(r, PULSARC_OK, "client_new: %s (%s)", pulsarc_result_name(r),
                 pulsarc_last_error_detail());
    return c;
}

static mock_connect_info_t last_connect(void)
{
    mock_connect_info_t ci;
    cr_assert(mock_broker_last_connect(mb, &ci), "no CONNECT arrived");
    return ci;
}

static void assert_connect(const char *method, const char *data)
{
    mock_connect_info_t ci = last_connect();
    cr_assert(ci.has_auth_method_name, "CONNECT without auth_method_name");
    cr_assert_str_eq(ci.auth_method_name, method);
    cr_assert(ci.has_auth_data, "CONNECT without auth_data");
    cr_assert_str_eq(ci.auth_data, data);
}

static void set_kv(pulsarc_client_config_t *cc, const char *k, const char *v)
{
    cr_assert_eq(pulsarc_client_config_set(cc, k, v), PULSARC_OK, "%s",
                 pulsarc_last_error_detail());
}

/* authPlugin and authParams for the keys hook (NULL: left unset). */
static const char *key_plugin, *key_params;

static void keys(pulsarc_client_config_t *cc)
{
    if (key_plugin)
        set_kv(cc, "authPlugin", key_plugin);
    if (key_params)
        set_kv(cc, "authParams", key_params);
}

/* A client configured by setup creates a producer; its CONNECT carries method and data.
 * Client and producer are gone afterwards, the mock broker stays. */
static void expect_connect(conf_fn setup, const char *method, const char *data)
{
    client = auth_client(setup);
    producer = h_producer(client, H_TOPIC, NULL);
    assert_connect(method, data);
    pulsarc_producer_free(producer);
    producer = NULL;
    pulsarc_client_destroy(client);
    client = NULL;
}

static void expect_connect_with_keys(const char *plugin, const char *params, const char *method,
                                     const char *data)
{
    key_plugin = plugin;
    key_params = params;
    expect_connect(keys, method, data);
}

/* ---- token sources ------------------------------------------------------------------ */

Test(client_auth, token_and_basic_params_as_pulsar_users_write_them)
{
    expect_connect_with_keys("token", "token:lit.eral.jwt", "token", "lit.eral.jwt");
    expect_connect_with_keys("org.apache.pulsar.client.impl.auth.AuthenticationToken",
                             "{\"token\":\"json.form.jwt\"}", "token", "json.form.jwt");
    setenv("PULSARC_TEST_AUTH_TOKEN", "env.token.jwt", 1); /* each test has its own process */
    expect_connect_with_keys("token", "env:PULSARC_TEST_AUTH_TOKEN", "token", "env.token.jwt");
    expect_connect_with_keys("org.apache.pulsar.client.impl.auth.AuthenticationBasic",
                             "userId:bob,password:hunter2", "basic", "bob:hunter2");
    h_finish();
}

static char token_path[64];

static void write_token(const char *token)
{
    FILE *f = fopen(token_path, "w");
    cr_assert_not_null(f);
    fprintf(f, "%s\n", token); /* the newline is trimmed, as echo > file leaves one */
    fclose(f);
}

static void token_file_typed(pulsarc_client_config_t *cc)
{
    cr_assert_eq(pulsarc_client_config_set_auth_token_file(cc, token_path), PULSARC_OK);
}

static bool connect_data_is(void *want)
{
    mock_connect_info_t ci;
    return mock_broker_last_connect(mb, &ci) && !strcmp(ci.auth_data, want);
}

Test(client_auth, token_file_is_read_again_on_reconnect)
{
    snprintf(token_path, sizeof token_path, "/tmp/pulsarc-auth-%d.tok", (int)getpid());
    write_token("file.token.one");
    client = auth_client(token_file_typed);
    producer = h_producer(client, H_TOPIC, NULL);
    assert_connect("token", "file.token.one");

    write_token("file.token.two");
    mock_broker_cut_now(mb);
    cr_assert(h_wait_until(connect_data_is, (void *)"file.token.two", 10000),
              "the reconnect did not send the rewritten token");
    cr_assert(h_wait_count(mb, MOCK_PRODUCERS, 2, 10000), "producer not re-registered");
    cr_assert_eq(h_send_sync(producer, 0), PULSARC_OK);
    unlink(token_path);
    h_finish();
}

static atomic_int supplied;

static char *supply_token(void *ctx)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%s-%d", (const char *)ctx, atomic_fetch_add(&supplied, 1) + 1);
    return strdup(buf);
}

static void token_supplier(pulsarc_client_config_t *cc)
{
    cr_assert_eq(pulsarc_client_config_set_auth_token_supplier(cc, supply_token,
                                                               (void *)"supplied"),
                 PULSARC_OK);
}

Test(client_auth, challenge_is_answered_with_a_fresh_token_without_reconnecting)
{
    client = auth_client(token_supplier);
    producer = h_producer(client, H_TOPIC, NULL);
    assert_connect("token", "supplied-1");

    cr_assert_eq(mock_broker_send_auth_challenge(mb, "refresh"), 1);
    cr_assert(h_wait_count(mb, MOCK_AUTH_RESPONSES, 1, 10000), "no AUTH_RESPONSE");
    mock_auth_response_t ar;
    cr_assert(mock_broker_last_auth_response(mb, &ar));
    cr_assert_str_eq(ar.auth_method_name, "token");
    cr_assert_str_eq(ar.auth_data, "supplied-2");

    cr_assert_eq(h_send_sync(producer, 0), PULSARC_OK, "%s", pulsarc_last_error_detail());
    cr_assert_eq(h_count(mb, MOCK_CONNECTIONS), 1, "the challenge cost a reconnect");
    cr_assert_eq(h_count(mb, MOCK_CONNECTS), 1);
    h_finish();
}

/* ---- basic and tls ------------------------------------------------------------------ */

static void basic_typed(pulsarc_client_config_t *cc)
{
    cr_assert_eq(pulsarc_client_config_set_auth_basic(cc, "alice", "pa:ss\"word"), PULSARC_OK);
}

Test(client_auth, basic_sends_user_colon_password)
{
    expect_connect(basic_typed, "basic", "alice:pa:ss\"word");
    h_finish();
}

/* A file under /tmp named after tag and this process, holding text; its path in path. */
static void temp_file(char *path, size_t len, const char *tag, const char *text)
{
    snprintf(path, len, "/tmp/pulsarc-mock-%s-%d.pem", tag, (int)getpid());
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
}

Test(client_auth, tls_plugin_sends_method_tls_and_feeds_the_tls_settings)
{
    /* On pulsar:// the files are only checked to be readable, never parsed. */
    char cert[128], key[128], params[300];
    temp_file(cert, sizeof cert, "cert", "a certificate");
    temp_file(key, sizeof key, "key", "a key");
    snprintf(params, sizeof params, "tlsCertFile:%s,tlsKeyFile:%s", cert, key);
    key_plugin = "tls";
    key_params = params;
    client = auth_client(keys);
    cr_assert_str_eq(client->conf.tls_cert_file, cert);
    cr_assert_str_eq(client->conf.tls_key_file, key);
    producer = h_producer(client, H_TOPIC, NULL);
    mock_connect_info_t ci = last_connect();
    cr_assert_str_eq(ci.auth_method_name, "tls");
    cr_assert_eq(ci.auth_data_len, 0);
    h_finish();
    unlink(cert);
    unlink(key);
}

static void tls_plugin_with_settings(pulsarc_client_config_t *cc)
{
    set_kv(cc, "authPlugin", "tls");
    set_kv(cc, "tlsCertificateFilePath", "/nonexistent/pulsarc/client.pem");
    set_kv(cc, "tlsKeyFilePath", "/nonexistent/pulsarc/client.key");
}

/* A tls plugin whose certificate or key file is missing fails on pulsar:// too (where
 * no TLS context ever opens them), with the error a missing token file gets, naming the
 * file: from its parameters or from the TLS settings. */
Test(client_auth, tls_plugin_with_a_missing_file_fails_on_plain_text_too)
{
    key_plugin = "tls";
    key_params = "tlsCertFile:/nonexistent/pulsarc/client.pem,tlsKeyFile:/nonexistent/k.pem";
    pulsarc_client_t *c = NULL;
    pulsarc_result r = try_auth_client(keys, &c);
    char detail[512];
    snprintf(detail, sizeof detail, "%s", pulsarc_last_error_detail());
    cr_assert_eq(r, PULSARC_ERR_AUTH_PROVIDER, "%s: %s", pulsarc_result_name(r), detail);
    cr_assert_null(c);
    cr_assert_str_eq(detail, "cannot read the TLS certificate file "
                             "/nonexistent/pulsarc/client.pem: No such file or directory");

    r = try_auth_client(tls_plugin_with_settings, &c);
    snprintf(detail, sizeof detail, "%s", pulsarc_last_error_detail());
    cr_assert_eq(r, PULSARC_ERR_AUTH_PROVIDER, "%s: %s", pulsarc_result_name(r), detail);
    cr_assert(strstr(detail, "/nonexistent/pulsarc/client.pem: No such file or directory"),
              "detail: %s", detail);
    cr_assert_eq(h_count(mb, MOCK_CONNECTIONS), 0);
    h_finish();
}

/* ---- configuration errors ----------------------------------------------------------- */

static void expect_rejected(const char *plugin, const char *params, pulsarc_result want,
                            const char *secret)
{
    key_plugin = plugin;
    key_params = params;
    pulsarc_client_t *c = NULL;
    pulsarc_result r = try_auth_client(keys, &c);
    cr_assert_eq(r, want, "%s / %s: %s (%s)", plugin, params, pulsarc_result_name(r),
                 pulsarc_last_error_detail());
    cr_assert_null(c);
    cr_assert_neq(pulsarc_last_error_detail()[0], '\0', "no detail");
    if (secret)
        cr_assert_null(strstr(pulsarc_last_error_detail(), secret), "detail leaks: %s",
                       pulsarc_last_error_detail());
}

Test(client_auth, bad_plugins_and_params_fail_client_creation)
{
    expect_rejected("kerberos", "x", PULSARC_ERR_INVALID_CONFIG, NULL);
    expect_rejected("org.apache.pulsar.client.impl.auth.AuthenticationSasl",
                    "{\"serverType\":\"broker@x\"}", PULSARC_ERR_INVALID_CONFIG, NULL);
    expect_rejected("sasl", "{\"keytab\":\"/nonexistent.keytab\"}", PULSARC_ERR_AUTH_PROVIDER,
                    NULL);
    expect_rejected("token", NULL, PULSARC_ERR_INVALID_CONFIG, NULL);
    expect_rejected("basic", "{\"userId\":\"u\",\"password\":\"hunter2\"", /* unterminated */
                    PULSARC_ERR_INVALID_CONFIG, "hunter2");
    expect_rejected("basic", "{\"userId\":\"u\"}", PULSARC_ERR_INVALID_CONFIG, NULL);
    expect_rejected("basic", "hunter2-without-keys", PULSARC_ERR_INVALID_CONFIG, "hunter2");
    expect_rejected("tls", "tlsCertFile:/only/cert.pem", PULSARC_ERR_INVALID_CONFIG, NULL);
    expect_rejected(NULL, "token:orphan", PULSARC_ERR_INVALID_CONFIG, "orphan");
    expect_rejected("oauth2", "{\"issuerUrl\":\"https://issuer\"}", PULSARC_ERR_INVALID_CONFIG,
                    NULL);
    expect_rejected("oauth2",
                    "{\"issuerUrl\":\"https://issuer\",\"clientId\":\"i\","
                    "\"clientSecret\":\"hunter2\",\"tokenEndpointAuthMethod\":\"tls_client_auth\"}",
                    PULSARC_ERR_UNSUPPORTED, "hunter2");
    h_finish();
}

/* ---- failures at connect time ------------------------------------------------------- */

static void token_literal_typed(pulsarc_client_config_t *cc)
{
    cr_assert_eq(pulsarc_client_config_set_auth_token(cc, "rejected.jwt"), PULSARC_OK);
}

Test(client_auth, broker_authentication_error_fails_creation_at_once)
{
    mock_broker_fail_connect(mb, PULSAR__PROTO__SERVER_ERROR__AuthenticationError,
                             "Unable to authenticate: token expired", -1);
    client = auth_client(token_literal_typed);
    char detail[512];
    uint64_t elapsed;
    pulsarc_result r = h_producer_fails(client, H_TOPIC, h_producer_conf(0, NULL), detail,
                                        sizeof detail, &elapsed);
    cr_assert_eq(r, PULSARC_ERR_BROKER_AUTHENTICATION, "%s: %s", pulsarc_result_name(r), detail);
    cr_assert(strstr(detail, "token expired"), "detail: %s", detail);
    cr_assert_lt(elapsed, 2500, "took %llu ms: retried instead of failing",
                 (unsigned long long)elapsed);
    h_let_time_pass(300);
    cr_assert_eq(h_count(mb, MOCK_CONNECTS), 1, "the refusal was retried");
    h_finish();
}

/* Credentials that stop working later (a revoked token): the reconnect is refused, and
 * the producer stops for good instead of reconnecting forever. */
Test(client_auth, authentication_refused_on_reconnect_stops_the_producer)
{
    client = auth_client(token_literal_typed);
    producer = h_producer(client, H_TOPIC, NULL);
    mock_broker_fail_connect(mb, PULSAR__PROTO__SERVER_ERROR__AuthenticationError, "token revoked",
                             -1);
    mock_broker_cut_now(mb);
    cr_assert(h_wait_log("token revoked", 10000), "the refusal was not reported");
    h_let_time_pass(500);
    uint64_t connects = h_count(mb, MOCK_CONNECTS);
    cr_assert_leq(connects, 2, "%llu CONNECTs: the refusal was retried",
                  (unsigned long long)connects);
    pulsarc_result r = h_send_sync(producer, 0);
    cr_assert_eq(r, PULSARC_ERR_BROKER_AUTHENTICATION, "%s", pulsarc_result_name(r));
    h_finish();
}

static void token_missing_file(pulsarc_client_config_t *cc)
{
    set_kv(cc, "authPlugin", "token");
    set_kv(cc, "authParams", "file:///nonexistent/pulsarc/token");
    set_kv(cc, "operationTimeoutMs", "1000");
}

Test(client_auth, unreadable_token_file_fails_the_connection_with_auth_provider)
{
    client = auth_client(token_missing_file);
    char detail[512];
    pulsarc_result r = h_producer_fails(client, H_TOPIC, h_producer_conf(0, NULL), detail,
                                        sizeof detail, NULL);
    cr_assert_eq(r, PULSARC_ERR_AUTH_PROVIDER, "%s: %s", pulsarc_result_name(r), detail);
    cr_assert(strstr(detail, "/nonexistent/pulsarc/token"), "detail: %s", detail);
    cr_assert_eq(h_count(mb, MOCK_CONNECTS), 0, "CONNECT went out without credentials");
    h_finish();
}

/* ---- secrets stay secret ------------------------------------------------------------ */

Test(client_auth, debug_log_contains_no_secret)
{
    client = auth_client(token_supplier);
    producer = h_producer(client, H_TOPIC, NULL);
    cr_assert_eq(mock_broker_send_auth_challenge(mb, "refresh"), 1);
    cr_assert(h_wait_count(mb, MOCK_AUTH_RESPONSES, 1, 10000));
    cr_assert_eq(h_send_sync(producer, 0), PULSARC_OK);
    pulsarc_producer_free(producer);
    producer = NULL;
    pulsarc_client_destroy(client);
    client = NULL;
    cr_assert(h_log_contains("DEBUG"), "no DEBUG lines were captured");
    cr_assert(!h_log_contains("supplied-"), "a token reached the log");

    expect_connect_with_keys("basic", "userId:bob,password:hunter2", "basic", "bob:hunter2");
    cr_assert(!h_log_contains("hunter2"), "a password reached the log");
    h_finish();
}

Test(client_auth, config_dump_masks_auth_params)
{
    pulsarc_client_config_t *cc = pulsarc_client_config_new();
    char buf[4096];
    cr_assert_eq(pulsarc_client_config_set_auth_token(cc, "dump.secret.jwt"), PULSARC_OK);
    pulsarc_client_config_dump(cc, buf, sizeof buf);
    cr_assert(strstr(buf, "authPlugin=token\n"), "%s", buf);
    cr_assert(strstr(buf, "authParams=<set, not shown>\n"), "%s", buf);
    cr_assert_null(strstr(buf, "dump.secret"), "%s", buf);
    cr_assert_eq(pulsarc_client_config_set_auth_basic(cc, "u", "dump-password"), PULSARC_OK);
    pulsarc_client_config_dump(cc, buf, sizeof buf);
    cr_assert_null(strstr(buf, "dump-password"), "%s", buf);
    pulsarc_client_config_free(cc);
    h_finish();
}

/* ---- OAuth2: the connection waits for the issuer ------------------------------------ */

#include "auth/auth.h"
#include "config/test_seams.h"
#include "common/error.h"
#include "fake_clock.h"

/* A fake issuer behind the HTTP table (the client's transport seam): a request is
 * answered on the client's loop on its next turn (a zero timer, so the provider really
 * waits), or, while fk.hold is set, when the test calls fk_release. Discovery answers
 * fk.discovery_status; the token endpoint hands out "oauth-tok-N" living fk.expires_in
 * s. Nothing here sleeps: token lifetimes are counted on fk_clock, which the tests move. */
static struct {
    uv_timer_t timer;
    uv_async_t release;        /* fk_release: answer what is held */
    pc_auth_http_done_cb done; /* loop thread only */
    void *ctx;
    bool is_post;
    atomic_bool hold;
    atomic_int gets, posts, answers;
    atomic_llong connects_seen; /* the most CONNECTs the broker had seen at an answer */
    long discovery_status;
    int expires_in;
    char form[512];
} fk;

static h_fake_clock_t fk_clock = H_FAKE_CLOCK_INIT;

static void fk_answer(uv_timer_t *t)
{
    pc_auth_http_done_cb done = fk.done;
    if (!done)
        return;
    fk.done = NULL;
    long long connects = (long long)h_count(mb, MOCK_CONNECTS);
    if (connects > atomic_load(&fk.connects_seen))
        atomic_store(&fk.connects_seen, connects);
    atomic_fetch_add(&fk.answers, 1);
    char body[256];
    if (!fk.is_post) {
        snprintf(body, sizeof body, "{\"token_endpoint\":\"https://issuer.test/token\"}");
        done(PULSARC_OK, fk.discovery_status, body, strlen(body), fk.ctx);
        return;
    }
    snprintf(body, sizeof body, "{\"access_token\":\"oauth-tok-%d\",\"expires_in\":%d}",
             atomic_load(&fk.posts), fk.expires_in);
    done(PULSARC_OK, 200, body, strlen(body), fk.ctx);
}

static void fk_request(pc_auth_http_done_cb done, void *ctx, bool is_post)
{
    fk.done = done;
    fk.ctx = ctx;
    fk.is_post = is_post;
    if (!atomic_load(&fk.hold))
        uv_timer_start(&fk.timer, fk_answer, 0, 0);
}

static int fk_get(void *h, const char *url, uint64_t timeout_ms, pc_auth_http_done_cb done,
                  void *ctx)
{
    atomic_fetch_add(&fk.gets, 1);
    fk_request(done, ctx, false);
    return 0;
}

static int fk_post(void *h, const char *url, const char *form, uint64_t timeout_ms,
                   pc_auth_http_done_cb done, void *ctx)
{
    atomic_fetch_add(&fk.posts, 1);
    snprintf(fk.form, sizeof fk.form, "%s", form);
    fk_request(done, ctx, true);
    return 0;
}

static void fk_on_release(uv_async_t *a)
{
    fk_answer(&fk.timer);
}

static void fk_close(void *h)
{
    if (fk.done) {
        pc_auth_http_done_cb done = fk.done;
        fk.done = NULL;
        pc_set_detail("the HTTP client was closed");
        done(PULSARC_ERR_ALREADY_CLOSED, 0, NULL, 0, fk.ctx);
    }
    uv_close((uv_handle_t *)&fk.timer, NULL);
    uv_close((uv_handle_t *)&fk.release, NULL);
}

static int fk_install(void *ctx, uv_loop_t *loop, pc_auth_http_t *out)
{
    uv_timer_init(loop, &fk.timer);
    uv_async_init(loop, &fk.release, fk_on_release);
    *out = (pc_auth_http_t){ fk_get, fk_post, fk_close, &fk, 5000 };
    return 0;
}

static const pc_transport_t fk_transport = { .auth_http = fk_install };

/* Answer the request held (and, from now on, every request at once). Any thread. */
static void fk_release(void)
{
    atomic_store(&fk.hold, false);
    uv_async_send(&fk.release);
}

static void fk_reset(long discovery_status, int expires_in)
{
    fk.done = NULL;
    atomic_store(&fk.hold, false);
    atomic_store(&fk.gets, 0);
    atomic_store(&fk.posts, 0);
    atomic_store(&fk.answers, 0);
    atomic_store(&fk.connects_seen, 0);
    fk.discovery_status = discovery_status;
    fk.expires_in = expires_in;
    key_plugin = "org.apache.pulsar.client.impl.auth.oauth2.AuthenticationOAuth2";
    key_params = "{\"issuerUrl\":\"https://issuer.test\",\"clientId\":\"cid\","
                 "\"clientSecret\":\"hunter2-oauth\",\"audience\":\"urn:pulsar\"}";
}

static void fk_done(void)
{
    key_plugin = key_params = NULL;
}

/* keys, and the fake issuer and clock. */
static void oauth2_seams(pulsarc_client_config_t *cc)
{
    keys(cc);
    pc_client_config_set_transport(cc, &fk_transport);
    pc_client_config_set_clock(cc, &fk_clock.base);
}

/* The broker challenges (the nth time): the client answers with token. */
static void challenge_answered_with(unsigned nth, const char *token)
{
    cr_assert_eq(mock_broker_send_auth_challenge(mb, "refresh"), 1);
    cr_assert(h_wait_count(mb, MOCK_AUTH_RESPONSES, nth, 10000), "no AUTH_RESPONSE %u", nth);
    mock_auth_response_t ar;
    cr_assert(mock_broker_last_auth_response(mb, &ar));
    cr_assert_str_eq(ar.auth_data, token, "AUTH_RESPONSE %u", nth);
}

Test(client_auth, oauth2_connect_waits_for_the_token_and_a_challenge_refreshes_it)
{
    fk_reset(200, 2); /* 2 s tokens: renewed a tenth of their life early, at 1.8 s */
    client = auth_client(oauth2_seams);
    producer = h_producer(client, H_TOPIC, NULL);
    assert_connect("token", "oauth-tok-1");
    cr_assert_eq(atomic_load(&fk.connects_seen), 0, "CONNECT went out before the issuer answered");
    cr_assert_eq(atomic_load(&fk.gets), 1);
    cr_assert_str_eq(fk.form, "grant_type=client_credentials&client_id=cid"
                              "&client_secret=hunter2-oauth&audience=urn%3Apulsar");

    h_fake_clock_advance(&fk_clock, 1799); /* still fresh: the challenge gets the cached one */
    challenge_answered_with(1, "oauth-tok-1");
    cr_assert_eq(atomic_load(&fk.posts), 1);
    h_fake_clock_advance(&fk_clock, 1); /* due for renewal: the challenge fetches anew */
    challenge_answered_with(2, "oauth-tok-2");
    cr_assert_eq(atomic_load(&fk.gets), 1, "the token endpoint is remembered");
    cr_assert_eq(h_send_sync(producer, 0), PULSARC_OK, "%s", pulsarc_last_error_detail());
    cr_assert_eq(h_count(mb, MOCK_CONNECTIONS), 1, "the challenge cost a reconnect");
    h_finish();
    fk_done();
}

static void keys_with_short_connect_timeout(pulsarc_client_config_t *cc)
{
    oauth2_seams(cc);
    set_kv(cc, "connectionTimeoutMs", "500");
    set_kv(cc, "operationTimeoutMs", "10000");
}

static bool fk_answered_twice(void *arg)
{
    return atomic_load(&fk.answers) == 2;
}

Test(client_auth, oauth2_connection_closed_while_the_issuer_is_slow)
{
    /* The connection times out while the issuer holds the discovery; the late answer
     * must not touch it (ASan watches), and fills the cache for the next connection. */
    fk_reset(200, 60);
    atomic_store(&fk.hold, true);
    key_plugin = "oauth2";
    client = auth_client(keys_with_short_connect_timeout);
    char detail[512];
    uint64_t elapsed;
    pulsarc_result r = h_producer_fails(client, H_TOPIC, h_producer_conf(0, NULL), detail,
                                        sizeof detail, &elapsed);
    cr_assert_eq(r, PULSARC_ERR_CONNECT_FAILED, "%s: %s", pulsarc_result_name(r), detail);
    cr_assert(strstr(detail, "authentication provider"), "%s", detail);
    cr_assert_eq(h_count(mb, MOCK_CONNECTS), 0);
    cr_assert_eq(atomic_load(&fk.answers), 0, "the issuer answered while held");
    fk_release(); /* discovery, then the token request it starts */
    cr_assert(h_wait_until(fk_answered_twice, NULL, 10000), "the issuer was not asked again");
    producer = h_producer(client, H_TOPIC, NULL);
    assert_connect("token", "oauth-tok-1");
    cr_assert_eq(atomic_load(&fk.posts), 1, "the cached token was used");
    h_finish();
    fk_done();
}

Test(client_auth, oauth2_issuer_failure_fails_creation_with_a_detail_without_secrets)
{
    fk_reset(404, 60);
    client = auth_client(oauth2_seams);
    char detail[512];
    uint64_t elapsed;
    pulsarc_result r = h_producer_fails(client, H_TOPIC, h_producer_conf(0, NULL), detail,
                                        sizeof detail, &elapsed);
    cr_assert_eq(r, PULSARC_ERR_AUTH_PROVIDER, "%s: %s", pulsarc_result_name(r), detail);
    cr_assert(strstr(detail, "https://issuer.test"), "%s", detail);
    cr_assert(strstr(detail, "404"), "%s", detail);
    cr_assert(!strstr(detail, "hunter2"), "%s", detail);
    cr_assert_eq(h_count(mb, MOCK_CONNECTS), 0, "CONNECT without a token");
    h_finish();
    fk_done();
}
