/* The client against the mock broker: receipts held, reordered, suppressed or replaced by
 * SEND_ERROR, and the broker closing the producer. Every accepted message must end with
 * exactly one callback. */
#include "client_harness.h"

TestSuite(client_receipts, .init = h_setup, .fini = h_teardown, .timeout = H_SUITE_TIMEOUT(30));

Test(client_receipts, held_then_released_in_order)
{
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    mock_broker_set_receipt_mode(mb, MOCK_RECEIPTS_HOLD);
    h_send_range(producer, 0, 5);
    cr_assert(h_wait_sends(mb, 5, 3000));
    h_expect_no_more_callbacks();
    cr_assert_eq(h_total(), 0, "a callback before its receipt");
    cr_assert_eq(pulsarc_producer_pending_count(producer), 5);
    cr_assert_eq(mock_broker_count(mb, MOCK_HELD_RECEIPTS), 5);

    cr_assert_eq(mock_broker_release_receipts(mb), 5);
    cr_assert(h_wait_calls(5, 3000), "only %d of 5 callbacks", h_total());
    h_assert_each_once(5, PULSARC_OK);
    h_assert_order(5);
    for (int i = 0; i < 5; i++) {
        cr_assert_eq(T.ledger[i], 1);
        cr_assert_eq(T.entry[i], i, "message %d got entry %lld", i, (long long)T.entry[i]);
    }
    cr_assert_eq(pulsarc_producer_pending_count(producer), 0);
    cr_assert_eq(pulsarc_producer_last_sequence_id(producer), 4);
    cr_assert_eq(h_count(mb, MOCK_CONNECTS), 1, "no reconnect was needed");
    h_finish();
}

Test(client_receipts, reordered_receipts_reconnect_and_resend)
{
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    mock_broker_set_receipt_mode(mb, MOCK_RECEIPTS_REORDER);
    h_send_range(producer, 0, 4);
    /* The receipt for 1 comes before the one for 0: the client must not complete 1 ahead
     * of 0, and must not complete 0 by 1's receipt. It reconnects to resend. */
    cr_assert(h_wait_count(mb, MOCK_CONNECTS, 2, 5000),
              "the client did not act on out-of-order receipts");
    mock_broker_set_receipt_mode(mb, MOCK_RECEIPTS_NORMAL);
    cr_assert(h_wait_calls(4, 5000), "only %d of 4 callbacks", h_total());
    h_expect_no_more_callbacks();
    h_assert_each_once(4, PULSARC_OK);
    h_assert_order(4);
    cr_assert_eq(pulsarc_producer_pending_count(producer), 0);
    cr_assert(h_log_contains("out of order"), "the client's log does not mention the reorder");

    /* The broker saw the first ones twice: resent with the same sequence ids. */
    size_t n = (size_t)h_count(mb, MOCK_SENDS);
    cr_assert_gt(n, 4);
    size_t dups = 0;
    for (size_t i = 0; i < n; i++) {
        mock_send_t s = h_get_send(mb, i);
        cr_assert_eq(s.sequence_id, (uint64_t)h_send_index(&s));
        dups += s.duplicate;
        mock_send_free(&s);
    }
    cr_assert_geq(dups, 2, "%zu duplicate SENDs", dups);
    h_assert_seq_in_order_per_connection(mb);
    /* The client's message ids are those of the receipts it matched (one per message). */
    for (int i = 1; i < 4; i++)
        cr_assert_neq(T.entry[i], T.entry[i - 1]);
    h_finish();
}

Test(client_receipts, suppressed_receipts_time_out_once)
{
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, "sendTimeoutMs", "500", NULL);
    mock_broker_set_receipt_mode(mb, MOCK_RECEIPTS_SUPPRESS);
    uint64_t t0 = h_now_ms();
    h_send_range(producer, 0, 3);
    cr_assert(h_wait_sends(mb, 3, 3000));
    cr_assert(h_wait_calls(3, 3000), "only %d of 3 callbacks", h_total());
    uint64_t elapsed = h_now_ms() - t0;
    /* Not before sendTimeoutMs after the sends (t0 before them; less some rounding). */
    cr_assert_geq(elapsed, 500 - 10, "timed out after %llu ms", (unsigned long long)elapsed);
    /* Nominal: the timeout plus one check (every sendTimeoutMs / 10). */
    cr_assert_lt(elapsed, h_upper_ms(550), "timed out after %llu ms", (unsigned long long)elapsed);
    h_let_time_pass(300); /* a second callback (or a resend's) would come now */
    h_assert_each_once(3, PULSARC_ERR_SEND_TIMEOUT);
    h_assert_order(3);
    cr_assert_neq(T.detail[0][0], '\0', "no detail in the failing callback");
    cr_assert_eq(pulsarc_producer_pending_count(producer), 0);

    /* The producer still works, with new sequence ids. */
    mock_broker_set_receipt_mode(mb, MOCK_RECEIPTS_NORMAL);
    cr_assert_eq(h_send(producer, 3), PULSARC_OK);
    cr_assert(h_wait_calls(4, 3000));
    cr_assert_eq(T.res[3], PULSARC_OK, "got %s", pulsarc_result_name(T.res[3]));
    mock_send_t s = h_get_send(mb, 3);
    cr_assert_eq(s.sequence_id, 3, "a timed-out sequence id was reused");
    mock_send_free(&s);
    h_finish();
}

