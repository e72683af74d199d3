/* The client against the mock broker: bad input through the public API, admission limits,
 * client destruction with messages pending, and what callbacks may do (send, blocking
 * calls, close, free). */
#include "client_harness.h"

#include <stdatomic.h>

#include "client/client.h"

TestSuite(client_api, .init = h_setup, .fini = h_teardown, .timeout = H_SUITE_TIMEOUT(30));

/* ---- bad arguments --------------------------------------------------------------------- */

Test(client_api, null_arguments)
{
    pulsarc_client_t *c = (pulsarc_client_t *)0x1;
    cr_assert_eq(pulsarc_client_new(NULL, NULL, &c), PULSARC_ERR_INVALID_ARGUMENT);
    cr_assert_eq(pulsarc_client_new(mock_broker_url(mb), NULL, NULL), PULSARC_ERR_INVALID_ARGUMENT);
    cr_assert_eq(pulsarc_client_new("ftp://nowhere", NULL, &c), PULSARC_ERR_INVALID_URL);
    cr_assert_null(c, "a failed client_new left *out set");
    cr_assert_eq(pulsarc_client_destroy(NULL), PULSARC_ERR_INVALID_ARGUMENT);

    client = h_client(NULL);
    pulsarc_producer_t *p = (pulsarc_producer_t *)0x1;
    cr_assert_eq(pulsarc_client_create_producer(NULL, H_TOPIC, NULL, &p),
                 PULSARC_ERR_INVALID_ARGUMENT);
    cr_assert_null(p, "*out not cleared");
    cr_assert_eq(pulsarc_client_create_producer(client, NULL, NULL, &p),
                 PULSARC_ERR_INVALID_ARGUMENT);
    cr_assert_eq(pulsarc_client_create_producer(client, H_TOPIC, NULL, NULL),
                 PULSARC_ERR_INVALID_ARGUMENT);
    cr_assert_neq(pulsarc_last_error_detail()[0], '\0', "no detail for a bad argument");

    pulsarc_message_t *m = h_message(0, 0);
    cr_assert_eq(pulsarc_producer_send_async(NULL, m, h_on_sent, NULL),
                 PULSARC_ERR_INVALID_ARGUMENT);
    cr_assert_eq(pulsarc_producer_send(NULL, m, NULL), PULSARC_ERR_INVALID_ARGUMENT);
    cr_assert_eq(pulsarc_producer_flush(NULL), PULSARC_ERR_INVALID_ARGUMENT);
    cr_assert_eq(pulsarc_producer_close(NULL), PULSARC_ERR_INVALID_ARGUMENT);
    cr_assert_eq(pulsarc_producer_close_async(NULL, NULL, NULL), PULSARC_ERR_INVALID_ARGUMENT);
    cr_assert_eq(pulsarc_producer_flush_async(NULL, NULL, NULL), PULSARC_ERR_INVALID_ARGUMENT);
    pulsarc_producer_free(NULL);
    pulsarc_message_free(m);
    cr_assert_eq(pulsarc_producer_pending_count(NULL), 0);
    cr_assert_eq(pulsarc_producer_last_sequence_id(NULL), -1);

    /* None of that reached the broker. */
    cr_assert_eq(h_count(mb, MOCK_CONNECTIONS), 0);
    h_finish();
}

Test(client_api, null_message_is_rejected)
{
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    pulsarc_message_id_t *id = (pulsarc_message_id_t *)0x1;
    cr_assert_eq(pulsarc_producer_send_async(producer, NULL, h_on_sent, &T.slots[0]),
                 PULSARC_ERR_INVALID_ARGUMENT);
    cr_assert_eq(pulsarc_producer_send(producer, NULL, &id), PULSARC_ERR_INVALID_ARGUMENT);
    cr_assert_null(id, "id_out not cleared");
    h_expect_no_more_callbacks();
    cr_assert_eq(h_total(), 0, "a rejected message got a callback");
    cr_assert_eq(pulsarc_producer_pending_count(producer), 0);
    cr_assert_eq(h_count(mb, MOCK_SENDS), 0);
    /* An empty payload is a valid message. */
    pulsarc_message_t *m = pulsarc_message_new();
    cr_assert_eq(pulsarc_producer_send(producer, m, &id), PULSARC_OK);
    cr_assert_not_null(id);
    pulsarc_message_id_free(id);
    pulsarc_message_free(m);
    mock_send_t s = h_get_send(mb, 0);
    cr_assert_eq(s.payload_len, 0);
    mock_send_free(&s);
    h_finish();
}

