/* The client against the mock broker: who may publish (access modes, the topic epoch a
 * producer keeps across reconnects, waiting for exclusive access), what a producer tells
 * the broker about itself (properties, an initial subscription), per-message replication
 * and delivery delays, and pulsarc_producer_is_connected. */
#include "client_harness.h"

#include <pthread.h>
#include <stdatomic.h>

TestSuite(client_modes, .init = h_setup, .fini = h_teardown, .timeout = H_SUITE_TIMEOUT(30));

static mock_producer_info_t last_producer(void)
{
    mock_producer_info_t info;
    cr_assert(mock_broker_last_producer(mb, &info), "no PRODUCER reached the broker");
    return info;
}

static bool connected(void *p)
{
    return pulsarc_producer_is_connected(p);
}

static bool disconnected(void *p)
{
    return !pulsarc_producer_is_connected(p);
}

/* The broker cuts the connection; the producer has registered for the n-th time. */
static void reconnect(uint64_t n)
{
    mock_broker_cut_now(mb);
    cr_assert(h_wait_count(mb, MOCK_PRODUCERS, n, 5000), "no registration number %llu",
              (unsigned long long)n);
    cr_assert(h_wait_until(connected, producer, 5000), "not connected again");
}

/* ---- what the PRODUCER command says ---------------------------------------------------- */

Test(client_modes, access_mode_properties_and_initial_subscription_are_registered)
{
    client = h_client(NULL);
    pulsarc_producer_config_t *pc = h_producer_conf(0, "accessMode", "exclusive_with_fencing",
                                                    "initialSubscriptionName", "audit", NULL);
    cr_assert_eq(pulsarc_producer_config_set_property(pc, "app", "billing"), PULSARC_OK);
    cr_assert_eq(pulsarc_producer_config_set_property(pc, "host", "a"), PULSARC_OK);
    cr_assert_eq(pulsarc_producer_config_set_property(pc, "host", "b"), PULSARC_OK,
                 "a key set again takes the new value");
    cr_assert_eq(pulsarc_producer_config_set_property(pc, "", "x"), PULSARC_ERR_INVALID_ARGUMENT);
    cr_assert_eq(pulsarc_producer_config_set_property(pc, "k", NULL), PULSARC_ERR_INVALID_ARGUMENT);
    producer = h_producer_ok(client, H_TOPIC, pc);
    mock_producer_info_t info = last_producer();
    cr_assert(info.has_access_mode);
    cr_assert_eq(info.access_mode, PULSAR__PROTO__PRODUCER_ACCESS_MODE__ExclusiveWithFencing);
    cr_assert_not(info.has_topic_epoch, "a first registration has no topic epoch to send");
    cr_assert_eq(info.n_metadata, 2);
    cr_assert_str_eq(info.metadata[0].key, "app");
    cr_assert_str_eq(info.metadata[0].value, "billing");
    cr_assert_str_eq(info.metadata[1].key, "host");
    cr_assert_str_eq(info.metadata[1].value, "b");
    cr_assert(info.has_initial_subscription);
    cr_assert_str_eq(info.initial_subscription, "audit");
    pulsarc_producer_free(producer);

    /* The defaults: shared, no properties, no initial subscription. */
    producer = h_producer(client, H_TOPIC, NULL);
    info = last_producer();
    cr_assert_eq(info.access_mode, PULSAR__PROTO__PRODUCER_ACCESS_MODE__Shared);
    cr_assert_eq(info.n_metadata, 0);
    cr_assert_not(info.has_initial_subscription);
    h_finish();
}

/* Properties that make the PRODUCER command larger than the broker reads in one frame
 * fail the creation at once with a size error, and are never sent: the broker would
 * reset the connection, which other producers share. */