Test(client_receipts, late_receipts_after_timeout_are_ignored)
{
    client = h_client(NULL);
    /* Message 2 must get its receipt within the send timeout: scaled for slow builds. */
    producer = h_producer(client, H_TOPIC, "sendTimeoutMs", h_ms_str(h_scaled_ms(300)), NULL);
    mock_broker_set_receipt_mode(mb, MOCK_RECEIPTS_HOLD);
    h_send_range(producer, 0, 2);
    cr_assert(h_wait_calls(2, 3000));
    h_assert_each_once(2, PULSARC_ERR_SEND_TIMEOUT);
    h_send_range(producer, 2, 3);
    cr_assert(h_wait_sends(mb, 3, 3000));
    /* Receipts for 0 and 1 arrive late, then the one for 2. */
    cr_assert_eq(mock_broker_release_receipts(mb), 3);
    cr_assert(h_wait_calls(3, 3000));
    h_expect_no_more_callbacks();
    cr_assert_eq(h_total(), 3);
    cr_assert_eq(T.calls[2], 1);
    cr_assert_eq(T.res[2], PULSARC_OK, "got %s", pulsarc_result_name(T.res[2]));
    cr_assert_eq(T.entry[2], 2, "message 2 was completed by another message's receipt");
    cr_assert_eq(h_count(mb, MOCK_CONNECTS), 1, "late receipts are not a reason to reconnect");
    h_finish();
}

Test(client_receipts, flush_reports_the_send_timeout)
{
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, "sendTimeoutMs", "300", NULL);
    mock_broker_set_receipt_mode(mb, MOCK_RECEIPTS_SUPPRESS);
    h_send_range(producer, 0, 2);
    pulsarc_result r = pulsarc_producer_flush(producer);
    cr_assert_eq(r, PULSARC_ERR_SEND_TIMEOUT, "flush returned %s", pulsarc_result_name(r));
    h_assert_each_once(2, PULSARC_ERR_SEND_TIMEOUT);
    /* A flush with nothing pending succeeds. */
    cr_assert_eq(pulsarc_producer_flush(producer), PULSARC_OK);
    h_finish();
}

Test(client_receipts, send_error_once_is_resent)
{
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    mock_broker_fail_sends(mb, PULSAR__PROTO__SERVER_ERROR__PersistenceError, 1);
    cr_assert_eq(h_send(producer, 0), PULSARC_OK);
    cr_assert(h_wait_calls(1, 5000), "the message never completed");
    h_expect_no_more_callbacks();
    h_assert_each_once(1, PULSARC_OK);
    cr_assert_eq(h_count(mb, MOCK_SEND_ERRORS), 1);
    cr_assert_eq(h_count(mb, MOCK_SENDS), 2);
    mock_send_t a = h_get_send(mb, 0), b = h_get_send(mb, 1);
    cr_assert_not(a.persisted);
    cr_assert(b.persisted);
    cr_assert_eq(a.sequence_id, b.sequence_id);
    cr_assert_neq(a.connection, b.connection, "resent without reconnecting");
    mock_send_free(&a);
    mock_send_free(&b);
    cr_assert_eq(h_count(mb, MOCK_CONNECTS), 2);
    cr_assert_eq(h_send_sync(producer, 1), PULSARC_OK);
    h_finish();
}

