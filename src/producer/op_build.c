#include "producer/op_build_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "PulsarApi.pb-c.h"
#include "codec/compression.h"
#include "codec/crypto.h"
#include "common/clock.h"
#include "common/error.h"
#include "wire/crc32c_blocks.h"
#include "wire/frame.h"
#include "wire/pb_encode.h"

int pc_ob_kv_fill(pc_ob_kv_t *a, const pc_msg_t *m)
{
    size_t n = m->n_props;
    if (n == 0)
        return 0; /* nothing to allocate for the common message without properties */
    a->kvs = malloc(n * sizeof *a->kvs);
    a->ptrs = malloc(n * sizeof *a->ptrs);
    if (!a->kvs || !a->ptrs)
        return -1;
    for (size_t i = 0; i < m->n_props; i++) {
        pulsar__proto__key_value__init(&a->kvs[i]);
        a->kvs[i].key = m->props[i].key;
        a->kvs[i].value = m->props[i].value;
        a->ptrs[i] = &a->kvs[i];
    }
    return 0;
}

void pc_ob_kv_free(pc_ob_kv_t *a)
{
    if (!a->kvs && !a->ptrs)
        return; /* the common message without properties allocated none */
    free(a->kvs);
    free(a->ptrs);
}

/* Fields every op's metadata carries. */
void pc_ob_fill_common(Pulsar__Proto__MessageMetadata *meta, const pc_op_params_t *p,
                       const pc_msg_t *first, size_t uncompressed)
{
    meta->producer_name = (char *)p->producer_name;
    meta->sequence_id = (uint64_t)first->sequence_id;
    meta->publish_time = pc_wall_ms();
    meta->partition_key = (char *)first->key;
    meta->has_partition_key_b64_encoded = first->key_b64;
    meta->partition_key_b64_encoded = first->key_b64;
    if (p->schema_version) {
        meta->has_schema_version = 1;
        meta->schema_version.data = (uint8_t *)p->schema_version;
        meta->schema_version.len = p->schema_version_len;
    }
    /* The SEND's ids put the entry into the transaction; the broker's dispatchers skip an
     * aborted transaction's entries by the ids in the metadata (as the Java client sets
     * them), so both carry them. */
    if (p->txn.set) {
        meta->has_txnid_least_bits = meta->has_txnid_most_bits = 1;
        meta->txnid_least_bits = p->txn.least;
        meta->txnid_most_bits = p->txn.most;
    }
    if (first->ordering_key) {
        meta->has_ordering_key = 1;
        meta->ordering_key.data = (uint8_t *)first->ordering_key;
        meta->ordering_key.len = first->ordering_key_len;
    }
    meta->has_uncompressed_size = 1;
    meta->uncompressed_size = (uint32_t)uncompressed;
    if (p->codec != PC_CODEC_NONE) {
        meta->has_compression = 1;
        meta->compression = (Pulsar__Proto__CompressionType)p->codec;
    }
}

/* Bytes encryption adds to each entry's payload: the GCM tag. */
size_t pc_ob_tag_len(const pc_op_params_t *p)
{
    return p->enc ? PC_AES_TAG_LEN : 0;
}

/* The encryption fields every encrypted entry's metadata carries: the key list (built
 * once per data key) and the IV, whose bytes pc_ob_seal() writes into iv for each entry. */
void pc_ob_fill_encryption(Pulsar__Proto__MessageMetadata *meta, const pc_op_params_t *p,
                           uint8_t iv[PC_AES_IV_LEN])
{
    if (!p->enc)
        return;
    meta->n_encryption_keys = p->enc->n_entries;
    meta->encryption_keys = p->enc->entries;
    meta->has_encryption_param = 1;
    meta->encryption_param.data = iv;
    meta->encryption_param.len = PC_AES_IV_LEN;
}

/* Encrypt one entry's bytes under a fresh IV (stored in meta's encryption_param) and
 * append ciphertext and tag to out. */
int pc_ob_seal(const pc_op_params_t *p, Pulsar__Proto__MessageMetadata *meta, const uint8_t *data,
               size_t len, pc_buf_t *out)
{
    uint8_t *iv = meta->encryption_param.data;
    return pc_data_key_iv(p->enc, iv) == 0 && pc_aes_gcm_seal(p->enc->key, iv, data, len, out) == 0
               ? 0
               : -1;
}

