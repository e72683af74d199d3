/* Cluster failover against two mock brokers, each standing for a cluster: `mb` (the
 * harness's) is the primary and `mb2` the secondary. A cluster becomes unreachable when
 * its mock stops listening (mock_broker_set_down), which is what the client's TCP probe
 * sees of a dead cluster.
 *
 * The probes run every 20 ms, where a test must see ten of them, on time it lets pass
 * (let_time_pass); the delays are counted on a fake clock (client/test_seams.h) that the
 * test moves, so a test waits for the log line that says the client saw the change, then
 * moves the clock past the delay, and never sleeps the delay itself. */
#include "client_harness.h"

#include <stdatomic.h>

#include "config/test_seams.h"
#include "fake_clock.h"
#include "test_http_server.h"

TestSuite(client_failover, .init = h_setup, .fini = h_teardown, .timeout = H_SUITE_TIMEOUT(40));

#define DELAY_MS 60000
#define BACK_MS 120000
#define SAW_DOWN "is unreachable ("
#define SAW_PRIMARY_BACK "is reachable again; switching back"

static mock_broker_t *mb2;
static h_fake_clock_t fclock = H_FAKE_CLOCK_INIT;

static void with_fake_clock(pulsarc_client_config_t *cc)
{
    pc_client_config_set_clock(cc, &fclock.base);
}

static void setup(void)
{
    h_setup();
    mb2 = mock_broker_start();
    cr_assert_not_null(mb2);
    h_client_setup = with_fake_clock;
}

static void teardown(void)
{
    h_teardown();
    mock_broker_stop(mb2);
    mb2 = NULL;
}

/* ms pass for the client and both clusters (h_let_time_pass_on). */
static void let_time_pass(unsigned ms)
{
    mock_broker_t *const both[] = { mb, mb2 };
    h_let_time_pass_on(ms, client, both, 2);
}

/* The end of a test body: as teardown, but a crash fails the test. */
static void finish(void)
{
    teardown();
}

/* A client of the primary checking every 20 ms, with the delays above; key/value pairs
 * (NULL-terminated) add to or override that. failover_client: with mb2 as its secondary. */
#define switching_client(...)                                                        \
    h_client("failoverCheckIntervalMs", "20", "failoverDelayMs", h_ms_str(DELAY_MS), \
             "switchBackDelayMs", h_ms_str(BACK_MS), __VA_ARGS__)
#define failover_client(...) \
    switching_client("failoverSecondaryUrls", mock_broker_url(mb2), __VA_ARGS__)

/* The message indices of b's recorded SENDs, in arrival order; returns how many. */
static int sent_indices(mock_broker_t *b, int *out, int cap)
{
    int n = (int)mock_broker_count(b, MOCK_SENDS);
    cr_assert_leq(n, cap);
    for (int i = 0; i < n; i++) {
        mock_send_t s = h_get_send(b, (size_t)i);
        out[i] = h_send_index(&s);
        mock_send_free(&s);
    }
    return n;
}

/* b received messages [from, to) in order, each once, and nothing else. */
static void assert_received_in_order(mock_broker_t *b, const char *name, int from, int to)
{
    int got[H_MAX_MSGS];
    int n = sent_indices(b, got, H_MAX_MSGS);
    cr_assert_eq(n, to - from, "%s: %d SENDs, want %d", name, n, to - from);
    for (int i = 0; i < n; i++)
        cr_assert_eq(got[i], from + i, "%s: SEND %d is message %d, want %d", name, i, got[i],
                     from + i);
}

/* The primary goes away; the client must have seen it before the clock moves. */
static void primary_dies(void)
{
    cr_assert_eq(mock_broker_set_down(mb, true), 0);
    cr_assert(h_wait_log(SAW_DOWN, 5000), "the client never saw the primary go");
}

/* Move the clock past the failover delay and wait until the producer registered on mb2. */
static void fail_over(void)
{
    uint64_t producers = h_count(mb2, MOCK_PRODUCERS);
    h_fake_clock_advance(&fclock, DELAY_MS);
    cr_assert(h_wait_count(mb2, MOCK_PRODUCERS, producers + 1, 5000),
              "the producer never registered on the secondary");
}

