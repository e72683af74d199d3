/* Limits that come from the broker and the protocol: every frame within the broker's max
 * message size with its metadata counted (the mock, like the broker, closes the
 * connection on a larger frame), messages that cannot fit even alone, and sequence ids at
 * the end of their range. */
#include "client_harness.h"

#include <stdint.h>
#include <sys/mman.h>

#include "wire/frame.h"

TestSuite(client_limits, .init = h_setup, .fini = h_teardown, .timeout = H_SUITE_TIMEOUT(30));

/* send_async message idx of len bytes with one property of prop_len bytes. */
static pulsarc_result send_with_property(pulsarc_producer_t *p, int idx, size_t len,
                                         size_t prop_len)
{
    static char value[256 * 1024];
    cr_assert_lt(prop_len, sizeof value);
    memset(value, 'v', prop_len);
    value[prop_len] = '\0';
    T.slots[idx].idx = idx;
    pulsarc_message_t *m = h_message(idx, len);
    cr_assert_eq(pulsarc_message_set_property(m, "p", value), PULSARC_OK);
    pulsarc_result r = pulsarc_producer_send_async(p, m, h_on_sent, &T.slots[idx]);
    pulsarc_message_free(m);
    return r;
}

/* batchingMaxBytes far above the broker's limit, and properties as large as the payloads:
 * batches are cut by their encoded size, so no frame is refused and nothing reconnects. */
Test(client_limits, batches_stay_within_the_broker_limit_with_metadata)
{
    mock_broker_set_max_message_size(mb, 64 * 1024);
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, "batchingEnabled", "true", "batchingMaxBytes",
                          "10000000", "batchingMaxMessages", "1000", "batchingMaxPublishDelayMs",
                          "200", NULL);
    int n = 100;
    for (int i = 0; i < n; i++)
        cr_assert_eq(send_with_property(producer, i, 1000, 1500), PULSARC_OK);
    cr_assert(h_wait_calls(n, 10000), "only %d of %d callbacks", h_total(), n);
    h_expect_no_more_callbacks();
    h_assert_each_once(n, PULSARC_OK);
    cr_assert_eq(h_count(mb, MOCK_PROTOCOL_ERRORS), 0, "the broker refused a frame");
    cr_assert_eq(h_count(mb, MOCK_CONNECTS), 1, "the client reconnected");
    cr_assert_gt(h_count(mb, MOCK_SENDS), 3, "100 x 2.5 KB cannot fit in fewer than 4 batches");
    h_finish();
}

/* A message whose metadata leaves no room for a payload in a frame the broker reads (its
 * max message size plus the framing allowance) cannot be sent, even in chunks: it fails
 * by itself with MESSAGE_TOO_BIG, a detail that says why, and the others go on. */
Test(client_limits, metadata_above_the_frame_limit_fails_alone)
{
    mock_broker_set_max_message_size(mb, 16 * 1024);
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, "batchingEnabled", "true", "chunkingEnabled", "true",
                          NULL);
    cr_assert_eq(h_send(producer, 0), PULSARC_OK);
    cr_assert_eq(send_with_property(producer, 1, 10, 16 * 1024 + PC_FRAME_OVERHEAD_ALLOWANCE),
                 PULSARC_OK);
    cr_assert_eq(h_send(producer, 2), PULSARC_OK);
    cr_assert(h_wait_calls(3, 5000), "only %d of 3 callbacks", h_total());
    h_expect_no_more_callbacks();
    cr_assert_eq(h_total(), 3, "%d callbacks for 3 messages", h_total());
    cr_assert_eq(T.res[0], PULSARC_OK);
    cr_assert_eq(T.res[1], PULSARC_ERR_MESSAGE_TOO_BIG, "got %s", pulsarc_result_name(T.res[1]));
    cr_assert(strstr(T.detail[1], "metadata") && strstr(T.detail[1], "no room for a payload") &&
                  strstr(T.detail[1], "26624 bytes"),
              "detail: %s", T.detail[1]);
    cr_assert_eq(T.res[2], PULSARC_OK);
    cr_assert_eq(h_count(mb, MOCK_PROTOCOL_ERRORS), 0);
    cr_assert_eq(h_count(mb, MOCK_CONNECTS), 1);
    h_finish();
}

/* The broker bounds a whole frame by its max message size plus the framing allowance, not
 * the metadata by the allowance: unbatched, a key of 12,000 characters and a property of
 * 16 KiB beside a one-byte payload are stored (each frame within 5 MiB + 10 KiB), and so
 * is a 20 KiB property when the broker's limit is 16 KiB (a frame of about 21 KiB, within
 * 26 KiB), as the mock broker, like the real one, reads it. */