Test(client_receipts, send_error_with_several_pending)
{
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    mock_broker_set_receipt_mode(mb, MOCK_RECEIPTS_HOLD);
    h_send_range(producer, 0, 2);
    cr_assert(h_wait_sends(mb, 2, 3000));
    /* The third is refused while the first two wait for receipts. */
    mock_broker_fail_sends(mb, PULSAR__PROTO__SERVER_ERROR__PersistenceError, 1);
    mock_broker_set_receipt_mode(mb, MOCK_RECEIPTS_NORMAL);
    h_send_range(producer, 2, 3);
    cr_assert(h_wait_calls(3, 5000), "only %d of 3 callbacks", h_total());
    h_expect_no_more_callbacks();
    h_assert_each_once(3, PULSARC_OK);
    h_assert_order(3);
    cr_assert_eq(h_count(mb, MOCK_SEND_ERRORS), 1);
    h_assert_seq_in_order_per_connection(mb);
    /* Held receipts of the closed connection are gone. */
    cr_assert_eq(mock_broker_release_receipts(mb), 0);
    h_finish();
}

Test(client_receipts, broker_closes_producer_then_reregistered)
{
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    mock_producer_info_t first, second;
    cr_assert(mock_broker_last_producer(mb, &first));
    cr_assert_eq(h_send_sync(producer, 0), PULSARC_OK);

    cr_assert_eq(mock_broker_close_producer(mb, first.producer_id), 1);
    cr_assert(h_wait_count(mb, MOCK_PRODUCERS, 2, 5000), "the producer never came back");
    cr_assert(mock_broker_last_producer(mb, &second));
    cr_assert_eq(second.producer_id, first.producer_id);
    cr_assert(second.has_epoch && first.has_epoch);
    cr_assert_gt(second.epoch, first.epoch, "epoch %llu after %llu",
                 (unsigned long long)second.epoch, (unsigned long long)first.epoch);
    /* It keeps the name the broker gave it, so deduplication carries over. */
    cr_assert(second.has_producer_name);
    cr_assert_str_eq(second.producer_name, "mock-0");
    cr_assert_eq(h_count(mb, MOCK_CONNECTS), 1, "the connection itself was fine");

    cr_assert_eq(h_send_sync(producer, 1), PULSARC_OK);
    cr_assert_eq(h_count(mb, MOCK_SENDS), 2);
    mock_send_t s = h_get_send(mb, 1);
    cr_assert_eq(s.sequence_id, 1);
    cr_assert_str_eq(s.producer_name, "mock-0");
    mock_send_free(&s);
    cr_assert_eq(h_count(mb, MOCK_PROTOCOL_ERRORS), 0,
                 "a SEND reached the broker for a closed producer");
    h_finish();
}

Test(client_receipts, broker_closes_producer_with_pending_messages)
{
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    mock_producer_info_t info;
    cr_assert(mock_broker_last_producer(mb, &info));
    mock_broker_set_receipt_mode(mb, MOCK_RECEIPTS_SUPPRESS);
    h_send_range(producer, 0, 3);
    cr_assert(h_wait_sends(mb, 3, 3000));
    mock_broker_set_receipt_mode(mb, MOCK_RECEIPTS_NORMAL);
    cr_assert_eq(mock_broker_close_producer(mb, info.producer_id), 1);
    cr_assert(h_wait_calls(3, 5000), "only %d of 3 callbacks", h_total());
    h_expect_no_more_callbacks();
    h_assert_each_once(3, PULSARC_OK);
    h_assert_order(3);
    cr_assert_eq(h_count(mb, MOCK_PRODUCERS), 2);
    cr_assert_eq(h_count(mb, MOCK_SENDS), 6, "the three pending messages were not resent");
    for (size_t i = 3; i < 6; i++) {
        mock_send_t s = h_get_send(mb, i);
        cr_assert_eq(s.sequence_id, i - 3);
        cr_assert(s.duplicate);
        mock_send_free(&s);
    }
    cr_assert_eq(h_count(mb, MOCK_PROTOCOL_ERRORS), 0);
    h_finish();
}

Test(client_receipts, receipt_delay_below_send_timeout_is_fine)
{
    client = h_client(NULL);
    /* The delay stays well below the timeout, also on a slow build. */
    producer = h_producer(client, H_TOPIC, "sendTimeoutMs", h_ms_str(h_scaled_ms(1000)), NULL);
    mock_broker_set_receipt_delay(mb, 300);
    h_send_range(producer, 0, 5);
    cr_assert(h_wait_calls(5, 5000));
    h_assert_each_once(5, PULSARC_OK);
    h_assert_order(5);
    h_finish();
}

