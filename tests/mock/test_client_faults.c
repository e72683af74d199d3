/* The client against the mock broker: bytes that are not a valid frame, connections cut
 * in the middle of traffic, keep-alive, and a broker that goes away and comes back.
 * Each fault is injected while messages are pending; the client must reconnect, resend,
 * and end every message with exactly one callback. */
#include "client_harness.h"

#include "wire/frame.h"

TestSuite(client_faults, .init = h_setup, .fini = h_teardown, .timeout = H_SUITE_TIMEOUT(30));

/* One message whose receipt is suppressed sits pending; inject() then breaks the
 * connection from the broker's side. The client must drop the connection, reconnect, and
 * resend the message, which then succeeds exactly once. */
static void pending_message_survives(int (*inject)(void), const char *log_needle)
{
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    mock_broker_set_receipt_mode(mb, MOCK_RECEIPTS_SUPPRESS);
    cr_assert_eq(h_send(producer, 0), PULSARC_OK);
    cr_assert(h_wait_sends(mb, 1, 3000));
    h_expect_no_more_callbacks();
    cr_assert_eq(h_total(), 0, "a callback without a receipt");
    cr_assert_eq(pulsarc_producer_pending_count(producer), 1);

    mock_broker_set_receipt_mode(mb, MOCK_RECEIPTS_NORMAL);
    int reached = inject();
    cr_assert_eq(reached, 1, "the fault reached %d connections, want 1", reached);
    cr_assert(h_wait_calls(1, 5000), "the pending message never completed");
    h_expect_no_more_callbacks();
    h_assert_each_once(1, PULSARC_OK);
    cr_assert_eq(h_total(), 1);
    cr_assert_eq(pulsarc_producer_pending_count(producer), 0);

    /* The client reconnected and resent the same sequence id on the new connection. */
    cr_assert_eq(h_count(mb, MOCK_CONNECTS), 2);
    cr_assert_eq(h_count(mb, MOCK_PRODUCERS), 2);
    cr_assert_eq(h_count(mb, MOCK_SENDS), 2);
    mock_send_t a = h_get_send(mb, 0), b = h_get_send(mb, 1);
    cr_assert_eq(a.sequence_id, b.sequence_id);
    cr_assert_neq(a.connection, b.connection);
    cr_assert(b.duplicate, "the resend should look like a duplicate to the broker");
    cr_assert_eq(h_send_index(&b), 0);
    mock_send_free(&a);
    mock_send_free(&b);
    /* The client, not the broker, found the bytes bad. */
    cr_assert_eq(h_count(mb, MOCK_PROTOCOL_ERRORS), 0);
    if (log_needle)
        cr_assert(h_log_contains(log_needle), "no \"%s\" in the client's log", log_needle);

    /* And the producer keeps working. */
    cr_assert_eq(h_send_sync(producer, 1), PULSARC_OK);
}

static int inject_garbage(void)
{
    return mock_broker_send_garbage(mb);
}

/* A frame whose command bytes are not a BaseCommand: field 2 (connect) claims 127 bytes,
 * two follow. */
static const uint8_t unparsable_frame[] = { 0, 0, 0, 8, 0, 0, 0, 4, 0x12, 0x7f, 0x01, 0x02 };

static int inject_unparsable(void)
{
    return mock_broker_send_raw(mb, unparsable_frame, sizeof unparsable_frame);
}

/* The command size claims more than the frame holds. */
static const uint8_t malformed_frame[] = { 0, 0, 0, 6, 0, 0, 0, 40, 0x08, 0x12 };

static int inject_malformed(void)
{
    return mock_broker_send_raw(mb, malformed_frame, sizeof malformed_frame);
}

/* A well-formed SEND_RECEIPT frame whose required fields are missing. */
static int inject_receipt_without_fields(void)
{
    /* BaseCommand { type = SEND_RECEIPT (7), send_receipt (field 7) = {} } */
    static const uint8_t f[] = { 0, 0, 0, 8, 0, 0, 0, 4, 0x08, 0x07, 0x3a, 0x00 };
    return mock_broker_send_raw(mb, f, sizeof f);
}

static int inject_truncated_reply(void)
{
    /* A receipt is the next thing the mock writes: only half of it goes out, then EOF. */
    mock_broker_cut_next_reply(mb);
    return mock_broker_send_ping(mb);
}

