/* Deduplication against a mock that drops duplicates the way the broker does: a whole
 * entry whose first sequence id is at or below the highest it stored is dropped, and the
 * receipt says so with ledger and entry -1. Replayed ids must never carry new messages
 * down with them, key-based batches must not interleave ids, and a drop of ids this
 * producer never sent before must be reported, not called success. */
#include "client_harness.h"

TestSuite(client_dedup, .init = h_setup, .fini = h_teardown, .timeout = H_SUITE_TIMEOUT(30));

static void dedup_broker(void)
{
    mock_broker_set_deduplication(mb, true);
    mock_broker_set_last_sequence_id(mb, MOCK_LAST_SEQ_TRACKED);
}

/* send_async message idx with an explicit sequence id (and a key, if given). */
static pulsarc_result send_with(pulsarc_producer_t *p, int idx, int64_t seq, const char *key)
{
    cr_assert_lt(idx, H_MAX_MSGS);
    T.slots[idx].idx = idx;
    pulsarc_message_t *m = h_message(idx, 0);
    if (seq >= 0)
        cr_assert_eq(pulsarc_message_set_sequence_id(m, seq), PULSARC_OK);
    if (key)
        cr_assert_eq(pulsarc_message_set_key(m, key), PULSARC_OK);
    pulsarc_result r = pulsarc_producer_send_async(p, m, h_on_sent, &T.slots[idx]);
    pulsarc_message_free(m);
    return r;
}

/* Indexes of the messages the mock stored, in arrival order, from every persisted SEND
 * (a batch's messages are counted by their number). Returns how many. */
static int stored_messages(void)
{
    int n = 0;
    for (size_t i = 0; i < h_count(mb, MOCK_SENDS); i++) {
        mock_send_t s = h_get_send(mb, i);
        if (s.persisted)
            n += s.num_messages;
        mock_send_free(&s);
    }
    return n;
}

/* A first producer stores ids 0..9; a second one of the same name replays 5..9 and goes on
 * with 10..19, batched. The broker keeps 10..19: they never share a batch with 5..9. */
Test(client_dedup, replayed_ids_never_share_a_batch_with_new_ones)
{
    dedup_broker();
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, "producerName", "app-1", "batchingEnabled", "true",
                          "batchingMaxPublishDelayMs", "50", NULL);
    for (int i = 0; i < 10; i++)
        cr_assert_eq(send_with(producer, i, i, NULL), PULSARC_OK);
    cr_assert(h_wait_calls(10, 5000));
    h_assert_each_once(10, PULSARC_OK);
    pulsarc_producer_free(producer);
    producer = NULL;
    h_reset_tracker();

    producer = h_producer(client, H_TOPIC, "producerName", "app-1", "batchingEnabled", "true",
                          "batchingMaxPublishDelayMs", "50", NULL);
    cr_assert_eq(pulsarc_producer_last_sequence_id(producer), 9);
    for (int i = 0; i < 15; i++)
        cr_assert_eq(send_with(producer, i, 5 + i, NULL), PULSARC_OK);
    cr_assert(h_wait_calls(15, 5000), "only %d of 15 callbacks", h_total());
    h_expect_no_more_callbacks();
    h_assert_each_once(15, PULSARC_OK);
    for (int i = 0; i < 5; i++)
        cr_assert(T.ledger[i] == -1 && T.entry[i] == -1,
                  "replayed id %d: a duplicate's id is -1:-1, got %lld:%lld", 5 + i,
                  (long long)T.ledger[i], (long long)T.entry[i]);
    for (int i = 5; i < 15; i++)
        cr_assert_geq(T.ledger[i], 0, "new id %d was not stored", 5 + i);
    cr_assert_eq(stored_messages(), 20, "the mock stored %d of 20 distinct ids", stored_messages());
    cr_assert_eq(pulsarc_producer_last_sequence_id(producer), 19);
    h_finish();
}

/* Explicit ids that go down inside what would be one batch: no SEND may claim a highest
 * id below its first id, and nothing new is lost. */