Test(client_modes, properties_above_the_frame_limit_fail_the_creation_unsent)
{
    mock_broker_set_max_message_size(mb, 4096);
    client = h_client(NULL);
    pulsarc_producer_t *other = h_producer(client, H_TOPIC, NULL);
    uint64_t producers = h_count(mb, MOCK_PRODUCERS);
    pulsarc_producer_config_t *pc = h_producer_conf(0, NULL);
    static char big[8 * 1024];
    memset(big, 'v', sizeof big - 1);
    for (int i = 0; i < 3; i++) {
        char key[8];
        snprintf(key, sizeof key, "k%d", i);
        cr_assert_eq(pulsarc_producer_config_set_property(pc, key, big), PULSARC_OK);
    }
    char detail[512];
    uint64_t ms;
    pulsarc_result r = h_producer_fails(client, H_TOPIC "-big", pc, detail, sizeof detail, &ms);
    cr_assert_eq(r, PULSARC_ERR_MESSAGE_TOO_BIG, "got %s (%s)", pulsarc_result_name(r), detail);
    cr_assert(strstr(detail, "properties") && strstr(detail, "frame"), "%s", detail);
    cr_assert_lt(ms, 5000, "the creation retried instead of failing");
    cr_assert_eq(h_count(mb, MOCK_PRODUCERS), producers, "the oversized PRODUCER was sent");
    cr_assert_eq(h_count(mb, MOCK_CONNECTIONS), 1, "the shared connection was reset");
    cr_assert_eq(h_send_sync(other, 0), PULSARC_OK, "the other producer was disturbed");
    pulsarc_producer_free(other);
    h_finish();
}

/* The broker's topic epoch comes back with every later registration: a producer whose
 * topic was taken over meanwhile (a higher epoch) is then refused instead of taking it
 * back. */
Test(client_modes, topic_epoch_is_sent_again_at_every_reconnect)
{
    client = h_client(NULL);
    mock_broker_set_topic_epoch(mb, 7);
    producer = h_producer(client, H_TOPIC, "accessMode", "exclusive", NULL);
    cr_assert_not(last_producer().has_topic_epoch);
    h_pending_unanswered(1);
    mock_broker_set_topic_epoch(mb, 8); /* what a later success says is what counts */
    mock_broker_cut_now(mb);
    cr_assert(h_wait_calls(1, 5000), "the pending message never completed");
    cr_assert_eq(T.res[0], PULSARC_OK, "got %s", pulsarc_result_name(T.res[0]));
    mock_producer_info_t info = last_producer();
    cr_assert(info.has_topic_epoch, "the reconnect did not send the topic epoch");
    cr_assert_eq(info.topic_epoch, 7);
    reconnect(3);
    cr_assert_eq(last_producer().topic_epoch, 8);
    h_finish();
}

/* Another producer took the topic while this one was away: the broker refuses the
 * reconnect with ProducerFenced, which stops the producer for good. */
Test(client_modes, a_producer_fenced_out_stops_for_good)
{
    client = h_client(NULL);
    mock_broker_set_topic_epoch(mb, 1);
    producer = h_producer(client, H_TOPIC, "accessMode", "exclusive", NULL);
    h_pending_unanswered(2);
    mock_broker_fail_producer(mb, PULSAR__PROTO__SERVER_ERROR__ProducerFenced,
                              "Topic epoch has already moved. Current epoch: 2, Producer "
                              "epoch: 1",
                              -1);
    mock_producer_info_t info = last_producer();
    cr_assert_eq(mock_broker_close_producer(mb, info.producer_id), 1);
    cr_assert(h_wait_calls(2, 5000), "only %d of 2 callbacks", h_total());
    h_let_time_pass(50); /* a second callback would come now */
    h_assert_each_once(2, PULSARC_ERR_BROKER_PRODUCER_FENCED);
    cr_assert(strstr(T.detail[0], "epoch has already moved"), "detail: %s", T.detail[0]);
    cr_assert(strstr(T.detail[0], "accessMode is exclusive"), "detail: %s", T.detail[0]);
    cr_assert_not(pulsarc_producer_is_connected(producer));
    uint64_t producers = h_count(mb, MOCK_PRODUCERS);
    pulsarc_result r = h_send(producer, 2);
    if (r == PULSARC_OK) {
        cr_assert(h_wait_calls(3, 3000));
        r = T.res[2];
    }
    cr_assert_eq(r, PULSARC_ERR_BROKER_PRODUCER_FENCED, "got %s", pulsarc_result_name(r));
    h_let_time_pass(300); /* a retry (backoff at most 200 ms) would reach the mock now */
    cr_assert_eq(h_count(mb, MOCK_PRODUCERS), producers, "a fenced producer tried again");
    h_finish();
}

