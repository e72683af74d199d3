/* The client against the mock broker: what happens after a connection is lost — the
 * producer re-registers (which can itself fail, retryably or for good), the topic may
 * have moved to another broker; partitioned topics, chunked messages and frames the
 * broker should never send. */
#include "client_harness.h"

#include <stdatomic.h>
#include <time.h>

TestSuite(client_reconnect, .init = h_setup, .fini = h_teardown, .timeout = H_SUITE_TIMEOUT(30));

/* ---- re-registration after a lost connection -------------------------------------------- */

Test(client_reconnect, reregistration_retries_service_not_ready)
{
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    h_pending_unanswered(2);
    mock_broker_fail_producer(mb, PULSAR__PROTO__SERVER_ERROR__ServiceNotReady, "unloading", 2);
    mock_broker_cut_now(mb);
    cr_assert(h_wait_calls(2, 5000), "only %d of 2 callbacks", h_total());
    h_expect_no_more_callbacks();
    h_assert_each_once(2, PULSARC_OK);
    h_assert_order(2);
    cr_assert_eq(h_count(mb, MOCK_PRODUCERS), 1 + 3);
    cr_assert_eq(h_count(mb, MOCK_SENDS), 4);
    h_finish();
}

Test(client_reconnect, reregistration_terminal_error_fails_pending_once)
{
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    h_pending_unanswered(2);
    mock_broker_fail_producer(mb, PULSAR__PROTO__SERVER_ERROR__TopicTerminatedError,
                              "Topic was already terminated", -1);
    mock_broker_cut_now(mb);
    cr_assert(h_wait_calls(2, 5000), "only %d of 2 callbacks", h_total());
    h_expect_no_more_callbacks();
    h_assert_each_once(2, PULSARC_ERR_BROKER_TOPIC_TERMINATED);
    cr_assert(strstr(T.detail[0], "terminated"), "detail: %s", T.detail[0]);
    cr_assert_eq(pulsarc_producer_pending_count(producer), 0);
    /* Terminal: no more attempts, and later sends fail the same way. */
    uint64_t producers = h_count(mb, MOCK_PRODUCERS);
    pulsarc_result r = h_send(producer, 2);
    if (r == PULSARC_OK) {
        cr_assert(h_wait_calls(3, 3000));
        cr_assert_eq(T.calls[2], 1);
        cr_assert_eq(T.res[2], PULSARC_ERR_BROKER_TOPIC_TERMINATED, "got %s",
                     pulsarc_result_name(T.res[2]));
    } else {
        cr_assert_eq(r, PULSARC_ERR_BROKER_TOPIC_TERMINATED, "got %s", pulsarc_result_name(r));
    }
    h_let_time_pass(300); /* a retry (backoff at most 200 ms) would reach the mock now */
    cr_assert_eq(h_count(mb, MOCK_PRODUCERS), producers, "a terminal error was retried");
    cr_assert_eq(h_count(mb, MOCK_SENDS), 2);
    h_finish();
}

/* Once created, a producer retries a topic that is gone (it may be re-created), as the
 * official clients do; the send timeout bounds what is pending meanwhile. */
Test(client_reconnect, topic_deleted_while_reconnecting)
{
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, "sendTimeoutMs", "1000", NULL);
    h_pending_unanswered(1);
    mock_broker_lookup_fail(mb, PULSAR__PROTO__SERVER_ERROR__TopicNotFound, "Topic not found", -1);
    mock_broker_cut_now(mb);
    cr_assert(h_let_time_pass_until_calls(1, 5000), "the pending message never completed");
    h_expect_no_more_callbacks();
    h_assert_each_once(1, PULSARC_ERR_SEND_TIMEOUT);
    cr_assert(strstr(T.detail[0], "may have been persisted"), "detail: %s", T.detail[0]);
    cr_assert_eq(pulsarc_producer_pending_count(producer), 0);
    /* The topic is back: the producer registers again and goes on (message 1 is sent
     * once it is registering, so that its send timeout does not cover the backoff). */
    mock_broker_lookup_fail(mb, 0, NULL, 0);
    cr_assert(h_wait_count(mb, MOCK_PRODUCERS, 2, 5000), "the producer never re-registered");
    cr_assert_eq(h_send(producer, 1), PULSARC_OK);
    cr_assert(h_wait_calls(2, 5000));
    cr_assert_eq(T.res[1], PULSARC_OK, "got %s", pulsarc_result_name(T.res[1]));
    h_finish();
}

