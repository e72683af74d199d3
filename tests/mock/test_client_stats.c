/* Statistics against the mock broker: the counters agree with the callbacks and with what
 * the broker received, failures included (by result); refusals, batches, compression,
 * reconnects and resends are counted; latencies are at least what the broker made the
 * receipts wait; closed producers stay in the client's numbers; the periodic callback
 * delivers the same numbers as JSON on the loop thread. */
#include "client_harness.h"

#include <jansson.h>
#include <uv.h>

#include "pulsarc/pulsarc_uv.h"
#include "test_watchdog.h"

TestSuite(client_stats, .init = h_setup, .fini = h_teardown, .timeout = H_SUITE_TIMEOUT(40));

static pulsarc_stats_t *producer_stats(void)
{
    pulsarc_stats_t *s = NULL;
    pulsarc_result r = pulsarc_producer_stats(producer, &s);
    cr_assert_eq(r, PULSARC_OK, "producer_stats: %s", pulsarc_result_name(r));
    return s;
}

static pulsarc_stats_t *client_stats(void)
{
    pulsarc_stats_t *s = NULL;
    pulsarc_result r = pulsarc_client_stats(client, &s);
    cr_assert_eq(r, PULSARC_OK, "client_stats: %s", pulsarc_result_name(r));
    return s;
}

#define GET(s, what) pulsarc_stats_get((s), PULSARC_STAT_##what)

/* Payload bytes of messages [from, to) as h_send sends them ("msg-<i>"). */
static uint64_t payload_bytes(int from, int to)
{
    uint64_t n = 0;
    for (int i = from; i < to; i++) {
        char b[32];
        n += (uint64_t)snprintf(b, sizeof b, "msg-%d", i);
    }
    return n;
}

/* The client's snapshot lists no open producer (a free closes the producer first). */
static bool no_producer_open(void *arg)
{
    pulsarc_stats_t *s = NULL;
    if (pulsarc_client_stats(client, &s) != PULSARC_OK)
        return false;
    bool none = pulsarc_stats_get(s, PULSARC_STAT_PRODUCERS) == 0;
    pulsarc_stats_free(s);
    return none;
}

