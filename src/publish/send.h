/* An accepted send (pc_send_t): the producer handle's bookkeeping around the message the
 * partition producer gets, in one block with the copies of the builder's key, properties
 * and (in copy mode) payload; and what memoryLimitBytes charges for it. */
#ifndef PC_SEND_H
#define PC_SEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "accept/block_pool.h"
#include "common/task.h"
#include "producer/message.h"
#include "publish/message.h"
#include "pulsarc/pulsarc.h"
#include "transaction/transaction.h"

struct pulsarc_producer;

/* A send accepted by a producer handle: the client's bookkeeping around the message the
 * partition producer gets, all in one allocation with the copies of key, properties and
 * (in copy mode) payload. Lives until its callback has run. */
typedef struct pc_send {
    pc_task_t task;    /* hand-over to the loop thread */
    int partition;     /* chosen by the router at send time */
    uint64_t handover; /* its place among the producer's messages, in the
                                       order they reached the loop thread */
    pulsarc_send_cb cb;
    void *cb_ctx;
    struct pulsarc_producer *producer;
    struct pc_block_pool *pool;       /* where a large block goes back (large_block) */
    bool large_block;                 /* to the pool's large-block slot */
    pc_block_class_t *block_class;    /* else where it goes back (NULL: free()) */
    struct pc_spool_segment *spooled; /* its record in the producer's spool, let go when it
                                         completes (spool_stage.c); NULL: none */
    uint64_t spooled_at;              /* ... where in that segment */
    struct pulsarc_txn *txn;          /* the transaction it is part of (a reference), or NULL */
    bool txn_held;                    /* loop thread: counted in its producer's txn_held */
    pc_transaction_waiter_t txn_wait; /* loop thread: held until its partition is registered
                                         with the transaction (txn_stage.c) */
    pc_msg_t msg;
} pc_send_t;

/* What memoryLimitBytes counts for each pending message on top of its send plan's
 * memory_charge (payload and second copies): its record, this pc_send_t in a pooled block
 * of PC_BLOCK_SMALL bytes (accept/block_pool.h), which also holds a small copied payload,
 * the key and the properties. With small messages the records are most of what pending
 * messages hold (512 bytes beside a 100-byte payload); uncounted, 64 MiB of pending
 * 100-byte batched messages took 188 MB (issue 20, 1000 partitions). Counting a payload
 * that sits inside the block twice errs on the safe side. */
#define PC_SEND_RECORD_CHARGE 512

/* Whether b's send takes a block of the pool's larger class (PC_BLOCK_POOL_SIZE bytes): a
 * copied payload too large for a small block and small enough for a larger one, with
 * nothing else beside the record (key, properties, clusters, block CRCs). Its charge is
 * then known from the payload's size alone, before the send is laid out; a send with
 * more beside it is malloc'ed, as before the larger class. */
static inline bool pc_send_in_larger_block(const pulsarc_message_t *b, bool with_crcs)
{
    size_t n = b->payload_len;
    return n > PC_BLOCK_SMALL - sizeof(pc_send_t) && n <= PC_BLOCK_POOL_SIZE - sizeof(pc_send_t) &&
           !b->free_cb && !with_crcs && !b->n_props && !b->n_replicate_to && !b->key &&
           !b->ordering_key_len;
}

/* What memoryLimitBytes charges for one accepted message of b: its plan's bytes and its
 * record, which in a larger block is the whole block less the payload (the plan's). */
static inline size_t pc_send_charge(const pulsarc_message_t *b, bool with_crcs,
                                    size_t plan_memory_charge)
{
    size_t record = pc_send_in_larger_block(b, with_crcs) ? PC_BLOCK_POOL_SIZE - b->payload_len
                                                          : PC_SEND_RECORD_CHARGE;
    return plan_memory_charge + record;
}

static inline pc_send_t *pc_send_of(pc_msg_t *m)
{
    return (pc_send_t *)((char *)m - offsetof(pc_send_t, msg));
}

/* Copy the builder into a new accepted send, in a block from pool (accept/block_pool.h). In borrow mode the payload is taken over
 * and the builder left without one. NULL when out of memory. */
pc_send_t *pc_send_from_builder(struct pc_block_pool *pool, pulsarc_message_t *b);
/* The same, and the send keeps the payload's block CRCs (wire/crc32c_blocks.h, in
 * msg.block_crcs) for the frames built from it: a copied payload is checksummed block by
 * block as it is copied; a borrowed one's CRCs are known_crcs when given (computed by the
 * caller, e.g. before waiting for room), else computed here. */
pc_send_t *pc_send_from_builder_crcs(struct pc_block_pool *pool, pulsarc_message_t *b,
                                     const uint32_t *known_crcs);

#endif