/* The broker has not yet noticed that the old connection died and still holds the
 * producer: ProducerBusy is transient after creation, so the producer waits its turn. */
Test(client_reconnect, reregistration_retries_producer_busy)
{
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, "producerName", "busy-1", NULL);
    h_pending_unanswered(2);
    mock_broker_fail_producer(mb, PULSAR__PROTO__SERVER_ERROR__ProducerBusy,
                              "Producer with name 'busy-1' is already connected", 3);
    mock_broker_cut_now(mb);
    cr_assert(h_wait_calls(2, 5000), "only %d of 2 callbacks", h_total());
    h_expect_no_more_callbacks();
    h_assert_each_once(2, PULSARC_OK);
    h_assert_order(2);
    cr_assert_eq(h_count(mb, MOCK_PRODUCERS), 1 + 4);
    h_finish();
}

/* A SEND_ERROR about the message (NotAllowed) fails that message alone: the connection,
 * which other producers share, stays, and later messages go through. */
Test(client_reconnect, send_error_not_allowed_fails_one_message_only)
{
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    mock_broker_fail_sends(mb, PULSAR__PROTO__SERVER_ERROR__NotAllowedError, 1);
    h_send_range(producer, 0, 3);
    cr_assert(h_wait_calls(3, 5000), "only %d of 3 callbacks", h_total());
    h_expect_no_more_callbacks();
    cr_assert_eq(T.calls[0], 1);
    cr_assert_eq(T.res[0], PULSARC_ERR_BROKER_NOT_ALLOWED, "got %s", pulsarc_result_name(T.res[0]));
    cr_assert_eq(T.res[1], PULSARC_OK);
    cr_assert_eq(T.res[2], PULSARC_OK);
    cr_assert_eq(h_count(mb, MOCK_CONNECTIONS), 1, "the connection was closed");
    cr_assert_eq(h_count(mb, MOCK_SENDS), 3, "a refused message was resent");
    h_finish();
}

/* A SEND_ERROR saying the topic is terminated stops the producer for good, but does not
 * close the shared connection. */
Test(client_reconnect, send_error_topic_terminated_stops_producer_keeps_connection)
{
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    h_send_range(producer, 0, 3);
    cr_assert(h_wait_calls(3, 5000));
    mock_broker_fail_sends(mb, PULSAR__PROTO__SERVER_ERROR__TopicTerminatedError, 1);
    cr_assert_eq(h_send(producer, 3), PULSARC_OK);
    cr_assert(h_wait_calls(4, 5000), "only %d of 4 callbacks", h_total());
    h_expect_no_more_callbacks();
    for (int i = 0; i < 3; i++)
        cr_assert_eq(T.res[i], PULSARC_OK, "message %d: %s", i, pulsarc_result_name(T.res[i]));
    cr_assert_eq(T.res[3], PULSARC_ERR_BROKER_TOPIC_TERMINATED, "got %s",
                 pulsarc_result_name(T.res[3]));
    cr_assert_eq(h_count(mb, MOCK_CONNECTIONS), 1, "the shared connection was closed");
    cr_assert(h_wait_count(mb, MOCK_CLOSE_PRODUCERS, 1, 3000),
              "the broker was not told the producer is gone");
    h_finish();
}

/* A transient SEND_ERROR that repeats (the broker cannot persist) reconnects with a
 * growing backoff, not in a tight loop. */
