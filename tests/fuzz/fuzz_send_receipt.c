/* libFuzzer target for the fast SEND_RECEIPT decoder (wire/pb_receipt.c).
 *
 * Input: command bytes. Whatever the fast decoder accepts, protobuf-c must accept too and
 * read the same values: the fast path may only decline, never widen what is accepted. */
#include <stdint.h>
#include <stdlib.h>

#include "wire/pb_receipt.h"

#define CHECK(cond)           \
    do {                      \
        if (!(cond))          \
            __builtin_trap(); \
    } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    Pulsar__Proto__CommandSendReceipt r = PULSAR__PROTO__COMMAND_SEND_RECEIPT__INIT;
    Pulsar__Proto__MessageIdData id = PULSAR__PROTO__MESSAGE_ID_DATA__INIT;
    if (!pc_pb_decode_send_receipt(data, size, &r, &id))
        return 0;
    Pulsar__Proto__BaseCommand *cmd = pulsar__proto__base_command__unpack(NULL, size, data);
    CHECK(cmd != NULL);
    CHECK(cmd->type == PULSAR__PROTO__BASE_COMMAND__TYPE__SEND_RECEIPT);
    const Pulsar__Proto__CommandSendReceipt *want = cmd->send_receipt;
    CHECK(want != NULL);
    CHECK(r.producer_id == want->producer_id && r.sequence_id == want->sequence_id);
    CHECK(r.has_highest_sequence_id == want->has_highest_sequence_id &&
          r.highest_sequence_id == want->highest_sequence_id);
    CHECK((r.message_id != NULL) == (want->message_id != NULL));
    if (want->message_id) {
        const Pulsar__Proto__MessageIdData *w = want->message_id;
        CHECK(id.ledgerid == w->ledgerid && id.entryid == w->entryid);
        CHECK(!w->has_partition && !w->has_batch_index && w->n_ack_set == 0 && !w->has_batch_size &&
              !w->first_chunk_message_id);
    }
    pulsar__proto__base_command__free_unpacked(cmd, NULL);
    return 0;
}