Test(client_stats, counters_agree_with_callbacks_and_the_broker_failures_included)
{
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, "batchingEnabled", "true", "batchingMaxPublishDelayMs",
                          "60000", "sendTimeoutMs", "300", NULL);
    /* A batch of 10 stored, one of 5 refused by the broker (NotAllowed: that entry fails
     * alone), one of 3 that never gets a receipt (send timeout). */
    h_send_range(producer, 0, 10);
    cr_assert_eq(pulsarc_producer_flush(producer), PULSARC_OK);
    mock_broker_fail_sends(mb, PULSAR__PROTO__SERVER_ERROR__NotAllowedError, 1);
    h_send_range(producer, 10, 15);
    cr_assert_eq(pulsarc_producer_flush(producer), PULSARC_ERR_BROKER_NOT_ALLOWED);
    mock_broker_set_receipt_mode(mb, MOCK_RECEIPTS_SUPPRESS);
    h_send_range(producer, 15, 18);
    cr_assert_eq(pulsarc_producer_flush(producer), PULSARC_ERR_SEND_TIMEOUT);
    cr_assert_eq(h_total(), 18);

    pulsarc_stats_t *s = producer_stats();
    cr_assert_eq(GET(s, MSGS_ACCEPTED), 18);
    cr_assert_eq(GET(s, MSGS_SENT), 18);
    cr_assert_eq(GET(s, BYTES_SENT), payload_bytes(0, 18));
    cr_assert_eq(GET(s, MSGS_ACKED), 10);
    cr_assert_eq(GET(s, BYTES_ACKED), payload_bytes(0, 10));
    cr_assert_eq(GET(s, MSGS_FAILED), 8);
    cr_assert_eq(GET(s, BYTES_FAILED), payload_bytes(10, 18));
    cr_assert_eq(pulsarc_stats_failed(s, PULSARC_ERR_BROKER_NOT_ALLOWED), 5);
    cr_assert_eq(pulsarc_stats_failed(s, PULSARC_ERR_SEND_TIMEOUT), 3);
    cr_assert_eq(GET(s, MSGS_PENDING), 0);
    cr_assert_eq(GET(s, MSGS_REFUSED), 0);
    /* What the broker received: three entries, each a batch. */
    cr_assert_eq(GET(s, ENTRIES), h_count(mb, MOCK_SENDS));
    cr_assert_eq(GET(s, BATCHES), 3);
    cr_assert_eq(GET(s, BATCHED_MSGS), 18);
    cr_assert_eq(GET(s, BATCH_MAX_MSGS), 10);
    uint64_t wire = 0;
    for (size_t i = 0; i < h_count(mb, MOCK_SENDS); i++) {
        mock_send_t m = h_get_send(mb, i);
        wire += m.payload_len;
        mock_send_free(&m);
    }
    cr_assert_eq(GET(s, ENTRY_BYTES), wire, "entry bytes are what the broker got");
    cr_assert_eq(GET(s, ENTRY_RAW_BYTES), wire, "uncompressed: raw and written agree");
    cr_assert_eq(GET(s, LATENCY_COUNT), 10, "every acknowledged message is timed");
    cr_assert_eq(GET(s, PARTITIONS), 1);
    cr_assert_eq(GET(s, PRODUCERS), 1);
    cr_assert_eq(GET(s, RECONNECTS), 0);

    json_error_t err;
    json_t *j = json_loads(pulsarc_stats_json(s), 0, &err);
    cr_assert_not_null(j, "JSON: %s", err.text);
    cr_assert_str_eq(json_string_value(json_object_get(j, "topic")), H_TOPIC);
    json_t *failed = json_object_get(j, "failed_by_result");
    cr_assert_eq(json_integer_value(json_object_get(failed, "SEND_TIMEOUT")), 3);
    cr_assert_eq(json_integer_value(json_object_get(failed, "BROKER_NOT_ALLOWED")), 5);
    json_t *p0 = json_array_get(json_object_get(j, "partition_stats"), 0);
    cr_assert_eq(json_integer_value(json_object_get(json_object_get(p0, "messages"), "acked")), 10);
    json_decref(j);
    pulsarc_stats_free(s);

    /* A freed producer's numbers stay in the client's; its gauges do not. */
    mock_broker_set_receipt_mode(mb, MOCK_RECEIPTS_NORMAL);
    pulsarc_producer_free(producer);
    producer = NULL;
    cr_assert(h_wait_until(no_producer_open, NULL, 3000), "the freed producer stays open");
    s = client_stats();
    cr_assert_eq(GET(s, MSGS_ACKED), 10);
    cr_assert_eq(GET(s, MSGS_FAILED), 8);
    cr_assert_eq(pulsarc_stats_failed(s, PULSARC_ERR_SEND_TIMEOUT), 3);
    cr_assert_eq(GET(s, LATENCY_COUNT), 10);
    cr_assert_eq(GET(s, PRODUCERS), 0);
    cr_assert_eq(GET(s, PARTITIONS), 0);
    cr_assert_eq(GET(s, MEMORY_LIMIT), 64 * 1024 * 1024);
    j = json_loads(pulsarc_stats_json(s), 0, &err);
    cr_assert_not_null(j, "JSON: %s", err.text);
    cr_assert_eq(json_array_size(json_object_get(j, "producers")), 0);
    cr_assert_eq(json_integer_value(
                     json_object_get(json_object_get(json_object_get(j, "totals"), "messages"),
                                     "acked")),
                 10);
    json_decref(j);
    pulsarc_stats_free(s);
    h_finish();
}

/* A message that fails before it becomes an entry (too big once compressed: accepted, then
 * failed when its entry is built) counts as accepted and failed, never as sent. */
Test(client_stats, a_message_failed_before_its_entry_is_counted)
{
    mock_broker_set_max_message_size(mb, 2048);
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, "compressionType", "lz4", NULL);
    uint8_t noise[8192];
    uint64_t x = 0x9E3779B97F4A7C15u;
    for (size_t i = 0; i < sizeof noise; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        noise[i] = (uint8_t)(x >> 56);
    }
    pulsarc_message_t *m = pulsarc_message_new();
    cr_assert_eq(pulsarc_message_set_payload(m, noise, sizeof noise), PULSARC_OK);
    T.slots[0].idx = 0;
    cr_assert_eq(pulsarc_producer_send_async(producer, m, h_on_sent, &T.slots[0]), PULSARC_OK);
    pulsarc_message_free(m);
    cr_assert(h_wait_calls(1, 3000));
    cr_assert_eq(T.res[0], PULSARC_ERR_MESSAGE_TOO_BIG);
    cr_assert_eq(h_send(producer, 1), PULSARC_OK);
    /* The first flush reports the failure it covers. */
    cr_assert_eq(pulsarc_producer_flush(producer), PULSARC_ERR_MESSAGE_TOO_BIG);
    cr_assert_eq(T.res[1], PULSARC_OK);
    pulsarc_stats_t *s = producer_stats();
    cr_assert_eq(GET(s, MSGS_ACCEPTED), 2);
    cr_assert_eq(GET(s, MSGS_FAILED), 1);
    cr_assert_eq(GET(s, BYTES_FAILED), sizeof noise);
    cr_assert_eq(pulsarc_stats_failed(s, PULSARC_ERR_MESSAGE_TOO_BIG), 1);
    cr_assert_eq(GET(s, MSGS_SENT), 1, "only the second became an entry");
    cr_assert_eq(GET(s, MSGS_ACKED), 1);
    cr_assert_eq(GET(s, ENTRIES), 1);
    pulsarc_stats_free(s);
    h_finish();
}

