/* A custom authentication provider (pulsarc_auth_provider_t) against the mock broker:
 * its method and data in CONNECT, challenge rounds and refreshes answered on the same
 * connection, failures with a detail and no hang, a provider that blocks, free called
 * once whoever lets go last, the layout (ABI size) rule, and dumps without secrets. */
#include "client_harness.h"

#include <stdatomic.h>
#include <unistd.h>

TestSuite(client_auth_custom, .init = h_setup, .fini = h_teardown, .timeout = H_SUITE_TIMEOUT(60));

/* One provider's state, handed over as ctx. Counters are atomic: the callbacks run on the
 * client's loop thread, the test reads them on its own. */
typedef struct vault {
    atomic_int initial, challenges, refreshes, frees;
    atomic_int fail_initial, fail_challenge;
    atomic_int block_ms;
} vault_t;

static vault_t v;

static pulsarc_result put(pulsarc_auth_data_t *out, const char *fmt, int n, const char *s)
{
    char buf[128];
    int len = snprintf(buf, sizeof buf, fmt, n, s);
    return pulsarc_auth_data_set(out, buf, (size_t)len);
}

static pulsarc_result v_initial(void *ctx, pulsarc_auth_data_t *out)
{
    vault_t *x = ctx;
    int n = atomic_fetch_add(&x->initial, 1) + 1;
    if (atomic_load(&x->block_ms))
        usleep((useconds_t)atomic_load(&x->block_ms) * 1000);
    /* Written before failing: the library must drop it, not send it. */
    pulsarc_result r = put(out, "vault-secret-%d%s", n, "");
    return atomic_load(&x->fail_initial) ? PULSARC_ERR_TIMEOUT : r;
}

static pulsarc_result v_challenge(void *ctx, const uint8_t *ch, size_t len,
                                  pulsarc_auth_data_t *out)
{
    vault_t *x = ctx;
    int n = atomic_fetch_add(&x->challenges, 1) + 1;
    char challenge[64];
    snprintf(challenge, sizeof challenge, "%.*s", (int)len, (const char *)ch);
    if (atomic_load(&x->fail_challenge))
        return PULSARC_ERR_AUTH_PROVIDER;
    return put(out, "answer-%d-%s", n, challenge);
}

static void v_refresh(void *ctx)
{
    atomic_fetch_add(&((vault_t *)ctx)->refreshes, 1);
}

static void v_free(void *ctx)
{
    atomic_fetch_add(&((vault_t *)ctx)->frees, 1);
}

static const pulsarc_auth_provider_t vault_provider = {
    .method_name = "vault",
    .initial_data = v_initial,
    .challenge = v_challenge,
    .refresh = v_refresh,
    .free = v_free,
};

static pulsarc_client_config_t *vault_conf(void)
{
    pulsarc_client_config_t *cc = pulsarc_client_config_new();
    cr_assert_not_null(cc);
    const char *kv[][2] = { { "operationTimeoutMs", "3000" },
                            { "initialBackoffIntervalMs", "20" },
                            { "maxBackoffIntervalMs", "200" },
                            { "logLevel", "debug" } };
    for (size_t i = 0; i < sizeof kv / sizeof kv[0]; i++)
        cr_assert_eq(pulsarc_client_config_set(cc, kv[i][0], kv[i][1]), PULSARC_OK);
    pulsarc_client_config_set_logger(cc, h_logger, NULL);
    cr_assert_eq(pulsarc_client_config_set_auth_provider(cc, &vault_provider, sizeof vault_provider,
                                                         &v),
                 PULSARC_OK, "%s", pulsarc_last_error_detail());
    return cc;
}

/* A client with the vault provider; its configuration freed at once, so the client alone
 * holds the provider. */
static pulsarc_client_t *vault_client(void)
{
    pulsarc_client_config_t *cc = vault_conf();
    pulsarc_client_t *c = NULL;
    pulsarc_result r = pulsarc_client_new(mock_broker_url(mb), cc, &c);
    pulsarc_client_config_free(cc);
    cr_assert_eq(r, PULSARC_OK, "%s: %s", pulsarc_result_name(r), pulsarc_last_error_detail());
    return c;
}

