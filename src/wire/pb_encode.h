/* Hand-written protobuf encoders for the messages every send encodes: the SEND command,
 * MessageMetadata and a batch entry's SingleMessageMetadata.
 *
 * protobuf-c's generic packer walks each message's descriptor table twice (size, then
 * pack) and was a third of the CPU per unbatched message. These encoders write the same
 * fields straight from the same structs (a batch entry's from the message's own fields,
 * in one pass, without a struct or a size pass in between). Their output is
 * byte-identical to protobuf-c's
 * (fields in number order, proto2 presence rules: a string or message when its pointer is
 * set, any other optional field when its has_ flag is); tests/unit/test_pb_encode.c
 * compares the two over many field combinations. Sub-messages that are rare on the hot
 * path (encryption keys, a message id in a SEND), and any message that holds unknown
 * fields (decoded from bytes; protobuf-c re-packs those), are packed by protobuf-c. */
#ifndef PC_PB_ENCODE_H
#define PC_PB_ENCODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "PulsarApi.pb-c.h"
#include "wire/property.h"

/* Encoded size of a BaseCommand of type SEND whose only other field is send. */
size_t pc_pb_send_command_size(const Pulsar__Proto__CommandSend *send);
/* At most how many bytes pc_pb_send_command_pack writes for send: a bound for the SEND of
 * a producer's message (no message id), without measuring it; the exact size otherwise. */
size_t pc_pb_send_command_bound(const Pulsar__Proto__CommandSend *send);
/* Write it to out (room: size bytes, what pc_pb_send_command_size returned for send; 0:
 * not measured, room for pc_pb_send_command_bound bytes). Returns the bytes written. */
size_t pc_pb_send_command_pack(const Pulsar__Proto__CommandSend *send, size_t size, uint8_t *out);

size_t pc_pb_message_metadata_size(const Pulsar__Proto__MessageMetadata *m);
size_t pc_pb_message_metadata_pack(const Pulsar__Proto__MessageMetadata *m, uint8_t *out);

/* The MessageMetadata of a message sent whole and unencrypted, from the fields a producer's
 * message and its producer have: what pc_pb_message_metadata_pack writes for a
 * MessageMetadata of the same fields, byte for byte, without filling one (an unbatched
 * message's metadata is written once per message). */
typedef struct pc_pb_alone {
    const char *producer_name;
    size_t producer_name_len;
    uint64_t sequence_id;
    uint64_t publish_time;
    const pc_property_t *props;
    size_t n_props;
    const char *partition_key; /* NULL: none */
    const char *const *replicate_to;
    size_t n_replicate_to;
    int32_t compression; /* the CompressionType; 0 (NONE): not written */
    uint32_t uncompressed_size;
    uint64_t event_time;           /* 0: none */
    const uint8_t *schema_version; /* NULL: none */
    size_t schema_version_len;
    const uint8_t *ordering_key; /* NULL: none */
    size_t ordering_key_len;
    uint64_t deliver_at_time; /* 0: none */
    bool has_txn;
    uint64_t txnid_least_bits, txnid_most_bits;
    bool key_b64, null_value, null_key; /* written only when set, as the producer does */
} pc_pb_alone_t;

size_t pc_pb_alone_metadata_size(const pc_pb_alone_t *a);
/* At least pc_pb_alone_metadata_size(a), at less cost: every field at its largest but the
 * strings' and bytes' lengths (a frame's room is reserved by it, the metadata measured as
 * it is written). */
size_t pc_pb_alone_metadata_bound(const pc_pb_alone_t *a);
/* Write a's MessageMetadata to out (room: pc_pb_alone_metadata_size bytes); its length. */
size_t pc_pb_alone_metadata_pack(const pc_pb_alone_t *a, uint8_t *out);

/* A batch entry's SingleMessageMetadata, from the fields a producer's message has. */
typedef struct pc_pb_entry {
    const pc_property_t *props;
    size_t n_props;
    const char *key;             /* NULL: none */
    const uint8_t *ordering_key; /* NULL: none */
    size_t ordering_key_len;
    uint64_t event_time; /* 0: none */
    uint64_t sequence_id;
    int32_t payload_size;
    bool key_b64, null_key, null_value; /* written only when set, as the producer does */
} pc_pb_entry_t;

/* Write e's SingleMessageMetadata to out in one pass and return its length. The caller
 * makes room for a bound: 4 + the payload + this is at most pc_batch_entry_size()
 * (producer/batch.h), which the batch reserved. */
size_t pc_pb_entry_metadata_write(const pc_pb_entry_t *e, uint8_t *out);
#endif
