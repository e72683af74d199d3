/* Honest results and safe lifetimes at the public API: flush reports failures, blocking
 * calls refuse to block the loop, destroy keeps callbacks on the loop thread and leaves
 * the producer handles to their owner, creation gives up within operationTimeoutMs and a
 * terminal error refuses later sends at once. */
#include "client_harness.h"

#include <stdatomic.h>

#include "client/client.h"

TestSuite(client_lifecycle, .init = h_setup, .fini = h_teardown, .timeout = H_SUITE_TIMEOUT(60));

/* A payload zlib cannot shrink, so its size is judged only after compression. */
static pulsarc_message_t *incompressible(size_t len)
{
    static uint8_t noise[8192];
    cr_assert_leq(len, sizeof noise);
    uint32_t x = 12345;
    for (size_t i = 0; i < len; i++) {
        x = x * 1103515245u + 12345u;
        noise[i] = (uint8_t)(x >> 16);
    }
    pulsarc_message_t *m = pulsarc_message_new();
    cr_assert_eq(pulsarc_message_set_payload(m, noise, len), PULSARC_OK);
    return m;
}

/* Wait (with a hang guard) until *v is no longer `initial`; hooks and callbacks run on the
 * loop thread after the events the harness counts. */
static bool wait_changed(_Atomic int *v, int initial)
{
    return h_wait_changed(v, initial, 10000);
}

/* ---- flush reports failures ---------------------------------------------------------- */

Test(client_lifecycle, flush_reports_a_message_that_failed_before_it)
{
    mock_broker_set_max_message_size(mb, 1000);
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, "compressionType", "zlib", NULL);
    pulsarc_message_t *m = incompressible(3000);
    T.slots[0].idx = 0;
    cr_assert_eq(pulsarc_producer_send_async(producer, m, h_on_sent, &T.slots[0]), PULSARC_OK);
    pulsarc_message_free(m);
    cr_assert(h_wait_calls(1, 10000));
    h_assert_each_once(1, PULSARC_ERR_MESSAGE_TOO_BIG);

    pulsarc_result r = pulsarc_producer_flush(producer);
    cr_assert_eq(r, PULSARC_ERR_MESSAGE_TOO_BIG, "flush: %s", pulsarc_result_name(r));
    cr_assert(strstr(pulsarc_last_error_detail(), "1000"), "detail: %s",
              pulsarc_last_error_detail());
    /* Reported once: the next flush covers nothing that failed. */
    cr_assert_eq(pulsarc_producer_flush(producer), PULSARC_OK, "%s", pulsarc_last_error_detail());
    h_finish();
}

Test(client_lifecycle, flush_reports_a_send_timeout_with_its_detail)
{
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, "sendTimeoutMs", "300", NULL);
    mock_broker_set_receipt_mode(mb, MOCK_RECEIPTS_SUPPRESS);
    h_send_range(producer, 0, 2);
    pulsarc_result r = pulsarc_producer_flush(producer);
    cr_assert_eq(r, PULSARC_ERR_SEND_TIMEOUT, "flush: %s", pulsarc_result_name(r));
    cr_assert(strstr(pulsarc_last_error_detail(), "sendTimeoutMs"), "detail: %s",
              pulsarc_last_error_detail());
    h_assert_each_once(2, PULSARC_ERR_SEND_TIMEOUT);
    mock_broker_set_receipt_mode(mb, MOCK_RECEIPTS_NORMAL);
    cr_assert_eq(h_send_sync(producer, 2), PULSARC_OK);
    cr_assert_eq(pulsarc_producer_flush(producer), PULSARC_OK, "%s", pulsarc_last_error_detail());
    h_finish();
}

static _Atomic int async_flush_res = 1000;
static char async_flush_detail[256];

static void on_flush_detail(pulsarc_producer_t *p, pulsarc_result res, void *ctx)
{
    snprintf(async_flush_detail, sizeof async_flush_detail, "%s", pulsarc_last_error_detail());
    atomic_store(&async_flush_res, res);
}