Test(client_stats, refusals_are_counted_by_result)
{
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, "maxPendingMessages", "1", NULL);
    mock_broker_set_receipt_mode(mb, MOCK_RECEIPTS_HOLD);
    cr_assert_eq(h_send(producer, 0), PULSARC_OK);
    cr_assert_eq(h_send(producer, 1), PULSARC_ERR_QUEUE_FULL);
    cr_assert_eq(h_send(producer, 2), PULSARC_ERR_QUEUE_FULL);
    pulsarc_stats_t *s = producer_stats();
    cr_assert_eq(pulsarc_stats_refused(s, PULSARC_ERR_QUEUE_FULL), 2);
    cr_assert_eq(GET(s, MSGS_REFUSED), 2);
    cr_assert_eq(GET(s, MSGS_PENDING), 1);
    pulsarc_stats_free(s);
    s = client_stats();
    cr_assert_eq(GET(s, MSGS_PENDING), 1);
    cr_assert_gt(GET(s, MEMORY_USED), 0, "the held message's bytes");
    pulsarc_stats_free(s);
    h_release_held_expect_freed(mb, client, 1);
    h_finish();
}

/* The broker makes every receipt wait 100 ms: no message can be timed below that, less
 * the mock's timer granularity (libuv floors its loop time to the millisecond, so a
 * 100 ms timer may fire 99.x ms after the SEND arrived). */
#define RECEIPT_DELAY_FLOOR_US 99000
Test(client_stats, latency_is_at_least_the_receipts_delay)
{
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    mock_broker_set_receipt_delay(mb, 100);
    h_send_range(producer, 0, 20);
    cr_assert_eq(pulsarc_producer_flush(producer), PULSARC_OK);
    pulsarc_stats_t *s = producer_stats();
    cr_assert_eq(GET(s, LATENCY_COUNT), 20);
    cr_assert_geq(pulsarc_stats_latency_us(s, 0), RECEIPT_DELAY_FLOOR_US, "min %llu us",
                  (unsigned long long)pulsarc_stats_latency_us(s, 0));
    cr_assert_geq(pulsarc_stats_latency_us(s, 50), RECEIPT_DELAY_FLOOR_US);
    cr_assert_geq(pulsarc_stats_latency_us(s, 100), pulsarc_stats_latency_us(s, 99.9));
    cr_assert_geq(pulsarc_stats_latency_us(s, 99.9), pulsarc_stats_latency_us(s, 50));
    pulsarc_stats_free(s);
    h_finish();
}

Test(client_stats, reconnects_disconnects_and_resent_entries)
{
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    h_pending_unanswered(3);
    mock_broker_cut_now(mb);
    cr_assert(h_wait_calls(3, 5000), "only %d of 3 callbacks", h_total());
    h_assert_each_once(3, PULSARC_OK);
    pulsarc_stats_t *s = producer_stats();
    cr_assert_eq(GET(s, RECONNECTS), 1);
    cr_assert_eq(GET(s, DISCONNECTS), 1);
    cr_assert_eq(GET(s, ENTRIES_RESENT), 3);
    cr_assert_eq(GET(s, ENTRIES), 3, "a resend builds nothing new");
    cr_assert_eq(GET(s, MSGS_ACKED), 3);
    pulsarc_stats_free(s);
    h_finish();
}