Test(client_reconnect, repeated_send_errors_back_off)
{
    client = h_client("initialBackoffIntervalMs", "50", "maxBackoffIntervalMs", "10000", NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    mock_broker_fail_sends(mb, PULSAR__PROTO__SERVER_ERROR__PersistenceError, -1);
    cr_assert_eq(h_send(producer, 0), PULSARC_OK);
    /* A measuring window: 50, 100, 200, 400, 800 ms of backoff (with jitter) fit at most
     * ~6 attempts into 2 s; a backoff reset at every registration would make about 40. */
    h_let_time_pass(2000);
    uint64_t connects = h_count(mb, MOCK_CONNECTS);
    cr_assert_leq(connects, 8, "%llu connections in 2 s", (unsigned long long)connects);
    mock_broker_fail_sends(mb, 0, 0);
    cr_assert(h_let_time_pass_until_calls(1, 15000), "the next attempt never came");
    cr_assert_eq(T.res[0], PULSARC_OK);
    h_finish();
}

Test(client_reconnect, topic_moves_to_another_broker)
{
    mock_broker_t *second = mock_broker_start();
    cr_assert_not_null(second);
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    h_pending_unanswered(2);
    /* The topic is unloaded here and now owned by the second broker. */
    mock_broker_set_lookup_url(mb, mock_broker_url(second));
    mock_producer_info_t info;
    cr_assert(mock_broker_last_producer(mb, &info));
    cr_assert_eq(mock_broker_close_producer(mb, info.producer_id), 1);
    cr_assert(h_wait_calls(2, 5000), "only %d of 2 callbacks", h_total());
    h_settle(second); /* the receipts came from there */
    h_expect_no_more_callbacks();
    h_assert_each_once(2, PULSARC_OK);
    cr_assert_eq(h_count(second, MOCK_PRODUCERS), 1);
    cr_assert_eq(h_count(second, MOCK_SENDS), 2, "pending messages not resent to the new owner");
    cr_assert_eq(h_count(mb, MOCK_PRODUCERS), 1);
    cr_assert_eq(h_count(mb, MOCK_SENDS), 2);
    mock_producer_info_t moved;
    cr_assert(mock_broker_last_producer(second, &moved));
    cr_assert_str_eq(moved.producer_name, "mock-0", "the broker-assigned name was not kept");
    cr_assert_gt(moved.epoch, info.epoch);
    cr_assert_eq(h_send_sync(producer, 2), PULSARC_OK);
    cr_assert_eq(h_count(second, MOCK_SENDS), 3);
    h_finish();
    mock_broker_stop(second);
}

Test(client_reconnect, two_producers_share_a_connection_and_both_recover)
{
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    pulsarc_producer_t *other = h_producer(client, "persistent://public/default/other", NULL);
    cr_assert_eq(h_count(mb, MOCK_CONNECTIONS), 1, "producers of one broker share a connection");
    mock_broker_set_receipt_mode(mb, MOCK_RECEIPTS_SUPPRESS);
    h_send_range(producer, 0, 2);
    h_send_range(other, 2, 4);
    cr_assert(h_wait_sends(mb, 4, 3000));
    mock_broker_set_receipt_mode(mb, MOCK_RECEIPTS_NORMAL);
    mock_broker_cut_now(mb);
    cr_assert(h_wait_calls(4, 5000), "only %d of 4 callbacks", h_total());
    h_expect_no_more_callbacks();
    h_assert_each_once(4, PULSARC_OK);
    cr_assert_eq(h_count(mb, MOCK_PRODUCERS), 4);
    h_assert_seq_in_order_per_connection(mb);
    pulsarc_producer_free(other);
    h_finish();
}

/* ---- partitioned topics --------------------------------------------------------------- */

static uint64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

Test(client_reconnect, partitioned_cut_resends_on_every_partition)
{
    mock_broker_set_partitions(mb, 3);
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    cr_assert_eq(h_count(mb, MOCK_PRODUCERS), 3);
    mock_broker_set_receipt_delay(mb, 20);
    h_send_range(producer, 0, 30);
    cr_assert(h_wait_sends(mb, 10, 3000));
    cr_assert_eq(pulsarc_producer_last_disconnected_timestamp(producer), 0);
    uint64_t before = wall_ms();
    mock_broker_cut_now(mb);
    cr_assert(h_wait_calls(30, 10000), "only %d of 30 callbacks", h_total());
    h_expect_no_more_callbacks();
    h_assert_each_once(30, PULSARC_OK);
    cr_assert_geq(h_count(mb, MOCK_PRODUCERS), 6, "not every partition re-registered");
    /* The cut, in wall-clock milliseconds (the skipped clock is the monotonic one). */
    uint64_t at = pulsarc_producer_last_disconnected_timestamp(producer);
    cr_assert(at >= before && at <= wall_ms(), "disconnected at %llu, cut at %llu",
              (unsigned long long)at, (unsigned long long)before);
    cr_assert(pulsarc_producer_is_connected(producer));
    cr_assert_eq(pulsarc_producer_last_disconnected_timestamp(NULL), 0);
    h_assert_seq_in_order_per_connection(mb);
    int per_partition[3] = { 0 };
    for (int i = 0; i < 30; i++) {
        cr_assert(T.partition[i] >= 0 && T.partition[i] < 3, "message %d: partition %d", i,
                  T.partition[i]);
        per_partition[T.partition[i]]++;
    }
    for (int k = 0; k < 3; k++)
        cr_assert_eq(per_partition[k], 10, "partition %d got %d (round robin)", k,
                     per_partition[k]);
    h_finish();
}

Test(client_reconnect, partitioned_free_then_destroy_with_pending)
{
    mock_broker_set_partitions(mb, 3);
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    mock_broker_set_receipt_mode(mb, MOCK_RECEIPTS_HOLD);
    h_send_range(producer, 0, 9);
    cr_assert(h_wait_sends(mb, 9, 3000));
    pulsarc_producer_free(producer);
    producer = NULL;
    cr_assert_eq(pulsarc_client_destroy(client), PULSARC_OK);
    client = NULL;
    h_assert_each_once(9, PULSARC_ERR_ALREADY_CLOSED);
    h_finish();
}

Test(client_reconnect, partition_count_grows)
{
    mock_broker_set_partitions(mb, 2);
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, "autoUpdatePartitionsIntervalSeconds", "1", NULL);
    cr_assert_eq(h_count(mb, MOCK_PRODUCERS), 2);
    mock_broker_set_partitions(mb, 4);
    cr_assert(h_let_time_pass_until_count(mb, MOCK_PRODUCERS, 4, 4000),
              "new partitions not started");
    /* The router picks the new partitions once they are registered (the mock counts the
     * PRODUCER commands before the client has the answers): rounds of 4 messages until
     * one reaches all 4, each after the client has had the answers so far, within a
     * generous deadline. */
    bool all = false;
    int sent = 0;
    uint64_t deadline = h_now_ms() + (uint64_t)h_deadline_ms(5000);
    while (!all && sent + 4 <= H_MAX_MSGS && h_now_ms() < deadline) {
        h_send_range(producer, sent, sent + 4);
        sent += 4;
        cr_assert(h_wait_calls(sent, 3000));
        bool seen[4] = { false };
        for (int i = sent - 4; i < sent; i++)
            if (T.partition[i] >= 0 && T.partition[i] < 4)
                seen[T.partition[i]] = true;
        all = seen[0] && seen[1] && seen[2] && seen[3];
        if (!all)
            h_quiet();
    }
    cr_assert(all, "messages never reached all 4 partitions");
    h_assert_each_once(sent, PULSARC_OK);
    mock_producer_info_t info;
    cr_assert(mock_broker_last_producer(mb, &info));
    cr_assert(strstr(info.topic, "-partition-"), "topic %s", info.topic);
    h_finish();
}