Test(client_dedup, decreasing_explicit_ids_keep_highest_at_or_above_first)
{
    dedup_broker();
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, "producerName", "app-2", "batchingEnabled", "true",
                          "batchingMaxPublishDelayMs", "50", NULL);
    const int64_t ids[] = { 10, 11, 7, 8, 12, 3, 13 };
    int n = (int)(sizeof ids / sizeof ids[0]);
    for (int i = 0; i < n; i++)
        cr_assert_eq(send_with(producer, i, ids[i], NULL), PULSARC_OK);
    cr_assert(h_wait_calls(n, 5000));
    h_expect_no_more_callbacks();
    h_assert_each_once(n, PULSARC_OK);
    for (size_t i = 0; i < h_count(mb, MOCK_SENDS); i++) {
        mock_send_t s = h_get_send(mb, i);
        if (s.has_highest_sequence_id)
            cr_assert_geq(s.highest_sequence_id, s.sequence_id, "SEND %zu: %llu..%llu", i,
                          (unsigned long long)s.sequence_id,
                          (unsigned long long)s.highest_sequence_id);
        mock_send_free(&s);
    }
    /* 10, 11, 12, 13 are new and stored; 7, 8 and 3 are replays of nothing stored: a
     * deduplicating broker drops them, and -1:-1 says so. */
    cr_assert_eq(stored_messages(), 4, "stored %d", stored_messages());
    cr_assert_geq(T.ledger[4], 0, "id 12 (after the replays 7, 8) was not stored");
    cr_assert_geq(T.ledger[6], 0, "id 13 (after the replay 3) was not stored");
    h_finish();
}

/* Key-based batching interleaves keys: its automatic ids are given at flush, so every
 * batch's ids are above the previous batch's and the broker keeps every batch. */
Test(client_dedup, key_based_batches_all_stored)
{
    dedup_broker();
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, "producerName", "app-3", "batchingEnabled", "true",
                          "batcherType", "key_based", "batchingMaxPublishDelayMs", "50", NULL);
    static const char *const keys[] = { "a", "b", "c", "d" };
    int n = 200;
    for (int i = 0; i < n; i++)
        cr_assert_eq(send_with(producer, i, -1, keys[i % 4]), PULSARC_OK);
    cr_assert(h_wait_calls(n, 5000), "only %d of %d callbacks", h_total(), n);
    h_expect_no_more_callbacks();
    h_assert_each_once(n, PULSARC_OK);
    for (int i = 0; i < n; i++)
        cr_assert_geq(T.ledger[i], 0, "message %d was dropped as a duplicate", i);
    cr_assert_eq(stored_messages(), n);
    uint64_t prev_high = 0;
    for (size_t i = 0; i < h_count(mb, MOCK_SENDS); i++) {
        mock_send_t s = h_get_send(mb, i);
        cr_assert(i == 0 || s.sequence_id > prev_high, "batch %zu starts at %llu after %llu", i,
                  (unsigned long long)s.sequence_id, (unsigned long long)prev_high);
        prev_high = s.has_highest_sequence_id ? s.highest_sequence_id : s.sequence_id;
        mock_send_free(&s);
    }
    cr_assert_eq(pulsarc_producer_last_sequence_id(producer), n - 1);
    h_finish();
}

Test(client_dedup, explicit_ids_with_key_based_batching_are_refused_at_send)
{
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, "batchingEnabled", "true", "batcherType", "key_based",
                          NULL);
    cr_assert_eq(send_with(producer, 0, 5, "k"), PULSARC_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pulsarc_last_error_detail(), "key-based"), "detail: %s",
              pulsarc_last_error_detail());
    cr_assert_eq(send_with(producer, 1, -1, "k"), PULSARC_OK);
    cr_assert(h_wait_calls(1, 5000));
    cr_assert_eq(T.calls[0], 0, "a refused message got a callback");
    cr_assert_eq(T.res[1], PULSARC_OK);
    h_finish();
}

/* The broker claims to hold nothing (last id -1) yet drops new ids as duplicates: those
 * messages were not stored, and their callbacks must say so. */
