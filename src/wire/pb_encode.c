/* See pb_encode.h. Each encoder runs twice over the same code: with no output buffer to
 * count, then to write, so size and bytes cannot disagree. */
#include "wire/pb_encode.h"

#include <stdbool.h>
#include <string.h>

/* Where bytes go: p == NULL only counts. */
typedef struct sink {
    uint8_t *p;
    size_t n;
} sink;

enum { WT_VARINT = 0, WT_LEN = 2 };

/* Bytes of v as a varint, 1 to 10, without a loop: 7 bits a byte, of the bits v needs
 * (at least one): (bits * 9 + 64) / 64 is ceil(bits / 7) for every bits in 1..64. */
static inline size_t varint_size(uint64_t v)
{
    unsigned bits = 64u - (unsigned)__builtin_clzll(v | 1);
    return (bits * 9u + 64u) >> 6;
}

static inline void put_varint(sink *s, uint64_t v)
{
    if (!s->p) {
        s->n += varint_size(v);
        return;
    }
    uint8_t *o = s->p + s->n;
    while (v >= 0x80) {
        *o++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *o++ = (uint8_t)v;
    s->n = (size_t)(o - s->p);
}

static inline void put_bytes(sink *s, const void *data, size_t len)
{
    if (s->p && len)
        memcpy(s->p + s->n, data, len);
    s->n += len;
}

static inline void put_tag(sink *s, unsigned field, unsigned wire_type)
{
    put_varint(s, (uint64_t)(field << 3 | wire_type));
}

static inline void put_u64(sink *s, unsigned field, uint64_t v)
{
    put_tag(s, field, WT_VARINT);
    put_varint(s, v);
}

/* int32 and enums: negative values as 64-bit two's complement, as protobuf does. */
static inline void put_i32(sink *s, unsigned field, int32_t v)
{
    put_u64(s, field, (uint64_t)(int64_t)v);
}

static inline void put_bool(sink *s, unsigned field, int v)
{
    put_u64(s, field, v ? 1 : 0);
}

static inline void put_len(sink *s, unsigned field, const void *data, size_t len)
{
    put_tag(s, field, WT_LEN);
    put_varint(s, len);
    put_bytes(s, data, len);
}

/* A string field; a NULL required string is written empty, as protobuf-c does. */
static inline void put_str(sink *s, unsigned field, const char *str)
{
    put_len(s, field, str, str ? strlen(str) : 0);
}

static inline bool has_unknown(const ProtobufCMessage *m)
{
    return m->n_unknown_fields != 0;
}

/* A sub-message protobuf-c packs: those off the hot path. */
static void put_message(sink *s, unsigned field, const ProtobufCMessage *m)
{
    size_t len = protobuf_c_message_get_packed_size(m);
    put_tag(s, field, WT_LEN);
    put_varint(s, len);
    if (s->p)
        protobuf_c_message_pack(m, s->p + s->n);
    s->n += len;
}

static void put_props(sink *s, unsigned field, Pulsar__Proto__KeyValue *const *kvs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (has_unknown(&kvs[i]->base)) {
            put_message(s, field, &kvs[i]->base);
            continue;
        }
        const char *k = kvs[i]->key ? kvs[i]->key : "";
        const char *v = kvs[i]->value ? kvs[i]->value : "";
        size_t kl = strlen(k), vl = strlen(v);
        sink probe = { NULL, 0 };
        put_len(&probe, 1, k, kl);
        put_len(&probe, 2, v, vl);
        put_tag(s, field, WT_LEN);
        put_varint(s, probe.n);
        put_len(s, 1, k, kl);
        put_len(s, 2, v, vl);
    }
}

/* A KeyValue's length: its key (field 1) and value (field 2), each a one-byte tag, a
 * length and the bytes. */
static inline size_t pair_size(size_t kl, size_t vl)
{
    return 2 + varint_size(kl) + kl + varint_size(vl) + vl;
}

/* A producer's properties as KeyValue messages of field. */
static inline void put_pairs(sink *s, unsigned field, const pc_property_t *props, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const char *k = props[i].key ? props[i].key : "";
        const char *v = props[i].value ? props[i].value : "";
        size_t kl = strlen(k), vl = strlen(v);
        put_tag(s, field, WT_LEN);
        put_varint(s, pair_size(kl, vl));
        put_len(s, 1, k, kl);
        put_len(s, 2, v, vl);
    }
}

