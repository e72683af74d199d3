/* authPlugin=sasl against the mock broker playing the broker's SaslServer with a real
 * GSSAPI acceptor (the broker keytab of a KDC that scripts/kdc starts for each test on a
 * free loopback port): CONNECT's token, several AUTH_CHALLENGE rounds (the Kerberos
 * reply, the security-layer offer) on one connection, then CONNECTED; and the broker
 * misbehaving: an offer without "no security layer", a garbage token, a challenge after
 * the exchange was complete, a refusal. Each failure is named (AUTH_PROVIDER with
 * GSSAPI's words, or BROKER_AUTHENTICATION) and no token reaches the log. The real broker
 * is tests/interop/test_kerberos.py. */
#include "client_harness.h"

#include <arpa/inet.h>
#include <gssapi/gssapi.h>
#include <gssapi/gssapi_ext.h>
#include <gssapi/gssapi_krb5.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

static char kdc_dir[128];
static int kdc_port;

static void kdc(const char *what)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "PULSARC_KDC_DIR='%s' PULSARC_KDC_PORT=%d '%s/scripts/kdc' %s %s",
             kdc_dir, kdc_port, PC_SOURCE_DIR, what,
             getenv("PULSARC_TEST_LOG") ? "" : ">/dev/null 2>&1");
    cr_assert_eq(system(cmd), 0, "scripts/kdc %s failed (krb5-kdc installed? scripts/setup)", what);
}

static int free_port(void)
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t sl = sizeof sa;
    cr_assert_eq(bind(s, (struct sockaddr *)&sa, sizeof sa), 0);
    cr_assert_eq(getsockname(s, (struct sockaddr *)&sa, &sl), 0);
    close(s);
    return ntohs(sa.sin_port);
}

static void setup(void)
{
    snprintf(kdc_dir, sizeof kdc_dir, "/tmp/pulsarc-mock-kdc-%d", (int)getpid());
    kdc_port = free_port();
    kdc("start");
    char conf[256];
    snprintf(conf, sizeof conf, "%s/krb5.conf", kdc_dir);
    setenv("KRB5_CONFIG", conf, 1);
    h_setup();
}

static void teardown(void)
{
    h_teardown();
    kdc("stop");
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", kdc_dir);
    cr_assert_eq(system(cmd), 0);
}

TestSuite(client_auth_sasl, .init = setup, .fini = teardown, .timeout = H_SUITE_TIMEOUT(60));

/* ---- the broker's side: GSSAPI acceptor and RFC 4752's security-layer step ---------- */

typedef enum { MISBEHAVE_NONE, OFFER_NO_NONE, GARBAGE_TOKEN, EXTRA_CHALLENGE, REFUSE } misbehave_t;

static struct server {
    misbehave_t misbehave;
    gss_cred_id_t cred;
    gss_ctx_id_t ctx;
    int stage; /* 0 context, 1 awaiting the empty answer to the AP-REP, 2 awaiting the choice */
    int rounds;
    char authzid[256];
    char client[256];
} srv;

static void acquire_acceptor(void)
{
    char keytab[256];
    snprintf(keytab, sizeof keytab, "%s/broker.keytab", kdc_dir);
    gss_key_value_element_desc el = { "keytab", keytab };
    gss_key_value_set_desc store = { 1, &el };
    OM_uint32 minor;
    cr_assert(
        !GSS_ERROR(gss_acquire_cred_from(&minor, GSS_C_NO_NAME, GSS_C_INDEFINITE, GSS_C_NO_OID_SET,
                                         GSS_C_ACCEPT, &store, &srv.cred, NULL, NULL)));
}

static mock_auth_verdict_t put(gss_buffer_t b, uint8_t *out, size_t *out_len)
{
    OM_uint32 minor;
    cr_assert_leq(b->length, MOCK_AUTH_MAX);
    memcpy(out, b->value, b->length);
    *out_len = b->length;
    gss_release_buffer(&minor, b);
    return MOCK_AUTH_CHALLENGE;
}

/* The wrapped offer: layers, then a 3-byte maximum buffer size. */
static mock_auth_verdict_t offer(uint8_t *out, size_t *out_len)
{
    OM_uint32 minor;
    uint8_t layers[4] = { srv.misbehave == OFFER_NO_NONE ? 0x02 : 0x07, 0x00, 0x10, 0x00 };
    gss_buffer_desc plain = { 4, layers }, sealed = GSS_C_EMPTY_BUFFER;
    cr_assert(!GSS_ERROR(gss_wrap(&minor, srv.ctx, 0, GSS_C_QOP_DEFAULT, &plain, NULL, &sealed)));
    srv.stage = 2;
    return put(&sealed, out, out_len);
}