Test(client_faults, garbage_frame_while_pending)
{
    pending_message_survives(inject_garbage, "protocol error");
    h_finish();
}

Test(client_faults, unparsable_command_while_pending)
{
    /* The test's own bytes must really be unparsable. */
    pc_frame_reader_t r;
    pc_frame_reader_init(&r, 1 << 20);
    cr_assert_eq(pc_frame_reader_feed(&r, unparsable_frame, sizeof unparsable_frame), 0);
    pc_frame_t f;
    cr_assert_eq(pc_frame_reader_next(&r, &f), PC_FRAME_OK);
    cr_assert_null(pc_frame_unpack_command(&f));
    pc_frame_reader_free(&r);

    pending_message_survives(inject_unparsable, "does not parse");
    h_finish();
}

Test(client_faults, malformed_frame_while_pending)
{
    pc_frame_reader_t r;
    pc_frame_reader_init(&r, 1 << 20);
    cr_assert_eq(pc_frame_reader_feed(&r, malformed_frame, sizeof malformed_frame), 0);
    pc_frame_t f;
    cr_assert_eq(pc_frame_reader_next(&r, &f), PC_FRAME_MALFORMED);
    pc_frame_reader_free(&r);

    pending_message_survives(inject_malformed, "protocol error");
    h_finish();
}

Test(client_faults, receipt_missing_required_fields_while_pending)
{
    pending_message_survives(inject_receipt_without_fields, NULL);
    h_finish();
}

Test(client_faults, truncated_frame_then_eof_while_pending)
{
    /* send_ping writes a PING: that is the reply cut in half. */
    pending_message_survives(inject_truncated_reply, NULL);
    h_finish();
}

/* ---- cuts with many messages in flight ------------------------------------------------- */

static void hundred_in_flight_then(void (*cut)(void), int expect_min_connections)
{
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    /* Receipts lag behind so that the cut finds messages both unanswered and unsent. */
    mock_broker_set_receipt_delay(mb, 20);
    h_send_range(producer, 0, 100);
    cut();
    cr_assert(h_wait_calls(100, 15000), "only %d of 100 callbacks", h_total());
    h_expect_no_more_callbacks();
    h_assert_each_once(100, PULSARC_OK);
    h_assert_order(100);
    cr_assert_eq(pulsarc_producer_pending_count(producer), 0);
    int conns = h_assert_seq_in_order_per_connection(mb);
    cr_assert_geq(conns, expect_min_connections, "SENDs on %d connection(s)", conns);
    cr_assert_geq(h_count(mb, MOCK_CONNECTS), 2);

    /* Every message reached the broker, and the ids the callbacks got are distinct. */
    bool seen[100] = { false };
    size_t n = (size_t)h_count(mb, MOCK_SENDS);
    for (size_t i = 0; i < n; i++) {
        mock_send_t s = h_get_send(mb, i);
        int idx = h_send_index(&s);
        cr_assert(idx >= 0 && idx < 100, "SEND %zu carries no known payload", i);
        cr_assert_eq(s.sequence_id, (uint64_t)idx, "message %d went out as sequence id %llu", idx,
                     (unsigned long long)s.sequence_id);
        seen[idx] = true;
        mock_send_free(&s);
    }
    for (int i = 0; i < 100; i++)
        cr_assert(seen[i], "message %d never reached the broker", i);
    for (int i = 1; i < 100; i++)
        cr_assert(T.entry[i] != T.entry[i - 1] || T.ledger[i] != T.ledger[i - 1],
                  "messages %d and %d got the same id", i - 1, i);
    cr_assert_eq(h_count(mb, MOCK_PROTOCOL_ERRORS), 0);
}

static void cut_when_30_arrived(void)
{
    cr_assert(h_wait_sends(mb, 30, 5000));
    mock_broker_cut_now(mb);
}

Test(client_faults, cut_now_with_100_in_flight)
{
    hundred_in_flight_then(cut_when_30_arrived, 2);
    h_finish();
}