Test(client_stats, compression_ratio_of_compressible_payloads)
{
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, "batchingEnabled", "true", "compressionType", "lz4",
                          "batchingMaxPublishDelayMs", "60000", NULL);
    h_send_range_len(producer, 0, 50, 1000); /* "msg-<i>" and then the alphabet, repeated */
    cr_assert_eq(pulsarc_producer_flush(producer), PULSARC_OK);
    pulsarc_stats_t *s = producer_stats();
    cr_assert_eq(GET(s, ENTRIES), 1);
    cr_assert_gt(GET(s, ENTRY_RAW_BYTES), 50 * 1000, "the batch's layout holds the payloads");
    cr_assert_lt(GET(s, ENTRY_BYTES) * 4, GET(s, ENTRY_RAW_BYTES), "lz4 shrinks these");
    mock_send_t m = h_get_send(mb, 0);
    cr_assert_eq(GET(s, ENTRY_BYTES), m.payload_len);
    mock_send_free(&m);
    pulsarc_stats_free(s);
    h_finish();
}

/* A producer name is the user's (producerName, any bytes) or the broker's: one that is not
 * UTF-8 reaches the JSON with U+FFFD for each byte that is not part of a well-formed
 * sequence, instead of failing the snapshot (jansson takes UTF-8 only). */
static void assert_name_in_json(const char *json, const char *want)
{
    json_error_t err;
    json_t *j = json_loads(json, 0, &err);
    cr_assert_not_null(j, "JSON: %s", err.text);
    json_t *p = json_object_get(j, "producers") ? json_array_get(json_object_get(j, "producers"), 0)
                                                : j;
    cr_assert_str_eq(json_string_value(json_object_get(p, "name")), want);
    json_decref(j);
}

Test(client_stats, a_producer_name_that_is_not_utf8_is_replaced_in_the_json)
{
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, "producerName", "caf\xe9-\xc3\xa9-\xff\xfe", NULL);
    cr_assert_str_eq(pulsarc_producer_name(producer), "caf\xe9-\xc3\xa9-\xff\xfe");
    pulsarc_stats_t *s = NULL;
    pulsarc_result r = pulsarc_producer_stats(producer, &s);
    cr_assert_eq(r, PULSARC_OK, "producer_stats: %s", pulsarc_result_name(r));
    const char *want = "caf\xef\xbf\xbd-\xc3\xa9-\xef\xbf\xbd\xef\xbf\xbd";
    assert_name_in_json(pulsarc_stats_json(s), want);
    pulsarc_stats_free(s);
    s = client_stats();
    assert_name_in_json(pulsarc_stats_json(s), want);
    pulsarc_stats_free(s);
    h_finish();
}

/* ---- the periodic callback ------------------------------------------------------------- */

static _Atomic int cb_calls;
static _Atomic int cb_blocking_result; /* what a blocking call made from it returned */
static pthread_mutex_t cb_mu = PTHREAD_MUTEX_INITIALIZER;
static char cb_json[64 * 1024];

static void on_stats(const char *json, size_t len, void *ctx)
{
    pthread_mutex_lock(&cb_mu);
    snprintf(cb_json, sizeof cb_json, "%s", json);
    pthread_mutex_unlock(&cb_mu);
    cr_assert_eq(strlen(json), len);
    cr_assert_eq(ctx, (void *)&cb_calls);
    /* On the loop thread, a blocking call refuses to wait. */
    atomic_store(&cb_blocking_result, (int)pulsarc_producer_flush(producer));
    atomic_fetch_add(&cb_calls, 1);
}

static void set_stats_cb(pulsarc_client_config_t *cc)
{
    cr_assert_eq(pulsarc_client_config_set_stats_cb(cc, on_stats, &cb_calls), PULSARC_OK);
}