Test(client_lifecycle, flush_async_reports_a_failure_and_its_detail)
{
    mock_broker_set_max_message_size(mb, 1000);
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, "compressionType", "zlib", NULL);
    pulsarc_message_t *m = incompressible(3000);
    cr_assert_eq(pulsarc_producer_send_async(producer, m, NULL, NULL), PULSARC_OK);
    pulsarc_message_free(m);
    cr_assert_eq(pulsarc_producer_flush_async(producer, on_flush_detail, NULL), PULSARC_OK);
    cr_assert(wait_changed(&async_flush_res, 1000), "flush_async never completed");
    cr_assert_eq(atomic_load(&async_flush_res), PULSARC_ERR_MESSAGE_TOO_BIG, "got %s",
                 pulsarc_result_name(atomic_load(&async_flush_res)));
    cr_assert(strstr(async_flush_detail, "1000"), "detail: %s", async_flush_detail);
    h_finish();
}

/* ---- blocking calls from a callback ---------------------------------------------------- */

static _Atomic int close_rc = 1000;

static void close_in_callback(pulsarc_producer_t *p, int idx, pulsarc_result res)
{
    if (idx == 0)
        atomic_store(&close_rc, pulsarc_producer_close(p));
}

Test(client_lifecycle, close_from_a_callback_would_block_and_does_nothing)
{
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    T.hook = close_in_callback;
    cr_assert_eq(h_send(producer, 0), PULSARC_OK);
    cr_assert(wait_changed(&close_rc, 1000), "the hook never ran");
    T.hook = NULL;
    cr_assert_eq(atomic_load(&close_rc), PULSARC_ERR_WOULD_BLOCK, "close from a callback: %s",
                 pulsarc_result_name(atomic_load(&close_rc)));
    /* The producer is still open. */
    cr_assert_eq(h_send_sync(producer, 1), PULSARC_OK, "%s", pulsarc_last_error_detail());
    cr_assert_eq(h_count(mb, MOCK_CLOSE_PRODUCERS), 0);
    cr_assert_eq(pulsarc_producer_close(producer), PULSARC_OK);
    cr_assert_eq(h_count(mb, MOCK_CLOSE_PRODUCERS), 1);
    h_finish();
}

/* ---- client destroy ---------------------------------------------------------------------- */

static pthread_t main_thread;
static _Atomic int flush_on_main = -1;
static atomic_int flushes_done;

static void flush_cb_records_thread(pulsarc_producer_t *p, pulsarc_result res, void *ctx)
{
    pthread_t self = pthread_self();
    atomic_store(&flush_on_main, pthread_equal(self, main_thread) ? 1 : 0);
    atomic_fetch_add(&flushes_done, 1);
}

static void flush_during_destroy(pulsarc_producer_t *p, int idx, pulsarc_result res)
{
    if (res == PULSARC_ERR_ALREADY_CLOSED && idx == 0)
        pulsarc_producer_flush_async(p, flush_cb_records_thread, NULL);
}

Test(client_lifecycle, callbacks_during_destroy_run_on_the_loop_thread)
{
    main_thread = pthread_self();
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    mock_broker_set_receipt_mode(mb, MOCK_RECEIPTS_HOLD);
    T.hook = flush_during_destroy;
    h_send_range(producer, 0, 2);
    cr_assert(h_wait_sends(mb, 2, 10000));
    cr_assert_eq(pulsarc_client_destroy(client), PULSARC_OK);
    client = NULL;
    h_assert_each_once(2, PULSARC_ERR_ALREADY_CLOSED);
    cr_assert_eq(atomic_load(&flushes_done), 1, "the flush_async callback ran %d times",
                 atomic_load(&flushes_done));
    cr_assert_eq(atomic_load(&flush_on_main), 0,
                 "a callback ran on the thread calling pulsarc_client_destroy");
    pulsarc_producer_free(producer);
    producer = NULL;
    h_finish();
}

typedef struct blocked_sender {
    pthread_t thread;
    pulsarc_producer_t *producer;
    _Atomic int res;
} blocked_sender;

static void *send_blocking(void *arg)
{
    blocked_sender *b = arg;
    pulsarc_message_t *m = h_message(7, 0);
    atomic_store(&b->res, pulsarc_producer_send_async(b->producer, m, NULL, NULL));
    pulsarc_message_free(m);
    return NULL;
}

static bool all_senders_blocked(void *n)
{
    return (atomic_load(&client->admission.interest) & PC_ADMISSION_WAITERS) >= *(const int *)n;
}

