/* Ops of a message sealed before the loop thread (producer/sealed.h): its pieces go as
 * they are, one entry each, under the metadata the loop thread would have given it had
 * it compressed and encrypted the message itself. @locality any thread (pure functions). */
#include "producer/op_build_internal.h"

#include "common/error.h"
#include "producer/sealed.h"
#include "schema/schema.h"
#include "wire/frame.h"
#include "wire/pb_encode.h"

/* Metadata the sending thread cannot know when it seals: the schema version the loop
 * thread stamps. */
#define UNKNOWN_AT_SEAL (PC_SCHEMA_VERSION_MAX + 8)

pulsarc_result pc_op_sealed_piece_len(const pc_op_params_t *p, const pc_msg_t *msg, size_t len,
                                      size_t *piece_len)
{
    Pulsar__Proto__MessageMetadata meta = PULSAR__PROTO__MESSAGE_METADATA__INIT;
    pc_ob_kv_t kv = { 0 };
    uint8_t iv[PC_AES_IV_LEN] = { 0 };
    if (pc_ob_kv_fill(&kv, msg) != 0)
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    pc_ob_fill_alone(&meta, p, msg, &kv);
    pc_ob_fill_encryption(&meta, p, iv);
    size_t chunk_size = 0;
    bool split = false;
    pulsarc_result res = pc_ob_plan_frames(p, pc_pb_message_metadata_size(&meta) + UNKNOWN_AT_SEAL,
                                           len, &chunk_size, &split);
    pc_ob_kv_free(&kv);
    *piece_len = split ? chunk_size : 0;
    return res;
}

/* The seal's own fields in place of the ones fill_alone took from p and the message. */
static void fill_seal(Pulsar__Proto__MessageMetadata *meta, const pc_sealed_t *sd)
{
    meta->has_uncompressed_size = 1;
    meta->uncompressed_size = (uint32_t)sd->uncompressed;
    meta->has_compression = sd->codec != PC_CODEC_NONE;
    meta->compression = (Pulsar__Proto__CompressionType)sd->codec;
    meta->n_encryption_keys = sd->n_keys;
    meta->encryption_keys = sd->keys;
    meta->has_encryption_param = 1;
    meta->encryption_param.len = PC_AES_IV_LEN;
}

/* A piece and its frame within what the connection takes (as pc_ob_plan_frames holds a
 * message the loop thread encrypts itself). */
static pulsarc_result check_piece(const pc_op_params_t *p, size_t meta_size, size_t len)
{
    size_t max = p->max_message_size;
    if (len <= max && meta_size + CHUNK_METADATA_MARGIN + len <= max + PC_FRAME_OVERHEAD_ALLOWANCE)
        return PULSARC_OK;
    return pc_fail(PULSARC_ERR_MESSAGE_TOO_BIG,
                   "an encrypted piece of %zu bytes (sealed for the spool when the broker's "
                   "limit was larger) with %zu bytes of metadata is above the broker's limit "
                   "of %zu bytes",
                   len, meta_size, max);
}

static pulsarc_result build_pieces(const pc_op_params_t *p, pc_msg_t *msg,
                                   Pulsar__Proto__MessageMetadata *meta, pc_shared_payload_t *sh,
                                   pc_op_t **first, pc_op_t **last)
{
    const pc_sealed_t *sd = msg->sealed;
    pc_op_t *head = NULL, *tail = NULL;
    size_t at = 0, meta_size = pc_pb_message_metadata_size(meta);
    for (size_t i = 0; i < sd->n_pieces; i++) {
        pulsarc_result res = check_piece(p, meta_size, sd->pieces[i].len);
        pc_op_t *op = res == PULSARC_OK ? pc_op_new(p->op_cache) : NULL;
        if (!op) {
            pc_ob_release_chain(head);
            return res != PULSARC_OK ? res : pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
        }
        op->sequence_id = op->highest_sequence_id = (uint64_t)msg->sequence_id;
        op->payload = sd->cipher + at;
        op->payload_len = sd->pieces[i].len;
        at += sd->pieces[i].len;
        meta->encryption_param.data = (uint8_t *)sd->pieces[i].iv;
        if (sh)
            pc_ob_mark_chunk(op, meta, sh, i, sd->n_pieces);
        if (tail)
            tail->next = op;
        else
            head = op;
        tail = op;
        if (pc_ob_encode_head(p, op, meta, 0, sh != NULL) != 0) {
            pc_ob_release_chain(head);
            return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory encoding a frame");
        }
    }
    *first = head;
    *last = tail;
    return PULSARC_OK;
}

pulsarc_result pc_op_build_sealed(const pc_op_params_t *p, pc_msg_t *msg, pc_op_t **first,
                                  pc_op_t **last)
{
    const pc_sealed_t *sd = msg->sealed;
    Pulsar__Proto__MessageMetadata meta = PULSAR__PROTO__MESSAGE_METADATA__INIT;
    pc_ob_kv_t kv = { 0 };
    char uuid[PC_OB_UUID_MAX];
    if (pc_ob_kv_fill(&kv, msg) != 0)
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    pc_ob_fill_alone(&meta, p, msg, &kv);
    fill_seal(&meta, sd);
    pc_shared_payload_t *sh = NULL;
    pulsarc_result res = PULSARC_OK;
    if (sd->n_pieces > 1) {
        pc_ob_chunk_fields(&meta, uuid, p, msg, sd->n_pieces, pc_sealed_plain_len(sd));
        if (!(sh = pc_shared_payload_new()))
            res = pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    }
    if (res == PULSARC_OK)
        res = build_pieces(p, msg, &meta, sh, first, last);
    if (res == PULSARC_OK) {
        (*first)->raw_len = sd->uncompressed;
        if (sh) {
            sh->msg = msg;
        } else {
            msg->next = NULL;
            (*first)->msgs = msg;
        }
    }
    pc_shared_payload_unref(sh); /* the chunk ops hold their own references */
    pc_ob_kv_free(&kv);
    return res;
}
