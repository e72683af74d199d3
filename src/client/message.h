/* Messages: the caller's builder and the accepted message the library owns. */
#ifndef PC_MESSAGE_H
#define PC_MESSAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "client/client.h"
#include "pulsarc/pulsarc.h"

typedef struct pc_property {
    char *key;
    char *value;
} pc_property_t;

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
    uint64_t deliver_at;
    int64_t sequence_id; /* -1 = automatic */
};

struct pulsarc_producer;

/* A message the library has accepted: one allocation holding the copies of key,
 * properties and (in copy mode) payload. Lives until its callback has run. */
typedef struct pc_msg {
    pc_task_t task;                 /* hand-over to the loop thread */
    struct pc_msg *next;            /* producer-side queues (batches) */
    const uint8_t *payload;
    size_t payload_len;
    pulsarc_payload_free_cb free_cb; /* borrowed payload */
    void *free_ctx;
    const char *key;                /* NULL if none */
    const uint8_t *ordering_key;    /* NULL if none */
    size_t ordering_key_len;
    const pc_property_t *props;
    size_t n_props;
    uint64_t event_time;
    uint64_t deliver_at;
    int64_t sequence_id;            /* explicit id or -1; the assigned id once queued */
    int partition;                  /* chosen by the router at send time */
    uint64_t handover;              /* its place among the producer's messages, in the
                                       order they reached the loop thread */
    pulsarc_send_cb cb;
    void *cb_ctx;
    struct pulsarc_producer *producer;
    size_t reserved_bytes;          /* memory-limit bytes held until completion */
    bool holds_permit;              /* a pending-message permit is held */
} pc_msg_t;

/* Copy the builder into a new accepted message. In borrow mode the payload is taken over
 * and the builder left without one. NULL when out of memory. */
pc_msg_t *pc_msg_from_builder(pulsarc_message_t *b);
/* Free the message and release a borrowed payload. Does not call the send callback. */
void pc_msg_free(pc_msg_t *m);

#endif