/* ---- with batching -------------------------------------------------------------------- */

Test(client_receipts, batches_survive_a_cut)
{
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, "batchingEnabled", "true", "batchingMaxMessages", "10",
                          "batchingMaxPublishDelayMs", "5", NULL);
    mock_broker_set_receipt_delay(mb, 20);
    h_send_range(producer, 0, 100);
    cr_assert(h_wait_sends(mb, 3, 5000));
    mock_broker_cut_now(mb);
    cr_assert(h_wait_calls(100, 15000), "only %d of 100 callbacks", h_total());
    h_expect_no_more_callbacks();
    h_assert_each_once(100, PULSARC_OK);
    h_assert_order(100);
    cr_assert_eq(pulsarc_producer_pending_count(producer), 0);
    h_assert_seq_in_order_per_connection(mb);
    /* Batches: fewer SENDs than messages, each carrying up to 10. */
    size_t n = (size_t)h_count(mb, MOCK_SENDS);
    for (size_t i = 0; i < n; i++) {
        mock_send_t s = h_get_send(mb, i);
        cr_assert(s.num_messages >= 1 && s.num_messages <= 10, "SEND %zu: %d messages", i,
                  s.num_messages);
        mock_send_free(&s);
    }
    cr_assert_eq(pulsarc_producer_last_sequence_id(producer), 99);
    h_finish();
}

Test(client_receipts, batches_time_out_once_per_message)
{
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, "batchingEnabled", "true", "sendTimeoutMs", "400", NULL);
    mock_broker_set_receipt_mode(mb, MOCK_RECEIPTS_SUPPRESS);
    h_send_range(producer, 0, 20);
    cr_assert(h_wait_calls(20, 3000), "only %d of 20 callbacks", h_total());
    h_let_time_pass(200); /* a second callback (or a resend's) would come now */
    h_assert_each_once(20, PULSARC_ERR_SEND_TIMEOUT);
    cr_assert_eq(pulsarc_producer_pending_count(producer), 0);
    cr_assert_lt(h_count(mb, MOCK_SENDS), 20, "messages were not batched");
    h_finish();
}

Test(client_receipts, batches_reordered_receipts_reconnect_and_resend)
{
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, "batchingEnabled", "true", "batchingMaxMessages", "5",
                          "batchingMaxPublishDelayMs", "1000", NULL);
    mock_broker_set_receipt_mode(mb, MOCK_RECEIPTS_REORDER);
    h_send_range(producer, 0, 20); /* 4 full batches */
    cr_assert(h_wait_count(mb, MOCK_CONNECTS, 2, 5000),
              "the client did not act on out-of-order batch receipts");
    mock_broker_set_receipt_mode(mb, MOCK_RECEIPTS_NORMAL);
    cr_assert(h_wait_calls(20, 5000), "only %d of 20 callbacks", h_total());
    h_expect_no_more_callbacks();
    h_assert_each_once(20, PULSARC_OK);
    h_assert_order(20);
    h_assert_seq_in_order_per_connection(mb);
    mock_send_t s = h_get_send(mb, 0);
    cr_assert_eq(s.num_messages, 5);
    cr_assert(s.has_highest_sequence_id);
    cr_assert_eq(s.highest_sequence_id, s.sequence_id + 4);
    mock_send_free(&s);
    h_finish();
}

/* A batch the broker refuses (NotAllowed: above the topic's maxMessageSize, say) fails
 * its messages at once: the SEND_ERROR names the batch by its highest sequence id, as the
 * broker does, not by the first. With no send timeout they would otherwise wait for
 * ever. */
Test(client_receipts, refused_batch_fails_its_messages)
{
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, "batchingEnabled", "true", "batchingMaxMessages", "5",
                          "batchingMaxPublishDelayMs", "1000", "sendTimeoutMs", "0", NULL);
    mock_broker_fail_sends(mb, PULSAR__PROTO__SERVER_ERROR__NotAllowedError, 1);
    h_send_range(producer, 0, 5);
    cr_assert(h_wait_calls(5, 5000), "only %d of 5 callbacks", h_total());
    h_assert_each_once(5, PULSARC_ERR_BROKER_NOT_ALLOWED);
    cr_assert_eq(h_count(mb, MOCK_SENDS), 1, "a refused batch was resent");
    mock_send_t s = h_get_send(mb, 0);
    cr_assert_eq(s.highest_sequence_id, s.sequence_id + 4, "not one batch of five");
    mock_send_free(&s);
    /* The producer goes on: the next batch is stored. */
    h_send_range(producer, 5, 10);
    cr_assert(h_wait_calls(10, 5000), "only %d of 10 callbacks", h_total());
    h_expect_no_more_callbacks();
    for (int i = 5; i < 10; i++)
        cr_assert_eq(T.res[i], PULSARC_OK, "message %d: %s", i, pulsarc_result_name(T.res[i]));
    cr_assert_eq(h_count(mb, MOCK_CONNECTIONS), 1, "the connection was closed");
    h_finish();
}