static inline __attribute__((always_inline)) void send_fields(sink *s,
                                                              const Pulsar__Proto__CommandSend *c)
{
    put_u64(s, 1, c->producer_id);
    put_u64(s, 2, c->sequence_id);
    if (c->has_num_messages)
        put_i32(s, 3, c->num_messages);
    if (c->has_txnid_least_bits)
        put_u64(s, 4, c->txnid_least_bits);
    if (c->has_txnid_most_bits)
        put_u64(s, 5, c->txnid_most_bits);
    if (c->has_highest_sequence_id)
        put_u64(s, 6, c->highest_sequence_id);
    if (c->has_is_chunk)
        put_bool(s, 7, c->is_chunk);
    if (c->has_marker)
        put_bool(s, 8, c->marker);
    if (c->message_id)
        put_message(s, 9, &c->message_id->base);
}

/* A decoded message can carry fields this code does not know (protobuf-c keeps and
 * re-packs them): such messages are packed by protobuf-c. */
static size_t base_send_size(const Pulsar__Proto__CommandSend *send)
{
    Pulsar__Proto__BaseCommand cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__SEND;
    cmd.send = (Pulsar__Proto__CommandSend *)send;
    return pulsar__proto__base_command__get_packed_size(&cmd);
}

static size_t base_send_pack(const Pulsar__Proto__CommandSend *send, uint8_t *out)
{
    Pulsar__Proto__BaseCommand cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__SEND;
    cmd.send = (Pulsar__Proto__CommandSend *)send;
    return pulsar__proto__base_command__pack(&cmd, out);
}

/* The SEND command's own fields' length (one counting pass). */
static size_t send_fields_size(const Pulsar__Proto__CommandSend *c)
{
    sink probe = { NULL, 0 };
    send_fields(&probe, c);
    return probe.n;
}

/* BaseCommand's type (field 1), then the SEND (field 6) of inner bytes. */
static inline __attribute__((always_inline)) void
send_command(sink *s, const Pulsar__Proto__CommandSend *c, size_t inner)
{
    put_i32(s, 1, PULSAR__PROTO__BASE_COMMAND__TYPE__SEND);
    put_tag(s, 6, WT_LEN);
    put_varint(s, inner);
    send_fields(s, c);
}

size_t pc_pb_send_command_size(const Pulsar__Proto__CommandSend *send)
{
    if (send->base.n_unknown_fields)
        return base_send_size(send);
    size_t inner = send_fields_size(send);
    /* type's tag and value, send's tag: one byte each */
    return 3 + varint_size(inner) + inner;
}

/* A SEND's own fields without a message id: eight varint fields, each a one-byte tag and
 * at most ten bytes, under 128 bytes, so their length is one byte. */
#define PLAIN_SEND_FIELDS_MAX (6 * 11 + 2 * 2)
_Static_assert(PLAIN_SEND_FIELDS_MAX < 128, "a plain SEND's length is one byte");

static bool plain_send(const Pulsar__Proto__CommandSend *send)
{
    return !send->base.n_unknown_fields && !send->message_id;
}

size_t pc_pb_send_command_bound(const Pulsar__Proto__CommandSend *send)
{
    if (!plain_send(send))
        return pc_pb_send_command_size(send);
    /* Each varint field present: a tag and at most ten bytes; the flags two bytes each. A
     * tight bound keeps a frame head in an op's own space (producer/op.h). */
    size_t n = 4 + 2 * 11;
    n += 11 * ((size_t)send->has_num_messages + send->has_txnid_least_bits +
               send->has_txnid_most_bits + send->has_highest_sequence_id);
    return n + 2 * ((size_t)send->has_is_chunk + send->has_marker);
}