Test(client_reconnect, lazy_start_registers_on_first_message)
{
    mock_broker_set_partitions(mb, 3);
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, "lazyStartPartitionedProducers", "true",
                          "messageRoutingMode", "single", NULL);
    uint64_t at_create = h_count(mb, MOCK_PRODUCERS);
    cr_assert_lt(at_create, 3, "every partition registered at creation");
    cr_assert_eq(h_send_sync(producer, 0), PULSARC_OK);
    cr_assert_leq(h_count(mb, MOCK_PRODUCERS), at_create + 1);
    cr_assert_eq(h_count(mb, MOCK_SENDS), 1);
    h_finish();
}

Test(client_reconnect, lazy_start_failure_fails_waiting_messages)
{
    mock_broker_set_partitions(mb, 3);
    client = h_client("operationTimeoutMs", "1000", NULL);
    producer = h_producer(client, H_TOPIC, "lazyStartPartitionedProducers", "true",
                          "messageRoutingMode", "single", NULL);
    mock_broker_fail_producer(mb, PULSAR__PROTO__SERVER_ERROR__ProducerBusy, "busy", -1);
    h_send_range(producer, 0, 3);
    cr_assert(h_wait_calls(3, 5000), "only %d of 3 callbacks", h_total());
    h_expect_no_more_callbacks();
    h_assert_each_once(3, PULSARC_ERR_BROKER_PRODUCER_BUSY);
    cr_assert_eq(pulsarc_producer_pending_count(producer), 0);
    cr_assert_eq(h_count(mb, MOCK_SENDS), 0);
    /* Not terminal: once the broker lets it in, the next send registers and goes out. */
    mock_broker_fail_producer(mb, 0, NULL, 0);
    cr_assert_eq(h_send(producer, 3), PULSARC_OK);
    cr_assert(h_wait_calls(4, 5000));
    cr_assert_eq(T.res[3], PULSARC_OK, "got %s (%s)", pulsarc_result_name(T.res[3]), T.detail[3]);
    cr_assert_eq(h_count(mb, MOCK_SENDS), 1);
    h_finish();
}

