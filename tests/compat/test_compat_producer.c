/* pulsarc-compat: clients and producers against the mock broker, with libpulsar's
 * contracts: a refused send reported through its callback (before the send returns), a
 * callback that owns its message id, a message sent once, timeouts in seconds, keys on
 * the partitions libpulsar's BoostHash picks, keyless messages round robin, a custom
 * router that sees the message, creation and close through callbacks. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <pulsar/c/authentication.h>
#include <pulsar/c/client.h>
#include <pulsar/c/pulsarc_extensions.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mock_broker.h"

static mock_broker_t *mb;

static void start(void)
{
    mb = mock_broker_start();
    cr_assert(mb);
}

static void stop(void)
{
    mock_broker_stop(mb);
}

TestSuite(compat_producer, .init = start, .fini = stop, .timeout = 60);

#define MAX_CALLS 256

/* What each send callback got. */
static struct {
    pthread_mutex_t mu;
    int calls;
    pulsar_result res[MAX_CALLS];
    int partition[MAX_CALLS];
    pthread_t thread[MAX_CALLS];
} got = { .mu = PTHREAD_MUTEX_INITIALIZER };

static void reset(void)
{
    pthread_mutex_lock(&got.mu);
    got.calls = 0;
    pthread_mutex_unlock(&got.mu);
}

/* ctx is the message's index. Frees the id, as the callback owns it (ASan checks). */
static void on_sent(pulsar_result res, pulsar_message_id_t *id, void *ctx)
{
    int i = (int)(intptr_t)ctx;
    int partition = -2;
    if (id) {
        char *s = pulsar_message_id_str(id);
        long long l, e;
        int p, b;
        if (s && sscanf(s, "(%lld,%lld,%d,%d)", &l, &e, &p, &b) == 4)
            partition = p;
        free(s);
        pulsar_message_id_free(id);
    }
    pthread_mutex_lock(&got.mu);
    if (i >= 0 && i < MAX_CALLS) {
        got.res[i] = res;
        got.partition[i] = partition;
        got.thread[i] = pthread_self();
    }
    got.calls++;
    pthread_mutex_unlock(&got.mu);
}

static int calls(void)
{
    pthread_mutex_lock(&got.mu);
    int n = got.calls;
    pthread_mutex_unlock(&got.mu);
    return n;
}

static void wait_calls(int n)
{
    for (int i = 0; i < 1000 && calls() < n; i++)
        usleep(10000);
    cr_assert_geq(calls(), n, "%d of %d callbacks", calls(), n);
}

static pulsar_client_t *new_client(void)
{
    pulsar_client_configuration_t *conf = pulsar_client_configuration_create();
    pulsar_client_configuration_set_operation_timeout_seconds(conf, 5);
    pulsar_client_t *client = pulsar_client_create(mock_broker_url(mb), conf);
    pulsar_client_configuration_free(conf);
    cr_assert(client);
    return client;
}

static pulsar_producer_t *new_producer(pulsar_client_t *client,
                                       pulsar_producer_configuration_t *conf)
{
    pulsar_producer_t *p = NULL;
    cr_assert_eq(pulsar_client_create_producer(client, "compat-t", conf, &p), pulsar_result_Ok);
    cr_assert(p);
    return p;
}

static pulsar_message_t *message(const char *payload, const char *key)
{
    pulsar_message_t *m = pulsar_message_create();
    pulsar_message_set_content(m, payload, strlen(payload));
    if (key)
        pulsar_message_set_partition_key(m, key);
    return m;
}

