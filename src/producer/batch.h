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

#include "client/message.h"
#include "common/buf.h"

typedef struct pc_batch {
    pc_msg_t *head, *tail;  /* linked by msg->next; msg->sequence_id is assigned */
    int count;
    size_t bytes;           /* payload bytes */
    const uint8_t *key;     /* key-based: the key this batch collects (borrowed from head) */
    size_t key_len;
} pc_batch_t;

typedef struct pc_batcher {
    bool key_based;
    int max_messages;
    size_t max_bytes;
    int total_messages;
    size_t total_bytes;
    pc_batch_t *batches;    /* one (default) or one per key */
    int n_batches, cap_batches;
} pc_batcher_t;

int pc_batcher_init(pc_batcher_t *b, bool key_based, int max_messages, size_t max_bytes);
void pc_batcher_free(pc_batcher_t *b);
bool pc_batcher_empty(const pc_batcher_t *b);
/* Would adding msg stay within the limits? (An empty container always takes one.) */
bool pc_batcher_fits(const pc_batcher_t *b, const pc_msg_t *msg);
/* Add msg (its sequence id assigned). Returns 0 or -1 when out of memory. */
int pc_batcher_add(pc_batcher_t *b, pc_msg_t *msg);
bool pc_batcher_full(const pc_batcher_t *b);
/* Move the open batches out, ordered by their first sequence id; the container is empty
 * afterwards. Returns how many were written to out (capacity: b->n_batches). */
int pc_batcher_take(pc_batcher_t *b, pc_batch_t *out);

/* Serialise a batch's messages into the batch payload layout. Returns 0 or -1. */
int pc_batch_encode(const pc_batch_t *batch, pc_buf_t *out);

#endif