/* ---- chunks ------------------------------------------------------------------------------ */

Test(client_reconnect, chunked_message_resent_whole_after_cut)
{
    mock_broker_set_max_message_size(mb, 1000);
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, "chunkingEnabled", "true", NULL);
    mock_broker_set_receipt_mode(mb, MOCK_RECEIPTS_SUPPRESS);
    cr_assert_eq(h_send_len(producer, 0, 3500), PULSARC_OK);
    cr_assert(h_wait_sends(mb, 4, 3000), "3500 bytes in chunks of <= 1000: 4 SENDs");
    h_settle(mb); /* a fifth chunk would have arrived */
    size_t chunks = (size_t)h_count(mb, MOCK_SENDS);
    for (size_t i = 0; i < chunks; i++) {
        mock_send_t s = h_get_send(mb, i);
        cr_assert(s.is_chunk, "SEND %zu is not a chunk", i);
        cr_assert_leq(s.payload_len, 1000);
        mock_send_free(&s);
    }
    mock_broker_set_receipt_mode(mb, MOCK_RECEIPTS_NORMAL);
    mock_broker_cut_now(mb);
    cr_assert(h_wait_calls(1, 5000), "the chunked message never completed");
    h_expect_no_more_callbacks();
    h_assert_each_once(1, PULSARC_OK);
    cr_assert_eq(h_count(mb, MOCK_SENDS), 2 * chunks);
    cr_assert_eq(h_count(mb, MOCK_PROTOCOL_ERRORS), 0);
    h_assert_seq_in_order_per_connection(mb);
    /* The second attempt is a message of its own to a consumer: another uuid, chunks
     * counted from 0 again. */
    char first_uuid[320];
    for (size_t i = 0; i < 2 * chunks; i++) {
        mock_send_t s = h_get_send(mb, i);
        cr_assert_not_null(s.metadata);
        cr_assert_eq(s.metadata->chunk_id, (int32_t)(i % chunks));
        if (i == 0)
            snprintf(first_uuid, sizeof first_uuid, "%s", s.metadata->uuid);
        if (i < chunks)
            cr_assert_str_eq(s.metadata->uuid, first_uuid);
        else
            cr_assert_str_neq(s.metadata->uuid, first_uuid, "the resend reused the uuid");
        mock_send_free(&s);
    }
    h_finish();
}

/* The first chunk was stored (its receipt came) before the connection went: a consumer
 * has it already. The resend starts the message over under a new uuid, chunk 0 first,
 * rather than sending the other chunks again under the old one, which the official C++
 * consumers before 4.x drop when a chunk of it comes twice. */
Test(client_reconnect, chunked_message_starts_over_after_a_cut_behind_a_stored_chunk)
{
    mock_broker_set_max_message_size(mb, 1000);
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, "chunkingEnabled", "true", NULL);
    mock_broker_set_receipt_mode(mb, MOCK_RECEIPTS_HOLD);
    cr_assert_eq(h_send_len(producer, 0, 3500), PULSARC_OK);
    cr_assert(h_wait_sends(mb, 4, 3000), "3500 bytes in chunks of < 1000: 4 SENDs or more");
    h_settle(mb);
    size_t chunks = (size_t)h_count(mb, MOCK_SENDS);
    cr_assert_eq(mock_broker_release_receipts_n(mb, 1), 1);
    h_client_caught_up(mb);
    mock_broker_set_receipt_mode(mb, MOCK_RECEIPTS_NORMAL);
    mock_broker_cut_now(mb);
    cr_assert(h_wait_calls(1, 5000), "the chunked message never completed");
    h_expect_no_more_callbacks();
    h_assert_each_once(1, PULSARC_OK);
    cr_assert_eq(h_count(mb, MOCK_SENDS), 2 * chunks,
                 "the resend did not start from chunk 0 (%d SENDs for %zu chunks)",
                 (int)h_count(mb, MOCK_SENDS), chunks);
    mock_send_t a = h_get_send(mb, 0);
    for (size_t i = chunks; i < 2 * chunks; i++) {
        mock_send_t s = h_get_send(mb, i);
        cr_assert_eq(s.metadata->chunk_id, (int32_t)(i - chunks));
        cr_assert_eq(s.sequence_id, a.sequence_id);
        cr_assert_str_neq(s.metadata->uuid, a.metadata->uuid, "the resend reused the uuid");
        mock_send_free(&s);
    }
    mock_send_free(&a);
    h_finish();
}