Test(compat_producer, sync_send_and_accessors)
{
    pulsar_client_t *client = new_client();
    pulsar_producer_configuration_t *conf = pulsar_producer_configuration_create();
    pulsar_producer_configuration_set_producer_name(conf, "compat-sync");
    pulsar_producer_t *p = new_producer(client, conf);
    pulsar_producer_configuration_free(conf);
    cr_expect_str_eq(pulsar_producer_get_topic(p), "persistent://public/default/compat-t");
    cr_expect_str_eq(pulsar_producer_get_producer_name(p), "compat-sync");
    cr_expect_eq(pulsar_producer_get_last_sequence_id(p), -1);
    cr_expect_eq(pulsar_producer_is_connected(p), 1);
    pulsar_message_t *m = message("one", NULL);
    cr_expect_eq(pulsar_producer_send(p, m), pulsar_result_Ok);
    cr_expect_eq(pulsar_producer_get_last_sequence_id(p), 0);
    /* libpulsar: a message is sent once; the second send is refused. */
    cr_expect_eq(pulsar_producer_send(p, m), pulsar_result_InvalidMessage);
    pulsar_message_free(m);
    cr_expect_eq(pulsar_producer_flush(p), pulsar_result_Ok);
    cr_expect_eq(pulsar_producer_close(p), pulsar_result_Ok);
    pulsar_message_t *late = message("late", NULL);
    cr_expect_eq(pulsar_producer_send(p, late), pulsar_result_AlreadyClosed);
    pulsar_message_free(late);
    pulsar_producer_free(p);
    cr_expect_eq(pulsar_client_close(client), pulsar_result_Ok);
    pulsar_client_free(client);
}

Test(compat_producer, async_send_callbacks_own_their_ids)
{
    reset();
    pulsar_client_t *client = new_client();
    pulsar_producer_t *p = new_producer(client, NULL);
    for (int i = 0; i < 20; i++) {
        pulsar_message_t *m = message("x", NULL);
        pulsar_producer_send_async(p, m, on_sent, (void *)(intptr_t)i);
        pulsar_message_free(m); /* libpulsar's programs free right after the call */
    }
    cr_expect_eq(pulsar_producer_flush(p), pulsar_result_Ok);
    wait_calls(20);
    for (int i = 0; i < 20; i++) {
        cr_expect_eq(got.res[i], pulsar_result_Ok, "message %d: %s", i,
                     pulsar_result_str(got.res[i]));
        cr_expect_eq(got.partition[i], -1, "a topic without partitions");
        cr_expect(!pthread_equal(got.thread[i], pthread_self()), "on the loop thread");
    }
    pulsar_producer_free(p);
    pulsar_client_free(client);
}

Test(compat_producer, a_refused_send_is_reported_through_its_callback)
{
    reset();
    mock_broker_set_receipt_mode(mb, MOCK_RECEIPTS_HOLD);
    pulsar_client_t *client = new_client();
    pulsar_producer_configuration_t *conf = pulsar_producer_configuration_create();
    pulsar_producer_configuration_set_max_pending_messages(conf, 1);
    pulsar_producer_configuration_set_batching_enabled(conf, 0);
    pulsar_producer_t *p = new_producer(client, conf);
    pulsar_producer_configuration_free(conf);
    pulsar_message_t *a = message("a", NULL), *b = message("b", NULL);
    pulsar_producer_send_async(p, a, on_sent, (void *)(intptr_t)0);
    pulsar_producer_send_async(p, b, on_sent, (void *)(intptr_t)1);
    /* The refusal came before send_async returned, on this thread. */
    cr_assert_eq(calls(), 1);
    cr_expect_eq(got.res[1], pulsar_result_ProducerQueueIsFull);
    cr_expect(pthread_equal(got.thread[1], pthread_self()));
    cr_expect_eq(got.partition[1], -2, "no id with a failure");
    /* b was not accepted: it may be sent again once there is room. */
    cr_assert(mock_broker_wait_sends(mb, 1, 5000));
    mock_broker_set_receipt_mode(mb, MOCK_RECEIPTS_NORMAL);
    mock_broker_release_receipts(mb);
    wait_calls(2);
    pulsar_producer_send_async(p, b, on_sent, (void *)(intptr_t)2);
    wait_calls(3);
    cr_expect_eq(got.res[0], pulsar_result_Ok);
    cr_expect_eq(got.res[2], pulsar_result_Ok);
    /* a was: sending it again is refused, through the callback. */
    pulsar_producer_send_async(p, a, on_sent, (void *)(intptr_t)3);
    cr_expect_eq(calls(), 4);
    cr_expect_eq(got.res[3], pulsar_result_InvalidMessage);
    pulsar_message_free(a);
    pulsar_message_free(b);
    pulsar_producer_free(p);
    pulsar_client_free(client);
}

/* Partitions libpulsar 4.2.0 (Boost 1.90) chose among 16 for these keys: the oracle
 * column of tests/unit/test_hash_boost.c. */
