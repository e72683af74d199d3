/* Message builder, accepted-message copies and message ids. */
#include <criterion/criterion.h>
#include <string.h>

#include "publish/send.h"
#include "producer/message_id.h"
#include "pulsarc/pulsarc.h"

static int freed_count;
static void count_free(void *payload, size_t len, void *ctx)
{
    freed_count++;
    cr_assert_eq(len, 5);
    cr_assert_eq(ctx, (void *)0x1);
}

Test(message, builder_rejects_bad_arguments)
{
    pulsarc_message_t *m = pulsarc_message_new();
    cr_assert_eq(pulsarc_message_set_payload(NULL, "x", 1), PULSARC_ERR_INVALID_ARGUMENT);
    cr_assert_eq(pulsarc_message_set_payload(m, NULL, 3), PULSARC_ERR_INVALID_ARGUMENT);
    cr_assert_eq(pulsarc_message_set_payload(m, NULL, 0), PULSARC_OK, "empty payload is fine");
    cr_assert_eq(pulsarc_message_set_key(m, NULL), PULSARC_ERR_INVALID_ARGUMENT);
    cr_assert_eq(pulsarc_message_set_property(m, "k", NULL), PULSARC_ERR_INVALID_ARGUMENT);
    cr_assert_eq(pulsarc_message_set_sequence_id(m, -2), PULSARC_ERR_INVALID_ARGUMENT);
    cr_assert_eq(pulsarc_message_set_payload_borrowed(m, "x", 1, NULL, NULL),
                 PULSARC_ERR_INVALID_ARGUMENT);
    pulsarc_message_free(m);
    pulsarc_message_free(NULL);
}

Test(message, accepted_copy_owns_everything)
{
    pulsarc_message_t *b = pulsarc_message_new();
    char payload[] = "payload";
    pulsarc_message_set_payload(b, payload, 7);
    pulsarc_message_set_key(b, "k1");
    pulsarc_message_set_ordering_key(b, "ok", 2);
    pulsarc_message_set_property(b, "a", "1");
    pulsarc_message_set_property(b, "b", "2");
    pulsarc_message_set_property(b, "a", "3"); /* replaces */
    pulsarc_message_set_event_time(b, 77);
    pc_send_t *s = pc_send_from_builder(NULL, b);
    cr_assert_not_null(s);
    pc_msg_t *m = &s->msg;
    memset(payload, 'X', 7);
    pulsarc_message_free(b);
    cr_assert_eq(m->payload_len, 7);
    cr_assert_eq(memcmp(m->payload, "payload", 7), 0, "payload was copied at send time");
    cr_assert_str_eq(m->key, "k1");
    cr_assert_eq(m->ordering_key_len, 2);
    cr_assert_eq(m->n_props, 2);
    cr_assert_str_eq(m->props[0].key, "a");
    cr_assert_str_eq(m->props[0].value, "3");
    cr_assert_eq(m->event_time, 77);
    cr_assert_eq(m->sequence_id, -1);
    pc_msg_free(m);
}

Test(message, borrowed_payload_is_taken_over_and_freed_once)
{
    freed_count = 0;
    pulsarc_message_t *b = pulsarc_message_new();
    pulsarc_message_set_payload_borrowed(b, "hello", 5, count_free, (void *)0x1);
    pc_send_t *s = pc_send_from_builder(NULL, b);
    cr_assert_not_null(s);
    pc_msg_t *m = &s->msg;
    cr_assert_eq(m->payload_len, 5);
    cr_assert_eq(b->payload_len, 0, "the builder no longer holds it");
    pulsarc_message_free(b);
    cr_assert_eq(freed_count, 0);
    pc_msg_free(m);
    cr_assert_eq(freed_count, 1);

    /* Never sent: freeing the builder releases it. */
    b = pulsarc_message_new();
    pulsarc_message_set_payload_borrowed(b, "hello", 5, count_free, (void *)0x1);
    pulsarc_message_free(b);
    cr_assert_eq(freed_count, 2);
}

Test(message_id, prints_and_round_trips_through_serialisation)
{
    pulsarc_message_id_t id;
    pc_message_id_init(&id, 12, 34, 5);
    id.batch_index = 2;
    id.batch_size = 10;
    char s[64];
    pulsarc_message_id_str(&id, s, sizeof s);
    cr_assert_str_eq(s, "12:34:5:2");
    uint8_t *bytes;
    size_t len;
    cr_assert_eq(pulsarc_message_id_serialize(&id, &bytes, &len), PULSARC_OK);
    pulsarc_message_id_t *back;
    cr_assert_eq(pulsarc_message_id_deserialize(bytes, len, &back), PULSARC_OK);
    cr_assert_eq(pulsarc_message_id_ledger(back), 12);
    cr_assert_eq(pulsarc_message_id_entry(back), 34);
    cr_assert_eq(pulsarc_message_id_partition(back), 5);
    cr_assert_eq(pulsarc_message_id_batch_index(back), 2);
    cr_assert_eq(pulsarc_message_id_batch_size(back), 10);
    pulsarc_free(bytes);
    pulsarc_message_id_free(back);
    /* Ledger 3, entry 1, no partition: the same bytes the Java client writes. */
    pc_message_id_init(&id, 3, 1, -1);
    cr_assert_eq(pulsarc_message_id_serialize(&id, &bytes, &len), PULSARC_OK);
    uint8_t golden[] = { 0x08, 0x03, 0x10, 0x01 };
    cr_assert_eq(len, sizeof golden);
    cr_assert_eq(memcmp(bytes, golden, len), 0);
    pulsarc_free(bytes);
    cr_assert_eq(pulsarc_message_id_deserialize((const uint8_t *)"\xff\xff", 2, &back),
                 PULSARC_ERR_INVALID_ARGUMENT);
}
