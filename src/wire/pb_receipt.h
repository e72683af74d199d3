/* A fast decoder for the command a producer receives most: SEND_RECEIPT.
 *
 * It accepts only the plain form — a BaseCommand with just its type and send_receipt,
 * the receipt's producer_id, sequence_id, highest_sequence_id and a message id of
 * ledgerId and entryId, each field once and in field-number order (as protobuf encoders,
 * the brokers' among them, write them), varints in range — and then yields
 * exactly what protobuf-c would decode. Anything else (other fields, repeats, other
 * wire types, a truncated or odd encoding) is declined, and the caller decodes the bytes
 * with protobuf-c, which accepts or rejects them as before. So the fast path never
 * widens what is accepted; tests/unit/test_pb_receipt.c checks both claims.
 * This parses network input. */
#ifndef PC_PB_RECEIPT_H
#define PC_PB_RECEIPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "PulsarApi.pb-c.h"

/* Decode command bytes into r (and id, which r->message_id then points to when the
 * receipt has one). r and id must hold their INIT values, or what earlier calls left in
 * them: only the fields a plain receipt has are written (r's producer_id, sequence_id,
 * message_id, has_highest_sequence_id and highest_sequence_id, id's ledgerid and
 * entryid), so one initialisation serves every receipt of a read. Returns false, with
 * those fields unspecified, when declined. */
bool pc_pb_decode_send_receipt(const uint8_t *data, size_t len,
                               Pulsar__Proto__CommandSendReceipt *r,
                               Pulsar__Proto__MessageIdData *id);

#endif