size_t pc_pb_send_command_pack(const Pulsar__Proto__CommandSend *send, size_t size, uint8_t *out)
{
    if (send->base.n_unknown_fields)
        return base_send_pack(send, out);
    sink s = { out, 0 };
    if (!size && plain_send(send)) {
        /* Unmeasured: its one length byte is written once the fields are. */
        send_command(&s, send, 0);
        out[3] = (uint8_t)(s.n - 4);
        return s.n;
    }
    /* A SEND's own fields take under 128 bytes but with a message id: then their length
     * is one byte and the size tells it, without counting them again. */
    size_t inner = size >= 4 && size - 4 < 128 ? size - 4 : send_fields_size(send);
    send_command(&s, send, inner);
    return s.n;
}

static void message_metadata(sink *s, const Pulsar__Proto__MessageMetadata *m)
{
    put_str(s, 1, m->producer_name);
    put_u64(s, 2, m->sequence_id);
    put_u64(s, 3, m->publish_time);
    put_props(s, 4, m->properties, m->n_properties);
    if (m->replicated_from)
        put_str(s, 5, m->replicated_from);
    if (m->partition_key)
        put_str(s, 6, m->partition_key);
    for (size_t i = 0; i < m->n_replicate_to; i++)
        put_str(s, 7, m->replicate_to[i]);
    if (m->has_compression)
        put_i32(s, 8, (int32_t)m->compression);
    if (m->has_uncompressed_size)
        put_u64(s, 9, m->uncompressed_size);
    if (m->has_num_messages_in_batch)
        put_i32(s, 11, m->num_messages_in_batch);
    if (m->has_event_time)
        put_u64(s, 12, m->event_time);
    for (size_t i = 0; i < m->n_encryption_keys; i++)
        put_message(s, 13, &m->encryption_keys[i]->base);
    if (m->encryption_algo)
        put_str(s, 14, m->encryption_algo);
    if (m->has_encryption_param)
        put_len(s, 15, m->encryption_param.data, m->encryption_param.len);
    if (m->has_schema_version)
        put_len(s, 16, m->schema_version.data, m->schema_version.len);
    if (m->has_partition_key_b64_encoded)
        put_bool(s, 17, m->partition_key_b64_encoded);
    if (m->has_ordering_key)
        put_len(s, 18, m->ordering_key.data, m->ordering_key.len);
    if (m->has_deliver_at_time)
        put_u64(s, 19, (uint64_t)m->deliver_at_time);
    if (m->has_marker_type)
        put_i32(s, 20, m->marker_type);
    if (m->has_txnid_least_bits)
        put_u64(s, 22, m->txnid_least_bits);
    if (m->has_txnid_most_bits)
        put_u64(s, 23, m->txnid_most_bits);
    if (m->has_highest_sequence_id)
        put_u64(s, 24, m->highest_sequence_id);
    if (m->has_null_value)
        put_bool(s, 25, m->null_value);
    if (m->uuid)
        put_str(s, 26, m->uuid);
    if (m->has_num_chunks_from_msg)
        put_i32(s, 27, m->num_chunks_from_msg);
    if (m->has_total_chunk_msg_size)
        put_i32(s, 28, m->total_chunk_msg_size);
    if (m->has_chunk_id)
        put_i32(s, 29, m->chunk_id);
    if (m->has_null_partition_key)
        put_bool(s, 30, m->null_partition_key);
    for (size_t i = 0; i < m->n_compacted_batch_indexes; i++)
        put_i32(s, 31, m->compacted_batch_indexes[i]);
    if (m->has_schema_id)
        put_len(s, 32, m->schema_id.data, m->schema_id.len);
    if (m->has_entry_hash_min)
        put_u64(s, 33, m->entry_hash_min);
    if (m->has_entry_hash_max)
        put_u64(s, 34, m->entry_hash_max);
}

size_t pc_pb_message_metadata_size(const Pulsar__Proto__MessageMetadata *m)
{
    if (has_unknown(&m->base))
        return protobuf_c_message_get_packed_size(&m->base);
    sink s = { NULL, 0 };
    message_metadata(&s, m);
    return s.n;
}

size_t pc_pb_message_metadata_pack(const Pulsar__Proto__MessageMetadata *m, uint8_t *out)
{
    if (has_unknown(&m->base))
        return protobuf_c_message_pack(&m->base, out);
    sink s = { out, 0 };
    message_metadata(&s, m);
    return s.n;
}