/* Creation is refused at once, with the broker's words and the access mode, for either
 * code the broker uses (a second exclusive producer: ProducerFenced; a shared one beside
 * an exclusive one: ProducerBusy). */
Test(client_modes, exclusive_refusals_fail_creation_at_once)
{
    client = h_client(NULL);
    mock_broker_fail_producer(mb, PULSAR__PROTO__SERVER_ERROR__ProducerFenced,
                              "Topic has an existing exclusive producer: standalone-0-3", 1);
    char detail[512];
    uint64_t elapsed;
    pulsarc_result r = h_producer_fails(client, H_TOPIC,
                                        h_producer_conf(0, "accessMode", "exclusive", NULL), detail,
                                        sizeof detail, &elapsed);
    cr_assert_eq(r, PULSARC_ERR_BROKER_PRODUCER_FENCED, "got %s", pulsarc_result_name(r));
    cr_assert(strstr(detail, "existing exclusive producer"), "detail: %s", detail);
    cr_assert(strstr(detail, "accessMode is exclusive"), "detail: %s", detail);
    cr_assert_eq(h_count(mb, MOCK_PRODUCERS), 1, "the refusal was retried");
    mock_broker_fail_producer(mb, PULSAR__PROTO__SERVER_ERROR__ProducerBusy,
                              "Topic has an existing exclusive producer: standalone-0-3", 1);
    r = h_producer_fails(client, H_TOPIC, h_producer_conf(0, NULL), detail, sizeof detail,
                         &elapsed);
    cr_assert_eq(r, PULSARC_ERR_BROKER_PRODUCER_BUSY, "got %s", pulsarc_result_name(r));
    cr_assert(strstr(detail, "accessMode is shared"), "detail: %s", detail);
    cr_assert_eq(h_count(mb, MOCK_PRODUCERS), 2, "the refusal was retried");
    h_finish();
}

/* ---- waiting for exclusive access --------------------------------------------------------- */

typedef struct creator {
    pthread_t thread;
    pulsarc_client_t *client;
    const char *timeout_ms; /* operationTimeoutMs of the producer's client */
    pulsarc_producer_t *producer;
    _Atomic int result; /* 1 until creation returned */
    char detail[512];
} creator_t;

static void *create_waiting(void *arg)
{
    creator_t *cr = arg;
    pulsarc_producer_config_t *pc = h_producer_conf(0, "accessMode", "wait_for_exclusive", NULL);
    pulsarc_result r = pulsarc_client_create_producer(cr->client, H_TOPIC, pc, &cr->producer);
    snprintf(cr->detail, sizeof cr->detail, "%s", pulsarc_last_error_detail());
    pulsarc_producer_config_free(pc);
    atomic_store(&cr->result, r);
    return NULL;
}

Test(client_modes, wait_for_exclusive_creation_waits_until_the_broker_grants_the_topic)
{
    client = h_client(NULL);
    mock_broker_set_queue_producers(mb, true);
    mock_broker_set_topic_epoch(mb, 3);
    creator_t cr = { .client = client, .result = 1 };
    cr_assert_eq(pthread_create(&cr.thread, NULL, create_waiting, &cr), 0);
    cr_assert(h_wait_count(mb, MOCK_QUEUED_PRODUCERS, 1, 5000), "the producer was not queued");
    cr_assert(h_wait_log("queued the producer", 5000));
    h_let_time_pass(300); /* creation would return now if "queued" were taken for "ready" */
    cr_assert_eq(atomic_load(&cr.result), 1, "creation returned while queued: %s",
                 pulsarc_result_name(atomic_load(&cr.result)));
    cr_assert_eq(mock_broker_grant_queued(mb), 1);
    pthread_join(cr.thread, NULL);
    cr_assert_eq(atomic_load(&cr.result), PULSARC_OK, "got %s: %s",
                 pulsarc_result_name(atomic_load(&cr.result)), cr.detail);
    producer = cr.producer;
    cr_assert(pulsarc_producer_is_connected(producer));
    cr_assert_eq(h_send_sync(producer, 0), PULSARC_OK);
    /* The epoch of the grant is the one a reconnect sends. */
    mock_broker_set_queue_producers(mb, false);
    reconnect(2);
    cr_assert_eq(last_producer().topic_epoch, 3);
    h_finish();
}