/* The size of a SEND frame the client wrote, rebuilt from what the mock recorded. */
static size_t send_frame_size(const mock_send_t *s)
{
    Pulsar__Proto__CommandSend send = PULSAR__PROTO__COMMAND_SEND__INIT;
    send.producer_id = s->producer_id;
    send.sequence_id = s->sequence_id;
    send.has_num_messages = true;
    send.num_messages = s->num_messages;
    if (s->has_highest_sequence_id) {
        send.has_highest_sequence_id = true;
        send.highest_sequence_id = s->highest_sequence_id;
    }
    Pulsar__Proto__BaseCommand cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__SEND;
    cmd.send = &send;
    size_t cmd_len = pulsar__proto__base_command__get_packed_size(&cmd);
    /* total size + command size + command + magic + checksum + metadata size + ... */
    return 4 + 4 + cmd_len + 2 + 4 + 4 + s->metadata_raw_len + s->payload_len;
}

Test(client_faults, cut_after_bytes_mid_frame_with_100_in_flight)
{
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    /* Learn the size of this producer's frames from a first message (sequence ids stay
     * below 128 and payloads are all 40 bytes, so every frame of the run has the same
     * size). */
    cr_assert_eq(h_send_len(producer, 0, 40), PULSARC_OK);
    cr_assert(h_wait_calls(1, 3000));
    mock_send_t first = h_get_send(mb, 0);
    size_t frame = send_frame_size(&first);
    mock_send_free(&first);
    cr_assert_gt(frame, 20);

    /* 20 whole frames, then half of the 21st. */
    mock_broker_set_receipt_delay(mb, 10);
    mock_broker_cut_after_bytes(mb, 20 * frame + frame / 2);
    h_send_range_len(producer, 1, 101, 40);
    cr_assert(h_wait_calls(101, 15000), "only %d of 101 callbacks", h_total());
    h_expect_no_more_callbacks();
    h_assert_each_once(101, PULSARC_OK);
    h_assert_order(101);
    cr_assert_eq(pulsarc_producer_pending_count(producer), 0);
    h_assert_seq_in_order_per_connection(mb);

    /* The cut hit where intended: exactly 1 + 20 SENDs on the first connection. */
    size_t n = (size_t)h_count(mb, MOCK_SENDS);
    size_t on_first = 0;
    for (size_t i = 0; i < n; i++) {
        mock_send_t s = h_get_send(mb, i);
        if (s.connection == 1)
            on_first++;
        mock_send_free(&s);
    }
    cr_assert_eq(on_first, 21, "%zu SENDs on the first connection", on_first);
    cr_assert_geq(h_count(mb, MOCK_CONNECTS), 2);
    cr_assert_eq(h_count(mb, MOCK_PROTOCOL_ERRORS), 0);
    h_finish();
}

/* ---- keep-alive ------------------------------------------------------------------------- */

Test(client_faults, keepalive_drops_silent_broker)
{
    mock_broker_set_answer_pings(mb, false);
    client = h_client("keepAliveIntervalSeconds", "1", NULL);
    /* t0 before creation: the broker's last frame (PRODUCER_SUCCESS) comes after it, and
     * the client cannot give up before 2 s of silence after that frame. */
    uint64_t t0 = h_now_ms();
    producer = h_producer(client, H_TOPIC, NULL);
    uint64_t created = h_now_ms() - t0;
    cr_assert_eq(h_count(mb, MOCK_CONNECTS), 1);
    /* Pings after 1 s of silence, gives up after 2 s without an answer, reconnects. */
    cr_assert(h_let_time_pass_until_count(mb, MOCK_CONNECTS, 2, 5000),
              "the client kept a connection whose broker never answers pings");
    uint64_t elapsed = h_now_ms() - t0;
    cr_assert_geq(h_count(mb, MOCK_PINGS), 1, "the client never pinged");
    cr_assert_geq(elapsed, 2000 - 10, "dropped after %llu ms", (unsigned long long)elapsed);
    /* Nominal: 2 s of silence plus a 100 ms keep-alive tick, after creation. */
    cr_assert_leq(elapsed, h_upper_ms(created + 2100), "dropped after %llu ms (creation: %llu ms)",
                  (unsigned long long)elapsed, (unsigned long long)created);
    cr_assert(h_wait_count(mb, MOCK_PRODUCERS, 2, 3000), "producer not re-registered");
    cr_assert_eq(h_count(mb, MOCK_CONNECTIONS), 2);
    /* The new connection serves sends. */
    cr_assert_eq(h_send_sync(producer, 0), PULSARC_OK);
    h_finish();
}

