/* Batch containers and the batch payload layout. */
#include <criterion/criterion.h>
#include <string.h>

#include "publish/send.h"
#include "producer/batch.h"
#include "producer/records.h"
#include "producer/op_build.h"
#include "pulsarc/pulsarc.h"
#include "wire/frame.h"

static pc_msg_t *make(const char *payload, const char *key, const char *ordering, int64_t seq)
{
    pulsarc_message_t *b = pulsarc_message_new();
    pulsarc_message_set_payload(b, payload, strlen(payload));
    if (key)
        pulsarc_message_set_key(b, key);
    if (ordering)
        pulsarc_message_set_ordering_key(b, ordering, strlen(ordering));
    pc_send_t *s = pc_send_from_builder(NULL, b);
    cr_assert_not_null(s);
    pc_msg_t *m = &s->msg;
    pulsarc_message_free(b);
    m->sequence_id = seq;
    return m;
}

static void free_batch(pc_batch_t *b)
{
    for (pc_msg_t *m = b->head, *n; m; m = n) {
        n = m->next;
        pc_msg_free(m);
    }
}

Test(batch, payload_layout_matches_golden_bytes)
{
    pc_batcher_t bt;
    pc_batcher_init(&bt, false, 10, 1000);
    pc_batcher_add(&bt, make("ab", "k", NULL, 7));
    pc_batcher_add(&bt, make("c", NULL, NULL, 8));
    pc_batch_t out[1];
    cr_assert_eq(pc_batcher_take(&bt, out), 1);
    pc_buf_t buf;
    pc_buf_init(&buf);
    cr_assert_eq(pc_batch_encode(&out[0], NULL, &buf), 0);
    /* Each message: u32 size, SingleMessageMetadata, payload. The metadata is, in field
     * order: partition_key (2) "k", payload_size (3), sequence_id (8). */
    const uint8_t golden[] = {
        0x00, 0x00, 0x00, 0x07,             /* metadata size 7 */
        0x12, 0x01, 'k',                    /* partition_key = "k" */
        0x18, 0x02,                         /* payload_size = 2 */
        0x40, 0x07,                         /* sequence_id = 7 */
        'a',  'b',  0x00, 0x00, 0x00, 0x04, /* metadata size 4 */
        0x18, 0x01,                         /* payload_size = 1 */
        0x40, 0x08,                         /* sequence_id = 8 */
        'c',
    };
    cr_assert_eq(buf.len, sizeof golden);
    cr_assert_eq(memcmp(buf.data, golden, sizeof golden), 0);
    pc_buf_free(&buf);
    free_batch(&out[0]);
    pc_batcher_free(&bt);
}

Test(batch, limits_on_messages_and_bytes)
{
    pc_batcher_t bt;
    pc_batcher_init(&bt, false, 3, 10);
    pc_msg_t *a = make("12345", NULL, NULL, 1), *b = make("1234", NULL, NULL, 2),
             *c = make("12", NULL, NULL, 3);
    cr_assert(pc_batcher_fits(&bt, a));
    pc_batcher_add(&bt, a);
    cr_assert(pc_batcher_fits(&bt, b));
    pc_batcher_add(&bt, b);
    cr_assert_not(pc_batcher_fits(&bt, c), "9 + 2 bytes is over 10");
    cr_assert_not(pc_batcher_full(&bt));
    pc_batch_t out[1];
    cr_assert_eq(pc_batcher_take(&bt, out), 1);
    cr_assert_eq(out[0].count, 2);
    cr_assert(pc_batcher_empty(&bt));
    free_batch(&out[0]);
    pc_msg_free(c);
    /* An empty container takes even an oversized message. */
    pc_msg_t *big = make("0123456789abcdef", NULL, NULL, 4);
    cr_assert(pc_batcher_fits(&bt, big));
    pc_batcher_add(&bt, big);
    cr_assert(pc_batcher_full(&bt));
    pc_batcher_take(&bt, out);
    free_batch(&out[0]);
    pc_batcher_free(&bt);
}

Test(batch, key_based_groups_by_ordering_key_then_key_in_sequence_order)
{
    pc_batcher_t bt;
    pc_batcher_init(&bt, true, 100, 1000);
    pc_batcher_add(&bt, make("1", "b", NULL, 1));
    pc_batcher_add(&bt, make("2", "a", NULL, 2));
    pc_batcher_add(&bt, make("3", "b", NULL, 3));
    pc_batcher_add(&bt, make("4", "a", "z", 4)); /* the ordering key wins */
    pc_batcher_add(&bt, make("5", NULL, NULL, 5));
    pc_batch_t out[8];
    int n = pc_batcher_take(&bt, out);
    cr_assert_eq(n, 4);
    cr_assert_eq(out[0].head->sequence_id, 1);
    cr_assert_eq(out[0].count, 2, "both 'b' messages");
    cr_assert_eq(out[1].head->sequence_id, 2);
    cr_assert_eq(out[1].count, 1);
    cr_assert_eq(out[2].head->sequence_id, 4);
    cr_assert_eq(out[3].head->sequence_id, 5);
    for (int i = 0; i < n; i++)
        free_batch(&out[i]);
    pc_batcher_free(&bt);
}