/* ---- frames the broker should not send ----------------------------------------------------- */

static Pulsar__Proto__BaseCommand receipt_cmd(Pulsar__Proto__CommandSendReceipt *r,
                                              Pulsar__Proto__MessageIdData *id,
                                              uint64_t producer_id, uint64_t seq)
{
    pulsar__proto__message_id_data__init(id);
    id->ledgerid = 77;
    id->entryid = 88;
    pulsar__proto__command_send_receipt__init(r);
    r->producer_id = producer_id;
    r->sequence_id = seq;
    r->message_id = id;
    Pulsar__Proto__BaseCommand cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__SEND_RECEIPT;
    cmd.send_receipt = r;
    return cmd;
}

Test(client_reconnect, duplicate_and_stray_receipts_are_ignored)
{
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    mock_producer_info_t info;
    cr_assert(mock_broker_last_producer(mb, &info));
    h_pending_unanswered(1);

    Pulsar__Proto__CommandSendReceipt r;
    Pulsar__Proto__MessageIdData id;
    /* For a producer that does not exist: ignored. */
    Pulsar__Proto__BaseCommand cmd = receipt_cmd(&r, &id, info.producer_id + 1000, 0);
    cr_assert_eq(h_broker_send_cmd(mb, &cmd), 1);
    h_client_caught_up(mb); /* the client has handled that receipt */
    cr_assert_eq(h_total(), 0, "a receipt for another producer completed a message");
    /* Ours, twice: the second is a duplicate. */
    cmd = receipt_cmd(&r, &id, info.producer_id, 0);
    cr_assert_eq(h_broker_send_cmd(mb, &cmd), 1);
    cr_assert_eq(h_broker_send_cmd(mb, &cmd), 1);
    cr_assert(h_wait_calls(1, 3000));
    h_expect_no_more_callbacks();
    h_assert_each_once(1, PULSARC_OK);
    cr_assert_eq(T.ledger[0], 77);
    cr_assert_eq(T.entry[0], 88);
    cr_assert_eq(h_count(mb, MOCK_CONNECTS), 1, "stray receipts are no reason to reconnect");
    /* Business as usual afterwards. */
    cr_assert_eq(h_send(producer, 1), PULSARC_OK);
    cr_assert(h_wait_calls(2, 3000));
    cr_assert_eq(T.res[1], PULSARC_OK);
    cr_assert_eq(T.calls[1], 1);
    h_finish();
}