Test(client_stats, the_periodic_callback_runs_on_the_loop_with_the_json)
{
    h_client_setup = set_stats_cb;
    client = h_client("statsIntervalSeconds", "1", NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    h_send_range(producer, 0, 4);
    cr_assert_eq(pulsarc_producer_flush(producer), PULSARC_OK);
    int before = atomic_load(&cb_calls);
    cr_assert(h_let_time_pass_until_changed(&cb_calls, before, 5000), "no statistics callback");
    cr_assert_eq(atomic_load(&cb_blocking_result), PULSARC_ERR_WOULD_BLOCK,
                 "the callback did not run on the loop thread");
    pthread_mutex_lock(&cb_mu);
    json_error_t err;
    json_t *j = json_loads(cb_json, 0, &err);
    pthread_mutex_unlock(&cb_mu);
    cr_assert_not_null(j, "JSON: %s", err.text);
    cr_assert_eq(json_integer_value(json_object_get(j, "producer_count")), 1);
    cr_assert_not_null(json_object_get(j, "uptime_ms"));
    json_t *p0 = json_array_get(json_object_get(j, "producers"), 0);
    cr_assert_str_eq(json_string_value(json_object_get(p0, "topic")), H_TOPIC);
    cr_assert_eq(json_integer_value(json_object_get(json_object_get(p0, "messages"), "acked")), 4);
    cr_assert_eq(json_integer_value(
                     json_object_get(json_object_get(json_object_get(j, "totals"), "latency_us"),
                                     "count")),
                 4);
    json_decref(j);
    h_finish();
}

static void no_stats_cb(pulsarc_client_config_t *cc)
{
    set_stats_cb(cc);
}

Test(client_stats, no_callback_when_the_interval_is_0)
{
    h_client_setup = no_stats_cb;
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    h_let_time_pass(1500); /* a callback every second would have come */
    cr_assert_eq(atomic_load(&cb_calls), 0);
    h_finish();
}

/* On the application's loop (pulsarc_client_new_on_loop) the interval's timer is no work:
 * an idle client lets uv_run end, as pulsarc_uv.h says (the watchdog bounds a uv_run that
 * pulsarc keeps going), and the callback still comes while the application's loop runs
 * for reasons of its own. */
static void on_app_client_closed(pulsarc_client_t *c, pulsarc_result res, void *ctx)
{
    *(bool *)ctx = true;
}

Test(client_stats, the_interval_does_not_keep_an_idle_client_on_the_applications_loop)
{
    uv_loop_t app;
    cr_assert_eq(uv_loop_init(&app), 0);
    pulsarc_client_config_t *cc = pulsarc_client_config_new();
    cr_assert_eq(pulsarc_client_config_set(cc, "statsIntervalSeconds", "1"), PULSARC_OK);
    set_stats_cb(cc);
    pulsarc_client_config_set_logger(cc, h_logger, NULL);
    pulsarc_client_t *c = NULL;
    cr_assert_eq(pulsarc_client_new_on_loop(&app, mock_broker_url(mb), cc, &c), PULSARC_OK);
    pulsarc_client_config_free(cc);
    test_watchdog_t w;
    cr_assert(tw_run_returns(&app, &w, (uint64_t)h_deadline_ms(5000)),
              "uv_run went on for an idle client with statistics");
    /* The application's own reason to run: the callback comes meanwhile. */
    uv_ref((uv_handle_t *)&w.timer);
    while (atomic_load(&cb_calls) == 0 && !w.fired)
        uv_run(&app, UV_RUN_ONCE);
    cr_assert_gt(atomic_load(&cb_calls), 0, "no statistics callback while the loop ran");
    tw_close(&w);
    bool closed = false;
    cr_assert_eq(pulsarc_client_close_async(c, on_app_client_closed, &closed), PULSARC_OK);
    uv_run(&app, UV_RUN_DEFAULT);
    cr_assert(closed, "uv_run ended before the client's close was done");
    cr_assert_eq(pulsarc_client_destroy(c), PULSARC_OK);
    cr_assert_eq(uv_loop_close(&app), 0, "a handle was left on the application's loop");
    h_finish();
}

/* From a callback the snapshot is taken at once; after the client is gone there is none. */
static _Atomic int hook_acked = -1;

static void stats_in_callback(pulsarc_producer_t *p, int idx, pulsarc_result res)
{
    pulsarc_stats_t *s = NULL;
    if (pulsarc_producer_stats(p, &s) == PULSARC_OK) {
        atomic_store(&hook_acked, (int)pulsarc_stats_get(s, PULSARC_STAT_MSGS_ACKED));
        pulsarc_stats_free(s);
    }
}

Test(client_stats, snapshots_from_a_callback_and_after_destroy)
{
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    T.hook = stats_in_callback;
    cr_assert_eq(h_send(producer, 0), PULSARC_OK);
    cr_assert(h_wait_changed(&hook_acked, -1, 3000));
    cr_assert_eq(atomic_load(&hook_acked), 1, "the message counts before its callback");
    T.hook = NULL;
    pulsarc_client_destroy(client);
    client = NULL;
    pulsarc_stats_t *s = (pulsarc_stats_t *)&s;
    cr_assert_eq(pulsarc_producer_stats(producer, &s), PULSARC_ERR_ALREADY_CLOSED);
    cr_assert_null(s);
    pulsarc_producer_free(producer);
    producer = NULL;
    h_finish();
}