Test(client_api, empty_and_invalid_topics)
{
    client = h_client(NULL);
    static const char *const bad[] = {
        "",
        "persistent://",
        "persistent://public/default/",
        "persistent://public/default",
        "bogus://public/default/t",
        "public/t",
        "persistent://public/default/a/b",
        "persistent://pub lic/default/t",
        "   ",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        pulsarc_producer_t *p = (pulsarc_producer_t *)0x1;
        pulsarc_result r = pulsarc_client_create_producer(client, bad[i], NULL, &p);
        cr_assert_eq(r, PULSARC_ERR_INVALID_TOPIC, "\"%s\": %s", bad[i], pulsarc_result_name(r));
        cr_assert_null(p);
        cr_assert_neq(pulsarc_last_error_detail()[0], '\0', "\"%s\": no detail", bad[i]);
    }
    cr_assert_eq(h_count(mb, MOCK_CONNECTIONS), 0, "an invalid topic was looked up");
    h_finish();
}

Test(client_api, send_after_close)
{
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    cr_assert_eq(h_send_sync(producer, 0), PULSARC_OK);
    cr_assert_eq(pulsarc_producer_close(producer), PULSARC_OK);
    cr_assert_eq(h_count(mb, MOCK_CLOSE_PRODUCERS), 1);

    cr_assert_eq(h_send(producer, 1), PULSARC_ERR_ALREADY_CLOSED);
    cr_assert_eq(h_send_sync(producer, 2), PULSARC_ERR_ALREADY_CLOSED);
    h_expect_no_more_callbacks();
    cr_assert_eq(h_total(), 0, "a refused message got a callback");
    cr_assert_eq(h_count(mb, MOCK_SENDS), 1);
    /* Closing twice is harmless. */
    cr_assert_eq(pulsarc_producer_close(producer), PULSARC_OK);
    cr_assert_eq(h_count(mb, MOCK_CLOSE_PRODUCERS), 1);
    h_finish();
}

Test(client_api, close_flushes_pending_messages)
{
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    mock_broker_set_receipt_delay(mb, 200);
    h_send_range(producer, 0, 3);
    cr_assert_eq(pulsarc_producer_close(producer), PULSARC_OK);
    /* close waits for the receipts before closing on the broker. */
    h_assert_each_once(3, PULSARC_OK);
    cr_assert_eq(h_count(mb, MOCK_CLOSE_PRODUCERS), 1);
    h_finish();
}

/* ---- admission ------------------------------------------------------------------------- */

Test(client_api, queue_full)
{
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, "maxPendingMessages", "2", NULL);
    mock_broker_set_receipt_mode(mb, MOCK_RECEIPTS_HOLD);
    h_send_range(producer, 0, 2);
    cr_assert_eq(h_send(producer, 2), PULSARC_ERR_QUEUE_FULL);
    cr_assert_eq(pulsarc_producer_pending_count(producer), 2);
    cr_assert(h_wait_sends(mb, 2, 3000));

    cr_assert_eq(mock_broker_release_receipts(mb), 2);
    cr_assert(h_wait_calls(2, 3000));
    h_expect_no_more_callbacks();
    h_assert_each_once(2, PULSARC_OK);
    cr_assert_eq(T.calls[2], 0, "the refused message got a callback");
    cr_assert_eq(h_total(), 2);
    cr_assert_eq(h_count(mb, MOCK_SENDS), 2);
    cr_assert_eq(pulsarc_producer_pending_count(producer), 0);

    /* Room again. */
    mock_broker_set_receipt_mode(mb, MOCK_RECEIPTS_NORMAL);
    cr_assert_eq(h_send(producer, 3), PULSARC_OK);
    cr_assert(h_wait_calls(3, 3000));
    cr_assert_eq(T.res[3], PULSARC_OK);
    h_finish();
}

/* A batch holds at most half of maxPendingMessages, so the next one fills while it waits
 * for its receipt: with a window of 10 and room for 1000 in a batch, 10 messages leave at
 * once as two batches of 5 (a batch of 1000 would wait a minute for its delay). */