/* The SEND command of op. */
static void send_of(const pc_op_params_t *p, const pc_op_t *op, bool is_chunk,
                    Pulsar__Proto__CommandSend *send)
{
    *send = (Pulsar__Proto__CommandSend)PULSAR__PROTO__COMMAND_SEND__INIT;
    send->producer_id = p->producer_id;
    send->sequence_id = op->sequence_id;
    send->has_num_messages = 1;
    send->num_messages = op->num_messages;
    if (op->batch) {
        send->has_highest_sequence_id = 1;
        send->highest_sequence_id = op->highest_sequence_id;
    }
    if (p->txn.set) {
        send->has_txnid_least_bits = send->has_txnid_most_bits = 1;
        send->txnid_least_bits = p->txn.least;
        send->txnid_most_bits = p->txn.most;
    }
    if (is_chunk) {
        send->has_is_chunk = 1;
        send->is_chunk = 1;
    }
}

int pc_ob_encode_head(const pc_op_params_t *p, pc_op_t *op,
                      const Pulsar__Proto__MessageMetadata *meta, size_t meta_size, bool is_chunk)
{
    Pulsar__Proto__CommandSend send;
    send_of(p, op, is_chunk, &send);
    if (op->has_payload_crc)
        return pc_frame_encode_send_head_crc(&op->head, &send, meta, meta_size, op->payload_len,
                                             op->payload_crc);
    return pc_frame_encode_send_head(&op->head, &send, meta, meta_size, op->payload,
                                     op->payload_len);
}

/* pc_ob_encode_head for a message sent alone, unencrypted (pb_encode.h): meta_size its
 * metadata's size if measured, else 0 and the metadata measured as it is written within
 * its bound. */
static int encode_head_alone(const pc_op_params_t *p, pc_op_t *op, const pc_pb_alone_t *alone,
                             size_t meta_size, size_t meta_bound)
{
    Pulsar__Proto__CommandSend send;
    send_of(p, op, false, &send);
    return pc_frame_encode_send_head_alone(&op->head, &send, alone, meta_size, meta_bound,
                                           op->payload, op->payload_len,
                                           op->has_payload_crc ? &op->payload_crc : NULL);
}

/* Compress into out when a codec is set; data and len then describe the result. */
static int maybe_compress(const pc_op_params_t *p, const uint8_t **data, size_t *len, pc_buf_t *out)
{
    if (p->codec == PC_CODEC_NONE || *len == 0)
        return 0;
    if (pc_compress_with(p->compressor, p->codec, *data, *len, out) != 0)
        return -1;
    *data = out->data;
    *len = out->len;
    return 0;
}

size_t pc_chunk_count(size_t len, size_t chunk_size)
{
    if (chunk_size == 0)
        return 0;
    return len == 0 ? 1 : (len + chunk_size - 1) / chunk_size;
}

void pc_ob_release_chain(pc_op_t *head)
{
    while (head) {
        pc_op_t *next = head->next;
        pc_op_release(head);
        head = next;
    }
}

void pc_ob_chunk_fields(Pulsar__Proto__MessageMetadata *meta, char uuid[PC_OB_UUID_MAX],
                        const pc_op_params_t *p, const pc_msg_t *msg, size_t n, size_t total)
{
    snprintf(uuid, PC_OB_UUID_MAX, "%s-%lld-%016llx", p->producer_name ? p->producer_name : "",
             (long long)msg->sequence_id, (unsigned long long)p->chunk_attempt);
    meta->uuid = uuid;
    meta->has_num_chunks_from_msg = 1;
    meta->num_chunks_from_msg = (int32_t)n;
    meta->has_total_chunk_msg_size = 1;
    meta->total_chunk_msg_size = (int32_t)total;
}

void pc_ob_mark_chunk(pc_op_t *op, Pulsar__Proto__MessageMetadata *meta, pc_shared_payload_t *sh,
                      size_t i, size_t n)
{
    op->chunk_id = (int)i;
    op->num_chunks = (int)n;
    op->shared = sh;
    sh->refs++;
    meta->has_chunk_id = 1;
    meta->chunk_id = (int32_t)i;
}