Test(chunks, count_rounds_up)
{
    cr_assert_eq(pc_chunk_count(0, 100), 1);
    cr_assert_eq(pc_chunk_count(1, 100), 1);
    cr_assert_eq(pc_chunk_count(100, 100), 1);
    cr_assert_eq(pc_chunk_count(101, 100), 2);
    cr_assert_eq(pc_chunk_count(100 * 1024 * 1024, 5 * 1024 * 1024 - 600), 21);
}

Test(chunks, ops_slice_the_payload_without_copies)
{
    static uint8_t payload[2500];
    for (size_t i = 0; i < sizeof payload; i++)
        payload[i] = (uint8_t)i;
    pulsarc_message_t *b = pulsarc_message_new();
    pulsarc_message_set_payload(b, payload, sizeof payload);
    pc_send_t *s = pc_send_from_builder(NULL, b);
    cr_assert_not_null(s);
    pc_msg_t *m = &s->msg;
    pulsarc_message_free(b);
    m->sequence_id = 42;
    pc_op_params_t p = { .producer_id = 1,
                         .producer_name = "p",
                         .codec = 0,
                         .max_message_size = 5 * 1024 * 1024,
                         .chunking = true,
                         .chunk_size = 1000 };
    pc_op_t *first, *last;
    cr_assert_eq(pc_op_build_message(&p, m, &first, &last), PULSARC_OK);
    int n = 0;
    size_t total = 0;
    for (pc_op_t *op = first; op; op = op->next, n++) {
        cr_assert_eq(op->chunk_id, n);
        cr_assert_eq(op->num_chunks, 3);
        cr_assert_eq(op->sequence_id, 42);
        cr_assert_eq(op->payload, m->payload + total, "a slice of the message, not a copy");
        total += op->payload_len;
    }
    cr_assert_eq(n, 3);
    cr_assert_eq(total, sizeof payload);
    cr_assert_eq(last->payload_len, 500);
    for (pc_op_t *op = first, *next; op; op = next) {
        next = op->next;
        pc_op_release(op); /* the last release frees the shared message */
    }
}

Test(chunks, without_chunking_a_big_message_is_refused)
{
    static uint8_t payload[3000];
    pulsarc_message_t *b = pulsarc_message_new();
    pulsarc_message_set_payload(b, payload, sizeof payload);
    pc_send_t *s = pc_send_from_builder(NULL, b);
    cr_assert_not_null(s);
    pc_msg_t *m = &s->msg;
    pulsarc_message_free(b);
    m->sequence_id = 1;
    pc_op_params_t p = { .producer_id = 1, .producer_name = "p", .max_message_size = 2000 };
    pc_op_t *first, *last;
    cr_assert_eq(pc_op_build_message(&p, m, &first, &last), PULSARC_ERR_MESSAGE_TOO_BIG);
    cr_assert(strstr(pulsarc_last_error_detail(), "3000"));
    pc_msg_free(m);
}

/* A message of payload_len bytes with one property of prop_len bytes. */
static pc_msg_t *with_property(size_t payload_len, size_t prop_len)
{
    static char payload[64 * 1024], value[64 * 1024];
    cr_assert_lt(payload_len, sizeof payload);
    cr_assert_lt(prop_len, sizeof value);
    memset(value, 'v', prop_len);
    value[prop_len] = '\0';
    pulsarc_message_t *b = pulsarc_message_new();
    pulsarc_message_set_payload(b, payload, payload_len);
    pulsarc_message_set_property(b, "p", value);
    pc_send_t *s = pc_send_from_builder(NULL, b);
    cr_assert_not_null(s);
    pulsarc_message_free(b);
    s->msg.sequence_id = 1;
    return &s->msg;
}

/* Builds m alone with a broker limit of max bytes: the result, and on success the frame
 * size checked against what the broker reads (max + the framing allowance). */
static pulsarc_result build_alone(pc_msg_t *m, uint32_t max)
{
    pc_op_params_t p = { .producer_id = 1, .producer_name = "p", .max_message_size = max };
    pc_op_t *first, *last;
    pulsarc_result res = pc_op_build_message(&p, m, &first, &last);
    if (res != PULSARC_OK) {
        pc_msg_free(m);
        return res;
    }
    cr_assert_eq(first, last, "one frame");
    cr_assert_leq(first->head.len + first->payload_len, (size_t)max + PC_FRAME_OVERHEAD_ALLOWANCE);
    pc_op_release(first);
    return res;
}