/* The broker refuses an entry before it stores anything, so its SEND_ERROR can overtake
 * the receipts of entries sent before it: the refused one fails at once, the older one
 * still completes with its receipt. */
Test(client_receipts, refusal_overtaking_older_receipts_fails_only_that_entry)
{
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, "sendTimeoutMs", "0", NULL);
    mock_broker_set_receipt_mode(mb, MOCK_RECEIPTS_HOLD);
    cr_assert_eq(h_send(producer, 0), PULSARC_OK);
    cr_assert(h_wait_sends(mb, 1, 3000));
    mock_broker_fail_sends(mb, PULSAR__PROTO__SERVER_ERROR__NotAllowedError, 1);
    cr_assert_eq(h_send(producer, 1), PULSARC_OK);
    cr_assert(h_wait_calls(1, 5000), "the refused message did not fail");
    cr_assert_eq(T.calls[0], 0, "the older message completed before its receipt");
    cr_assert_eq(T.res[1], PULSARC_ERR_BROKER_NOT_ALLOWED, "got %s", pulsarc_result_name(T.res[1]));
    cr_assert_eq(mock_broker_release_receipts(mb), 1);
    cr_assert(h_wait_calls(2, 5000), "only %d of 2 callbacks", h_total());
    mock_broker_set_receipt_mode(mb, MOCK_RECEIPTS_NORMAL);
    cr_assert_eq(h_send(producer, 2), PULSARC_OK);
    cr_assert(h_wait_calls(3, 5000), "only %d of 3 callbacks", h_total());
    h_expect_no_more_callbacks();
    cr_assert_eq(T.res[0], PULSARC_OK);
    cr_assert_eq(T.res[2], PULSARC_OK);
    cr_assert_eq(h_count(mb, MOCK_CONNECTIONS), 1, "the connection was closed");
    h_finish();
}

Test(client_receipts, batch_send_error_resends_the_batch)
{
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, "batchingEnabled", "true", "batchingMaxMessages", "5",
                          "batchingMaxPublishDelayMs", "1000", NULL);
    mock_broker_fail_sends(mb, PULSAR__PROTO__SERVER_ERROR__PersistenceError, 1);
    h_send_range(producer, 0, 5);
    cr_assert(h_wait_calls(5, 5000), "only %d of 5 callbacks", h_total());
    h_expect_no_more_callbacks();
    h_assert_each_once(5, PULSARC_OK);
    cr_assert_eq(h_count(mb, MOCK_SENDS), 2);
    mock_send_t a = h_get_send(mb, 0), b = h_get_send(mb, 1);
    cr_assert_eq(a.num_messages, 5);
    cr_assert_eq(b.num_messages, 5);
    cr_assert_eq(a.sequence_id, b.sequence_id);
    cr_assert_eq(a.payload_len, b.payload_len);
    cr_assert_arr_eq(a.payload, b.payload, a.payload_len, "the resent batch differs");
    mock_send_free(&a);
    mock_send_free(&b);
    for (int i = 0; i < 5; i++)
        cr_assert_eq(T.entry[i], T.entry[0], "messages of one batch share the entry");
    h_finish();
}

/* ---- many producers on one connection ------------------------------------------------ */

/* 30 producers take turns, so each batch of 150 collects its messages among 4,500: spread
 * that far, a batch keeps its messages' addresses and fetches their records ahead of its
 * walks (producer/records.h). Whatever those hints, every message ends once, in its
 * producer's order, with ids that grow, also across a cut and its resends; and batches
 * still open when the client is destroyed end once too. */
#define MANY_TOPICS 30
#define MANY_BATCH 150 /* batchingMaxMessages below */
#define MANY_EACH (4 * MANY_BATCH)
#define MANY_OPEN 40 /* per producer, left in open batches for the destroy */

