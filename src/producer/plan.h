/* How a message travels, decided in one place from the producer's settings and the
 * message's size and whether it must be an entry of its own (publish/message.h,
 * pc_message_alone): whether it goes into a batch, what it holds against memoryLimitBytes
 * until its receipt, and whether the sending thread computes the CRCs of its payload.
 * The layer that accepts a message plans it once and the message carries the plan
 * (pc_msg_t.batched) to the loop thread.
 * @locality any thread: pure functions. */
#ifndef PC_PLAN_H
#define PC_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The largest payload the protocol can describe: total_chunk_msg_size and
 * uncompressed_size are 32-bit fields. */
#define PC_MAX_PAYLOAD INT32_MAX

/* The settings a plan depends on (pc_pp_plan_rules takes them from a partition
 * producer's settings). */
typedef struct pc_plan_rules {
    bool batching;
    bool compressed;           /* a codec is set */
    bool encrypted;            /* encryption keys are set */
    size_t batching_max_bytes; /* a payload this large or larger goes alone */
} pc_plan_rules_t;

typedef struct pc_plan {
    /* Into a batch container. The loop thread still sends it alone when its encoded entry
     * is above the connection's max message size (pc_batcher_entry_fits). */
    bool batched;
    /* The payload travels unchanged and large (whole or in chunks): the sending thread
     * computes its block CRCs (wire/crc32c_blocks.h), so that the loop thread, which also
     * writes every frame, need not read it. */
    bool sender_crcs;
    /* What it counts against memoryLimitBytes: its payload, and a second time when the
     * loop thread makes bytes of it that its op holds beside the payload until the receipt
     * (a batch's payload, a compressed copy, a ciphertext with its tag). */
    size_t memory_charge;
} pc_plan_t;

/* alone: the message may not share an entry (a delivery time, replication clusters). */
pc_plan_t pc_plan(const pc_plan_rules_t *r, size_t payload_len, bool alone);

#endif