static const struct {
    const char *key;
    int partition;
} keyed[] = { { "a", 12 },    { "ab", 6 },      { "abc", 13 },        { "user-42", 4 },
              { "key-0", 2 }, { "compat", 11 }, { "hello world", 12 } };

/* The partition each key's send landed on, among 16 (keyless: key NULL). */
static void send_keys(pulsar_producer_t *p, const char *const *keys, int n)
{
    reset();
    for (int i = 0; i < n; i++) {
        pulsar_message_t *m = message("k", keys[i]);
        pulsar_producer_send_async(p, m, on_sent, (void *)(intptr_t)i);
        pulsar_message_free(m);
    }
    cr_assert_eq(pulsar_producer_flush(p), pulsar_result_Ok);
    wait_calls(n);
}

Test(compat_producer, keys_land_on_libpulsars_partitions)
{
    mock_broker_set_partitions(mb, 16);
    pulsar_client_t *client = new_client();
    pulsar_producer_t *p = new_producer(client, NULL);
    enum { N = sizeof keyed / sizeof keyed[0] };
    const char *keys[N];
    for (int i = 0; i < N; i++)
        keys[i] = keyed[i].key;
    send_keys(p, keys, N);
    for (int i = 0; i < N; i++)
        cr_expect_eq(got.partition[i], keyed[i].partition, "key %s", keys[i]);
    pulsar_producer_free(p);
    pulsar_client_free(client);
}

Test(compat_producer, a_boost_variant_from_the_environment)
{
    /* boost_1_80 (x86-64): "a" -> 0x3d38188654ef1dbf, & INT32_MAX % 16 = 15. */
    setenv("PULSARC_COMPAT_BOOST_HASH", "boost_1_80", 1);
    mock_broker_set_partitions(mb, 16);
    pulsar_client_t *client = new_client();
    pulsar_producer_t *p = new_producer(client, NULL);
    const char *keys[] = { "a" };
    send_keys(p, keys, 1);
    cr_expect_eq(got.partition[0], 15);
    pulsar_producer_free(p);
    setenv("PULSARC_COMPAT_BOOST_HASH", "boost_9", 1);
    pulsar_producer_t *bad = NULL;
    cr_expect_eq(pulsar_client_create_producer(client, "compat-t", NULL, &bad),
                 pulsar_result_InvalidConfiguration);
    unsetenv("PULSARC_COMPAT_BOOST_HASH");
    pulsar_client_free(client);
}

Test(compat_producer, keyless_messages_spread_or_stay)
{
    mock_broker_set_partitions(mb, 4);
    pulsar_client_t *client = new_client();
    pulsar_producer_configuration_t *conf = pulsar_producer_configuration_create();
    pulsar_producer_configuration_set_batching_enabled(conf, 0);
    pulsar_producer_t *p = new_producer(client, conf);
    const char *keys[8] = { 0 };
    send_keys(p, keys, 8);
    int seen[4] = { 0 };
    for (int i = 0; i < 8; i++)
        seen[got.partition[i] & 3]++;
    for (int i = 0; i < 4; i++)
        cr_expect_eq(seen[i], 2, "round robin without batching: each partition in turn");
    pulsar_producer_free(p);
    pulsar_producer_configuration_set_partitions_routing_mode(conf, pulsar_UseSinglePartition);
    p = new_producer(client, conf);
    send_keys(p, keys, 8);
    for (int i = 1; i < 8; i++)
        cr_expect_eq(got.partition[i], got.partition[0], "one partition");
    pulsar_producer_free(p);
    pulsar_producer_configuration_free(conf);
    pulsar_client_free(client);
}

static atomic_int routed;

static int route_by_length(pulsar_message_t *msg, pulsar_topic_metadata_t *meta, void *ctx)
{
    cr_expect_eq(ctx, (void *)&routed);
    cr_expect_eq(pulsar_topic_metadata_get_num_partitions(meta), 4);
    atomic_fetch_add(&routed, 1);
    /* The router sees the message the program built. */
    return (int)pulsar_message_get_length(msg) % pulsar_topic_metadata_get_num_partitions(meta);
}