/* The broker bounds a whole frame by its max message size plus the framing allowance; the
 * metadata is not held to the allowance on its own. A message goes alone when its payload
 * is within the max message size and its frame within that bound; the detail of a refusal
 * says which it broke. */
Test(chunks, metadata_counts_against_the_whole_frame)
{
    const uint32_t max = 16 * 1024;
    cr_assert_eq(build_alone(with_property(1, 16 * 1024), 5 * 1024 * 1024), PULSARC_OK, "%s",
                 pulsarc_last_error_detail());
    cr_assert_eq(build_alone(with_property(10, 20 * 1024), max), PULSARC_OK, "%s",
                 pulsarc_last_error_detail());
    cr_assert_eq(build_alone(with_property(max, 0), max), PULSARC_OK, "a payload at the limit");

    cr_assert_eq(build_alone(with_property(1, max + PC_FRAME_OVERHEAD_ALLOWANCE), max),
                 PULSARC_ERR_MESSAGE_TOO_BIG);
    const char *detail = pulsarc_last_error_detail();
    cr_assert(strstr(detail, "metadata") && strstr(detail, "no room for a payload"), "%s", detail);

    cr_assert_eq(build_alone(with_property(max, 12 * 1024), max), PULSARC_ERR_MESSAGE_TOO_BIG);
    detail = pulsarc_last_error_detail();
    cr_assert(strstr(detail, "its payload of 16384 bytes make a frame above"), "%s", detail);

    cr_assert_eq(build_alone(with_property(max + 1, 0), max), PULSARC_ERR_MESSAGE_TOO_BIG);
    detail = pulsarc_last_error_detail();
    cr_assert(strstr(detail, "payload of 16385 bytes") && strstr(detail, "chunkingEnabled"), "%s",
              detail);
}

/* The encoded bound counts keys and properties, not only payloads, and stops a batch at
 * the broker's max message size whatever batchingMaxBytes allows. */
Test(batch, encoded_size_bounds_the_batch)
{
    pc_batcher_t bt;
    pc_batcher_init(&bt, false, 1000, 1 << 30);
    pc_batcher_set_frame_limit(&bt, 200);
    pc_msg_t *a = make("0123456789", "a-rather-long-partition-key", NULL, 1);
    size_t entry = pc_batch_entry_size(a);
    cr_assert_gt(entry, 10 + strlen("a-rather-long-partition-key"), "entry %zu", entry);
    cr_assert(pc_batcher_entry_fits(&bt, a));
    pc_batcher_add(&bt, a);
    int added = 1;
    pc_msg_t *m;
    while (pc_batcher_fits(&bt, m = make("0123456789", "a-rather-long-partition-key", NULL, 2))) {
        pc_batcher_add(&bt, m);
        added++;
    }
    cr_assert_lt(added, 5, "%d entries of about %zu bytes within 200", added, entry);
    pc_batch_t out[1];
    cr_assert_eq(pc_batcher_take(&bt, out), 1);
    pc_buf_t buf;
    pc_buf_init(&buf);
    cr_assert_eq(pc_batch_encode(&out[0], NULL, &buf), 0);
    cr_assert_leq(buf.len, 200, "encoded %zu bytes", buf.len);
    pc_buf_free(&buf);
    free_batch(&out[0]);
    pc_msg_free(m);

    pc_msg_t *huge = make("x", "k", NULL, 3);
    pc_batcher_set_frame_limit(&bt, 20);
    cr_assert_not(pc_batcher_entry_fits(&bt, huge), "a message above the limit goes alone");
    pc_msg_free(huge);
    pc_batcher_free(&bt);
}

/* Key-based batches leave in the order they were opened, whatever their ids. */
Test(batch, key_based_batches_leave_in_opening_order)
{
    pc_batcher_t bt;
    pc_batcher_init(&bt, true, 100, 1000);
    pc_batcher_add(&bt, make("1", "b", NULL, -1));
    pc_batcher_add(&bt, make("2", "a", NULL, -1));
    pc_batcher_add(&bt, make("3", "b", NULL, -1));
    pc_batch_t out[2];
    cr_assert_eq(pc_batcher_take(&bt, out), 2);
    cr_assert_eq(out[0].key_len, 1);
    cr_assert_eq(out[0].key[0], 'b');
    cr_assert_eq(out[0].count, 2);
    cr_assert_eq(out[1].key[0], 'a');
    free_batch(&out[0]);
    free_batch(&out[1]);
    pc_batcher_free(&bt);
}

/* The addresses a batch keeps (producer/records.h) are its list's, in order, through the
 * order's growth; key-based batches keep one each; only batches opened while the batcher
 * is told to keep them do, and each notes the owner's count of taken messages then. */
