/* Batch containers: accumulate messages into the batches one op carries.
 *
 * A batch's payload is, for each message: [u32 size of SingleMessageMetadata]
 * [SingleMessageMetadata][payload], the layout every official client reads.
 * The default container keeps one batch; the key-based one keeps one batch per key
 * (ordering key first, else partition key) for Key_Shared consumers.
 * @locality loop thread. */
#ifndef PC_BATCH_H
#define PC_BATCH_H

#include <stdbool.h>
#include <stddef.h>

#include "producer/message.h"
#include "producer/records.h"
#include "common/buf.h"

/* Which batch container a producer uses. */
typedef enum pc_batcher_kind {
    PC_BATCHER_DEFAULT = 0,   /* one batch */
    PC_BATCHER_KEY_BASED = 1, /* one batch per key, for Key_Shared consumers */
} pc_batcher_kind_t;

typedef struct pc_batch {
    pc_msg_t *head, *tail; /* linked by msg->next */
    int count;
    size_t bytes;       /* payload bytes (what batchingMaxBytes counts, as in Java) */
    size_t charged;     /* its messages' pc_msg_t.charged, summed */
    size_t encoded;     /* upper bound of the encoded entries plus the head's keys,
                               which the batch's own metadata repeats */
    uint64_t opened;    /* when the batch got its first message: the flush order */
    const uint8_t *key; /* key-based: the key this batch collects (borrowed from head) */
    size_t key_len;
    pc_msg_t **order; /* NULL, or its messages' addresses in list order, for fetching
                         their records ahead of a walk (producer/records.h); owned */
    int order_cap;
    uint64_t opened_taken; /* the owner's messages taken when it opened (records.h) */
} pc_batch_t;

typedef struct pc_batcher {
    bool key_based;
    int max_messages;
    size_t max_bytes;
    size_t frame_limit; /* encoded bytes a batch may reach: the broker's max message
                               size (the frame allowance covers the command) */
    int total_messages;
    size_t total_bytes;
    size_t total_encoded;
    uint64_t next_opened;
    pc_batch_t *batches; /* one (default) or one per key */
    int n_batches, cap_batches;
    bool keep_order;       /* batches opened from now on keep pc_batch_t.order */
    const uint64_t *taken; /* the owner's count of messages taken (records.h); NULL: none */
} pc_batcher_t;

int pc_batcher_init(pc_batcher_t *b, bool key_based, int max_messages, size_t max_bytes);
void pc_batcher_free(pc_batcher_t *b);
/* The connection's max message size bounds every batch's encoded size. */
void pc_batcher_set_frame_limit(pc_batcher_t *b, size_t max_message_size);
bool pc_batcher_empty(const pc_batcher_t *b);
/* Could msg's entry fit a batch frame at all, alone in an empty container? One whose
 * encoded entry is above the frame limit goes on its own (whether a message is batched
 * at all is its send plan's: producer/plan.h). */
bool pc_batcher_entry_fits(const pc_batcher_t *b, const pc_msg_t *msg);
/* Would adding msg keep every limit (count, payload bytes, encoded size)? An empty
 * container takes any message. */
bool pc_batcher_fits(const pc_batcher_t *b, const pc_msg_t *msg);
/* Add msg. Returns 0 or -1 when out of memory. */
int pc_batcher_add(pc_batcher_t *b, pc_msg_t *msg);
bool pc_batcher_full(const pc_batcher_t *b);
/* Move the open batches out in the order they were opened; the container is empty
 * afterwards. Returns how many were written to out (capacity: b->n_batches). Each taken
 * batch owns its order, which goes with its messages (pc_batch_forget_order). */
int pc_batcher_take(pc_batcher_t *b, pc_batch_t *out);
/* Free a batch's order (its messages gone elsewhere, or failed). */
void pc_batch_forget_order(pc_batch_t *batch);
/* Upper bound of msg's bytes in a batch payload: size prefix, SingleMessageMetadata (with
 * any sequence id) and payload. */
size_t pc_batch_entry_size(const pc_msg_t *msg);

/* Serialise a batch's messages (their sequence ids assigned) into the batch payload
 * layout, fetching their records ahead when `ahead` is given (producer/records.h; NULL:
 * not). Returns 0 or -1. */
int pc_batch_encode(const pc_batch_t *batch, const pc_records_t *ahead, pc_buf_t *out);

#endif