Test(client_api, batches_hold_half_the_pending_window)
{
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, "maxPendingMessages", "10", "batchingEnabled", "true",
                          "batchingMaxMessages", "1000", "batchingMaxPublishDelayMs", "60000",
                          NULL);
    h_send_range(producer, 0, 10);
    cr_assert(h_wait_sends(mb, 2, 5000), "%d SENDs: the batches waited for their delay",
              (int)h_count(mb, MOCK_SENDS));
    for (size_t i = 0; i < 2; i++) {
        mock_send_t s = h_get_send(mb, i);
        cr_assert_eq(s.num_messages, 5, "batch %zu holds %d messages", i, (int)s.num_messages);
        mock_send_free(&s);
    }
    cr_assert(h_wait_calls(10, 3000), "only %d of 10 callbacks", h_total());
    h_assert_each_once(10, PULSARC_OK);
    h_finish();
}

/* Five messages sent from the first callback of a batch of five, the window being full
 * until that receipt: the batch's permits are all given back before its callbacks run (as
 * in the Java client), so all five are accepted at once, not only one. */
static _Atomic int from_callback_accepted;

static void send_five_from_first_callback(pulsarc_producer_t *p, int idx, pulsarc_result res)
{
    (void)res;
    if (idx != 0)
        return;
    for (int i = 10; i < 15; i++)
        if (h_send(p, i) == PULSARC_OK)
            atomic_fetch_add(&from_callback_accepted, 1);
}

Test(client_api, a_batch_releases_its_permits_before_its_callbacks)
{
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, "maxPendingMessages", "10", "batchingEnabled", "true",
                          "batchingMaxPublishDelayMs", "60000", NULL);
    mock_broker_set_receipt_mode(mb, MOCK_RECEIPTS_HOLD);
    T.hook = send_five_from_first_callback;
    h_send_range(producer, 0, 10);
    cr_assert_eq(h_send(producer, 15), PULSARC_ERR_QUEUE_FULL, "the window is not full");
    cr_assert(h_wait_sends(mb, 2, 5000));
    mock_broker_set_receipt_mode(mb, MOCK_RECEIPTS_NORMAL);
    cr_assert_eq(mock_broker_release_receipts(mb), 2);
    cr_assert(h_wait_calls(10, 5000), "only %d of 10 callbacks", h_total());
    cr_assert_eq(atomic_load(&from_callback_accepted), 5,
                 "%d of 5 sends from the first callback accepted",
                 atomic_load(&from_callback_accepted));
    cr_assert(h_wait_calls(15, 5000), "only %d of 15 callbacks", h_total());
    T.hook = NULL;
    h_expect_no_more_callbacks();
    h_assert_each_once(15, PULSARC_OK);
    cr_assert_eq(T.calls[15], 0, "the refused message got a callback");
    h_finish();
}

/* A send that blocks for room (blockIfQueueFull), on a thread of its own. */
typedef struct blocked_send {
    pthread_t thread;
    _Atomic int result; /* -1 until the send returned */
    uint64_t waited_ms; /* on the clock the client sees */
} blocked_send_t;

static void *send_blocking(void *arg)
{
    blocked_send_t *b = arg;
    uint64_t t0 = h_now_ms();
    pulsarc_result r = h_send(producer, 2);
    b->waited_ms = h_now_ms() - t0;
    atomic_store(&b->result, r);
    return NULL;
}

static bool sender_waits_or_returned(void *arg)
{
    blocked_send_t *b = arg;
    return (atomic_load(&client->admission.interest) & PC_ADMISSION_WAITERS) > 0 ||
           atomic_load(&b->result) != -1;
}

Test(client_api, block_if_queue_full_waits_for_room)
{
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, "maxPendingMessages", "2", "blockIfQueueFull", "true",
                          NULL);
    mock_broker_set_receipt_mode(mb, MOCK_RECEIPTS_HOLD);
    h_send_range(producer, 0, 2);
    cr_assert(h_wait_sends(mb, 2, 3000));
    blocked_send_t b = { .result = -1 };
    cr_assert_eq(pthread_create(&b.thread, NULL, send_blocking, &b), 0);
    /* The sender found no room and waits for it (a sender inside admission's slow path). */
    cr_assert(h_wait_until(sender_waits_or_returned, &b, 3000), "the send neither waited nor "
                                                                "returned");
    cr_assert_eq(atomic_load(&b.result), -1, "send returned while the queue was full: %s",
                 pulsarc_result_name(atomic_load(&b.result)));
    /* Time passes, and whatever the client does meanwhile does not end the wait. */
    h_let_time_pass(300);
    cr_assert_eq(atomic_load(&b.result), -1, "send returned while the queue was full: %s",
                 pulsarc_result_name(atomic_load(&b.result)));
    mock_broker_set_receipt_mode(mb, MOCK_RECEIPTS_NORMAL);
    cr_assert_eq(mock_broker_release_receipts(mb), 2);
    pthread_join(b.thread, NULL);
    cr_assert_eq(atomic_load(&b.result), PULSARC_OK, "got %s",
                 pulsarc_result_name(atomic_load(&b.result)));
    /* Room came no earlier than 300 ms after the send began. */
    cr_assert_geq(b.waited_ms, 300, "send did not wait for room (%llu ms)",
                  (unsigned long long)b.waited_ms);
    cr_assert(h_wait_calls(3, 3000));
    h_assert_each_once(3, PULSARC_OK);
    h_finish();
}

