/* OpSendMsg: one frame on its way to the broker — a single message, a batch, or one
 * chunk of a large message — with the messages whose callbacks its receipt completes.
 * @locality loop thread. */
#ifndef PC_OP_H
#define PC_OP_H

#include <stdbool.h>
#include <stdint.h>

#include "producer/message.h"
#include "common/buf.h"
#include "common/freelist.h"

/* What the chunks of one large message share: the message (whose payload they slice,
 * unless compressed) and the compressed bytes. Freed with the last chunk op. */
typedef struct pc_shared_payload {
    int refs;
    pc_buf_t buf;
    pc_msg_t *msg;
} pc_shared_payload_t;

/* Bytes of frame head an op holds in itself: the command, checksum and metadata of an
 * entry whose metadata carries no key, few properties and no encryption key list. */
#define PC_OP_HEAD_SPACE 160

typedef struct pc_op {
    struct pc_op *next;
    uint64_t index; /* position in this producer's op stream (flush targets) */
    uint64_t sequence_id;
    uint64_t highest_sequence_id; /* last message's id in a batch, else sequence_id */
    int num_messages;             /* messages in the batch, 1 otherwise */
    bool batch;                   /* carries a batch (even of one message) */
    pc_msg_t *msgs;               /* linked by msg->next, in batch order */
    pc_msg_t **order;             /* a batch's: NULL or msgs' addresses (batch.h); owned */
    uint64_t opened_taken;        /* ... and its pc_batch_t.opened_taken */
    size_t charged;               /* a batch's: its pc_batch_t.charged */
    pc_buf_t head;                /* frame bytes up to the payload */
    const uint8_t *payload;       /* slice written after head, not copied */
    size_t payload_len;
    size_t raw_len;       /* the entry's payload before compression and encryption
                                     (a batch's layout); a chunked message's whole payload on
                                     its first chunk, 0 on the others (for the statistics) */
    size_t msg_bytes;     /* its messages' payload bytes as the application gave
                                     them (not set on chunks; for the statistics) */
    bool has_payload_crc; /* payload_crc = pc_crc32c(0, payload), known already */
    uint32_t payload_crc;
    pc_buf_t owned;              /* a batch's payload or a compressed single message */
    pc_shared_payload_t *shared; /* chunks of one compressed message */
    int chunk_id;                /* -1 unless a chunk */
    int num_chunks;
    bool replay;                 /* ids at or below what the broker may already hold: a
                                     duplicate receipt for it is expected */
    bool stored_earlier;         /* the broker answered it as a duplicate ahead of the
                                     ops before it: it completes in its turn */
    uint64_t first_registration; /* the producer registration it was first written on;
                                     0 = never written to any connection */
    uint64_t written_on;         /* the registration it was last written on; 0 = none
                                     (a chunk op built again after a reconnect) */
    uint64_t created_ms;         /* monotonic, for the send timeout */
    int writes_in_flight;        /* memory stays until no write uses it */
    bool done;
    pc_freelist_t *cache; /* where its block goes back when freed; NULL: free() */
    /* Where head starts: a frame's bytes up to its payload fit here unless its metadata
     * is large (keys, properties, encryption keys), so most ops allocate nothing more. */
    uint8_t head_space[PC_OP_HEAD_SPACE];
} pc_op_t;

/* A new op; its block comes from (and goes back to) cache when not NULL, the loop
 * thread's (pc_runtime_t.op_blocks). */
pc_op_t *pc_op_new(pc_freelist_t *cache);
/* Empty the op's head for another encoding, back in its own space. */
void pc_op_clear_head(pc_op_t *op);
/* The op has completed: free it (and the messages it owns) now, or once its last write
 * finishes, since a write may still read the payload. */
void pc_op_release(pc_op_t *op);
void pc_op_write_finished(pc_op_t *op);

pc_shared_payload_t *pc_shared_payload_new(void);
void pc_shared_payload_unref(pc_shared_payload_t *s);

#endif
