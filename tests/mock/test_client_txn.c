/* Transactions against the mock broker's transaction coordinator: a coordinator that moves,
 * the registration of each partition before its first send, batches that never mix
 * transactions, and a commit that waits for its sends and fails when one of them failed
 * (a broker error, a send timeout, a transaction the broker timed out). */
#include "client_harness.h"

TestSuite(client_txn, .init = h_setup, .fini = h_teardown, .timeout = H_SUITE_TIMEOUT(40));

#define TXN_TTL_MS 60000
#define OTHER_TOPIC "persistent://public/default/faults-other"

static pulsarc_client_t *txn_client(void)
{
    mock_broker_set_txn_coordinators(mb, 1);
    return h_client("enableTransaction", "true", NULL);
}

static pulsarc_txn_t *begin(void)
{
    pulsarc_txn_t *txn = NULL;
    pulsarc_result r = pulsarc_txn_begin(client, TXN_TTL_MS, &txn);
    cr_assert_eq(r, PULSARC_OK, "begin: %s (%s)", pulsarc_result_name(r),
                 pulsarc_last_error_detail());
    cr_assert_not_null(txn);
    return txn;
}

/* send_txn_async message idx with the tracking callback; returns the call's result. */
static pulsarc_result send_in(pulsarc_producer_t *p, pulsarc_txn_t *txn, int idx)
{
    cr_assert_lt(idx, H_MAX_MSGS);
    T.slots[idx].idx = idx;
    pulsarc_message_t *m = h_message(idx, 0);
    pulsarc_result r = pulsarc_producer_send_txn_async(p, txn, m, h_on_sent, &T.slots[idx]);
    pulsarc_message_free(m);
    return r;
}

static void send_in_ok(pulsarc_producer_t *p, pulsarc_txn_t *txn, int idx)
{
    pulsarc_result r = send_in(p, txn, idx);
    cr_assert_eq(r, PULSARC_OK, "send %d: %s (%s)", idx, pulsarc_result_name(r),
                 pulsarc_last_error_detail());
}

/* The usual start: a client, a producer of H_TOPIC without batching, a transaction. */
static pulsarc_txn_t *producer_and_txn(void)
{
    client = txn_client();
    producer = h_producer(client, H_TOPIC, NULL);
    return begin();
}

static mock_txn_info_t mock_txn(size_t i)
{
    mock_txn_info_t info;
    cr_assert(mock_broker_get_txn(mb, i, &info), "the mock began no transaction %zu", i);
    return info;
}

/* An asynchronous commit's or abort's outcome. */
typedef struct end_wait {
    _Atomic int done;
    _Atomic int res;
    char detail[512];
} end_wait;

static void on_end(pulsarc_txn_t *txn, pulsarc_result res, void *ctx)
{
    end_wait *w = ctx;
    (void)txn;
    snprintf(w->detail, sizeof w->detail, "%s", pulsarc_last_error_detail());
    atomic_store(&w->res, res);
    atomic_store(&w->done, 1);
}

static bool end_done(void *arg)
{
    return atomic_load(&((end_wait *)arg)->done) != 0;
}

/* ---- the coordinator ------------------------------------------------------------- */

Test(client_txn, coordinator_connection_dropped_during_new_txn_is_retried)
{
    client = txn_client();
    mock_broker_txn_drop(mb, MOCK_TXN_NEW, 1);
    pulsarc_txn_t *txn = begin();
    cr_assert_eq(h_count(mb, MOCK_NEW_TXNS), 2, "NEW_TXN was not sent again");
    cr_assert_geq(h_count(mb, MOCK_CONNECTS), 2, "no new connection to the coordinator");
    cr_assert_eq(h_count(mb, MOCK_TC_CONNECTS), 2, "TC_CLIENT_CONNECT was not sent again");
    mock_txn_info_t info = mock_txn(0);
    uint64_t most, least;
    pulsarc_txn_id(txn, &most, &least);
    cr_assert_eq(most, info.most);
    cr_assert_eq(least, info.least);
    cr_assert_eq(pulsarc_txn_get_state(txn), PULSARC_TXN_OPEN);
    pulsarc_txn_free(txn);
    h_finish();
}