Test(client_api, message_too_big)
{
    mock_broker_set_max_message_size(mb, 1000);
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    cr_assert_eq(h_send_len(producer, 0, 2000), PULSARC_ERR_MESSAGE_TOO_BIG);
    cr_assert(strstr(pulsarc_last_error_detail(), "1000"), "detail: %s",
              pulsarc_last_error_detail());
    pulsarc_message_t *m = h_message(1, 2000);
    cr_assert_eq(pulsarc_producer_send(producer, m, NULL), PULSARC_ERR_MESSAGE_TOO_BIG);
    pulsarc_message_free(m);
    h_expect_no_more_callbacks();
    cr_assert_eq(h_total(), 0, "a refused message got a callback");
    cr_assert_eq(pulsarc_producer_pending_count(producer), 0);
    /* Below the limit it goes through. */
    cr_assert_eq(h_send_len(producer, 2, 500), PULSARC_OK);
    cr_assert(h_wait_calls(1, 3000));
    cr_assert_eq(T.res[2], PULSARC_OK, "got %s (%s)", pulsarc_result_name(T.res[2]), T.detail[2]);
    cr_assert_eq(h_count(mb, MOCK_SENDS), 1);
    cr_assert_eq(h_count(mb, MOCK_PROTOCOL_ERRORS), 0);
    h_finish();
}

Test(client_api, compressed_message_too_big_fails_in_callback)
{
    mock_broker_set_max_message_size(mb, 1000);
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, "compressionType", "zlib", NULL);
    /* Random bytes do not compress: the size is known only after compression. */
    static uint8_t noise[3000];
    uint32_t x = 12345;
    for (size_t i = 0; i < sizeof noise; i++) {
        x = x * 1103515245u + 12345u;
        noise[i] = (uint8_t)(x >> 16);
    }
    pulsarc_message_t *m = pulsarc_message_new();
    cr_assert_eq(pulsarc_message_set_payload(m, noise, sizeof noise), PULSARC_OK);
    pulsarc_result r = pulsarc_producer_send_async(producer, m, h_on_sent, &T.slots[0]);
    pulsarc_message_free(m);
    if (r == PULSARC_OK) {
        /* Accepted: the callback must report it, exactly once. */
        cr_assert(h_wait_calls(1, 3000));
        h_expect_no_more_callbacks();
        h_assert_each_once(1, PULSARC_ERR_MESSAGE_TOO_BIG);
    } else {
        cr_assert_eq(r, PULSARC_ERR_MESSAGE_TOO_BIG, "got %s", pulsarc_result_name(r));
        h_expect_no_more_callbacks();
        cr_assert_eq(h_total(), 0);
    }
    cr_assert_eq(h_count(mb, MOCK_SENDS), 0);
    cr_assert_eq(h_count(mb, MOCK_PROTOCOL_ERRORS), 0, "an oversized frame reached the broker");
    cr_assert_eq(pulsarc_producer_pending_count(producer), 0);
    h_finish();
}

/* ---- client destroy with pending messages ------------------------------------------------ */

Test(client_api, destroy_with_pending_fails_each_once)
{
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    mock_broker_set_receipt_mode(mb, MOCK_RECEIPTS_HOLD);
    h_send_range(producer, 0, 3);
    cr_assert(h_wait_sends(mb, 3, 3000));
    cr_assert_eq(h_total(), 0);
    cr_assert_eq(pulsarc_client_destroy(client), PULSARC_OK);
    client = NULL;
    pulsarc_producer_free(producer); /* the handle outlives the client */
    producer = NULL;
    h_assert_each_once(3, PULSARC_ERR_ALREADY_CLOSED);
    h_assert_order(3);
    cr_assert(h_wait_count_at_most(mb, MOCK_OPEN_CONNECTIONS, 0, 3000),
              "the client left its connection open");
    h_finish();
}

