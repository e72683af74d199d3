/* Hand-written protobuf encoders for the messages every send encodes: the SEND command,
 * MessageMetadata and a batch entry's SingleMessageMetadata.
 *
 * protobuf-c's generic packer walks each message's descriptor table twice (size, then
 * pack) and was a third of the CPU per unbatched message. These encoders write the same
 * fields straight from the same structs. Their output is byte-identical to protobuf-c's
 * (fields in number order, proto2 presence rules: a string or message when its pointer is
 * set, any other optional field when its has_ flag is); tests/unit/test_pb_encode.c
 * compares the two over many field combinations. Sub-messages that are rare on the hot
 * path (encryption keys, a message id in a SEND), and any message that holds unknown
 * fields (decoded from bytes; protobuf-c re-packs those), are packed by protobuf-c. */
#ifndef PC_PB_ENCODE_H
#define PC_PB_ENCODE_H

#include <stddef.h>
#include <stdint.h>

#include "PulsarApi.pb-c.h"

/* Encoded size of a BaseCommand of type SEND whose only other field is send. */
size_t pc_pb_send_command_size(const Pulsar__Proto__CommandSend *send);
/* Write it to out (room: pc_pb_send_command_size bytes). Returns the bytes written. */
size_t pc_pb_send_command_pack(const Pulsar__Proto__CommandSend *send, uint8_t *out);

size_t pc_pb_message_metadata_size(const Pulsar__Proto__MessageMetadata *m);
size_t pc_pb_message_metadata_pack(const Pulsar__Proto__MessageMetadata *m, uint8_t *out);

size_t pc_pb_single_message_metadata_size(const Pulsar__Proto__SingleMessageMetadata *m);
size_t pc_pb_single_message_metadata_pack(const Pulsar__Proto__SingleMessageMetadata *m,
                                          uint8_t *out);

#endif