/* The fields of message_metadata a message sent alone can have, in the same order. */
static inline __attribute__((always_inline)) void alone_metadata(sink *s, const pc_pb_alone_t *a)
{
    put_len(s, 1, a->producer_name, a->producer_name_len);
    put_u64(s, 2, a->sequence_id);
    put_u64(s, 3, a->publish_time);
    put_pairs(s, 4, a->props, a->n_props);
    if (a->partition_key)
        put_str(s, 6, a->partition_key);
    for (size_t i = 0; i < a->n_replicate_to; i++)
        put_str(s, 7, a->replicate_to[i]);
    if (a->compression)
        put_i32(s, 8, a->compression);
    put_u64(s, 9, a->uncompressed_size);
    if (a->event_time)
        put_u64(s, 12, a->event_time);
    if (a->schema_version)
        put_len(s, 16, a->schema_version, a->schema_version_len);
    if (a->key_b64)
        put_bool(s, 17, 1);
    if (a->ordering_key)
        put_len(s, 18, a->ordering_key, a->ordering_key_len);
    if (a->deliver_at_time)
        put_u64(s, 19, a->deliver_at_time);
    if (a->has_txn) {
        put_u64(s, 22, a->txnid_least_bits);
        put_u64(s, 23, a->txnid_most_bits);
    }
    if (a->null_value)
        put_bool(s, 25, 1);
    if (a->null_key)
        put_bool(s, 30, 1);
}

/* A field's tag and a varint (or a length) at their largest: fields 1 to 15 have a
 * one-byte tag, the others two. */
#define FIELD_MAX 11
#define HIGH_FIELD_MAX 12

size_t pc_pb_alone_metadata_bound(const pc_pb_alone_t *a)
{
    /* producer_name, sequence_id, publish_time, uncompressed_size: always there. */
    size_t n = 4 * FIELD_MAX + a->producer_name_len;
    if (a->compression)
        n += FIELD_MAX;
    if (a->event_time)
        n += FIELD_MAX;
    if (a->schema_version)
        n += HIGH_FIELD_MAX + a->schema_version_len;
    if (a->ordering_key)
        n += HIGH_FIELD_MAX + a->ordering_key_len;
    if (a->deliver_at_time)
        n += HIGH_FIELD_MAX;
    if (a->has_txn)
        n += 2 * HIGH_FIELD_MAX;
    n += 3 * ((size_t)a->key_b64 + a->null_value + a->null_key); /* two-byte tag, one byte */
    if (a->partition_key)
        n += FIELD_MAX + strlen(a->partition_key);
    for (size_t i = 0; i < a->n_replicate_to; i++)
        n += FIELD_MAX + strlen(a->replicate_to[i]);
    for (size_t i = 0; i < a->n_props; i++) {
        const pc_property_t *kv = &a->props[i];
        n += 3 * FIELD_MAX + (kv->key ? strlen(kv->key) : 0) + (kv->value ? strlen(kv->value) : 0);
    }
    return n;
}

size_t pc_pb_alone_metadata_size(const pc_pb_alone_t *a)
{
    sink s = { NULL, 0 };
    alone_metadata(&s, a);
    return s.n;
}

size_t pc_pb_alone_metadata_pack(const pc_pb_alone_t *a, uint8_t *out)
{
    sink s = { out, 0 };
    alone_metadata(&s, a);
    return s.n;
}

size_t pc_pb_entry_metadata_write(const pc_pb_entry_t *e, uint8_t *out)
{
    sink s = { out, 0 };
    put_pairs(&s, 1, e->props, e->n_props);
    if (e->key)
        put_str(&s, 2, e->key);
    put_i32(&s, 3, e->payload_size);
    if (e->event_time)
        put_u64(&s, 5, e->event_time);
    if (e->key_b64)
        put_bool(&s, 6, 1);
    if (e->ordering_key)
        put_len(&s, 7, e->ordering_key, e->ordering_key_len);
    put_u64(&s, 8, e->sequence_id);
    if (e->null_value)
        put_bool(&s, 9, 1);
    if (e->null_key)
        put_bool(&s, 10, 1);
    return s.n;
}