Test(client_api, destroy_with_unsent_and_batched_messages)
{
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, "batchingEnabled", "true", "batchingMaxPublishDelayMs",
                          "60000", "batchingMaxMessages", "1000", NULL);
    /* Sit in the batch container: nothing reaches the broker before destroy. */
    h_send_range(producer, 0, 5);
    h_settle(mb); /* a batch sent too early would have reached the mock */
    cr_assert_eq(h_count(mb, MOCK_SENDS), 0);
    cr_assert_eq(pulsarc_client_destroy(client), PULSARC_OK);
    client = NULL;
    pulsarc_producer_free(producer);
    producer = NULL;
    h_assert_each_once(5, PULSARC_ERR_ALREADY_CLOSED);
    h_finish();
}

Test(client_api, destroy_while_broker_down)
{
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    cr_assert_eq(mock_broker_set_down(mb, true), 0);
    h_send_range(producer, 0, 2);
    /* Destroy while reconnecting: the producer has seen the connection go and is waiting
     * to retry. */
    cr_assert(h_wait_log("reconnecting in", 3000), "the producer never tried to reconnect");
    cr_assert_eq(pulsarc_client_destroy(client), PULSARC_OK);
    client = NULL;
    pulsarc_producer_free(producer);
    producer = NULL;
    h_assert_each_once(2, PULSARC_ERR_ALREADY_CLOSED);
    h_finish();
}

Test(client_api, free_then_destroy_at_once)
{
    /* pulsarc_producer_free does not wait; destroy right after must cope with the close
     * still in progress. */
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    mock_broker_set_receipt_mode(mb, MOCK_RECEIPTS_HOLD);
    h_send_range(producer, 0, 2);
    cr_assert(h_wait_sends(mb, 2, 3000));
    pulsarc_producer_free(producer);
    producer = NULL;
    cr_assert_eq(pulsarc_client_destroy(client), PULSARC_OK);
    client = NULL;
    h_assert_each_once(2, PULSARC_ERR_ALREADY_CLOSED);
    h_finish();
}

/* ---- callbacks ---------------------------------------------------------------------------- */

static _Atomic int hook_rc = 1000;
static _Atomic int hook_rc2 = 1000;
static _Atomic int hook_rc3 = 1000;
static _Atomic int hook_rc4 = 1000;

static void send_next_from_callback(pulsarc_producer_t *p, int idx, pulsarc_result res)
{
    if (idx == 0)
        atomic_store(&hook_rc, h_send(p, 1));
}

Test(client_api, send_async_from_callback)
{
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    T.hook = send_next_from_callback;
    cr_assert_eq(h_send(producer, 0), PULSARC_OK);
    cr_assert(h_wait_calls(2, 3000), "only %d of 2 callbacks", h_total());
    cr_assert_eq(atomic_load(&hook_rc), PULSARC_OK, "send_async from a callback: %s",
                 pulsarc_result_name(atomic_load(&hook_rc)));
    h_expect_no_more_callbacks();
    h_assert_each_once(2, PULSARC_OK);
    h_assert_order(2);
    cr_assert_eq(h_count(mb, MOCK_SENDS), 2);
    h_finish();
}

static void blocking_calls_from_callback(pulsarc_producer_t *p, int idx, pulsarc_result res)
{
    if (idx != 0)
        return;
    pulsarc_message_t *m = h_message(9, 0);
    atomic_store(&hook_rc, pulsarc_producer_send(p, m, NULL));
    pulsarc_message_free(m);
    atomic_store(&hook_rc2, pulsarc_producer_flush(p));
    pulsarc_producer_t *other = NULL;
    atomic_store(&hook_rc3, pulsarc_client_create_producer(client, H_TOPIC, NULL, &other));
    atomic_store(&hook_rc4, pulsarc_client_destroy(client));
}