static struct {
    atomic_int calls[MANY_TOPICS][MANY_EACH + MANY_OPEN];
    atomic_int done, ok, out_of_order;
    int next[MANY_TOPICS]; /* loop thread: the next message expected from each producer */
    int64_t last[MANY_TOPICS][3];
} many;

static void many_sent(pulsarc_producer_t *p, pulsarc_result res, const pulsarc_message_id_t *id,
                      void *ctx)
{
    (void)p;
    int t = (int)((uintptr_t)ctx >> 16), i = (int)((uintptr_t)ctx & 0xffff);
    atomic_fetch_add(&many.calls[t][i], 1);
    if (i != many.next[t])
        atomic_fetch_add(&many.out_of_order, 1);
    many.next[t] = i + 1;
    if (res == PULSARC_OK) {
        int64_t now[3] = { pulsarc_message_id_ledger(id), pulsarc_message_id_entry(id),
                           pulsarc_message_id_batch_index(id) };
        bool grew = now[0] > many.last[t][0] ||
                    (now[0] == many.last[t][0] &&
                     (now[1] > many.last[t][1] ||
                      (now[1] == many.last[t][1] && now[2] > many.last[t][2])));
        if (i > 0 && !grew)
            atomic_fetch_add(&many.out_of_order, 1);
        memcpy(many.last[t], now, sizeof now);
        atomic_fetch_add(&many.ok, 1);
    }
    atomic_fetch_add(&many.done, 1);
}

static bool many_done(void *want)
{
    return atomic_load(&many.done) >= *(int *)want;
}

static void many_send(pulsarc_producer_t *p, int t, int i)
{
    pulsarc_message_t *m = h_message(i, 100);
    pulsarc_result r = pulsarc_producer_send_async(p, m, many_sent,
                                                   (void *)(((uintptr_t)t << 16) | (uintptr_t)i));
    pulsarc_message_free(m);
    cr_assert_eq(r, PULSARC_OK, "send %d/%d: %s", t, i, pulsarc_last_error_detail());
}

Test(client_receipts, many_producers_batches_end_once_in_order_across_a_cut_and_a_destroy)
{
    client = h_client(NULL);
    pulsarc_producer_t *ps[MANY_TOPICS];
    for (int t = 0; t < MANY_TOPICS; t++) {
        char topic[96];
        snprintf(topic, sizeof topic, "%s-%d", H_TOPIC, t);
        ps[t] = h_producer(client, topic, "batchingEnabled", "true", "batchingMaxMessages", "150",
                           "batchingMaxPublishDelayMs", "60000", "maxPendingMessages", "100000",
                           NULL);
    }
    mock_broker_set_receipt_delay(mb, 5);
    for (int i = 0; i < MANY_EACH / 2; i++)
        for (int t = 0; t < MANY_TOPICS; t++)
            many_send(ps[t], t, i);
    cr_assert(h_wait_sends(mb, MANY_TOPICS, 5000));
    mock_broker_cut_now(mb); /* batches in flight, some keeping their order, are resent */
    for (int i = MANY_EACH / 2; i < MANY_EACH; i++)
        for (int t = 0; t < MANY_TOPICS; t++)
            many_send(ps[t], t, i);
    int all = MANY_TOPICS * MANY_EACH;
    cr_assert(h_wait_until(many_done, &all, 20000), "%d of %d callbacks", atomic_load(&many.done),
              all);
    cr_assert_eq(atomic_load(&many.ok), all);
    cr_assert_eq(atomic_load(&many.out_of_order), 0);

    /* Open batches, kept in order (their producers' last batches were spread), end with
     * the client. */
    for (int i = MANY_EACH; i < MANY_EACH + MANY_OPEN; i++)
        for (int t = 0; t < MANY_TOPICS; t++)
            many_send(ps[t], t, i);
    for (int t = 0; t < MANY_TOPICS; t++)
        pulsarc_producer_free(ps[t]);
    pulsarc_client_destroy(client);
    client = NULL;
    all = MANY_TOPICS * (MANY_EACH + MANY_OPEN);
    cr_assert_eq(atomic_load(&many.done), all, "every message ends by the destroy's return");
    cr_assert_eq(atomic_load(&many.out_of_order), 0);
    for (int t = 0; t < MANY_TOPICS; t++)
        for (int i = 0; i < MANY_EACH + MANY_OPEN; i++)
            cr_assert_eq(atomic_load(&many.calls[t][i]), 1, "message %d/%d: %d callbacks", t, i,
                         atomic_load(&many.calls[t][i]));
    h_finish();
}