/* Nobody leaves: creation gives up at operationTimeoutMs and tells the broker to drop the
 * queued producer, which would otherwise take the topic later with nobody behind it. */
Test(client_modes, wait_for_exclusive_gives_up_at_operation_timeout_and_withdraws)
{
    client = h_client("operationTimeoutMs", "500", NULL);
    mock_broker_set_queue_producers(mb, true);
    creator_t cr = { .client = client, .result = 1 };
    cr_assert_eq(pthread_create(&cr.thread, NULL, create_waiting, &cr), 0);
    pthread_join(cr.thread, NULL);
    cr_assert_eq(atomic_load(&cr.result), PULSARC_ERR_TIMEOUT, "got %s: %s",
                 pulsarc_result_name(atomic_load(&cr.result)), cr.detail);
    /* The detail says why: queued behind another producer, not a broker that never
     * answered. */
    cr_assert(strstr(cr.detail, "queued") && strstr(cr.detail, "wait_for_exclusive"), "%s",
              cr.detail);
    cr_assert(h_wait_count(mb, MOCK_CLOSE_PRODUCERS, 1, 5000),
              "the broker was not told to drop the queued producer");
    cr_assert_eq(mock_broker_grant_queued(mb), 0, "the queued producer is still there");
    h_finish();
}

/* ---- lazy start ------------------------------------------------------------------------- */

/* An exclusive producer holds every partition from its creation: lazy start is for shared
 * producers only (as in the Java and C++ clients). */
Test(client_modes, exclusive_producers_start_every_partition_at_creation)
{
    mock_broker_set_partitions(mb, 3);
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, "lazyStartPartitionedProducers", "true", NULL);
    cr_assert_eq(h_count(mb, MOCK_PRODUCERS), 0, "a lazy shared producer registered early");
    cr_assert(pulsarc_producer_is_connected(producer), "no partition started, none is down");
    pulsarc_producer_free(producer);
    producer = h_producer(client, H_TOPIC, "lazyStartPartitionedProducers", "true", "accessMode",
                          "exclusive", NULL);
    cr_assert_eq(h_count(mb, MOCK_PRODUCERS), 3);
    h_finish();
}

/* ---- is_connected ----------------------------------------------------------------------- */

Test(client_modes, is_connected_follows_every_partition)
{
    mock_broker_set_partitions(mb, 3);
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    cr_assert(pulsarc_producer_is_connected(producer));
    /* The broker cuts the connections and refuses the partitions for a while. */
    mock_broker_fail_producer(mb, PULSAR__PROTO__SERVER_ERROR__ServiceNotReady, "unloading", -1);
    mock_broker_cut_now(mb);
    cr_assert(h_wait_until(disconnected, producer, 5000), "still connected after the cut");
    cr_assert(h_wait_count(mb, MOCK_PRODUCERS, 3 + 3, 5000), "no re-registration tried");
    cr_assert_not(pulsarc_producer_is_connected(producer), "connected while refused");
    mock_broker_fail_producer(mb, 0, NULL, 0);
    cr_assert(h_wait_until(connected, producer, 5000),
              "not connected again once the broker took the producer back");
    cr_assert_eq(pulsarc_producer_close(producer), PULSARC_OK);
    cr_assert_not(pulsarc_producer_is_connected(producer), "a closed producer is connected");
    cr_assert_not(pulsarc_producer_is_connected(NULL));
    h_finish();
}

/* With lazy start, a partition counts once it has had a message. */
Test(client_modes, is_connected_counts_lazy_partitions_once_started)
{
    mock_broker_set_partitions(mb, 2);
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, "lazyStartPartitionedProducers", "true", NULL);
    mock_broker_fail_producer(mb, PULSAR__PROTO__SERVER_ERROR__ServiceNotReady, "loading", -1);
    cr_assert_eq(h_send(producer, 0), PULSARC_OK);
    cr_assert(h_wait_count(mb, MOCK_PRODUCERS, 1, 5000));
    cr_assert_not(pulsarc_producer_is_connected(producer), "a started partition is down");
    mock_broker_fail_producer(mb, 0, NULL, 0);
    cr_assert(h_wait_calls(1, 5000));
    cr_assert_eq(T.res[0], PULSARC_OK, "got %s", pulsarc_result_name(T.res[0]));
    cr_assert(pulsarc_producer_is_connected(producer),
              "the partition not started yet made it look disconnected");
    h_finish();
}