Test(client_faults, keepalive_keeps_answering_broker)
{
    client = h_client("keepAliveIntervalSeconds", "1", NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    /* Three pings, one per second of silence: a client that did not count the PONGs would
     * give the connection up 2 s after the broker's last other frame, before its second
     * ping on that connection, and reconnect. */
    cr_assert(h_let_time_pass_until_count(mb, MOCK_PINGS, 3, 5000), "only %llu pings",
              (unsigned long long)h_count(mb, MOCK_PINGS));
    /* The broker answered the pings: still the first connection. */
    cr_assert_geq(h_count(mb, MOCK_PINGS), 1);
    cr_assert_eq(h_count(mb, MOCK_CONNECTS), 1);
    cr_assert_eq(h_count(mb, MOCK_OPEN_CONNECTIONS), 1);
    h_finish();
}

Test(client_faults, answers_broker_ping)
{
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    int n = mock_broker_send_ping(mb);
    cr_assert_eq(n, 1);
    cr_assert(h_wait_count(mb, MOCK_PONGS, 1, 3000), "no PONG for the broker's PING");
    cr_assert_eq(mock_broker_send_ping(mb), 1);
    cr_assert(h_wait_count(mb, MOCK_PONGS, 2, 3000));
    cr_assert_eq(h_count(mb, MOCK_CONNECTS), 1);
    h_finish();
}

/* ---- the broker goes away ---------------------------------------------------------------- */

Test(client_faults, broker_restart_resends_pending)
{
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    mock_broker_set_receipt_mode(mb, MOCK_RECEIPTS_SUPPRESS);
    h_send_range(producer, 0, 2);
    cr_assert(h_wait_sends(mb, 2, 3000));
    cr_assert_eq(mock_broker_set_down(mb, true), 0);
    mock_broker_set_receipt_mode(mb, MOCK_RECEIPTS_NORMAL);
    /* Sent while the broker is away: queued, not failed, also once reconnecting failed. */
    h_send_range(producer, 2, 4);
    int retries = h_log_count("reconnecting in");
    cr_assert(h_wait_log_count("reconnecting in", retries + 2, 3000),
              "the producer did not keep trying to reconnect");
    cr_assert_eq(h_total(), 0, "a message failed while the broker was down");
    cr_assert_eq(pulsarc_producer_pending_count(producer), 4);
    cr_assert_eq(mock_broker_set_down(mb, false), 0);
    cr_assert(h_wait_calls(4, 5000), "only %d of 4 callbacks", h_total());
    h_expect_no_more_callbacks();
    h_assert_each_once(4, PULSARC_OK);
    h_assert_order(4);
    h_assert_seq_in_order_per_connection(mb);
    cr_assert_eq(h_count(mb, MOCK_CONNECTS), 2);
    h_finish();
}

Test(client_faults, send_timeout_while_broker_down)
{
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, "sendTimeoutMs", "400", NULL);
    cr_assert_eq(mock_broker_set_down(mb, true), 0);
    uint64_t t0 = h_now_ms();
    h_send_range(producer, 0, 3);
    cr_assert(h_wait_calls(3, 3000), "only %d of 3 callbacks", h_total());
    uint64_t elapsed = h_now_ms() - t0;
    h_assert_each_once(3, PULSARC_ERR_SEND_TIMEOUT);
    for (int i = 0; i < 3; i++)
        cr_assert(strstr(T.detail[i], "not sent"), "never written, yet: %s", T.detail[i]);
    /* No earlier than sendTimeoutMs after the sends (t0 before them; less some rounding). */
    cr_assert_geq(elapsed, 400 - 10, "timed out after %llu ms", (unsigned long long)elapsed);
    cr_assert_eq(pulsarc_producer_pending_count(producer), 0);
    cr_assert_eq(h_count(mb, MOCK_SENDS), 0);

    /* Back up: later messages go through, the timed-out ones are not resent. Message 3
     * goes once the producer is registering again, so that its short send timeout does not
     * also cover the reconnect backoff. */
    cr_assert_eq(mock_broker_set_down(mb, false), 0);
    cr_assert(h_wait_count(mb, MOCK_PRODUCERS, 2, 5000), "the producer never re-registered");
    cr_assert_eq(h_send(producer, 3), PULSARC_OK);
    cr_assert(h_wait_calls(4, 5000));
    cr_assert_eq(T.res[3], PULSARC_OK, "got %s", pulsarc_result_name(T.res[3]));
    cr_assert_eq(h_count(mb, MOCK_SENDS), 1);
    mock_send_t s = h_get_send(mb, 0);
    cr_assert_eq(h_send_index(&s), 3);
    mock_send_free(&s);
    h_finish();
}