Test(client_reconnect, stray_answers_and_close_are_ignored)
{
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    mock_producer_info_t info;
    cr_assert(mock_broker_last_producer(mb, &info));

    Pulsar__Proto__CommandSuccess ok = PULSAR__PROTO__COMMAND_SUCCESS__INIT;
    ok.request_id = 987654;
    Pulsar__Proto__BaseCommand cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__SUCCESS;
    cmd.success = &ok;
    cr_assert_eq(h_broker_send_cmd(mb, &cmd), 1);

    Pulsar__Proto__CommandError err = PULSAR__PROTO__COMMAND_ERROR__INIT;
    err.request_id = 987655;
    err.error = PULSAR__PROTO__SERVER_ERROR__ServiceNotReady;
    err.message = (char *)"for nobody";
    Pulsar__Proto__BaseCommand ecmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    ecmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__ERROR;
    ecmd.error = &err;
    cr_assert_eq(h_broker_send_cmd(mb, &ecmd), 1);

    Pulsar__Proto__CommandCloseProducer cp = PULSAR__PROTO__COMMAND_CLOSE_PRODUCER__INIT;
    cp.producer_id = info.producer_id + 1000;
    cp.request_id = 5;
    Pulsar__Proto__BaseCommand ccmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    ccmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__CLOSE_PRODUCER;
    ccmd.close_producer = &cp;
    cr_assert_eq(h_broker_send_cmd(mb, &ccmd), 1);

    /* A send-error for a sequence id of another producer. */
    Pulsar__Proto__CommandSendError se = PULSAR__PROTO__COMMAND_SEND_ERROR__INIT;
    se.producer_id = info.producer_id + 1000;
    se.sequence_id = 0;
    se.error = PULSAR__PROTO__SERVER_ERROR__PersistenceError;
    se.message = (char *)"not yours";
    Pulsar__Proto__BaseCommand scmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    scmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__SEND_ERROR;
    scmd.send_error = &se;
    cr_assert_eq(h_broker_send_cmd(mb, &scmd), 1);

    cr_assert_eq(h_send_sync(producer, 0), PULSARC_OK);
    cr_assert_eq(h_count(mb, MOCK_CONNECTS), 1);
    cr_assert_eq(h_count(mb, MOCK_PRODUCERS), 1);
    h_finish();
}

/* ---- memory limit ------------------------------------------------------------------------ */

