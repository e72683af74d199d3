/* Batches: the container's bytes, compressed (unless that makes them larger than the
 * broker takes), then encrypted once, as one entry. @locality loop thread. */
#include "producer/op_build_internal.h"

#include "common/error.h"
#include "wire/frame.h"

/* The highest id a batch carries: replayed explicit ids may come in any order. */
static int64_t highest_id(const pc_batch_t *batch)
{
    int64_t top = batch->head->sequence_id;
    for (const pc_msg_t *m = batch->head->next; m; m = m->next)
        if (m->sequence_id > top)
            top = m->sequence_id;
    return top;
}

static bool frame_fits(const pc_op_params_t *p, const pc_op_t *op)
{
    return op->head.len + op->payload_len <=
           (size_t)p->max_message_size + PC_FRAME_OVERHEAD_ALLOWANCE;
}

/* Make buf (the batch's bytes, compressed or not) the op's payload, encrypted when
 * p->enc is set, and encode the head. Takes buf. Returns PULSARC_OK or an error with the
 * detail set. */
static pulsarc_result finish_batch(const pc_op_params_t *p, pc_op_t *op, const pc_batch_t *batch,
                                   pc_buf_t *buf, size_t uncompressed, bool compressed)
{
    Pulsar__Proto__MessageMetadata meta = PULSAR__PROTO__MESSAGE_METADATA__INIT;
    uint8_t iv[PC_AES_IV_LEN];
    pc_op_params_t q = *p;
    if (!compressed)
        q.codec = PC_CODEC_NONE;
    pc_ob_fill_common(&meta, &q, batch->head, uncompressed);
    meta.has_num_messages_in_batch = 1;
    meta.num_messages_in_batch = batch->count;
    meta.has_highest_sequence_id = 1;
    meta.highest_sequence_id = op->highest_sequence_id;
    pc_ob_fill_encryption(&meta, p, iv);
    pc_op_clear_head(op);
    pc_buf_free(&op->owned);
    if (p->enc) {
        /* Serialised, compressed, then encrypted once: one IV per batch. */
        int rc = pc_ob_seal(p, &meta, buf->data, buf->len, &op->owned);
        pc_buf_free(buf);
        if (rc != 0)
            return pc_fail(PULSARC_ERR_CRYPTO, "encrypting a batch failed");
    } else {
        op->owned = *buf;
        pc_buf_init(buf);
    }
    op->payload = op->owned.data;
    op->payload_len = op->owned.len;
    op->raw_len = uncompressed;
    if (pc_ob_encode_head(p, op, &meta, 0, false) != 0)
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory building a batch");
    return PULSARC_OK;
}

pulsarc_result pc_op_build_batch(const pc_op_params_t *p, pc_batch_t *batch, pc_op_t **out)
{
    pc_op_t *op = pc_op_new(p->op_cache);
    if (!op)
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    pc_buf_t raw, packed;
    pc_buf_init(&raw);
    pc_buf_init(&packed);
    pulsarc_result res = PULSARC_ERR_NO_MEMORY;
    if (pc_batch_encode(batch, p->ahead, &raw) != 0)
        goto fail;
    size_t uncompressed = raw.len;
    bool compressed = p->codec != PC_CODEC_NONE && raw.len > 0;
    if (compressed && pc_compress_level(p->codec, p->level, raw.data, raw.len, &packed) != 0)
        goto fail;
    op->num_messages = batch->count;
    op->batch = true;
    op->sequence_id = (uint64_t)batch->head->sequence_id;
    op->highest_sequence_id = (uint64_t)highest_id(batch);
    if (compressed) {
        if ((res = finish_batch(p, op, batch, &packed, uncompressed, true)) != PULSARC_OK)
            goto fail;
        /* Incompressible bytes grew past the limit: this entry goes uncompressed, which
         * its metadata says, so every consumer still reads it. */
        compressed = frame_fits(p, op);
    }
    if (!compressed && (res = finish_batch(p, op, batch, &raw, uncompressed, false)) != PULSARC_OK)
        goto fail;
    pc_buf_free(&raw);
    if (!frame_fits(p, op)) {
        size_t frame = op->head.len + op->payload_len;
        pc_op_release(op);
        return pc_fail(PULSARC_ERR_MESSAGE_TOO_BIG,
                       "a batch frame of %zu bytes is above the broker's limit of %u bytes", frame,
                       p->max_message_size);
    }
    op->msgs = batch->head;
    op->order = batch->order;
    op->opened_taken = batch->opened_taken;
    op->charged = batch->charged;
    batch->order = NULL;
    batch->head = batch->tail = NULL;
    *out = op;
    return PULSARC_OK;
fail:
    pc_buf_free(&raw);
    pc_buf_free(&packed);
    pc_op_release(op);
    if (res == PULSARC_ERR_NO_MEMORY)
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory building a batch");
    return res;
}