static void assert_connect(const char *method, const char *data)
{
    mock_connect_info_t ci;
    cr_assert(mock_broker_last_connect(mb, &ci), "no CONNECT arrived");
    cr_assert(ci.has_auth_method_name && ci.has_auth_data, "CONNECT without auth");
    cr_assert_str_eq(ci.auth_method_name, method);
    cr_assert_str_eq(ci.auth_data, data);
}

/* Challenge the connection with `challenge` and insist the answer is `want`. */
static void challenge_answered(const char *challenge, uint64_t nth, const char *want)
{
    cr_assert_eq(mock_broker_send_auth_challenge(mb, challenge), 1);
    cr_assert(h_wait_count(mb, MOCK_AUTH_RESPONSES, nth, 10000), "no AUTH_RESPONSE %llu",
              (unsigned long long)nth);
    mock_auth_response_t ar;
    cr_assert(mock_broker_last_auth_response(mb, &ar));
    cr_assert_str_eq(ar.auth_method_name, "vault");
    cr_assert_str_eq(ar.auth_data, want);
}

Test(client_auth_custom, method_name_and_initial_data_reach_connect)
{
    client = vault_client();
    producer = h_producer(client, H_TOPIC, NULL);
    assert_connect("vault", "vault-secret-1");
    cr_assert_eq(h_send_sync(producer, 0), PULSARC_OK, "%s", pulsarc_last_error_detail());
    cr_assert_eq(atomic_load(&v.frees), 0, "freed while the client uses it");
    h_finish();
    cr_assert_eq(atomic_load(&v.frees), 1, "free ran %d times", atomic_load(&v.frees));
}

Test(client_auth_custom, challenge_rounds_and_refresh_are_answered_on_the_same_connection)
{
    client = vault_client();
    producer = h_producer(client, H_TOPIC, NULL);
    challenge_answered("round-a", 1, "answer-1-round-a");
    challenge_answered("round-b", 2, "answer-2-round-b");
    challenge_answered("round-c", 3, "answer-3-round-c");
    cr_assert_eq(atomic_load(&v.refreshes), 0, "a plain challenge counted as a refresh");
    /* The broker's refresh: the hook, then fresh initial data answers. */
    challenge_answered("PulsarAuthRefresh", 4, "vault-secret-2");
    cr_assert_eq(atomic_load(&v.refreshes), 1);
    cr_assert_eq(atomic_load(&v.challenges), 3, "the refresh went to the challenge callback");
    cr_assert_eq(h_send_sync(producer, 0), PULSARC_OK, "%s", pulsarc_last_error_detail());
    cr_assert_eq(h_count(mb, MOCK_CONNECTIONS), 1, "a challenge cost a reconnect");
    h_finish();
}

Test(client_auth_custom, without_a_challenge_callback_every_challenge_is_a_refresh)
{
    pulsarc_auth_provider_t p = vault_provider;
    p.challenge = NULL;
    pulsarc_client_config_t *cc = vault_conf();
    cr_assert_eq(pulsarc_client_config_set_auth_provider(cc, &p, sizeof p, &v), PULSARC_OK);
    cr_assert_eq(atomic_load(&v.frees), 1, "the replaced provider was not freed");
    cr_assert_eq(pulsarc_client_new(mock_broker_url(mb), cc, &client), PULSARC_OK);
    pulsarc_client_config_free(cc);
    producer = h_producer(client, H_TOPIC, NULL);
    challenge_answered("sasl-step", 1, "vault-secret-2");
    cr_assert_eq(atomic_load(&v.refreshes), 1);
    h_finish();
    cr_assert_eq(atomic_load(&v.frees), 2);
}

Test(client_auth_custom, failing_initial_data_fails_creation_with_a_detail_and_no_connect)
{
    atomic_store(&v.fail_initial, 1);
    client = vault_client();
    char detail[512];
    uint64_t elapsed;
    pulsarc_result r = h_producer_fails(client, H_TOPIC, h_producer_conf(0, NULL), detail,
                                        sizeof detail, &elapsed);
    cr_assert_eq(r, PULSARC_ERR_AUTH_PROVIDER, "%s: %s", pulsarc_result_name(r), detail);
    cr_assert(strstr(detail, "\"vault\"") && strstr(detail, "initial data") &&
                  strstr(detail, "(TIMEOUT)"),
              "detail: %s", detail);
    cr_assert_null(strstr(detail, "vault-secret"), "the detail quotes the data: %s", detail);
    cr_assert_lt(elapsed, h_upper_ms(3000), "took %llu ms", (unsigned long long)elapsed);
    cr_assert_eq(h_count(mb, MOCK_CONNECTS), 0, "CONNECT went out without the data");
    cr_assert_gt(atomic_load(&v.initial), 0);
    cr_assert(!h_log_contains("vault-secret"), "the dropped data reached the log");
    h_finish();
}