static pulsarc_result build_chunks(const pc_op_params_t *p, pc_msg_t *msg,
                                   Pulsar__Proto__MessageMetadata *meta, pc_shared_payload_t *sh,
                                   const uint8_t *data, size_t len, size_t chunk_size,
                                   pc_op_t **first, pc_op_t **last)
{
    size_t n = pc_chunk_count(len, chunk_size);
    char uuid[PC_OB_UUID_MAX];
    pc_ob_chunk_fields(meta, uuid, p, msg, n, len);
    pc_op_t *head = NULL, *tail = NULL;
    for (size_t i = 0; i < n; i++) {
        pc_op_t *op = pc_op_new(p->op_cache);
        if (!op)
            goto fail;
        op->sequence_id = op->highest_sequence_id = (uint64_t)msg->sequence_id;
        op->payload = data + i * chunk_size;
        op->payload_len = i + 1 < n ? chunk_size : len - i * chunk_size;
        if (p->enc) {
            /* Each chunk is an entry of its own: its own IV, the key list once. */
            if (pc_ob_seal(p, meta, op->payload, op->payload_len, &op->owned) != 0) {
                pc_op_release(op);
                goto crypto_fail;
            }
            op->payload = op->owned.data;
            op->payload_len = op->owned.len;
        }
        if (!p->enc && msg->block_crcs && data == msg->payload && len == msg->payload_len) {
            /* The sender's block CRCs cover these bytes: only the chunk's partial blocks
             * at either end are read here. */
            op->has_payload_crc = true;
            op->payload_crc = pc_crc32c_range(msg->block_crcs, data, len, i * chunk_size,
                                              op->payload_len);
        }
        pc_ob_mark_chunk(op, meta, sh, i, n);
        if (tail)
            tail->next = op;
        else
            head = op;
        tail = op;
        if (pc_ob_encode_head(p, op, meta, 0, true) != 0) /* chunk fields changed meta */
            goto fail;
    }
    *first = head;
    *last = tail;
    return PULSARC_OK;
crypto_fail:
    pc_ob_release_chain(head);
    return pc_fail(PULSARC_ERR_CRYPTO, "encrypting a chunk failed");
fail:
    pc_ob_release_chain(head);
    return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory building chunks");
}

/* The broker reads frames of up to its max message size plus the framing allowance (its
 * frame decoder's bound, the one limit it puts on a whole frame); the official clients
 * hold an entry's payload to the max message size. So: a whole message's payload (with
 * the tag encryption appends) within max_message_size, and its frame (command, metadata,
 * payload) within the frame bound; keys, properties and the encryption fields (key list,
 * IV) count in the metadata. A chunk's payload is what the max message size leaves beside
 * the metadata, as in the Java client. Decides whether a payload of len bytes goes in
 * chunks (of *chunk_size bytes before encryption) or whole. */
pulsarc_result pc_ob_plan_frames(const pc_op_params_t *p, size_t meta_size, size_t len,
                                 size_t *chunk_size, bool *split)
{
    size_t max = p->max_message_size;
    size_t frame_max = max + PC_FRAME_OVERHEAD_ALLOWANCE;
    /* Frame bytes beside the payload: metadata, the command and the chunk fields, the
     * tag. */
    size_t beside = meta_size + CHUNK_METADATA_MARGIN + pc_ob_tag_len(p);
    /* Most messages: whole, and within every limit below by the margin. */
    if (!p->chunking && beside < max && len <= max - beside) {
        *split = false;
        return PULSARC_OK;
    }
    if (beside >= frame_max)
        return pc_fail(PULSARC_ERR_MESSAGE_TOO_BIG,
                       "the message's metadata (key, properties, encryption keys) takes %zu "
                       "bytes: with the command it leaves no room for a payload in a frame of "
                       "%zu bytes (the broker's max message size of %zu bytes plus %d for "
                       "framing)",
                       meta_size, frame_max, max, PC_FRAME_OVERHEAD_ALLOWANCE);
    size_t room = beside < max ? max - beside : 0;
    *chunk_size = p->chunk_size && p->chunk_size < room ? p->chunk_size : room;
    *split = p->chunking && room > 0 && len > *chunk_size;
    if (*split)
        return PULSARC_OK;
    if (len + pc_ob_tag_len(p) > max)
        return pc_fail(PULSARC_ERR_MESSAGE_TOO_BIG,
                       "payload of %zu bytes%s%s is above the broker's limit of %zu bytes (%s)",
                       len + pc_ob_tag_len(p), p->codec ? " (compressed)" : "",
                       p->enc ? " (encrypted)" : "", max,
                       !p->chunking ? "enable chunkingEnabled to send it in chunks"
                                    : "its metadata leaves no room for a chunk");
    if (beside + len > frame_max)
        return pc_fail(PULSARC_ERR_MESSAGE_TOO_BIG,
                       "the message's metadata (key, properties, encryption keys) of %zu bytes "
                       "and its payload of %zu bytes make a frame above the broker's limit of "
                       "%zu bytes (max message size %zu plus %d for framing)",
                       meta_size, len + pc_ob_tag_len(p), frame_max, max,
                       PC_FRAME_OVERHEAD_ALLOWANCE);
    return PULSARC_OK;
}

