/* The client against the mock broker: a blue-green cluster migration (PIP-188). The
 * broker of the old ("blue") cluster tells a producer TOPIC_MIGRATED, naming the new
 * ("green") cluster's service URL, then closes it; the producer registers on the green
 * cluster with its name and sequence ids, resends what was pending in order, and looks the
 * topic up there from then on. A URL missing or malformed is not followed. */
#include "client_harness.h"

TestSuite(client_migration, .init = h_setup, .fini = h_teardown, .timeout = H_SUITE_TIMEOUT(30));

#define PRODUCER_TYPE PULSAR__PROTO__COMMAND_TOPIC_MIGRATED__RESOURCE_TYPE__Producer
#define CONSUMER_TYPE PULSAR__PROTO__COMMAND_TOPIC_MIGRATED__RESOURCE_TYPE__Consumer

static uint64_t migrations(pulsarc_producer_t *p)
{
    pulsarc_stats_t *s = NULL;
    cr_assert_eq(pulsarc_producer_stats(p, &s), PULSARC_OK);
    uint64_t n = pulsarc_stats_get(s, PULSARC_STAT_TOPIC_MIGRATIONS);
    pulsarc_stats_free(s);
    return n;
}

static uint64_t last_producer_id(mock_broker_t *b)
{
    mock_producer_info_t info;
    cr_assert(mock_broker_last_producer(b, &info));
    return info.producer_id;
}

Test(client_migration, producer_follows_to_the_new_cluster_and_stays_there)
{
    mock_broker_t *green = mock_broker_start();
    cr_assert_not_null(green);
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    h_pending_unanswered(3); /* written to blue, never receipted there */
    uint64_t blue_lookups = h_count(mb, MOCK_LOOKUPS);
    cr_assert_eq(mock_broker_topic_migrated(mb, last_producer_id(mb), PRODUCER_TYPE,
                                            mock_broker_url(green), NULL),
                 1);
    cr_assert(h_wait_calls(3, 5000), "only %d of 3 callbacks", h_total());
    h_settle(green);
    h_expect_no_more_callbacks();
    h_assert_each_once(3, PULSARC_OK);
    h_assert_order(3);
    cr_assert_eq(h_count(green, MOCK_PRODUCERS), 1, "the producer did not register on green");
    cr_assert_eq(h_count(mb, MOCK_PRODUCERS), 1, "the producer registered on blue again");
    cr_assert_eq(h_count(mb, MOCK_LOOKUPS), blue_lookups, "the topic was looked up on blue");
    cr_assert_geq(h_count(green, MOCK_LOOKUPS), 1, "the topic was not looked up on green");
    /* The same producer: its name, and the pending messages with their sequence ids. */
    mock_producer_info_t moved;
    cr_assert(mock_broker_last_producer(green, &moved));
    cr_assert_str_eq(moved.producer_name, "mock-0", "the broker-assigned name was not kept");
    cr_assert_eq(h_count(green, MOCK_SENDS), 3, "pending messages not resent on green");
    for (size_t i = 0; i < 3; i++) {
        mock_send_t was = h_get_send(mb, i), now = h_get_send(green, i);
        cr_assert_eq(h_send_index(&now), (int)i, "resent out of order");
        cr_assert_eq(now.sequence_id, was.sequence_id, "message %zu: sequence id %llu, was %llu", i,
                     (unsigned long long)now.sequence_id, (unsigned long long)was.sequence_id);
        mock_send_free(&was);
        mock_send_free(&now);
    }
    cr_assert_eq(migrations(producer), 1);
    char *text = NULL;
    size_t len = 0;
    cr_assert_eq(pulsarc_client_metrics_text(client, &text, &len), PULSARC_OK);
    cr_assert(strstr(text, "pulsarc_producer_topic_migration_total{") &&
                  strstr(strstr(text, "pulsarc_producer_topic_migration_total{"), "} 1\n"),
              "%s", text);
    pulsarc_metrics_text_free(text);
    cr_assert(h_log_contains("moved to another cluster"));
    cr_assert(h_log_contains(mock_broker_url(green)), "the log does not name the new cluster");
    /* New sends go to green; so does every later reconnect. */
    cr_assert_eq(h_send_sync(producer, 3), PULSARC_OK);
    cr_assert_eq(h_count(green, MOCK_SENDS), 4);
    uint64_t green_lookups = h_count(green, MOCK_LOOKUPS);
    mock_broker_cut_now(green);
    cr_assert(h_let_time_pass_until_count(green, MOCK_PRODUCERS, 2, 10000),
              "the producer did not come back to green");
    cr_assert_gt(h_count(green, MOCK_LOOKUPS), green_lookups);
    cr_assert_eq(h_count(mb, MOCK_LOOKUPS), blue_lookups, "a later reconnect looked up on blue");
    cr_assert_eq(h_count(mb, MOCK_PRODUCERS), 1);
    cr_assert_eq(h_send_sync(producer, 4), PULSARC_OK);
    cr_assert_eq(h_count(green, MOCK_SENDS), 5);
    cr_assert_eq(h_count(mb, MOCK_SENDS), 3);
    cr_assert_eq(migrations(producer), 1);
    h_finish();
    mock_broker_stop(green);
}

/* What must not be followed: the producer is closed as by CLOSE_PRODUCER alone (it looks
 * the topic up on blue again), a warning says why, nothing crashes. */