Test(compat_producer, a_custom_router_sees_the_message)
{
    mock_broker_set_partitions(mb, 4);
    pulsar_client_t *client = new_client();
    pulsar_producer_configuration_t *conf = pulsar_producer_configuration_create();
    pulsar_producer_configuration_set_message_router(conf, route_by_length, &routed);
    pulsar_producer_t *p = new_producer(client, conf);
    pulsar_producer_configuration_free(conf);
    reset();
    const char *payloads[] = { "x", "xy", "xyz", "xyzw" };
    for (int i = 0; i < 4; i++) {
        pulsar_message_t *m = message(payloads[i], "key");
        pulsar_producer_send_async(p, m, on_sent, (void *)(intptr_t)i);
        pulsar_message_free(m);
    }
    cr_assert_eq(pulsar_producer_flush(p), pulsar_result_Ok);
    wait_calls(4);
    for (int i = 0; i < 4; i++)
        cr_expect_eq(got.partition[i], (i + 1) % 4);
    cr_expect_eq(atomic_load(&routed), 4);
    pulsar_producer_free(p);
    pulsar_client_free(client);
}

static struct {
    pthread_mutex_t mu;
    int done;
    pulsar_result res;
    pulsar_producer_t *producer;
} created = { .mu = PTHREAD_MUTEX_INITIALIZER };

static void on_created(pulsar_result res, pulsar_producer_t *p, void *ctx)
{
    cr_expect_eq(ctx, (void *)&created);
    pthread_mutex_lock(&created.mu);
    created.res = res;
    created.producer = p;
    created.done++;
    pthread_mutex_unlock(&created.mu);
}

static void on_done(pulsar_result res, void *ctx)
{
    on_created(res, NULL, ctx);
}

static int created_done(void)
{
    pthread_mutex_lock(&created.mu);
    int n = created.done;
    pthread_mutex_unlock(&created.mu);
    return n;
}

static void wait_created(int n)
{
    for (int i = 0; i < 1000 && created_done() < n; i++)
        usleep(10000);
    cr_assert_geq(created_done(), n);
}

Test(compat_producer, async_create_flush_close)
{
    pulsar_client_t *client = new_client();
    created.done = 0;
    pulsar_client_create_producer_async(client, "compat-t", NULL, on_created, &created);
    wait_created(1);
    cr_assert_eq(created.res, pulsar_result_Ok);
    pulsar_producer_t *p = created.producer;
    cr_assert(p);
    pulsar_message_t *m = message("x", NULL);
    pulsar_producer_send_async(p, m, NULL, NULL); /* a NULL callback is allowed */
    pulsar_message_free(m);
    pulsar_producer_flush_async(p, on_done, &created);
    wait_created(2);
    cr_expect_eq(created.res, pulsar_result_Ok);
    pulsar_producer_close_async(p, on_done, &created);
    wait_created(3);
    cr_expect_eq(created.res, pulsar_result_Ok);
    pulsar_producer_free(p);
    /* A creation that cannot start answers through the callback, at once. */
    pulsar_client_create_producer_async(client, NULL, NULL, on_created, &created);
    cr_expect_eq(created_done(), 4);
    cr_expect_eq(created.res, pulsar_result_InvalidTopicName);
    pulsar_client_close_async(client, on_done, &created);
    wait_created(5);
    cr_expect_eq(created.res, pulsar_result_Ok);
    pulsar_client_close_async(client, on_done, &created);
    cr_expect_eq(created_done(), 6);
    cr_expect_eq(created.res, pulsar_result_AlreadyClosed);
    pulsar_client_free(client);
}

Test(compat_producer, a_bad_url_fails_every_creation)
{
    pulsar_client_t *client = pulsar_client_create("kafka://nowhere", NULL);
    cr_assert(client, "a handle even for a bad URL (libpulsar throws)");
    pulsar_producer_t *p = NULL;
    cr_expect_eq(pulsar_client_create_producer(client, "t", NULL, &p), pulsar_result_InvalidUrl);
    cr_expect_null(p);
    cr_expect_eq(pulsar_client_close(client), pulsar_result_Ok);
    pulsar_client_free(client);
}