Test(client_lifecycle, destroy_wakes_senders_blocked_on_a_full_queue)
{
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, "maxPendingMessages", "1", "blockIfQueueFull", "true",
                          NULL);
    mock_broker_set_receipt_mode(mb, MOCK_RECEIPTS_HOLD);
    cr_assert_eq(h_send(producer, 0), PULSARC_OK);
    enum { N = 4 };
    blocked_sender senders[N];
    for (int i = 0; i < N; i++) {
        senders[i].producer = producer;
        atomic_init(&senders[i].res, 1000);
        cr_assert_eq(pthread_create(&senders[i].thread, NULL, send_blocking, &senders[i]), 0);
    }
    /* Wait until every sender is inside admission, waiting for room. */
    int n_senders = N;
    cr_assert(h_wait_until(all_senders_blocked, &n_senders, 10000), "the senders did not block");
    cr_assert_eq(atomic_load(&client->admission.interest) & PC_ADMISSION_WAITERS, N,
                 "the senders did not block");
    cr_assert_eq(pulsarc_client_destroy(client), PULSARC_OK);
    client = NULL;
    for (int i = 0; i < N; i++) {
        pthread_join(senders[i].thread, NULL);
        cr_assert_eq(atomic_load(&senders[i].res), PULSARC_ERR_ALREADY_CLOSED,
                     "blocked sender %d got %s", i,
                     pulsarc_result_name(atomic_load(&senders[i].res)));
    }
    h_assert_each_once(1, PULSARC_ERR_ALREADY_CLOSED);
    pulsarc_producer_free(producer);
    producer = NULL;
    h_finish();
}

/* Destroy fails what is pending with ALREADY_CLOSED and says, as a send timeout does,
 * which messages the broker may have stored: those written to a connection (their
 * receipts held here; a real broker may have persisted them) "may have been persisted",
 * one never written (the producer was registering again) "not sent". */
Test(client_lifecycle, destroy_says_which_pending_messages_may_have_been_persisted)
{
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, "sendTimeoutMs", "0", NULL);
    mock_broker_set_receipt_mode(mb, MOCK_RECEIPTS_HOLD);
    h_send_range(producer, 0, 2);
    cr_assert(h_wait_count(mb, MOCK_HELD_RECEIPTS, 2, 10000), "the sends never arrived");
    /* The broker drops the producer and refuses it back: message 2 waits. */
    h_fence_for_ever(mb);
    cr_assert(h_wait_count(mb, MOCK_PRODUCERS, 2, 10000), "the producer did not re-register");
    cr_assert_eq(h_send(producer, 2), PULSARC_OK);
    cr_assert_eq(pulsarc_client_destroy(client), PULSARC_OK);
    client = NULL;
    h_assert_each_once(3, PULSARC_ERR_ALREADY_CLOSED);
    for (int i = 0; i < 2; i++)
        cr_assert(strstr(T.detail[i], "may have been persisted"), "message %d, written: %s", i,
                  T.detail[i]);
    cr_assert(strstr(T.detail[2], "not sent"), "message 2, never written: %s", T.detail[2]);
    cr_assert_eq(h_count(mb, MOCK_SENDS), 2, "message 2 was written after all");
    pulsarc_producer_free(producer);
    producer = NULL;
    h_finish();
}

Test(client_lifecycle, producer_handle_outlives_the_client)
{
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, "producerName", "keeper", NULL);
    cr_assert_eq(h_send_sync(producer, 0), PULSARC_OK);
    cr_assert_eq(pulsarc_client_destroy(client), PULSARC_OK);
    client = NULL;
    /* The handle is still the caller's: it answers, refuses work and frees cleanly. */
    cr_assert_str_eq(pulsarc_producer_name(producer), "keeper");
    cr_assert_eq(pulsarc_producer_last_sequence_id(producer), 0);
    cr_assert_eq(pulsarc_producer_pending_count(producer), 0);
    cr_assert_eq(h_send(producer, 1), PULSARC_ERR_ALREADY_CLOSED);
    cr_assert_eq(pulsarc_producer_flush(producer), PULSARC_ERR_ALREADY_CLOSED);
    cr_assert_eq(pulsarc_producer_close(producer), PULSARC_ERR_ALREADY_CLOSED);
    pulsarc_producer_free(producer);
    producer = NULL;
    cr_assert_eq(h_total(), 0);
    h_finish();
}

