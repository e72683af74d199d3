/* OpSendMsg: one frame on its way to the broker — a single message (later: a batch or a
 * chunk) with the callbacks to run when its receipt arrives. */
#ifndef PC_OP_H
#define PC_OP_H

#include <stdbool.h>
#include <stdint.h>

#include "client/message.h"
#include "common/buf.h"

typedef struct pc_op {
    struct pc_op *next;
    uint64_t index;               /* position in this producer's op stream (flush targets) */
    uint64_t sequence_id;
    uint64_t highest_sequence_id; /* == sequence_id unless a batch */
    int num_messages;
    pc_buf_t head;                /* frame up to the payload */
    const uint8_t *payload;       /* slice written after head, not copied */
    size_t payload_len;
    pc_buf_t compressed;          /* owns payload when the message was compressed */
    pc_msg_t *msg;                /* the message whose callback the receipt completes */
    uint64_t created_ms;          /* monotonic, for the send timeout */
    int writes_in_flight;         /* the op is freed only when no write still uses it */
    bool done;                    /* completed; waiting for writes to finish */
} pc_op_t;

pc_op_t *pc_op_new(void);
/* Free now, or once the last in-flight write finishes. Does not touch the message. */
void pc_op_release(pc_op_t *op);
void pc_op_write_finished(pc_op_t *op);

#endif