static mock_auth_verdict_t sasl_server(void *ctx, int conn, int round, const uint8_t *data,
                                       size_t len, uint8_t *out, size_t *out_len)
{
    (void)ctx;
    (void)conn;
    OM_uint32 major, minor;
    srv.rounds = round + 1;
    if (round == 0) {
        if (srv.ctx != GSS_C_NO_CONTEXT)
            gss_delete_sec_context(&minor, &srv.ctx, GSS_C_NO_BUFFER);
        srv.stage = 0;
    }
    if (srv.misbehave == REFUSE)
        return MOCK_AUTH_REFUSE;
    if (srv.misbehave == GARBAGE_TOKEN && round == 0) {
        static const char junk[] = "not a kerberos reply";
        memcpy(out, junk, sizeof junk - 1);
        *out_len = sizeof junk - 1;
        return MOCK_AUTH_CHALLENGE;
    }
    if (srv.stage == 0) {
        gss_buffer_desc in = { len, (void *)data }, reply = GSS_C_EMPTY_BUFFER;
        gss_name_t src = GSS_C_NO_NAME;
        major = gss_accept_sec_context(&minor, &srv.ctx, srv.cred, &in, GSS_C_NO_CHANNEL_BINDINGS,
                                       &src, NULL, &reply, NULL, NULL, NULL);
        cr_assert(!GSS_ERROR(major), "gss_accept_sec_context failed: 0x%x/%u", major, minor);
        gss_buffer_desc name = GSS_C_EMPTY_BUFFER;
        gss_display_name(&minor, src, &name, NULL);
        snprintf(srv.client, sizeof srv.client, "%.*s", (int)name.length, (char *)name.value);
        gss_release_buffer(&minor, &name);
        gss_release_name(&minor, &src);
        cr_assert_eq(major & GSS_S_CONTINUE_NEEDED, 0);
        if (reply.length) { /* mutual authentication: the AP-REP first */
            srv.stage = 1;
            return put(&reply, out, out_len);
        }
        return offer(out, out_len);
    }
    if (srv.stage == 1) {
        cr_assert_eq(len, 0, "the answer to the AP-REP is not empty (%zu bytes)", len);
        return offer(out, out_len);
    }
    /* The client's choice: layer, 3 bytes of size, the authorization id. */
    gss_buffer_desc sealed = { len, (void *)data }, plain = GSS_C_EMPTY_BUFFER;
    cr_assert(!GSS_ERROR(gss_unwrap(&minor, srv.ctx, &sealed, &plain, NULL, NULL)));
    const uint8_t *p = plain.value;
    cr_assert_geq(plain.length, 4);
    cr_assert_eq(p[0], 0x01, "the client chose layers 0x%02x, not \"none\"", p[0]);
    snprintf(srv.authzid, sizeof srv.authzid, "%.*s", (int)plain.length - 4, (const char *)p + 4);
    gss_release_buffer(&minor, &plain);
    if (srv.misbehave == EXTRA_CHALLENGE) {
        memcpy(out, "more", 4);
        *out_len = 4;
        return MOCK_AUTH_CHALLENGE;
    }
    return MOCK_AUTH_DONE;
}

static pulsarc_client_t *sasl_client(const char *extra_params)
{
    acquire_acceptor();
    mock_broker_set_auth_server(mb, sasl_server, NULL);
    char params[512];
    snprintf(params, sizeof params,
             "{\"keytab\":\"%s/client.keytab\",\"principal\":\"client@PULSARC.TEST\"%s}", kdc_dir,
             extra_params ? extra_params : "");
    return h_client("authPlugin", "sasl", "authParams", params, "logLevel", "debug", NULL);
}

static void assert_no_token_in_log(void)
{
    cr_assert(h_log_contains("DEBUG"), "no DEBUG lines were captured");
    cr_assert(!h_log_contains("keytab\":"), "authParams reached the log");
}