/* ---- creation within operationTimeoutMs ----------------------------------------------- */

/* operationTimeoutMs of the two tests below, scaled so that creating a producer against a
 * broker that answers fits in it on a slow build. */
#define OP_TIMEOUT_MS ((uint64_t)h_scaled_ms(300))

/* Creation fails with TIMEOUT and says why, long before connectionTimeoutMs (45 s). */
static void assert_creation_times_out(void)
{
    char detail[256];
    uint64_t elapsed;
    pulsarc_result r = h_producer_fails(client, H_TOPIC, NULL, detail, sizeof detail, &elapsed);
    cr_assert_eq(r, PULSARC_ERR_TIMEOUT, "got %s (%s)", pulsarc_result_name(r), detail);
    cr_assert(strstr(detail, "operationTimeoutMs"), "detail: %s", detail);
    /* A hang guard, far above operationTimeoutMs and far below connectionTimeoutMs. */
    cr_assert_lt(elapsed, 30000, "creation took %llu ms", (unsigned long long)elapsed);
}

/* The broker accepts TCP but never answers CONNECT; creation must give up after
 * operationTimeoutMs, not after the (much longer) connectionTimeoutMs. */
Test(client_lifecycle, create_gives_up_within_operation_timeout_on_a_silent_broker)
{
    mock_broker_set_ignore_connect(mb, true);
    client = h_client("operationTimeoutMs", h_ms_str(OP_TIMEOUT_MS), "connectionTimeoutMs", "45000",
                      NULL);
    assert_creation_times_out();
    cr_assert_geq(h_count(mb, MOCK_CONNECTS), 1);
    h_finish();
}

/* The same broker, with connectionTimeoutMs the shorter: the connection gives up first,
 * and creation fails with CONNECT_FAILED naming the phase and the setting, as the header
 * says (and as the official C++ client reports a connect error). */
Test(client_lifecycle, create_fails_with_connect_failed_when_the_connection_timeout_is_shorter)
{
    mock_broker_set_ignore_connect(mb, true);
    client = h_client("connectionTimeoutMs", h_ms_str(OP_TIMEOUT_MS), "operationTimeoutMs", "45000",
                      NULL);
    char detail[256];
    uint64_t elapsed;
    pulsarc_result r = h_producer_fails(client, H_TOPIC, NULL, detail, sizeof detail, &elapsed);
    cr_assert_eq(r, PULSARC_ERR_CONNECT_FAILED, "got %s (%s)", pulsarc_result_name(r), detail);
    cr_assert(strstr(detail, "accepted the connection but did not answer CONNECT within "
                             "connectionTimeoutMs"),
              "detail: %s", detail);
    /* A hang guard, far above connectionTimeoutMs and far below operationTimeoutMs. */
    cr_assert_lt(elapsed, 30000, "creation took %llu ms", (unsigned long long)elapsed);
    h_finish();
}

/* Partition metadata comes back, but the broker owning the topic never answers CONNECT:
 * the partition producers are registering when the time is up. */