Test(client_txn, coordinator_not_found_is_looked_up_again)
{
    client = txn_client();
    mock_broker_txn_fail(mb, MOCK_TXN_NEW,
                         PULSAR__PROTO__SERVER_ERROR__TransactionCoordinatorNotFound,
                         "Transaction coordinator with id 0 not found", 1);
    pulsarc_txn_t *txn = begin();
    cr_assert_eq(h_count(mb, MOCK_NEW_TXNS), 2);
    /* Discovery, then one lookup of the coordinator's partition per connection to it. */
    cr_assert_eq(h_count(mb, MOCK_LOOKUPS), 2, "the coordinator was not looked up again");
    cr_assert_eq(h_count(mb, MOCK_TC_CONNECTS), 2);
    mock_lookup_info_t lk;
    cr_assert(mock_broker_last_lookup(mb, &lk));
    cr_assert_str_eq(lk.topic,
                     "persistent://pulsar/system/transaction_coordinator_assign-partition-0");
    pulsarc_txn_free(txn);
    h_finish();
}

Test(client_txn, no_coordinator_fails_begin_with_its_name)
{
    client = h_client("enableTransaction", "true", NULL); /* the mock has none */
    pulsarc_txn_t *txn = NULL;
    pulsarc_result r = pulsarc_txn_begin(client, TXN_TTL_MS, &txn);
    cr_assert_eq(r, PULSARC_ERR_BROKER_TXN_COORDINATOR_NOT_FOUND, "%s", pulsarc_result_name(r));
    cr_assert_null(txn);
    cr_assert(strstr(pulsarc_last_error_detail(), "transactionCoordinatorEnabled"), "%s",
              pulsarc_last_error_detail());
    h_finish();
}

/* ---- sends ------------------------------------------------------------------------ */

Test(client_txn, first_send_to_each_partition_is_registered_before_it)
{
    mock_broker_set_partitions(mb, 2);
    client = txn_client();
    producer = h_producer(client, H_TOPIC, "messageRoutingMode", "round_robin", NULL);
    pulsarc_txn_t *txn = begin();
    for (int i = 0; i < 6; i++)
        send_in_ok(producer, txn, i);
    cr_assert(h_wait_calls(6, 3000), "only %d of 6 callbacks", h_total());
    h_assert_each_once(6, PULSARC_OK);
    cr_assert_eq(h_count(mb, MOCK_SENDS), 6);
    for (size_t i = 0; i < 6; i++) {
        mock_send_t s = h_get_send(mb, i);
        bool has = s.has_txn, registered = s.txn_registered;
        mock_send_free(&s);
        cr_assert(has, "SEND %zu carries no transaction", i);
        cr_assert(registered, "SEND %zu came before its partition's ADD_PARTITION_TO_TXN", i);
    }
    /* Once per partition, not once per message. */
    cr_assert_eq(h_count(mb, MOCK_ADD_PARTITIONS), 2);
    mock_txn_info_t info = mock_txn(0);
    cr_assert_eq(info.n_partitions, 2);
    bool p0_first = strcmp(info.partitions[0], H_TOPIC "-partition-0") == 0;
    cr_assert_str_eq(info.partitions[p0_first ? 0 : 1], H_TOPIC "-partition-0");
    cr_assert_str_eq(info.partitions[p0_first ? 1 : 0], H_TOPIC "-partition-1");
    cr_assert_eq(pulsarc_txn_commit(txn), PULSARC_OK);
    cr_assert_eq(mock_txn(0).state, MOCK_TXN_COMMITTED);
    pulsarc_txn_free(txn);
    h_finish();
}