/* A topic fenced for ever: the broker failed a write while the topic was being
 * terminated, closed the producer and answers every registration with ServiceNotReady
 * (TopicFencedException), which is retried by design, as the official clients do. No
 * terminal error ever comes and nothing is stored again: each message must still end, with
 * SEND_TIMEOUT ("may have been persisted" for those written before the fence, "not sent"
 * for those after), while the producer keeps trying; flush, close and destroy return. */
Test(client_faults, fenced_for_ever_times_out_each_message_and_never_hangs)
{
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, "sendTimeoutMs", "300", NULL);
    mock_broker_set_receipt_mode(mb, MOCK_RECEIPTS_HOLD);
    h_send_range(producer, 0, 2);
    cr_assert(h_wait_count(mb, MOCK_HELD_RECEIPTS, 2, 3000), "the sends never arrived");
    h_fence_for_ever(mb);
    cr_assert(h_wait_count(mb, MOCK_PRODUCERS, 2, 3000), "the producer did not re-register");
    h_send_range(producer, 2, 4);

    pulsarc_result r = pulsarc_producer_flush(producer);
    cr_assert_eq(r, PULSARC_ERR_SEND_TIMEOUT, "flush: %s (%s)", pulsarc_result_name(r),
                 pulsarc_last_error_detail());
    h_assert_each_once(4, PULSARC_ERR_SEND_TIMEOUT);
    for (int i = 0; i < 2; i++)
        cr_assert(strstr(T.detail[i], "may have been persisted"), "message %d: %s", i, T.detail[i]);
    for (int i = 2; i < 4; i++)
        cr_assert(strstr(T.detail[i], "not sent"), "message %d: %s", i, T.detail[i]);
    cr_assert_eq(pulsarc_producer_pending_count(producer), 0);
    /* Still trying, with backoff: the fence is not terminal. */
    uint64_t tries = h_count(mb, MOCK_PRODUCERS);
    cr_assert(h_wait_count(mb, MOCK_PRODUCERS, tries + 2, 3000), "the producer gave up");

    /* Close cannot reach the broker's producer: it ends within operationTimeoutMs (3 s). */
    uint64_t t0 = h_now_ms();
    pulsarc_producer_close(producer);
    cr_assert_lt(h_now_ms() - t0, h_upper_ms(3000), "close took %llu ms",
                 (unsigned long long)(h_now_ms() - t0));
    cr_assert_eq(h_send(producer, 4), PULSARC_ERR_ALREADY_CLOSED);
    cr_assert_eq(h_count(mb, MOCK_SENDS), 2, "a message was written while fenced");
    h_finish();
}

/* A broker that resets the connection while the client is writing: the client's next
 * write fails with EPIPE, which must not raise SIGPIPE in the application (the test
 * process does not ignore SIGPIPE, so a raised one kills it and the test fails). */
Test(client_faults, reset_while_writing_does_not_raise_sigpipe)
{
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    int sent = 0;
    for (int round = 0; round < 3; round++) {
        uint64_t connects = h_count(mb, MOCK_CONNECTS);
        /* The mock closes with unread input (the kernel answers with RST) while the
         * client still has frames of 4 KiB queued. */
        mock_broker_cut_after_bytes(mb, 3000);
        h_send_range_len(producer, sent, sent + 60, 4096);
        sent += 60;
        cr_assert(h_wait_count(mb, MOCK_CONNECTS, connects + 1, 5000), "round %d: no reconnect",
                  round);
    }
    cr_assert(h_wait_calls(sent, 15000), "only %d of %d callbacks", h_total(), sent);
    h_expect_no_more_callbacks();
    h_assert_each_once(sent, PULSARC_OK);
    h_assert_order(sent);
    h_assert_seq_in_order_per_connection(mb);
    h_finish();
}
