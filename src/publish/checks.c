/* The checks stage (checks.h). */
#include "publish/checks.h"

#include "common/error.h"
#include "publish/producer.h"
#include "publish/spool_stage.h"
#include "schema/schema.h"
#include "wire/frame.h"

pulsarc_result pc_check_message(const pulsarc_producer_t *p, const pulsarc_message_t *msg)
{
    if (msg->payload_len > PC_MAX_PAYLOAD)
        return pc_fail(PULSARC_ERR_MESSAGE_TOO_BIG,
                       "payload of %zu bytes is above the protocol's limit of %d bytes",
                       msg->payload_len, PC_MAX_PAYLOAD);
    /* Key-based batches interleave keys, so their ids are given at flush, in flush order;
     * an id of the application's could not keep that order. */
    if (msg->sequence_id >= 0 && p->conf.batching_enabled &&
        p->conf.batcher == PC_BATCHER_KEY_BASED)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT,
                       "explicit sequence ids cannot be used with key-based batching: its "
                       "batches would interleave them and a deduplicating broker would drop "
                       "whole batches");
    /* Uncompressed payloads can be judged at once; compressed ones after compression. */
    uint32_t max = atomic_load(&p->max_message_size);
    if (p->conf.compression == PC_CODEC_NONE && !p->conf.chunking_enabled && msg->payload_len > max)
        return pc_fail(PULSARC_ERR_MESSAGE_TOO_BIG,
                       "payload of %zu bytes is above the broker's limit of %u bytes",
                       msg->payload_len, max);
    /* A null value (KeyValue SEPARATED) is no payload to check. */
    const pc_schema_t *schema = msg->schema ? msg->schema : p->conf.schema;
    if (schema && p->conf.schema_validation && !msg->null_value) {
        pulsarc_result bad = pc_schema_check(schema, msg->payload, msg->payload_len);
        if (bad != PULSARC_OK)
            return bad;
    }
    return p->spool ? pc_spool_stage_check(p, msg) : PULSARC_OK;
}