/* One op for the whole message; it takes the compressed bytes, if any, or the
 * ciphertext. Its metadata: alone, or else meta (an encrypted message's: sealing fills in
 * its IV). */
static pulsarc_result build_single(const pc_op_params_t *p, pc_msg_t *msg,
                                   Pulsar__Proto__MessageMetadata *meta, const pc_pb_alone_t *alone,
                                   size_t meta_size, size_t meta_bound, pc_buf_t *compressed,
                                   const uint8_t *data, size_t len, pc_op_t **out)
{
    pc_op_t *op = pc_op_new(p->op_cache);
    if (!op)
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    op->sequence_id = op->highest_sequence_id = (uint64_t)msg->sequence_id;
    if (p->enc) {
        if (pc_ob_seal(p, meta, data, len, &op->owned) != 0) {
            pc_op_release(op);
            return pc_fail(PULSARC_ERR_CRYPTO, "encrypting the message failed");
        }
        data = op->owned.data;
        len = op->owned.len;
    } else {
        op->owned = *compressed;
        pc_buf_init(compressed);
    }
    op->payload = data;
    op->payload_len = len;
    /* The sender's CRCs hold only for the bytes it saw (not compressed or transformed). */
    if (msg->block_crcs && data == msg->payload && len == msg->payload_len) {
        op->has_payload_crc = true;
        op->payload_crc = pc_crc32c_range(msg->block_crcs, data, len, 0, len);
    }
    /* Sealing wrote the IV's bytes into meta, not its size: meta_size still holds. */
    if ((alone ? encode_head_alone(p, op, alone, meta_size, meta_bound)
               : pc_ob_encode_head(p, op, meta, meta_size, false)) != 0) {
        pc_op_release(op);
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory encoding a frame");
    }
    msg->next = NULL;
    op->msgs = msg;
    *out = op;
    return PULSARC_OK;
}

void pc_ob_fill_alone_fields(pc_pb_alone_t *a, const pc_op_params_t *p, const pc_msg_t *msg)
{
    *a = (pc_pb_alone_t){
        .producer_name = p->producer_name,
        .producer_name_len = p->producer_name_len ? p->producer_name_len
                             : p->producer_name   ? strlen(p->producer_name)
                                                  : 0,
        .sequence_id = (uint64_t)msg->sequence_id,
        .publish_time = pc_wall_ms(),
        .props = msg->props,
        .n_props = msg->n_props,
        .partition_key = msg->key,
        .replicate_to = msg->replicate_to,
        .n_replicate_to = msg->n_replicate_to,
        .compression = (int32_t)p->codec,
        .uncompressed_size = (uint32_t)msg->payload_len,
        .event_time = msg->event_time,
        .schema_version = p->schema_version,
        .schema_version_len = p->schema_version_len,
        .ordering_key = msg->ordering_key,
        .ordering_key_len = msg->ordering_key_len,
        .deliver_at_time = msg->deliver_at,
        .has_txn = p->txn.set,
        .txnid_least_bits = p->txn.least,
        .txnid_most_bits = p->txn.most,
        .key_b64 = msg->key_b64,
        .null_value = msg->null_value,
        .null_key = msg->null_key,
    };
}

void pc_ob_fill_alone(Pulsar__Proto__MessageMetadata *meta, const pc_op_params_t *p,
                      const pc_msg_t *msg, const pc_ob_kv_t *kv)
{
    pc_ob_fill_common(meta, p, msg, msg->payload_len);
    meta->n_properties = msg->n_props;
    meta->properties = kv->ptrs;
    meta->has_null_partition_key = msg->null_key;
    meta->null_partition_key = msg->null_key;
    meta->has_null_value = msg->null_value;
    meta->null_value = msg->null_value;
    if (msg->event_time) {
        meta->has_event_time = 1;
        meta->event_time = msg->event_time;
    }
    if (msg->deliver_at) {
        meta->has_deliver_at_time = 1;
        meta->deliver_at_time = (int64_t)msg->deliver_at;
    }
    /* Never batched (its plan says so): a batch has one entry's metadata for all. */
    meta->n_replicate_to = msg->n_replicate_to;
    meta->replicate_to = (char **)msg->replicate_to;
}