Test(client_txn, different_transactions_never_share_a_batch)
{
    client = txn_client();
    producer = h_producer(client, H_TOPIC, "batchingEnabled", "true", "batchingMaxPublishDelayMs",
                          "60000", "batchingMaxMessages", "100", NULL);
    pulsarc_txn_t *a = begin(), *b = begin();
    /* Each registers the partition first, so that what follows reaches the partition
     * producer in the order sent, interleaved (the sends that wait for a registration go
     * on together when it is answered). */
    send_in_ok(producer, a, 0);
    send_in_ok(producer, b, 1);
    cr_assert(h_wait_count(mb, MOCK_ADD_PARTITIONS, 2, 3000));
    h_settle(mb);
    cr_assert_eq(pulsarc_producer_flush(producer), PULSARC_OK, "%s", pulsarc_last_error_detail());
    cr_assert(h_wait_calls(2, 3000), "only %d of 2 callbacks", h_total());
    /* a, b, a, none, b, a: a batching producer would put them in one batch. */
    send_in_ok(producer, a, 2);
    send_in_ok(producer, b, 3);
    send_in_ok(producer, a, 4);
    h_send_range(producer, 5, 6);
    send_in_ok(producer, b, 6);
    send_in_ok(producer, a, 7);
    cr_assert_eq(pulsarc_producer_flush(producer), PULSARC_OK, "%s", pulsarc_last_error_detail());
    cr_assert(h_wait_calls(8, 3000), "only %d of 8 callbacks", h_total());
    h_assert_each_once(8, PULSARC_OK);

    uint64_t a_least, b_least;
    pulsarc_txn_id(a, NULL, &a_least);
    pulsarc_txn_id(b, NULL, &b_least);
    int in_a = 0, in_b = 0, in_none = 0;
    size_t n = (size_t)h_count(mb, MOCK_SENDS);
    for (size_t i = 0; i < n; i++) {
        mock_send_t s = h_get_send(mb, i);
        bool meta_has = s.metadata && s.metadata->has_txnid_least_bits;
        uint64_t meta_least = meta_has ? s.metadata->txnid_least_bits : 0;
        bool has = s.has_txn;
        uint64_t least = s.txn_least;
        int num = s.num_messages;
        mock_send_free(&s);
        cr_assert_eq(meta_has, has, "SEND %zu: the metadata and the command disagree", i);
        cr_assert_eq(meta_least, least, "SEND %zu: the metadata names another transaction", i);
        if (!has)
            in_none += num;
        else if (least == a_least)
            in_a += num;
        else if (least == b_least)
            in_b += num;
        else
            cr_assert_fail("SEND %zu in an unknown transaction", i);
    }
    /* A batch carries one transaction's ids: a mixed one would count the others there. */
    cr_assert_eq(in_a, 4, "%d messages under a's ids", in_a);
    cr_assert_eq(in_b, 3, "%d messages under b's ids", in_b);
    cr_assert_eq(in_none, 1, "%d messages outside any transaction", in_none);
    cr_assert_eq(pulsarc_txn_commit(a), PULSARC_OK);
    cr_assert_eq(pulsarc_txn_abort(b), PULSARC_OK);
    cr_assert_eq(mock_txn(0).state, MOCK_TXN_COMMITTED);
    cr_assert_eq(mock_txn(1).state, MOCK_TXN_ABORTED);
    pulsarc_txn_free(a);
    pulsarc_txn_free(b);
    h_finish();
}

/* ---- commit ----------------------------------------------------------------------- */

Test(client_txn, commit_waits_for_every_receipt)
{
    pulsarc_txn_t *txn = producer_and_txn();
    mock_broker_set_receipt_mode(mb, MOCK_RECEIPTS_HOLD);
    for (int i = 0; i < 3; i++)
        send_in_ok(producer, txn, i);
    cr_assert(h_wait_sends(mb, 3, 3000));
    end_wait w = { .done = 0 };
    cr_assert_eq(pulsarc_txn_commit_async(txn, on_end, &w), PULSARC_OK);
    cr_assert_eq(pulsarc_txn_get_state(txn), PULSARC_TXN_COMMITTING);
    h_settle(mb);
    cr_assert_eq(h_count(mb, MOCK_END_TXNS), 0, "END_TXN went out before the receipts");
    cr_assert_not(atomic_load(&w.done), "the commit ended before its sends");

    cr_assert_eq(mock_broker_release_receipts(mb), 3);
    cr_assert(h_wait_until(end_done, &w, 3000), "the commit never ended");
    cr_assert_eq(atomic_load(&w.res), PULSARC_OK, "%s (%s)",
                 pulsarc_result_name(atomic_load(&w.res)), w.detail);
    h_assert_each_once(3, PULSARC_OK);
    cr_assert_eq(h_count(mb, MOCK_END_TXNS), 1);
    cr_assert_eq(mock_txn(0).state, MOCK_TXN_COMMITTED);
    cr_assert_eq(pulsarc_txn_get_state(txn), PULSARC_TXN_COMMITTED);
    pulsarc_txn_free(txn);
    h_finish();
}

/* The connection drops with the transaction's sends unanswered: the producer resends
 * them on its new connection with the transaction's ids, each callback comes once, and
 * the commit (its coordinator connection cut too, and made again) succeeds. */