Test(client_api, blocking_calls_from_callback_would_block)
{
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    T.hook = blocking_calls_from_callback;
    cr_assert_eq(h_send(producer, 0), PULSARC_OK);
    cr_assert(h_wait_calls(1, 3000));
    /* The hook runs after the callback was recorded; client_destroy is its last call. */
    cr_assert(h_wait_changed(&hook_rc4, 1000, 3000), "the hook never finished");
    cr_assert_eq(atomic_load(&hook_rc), PULSARC_ERR_WOULD_BLOCK, "send: %s",
                 pulsarc_result_name(atomic_load(&hook_rc)));
    cr_assert_eq(atomic_load(&hook_rc2), PULSARC_ERR_WOULD_BLOCK, "flush: %s",
                 pulsarc_result_name(atomic_load(&hook_rc2)));
    cr_assert_eq(atomic_load(&hook_rc3), PULSARC_ERR_WOULD_BLOCK, "create_producer: %s",
                 pulsarc_result_name(atomic_load(&hook_rc3)));
    cr_assert_eq(atomic_load(&hook_rc4), PULSARC_ERR_WOULD_BLOCK, "client_destroy: %s",
                 pulsarc_result_name(atomic_load(&hook_rc4)));
    /* The blocking send from the callback was not accepted. */
    cr_assert_eq(h_count(mb, MOCK_SENDS), 1);
    cr_assert_eq(h_count(mb, MOCK_PRODUCERS), 1);
    /* And the loop is still alive. */
    T.hook = NULL;
    cr_assert_eq(h_send_sync(producer, 1), PULSARC_OK);
    h_finish();
}

/* A blocking close from a callback would block the loop (it fails with WOULD_BLOCK, see
 * test_client_lifecycle.c); close_async is the way to close there. */
static void close_from_callback(pulsarc_producer_t *p, int idx, pulsarc_result res)
{
    if (idx == 0)
        atomic_store(&hook_rc, pulsarc_producer_close_async(p, NULL, NULL));
}