/* After the client is gone the handle answers, and it is not connected. */
Test(client_modes, is_connected_after_client_destroy)
{
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    cr_assert(pulsarc_producer_is_connected(producer));
    cr_assert_eq(pulsarc_client_destroy(client), PULSARC_OK);
    client = NULL;
    cr_assert_not(pulsarc_producer_is_connected(producer));
    pulsarc_producer_free(producer);
    producer = NULL;
    h_finish();
}

/* ---- per-message replication and delivery delays ----------------------------------------- */

static mock_send_t get_send(size_t i)
{
    mock_send_t s;
    cr_assert(mock_broker_get_send(mb, i, &s), "no SEND %zu", i);
    cr_assert_not_null(s.metadata, "SEND %zu: metadata did not parse", i);
    return s;
}

/* send_async m as message idx, tracked like h_send's. */
static void send_tracked(pulsarc_message_t *m, int idx)
{
    T.slots[idx].idx = idx;
    pulsarc_result r = pulsarc_producer_send_async(producer, m, h_on_sent, &T.slots[idx]);
    cr_assert_eq(r, PULSARC_OK, "send_async %d: %s", idx, pulsarc_result_name(r));
}

static uint64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

Test(client_modes, replication_clusters_and_delays_travel_in_entries_of_their_own)
{
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, "batchingEnabled", "true", "batchingMaxPublishDelayMs",
                          "50", NULL);
    pulsarc_message_t *m = pulsarc_message_new();
    const char *const clusters[] = { "us-east", "eu-west" };
    cr_assert_eq(pulsarc_message_set_payload(m, "a", 1), PULSARC_OK);
    cr_assert_eq(pulsarc_message_set_replication_clusters(m, clusters, 2), PULSARC_OK);
    send_tracked(m, 0);
    cr_assert_eq(pulsarc_message_disable_replication(m, 1), PULSARC_OK);
    send_tracked(m, 1);
    cr_assert_eq(pulsarc_message_disable_replication(m, 0), PULSARC_OK);
    cr_assert_eq(pulsarc_message_set_deliver_after(m, 5000), PULSARC_OK);
    uint64_t before = wall_ms();
    send_tracked(m, 2);
    uint64_t after = wall_ms();
    cr_assert_eq(pulsarc_message_set_deliver_at(m, 0), PULSARC_OK); /* clears the delay too */
    send_tracked(m, 3);
    send_tracked(m, 4);
    pulsarc_message_free(m);
    cr_assert(h_wait_calls(5, 5000), "only %d of 5 callbacks", h_total());
    for (int i = 0; i < 5; i++)
        cr_assert_eq(T.res[i], PULSARC_OK, "message %d: %s", i, pulsarc_result_name(T.res[i]));
    cr_assert_eq(h_count(mb, MOCK_SENDS), 4, "three entries alone, then one batch of two");

    mock_send_t s = get_send(0);
    cr_assert_eq(s.metadata->n_replicate_to, 2);
    cr_assert_str_eq(s.metadata->replicate_to[0], "us-east");
    cr_assert_str_eq(s.metadata->replicate_to[1], "eu-west");
    cr_assert_not(s.metadata->has_num_messages_in_batch, "batched with replication clusters");
    mock_send_free(&s);
    s = get_send(1);
    cr_assert_eq(s.metadata->n_replicate_to, 1);
    cr_assert_str_eq(s.metadata->replicate_to[0], "__local__");
    cr_assert_not(s.metadata->has_num_messages_in_batch);
    mock_send_free(&s);
    s = get_send(2);
    cr_assert_eq(s.metadata->n_replicate_to, 0);
    cr_assert(s.metadata->has_deliver_at_time);
    cr_assert_geq((uint64_t)s.metadata->deliver_at_time, before + 5000);
    cr_assert_leq((uint64_t)s.metadata->deliver_at_time, after + 5000);
    cr_assert_not(s.metadata->has_num_messages_in_batch);
    mock_send_free(&s);
    s = get_send(3);
    cr_assert_not(s.metadata->has_deliver_at_time);
    cr_assert_eq(s.metadata->n_replicate_to, 0);
    cr_assert_eq(s.metadata->num_messages_in_batch, 2, "plain messages are batched as before");
    mock_send_free(&s);
    h_finish();
}

