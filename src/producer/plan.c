#include "producer/plan.h"

#include "codec/crypto.h"
#include "wire/crc32c_blocks.h"

/* The loop thread, which also writes every frame, is the one that runs out of time, so
 * large payloads that travel unchanged get their CRCs on the sending thread; a payload
 * below one CRC block is cheap enough to checksum where its frame is built. */
#define SENDER_CRC_MIN PC_CRC32C_BLOCK

pc_plan_t pc_plan(const pc_plan_rules_t *r, size_t payload_len, bool alone)
{
    pc_plan_t plan;
    /* Delayed delivery and replication clusters are per entry on the broker, so such
     * messages travel alone; so do messages that would fill a batch by themselves. */
    plan.batched = r->batching && !alone && payload_len < r->batching_max_bytes;
    /* Compressed or encrypted bytes are made on the loop: a CRC of the payload would be
     * wasted on them, as it would on a batch's. */
    plan.sender_crcs = payload_len >= SENDER_CRC_MIN && !r->compressed && !r->encrypted &&
                       !plan.batched;
    if (r->encrypted)
        plan.memory_charge = 2 * payload_len + PC_AES_TAG_LEN;
    else if (r->compressed || plan.batched)
        plan.memory_charge = 2 * payload_len;
    else
        plan.memory_charge = payload_len;
    return plan;
}