Test(client_api, close_from_callback)
{
    client = h_client("operationTimeoutMs", h_ms_str(3 * h_upper_ms(0)), NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    T.hook = close_from_callback;
    cr_assert_eq(h_send(producer, 0), PULSARC_OK);
    cr_assert(h_wait_calls(1, 3000));
    cr_assert(h_wait_count(mb, MOCK_CLOSE_PRODUCERS, 1, 3000),
              "close from a callback never reached the broker");
    cr_assert_eq(atomic_load(&hook_rc), PULSARC_OK, "close from a callback: %s",
                 pulsarc_result_name(atomic_load(&hook_rc)));
    h_assert_each_once(1, PULSARC_OK);
    cr_assert_eq(h_send(producer, 1), PULSARC_ERR_ALREADY_CLOSED);
    /* A blocking close afterwards returns at once (bound generous, but far below the
     * operationTimeoutMs a close could wait for). */
    uint64_t t0 = h_now_ms();
    cr_assert_eq(pulsarc_producer_close(producer), PULSARC_OK);
    uint64_t took = h_now_ms() - t0;
    cr_assert_lt(took, h_upper_ms(0), "close took %llu ms", (unsigned long long)took);
    h_finish();
}

static void close_with_pending_from_callback(pulsarc_producer_t *p, int idx, pulsarc_result res)
{
    if (idx == 0)
        atomic_store(&hook_rc, pulsarc_producer_close_async(p, NULL, NULL));
}

Test(client_api, close_from_callback_with_more_pending)
{
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    mock_broker_set_receipt_mode(mb, MOCK_RECEIPTS_HOLD);
    T.hook = close_with_pending_from_callback;
    h_send_range(producer, 0, 3);
    cr_assert(h_wait_sends(mb, 3, 3000));
    cr_assert_eq(mock_broker_release_receipts(mb), 3);
    /* Close waits for 1 and 2, which are receipted in the same burst. */
    cr_assert(h_wait_calls(3, 3000), "only %d of 3 callbacks", h_total());
    cr_assert(h_wait_count(mb, MOCK_CLOSE_PRODUCERS, 1, 3000));
    h_expect_no_more_callbacks();
    h_assert_each_once(3, PULSARC_OK);
    cr_assert_eq(h_count(mb, MOCK_CLOSE_PRODUCERS), 1);
    cr_assert_eq(atomic_load(&hook_rc), PULSARC_OK);
    h_finish();
}

static void free_from_callback(pulsarc_producer_t *p, int idx, pulsarc_result res)
{
    if (idx == 0) {
        pulsarc_producer_free(p);
        atomic_store(&hook_rc, 0);
    }
}

Test(client_api, free_from_callback)
{
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    mock_broker_set_receipt_mode(mb, MOCK_RECEIPTS_HOLD);
    T.hook = free_from_callback;
    h_send_range(producer, 0, 2);
    cr_assert(h_wait_sends(mb, 2, 3000));
    producer = NULL; /* the callback frees it */
    cr_assert_eq(mock_broker_release_receipts(mb), 2);
    cr_assert(h_wait_calls(2, 3000), "only %d of 2 callbacks", h_total());
    cr_assert(h_wait_count(mb, MOCK_CLOSE_PRODUCERS, 1, 3000));
    h_expect_no_more_callbacks();
    cr_assert_eq(atomic_load(&hook_rc), 0);
    h_assert_each_once(2, PULSARC_OK);
    h_finish();
}

static atomic_int flush_done = 0;
static _Atomic int flush_res = 1000;

static void on_flushed(pulsarc_producer_t *p, pulsarc_result res, void *ctx)
{
    atomic_store(&flush_res, res);
    atomic_fetch_add(&flush_done, 1);
}

Test(client_api, flush_async_waits_for_receipts)
{
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    mock_broker_set_receipt_mode(mb, MOCK_RECEIPTS_HOLD);
    h_send_range(producer, 0, 3);
    cr_assert_eq(pulsarc_producer_flush_async(producer, on_flushed, NULL), PULSARC_OK);
    cr_assert(h_wait_sends(mb, 3, 3000));
    h_settle(mb); /* a flush completed too early would show */
    cr_assert_eq(atomic_load(&flush_done), 0, "flush completed before the receipts");
    cr_assert_eq(mock_broker_release_receipts(mb), 3);
    cr_assert(h_wait_calls(3, 3000));
    cr_assert(h_wait_changed(&flush_done, 0, 3000), "flush_async never completed");
    h_settle(mb); /* a second completion would have come */
    cr_assert_eq(atomic_load(&flush_done), 1);
    cr_assert_eq(atomic_load(&flush_res), PULSARC_OK);
    h_assert_each_once(3, PULSARC_OK);
    h_finish();
}

static atomic_int destroy_close_done, destroy_flush_done;

static void count_done(pulsarc_producer_t *p, pulsarc_result res, void *ctx)
{
    atomic_fetch_add((atomic_int *)ctx, 1);
}

static void misbehave_during_destroy(pulsarc_producer_t *p, int idx, pulsarc_result res)
{
    if (idx == 0) {
        atomic_store(&hook_rc, h_send(p, 10));
        atomic_store(&hook_rc2, pulsarc_producer_close_async(p, count_done, &destroy_close_done));
    } else if (idx == 1) {
        atomic_store(&hook_rc3, pulsarc_producer_flush_async(p, count_done, &destroy_flush_done));
    } else if (idx == 2) {
        pulsarc_producer_free(p);
    }
}

Test(client_api, callbacks_during_destroy_may_call_the_api)
{
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    mock_broker_set_receipt_mode(mb, MOCK_RECEIPTS_HOLD);
    T.hook = misbehave_during_destroy;
    h_send_range(producer, 0, 3);
    cr_assert(h_wait_sends(mb, 3, 3000));
    cr_assert_eq(pulsarc_client_destroy(client), PULSARC_OK);
    client = NULL;
    producer = NULL; /* the callback of message 2 freed it */
    h_assert_each_once(3, PULSARC_ERR_ALREADY_CLOSED);
    cr_assert_eq(T.calls[10], 0, "a message sent during destroy got a callback");
    cr_assert_eq(atomic_load(&hook_rc), PULSARC_ERR_ALREADY_CLOSED, "send during destroy: %s",
                 pulsarc_result_name(atomic_load(&hook_rc)));
    cr_assert_eq(atomic_load(&hook_rc2), PULSARC_OK, "close_async during destroy: %s",
                 pulsarc_result_name(atomic_load(&hook_rc2)));
    cr_assert_eq(atomic_load(&hook_rc3), PULSARC_OK, "flush_async during destroy: %s",
                 pulsarc_result_name(atomic_load(&hook_rc3)));
    /* Accepted, so each completes once, before destroy returns. */
    cr_assert_eq(atomic_load(&destroy_close_done), 1, "close_async completed %d times",
                 atomic_load(&destroy_close_done));
    cr_assert_eq(atomic_load(&destroy_flush_done), 1, "flush_async completed %d times",
                 atomic_load(&destroy_flush_done));
    h_finish();
}