Test(client_txn, a_reconnect_resends_the_transactions_sends_with_their_ids)
{
    pulsarc_txn_t *txn = producer_and_txn();
    uint64_t least = 0;
    pulsarc_txn_id(txn, NULL, &least);
    mock_broker_set_receipt_mode(mb, MOCK_RECEIPTS_SUPPRESS);
    for (int i = 0; i < 3; i++)
        send_in_ok(producer, txn, i);
    cr_assert(mock_broker_wait_sends(mb, 3, h_deadline_ms(3000)));
    mock_broker_set_receipt_mode(mb, MOCK_RECEIPTS_NORMAL);
    mock_broker_cut_now(mb);
    cr_assert(h_wait_calls(3, 5000), "only %d of 3 callbacks", h_total());
    h_assert_each_once(3, PULSARC_OK);
    h_assert_order(3);
    size_t n = (size_t)h_count(mb, MOCK_SENDS);
    cr_assert_eq(n, 6, "3 sends and their 3 resends, got %zu", n);
    for (size_t i = 3; i < n; i++) {
        mock_send_t s = h_get_send(mb, i);
        bool has = s.has_txn, meta = s.metadata && s.metadata->has_txnid_least_bits;
        uint64_t got = s.txn_least;
        int conn = s.connection;
        mock_send_free(&s);
        cr_assert(has && meta && got == least, "resend %zu without the transaction's ids", i);
        cr_assert_gt(conn, 1, "resend %zu on the first connection", i);
    }
    cr_assert_eq(pulsarc_txn_commit(txn), PULSARC_OK, "commit: %s", pulsarc_last_error_detail());
    cr_assert_eq(mock_txn(0).state, MOCK_TXN_COMMITTED);
    pulsarc_txn_free(txn);
    h_finish();
}

Test(client_txn, send_after_commit_is_refused)
{
    pulsarc_txn_t *txn = producer_and_txn();
    send_in_ok(producer, txn, 0);
    cr_assert_eq(pulsarc_txn_commit(txn), PULSARC_OK);
    cr_assert_eq(send_in(producer, txn, 1), PULSARC_ERR_TXN_STATE);
    cr_assert_eq(pulsarc_txn_abort(txn), PULSARC_ERR_TXN_STATE, "a second end was accepted");
    h_settle(mb);
    cr_assert_eq(h_count(mb, MOCK_SENDS), 1);
    cr_assert_eq(h_count(mb, MOCK_END_TXNS), 1);
    pulsarc_txn_free(txn);
    h_finish();
}

/* The send callback of message 0 overwrites the thread's last error detail, as any
 * failing call of the application's there would. */
static void clobber_detail(pulsarc_producer_t *p, int idx, pulsarc_result res)
{
    (void)p;
    (void)res;
    if (idx == 0)
        cr_assert_neq(pulsarc_producer_flush_async(NULL, NULL, NULL), PULSARC_OK);
}

Test(client_txn, failed_send_makes_commit_abort_and_name_the_failure)
{
    pulsarc_txn_t *txn = producer_and_txn();
    T.hook = clobber_detail;
    /* A refusal about the message alone: it fails, the others are stored. */
    mock_broker_fail_sends(mb, PULSAR__PROTO__SERVER_ERROR__NotAllowedError, 1);
    for (int i = 0; i < 3; i++)
        send_in_ok(producer, txn, i);
    cr_assert(h_wait_calls(3, 3000), "only %d of 3 callbacks", h_total());
    cr_assert_eq(T.res[0], PULSARC_ERR_BROKER_NOT_ALLOWED, "%s", pulsarc_result_name(T.res[0]));
    cr_assert_eq(T.res[1], PULSARC_OK);

    pulsarc_result r = pulsarc_txn_commit(txn);
    cr_assert_eq(r, PULSARC_ERR_TXN_OPERATION_FAILED, "%s", pulsarc_result_name(r));
    const char *detail = pulsarc_last_error_detail();
    cr_assert(strstr(detail, "BROKER_NOT_ALLOWED") && strstr(detail, "mock send failure"),
              "the commit's detail does not name the failed send: %s", detail);
    cr_assert_eq(pulsarc_txn_get_state(txn), PULSARC_TXN_ABORTED);
    cr_assert_eq(mock_txn(0).state, MOCK_TXN_ABORTED, "the broker was not told to abort");
    pulsarc_txn_free(txn);
    h_finish();
}