static void expect_not_followed(const char *url, const char *url_tls, const char *why, int round)
{
    uint64_t producers = h_count(mb, MOCK_PRODUCERS);
    int warned = h_log_count("handled as CLOSE_PRODUCER");
    cr_assert_eq(mock_broker_topic_migrated(mb, last_producer_id(mb), PRODUCER_TYPE, url, url_tls),
                 1);
    cr_assert(h_let_time_pass_until_count(mb, MOCK_PRODUCERS, producers + 1, 10000),
              "round %d: the producer did not register on blue again", round);
    cr_assert_eq(h_log_count("handled as CLOSE_PRODUCER"), warned + 1, "round %d: no warning",
                 round);
    cr_assert(h_log_contains(why), "round %d: the warning does not say \"%s\"", round, why);
    cr_assert_eq(h_send_sync(producer, round), PULSARC_OK);
}

Test(client_migration, missing_or_malformed_url_is_not_followed)
{
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    expect_not_followed(NULL, NULL, "names no brokerServiceUrl", 0);
    /* Only a TLS address, on a plain-text client: not taken instead. */
    expect_not_followed(NULL, "pulsar+ssl://127.0.0.1:1", "names no brokerServiceUrl", 1);
    expect_not_followed("pulsar+ssl://127.0.0.1:1", NULL, "not a pulsar:// URL", 2);
    expect_not_followed("http://127.0.0.1:8080", NULL, "web service URL", 3);
    expect_not_followed("pulsar://127.0.0.1:99999", NULL, "not a service URL", 4);
    expect_not_followed("pulsar://a b\x1b[31m:6650", NULL, "not a service URL", 5);
    expect_not_followed("pulsar://user:pw@127.0.0.1:1", NULL, "not shown", 6);
    cr_assert_not(h_log_contains("pw@"), "a password-like URL reached the log");
    cr_assert_not(h_log_contains("\x1b"), "a control character reached the log");
    cr_assert_eq(migrations(producer), 0);
    cr_assert_eq(h_count(mb, MOCK_SENDS), 7);
    h_finish();
}

Test(client_migration, a_consumer_migration_is_ignored)
{
    mock_broker_t *green = mock_broker_start();
    cr_assert_not_null(green);
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    /* Same id as the producer's, but a consumer's: not this producer's business. */
    cr_assert_eq(mock_broker_topic_migrated(mb, last_producer_id(mb), CONSUMER_TYPE,
                                            mock_broker_url(green), NULL),
                 1);
    h_settle(mb);
    h_quiet_on(client, (mock_broker_t *const[]){ mb, green }, 2);
    cr_assert_eq(h_count(green, MOCK_CONNECTS), 0, "the producer followed a consumer's move");
    cr_assert_eq(h_count(mb, MOCK_PRODUCERS), 1);
    cr_assert_eq(h_send_sync(producer, 0), PULSARC_OK);
    cr_assert_eq(h_count(mb, MOCK_SENDS), 1);
    cr_assert_eq(migrations(producer), 0);
    h_finish();
    mock_broker_stop(green);
}

Test(client_migration, each_partition_follows_when_its_broker_tells_it)
{
    mock_broker_t *green = mock_broker_start();
    cr_assert_not_null(green);
    mock_broker_set_partitions(mb, 2);
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    cr_assert_eq(h_count(mb, MOCK_PRODUCERS), 2);
    mock_producer_info_t told;
    cr_assert(mock_broker_last_producer(mb, &told));
    cr_assert_eq(mock_broker_topic_migrated(mb, told.producer_id, PRODUCER_TYPE,
                                            mock_broker_url(green), NULL),
                 1);
    cr_assert(h_wait_count(green, MOCK_PRODUCERS, 1, 5000));
    mock_producer_info_t moved;
    cr_assert(mock_broker_last_producer(green, &moved));
    cr_assert_str_eq(moved.topic, told.topic, "another partition moved");
    h_send_range(producer, 0, 4); /* round robin: two to each partition */
    cr_assert(h_wait_calls(4, 5000), "only %d of 4 callbacks", h_total());
    h_assert_each_once(4, PULSARC_OK);
    cr_assert_eq(h_count(green, MOCK_SENDS), 2, "the moved partition's messages");
    cr_assert_eq(h_count(mb, MOCK_SENDS), 2, "the other partition's messages");
    cr_assert_eq(h_count(green, MOCK_PRODUCERS), 1);
    cr_assert_eq(h_count(mb, MOCK_PRODUCERS), 2);
    cr_assert_eq(migrations(producer), 1);
    h_finish();
    mock_broker_stop(green);
}

Test(client_migration, a_switch_of_cluster_forgets_the_move)
{
    mock_broker_t *green = mock_broker_start(), *other = mock_broker_start();
    cr_assert(green && other);
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    cr_assert_eq(mock_broker_topic_migrated(mb, last_producer_id(mb), PRODUCER_TYPE,
                                            mock_broker_url(green), NULL),
                 1);
    cr_assert(h_wait_count(green, MOCK_PRODUCERS, 1, 5000));
    /* The application moves the client to another cluster: the producer goes there, not
     * to the cluster its topic had moved to. */
    cr_assert_eq(pulsarc_client_update_service_url(client, mock_broker_url(other)), PULSARC_OK);
    cr_assert(h_let_time_pass_until_count(other, MOCK_PRODUCERS, 1, 10000),
              "the producer did not follow the switch");
    cr_assert_eq(h_count(green, MOCK_PRODUCERS), 1,
                 "the producer went back to the moved-to cluster");
    cr_assert(h_log_contains("lookups leave the cluster the topic had moved to"));
    cr_assert_eq(h_send_sync(producer, 0), PULSARC_OK);
    cr_assert_eq(h_count(other, MOCK_SENDS), 1);
    h_finish();
    mock_broker_stop(green);
    mock_broker_stop(other);
}