static bool connects_at_least_two(void *arg)
{
    (void)arg;
    return h_count(mb, MOCK_CONNECTS) >= 2;
}

Test(client_auth_custom, failing_challenge_closes_the_connection_and_the_producer_reconnects)
{
    client = vault_client();
    producer = h_producer(client, H_TOPIC, NULL);
    atomic_store(&v.fail_challenge, 1);
    cr_assert_eq(mock_broker_send_auth_challenge(mb, "round-x"), 1);
    cr_assert(h_wait_log("failed a challenge (AUTH_PROVIDER)", 10000),
              "the failure was not reported");
    cr_assert(h_let_time_pass_until(connects_at_least_two, NULL, 5000), "no reconnect");
    cr_assert_eq(h_count(mb, MOCK_AUTH_RESPONSES), 0, "a failed answer was sent");
    assert_connect("vault", "vault-secret-2");
    atomic_store(&v.fail_challenge, 0);
    cr_assert_eq(h_send_sync(producer, 0), PULSARC_OK, "%s", pulsarc_last_error_detail());
    cr_assert(h_log_contains("DEBUG"), "no DEBUG lines were captured");
    cr_assert(!h_log_contains("vault-secret"), "a credential reached the log");
    h_finish();
}

/* A provider that blocks (a vault asked synchronously) stalls the loop for that long, and
 * then everything goes on: creation within the operation timeout, the challenge answered. */
Test(client_auth_custom, provider_that_blocks_for_a_while_still_completes)
{
    atomic_store(&v.block_ms, 400);
    client = vault_client();
    producer = h_producer(client, H_TOPIC, NULL);
    assert_connect("vault", "vault-secret-1");
    challenge_answered("PulsarAuthRefresh", 1, "vault-secret-2");
    cr_assert_eq(h_send_sync(producer, 0), PULSARC_OK, "%s", pulsarc_last_error_detail());
    h_finish();
}

/* ---- lifetime: free once, whoever lets go last ------------------------------------- */

Test(client_auth_custom, free_runs_once_after_the_config_and_the_client)
{
    pulsarc_client_config_t *cc = vault_conf();
    cr_assert_eq(pulsarc_client_new(mock_broker_url(mb), cc, &client), PULSARC_OK);
    producer = h_producer(client, H_TOPIC, NULL);
    pulsarc_producer_free(producer);
    producer = NULL;
    pulsarc_client_destroy(client);
    client = NULL;
    cr_assert_eq(atomic_load(&v.frees), 0, "freed while the configuration holds it");
    pulsarc_client_config_free(cc);
    cr_assert_eq(atomic_load(&v.frees), 1);

    /* Replaced by another setter, or never used: freed then, once. */
    cc = vault_conf();
    cr_assert_eq(pulsarc_client_config_set_auth_token(cc, "t"), PULSARC_OK);
    cr_assert_eq(atomic_load(&v.frees), 2);
    pulsarc_client_config_free(cc);
    cc = vault_conf();
    pulsarc_client_config_free(cc);
    cr_assert_eq(atomic_load(&v.frees), 3);
    h_finish();
}

Test(client_auth_custom, authplugin_key_set_afterwards_wins)
{
    pulsarc_client_config_t *cc = vault_conf();
    cr_assert_eq(pulsarc_client_config_set(cc, "authPlugin", "token"), PULSARC_OK);
    cr_assert_eq(pulsarc_client_config_set(cc, "authParams", "token:key-jwt"), PULSARC_OK);
    cr_assert_eq(pulsarc_client_new(mock_broker_url(mb), cc, &client), PULSARC_OK);
    pulsarc_client_config_free(cc);
    producer = h_producer(client, H_TOPIC, NULL);
    assert_connect("token", "key-jwt");
    cr_assert_eq(atomic_load(&v.initial), 0, "the replaced provider was asked");
    h_finish();
    cr_assert_eq(atomic_load(&v.frees), 1);
}

