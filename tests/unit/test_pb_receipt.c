/* The fast SEND_RECEIPT decoder (wire/pb_receipt.c) against protobuf-c: it takes the
 * plain receipts and reads them as protobuf-c does, and whatever it accepts, protobuf-c
 * accepts with the same values (it never widens what the client accepts). */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "PulsarApi.pb-c.h"
#include "wire/pb_receipt.h"
#include "../support/test_rng.h"

static uint64_t any_u64(void)
{
    static const uint64_t edges[] = { 0,          1,           127,
                                      128,        UINT32_MAX,  (uint64_t)INT64_MAX,
                                      UINT64_MAX, (uint64_t)-1 };
    return rnd() & 1 ? edges[rnd() % 8] : rnd() >> (rnd() % 64);
}

/* A receipt as brokers send it, packed by protobuf-c. Returns its length. */
static size_t plain_receipt(uint8_t *out, size_t cap)
{
    Pulsar__Proto__MessageIdData id = PULSAR__PROTO__MESSAGE_ID_DATA__INIT;
    Pulsar__Proto__CommandSendReceipt r = PULSAR__PROTO__COMMAND_SEND_RECEIPT__INIT;
    Pulsar__Proto__BaseCommand cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    r.producer_id = any_u64();
    r.sequence_id = any_u64();
    if ((r.has_highest_sequence_id = rnd() & 1))
        r.highest_sequence_id = any_u64();
    if (rnd() % 4) {
        id.ledgerid = any_u64();
        id.entryid = any_u64();
        r.message_id = &id;
    }
    cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__SEND_RECEIPT;
    cmd.send_receipt = &r;
    size_t n = pulsar__proto__base_command__get_packed_size(&cmd);
    cr_assert_leq(n, cap);
    pulsar__proto__base_command__pack(&cmd, out);
    return n;
}

/* Whatever the fast decoder accepts, protobuf-c reads the same way. Returns whether the
 * fast decoder accepted. r and id are initialised once and serve every call, accepted or
 * declined, as the connection's read does (the decoder writes only a plain receipt's
 * fields). */
static bool check_agrees(const uint8_t *data, size_t len)
{
    static Pulsar__Proto__CommandSendReceipt r = PULSAR__PROTO__COMMAND_SEND_RECEIPT__INIT;
    static Pulsar__Proto__MessageIdData id = PULSAR__PROTO__MESSAGE_ID_DATA__INIT;
    if (!pc_pb_decode_send_receipt(data, len, &r, &id))
        return false;
    Pulsar__Proto__BaseCommand *cmd = pulsar__proto__base_command__unpack(NULL, len, data);
    cr_assert_not_null(cmd, "fast decoder accepted bytes protobuf-c rejects");
    cr_assert_eq(cmd->type, PULSAR__PROTO__BASE_COMMAND__TYPE__SEND_RECEIPT);
    const Pulsar__Proto__CommandSendReceipt *want = cmd->send_receipt;
    cr_assert_not_null(want);
    cr_assert_eq(r.producer_id, want->producer_id);
    cr_assert_eq(r.sequence_id, want->sequence_id);
    cr_assert_eq(r.has_highest_sequence_id, want->has_highest_sequence_id);
    cr_assert_eq(r.highest_sequence_id, want->highest_sequence_id);
    cr_assert_eq(r.message_id != NULL, want->message_id != NULL);
    if (want->message_id) {
        cr_assert_eq(r.message_id, &id);
        cr_assert_eq(id.ledgerid, want->message_id->ledgerid);
        cr_assert_eq(id.entryid, want->message_id->entryid);
        cr_assert_eq(id.has_partition, want->message_id->has_partition);
        cr_assert_eq(id.partition, want->message_id->partition);
        cr_assert_eq(id.has_batch_index, want->message_id->has_batch_index);
        cr_assert_eq(id.batch_index, want->message_id->batch_index);
        cr_assert_eq(id.n_ack_set, want->message_id->n_ack_set);
        cr_assert_eq(id.has_batch_size, want->message_id->has_batch_size);
        cr_assert_null(want->message_id->first_chunk_message_id);
    }
    pulsar__proto__base_command__free_unpacked(cmd, NULL);
    return true;
}

Test(pb_receipt, plain_receipts_decode_as_protobuf_c_reads_them)
{
    uint8_t buf[128];
    for (int i = 0; i < 5000; i++) {
        size_t n = plain_receipt(buf, sizeof buf);
        cr_assert(check_agrees(buf, n), "a plain receipt was declined");
    }
}