/* A message whose metadata goes through a MessageMetadata: encrypted (the IV and key list
 * are among its fields), or in chunks (so are the chunk fields). data and len: its payload,
 * compressed when compressed holds it (its chunks then slice those bytes). */
static pulsarc_result build_with_metadata(const pc_op_params_t *p, pc_msg_t *msg,
                                          const uint8_t *data, size_t len, pc_buf_t *compressed,
                                          pc_op_t **first, pc_op_t **last)
{
    Pulsar__Proto__MessageMetadata meta = PULSAR__PROTO__MESSAGE_METADATA__INIT;
    pc_ob_kv_t kv = { 0 };
    uint8_t iv[PC_AES_IV_LEN] = { 0 };
    pulsarc_result res = PULSARC_OK;
    if (pc_ob_kv_fill(&kv, msg) != 0) {
        res = pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory encoding properties");
        goto out;
    }
    pc_ob_fill_alone(&meta, p, msg, &kv);
    pc_ob_fill_encryption(&meta, p, iv);
    size_t chunk_size = 0;
    bool split = false;
    size_t meta_size = pc_pb_message_metadata_size(&meta);
    res = pc_ob_plan_frames(p, meta_size, len, &chunk_size, &split);
    if (res != PULSARC_OK)
        goto out;
    if (split) {
        pc_shared_payload_t *sh = pc_shared_payload_new();
        if (!sh) {
            res = pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
            goto out;
        }
        sh->buf = *compressed; /* the chunks slice the compressed bytes, if any */
        pc_buf_init(compressed);
        res = build_chunks(p, msg, &meta, sh, data, len, chunk_size, first, last);
        if (res == PULSARC_OK)
            sh->msg = msg;
        if (p->enc)
            pc_buf_free(&sh->buf);   /* the chunks own their ciphertext */
        pc_shared_payload_unref(sh); /* the chunk ops hold their own references */
        goto out;
    }
    res = build_single(p, msg, &meta, NULL, meta_size, 0, compressed, data, len, first);
    if (res == PULSARC_OK)
        *last = *first;
out:
    pc_ob_kv_free(&kv);
    return res;
}

pulsarc_result pc_op_build_message(const pc_op_params_t *p, pc_msg_t *msg, pc_op_t **first,
                                   pc_op_t **last)
{
    pc_buf_t compressed;
    pc_buf_init(&compressed);
    pulsarc_result res = PULSARC_OK;
    const uint8_t *data = msg->payload;
    size_t len = msg->payload_len;
    if (len > PC_MAX_PAYLOAD) {
        /* The protocol's total_chunk_msg_size and uncompressed_size are 32-bit. */
        res = pc_fail(PULSARC_ERR_MESSAGE_TOO_BIG,
                      "payload of %zu bytes is above the protocol's limit of %d bytes", len,
                      PC_MAX_PAYLOAD);
        goto out;
    }
    if (maybe_compress(p, &data, &len, &compressed) != 0) {
        res = pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory compressing");
        goto out;
    }
    /* Most messages go whole and unencrypted: their metadata is written straight from the
     * message's fields, the same bytes a MessageMetadata of them gives. Planned with a
     * bound on its size, it is measured only as it is written: what goes whole with the
     * bound goes whole with the size (a larger metadata only leaves less room), and what
     * does not is planned again with the size. */
    if (!p->enc) {
        pc_pb_alone_t alone;
        pc_ob_fill_alone_fields(&alone, p, msg);
        size_t bound = pc_pb_alone_metadata_bound(&alone), meta_size = 0, chunk_size;
        bool split = false;
        res = pc_ob_plan_frames(p, bound, len, &chunk_size, &split);
        if (res != PULSARC_OK || split) {
            meta_size = pc_pb_alone_metadata_size(&alone);
            split = false;
            res = pc_ob_plan_frames(p, meta_size, len, &chunk_size, &split);
        }
        if (res == PULSARC_OK && !split) {
            res = build_single(p, msg, NULL, &alone, meta_size, bound, &compressed, data, len,
                               first);
            if (res == PULSARC_OK)
                *last = *first;
        }
        if (res != PULSARC_OK || !split)
            goto out;
    }
    res = build_with_metadata(p, msg, data, len, &compressed, first, last);
out:
    if (res == PULSARC_OK)
        (*first)->raw_len = msg->payload_len; /* a chunked message's on its first chunk */
    pc_buf_free(&compressed);
    return res;
}