Test(client_txn, send_timeout_in_a_transaction_fails_its_commit)
{
    client = txn_client();
    producer = h_producer(client, H_TOPIC, "sendTimeoutMs", "300", NULL);
    pulsarc_txn_t *txn = begin();
    mock_broker_set_receipt_mode(mb, MOCK_RECEIPTS_SUPPRESS);
    send_in_ok(producer, txn, 0);
    cr_assert(h_wait_calls(1, 3000), "the send never timed out");
    cr_assert_eq(T.res[0], PULSARC_ERR_SEND_TIMEOUT, "%s", pulsarc_result_name(T.res[0]));
    pulsarc_result r = pulsarc_txn_commit(txn);
    cr_assert_eq(r, PULSARC_ERR_TXN_OPERATION_FAILED, "%s", pulsarc_result_name(r));
    cr_assert(strstr(pulsarc_last_error_detail(), "SEND_TIMEOUT"), "%s",
              pulsarc_last_error_detail());
    cr_assert_eq(mock_txn(0).state, MOCK_TXN_ABORTED);
    pulsarc_txn_free(txn);
    h_finish();
}

Test(client_txn, transaction_timed_out_on_the_broker_fails_sends_and_commit)
{
    client = txn_client();
    producer = h_producer(client, H_TOPIC, NULL);
    pulsarc_producer_t *other = h_producer(client, OTHER_TOPIC, NULL);
    pulsarc_txn_t *txn = begin();
    send_in_ok(producer, txn, 0);
    cr_assert(h_wait_calls(1, 3000));
    cr_assert_eq(T.res[0], PULSARC_OK);
    cr_assert_eq(mock_broker_txn_expire(mb), 1);

    send_in_ok(producer, txn, 1); /* a partition the transaction had */
    send_in_ok(other, txn, 2);    /* one it registers now */
    cr_assert(h_wait_calls(3, 3000), "only %d of 3 callbacks", h_total());
    cr_assert_eq(T.res[1], PULSARC_ERR_BROKER_NOT_ALLOWED, "%s", pulsarc_result_name(T.res[1]));
    cr_assert(strstr(T.detail[1], "has been ended"), "%s", T.detail[1]);
    cr_assert_eq(T.res[2], PULSARC_ERR_BROKER_TXN_NOT_FOUND, "%s", pulsarc_result_name(T.res[2]));

    pulsarc_result r = pulsarc_txn_commit(txn);
    cr_assert_eq(r, PULSARC_ERR_BROKER_TXN_NOT_FOUND, "%s (%s)", pulsarc_result_name(r),
                 pulsarc_last_error_detail());
    cr_assert_eq(pulsarc_txn_get_state(txn), PULSARC_TXN_ERROR);
    mock_txn_info_t info = mock_txn(0);
    cr_assert(info.timed_out);
    cr_assert_eq(info.state, MOCK_TXN_ABORTED);
    pulsarc_txn_free(txn);
    pulsarc_producer_free(other);
    h_finish();
}

/* ---- flush ------------------------------------------------------------------------ */

/* A blocking flush on a thread of its own (h_call_while_time_passes). */
typedef struct flush_call {
    pulsarc_result result;
    int calls; /* callbacks when it returned */
    char detail[512];
} flush_call_t;

static void flush_blocking(void *arg)
{
    flush_call_t *fc = arg;
    fc->result = pulsarc_producer_flush(producer);
    fc->calls = h_total();
    snprintf(fc->detail, sizeof fc->detail, "%s", pulsarc_last_error_detail());
}

Test(client_txn, flush_covers_sends_waiting_for_their_registration)
{
    client = txn_client();
    producer = h_producer(client, H_TOPIC, "batchingEnabled", "true", "batchingMaxPublishDelayMs",
                          "60000", NULL);
    pulsarc_txn_t *txn = begin();
    /* The coordinator never answers the registration: the sends wait for it until the
     * operation timeout fails them. */
    mock_broker_txn_ignore(mb, MOCK_TXN_ADD_PARTITION, 1);
    send_in_ok(producer, txn, 0);
    send_in_ok(producer, txn, 1);
    cr_assert(h_wait_count(mb, MOCK_ADD_PARTITIONS, 1, 3000));
    flush_call_t fc = { 0 };
    cr_assert(h_call_while_time_passes(flush_blocking, &fc, 10000), "the flush never returned");
    pulsarc_result r = fc.result;
    int calls = fc.calls;
    cr_assert_eq(calls, 2, "the flush returned (%s) before its sends had their callbacks (%d)",
                 pulsarc_result_name(r), calls);
    cr_assert_eq(r, PULSARC_ERR_TIMEOUT, "%s (%s)", pulsarc_result_name(r), fc.detail);
    h_assert_each_once(2, PULSARC_ERR_TIMEOUT);
    cr_assert_eq(h_count(mb, MOCK_SENDS), 0);
    pulsarc_txn_free(txn);
    h_finish();
}