static bool wall_clock_passed(void *ms)
{
    return wall_ms() > *(const uint64_t *)ms;
}

/* The delay counts from each send: a builder reused later gets a later delivery time. */
Test(client_modes, deliver_after_counts_from_each_send)
{
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    pulsarc_message_t *m = pulsarc_message_new();
    cr_assert_eq(pulsarc_message_set_payload(m, "a", 1), PULSARC_OK);
    cr_assert_eq(pulsarc_message_set_deliver_after(m, 1000), PULSARC_OK);
    uint64_t t0 = wall_ms();
    cr_assert_eq(pulsarc_producer_send(producer, m, NULL), PULSARC_OK);
    uint64_t t1 = wall_ms();
    /* A later millisecond, a difference the two delivery times must show. */
    cr_assert(h_wait_until(wall_clock_passed, &t1, 1000));
    uint64_t t2 = wall_ms();
    cr_assert_eq(pulsarc_producer_send(producer, m, NULL), PULSARC_OK);
    pulsarc_message_free(m);
    mock_send_t a = get_send(0), b = get_send(1);
    cr_assert_geq((uint64_t)a.metadata->deliver_at_time, t0 + 1000);
    cr_assert_leq((uint64_t)a.metadata->deliver_at_time, t1 + 1000);
    cr_assert_geq((uint64_t)b.metadata->deliver_at_time, t2 + 1000,
                  "the second send kept the first one's delivery time");
    mock_send_free(&a);
    mock_send_free(&b);
    h_finish();
}

Test(client_modes, message_setters_check_their_arguments)
{
    pulsarc_message_t *m = pulsarc_message_new();
    const char *const bad[] = { "ok", "" };
    const char *const none[] = { NULL };
    cr_assert_eq(pulsarc_message_set_replication_clusters(m, bad, 2), PULSARC_ERR_INVALID_ARGUMENT);
    cr_assert_eq(pulsarc_message_set_replication_clusters(m, none, 1),
                 PULSARC_ERR_INVALID_ARGUMENT);
    cr_assert_eq(pulsarc_message_set_replication_clusters(m, NULL, 1),
                 PULSARC_ERR_INVALID_ARGUMENT);
    cr_assert_eq(pulsarc_message_set_replication_clusters(m, NULL, 0), PULSARC_OK);
    cr_assert_eq(pulsarc_message_set_deliver_after(m, UINT64_MAX), PULSARC_ERR_INVALID_ARGUMENT);
    cr_assert_eq(pulsarc_message_set_deliver_at(m, UINT64_MAX), PULSARC_ERR_INVALID_ARGUMENT);
    cr_assert_eq(pulsarc_message_set_deliver_after(NULL, 1), PULSARC_ERR_INVALID_ARGUMENT);
    cr_assert_eq(pulsarc_message_disable_replication(NULL, 1), PULSARC_ERR_INVALID_ARGUMENT);
    pulsarc_message_free(m);
}

/* ---- tombstones and the partition count ------------------------------------------------- */

/* A null value (a compacted topic's tombstone) travels as the flag, alone or in a batch,
 * with no payload; a payload set afterwards makes the value non-null again. */
