/* The message the partition producer works with: what was accepted for sending, in one
 * block its owner allocated. The layer that accepted it (client/) wraps it with its own
 * bookkeeping and says how the block goes (release).
 * @locality loop thread once handed over. */
#ifndef PC_PRODUCER_MESSAGE_H
#define PC_PRODUCER_MESSAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pulsarc/pulsarc.h"
#include "wire/property.h"
#include "wire/txn_ids.h"

typedef struct pc_msg {
    struct pc_msg *next; /* producer-side queues (batches, ops) */
    const uint8_t *payload;
    size_t payload_len;
    pulsarc_payload_free_cb free_cb; /* non-NULL: a borrowed payload */
    void *free_ctx;
    const char *key;             /* NULL if none */
    const uint8_t *ordering_key; /* NULL if none */
    size_t ordering_key_len;
    const pc_property_t *props;
    size_t n_props;
    uint64_t event_time;
    uint64_t deliver_at;             /* ms since the epoch; 0: at once */
    const char *const *replicate_to; /* the clusters to replicate to; none: the namespace's
                                       ("__local__" alone: none at all) */
    size_t n_replicate_to;
    int64_t sequence_id;               /* explicit id or -1; the assigned id once queued */
    const uint32_t *block_crcs;        /* NULL, or the payload's block CRCs
                                       (wire/crc32c_blocks.h), computed off the loop */
    bool key_b64;                      /* key is base64 (KeyValue SEPARATED) */
    bool null_key, null_value;         /* KeyValue SEPARATED with Java's null parts */
    struct pulsarc_schema *schema;     /* its own schema (a reference) or NULL: the producer's */
    const void *schema_slot;           /* the producer's: where its schema version is kept */
    pc_txn_ids_t txn;                  /* the transaction (registered on this partition by
                                       the layer above before the hand-over) */
    uint64_t handover_ns;              /* the loop turn that took it over (common/turn_clock.h),
                                       for the latency statistics; 0: not stamped */
    struct pc_sealed *sealed;          /* encrypted before the hand-over (producer/sealed.h):
                                       sent as it is; owned, freed with the message */
    size_t entry_size;                 /* loop thread: its batch entry's bound
                                       (pc_batch_entry_size), measured once; 0: not yet */
    bool batched;                      /* its send plan's (plan.h), made by the layer that
                                       accepted it: into a batch container, when its entry
                                       fits the connection's frame */
    size_t charged;                    /* what the accepting layer counted against
                                       memoryLimitBytes for it; a batch sums it, to give it
                                       back at once (pc_pp_released_fn) */
    bool released;                     /* loop thread: given back with its batch's */
    void (*release)(struct pc_msg *m); /* frees the block that holds the message */
} pc_msg_t;

/* Hand a borrowed payload back and free the message. Does not call any callback. */
void pc_msg_free(pc_msg_t *m);

#endif