Test(pb_receipt, mutated_bytes_are_declined_or_read_as_protobuf_c_reads_them)
{
    uint8_t buf[160];
    int accepted = 0, declined = 0;
    for (int i = 0; i < 200000; i++) {
        size_t n = plain_receipt(buf, sizeof buf - 16);
        switch (rnd() % 4) {
        case 0: /* flip a byte */
            buf[rnd() % n] ^= (uint8_t)(1u << (rnd() % 8));
            break;
        case 1: /* cut short */
            n = (size_t)(rnd() % n);
            break;
        case 2: /* random byte anywhere */
            buf[rnd() % n] = (uint8_t)rnd();
            break;
        default: { /* append a few random bytes */
            size_t extra = 1 + rnd() % 8;
            for (size_t k = 0; k < extra; k++)
                buf[n + k] = (uint8_t)rnd();
            n += extra;
        }
        }
        if (check_agrees(buf, n))
            accepted++;
        else
            declined++;
    }
    /* Both outcomes must occur, or the mutations tested nothing. */
    cr_assert_gt(accepted, 1000);
    cr_assert_gt(declined, 1000);
}

Test(pb_receipt, other_forms_are_declined)
{
    uint8_t buf[256];
    /* A message id with a partition: valid, but for protobuf-c to read. */
    Pulsar__Proto__MessageIdData id = PULSAR__PROTO__MESSAGE_ID_DATA__INIT;
    Pulsar__Proto__CommandSendReceipt r = PULSAR__PROTO__COMMAND_SEND_RECEIPT__INIT;
    Pulsar__Proto__BaseCommand cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    id.ledgerid = 3;
    id.entryid = 4;
    id.has_partition = 1;
    id.partition = 2;
    r.producer_id = 1;
    r.sequence_id = 2;
    r.message_id = &id;
    cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__SEND_RECEIPT;
    cmd.send_receipt = &r;
    size_t n = pulsar__proto__base_command__pack(&cmd, buf);
    Pulsar__Proto__CommandSendReceipt got = PULSAR__PROTO__COMMAND_SEND_RECEIPT__INIT;
    Pulsar__Proto__MessageIdData got_id = PULSAR__PROTO__MESSAGE_ID_DATA__INIT;
    cr_assert_not(pc_pb_decode_send_receipt(buf, n, &got, &got_id));

    /* Without the required sequence id. */
    Pulsar__Proto__BaseCommand pong = PULSAR__PROTO__BASE_COMMAND__INIT;
    Pulsar__Proto__CommandPong p = PULSAR__PROTO__COMMAND_PONG__INIT;
    pong.type = PULSAR__PROTO__BASE_COMMAND__TYPE__PONG;
    pong.pong = &p;
    n = pulsar__proto__base_command__pack(&pong, buf);
    cr_assert_not(pc_pb_decode_send_receipt(buf, n, &got, &got_id));

    /* type SEND_RECEIPT with a receipt lacking sequence_id: 08 07 3a 02 08 01 */
    const uint8_t no_seq[] = { 0x08, 0x07, 0x3a, 0x02, 0x08, 0x01 };
    cr_assert_not(pc_pb_decode_send_receipt(no_seq, sizeof no_seq, &got, &got_id));
    /* The same with it: accepted. */
    const uint8_t ok[] = { 0x08, 0x07, 0x3a, 0x04, 0x08, 0x01, 0x10, 0x05 };
    cr_assert(check_agrees(ok, sizeof ok));
    /* A repeated field is protobuf-c's to merge. */
    const uint8_t twice[] = { 0x08, 0x07, 0x3a, 0x06, 0x08, 0x01, 0x10, 0x05, 0x10, 0x06 };
    cr_assert_not(pc_pb_decode_send_receipt(twice, sizeof twice, &got, &got_id));
    /* Fields out of field-number order: valid, but for protobuf-c to read. */
    const uint8_t reordered[] = { 0x08, 0x07, 0x3a, 0x04, 0x10, 0x05, 0x08, 0x01 };
    cr_assert_not(pc_pb_decode_send_receipt(reordered, sizeof reordered, &got, &got_id));
    Pulsar__Proto__BaseCommand *slow = pulsar__proto__base_command__unpack(NULL, sizeof reordered,
                                                                           reordered);
    cr_assert_not_null(slow);
    cr_assert_eq(slow->send_receipt->producer_id, 1);
    cr_assert_eq(slow->send_receipt->sequence_id, 5);
    pulsar__proto__base_command__free_unpacked(slow, NULL);
    /* An empty command. */
    cr_assert_not(pc_pb_decode_send_receipt(buf, 0, &got, &got_id));
}
