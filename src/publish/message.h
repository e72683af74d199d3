/* The caller's message builder (pulsarc_message_t): what a send copies (publish/send.h)
 * or, for interceptors, what they see and change. */
#ifndef PC_MESSAGE_H
#define PC_MESSAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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
    int64_t sequence_id;    /* -1 = automatic */
    uint8_t *owned_payload; /* pulsarc_message_set_key_value's layout (the payload) */
    bool key_b64;           /* the key is base64 (KeyValue SEPARATED) */
    bool null_key, null_value;
    struct pulsarc_schema *schema;   /* a reference, or NULL */
    struct pulsarc_message *copy_of; /* an interceptors' copy (interceptors.c): the caller's
                                        message; NULL otherwise */
};

/* The builder's message must be an entry of its own: the broker applies delayed delivery
 * and replication clusters to a whole entry, so a message with either travels alone,
 * never in a batch (as in the Go client). */
static inline bool pc_message_alone(const pulsarc_message_t *b)
{
    return b->deliver_at || b->deliver_after || b->n_replicate_to;
}

#endif