Test(client_limits, large_metadata_unbatched_is_stored)
{
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, "batchingEnabled", "false", NULL);
    static char key[12001];
    memset(key, 'k', sizeof key - 1);
    T.slots[0].idx = 0;
    pulsarc_message_t *m = pulsarc_message_new();
    cr_assert_eq(pulsarc_message_set_payload(m, "x", 1), PULSARC_OK);
    cr_assert_eq(pulsarc_message_set_key(m, key), PULSARC_OK);
    cr_assert_eq(pulsarc_producer_send_async(producer, m, h_on_sent, &T.slots[0]), PULSARC_OK);
    pulsarc_message_free(m);
    cr_assert_eq(send_with_property(producer, 1, 1, 16 * 1024), PULSARC_OK);
    cr_assert(h_wait_calls(2, 5000), "only %d of 2 callbacks", h_total());
    cr_assert_eq(T.res[0], PULSARC_OK, "key: %s: %s", pulsarc_result_name(T.res[0]), T.detail[0]);
    cr_assert_eq(T.res[1], PULSARC_OK, "property: %s: %s", pulsarc_result_name(T.res[1]),
                 T.detail[1]);
    mock_send_t s = h_get_send(mb, 0);
    cr_assert_not_null(s.metadata);
    cr_assert_str_eq(s.metadata->partition_key, key);
    cr_assert_eq(s.payload_len, 1);
    mock_send_free(&s);
    s = h_get_send(mb, 1);
    cr_assert_not_null(s.metadata);
    cr_assert_eq(s.metadata->n_properties, 1);
    cr_assert_eq(strlen(s.metadata->properties[0]->value), 16 * 1024);
    mock_send_free(&s);
    h_finish();
}

Test(client_limits, metadata_above_max_message_size_within_the_frame_is_stored)
{
    mock_broker_set_max_message_size(mb, 16 * 1024);
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, "batchingEnabled", "true", "chunkingEnabled", "true",
                          NULL);
    cr_assert_eq(send_with_property(producer, 0, 10, 20 * 1024), PULSARC_OK);
    cr_assert(h_wait_calls(1, 5000), "no callback");
    cr_assert_eq(T.res[0], PULSARC_OK, "%s: %s", pulsarc_result_name(T.res[0]), T.detail[0]);
    cr_assert_eq(h_count(mb, MOCK_PROTOCOL_ERRORS), 0, "the broker refused a frame");
    cr_assert_eq(h_count(mb, MOCK_SENDS), 1, "sent in one frame");
    h_finish();
}

/* Without chunking, a payload at the limit plus large metadata would make a frame the
 * broker refuses: it fails with MESSAGE_TOO_BIG instead of looping on reconnects. */
Test(client_limits, unbatched_frame_counts_its_metadata)
{
    mock_broker_set_max_message_size(mb, 16 * 1024);
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    cr_assert_eq(send_with_property(producer, 0, 16 * 1024, 12 * 1024), PULSARC_OK);
    cr_assert_eq(h_send(producer, 1), PULSARC_OK);
    cr_assert(h_wait_calls(2, 5000), "only %d of 2 callbacks", h_total());
    h_expect_no_more_callbacks();
    cr_assert_eq(h_total(), 2, "%d callbacks for 2 messages", h_total());
    cr_assert_eq(T.res[0], PULSARC_ERR_MESSAGE_TOO_BIG, "got %s", pulsarc_result_name(T.res[0]));
    cr_assert_eq(T.res[1], PULSARC_OK);
    cr_assert_eq(h_count(mb, MOCK_PROTOCOL_ERRORS), 0, "the broker refused a frame");
    h_finish();
}

/* initialSequenceId at its maximum: the next id is INT64_MAX, and after it there is none;
 * the send fails with a named error instead of overflowing. */
Test(client_limits, sequence_ids_end_without_overflow)
{
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, "initialSequenceId", "9223372036854775806", NULL);
    h_send_range(producer, 0, 2);
    cr_assert(h_wait_calls(2, 5000), "only %d of 2 callbacks", h_total());
    h_expect_no_more_callbacks();
    cr_assert_eq(h_total(), 2, "%d callbacks for 2 messages", h_total());
    cr_assert_eq(T.res[0], PULSARC_OK, "got %s", pulsarc_result_name(T.res[0]));
    cr_assert_eq(T.res[1], PULSARC_ERR_INVALID_ARGUMENT, "got %s", pulsarc_result_name(T.res[1]));
    cr_assert(strstr(T.detail[1], "exhausted"), "detail: %s", T.detail[1]);
    mock_send_t s = h_get_send(mb, 0);
    cr_assert_eq(s.sequence_id, (uint64_t)INT64_MAX);
    mock_send_free(&s);
    cr_assert_eq(h_count(mb, MOCK_SENDS), 1);
    h_finish();
}