/* A producer that failed over to mb2, and the primary up again (seen by the client). */
static void on_the_secondary_with_the_primary_back(void)
{
    client = failover_client(NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    primary_dies();
    fail_over();
    cr_assert_eq(mock_broker_set_down(mb, false), 0);
    cr_assert(h_wait_log(SAW_PRIMARY_BACK, 5000), "the client never saw the primary back");
}

/* ---- the switch ----------------------------------------------------------------------- */

Test(client_failover, pending_messages_move_to_the_secondary_in_order, .init = setup,
     .fini = teardown)
{
    client = failover_client(NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    h_pending_unanswered(5); /* written to the primary, never answered */
    primary_dies();
    /* Until the delay has passed, the client waits for the primary. */
    let_time_pass(200); /* ten checks */
    cr_assert_eq(h_count(mb2, MOCK_CONNECTS), 0, "switched before failoverDelayMs");
    h_fake_clock_advance(&fclock, DELAY_MS - 1);
    let_time_pass(200);
    cr_assert_eq(h_count(mb2, MOCK_CONNECTS), 0, "switched before failoverDelayMs");
    h_fake_clock_advance(&fclock, 1);
    cr_assert(h_wait_calls(5, 5000), "only %d of 5 callbacks", h_total());
    h_assert_each_once(5, PULSARC_OK);
    h_assert_order(5);
    assert_received_in_order(mb2, "secondary", 0, 5);
    cr_assert(h_log_contains("switching from"), "no switch logged");
    /* New messages go to the secondary too. */
    h_send_range(producer, 5, 10);
    cr_assert(h_wait_calls(10, 5000));
    h_assert_each_once(10, PULSARC_OK);
    h_assert_order(10);
    assert_received_in_order(mb2, "secondary", 0, 10);
    cr_assert_eq(h_count(mb, MOCK_SENDS), 5, "the primary got sends after it died");
    let_time_pass(50); /* a second callback would come now */
    h_assert_each_once(10, PULSARC_OK);
    finish();
}

/* A producer waiting out a long backoff against the dead primary does not wait it out
 * once the client has switched: the switch is what it waited for. */
Test(client_failover, the_switch_cuts_the_reconnect_backoff_short, .init = setup, .fini = teardown)
{
    client = failover_client("initialBackoffIntervalMs", "3600000", "maxBackoffIntervalMs",
                             "3600000", NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    h_pending_unanswered(3);
    primary_dies();
    cr_assert(h_wait_log("reconnecting in", 5000), "the producer never scheduled a reconnect");
    h_fake_clock_advance(&fclock, DELAY_MS);
    cr_assert(h_wait_calls(3, 5000),
              "only %d of 3 callbacks: the producer sat out its "
              "backoff",
              h_total());
    h_assert_each_once(3, PULSARC_OK);
    h_assert_order(3);
    assert_received_in_order(mb2, "secondary", 0, 3);
    finish();
}

Test(client_failover, switches_back_once_the_primary_stayed_up_for_the_delay, .init = setup,
     .fini = teardown)
{
    on_the_secondary_with_the_primary_back();
    uint64_t producers = h_count(mb, MOCK_PRODUCERS);
    h_fake_clock_advance(&fclock, BACK_MS - 1);
    let_time_pass(200); /* ten checks */
    cr_assert_eq(h_count(mb, MOCK_PRODUCERS), producers, "switched back too early");
    h_send_range(producer, 0, 3);
    cr_assert(h_wait_calls(3, 5000));
    assert_received_in_order(mb2, "secondary", 0, 3);
    h_fake_clock_advance(&fclock, 1);
    cr_assert(h_wait_count(mb, MOCK_PRODUCERS, producers + 1, 5000),
              "the producer never came back to the primary");
    h_send_range(producer, 3, 6);
    cr_assert(h_wait_calls(6, 5000));
    h_assert_each_once(6, PULSARC_OK);
    h_assert_order(6);
    assert_received_in_order(mb2, "secondary", 0, 3);
    assert_received_in_order(mb, "primary", 3, 6);
    finish();
}

/* The switch-back clock starts over when the primary fails a probe in between. */
Test(client_failover, a_flapping_primary_is_not_switched_back_to, .init = setup, .fini = teardown)
{
    on_the_secondary_with_the_primary_back();
    h_fake_clock_advance(&fclock, BACK_MS - 1);
    cr_assert_eq(mock_broker_set_down(mb, true), 0);
    cr_assert(h_wait_log("is unreachable again", 5000), "the primary's failure went unseen");
    cr_assert_eq(mock_broker_set_down(mb, false), 0);
    cr_assert(h_wait_log_count(SAW_PRIMARY_BACK, 2, 5000));
    uint64_t producers = h_count(mb, MOCK_PRODUCERS);
    h_fake_clock_advance(&fclock, 1);
    let_time_pass(200);
    cr_assert_eq(h_count(mb, MOCK_PRODUCERS), producers, "the delay did not start over");
    h_fake_clock_advance(&fclock, BACK_MS);
    cr_assert(h_wait_count(mb, MOCK_PRODUCERS, producers + 1, 5000));
    finish();
}

Test(client_failover, a_healthy_primary_is_never_left, .init = setup, .fini = teardown)
{
    client = failover_client("failoverDelayMs", "0", NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    /* Each probe is a connection the mock accepts: wait for a few of them. */
    uint64_t seen = h_count(mb, MOCK_CONNECTIONS);
    cr_assert(h_wait_count(mb, MOCK_CONNECTIONS, seen + 5, 5000), "the primary is not probed");
    h_fake_clock_advance(&fclock, 10 * DELAY_MS);
    seen = h_count(mb, MOCK_CONNECTIONS);
    cr_assert(h_wait_count(mb, MOCK_CONNECTIONS, seen + 3, 5000));
    cr_assert_eq(h_count(mb2, MOCK_CONNECTIONS), 0, "the secondary was contacted");
    h_send_range(producer, 0, 2);
    cr_assert(h_wait_calls(2, 5000));
    assert_received_in_order(mb, "primary", 0, 2);
    finish();
}

/* Nobody to go to: the client stays, and goes as soon as the secondary answers. */
Test(client_failover, waits_for_a_secondary_to_answer, .init = setup, .fini = teardown)
{
    cr_assert_eq(mock_broker_set_down(mb2, true), 0);
    client = failover_client(NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    h_pending_unanswered(2);
    primary_dies();
    h_fake_clock_advance(&fclock, DELAY_MS);
    cr_assert(h_wait_log("no other cluster is reachable", 5000));
    cr_assert_eq(mock_broker_set_down(mb2, false), 0);
    cr_assert(h_wait_calls(2, 5000), "only %d of 2 callbacks", h_total());
    h_assert_each_once(2, PULSARC_OK);
    assert_received_in_order(mb2, "secondary", 0, 2);
    finish();
}

typedef struct creation {
    atomic_int res; /* -1 until answered */
    pulsarc_producer_t *_Atomic producer;
} creation;

static void on_created(pulsarc_client_t *c, pulsarc_result res, pulsarc_producer_t *p, void *ctx)
{
    (void)c;
    creation *cr = ctx;
    atomic_store(&cr->producer, p);
    atomic_store(&cr->res, (int)res);
}

/* A producer created while the primary is down waits for the switch: its partition
 * metadata lookup (CONNECT_FAILED) is tried again until operationTimeoutMs, not failed at
 * once, and the producer registers on the secondary. Without failover the same lookup
 * fails at once (client_lookup's tests). */
Test(client_failover, a_producer_created_while_the_primary_is_down_waits_for_the_switch,
     .init = setup, .fini = teardown)
{
    cr_assert_eq(mock_broker_set_down(mb, true), 0);
    client = failover_client("operationTimeoutMs", h_ms_str(h_scaled_ms(30000)), NULL);
    creation cr = { .res = -1 };
    pulsarc_producer_config_t *pc = h_producer_conf(0, NULL);
    cr_assert_eq(pulsarc_client_create_producer_async(client, H_TOPIC, pc, on_created, &cr),
                 PULSARC_OK);
    pulsarc_producer_config_free(pc);
    cr_assert(h_wait_log(SAW_DOWN, 5000), "the client never saw the primary go");
    cr_assert(h_wait_log("partition metadata lookup failed (CONNECT_FAILED", 5000),
              "the lookup was not retried (creation: %d)", atomic_load(&cr.res));
    cr_assert_eq(atomic_load(&cr.res), -1, "the creation was answered before the switch: %s",
                 pulsarc_result_name((pulsarc_result)atomic_load(&cr.res)));
    h_fake_clock_advance(&fclock, DELAY_MS);
    cr_assert(h_wait_changed(&cr.res, -1, 10000), "the creation never answered");
    cr_assert_eq(atomic_load(&cr.res), PULSARC_OK, "creation: %s",
                 pulsarc_result_name((pulsarc_result)atomic_load(&cr.res)));
    producer = atomic_load(&cr.producer);
    cr_assert_eq(h_count(mb2, MOCK_PRODUCERS), 1, "the producer registered on the secondary");
    h_send_range(producer, 0, 2);
    cr_assert(h_wait_calls(2, 5000), "only %d of 2 callbacks", h_total());
    h_assert_each_once(2, PULSARC_OK);
    assert_received_in_order(mb2, "secondary", 0, 2);
    finish();
}

/* One secondary of two hosts, the first of which is dead: the probe of any host counts,
 * and "pulsar://a,b,pulsar://c" is read as two clusters. */
Test(client_failover, secondary_urls_with_several_hosts, .init = setup, .fini = teardown)
{
    mock_broker_t *dead = mock_broker_start();
    cr_assert_not_null(dead);
    char dead_host[64], list[256];
    snprintf(dead_host, sizeof dead_host, "127.0.0.1:%u", (unsigned)mock_broker_port(dead));
    /* Down, it refuses connections and keeps the port: no test running beside this one
     * can start listening there. */
    cr_assert_eq(mock_broker_set_down(dead, true), 0);
    snprintf(list, sizeof list, "pulsar://%s, 127.0.0.1:%u,%s", dead_host,
             (unsigned)mock_broker_port(mb2), "pulsar://127.0.0.1:9");
    client = failover_client("failoverSecondaryUrls", list, NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    h_pending_unanswered(2);
    primary_dies();
    h_fake_clock_advance(&fclock, DELAY_MS);
    cr_assert(h_wait_calls(2, 5000), "only %d of 2 callbacks", h_total());
    h_assert_each_once(2, PULSARC_OK);
    assert_received_in_order(mb2, "secondary", 0, 2);
    char expect[160];
    snprintf(expect, sizeof expect, "to pulsar://%s,127.0.0.1:%u (", dead_host,
             (unsigned)mock_broker_port(mb2));
    cr_assert(h_log_contains(expect), "the first secondary was not the one switched to");
    finish();
    mock_broker_stop(dead);
}

/* ---- credentials go only where they are configured ------------------------------------ */

static void assert_last_token(mock_broker_t *b, const char *name, const char *want)
{
    mock_connect_info_t info;
    cr_assert(mock_broker_last_connect(b, &info), "%s: no CONNECT", name);
    if (!want) {
        cr_assert_not(info.has_auth_method_name, "%s: got credentials (%s)", name,
                      info.auth_method_name);
        return;
    }
    cr_assert(info.has_auth_data, "%s: no credentials", name);
    cr_assert_str_eq(info.auth_data, want, "%s: the wrong credentials", name);
}

static void add_cluster_ok(pulsarc_client_config_t *cc, const char *url, const char *plugin,
                           const char *params)
{
    cr_assert_eq(pulsarc_client_config_add_failover_cluster(cc, url, plugin, params, NULL),
                 PULSARC_OK, "%s", pulsarc_last_error_detail());
}

static void secondary_with_own_token(pulsarc_client_config_t *cc)
{
    with_fake_clock(cc);
    add_cluster_ok(cc, mock_broker_url(mb2), "token", "token:secondary-secret");
}

Test(client_failover, a_cluster_with_its_own_credentials_gets_only_those, .init = setup,
     .fini = teardown)
{
    h_client_setup = secondary_with_own_token;
    client = h_client("authPlugin", "token", "authParams", "token:primary-secret",
                      "failoverCheckIntervalMs", "20", "failoverDelayMs", h_ms_str(DELAY_MS), NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    assert_last_token(mb, "primary", "primary-secret");
    h_pending_unanswered(1);
    primary_dies();
    h_fake_clock_advance(&fclock, DELAY_MS);
    cr_assert(h_wait_calls(1, 5000));
    h_assert_each_once(1, PULSARC_OK);
    cr_assert_eq(h_count(mb2, MOCK_CONNECTS), 1);
    assert_last_token(mb2, "secondary", "secondary-secret");
    finish();
}

static void secondary_without_credentials(pulsarc_client_config_t *cc)
{
    with_fake_clock(cc);
    add_cluster_ok(cc, mock_broker_url(mb2), NULL, NULL);
}

Test(client_failover, a_cluster_added_without_credentials_gets_none, .init = setup,
     .fini = teardown)
{
    h_client_setup = secondary_without_credentials;
    client = h_client("authPlugin", "token", "authParams", "token:primary-secret",
                      "failoverCheckIntervalMs", "20", "failoverDelayMs", h_ms_str(DELAY_MS), NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    primary_dies();
    h_fake_clock_advance(&fclock, DELAY_MS);
    cr_assert(h_wait_count(mb2, MOCK_PRODUCERS, 1, 5000));
    assert_last_token(mb2, "secondary", NULL);
    finish();
}

Test(client_failover, secondaries_of_the_url_list_share_the_clients_credentials, .init = setup,
     .fini = teardown)
{
    client = failover_client("authPlugin", "token", "authParams", "token:shared-secret", NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    primary_dies();
    fail_over();
    assert_last_token(mb2, "secondary", "shared-secret");
    finish();
}

/* ---- a cluster's own provider (pulsarc_client_config_set_failover_cluster_auth_provider) */

/* Each mock judges every CONNECT as a broker that knows one credential does: only `want`
 * (NULL: none at all) passes, anything else is refused and counted, so a credential that
 * went to the wrong cluster shows however often the client connected. */
typedef struct gate {
    const char *want;
    atomic_int passed, refused;
} gate_t;

static gate_t primary_gate, secondary_gate;

static mock_auth_verdict_t judge(void *ctx, int conn, int round, const uint8_t *data, size_t len,
                                 uint8_t *out, size_t *out_len)
{
    (void)conn, (void)out, (void)out_len;
    gate_t *g = ctx;
    size_t want = g->want ? strlen(g->want) : 0;
    bool ok = round == 0 && len == want && (len == 0 || !memcmp(data, g->want, len));
    atomic_fetch_add(ok ? &g->passed : &g->refused, 1);
    return ok ? MOCK_AUTH_DONE : MOCK_AUTH_REFUSE;
}

static void gates(const char *primary, const char *secondary)
{
    primary_gate.want = primary;
    secondary_gate.want = secondary;
    mock_broker_set_auth_server(mb, judge, &primary_gate);
    mock_broker_set_auth_server(mb2, judge, &secondary_gate);
}

/* b got at least `at_least` CONNECTs, and each carried its own credential. */
static void assert_gate(mock_broker_t *b, gate_t *g, const char *name, int at_least)
{
    int passed = atomic_load(&g->passed), refused = atomic_load(&g->refused);
    cr_assert_eq(refused, 0, "%s: %d CONNECT(s) carried credentials not its own", name, refused);
    cr_assert_eq((uint64_t)passed, h_count(b, MOCK_CONNECTS), "%s: CONNECTs the gate never saw",
                 name);
    cr_assert_geq(passed, at_least, "%s: %d CONNECT(s), want %d at least", name, passed, at_least);
}

/* A provider's state (ctx): its token, how often it was asked, and freed. */
typedef struct vault {
    const char *token;
    atomic_int asked, frees;
} vault_t;

static vault_t vault_a = { .token = "token-A" }, vault_b = { .token = "token-B" },
               vault_c = { .token = "token-C" };

static pulsarc_result vault_data(void *ctx, pulsarc_auth_data_t *out)
{
    vault_t *v = ctx;
    atomic_fetch_add(&v->asked, 1);
    return pulsarc_auth_data_set(out, v->token, strlen(v->token));
}

static void vault_free(void *ctx)
{
    atomic_fetch_add(&((vault_t *)ctx)->frees, 1);
}

/* Method "token": the broker's token provider, and the Bearer header for HTTP lookups. */
static const pulsarc_auth_provider_t vault_provider = {
    .method_name = "token",
    .initial_data = vault_data,
    .free = vault_free,
};

static pulsarc_result set_cluster_provider(pulsarc_client_config_t *cc, const char *url, vault_t *v)
{
    return pulsarc_client_config_set_failover_cluster_auth_provider(cc, url, &vault_provider,
                                                                    sizeof vault_provider, v);
}

static void secondary_with_own_provider(pulsarc_client_config_t *cc)
{
    with_fake_clock(cc);
    add_cluster_ok(cc, mock_broker_url(mb2), NULL, NULL);
    cr_assert_eq(set_cluster_provider(cc, mock_broker_url(mb2), &vault_b), PULSARC_OK, "%s",
                 pulsarc_last_error_detail());
}

/* A client of the primary with token A (built in) and a secondary that `setup` adds with
 * token B, each mock letting its own token pass only; `pending` messages written to the
 * primary and never answered there, then the switch, which delivers them. */
static void token_a_to_token_b(void (*setup)(pulsarc_client_config_t *cc), int pending)
{
    gates("token-A", "token-B");
    h_client_setup = setup;
    client = switching_client("authPlugin", "token", "authParams", "token:token-A", NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    h_pending_unanswered(pending);
    primary_dies();
    fail_over();
    cr_assert(h_wait_calls(pending, 5000), "only %d of %d callbacks", h_total(), pending);
}

/* The secondary's provider gives token B: there and back again, each cluster only ever
 * sees its own. */
Test(client_failover, a_clusters_own_provider_goes_there_and_nowhere_else, .init = setup,
     .fini = teardown)
{
    token_a_to_token_b(secondary_with_own_provider, 2);
    cr_assert_eq(mock_broker_set_down(mb, false), 0);
    cr_assert(h_wait_log(SAW_PRIMARY_BACK, 5000), "the client never saw the primary back");
    uint64_t producers = h_count(mb, MOCK_PRODUCERS);
    h_fake_clock_advance(&fclock, BACK_MS);
    cr_assert(h_wait_count(mb, MOCK_PRODUCERS, producers + 1, 5000), "never switched back");
    h_send_range(producer, 2, 4);
    cr_assert(h_wait_calls(4, 5000), "only %d of 4 callbacks", h_total());
    h_assert_each_once(4, PULSARC_OK);
    assert_received_in_order(mb2, "secondary", 0, 2);
    assert_gate(mb, &primary_gate, "primary", 2);
    assert_gate(mb2, &secondary_gate, "secondary", 1);
    cr_assert_gt(atomic_load(&vault_b.asked), 0);
    cr_assert_eq(atomic_load(&vault_b.frees), 0, "freed while the client uses it");
    finish();
    cr_assert_eq(atomic_load(&vault_b.frees), 1, "free ran %d times", atomic_load(&vault_b.frees));
}

/* The same over HTTP: the secondary's web service is asked with B's Bearer header. */
static char web_url[64];

static void web_secondary_with_own_provider(pulsarc_client_config_t *cc)
{
    with_fake_clock(cc);
    add_cluster_ok(cc, web_url, NULL, NULL);
    cr_assert_eq(set_cluster_provider(cc, web_url, &vault_b), PULSARC_OK, "%s",
                 pulsarc_last_error_detail());
}

Test(client_failover, a_clusters_own_provider_authorizes_its_http_lookups, .init = setup,
     .fini = teardown)
{
    char body[128], answer[512];
    int n = snprintf(body, sizeof body, "{\"brokerUrl\":\"%s\",\"partitions\":0}",
                     mock_broker_url(mb2));
    snprintf(answer, sizeof answer,
             "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n"
             "Connection: close\r\n\r\n%s",
             n, body);
    test_server_t web = { .answer = answer };
    ts_start(&web);
    snprintf(web_url, sizeof web_url, "http://127.0.0.1:%d", web.port);
    token_a_to_token_b(web_secondary_with_own_provider, 1);
    h_assert_each_once(1, PULSARC_OK);
    cr_assert_geq(ts_requests(&web), 1, "no lookup reached the secondary's web service");
    const char *req = ts_last_request(&web);
    cr_assert(strstr(req, "\r\nAuthorization: Bearer token-B\r\n"), "%s", req);
    cr_assert_null(strstr(req, "token-A"), "the primary's token went along: %s", req);
    assert_gate(mb2, &secondary_gate, "secondary", 1);
    finish();
    ts_stop(&web);
    cr_assert_eq(atomic_load(&vault_b.frees), 1);
}

/* Without credentials of its own, a cluster added with add_failover_cluster gets none:
 * not the client's provider either. */
static void primary_with_own_provider(pulsarc_client_config_t *cc)
{
    with_fake_clock(cc);
    cr_assert_eq(pulsarc_client_config_set_auth_provider(cc, &vault_provider, sizeof vault_provider,
                                                         &vault_a),
                 PULSARC_OK, "%s", pulsarc_last_error_detail());
}

static void primary_provider_and_bare_secondary(pulsarc_client_config_t *cc)
{
    primary_with_own_provider(cc);
    add_cluster_ok(cc, mock_broker_url(mb2), NULL, NULL);
}

Test(client_failover, the_clients_provider_stays_off_a_cluster_added_without_credentials,
     .init = setup, .fini = teardown)
{
    gates("token-A", NULL);
    h_client_setup = primary_provider_and_bare_secondary;
    client = switching_client(NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    primary_dies();
    fail_over();
    h_send_range(producer, 0, 2);
    cr_assert(h_wait_calls(2, 5000), "only %d of 2 callbacks", h_total());
    h_assert_each_once(2, PULSARC_OK);
    assert_gate(mb, &primary_gate, "primary", 1);
    assert_gate(mb2, &secondary_gate, "secondary", 1);
    finish();
    cr_assert_eq(atomic_load(&vault_a.frees), 1);
}

/* ...while the secondaries of failoverSecondaryUrls share it, as they share any. */
Test(client_failover, secondaries_of_the_url_list_share_the_clients_provider, .init = setup,
     .fini = teardown)
{
    gates("token-A", "token-A");
    h_client_setup = primary_with_own_provider;
    client = failover_client(NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    primary_dies();
    fail_over();
    assert_gate(mb, &primary_gate, "primary", 1);
    assert_gate(mb2, &secondary_gate, "secondary", 1);
    finish();
    cr_assert_eq(atomic_load(&vault_a.frees), 1);
}

/* The configuration's side: the cluster named by its URL (the last added with it), a
 * replaced provider freed at once, the client's setters leaving it alone, dumps naming
 * the method only. */
static bool dump_has(const pulsarc_client_config_t *cc, const char *line)
{
    char buf[16384], want[256];
    buf[0] = '\n'; /* so that the first line matches a "\n"-anchored needle too */
    pulsarc_client_config_dump(cc, buf + 1, sizeof buf - 1);
    snprintf(want, sizeof want, "\n%s\n", line);
    cr_assert_null(strstr(buf, "token-"), "a provider's data in the dump: %s", buf);
    cr_assert_null(strstr(buf, "dr-secret"), "a secret in the dump: %s", buf);
    return strstr(buf, want) != NULL;
}

Test(client_failover, a_clusters_provider_replaces_its_auth_and_is_freed_once_when_replaced)
{
    pulsarc_client_config_t *cc = pulsarc_client_config_new();
    add_cluster_ok(cc, "pulsar://dr-a:6650", "token", "token:dr-secret");
    add_cluster_ok(cc, "pulsar://dr-b:6650", NULL, NULL);
    add_cluster_ok(cc, "pulsar://dr-b:6650", NULL, NULL);
    cr_assert(dump_has(cc, "failoverCluster.0.authPlugin=token"));
    cr_assert(dump_has(cc, "failoverCluster.0.authParams=<set, not shown>"));
    cr_assert_eq(set_cluster_provider(cc, "pulsar://dr-a:6650", &vault_b), PULSARC_OK);
    cr_assert_eq(set_cluster_provider(cc, "pulsar://dr-b:6650", &vault_c), PULSARC_OK);
    cr_assert(dump_has(cc, "failoverCluster.0.serviceUrl=pulsar://dr-a:6650"));
    cr_assert(dump_has(cc, "failoverCluster.0.authPlugin=custom:token"));
    cr_assert(dump_has(cc, "failoverCluster.0.authParams="), "the token's params survived");
    cr_assert(dump_has(cc, "failoverCluster.1.authPlugin="), "not the last added with the URL");
    cr_assert(dump_has(cc, "failoverCluster.2.authPlugin=custom:token"));
    cr_assert(dump_has(cc, "authPlugin="), "the client's authentication changed");
    cr_assert_eq(atomic_load(&vault_b.asked) + atomic_load(&vault_c.asked), 0,
                 "the dump asked a provider");
    /* Another provider for the cluster: the one it replaces is freed now, once. */
    cr_assert_eq(set_cluster_provider(cc, "pulsar://dr-a:6650", &vault_a), PULSARC_OK);
    cr_assert_eq(atomic_load(&vault_b.frees), 1);
    /* The client's own authentication is another matter. */
    cr_assert_eq(pulsarc_client_config_set_auth_token(cc, "t"), PULSARC_OK);
    cr_assert_eq(pulsarc_client_config_set(cc, "authPlugin", "basic"), PULSARC_OK);
    cr_assert_eq(atomic_load(&vault_a.frees) + atomic_load(&vault_c.frees), 0,
                 "the client's setters freed a cluster's provider");
    cr_assert(dump_has(cc, "failoverCluster.0.authPlugin=custom:token"));
    pulsarc_client_config_free(cc);
    cr_assert_eq(atomic_load(&vault_a.frees), 1);
    cr_assert_eq(atomic_load(&vault_b.frees), 1);
    cr_assert_eq(atomic_load(&vault_c.frees), 1);
}

/* ctx is shared by the configuration and each client made from it: free runs once, when
 * the last of them lets go. */
Test(client_failover, a_clusters_provider_is_freed_once_after_the_config_and_every_client)
{
    pulsarc_client_config_t *cc = pulsarc_client_config_new();
    pulsarc_client_config_set_logger(cc, h_logger, NULL);
    add_cluster_ok(cc, "pulsar://127.0.0.1:9", NULL, NULL);
    cr_assert_eq(set_cluster_provider(cc, "pulsar://127.0.0.1:9", &vault_b), PULSARC_OK);
    pulsarc_client_t *c1 = NULL, *c2 = NULL;
    cr_assert_eq(pulsarc_client_new(mock_broker_url(mb), cc, &c1), PULSARC_OK, "%s",
                 pulsarc_last_error_detail());
    cr_assert_eq(pulsarc_client_new(mock_broker_url(mb), cc, &c2), PULSARC_OK);
    pulsarc_client_destroy(c1);
    pulsarc_client_config_free(cc);
    cr_assert_eq(atomic_load(&vault_b.frees), 0, "freed while a client holds it");
    pulsarc_client_destroy(c2);
    cr_assert_eq(atomic_load(&vault_b.frees), 1, "free ran %d times", atomic_load(&vault_b.frees));
    cr_assert_eq(atomic_load(&vault_b.asked), 0, "asked without a connection to the cluster");
}

/* The setter's refusals hand ctx back through free, once each; the layout rule is
 * set_auth_provider's; a refused provider leaves the cluster's in place. */
Test(client_failover, a_clusters_provider_follows_the_layout_rule_and_refusals_free_it)
{
    const char *url = "pulsar://dr:6650";
    pulsarc_client_config_t *cc = pulsarc_client_config_new();
    add_cluster_ok(cc, url, NULL, NULL);
    cr_assert_eq(set_cluster_provider(cc, "pulsar://elsewhere:6650", &vault_b),
                 PULSARC_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pulsarc_last_error_detail(), "pulsar://elsewhere:6650"), "%s",
              pulsarc_last_error_detail());
    cr_assert_eq(set_cluster_provider(NULL, url, &vault_b), PULSARC_ERR_INVALID_ARGUMENT);
    cr_assert_eq(set_cluster_provider(cc, NULL, &vault_b), PULSARC_ERR_INVALID_ARGUMENT);
    cr_assert_eq(atomic_load(&vault_b.frees), 3, "each refused provider is freed once");
    cr_assert_eq(pulsarc_client_config_set_failover_cluster_auth_provider(cc, url, NULL, 0,
                                                                          &vault_b),
                 PULSARC_ERR_INVALID_ARGUMENT);
    pulsarc_auth_provider_t p = vault_provider;
    p.initial_data = NULL;
    cr_assert_eq(pulsarc_client_config_set_failover_cluster_auth_provider(cc, url, &p, sizeof p,
                                                                          &vault_b),
                 PULSARC_ERR_INVALID_ARGUMENT);
    p = vault_provider;
    p.method_name = "has space";
    cr_assert_eq(pulsarc_client_config_set_failover_cluster_auth_provider(cc, url, &p, sizeof p,
                                                                          &vault_b),
                 PULSARC_ERR_INVALID_ARGUMENT);
    cr_assert_eq(atomic_load(&vault_b.frees), 5);

    /* An older caller's prefix: accepted, and its free (past its size) is never read. */
    size_t old_size = offsetof(pulsarc_auth_provider_t, initial_data) + sizeof(void *);
    cr_assert_eq(pulsarc_client_config_set_failover_cluster_auth_provider(cc, url, &vault_provider,
                                                                          old_size, &vault_c),
                 PULSARC_OK, "%s", pulsarc_last_error_detail());
    cr_assert_eq(pulsarc_client_config_set_failover_cluster_auth_provider(cc, url, &vault_provider,
                                                                          sizeof(void *), &vault_c),
                 PULSARC_ERR_INVALID_ARGUMENT, "a size short of initial_data");
    /* A newer caller's: zeros past what this library knows pass, a member it does not
     * know is refused (and freed), and the cluster keeps the provider it had. */
    h_newer_provider_t n = { .known = vault_provider };
    cr_assert_eq(pulsarc_client_config_set_failover_cluster_auth_provider(cc, url, &n.known,
                                                                          sizeof n, &vault_a),
                 PULSARC_OK, "%s", pulsarc_last_error_detail());
    cr_assert_eq(atomic_load(&vault_c.frees), 0, "free was read past the caller's size");
    n.future = h_future_hook;
    cr_assert_eq(pulsarc_client_config_set_failover_cluster_auth_provider(cc, url, &n.known,
                                                                          sizeof n, &vault_b),
                 PULSARC_ERR_UNSUPPORTED);
    cr_assert(strstr(pulsarc_last_error_detail(), "does not know"), "%s",
              pulsarc_last_error_detail());
    cr_assert_eq(atomic_load(&vault_b.frees), 6);
    cr_assert_eq(atomic_load(&vault_a.frees), 0, "a refused provider replaced the cluster's");
    pulsarc_client_config_free(cc);
    cr_assert_eq(atomic_load(&vault_a.frees), 1);
    cr_assert_eq(atomic_load(&vault_c.frees), 0);
}

/* ---- the service URL decided by the application --------------------------------------- */

static pthread_mutex_t url_mu = PTHREAD_MUTEX_INITIALIZER;
static char provided_url[256];
static _Atomic int provider_calls;

static int provide_url(void *ctx, char *buf, size_t len)
{
    cr_assert_eq(ctx, &provider_calls, "the provider's context");
    atomic_fetch_add(&provider_calls, 1);
    pthread_mutex_lock(&url_mu);
    int rc = provided_url[0] ? 0 : 1;
    if (!rc)
        snprintf(buf, len, "%s", provided_url);
    pthread_mutex_unlock(&url_mu);
    return rc;
}

static void provide(const char *url)
{
    pthread_mutex_lock(&url_mu);
    snprintf(provided_url, sizeof provided_url, "%s", url ? url : "");
    pthread_mutex_unlock(&url_mu);
}

static void with_provider(pulsarc_client_config_t *cc)
{
    cr_assert_eq(pulsarc_client_config_set_service_url_provider(cc, provide_url, &provider_calls),
                 PULSARC_OK);
}

Test(client_failover, a_service_url_provider_moves_the_client, .init = setup, .fini = teardown)
{
    h_client_setup = with_provider;
    provide(NULL); /* nothing to say yet: the first URL stays */
    client = h_client("failoverCheckIntervalMs", "20", NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    int calls = atomic_load(&provider_calls);
    cr_assert(h_wait_changed(&provider_calls, calls, 5000), "the provider is never asked");
    h_pending_unanswered(3);
    provide("pulsar://no such url");
    cr_assert(h_wait_log("not used", 5000), "a bad URL went unnoticed");
    provide(mock_broker_url(mb2));
    cr_assert(h_wait_calls(3, 5000), "only %d of 3 callbacks", h_total());
    h_assert_each_once(3, PULSARC_OK);
    assert_received_in_order(mb2, "secondary", 0, 3);
    /* The same answer again changes nothing. */
    uint64_t connects = h_count(mb2, MOCK_CONNECTS);
    calls = atomic_load(&provider_calls);
    cr_assert(h_wait_changed(&provider_calls, calls, 5000));
    cr_assert(h_wait_changed(&provider_calls, calls + 1, 5000));
    cr_assert_eq(h_count(mb2, MOCK_CONNECTS), connects, "reconnected for the same URL");
    finish();
}

Test(client_failover, update_service_url_moves_the_client, .init = setup, .fini = teardown)
{
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    h_pending_unanswered(3);
    cr_assert_eq(pulsarc_client_update_service_url(client, "pulsar+ssl://"),
                 PULSARC_ERR_INVALID_URL);
    cr_assert_eq(pulsarc_client_update_service_url(client, mock_broker_url(mb2)), PULSARC_OK);
    cr_assert(h_wait_calls(3, 5000), "only %d of 3 callbacks", h_total());
    h_assert_each_once(3, PULSARC_OK);
    h_assert_order(3);
    assert_received_in_order(mb2, "secondary", 0, 3);
    cr_assert(h_log_contains("switching from"));
    finish();
}

/* A pulsar+ssl:// URL on a client that had no TLS: the context comes from the client's
 * settings, built by the call, which reports settings that do not load. */
Test(client_failover, update_service_url_builds_tls_from_the_settings, .init = setup,
     .fini = teardown)
{
    client = h_client("tlsTrustCertsFilePath", "/nonexistent/ca.pem", NULL);
    cr_assert_eq(pulsarc_client_update_service_url(client, "pulsar+ssl://127.0.0.1:6651"),
                 PULSARC_ERR_TLS_CONFIG);
    cr_assert(strstr(pulsarc_last_error_detail(), "/nonexistent/ca.pem"), "detail: %s",
              pulsarc_last_error_detail());
    finish();
}

Test(client_failover, update_service_url_is_refused_where_the_client_decides, .init = setup,
     .fini = teardown)
{
    client = failover_client(NULL);
    cr_assert_eq(pulsarc_client_update_service_url(client, mock_broker_url(mb2)),
                 PULSARC_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pulsarc_last_error_detail(), "by itself"), "detail: %s",
              pulsarc_last_error_detail());
    finish();
}

/* ---- configuration errors ------------------------------------------------------------- */

static pulsarc_result new_client(pulsarc_client_config_t *cc)
{
    pulsarc_client_t *c = NULL;
    pulsarc_result r = pulsarc_client_new("pulsar://127.0.0.1:6650", cc, &c);
    if (c)
        pulsarc_client_destroy(c);
    cr_assert_eq(r == PULSARC_OK, c != NULL);
    return r;
}

Test(client_failover, bad_settings_are_refused_with_a_reason)
{
    pulsarc_client_config_t *cc = pulsarc_client_config_new();
    cr_assert_eq(pulsarc_client_config_set(cc, "failoverSecondaryUrls", "localhost:6650"),
                 PULSARC_OK); /* checked when the client is made */
    cr_assert_eq(new_client(cc), PULSARC_ERR_INVALID_URL);
    cr_assert(strstr(pulsarc_last_error_detail(), "failoverSecondaryUrls"), "detail: %s",
              pulsarc_last_error_detail());
    cr_assert_eq(pulsarc_client_config_set(cc, "failoverSecondaryUrls", "pulsar://a:1,pulsar://"),
                 PULSARC_OK);
    cr_assert_eq(new_client(cc), PULSARC_ERR_INVALID_URL);
    cr_assert_eq(pulsarc_client_config_set(cc, "failoverSecondaryUrls", "pulsar://a:1"),
                 PULSARC_OK);
    cr_assert_eq(pulsarc_client_config_set(cc, "failoverCheckIntervalMs", "0"),
                 PULSARC_ERR_INVALID_CONFIG);
    cr_assert_eq(pulsarc_client_config_set(cc, "failoverDelayMs", "-1"),
                 PULSARC_ERR_INVALID_CONFIG);
    cr_assert_eq(new_client(cc), PULSARC_OK);
    /* A provider decides the cluster alone. */
    cr_assert_eq(pulsarc_client_config_set_service_url_provider(cc, provide_url, NULL), PULSARC_OK);
    cr_assert_eq(new_client(cc), PULSARC_ERR_INVALID_CONFIG);
    cr_assert_eq(pulsarc_client_config_set_service_url_provider(cc, NULL, NULL), PULSARC_OK);
    /* Clusters with their own credentials. */
    cr_assert_eq(pulsarc_client_config_add_failover_cluster(cc, "pulsar//x", NULL, NULL, NULL),
                 PULSARC_ERR_INVALID_URL);
    cr_assert_eq(pulsarc_client_config_add_failover_cluster(cc, "pulsar://x", "kerberos", NULL,
                                                            NULL),
                 PULSARC_ERR_INVALID_CONFIG);
    cr_assert_eq(pulsarc_client_config_add_failover_cluster(cc, "pulsar://x", NULL, "token:abc",
                                                            NULL),
                 PULSARC_ERR_INVALID_ARGUMENT);
    cr_assert_eq(pulsarc_client_config_add_failover_cluster(cc, "pulsar://x", "basic",
                                                            "not basic params", NULL),
                 PULSARC_OK); /* the parameters are read when the client is made */
    cr_assert_eq(new_client(cc), PULSARC_ERR_INVALID_CONFIG);
    cr_assert(strstr(pulsarc_last_error_detail(), "failover cluster pulsar://x"), "detail: %s",
              pulsarc_last_error_detail());
    cr_assert_not(strstr(pulsarc_last_error_detail(), "not basic params"),
                  "the detail quotes the secret: %s", pulsarc_last_error_detail());
    pulsarc_client_config_free(cc);
}

/* An SNI proxy carries the broker's name in TLS: every cluster must be TLS. */
Test(client_failover, an_sni_proxy_wants_tls_of_every_cluster)
{
    pulsarc_client_config_t *cc = pulsarc_client_config_new();
    cr_assert_eq(pulsarc_client_config_set(cc, "proxyServiceUrl", "pulsar+ssl://sni:4443"),
                 PULSARC_OK);
    cr_assert_eq(pulsarc_client_config_set(cc, "proxyProtocol", "SNI"), PULSARC_OK);
    cr_assert_eq(pulsarc_client_config_set(cc, "failoverSecondaryUrls", "pulsar://dr:6650"),
                 PULSARC_OK);
    pulsarc_client_t *c = NULL;
    cr_assert_eq(pulsarc_client_new("pulsar+ssl://127.0.0.1:6651", cc, &c),
                 PULSARC_ERR_INVALID_CONFIG);
    cr_assert(strstr(pulsarc_last_error_detail(), "pulsar://dr:6650"), "detail: %s",
              pulsarc_last_error_detail());
    cr_assert_eq(pulsarc_client_config_set(cc, "failoverSecondaryUrls", "pulsar+ssl://dr:6651"),
                 PULSARC_OK);
    cr_assert_eq(pulsarc_client_new("pulsar+ssl://127.0.0.1:6651", cc, &c), PULSARC_OK, "%s",
                 pulsarc_last_error_detail());
    pulsarc_client_destroy(c);
    pulsarc_client_config_free(cc);
}

Test(client_failover, at_most_sixteen_secondaries)
{
    pulsarc_client_config_t *cc = pulsarc_client_config_new();
    for (int i = 0; i < 16; i++)
        cr_assert_eq(pulsarc_client_config_add_failover_cluster(cc, "pulsar://x", NULL, NULL, NULL),
                     PULSARC_OK);
    cr_assert_eq(pulsarc_client_config_add_failover_cluster(cc, "pulsar://x", NULL, NULL, NULL),
                 PULSARC_ERR_INVALID_CONFIG);
    cr_assert_eq(new_client(cc), PULSARC_OK);
    cr_assert_eq(pulsarc_client_config_set(cc, "failoverSecondaryUrls", "pulsar://y"), PULSARC_OK);
    cr_assert_eq(new_client(cc), PULSARC_ERR_INVALID_CONFIG);
    pulsarc_client_config_free(cc);
}