Test(client_reconnect, memory_limit_refuses_then_frees)
{
    client = h_client("memoryLimitBytes", "1000", NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    mock_broker_set_receipt_mode(mb, MOCK_RECEIPTS_HOLD);
    cr_assert_eq(h_send_len(producer, 0, 600), PULSARC_OK);
    cr_assert_eq(h_send_len(producer, 1, 600), PULSARC_ERR_MEMORY_LIMIT);
    cr_assert(h_wait_sends(mb, 1, 3000));
    mock_broker_set_receipt_mode(mb, MOCK_RECEIPTS_NORMAL);
    cr_assert_eq(mock_broker_release_receipts(mb), 1);
    cr_assert(h_wait_calls(1, 3000));
    /* The memory came back with the callback. */
    cr_assert_eq(h_send_len(producer, 2, 600), PULSARC_OK);
    cr_assert(h_wait_calls(2, 3000));
    h_expect_no_more_callbacks();
    cr_assert_eq(T.calls[1], 0, "the refused message got a callback");
    cr_assert_eq(T.res[0], PULSARC_OK);
    cr_assert_eq(T.res[2], PULSARC_OK);
    h_finish();
}

/* ---- close while the broker is away -------------------------------------------------------- */

static atomic_int closed_calls = 0;
static _Atomic int closed_res = 1000;

static void on_closed_cb(pulsarc_producer_t *p, pulsarc_result res, void *ctx)
{
    atomic_store(&closed_res, res);
    atomic_fetch_add(&closed_calls, 1);
}

Test(client_reconnect, close_while_broker_down_ends_within_operation_timeout)
{
    /* operationTimeoutMs bounds close (see pulsarc.h); with sendTimeoutMs=0 nothing else
     * would ever end the pending message while the broker is away. */
    client = h_client("operationTimeoutMs", "1000", NULL);
    producer = h_producer(client, H_TOPIC, "sendTimeoutMs", "0", NULL);
    cr_assert_eq(mock_broker_set_down(mb, true), 0);
    cr_assert_eq(h_send(producer, 0), PULSARC_OK);
    /* Close while the producer is reconnecting. */
    cr_assert(h_wait_log("reconnecting in", 3000), "the producer never tried to reconnect");
    uint64_t t0 = h_now_ms();
    cr_assert_eq(pulsarc_producer_close_async(producer, on_closed_cb, NULL), PULSARC_OK);
    cr_assert(h_wait_changed(&closed_calls, 0, 5000), "close never completed");
    uint64_t elapsed = h_now_ms() - t0;
    cr_assert_leq(elapsed, h_upper_ms(1000), "close done after %llu ms",
                  (unsigned long long)elapsed);
    h_settle(mb); /* a second completion would have come */
    cr_assert_eq(atomic_load(&closed_calls), 1);
    /* Cut short by the timeout: close says so, and the pending message failed as "maybe
     * persisted" (pulsarc.h). */
    cr_assert_eq(atomic_load(&closed_res), PULSARC_ERR_TIMEOUT, "close: %s",
                 pulsarc_result_name(atomic_load(&closed_res)));
    cr_assert_eq(h_total(), 1, "the pending message did not complete");
    cr_assert_eq(T.calls[0], 1);
    cr_assert_eq(T.res[0], PULSARC_ERR_ALREADY_CLOSED, "got %s", pulsarc_result_name(T.res[0]));
    h_finish();
}

/* ---- reconnecting to a broker that is not well yet ------------------------------------------ */

Test(client_reconnect, reconnect_through_unanswered_and_refused_handshakes)
{
    /* Answered handshakes must finish within connectionTimeoutMs: scaled for slow builds. */
    client = h_client("connectionTimeoutMs", h_ms_str(h_scaled_ms(300)), NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    h_pending_unanswered(2);
    /* First the broker accepts but never answers CONNECT, then it refuses outright. */
    mock_broker_set_ignore_connect(mb, true);
    mock_broker_cut_now(mb);
    cr_assert(h_wait_count(mb, MOCK_CONNECTS, 3, 5000),
              "the client did not give up on an unanswered handshake and retry");
    mock_broker_set_refuse(mb, true);
    mock_broker_set_ignore_connect(mb, false);
    uint64_t conns = h_count(mb, MOCK_CONNECTIONS);
    cr_assert(h_wait_count(mb, MOCK_CONNECTIONS, conns + 2, 5000));
    cr_assert_eq(h_total(), 0, "a message failed while reconnecting (no send timeout hit)");
    mock_broker_set_refuse(mb, false);
    cr_assert(h_wait_calls(2, 5000), "only %d of 2 callbacks", h_total());
    h_expect_no_more_callbacks();
    h_assert_each_once(2, PULSARC_OK);
    h_assert_order(2);
    /* The abandoned handshakes left no connection behind. */
    cr_assert(h_wait_count_at_most(mb, MOCK_OPEN_CONNECTIONS, 1, 3000));
    h_finish();
}

static atomic_int lazy_flush_calls;
static _Atomic pulsarc_result lazy_flush_res;

static void on_lazy_flushed(pulsarc_producer_t *p, pulsarc_result res, void *ctx)
{
    (void)p;
    (void)ctx;
    atomic_store(&lazy_flush_res, res);
    atomic_fetch_add(&lazy_flush_calls, 1);
}

/* A lazy partition's only waiting message fails while its op is built (too big once
 * compressed): no op was ever queued there, and a flush must still be answered. */
Test(client_reconnect, flush_answered_when_a_lazy_partitions_only_message_fails)
{
    mock_broker_set_partitions(mb, 2);
    mock_broker_set_max_message_size(mb, 1000);
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, "lazyStartPartitionedProducers", "true",
                          "messageRoutingMode", "single", "compressionType", "zlib", NULL);
    static uint8_t noise[3000];
    uint64_t x = 88172645463325252ull;
    for (size_t i = 0; i < sizeof noise; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        noise[i] = (uint8_t)x;
    }
    T.slots[0].idx = 0;
    pulsarc_message_t *m = pulsarc_message_new();
    cr_assert_eq(pulsarc_message_set_payload(m, noise, sizeof noise), PULSARC_OK);
    cr_assert_eq(pulsarc_producer_send_async(producer, m, h_on_sent, &T.slots[0]), PULSARC_OK);
    pulsarc_message_free(m);
    cr_assert_eq(pulsarc_producer_flush_async(producer, on_lazy_flushed, NULL), PULSARC_OK);
    cr_assert(h_wait_calls(1, 5000));
    cr_assert_eq(T.res[0], PULSARC_ERR_MESSAGE_TOO_BIG, "got %s", pulsarc_result_name(T.res[0]));
    cr_assert(h_wait_changed(&lazy_flush_calls, 0, 5000), "the flush was never answered");
    h_settle(mb); /* a second answer would have come */
    cr_assert_eq(atomic_load(&lazy_flush_calls), 1, "the flush was answered %d times",
                 atomic_load(&lazy_flush_calls));
    cr_assert_eq(atomic_load(&lazy_flush_res), PULSARC_ERR_MESSAGE_TOO_BIG, "flush: %s",
                 pulsarc_result_name(atomic_load(&lazy_flush_res)));
    h_finish();
}