/* An explicit id of INT64_MAX works, and does not wrap the automatic ids around. */
Test(client_limits, explicit_max_sequence_id)
{
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    T.slots[0].idx = 0;
    pulsarc_message_t *m = h_message(0, 0);
    cr_assert_eq(pulsarc_message_set_sequence_id(m, INT64_MAX), PULSARC_OK);
    cr_assert_eq(pulsarc_producer_send_async(producer, m, h_on_sent, &T.slots[0]), PULSARC_OK);
    pulsarc_message_free(m);
    cr_assert_eq(h_send(producer, 1), PULSARC_OK);
    cr_assert(h_wait_calls(2, 5000));
    cr_assert_eq(T.res[0], PULSARC_OK);
    cr_assert_eq(T.res[1], PULSARC_ERR_INVALID_ARGUMENT, "got %s", pulsarc_result_name(T.res[1]));
    h_finish();
}

static void count_free(void *payload, size_t len, void *ctx)
{
    (void)payload;
    (void)len;
    (*(int *)ctx)++;
}

/* A payload of 2 GiB or more cannot be described by the protocol's 32-bit size fields:
 * the send is refused at once, before any byte of it is read (the mapping is never
 * touched, so the test costs no memory). */
Test(client_limits, payload_of_2_gib_is_refused_at_send)
{
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, "chunkingEnabled", "true", NULL);
    size_t len = (size_t)INT32_MAX + 1;
    void *big = mmap(NULL, len, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    cr_assert_neq(big, MAP_FAILED);
    int freed = 0;
    pulsarc_message_t *m = pulsarc_message_new();
    cr_assert_eq(pulsarc_message_set_payload_borrowed(m, big, len, count_free, &freed), PULSARC_OK);
    pulsarc_result r = pulsarc_producer_send_async(producer, m, h_on_sent, &T.slots[0]);
    cr_assert_eq(r, PULSARC_ERR_MESSAGE_TOO_BIG, "got %s", pulsarc_result_name(r));
    cr_assert(strstr(pulsarc_last_error_detail(), "protocol"), "detail: %s",
              pulsarc_last_error_detail());
    pulsarc_message_free(m);
    cr_assert_eq(freed, 1, "the refused payload was not handed back");
    munmap(big, len);
    cr_assert_eq(h_count(mb, MOCK_SENDS), 0);
    h_finish();
}

/* What memoryLimitBytes counts for each pending message besides its payload: its record
 * (docs/configuration.md), 512 bytes; a 600-byte payload with nothing else beside it
 * takes a 2 KiB block, which counts whole: the payload as payload, the rest as the record. */
#define RECORD 512
#define RECORD_OF_600 (2048 - 600)

/* memoryLimitBytes counts what is held until the receipt: the message's record, its
 * payload, and a second copy when the loop makes one (a batch's payload, a compressed
 * frame). send_len sends 600 bytes with the receipts held, so the charge is read while
 * both copies exist. */
static void expect_charge(const char *key, const char *value, uint64_t want)
{
    client = h_client(NULL);
    /* Batching off unless the key turns it on, so each case has one copy-maker. */
    producer = h_producer(client, H_TOPIC, "batchingEnabled", "false", key, value, NULL);
    mock_broker_set_receipt_mode(mb, MOCK_RECEIPTS_HOLD);
    cr_assert_eq(h_send_len(producer, 0, 600), PULSARC_OK);
    cr_assert_eq(pulsarc_client_memory_used(client), want, "%s=%s: %lld bytes charged", key, value,
                 (long long)pulsarc_client_memory_used(client));
    h_release_held_expect_freed(mb, client, 1);
    h_finish();
}

Test(client_limits, memory_charge_of_a_batched_message_counts_the_batch_copy)
{
    expect_charge("batchingEnabled", "true", RECORD_OF_600 + 2 * 600);
}

Test(client_limits, memory_charge_of_a_compressed_message_counts_the_compressed_copy)
{
    expect_charge("compressionType", "zlib", RECORD_OF_600 + 2 * 600);
}

Test(client_limits, memory_charge_of_a_plain_unbatched_message_is_its_payload)
{
    expect_charge("compressionType", "none", RECORD_OF_600 + 600);
}

/* Small messages: what each holds is mostly its record, so a limit that counted payloads
 * alone would let memory grow far past it (issue 20: 188 MB with 64 MiB at 1000
 * partitions). 19 records of 512 bytes and 10-byte payloads fit in 10,000 bytes, the 20th
 * does not. */
Test(client_limits, memory_limit_counts_each_pending_messages_record)
{
    client = h_client("memoryLimitBytes", "10000", NULL);
    producer = h_producer(client, H_TOPIC, "batchingEnabled", "false", NULL);
    mock_broker_set_receipt_mode(mb, MOCK_RECEIPTS_HOLD);
    int admitted = 0;
    pulsarc_result r;
    while (admitted < 40 && (r = h_send_len(producer, admitted, 10)) == PULSARC_OK)
        admitted++;
    cr_assert_eq(admitted, 19, "%d messages of 10 bytes admitted under 10,000 bytes", admitted);
    cr_assert_eq(r, PULSARC_ERR_MEMORY_LIMIT, "got %s", pulsarc_result_name(r));
    cr_assert_eq(pulsarc_client_memory_used(client), 19 * (RECORD + 10));
    h_release_held_expect_freed(mb, client, 19);
    h_finish();
}