Test(client_dedup, drop_of_ids_never_sent_is_reported)
{
    dedup_broker();
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, "producerName", "app-4", NULL);
    h_send_range(producer, 0, 3); /* the broker now holds ids 0..2 */
    cr_assert(h_wait_calls(3, 5000));
    h_assert_each_once(3, PULSARC_OK);
    pulsarc_producer_free(producer);
    producer = NULL;
    h_reset_tracker();

    mock_broker_set_last_sequence_id(mb, -1);
    producer = h_producer(client, H_TOPIC, "producerName", "app-4", NULL);
    h_send_range(producer, 0, 5); /* automatic ids 0..4 */
    cr_assert(h_wait_calls(5, 5000), "only %d of 5 callbacks", h_total());
    h_expect_no_more_callbacks();
    for (int i = 0; i < 3; i++) {
        cr_assert_eq(T.calls[i], 1);
        cr_assert_eq(T.res[i], PULSARC_ERR_DUPLICATE_DROPPED, "message %d: %s", i,
                     pulsarc_result_name(T.res[i]));
        cr_assert(strstr(T.detail[i], "duplicate"), "detail: %s", T.detail[i]);
    }
    for (int i = 3; i < 5; i++) {
        cr_assert_eq(T.calls[i], 1);
        cr_assert_eq(T.res[i], PULSARC_OK, "message %d: %s", i, pulsarc_result_name(T.res[i]));
    }
    cr_assert_eq(T.id_on_failure, false);
    h_finish();
}

/* Resends after a lost connection are duplicates the broker may well hold: success. */
Test(client_dedup, resent_ops_dropped_as_duplicates_succeed)
{
    dedup_broker();
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, "producerName", "app-5", NULL);
    h_pending_unanswered(4);
    mock_broker_cut_now(mb);
    cr_assert(h_wait_calls(4, 5000), "only %d of 4 callbacks", h_total());
    h_expect_no_more_callbacks();
    h_assert_each_once(4, PULSARC_OK);
    h_assert_order(4);
    cr_assert_eq(stored_messages(), 4);
    h_finish();
}

/* The broker acknowledges a duplicate at once, ahead of entries still being stored (a
 * rerun that feeds ids again after a restart sends such replays behind new messages):
 * the duplicate's early receipt completes it in its turn, after the older message, with
 * no reconnect ("receipts out of order" closed the connection each time). */
Test(client_dedup, a_duplicate_answered_ahead_of_older_entries_waits_its_turn)
{
    dedup_broker();
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, "producerName", "app-6", NULL);
    cr_assert_eq(send_with(producer, 0, 10, NULL), PULSARC_OK);
    cr_assert(h_wait_calls(1, 3000));
    mock_broker_set_receipt_mode(mb, MOCK_RECEIPTS_HOLD);
    cr_assert_eq(send_with(producer, 1, 11, NULL), PULSARC_OK); /* new: being stored */
    cr_assert_eq(send_with(producer, 2, 7, NULL), PULSARC_OK);  /* a replay: answered at once */
    cr_assert(h_wait_sends(mb, 3, 3000));
    h_settle(mb);
    cr_assert_eq(T.calls[2], 0, "the duplicate completed before the older message");
    cr_assert_eq(h_count(mb, MOCK_CONNECTS), 1, "the client reconnected");
    cr_assert_eq(mock_broker_release_receipts(mb), 1);
    cr_assert(h_wait_calls(3, 3000), "only %d of 3 callbacks", h_total());
    h_expect_no_more_callbacks();
    h_assert_each_once(3, PULSARC_OK);
    h_assert_order(3);
    cr_assert_eq(T.ledger[2], -1, "the replay is reported as stored earlier");
    cr_assert_geq(T.ledger[1], 0);
    cr_assert_eq(h_count(mb, MOCK_CONNECTS), 1, "the client reconnected");
    cr_assert_eq(pulsarc_producer_last_sequence_id(producer), 11);
    h_finish();
}
