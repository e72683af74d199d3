/* authPlugin=sasl against the mock broker playing the broker's SaslServer with a real
 * GSSAPI acceptor (the broker keytab of a KDC that scripts/kdc starts for each test on a
 * free loopback port): CONNECT's token, several AUTH_CHALLENGE rounds (the Kerberos
 * reply, the security-layer offer) on one connection, then CONNECTED; and the broker
 * misbehaving: an offer without "no security layer", a garbage token, a challenge after
 * the exchange was complete, a refusal. Each failure is named (AUTH_PROVIDER with
 * GSSAPI's words, or BROKER_AUTHENTICATION) and no token reaches the log. The real broker
 * is tests/interop/test_kerberos.py. */
#include "client_harness.h"
#include "sasl_peer.h"

static void setup(void)
{
    kdc_start();
    h_setup();
}

static void teardown(void)
{
    h_teardown();
    kdc_stop();
}

TestSuite(client_auth_sasl, .init = setup, .fini = teardown, .timeout = H_SUITE_TIMEOUT(60));

static sasl_peer_t srv;

static pulsarc_client_t *sasl_client(const char *extra_params)
{
    sasl_peer_acquire(&srv);
    mock_broker_set_auth_server(mb, sasl_peer_step, &srv);
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
