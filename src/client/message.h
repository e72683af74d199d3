/* Messages: the caller's builder and the accepted message the library owns. */
#ifndef PC_MESSAGE_H
#define PC_MESSAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/task.h"
#include "producer/message.h"
#include "pulsarc/pulsarc.h"

struct pulsarc_message {
    const uint8_t *payload;
    size_t payload_len;
    pulsarc_payload_free_cb free_cb; /* non-NULL: borrowed payload */
    void *free_ctx;
    char *key;
    uint8_t *ordering_key;
    size_t ordering_key_len;
    pc_property_t *props;
    size_t n_props, cap_props;
    uint64_t event_time;
    uint64_t deliver_at;    /* ms since the epoch; 0: unset */
    uint64_t deliver_after; /* ms after the send (deliver_at = now + this at send); 0: unset */
    char **replicate_to;    /* replication clusters ("__local__" alone: no replication) */
    size_t n_replicate_to;
    int64_t sequence_id; /* -1 = automatic */
    uint8_t *owned_payload; /* pulsarc_message_set_key_value's layout (the payload) */
    bool key_b64;           /* the key is base64 (KeyValue SEPARATED) */
    bool null_key, null_value;
    struct pulsarc_schema *schema; /* a reference, or NULL */
    struct pulsarc_message *copy_of; /* an interceptors' copy (interceptors.c): the caller's
                                        message; NULL otherwise */
};

/* The builder's message must be an entry of its own (producer/message.h, pc_msg_alone). */
static inline bool pc_message_alone(const pulsarc_message_t *b)
{
    return b->deliver_at || b->deliver_after || b->n_replicate_to;
}

struct pulsarc_producer;

/* A send accepted by a producer handle: the client's bookkeeping around the message the
 * partition producer gets, all in one allocation with the copies of key, properties and
 * (in copy mode) payload. Lives until its callback has run. */
typedef struct pc_send {
    pc_task_t task;                 /* hand-over to the loop thread */
    int partition;                  /* chosen by the router at send time */
    uint64_t handover;              /* its place among the producer's messages, in the
                                       order they reached the loop thread */
    pulsarc_send_cb cb;
    void *cb_ctx;
    struct pulsarc_producer *producer;
    size_t reserved_bytes;          /* memory-limit bytes held until completion */
    struct pc_send_pool *pool;      /* where the block goes back, or NULL: free() */
    bool large_block;               /* it goes back to the pool's large-block slot */
    bool released;                  /* loop thread: reserved_bytes are given back */
    struct pc_spool_segment *spooled; /* its record in the producer's spool, let go when it
                                         completes (client/producer_spool.c); NULL: none */
    uint64_t spooled_at;            /* ... where in that segment */
    struct pulsarc_txn *txn;        /* the transaction it is part of (a reference), or NULL */
    bool txn_held;                  /* loop thread: counted in its producer's txn_held */
    pc_msg_t msg;
} pc_send_t;

/* What memoryLimitBytes counts for each pending message on top of its send plan's
 * memory_charge (payload and second copies): its record, this pc_send_t in a pooled block
 * of PC_SEND_BLOCK_SIZE bytes (client/send_pool.h), which also holds a small copied
 * payload, the key and the properties. With small messages the records are most of what
 * pending messages hold (512 bytes beside a 100-byte payload); uncounted, 64 MiB of
 * pending 100-byte batched messages took 188 MB (issue 20, 1000 partitions). Counting a
 * payload that sits inside the block twice errs on the safe side. */
#define PC_SEND_RECORD_CHARGE 512

/* What memoryLimitBytes charges for one accepted message: its plan's bytes and its record. */
static inline size_t pc_send_charge(size_t plan_memory_charge)
{
    return plan_memory_charge + PC_SEND_RECORD_CHARGE;
}

static inline pc_send_t *pc_send_of(pc_msg_t *m)
{
    return (pc_send_t *)((char *)m - offsetof(pc_send_t, msg));
}

/* Copy the builder into a new accepted send, in a block from pool (client/send_pool.h). In borrow mode the payload is taken over
 * and the builder left without one. NULL when out of memory. */
pc_send_t *pc_send_from_builder(struct pc_send_pool *pool, pulsarc_message_t *b);
/* The same, and the send keeps the payload's block CRCs (wire/crc32c_blocks.h, in
 * msg.block_crcs) for the frames built from it: a copied payload is checksummed block by
 * block as it is copied; a borrowed one's CRCs are known_crcs when given (computed by the
 * caller, e.g. before waiting for room), else computed here. */
pc_send_t *pc_send_from_builder_crcs(struct pc_send_pool *pool, pulsarc_message_t *b,
                                     const uint32_t *known_crcs);

#endif