static void assert_order_is_list(const pc_batch_t *b)
{
    cr_assert_not_null(b->order);
    cr_assert_geq(b->order_cap, b->count);
    int i = 0;
    for (const pc_msg_t *m = b->head; m; m = m->next, i++)
        cr_assert_eq(b->order[i], m, "entry %d of %d", i, b->count);
    cr_assert_eq(i, b->count);
}

Test(batch, kept_order_is_the_list_order_through_growth)
{
    uint64_t taken = 41;
    pc_batcher_t bt;
    pc_batcher_init(&bt, true, 1000, 100000);
    bt.taken = &taken;
    pc_batcher_add(&bt, make("0", "a", NULL, 0)); /* opened before keep_order: none */
    bt.keep_order = true;
    taken = 77;
    for (int i = 1; i < 300; i++) /* 200 to "b": past the first order's 64, doubled twice */
        pc_batcher_add(&bt, make("x", i % 3 ? "b" : "a", NULL, i));
    pc_batch_t out[2];
    cr_assert_eq(pc_batcher_take(&bt, out), 2);
    cr_assert_eq(out[0].key[0], 'a');
    cr_assert_null(out[0].order, "opened before the batcher kept orders");
    cr_assert_eq(out[0].opened_taken, 41);
    cr_assert_eq(out[1].key[0], 'b');
    cr_assert_eq(out[1].count, 200);
    cr_assert_eq(out[1].opened_taken, 77);
    assert_order_is_list(&out[1]);

    /* The container's slots start afresh: a batch opened after the take keeps its own. */
    pc_batcher_add(&bt, make("y", "b", NULL, 300));
    pc_batch_t again[1];
    cr_assert_eq(pc_batcher_take(&bt, again), 1);
    assert_order_is_list(&again[0]);
    cr_assert_neq(again[0].order, out[1].order);

    free_batch(&out[0]);
    free_batch(&out[1]);
    free_batch(&again[0]);
    pc_batch_forget_order(&out[1]);
    pc_batch_forget_order(&again[0]);
    cr_assert_null(again[0].order);
    cr_assert_eq(again[0].order_cap, 0);
    /* An open batch's order goes with the batcher. */
    pc_batcher_add(&bt, make("z", "c", NULL, 301));
    pc_msg_t *open = bt.batches[0].head;
    pc_batcher_free(&bt);
    pc_msg_free(open);
}

/* A built batch op takes the order and the count it was opened at. */
Test(batch, a_built_op_takes_the_order)
{
    uint64_t taken = 5;
    pc_batcher_t bt;
    pc_batcher_init(&bt, false, 1000, 100000);
    bt.taken = &taken;
    bt.keep_order = true;
    for (int i = 0; i < 70; i++)
        pc_batcher_add(&bt, make("p", NULL, NULL, i));
    pc_batch_t out[1];
    cr_assert_eq(pc_batcher_take(&bt, out), 1);
    pc_msg_t **order = out[0].order;
    pc_op_params_t p = { .max_message_size = 5 * 1024 * 1024,
                         .producer_name = "p",
                         .producer_name_len = 1 };
    pc_op_t *op = NULL;
    cr_assert_eq(pc_op_build_batch(&p, &out[0], &op), PULSARC_OK);
    cr_assert_eq(op->order, order);
    cr_assert_null(out[0].order);
    cr_assert_eq(op->opened_taken, 5);
    cr_assert_eq(op->num_messages, 70);
    int i = 0;
    for (const pc_msg_t *m = op->msgs; m; m = m->next, i++)
        cr_assert_eq(op->order[i], m);
    pc_op_release(op); /* frees the messages and the order (ASan: no leak, no double free) */
    pc_batcher_free(&bt);
}

/* When a batch counts as spread out of the caches: past PC_RECORDS_COLD_BYTES of records
 * for a fetch ahead, half as much for keeping the order; never for an owner that said
 * nothing. */
Test(batch, records_spread)
{
    uint64_t taken = 10000;
    pc_records_t r = { .before = 144, .size = 360, .taken = &taken };
    uint64_t cold = PC_RECORDS_COLD_BYTES / 360; /* messages */
    cr_assert_not(pc_records_spread(&r, taken - cold, 1));
    cr_assert(pc_records_spread(&r, taken - cold - 1, 1));
    cr_assert_not(pc_records_spread(&r, taken - cold / 2, 2));
    cr_assert(pc_records_spread(&r, taken - cold / 2 - 1, 2));
    pc_records_t none = { 0 };
    cr_assert_not(pc_records_spread(&none, 0, 1));
    r.taken = NULL;
    cr_assert_not(pc_records_spread(&r, 0, 1));
}