Test(client_modes, null_values_are_flagged_alone_and_in_batches)
{
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    pulsarc_message_t *m = pulsarc_message_new();
    cr_assert_eq(pulsarc_message_set_key(m, "k"), PULSARC_OK);
    cr_assert_eq(pulsarc_message_set_payload(m, "v", 1), PULSARC_OK);
    cr_assert_eq(pulsarc_message_set_null_value(m), PULSARC_OK);
    cr_assert_eq(pulsarc_producer_send(producer, m, NULL), PULSARC_OK);
    cr_assert_eq(pulsarc_message_set_payload(m, "v2", 2), PULSARC_OK);
    cr_assert_eq(pulsarc_producer_send(producer, m, NULL), PULSARC_OK);
    mock_send_t s = get_send(0);
    cr_assert(s.metadata->has_null_value && s.metadata->null_value);
    cr_assert_str_eq(s.metadata->partition_key, "k");
    cr_assert_eq(s.payload_len, 0);
    mock_send_free(&s);
    s = get_send(1);
    cr_assert_not(s.metadata->null_value, "a payload set again is not null");
    mock_send_free(&s);
    pulsarc_producer_free(producer);

    producer = h_producer(client, H_TOPIC, "batchingEnabled", "true", "batchingMaxPublishDelayMs",
                          "50", NULL);
    cr_assert_eq(pulsarc_message_set_null_value(m), PULSARC_OK);
    send_tracked(m, 0);
    cr_assert_eq(pulsarc_message_set_payload(m, "v3", 2), PULSARC_OK);
    send_tracked(m, 1);
    pulsarc_message_free(m);
    cr_assert(h_wait_calls(2, 5000));
    s = get_send(2);
    cr_assert_eq(s.metadata->num_messages_in_batch, 2);
    Pulsar__Proto__SingleMessageMetadata *first = NULL;
    uint32_t len = (uint32_t)s.payload[0] << 24 | (uint32_t)s.payload[1] << 16 |
                   (uint32_t)s.payload[2] << 8 | s.payload[3];
    first = pulsar__proto__single_message_metadata__unpack(NULL, len, s.payload + 4);
    cr_assert_not_null(first);
    cr_assert(first->has_null_value && first->null_value, "the batch lost the null value");
    cr_assert_eq(first->payload_size, 0);
    pulsar__proto__single_message_metadata__free_unpacked(first, NULL);
    mock_send_free(&s);
    cr_assert_eq(pulsarc_message_set_null_value(NULL), PULSARC_ERR_INVALID_ARGUMENT);
    h_finish();
}

static bool four_partitions(void *p)
{
    return pulsarc_producer_partitions(p) == 4;
}

Test(client_modes, partition_count_follows_the_topic)
{
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    cr_assert_eq(pulsarc_producer_partitions(producer), 0, "a topic without partitions");
    pulsarc_producer_free(producer);
    mock_broker_set_partitions(mb, 3);
    producer = h_producer(client, H_TOPIC, "autoUpdatePartitionsIntervalSeconds", "1", NULL);
    cr_assert_eq(pulsarc_producer_partitions(producer), 3);
    mock_broker_set_partitions(mb, 4);
    cr_assert(h_let_time_pass_until(four_partitions, producer, 10000), "still %d partitions",
              pulsarc_producer_partitions(producer));
    cr_assert_eq(pulsarc_producer_partitions(NULL), 0);
    h_finish();
}

/* A binary key travels base64-encoded with the flag that says so, as Java's keyBytes. */
Test(client_modes, binary_keys_travel_base64_encoded)
{
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    pulsarc_message_t *m = pulsarc_message_new();
    static const uint8_t key[] = { 0x00, 0xff, 0x10 };
    cr_assert_eq(pulsarc_message_set_key_bytes(m, key, sizeof key), PULSARC_OK);
    cr_assert_str_eq(pulsarc_message_key(m), "AP8Q");
    cr_assert_eq(pulsarc_message_set_payload(m, "v", 1), PULSARC_OK);
    cr_assert_eq(pulsarc_producer_send(producer, m, NULL), PULSARC_OK);
    cr_assert_eq(pulsarc_message_set_key(m, "plain"), PULSARC_OK);
    cr_assert_eq(pulsarc_producer_send(producer, m, NULL), PULSARC_OK);
    cr_assert_eq(pulsarc_message_set_key_bytes(m, NULL, 1), PULSARC_ERR_INVALID_ARGUMENT);
    pulsarc_message_free(m);
    mock_send_t s = get_send(0);
    cr_assert_str_eq(s.metadata->partition_key, "AP8Q");
    cr_assert(s.metadata->has_partition_key_b64_encoded && s.metadata->partition_key_b64_encoded);
    mock_send_free(&s);
    s = get_send(1);
    cr_assert_str_eq(s.metadata->partition_key, "plain");
    cr_assert_not(s.metadata->partition_key_b64_encoded, "a text key set later is not base64");
    mock_send_free(&s);
    h_finish();
}