/* ---- the layout rule, the method name, dumps ---------------------------------------- */

Test(client_auth_custom, layout_rule_older_accepted_newer_only_with_zero_tail)
{
    pulsarc_client_config_t *cc = pulsarc_client_config_new();
    /* An older caller's prefix (through initial_data): accepted, the rest NULL. */
    size_t old_size = offsetof(pulsarc_auth_provider_t, initial_data) + sizeof(void *);
    cr_assert_eq(pulsarc_client_config_set_auth_provider(cc, &vault_provider, old_size, &v),
                 PULSARC_OK, "%s", pulsarc_last_error_detail());
    pulsarc_client_config_free(cc);
    cr_assert_eq(atomic_load(&v.frees), 0, "free was read past the caller's size");

    /* Too small to hold initial_data. */
    cc = pulsarc_client_config_new();
    cr_assert_eq(pulsarc_client_config_set_auth_provider(cc, &vault_provider, sizeof(void *), &v),
                 PULSARC_ERR_INVALID_ARGUMENT);

    /* A newer caller: zeros past what this library knows pass... */
    h_newer_provider_t n = { .known = vault_provider };
    cr_assert_eq(pulsarc_client_config_set_auth_provider(cc, &n.known, sizeof n, &v), PULSARC_OK,
                 "%s", pulsarc_last_error_detail());
    int frees = atomic_load(&v.frees);
    /* ...a member it does not know is refused, and the ctx handed over is freed. */
    n.future = h_future_hook;
    cr_assert_eq(pulsarc_client_config_set_auth_provider(cc, &n.known, sizeof n, &v),
                 PULSARC_ERR_UNSUPPORTED);
    cr_assert(strstr(pulsarc_last_error_detail(), "does not know"), "%s",
              pulsarc_last_error_detail());
    cr_assert_eq(atomic_load(&v.frees), frees + 1);
    pulsarc_client_config_free(cc);
    h_finish();
}

Test(client_auth_custom, bad_method_names_and_missing_initial_data_are_refused)
{
    pulsarc_client_config_t *cc = pulsarc_client_config_new();
    const char *bad[] = { "", "has space", "colon:x", "new\nline",
                          "a-name-longer-than-sixty-three-characters-is-not-a-method-name-x" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        pulsarc_auth_provider_t p = vault_provider;
        p.method_name = bad[i];
        cr_assert_eq(pulsarc_client_config_set_auth_provider(cc, &p, sizeof p, &v),
                     PULSARC_ERR_INVALID_ARGUMENT, "method \"%s\" accepted", bad[i]);
    }
    pulsarc_auth_provider_t p = vault_provider;
    p.initial_data = NULL;
    cr_assert_eq(pulsarc_client_config_set_auth_provider(cc, &p, sizeof p, &v),
                 PULSARC_ERR_INVALID_ARGUMENT);
    cr_assert_eq(pulsarc_client_config_set_auth_provider(cc, NULL, sizeof p, &v),
                 PULSARC_ERR_INVALID_ARGUMENT);
    cr_assert_eq(atomic_load(&v.frees), 6, "each refused provider is freed once");
    pulsarc_client_config_free(cc);
    h_finish();
}

Test(client_auth_custom, dump_names_the_method_and_nothing_else)
{
    pulsarc_client_config_t *cc = vault_conf();
    char buf[8192];
    pulsarc_client_config_dump(cc, buf, sizeof buf);
    cr_assert(strstr(buf, "authPlugin=custom:vault\n"), "%s", buf);
    cr_assert_null(strstr(buf, "authParams=<set"), "%s", buf);
    cr_assert_eq(atomic_load(&v.initial), 0, "the dump asked the provider");
    pulsarc_client_config_free(cc);
    /* authPlugin=custom:... by key, without a provider, is refused by name. */
    cc = pulsarc_client_config_new();
    cr_assert_eq(pulsarc_client_config_set(cc, "authPlugin", "custom:vault"), PULSARC_OK);
    pulsarc_client_t *c = NULL;
    cr_assert_eq(pulsarc_client_new(mock_broker_url(mb), cc, &c), PULSARC_ERR_INVALID_CONFIG);
    cr_assert(strstr(pulsarc_last_error_detail(), "set_auth_provider"), "%s",
              pulsarc_last_error_detail());
    pulsarc_client_config_free(cc);
    h_finish();
}