Test(compat_producer, operation_timeout_is_in_seconds)
{
    mock_broker_set_ignore_connect(mb, true);
    pulsar_client_configuration_t *conf = pulsar_client_configuration_create();
    pulsar_client_configuration_set_operation_timeout_seconds(conf, 1);
    pulsar_client_t *client = pulsar_client_create(mock_broker_url(mb), conf);
    pulsar_client_configuration_free(conf);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pulsar_producer_t *p = NULL;
    pulsar_result r = pulsar_client_create_producer(client, "t", NULL, &p);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    cr_expect(r == pulsar_result_Timeout || r == pulsar_result_ConnectError, "%s",
              pulsar_result_str(r));
    cr_expect(s > 0.5 && s < 5, "gave up after %.1f s, 1 s was asked", s);
    pulsar_client_free(client);
}

static atomic_int supplied;

static char *supply_token(void *ctx)
{
    cr_expect_eq(ctx, (void *)&supplied);
    atomic_fetch_add(&supplied, 1);
    return strdup("supplied-token"); /* freed by the library, as libpulsar does */
}

Test(compat_producer, authentication_reaches_the_broker)
{
    struct {
        pulsar_authentication_t *auth;
        const char *method, *data;
    } cases[] = {
        { pulsar_authentication_token_create("tok-1"), "token", "tok-1" },
        { pulsar_authentication_token_create_with_supplier(supply_token, &supplied), "token",
          "supplied-token" },
        { pulsar_authentication_basic_create("alice", "pw"), "basic", "alice:pw" },
        { pulsar_authentication_create("token", "token:tok-2"), "token", "tok-2" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        pulsar_client_configuration_t *conf = pulsar_client_configuration_create();
        pulsar_client_configuration_set_auth(conf, cases[i].auth);
        pulsar_authentication_free(cases[i].auth);
        pulsar_client_t *client = pulsar_client_create(mock_broker_url(mb), conf);
        pulsar_client_configuration_free(conf);
        pulsar_producer_t *p = new_producer(client, NULL);
        mock_connect_info_t info;
        cr_assert(mock_broker_last_connect(mb, &info));
        cr_expect_str_eq(info.auth_method_name, cases[i].method, "case %zu", i);
        cr_expect_str_eq(info.auth_data, cases[i].data, "case %zu", i);
        pulsar_producer_free(p);
        pulsar_client_free(client);
    }
    cr_expect_geq(atomic_load(&supplied), 1);
}

static atomic_int logged, debug_lines;

static void count_lines(pulsar_logger_level_t level, const char *file, int line,
                        const char *message, void *ctx)
{
    (void)file, (void)line, (void)message;
    cr_expect_eq(ctx, (void *)&logged);
    atomic_fetch_add(&logged, 1);
    if (level == pulsar_DEBUG)
        atomic_fetch_add(&debug_lines, 1);
}

Test(compat_producer, the_logger_gets_info_and_up)
{
    pulsar_client_configuration_t *conf = pulsar_client_configuration_create();
    pulsar_client_configuration_set_logger(conf, count_lines, &logged);
    pulsar_client_t *client = pulsar_client_create(mock_broker_url(mb), conf);
    pulsar_client_configuration_free(conf);
    pulsar_producer_t *p = new_producer(client, NULL);
    pulsar_producer_free(p);
    pulsar_client_free(client);
    cr_expect_gt(atomic_load(&logged), 0, "connecting logs at INFO");
    cr_expect_eq(atomic_load(&debug_lines), 0);
}

static atomic_int inner_flush = -1;

static void flush_inside(pulsar_result res, pulsar_message_id_t *id, void *ctx)
{
    (void)res;
    pulsar_message_id_free(id);
    atomic_store(&inner_flush, (int)pulsar_producer_flush(ctx));
}

Test(compat_producer, blocking_calls_inside_callbacks_do_not_wait)
{
    pulsar_client_t *client = new_client();
    pulsar_producer_t *p = new_producer(client, NULL);
    pulsar_message_t *m = message("x", NULL);
    pulsar_producer_send_async(p, m, flush_inside, p);
    pulsar_message_free(m);
    cr_assert_eq(pulsar_producer_flush(p), pulsar_result_Ok);
    for (int i = 0; i < 500 && atomic_load(&inner_flush) < 0; i++)
        usleep(10000);
    /* libpulsar would deadlock there; pulsarc-compat refuses to wait. */
    cr_expect_eq(atomic_load(&inner_flush), pulsar_result_OperationNotSupported);
    pulsar_producer_free(p);
    pulsar_client_free(client);
}