/* The mock's host is 127.0.0.1: the service principal must be broker/127.0.0.1. */
static void add_service_for_mock(void)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "KRB5_CONFIG='%1$s/krb5.conf' KRB5_KDC_PROFILE='%1$s/kdc.conf' kadmin.local -q "
             "'addprinc -randkey broker/127.0.0.1@PULSARC.TEST' >/dev/null 2>&1 && "
             "KRB5_CONFIG='%1$s/krb5.conf' KRB5_KDC_PROFILE='%1$s/kdc.conf' kadmin.local -q "
             "'ktadd -k %1$s/broker.keytab broker/127.0.0.1@PULSARC.TEST' >/dev/null 2>&1",
             kdc_dir);
    cr_assert_eq(system(cmd), 0, "kadmin.local failed");
}

Test(client_auth_sasl, rounds_on_one_connection_then_connected)
{
    add_service_for_mock();
    client = sasl_client(NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    mock_connect_info_t mc;
    cr_assert(mock_broker_last_connect(mb, &mc));
    cr_assert_str_eq(mc.auth_method_name, "sasl");
    cr_assert_gt(mc.auth_data_len, 100, "CONNECT did not carry a Kerberos AP-REQ");
    /* CONNECT, the answer to the AP-REP, the answer to the offer. */
    cr_assert_eq(srv.rounds, 3, "%d rounds", srv.rounds);
    cr_assert_eq(h_count(mb, MOCK_AUTH_RESPONSES), 2);
    cr_assert_eq(h_count(mb, MOCK_CONNECTIONS), 1, "a round cost a reconnect");
    cr_assert_str_eq(srv.client, "client@PULSARC.TEST");
    cr_assert_str_eq(srv.authzid, "client@PULSARC.TEST",
                     "the authorization id is not the principal");
    cr_assert_eq(h_send_sync(producer, 0), PULSARC_OK, "%s", pulsarc_last_error_detail());
    cr_assert(h_wait_log_count("answered an auth challenge", 2, 1000));
    assert_no_token_in_log();
    h_finish();
}

static void expect_creation_fails(pulsarc_result want, const char *needle, const char *needle2)
{
    char detail[1024];
    uint64_t elapsed;
    pulsarc_result r = h_producer_fails(client, H_TOPIC, h_producer_conf(0, NULL), detail,
                                        sizeof detail, &elapsed);
    cr_assert_eq(r, want, "%s: %s", pulsarc_result_name(r), detail);
    cr_assert(strstr(detail, needle), "detail: %s", detail);
    cr_assert(!needle2 || strstr(detail, needle2), "detail: %s", detail);
}

Test(client_auth_sasl, offer_without_no_security_layer_is_refused_by_name)
{
    add_service_for_mock();
    srv.misbehave = OFFER_NO_NONE;
    client = sasl_client(NULL);
    expect_creation_fails(PULSARC_ERR_AUTH_PROVIDER, "offers security layers without \"none\"",
                          "broker/127.0.0.1@PULSARC.TEST");
    assert_no_token_in_log();
    h_finish();
}

Test(client_auth_sasl, garbage_token_fails_with_gssapis_words)
{
    add_service_for_mock();
    srv.misbehave = GARBAGE_TOKEN;
    client = sasl_client(NULL);
    expect_creation_fails(PULSARC_ERR_AUTH_PROVIDER,
                          "sasl: gss_init_sec_context for broker/127.0.0.1@PULSARC.TEST failed: ",
                          "(GSSAPI major 0x");
    h_finish();
}

Test(client_auth_sasl, challenge_after_completion_is_an_error)
{
    add_service_for_mock();
    srv.misbehave = EXTRA_CHALLENGE;
    client = sasl_client(NULL);
    expect_creation_fails(PULSARC_ERR_AUTH_PROVIDER,
                          "sent another challenge after the exchange was complete", NULL);
    h_finish();
}

Test(client_auth_sasl, broker_refusal_is_broker_authentication)
{
    add_service_for_mock();
    srv.misbehave = REFUSE;
    client = sasl_client(NULL);
    expect_creation_fails(PULSARC_ERR_BROKER_AUTHENTICATION, "Failed to authenticate", NULL);
    h_finish();
}

Test(client_auth_sasl, unknown_service_principal_never_connects)
{
    /* No broker/127.0.0.1 principal: the KDC has no ticket for the mock's host. */
    client = sasl_client(NULL);
    expect_creation_fails(PULSARC_ERR_AUTH_PROVIDER,
                          "Server broker/127.0.0.1@PULSARC.TEST not found in Kerberos database",
                          "(GSSAPI major 0x");
    cr_assert_eq(h_count(mb, MOCK_CONNECTS), 0, "CONNECT went out without a token");
    h_finish();
}