Test(client_lifecycle, create_gives_up_within_operation_timeout_while_registering)
{
    mock_broker_t *silent = mock_broker_start();
    cr_assert_not_null(silent);
    mock_broker_set_ignore_connect(silent, true);
    mock_broker_set_partitions(mb, 3);
    mock_broker_set_lookup_url(mb, mock_broker_url(silent));
    client = h_client("operationTimeoutMs", h_ms_str(OP_TIMEOUT_MS), "connectionTimeoutMs", "45000",
                      NULL);
    assert_creation_times_out();
    cr_assert_geq(mock_broker_count(silent, MOCK_CONNECTS), 1);
    /* The client still works against a broker that answers. */
    mock_broker_set_lookup_url(mb, NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    cr_assert_eq(h_send_sync(producer, 0), PULSARC_OK, "%s", pulsarc_last_error_detail());
    h_finish();
    mock_broker_stop(silent);
}

/* The owner refuses the first CONNECT (ServiceNotReady) and never answers the retry:
 * time runs out in the middle of an attempt, and the answer is the failure the attempts
 * met, not a bare TIMEOUT, whatever the moment the deadline comes (an unreachable broker
 * is reported as such, as the official clients do). Before, which of the two came back
 * depended on whether the deadline found the partition waiting or in an attempt. The
 * time passes on the skipped clock: with a real 300 ms deadline, a loaded machine let it
 * come before the retry. */
Test(client_lifecycle, create_that_runs_out_of_time_mid_attempt_names_the_last_failure)
{
    mock_broker_t *owner = mock_broker_start();
    cr_assert_not_null(owner);
    mock_broker_fail_connect(owner, PULSAR__PROTO__SERVER_ERROR__ServiceNotReady, "loading", 1);
    mock_broker_set_ignore_connect(owner, true);
    mock_broker_set_lookup_url(mb, mock_broker_url(owner));
    client = h_client("operationTimeoutMs", "10000", "connectionTimeoutMs", "45000", NULL);
    h_create_call_t cc = { 0 };
    cr_assert(h_create_while_time_passes(&cc, 20000), "creation never ended");
    cr_assert_null(cc.producer, "a failed create_producer left a handle");
    cr_assert_eq(mock_broker_count(owner, MOCK_CONNECTS), 2, "the retry was made");
    cr_assert_eq(cc.result, PULSARC_ERR_BROKER_SERVICE_NOT_READY, "got %s (%s)",
                 pulsarc_result_name(cc.result), cc.detail);
    cr_assert(strstr(cc.detail, "operationTimeoutMs") && strstr(cc.detail, "loading"), "detail: %s",
              cc.detail);
    h_finish();
    mock_broker_stop(owner);
}

/* ---- terminal errors --------------------------------------------------------------------- */

Test(client_lifecycle, terminal_error_refuses_later_sends_at_once)
{
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    mock_producer_info_t info;
    cr_assert(mock_broker_last_producer(mb, &info));
    mock_broker_set_receipt_mode(mb, MOCK_RECEIPTS_HOLD);
    h_send_range(producer, 0, 2);
    cr_assert(h_wait_sends(mb, 2, 10000));
    /* The topic is terminated: the broker drops the producer and refuses it back. */
    mock_broker_fail_producer(mb, PULSAR__PROTO__SERVER_ERROR__TopicTerminatedError,
                              "topic was terminated", -1);
    cr_assert_eq(mock_broker_close_producer(mb, info.producer_id), 1);
    cr_assert(h_wait_calls(2, 10000), "only %d of 2 callbacks", h_total());
    h_assert_each_once(2, PULSARC_ERR_BROKER_TOPIC_TERMINATED);

    uint64_t producers_before = h_count(mb, MOCK_PRODUCERS);
    cr_assert_eq(h_send(producer, 2), PULSARC_ERR_BROKER_TOPIC_TERMINATED);
    cr_assert(strstr(pulsarc_last_error_detail(), "topic was terminated"), "detail: %s",
              pulsarc_last_error_detail());
    cr_assert_eq(h_send_sync(producer, 3), PULSARC_ERR_BROKER_TOPIC_TERMINATED);
    cr_assert_eq(h_total(), 2, "a refused send got a callback");
    cr_assert_eq(pulsarc_producer_pending_count(producer), 0);
    cr_assert_eq(h_count(mb, MOCK_PRODUCERS), producers_before);
    h_finish();
}

/* The same with nothing pending when the producer stops: the very first later send is
 * refused at once, not accepted to fail in its callback. */
Test(client_lifecycle, terminal_error_while_idle_refuses_the_next_send)
{
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    mock_producer_info_t info;
    cr_assert(mock_broker_last_producer(mb, &info));
    mock_broker_fail_producer(mb, PULSAR__PROTO__SERVER_ERROR__TopicTerminatedError,
                              "topic was terminated", -1);
    cr_assert_eq(mock_broker_close_producer(mb, info.producer_id), 1);
    cr_assert(h_wait_count(mb, MOCK_PRODUCERS, 2, 10000));
    /* The refusal is published on the loop thread right after the broker's answer. */
    cr_assert(h_wait_log("producer stopped", 10000), "the producer never stopped");
    pulsarc_result r = h_send(producer, 0);
    cr_assert_eq(r, PULSARC_ERR_BROKER_TOPIC_TERMINATED, "got %s", pulsarc_result_name(r));
    cr_assert_eq(h_total(), 0, "a refused send got a callback");
    h_finish();
}
