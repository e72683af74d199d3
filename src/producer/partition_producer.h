/* A producer for one topic or one partition: sequence ids, pendingMessages, the
 * connection to the owning broker, reconnect and resend, send timeout.
 * It does not know which partition it is beyond the number it stamps on message ids.
 * @locality loop thread: every function here. */
#ifndef PC_PARTITION_PRODUCER_H
#define PC_PARTITION_PRODUCER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "codec/compression.h"
#include "net/runtime.h"
#include "producer/batch.h"
#include "producer/encryption.h"
#include "producer/message.h"
#include "producer/message_id.h"
#include "producer/pp_counters.h"
#include "producer/plan.h"
#include "producer/records.h"

typedef struct pc_pp pc_pp_t;

/* Who else may publish to the topic (CommandProducer.producer_access_mode; the values are
 * the configuration's names in order, not the protocol's numbers). */
typedef enum pc_access_mode {
    PC_ACCESS_SHARED = 0,             /* any number of producers */
    PC_ACCESS_EXCLUSIVE,              /* refused while another producer is there */
    PC_ACCESS_EXCLUSIVE_WITH_FENCING, /* the others are fenced out */
    PC_ACCESS_WAIT_FOR_EXCLUSIVE,     /* queued by the broker until the others leave */
} pc_access_mode;

/* What a partition producer needs of the producer configuration, in its own terms. */
typedef struct pc_pp_settings {
    const char *producer_name;   /* NULL: the broker assigns one (copied by pc_pp_new) */
    int64_t initial_sequence_id; /* -1: continue after the broker's last id */
    uint64_t send_timeout_ms;    /* 0: no send timeout */
    pc_codec_t compression;
    pc_compress_level_t compression_level;
    bool batching_enabled;
    pc_batcher_kind_t batcher;
    int batching_max_messages;
    size_t batching_max_bytes; /* payload bytes, as batchingMaxBytes counts them */
    uint64_t batching_max_delay_ms;
    bool chunking_enabled;
    size_t chunk_max_size;         /* 0: as large as the broker's max message size allows */
    bool lazy_start;               /* the first send registers it, not the creation */
    struct pulsarc_schema *schema; /* registered with the producer; NULL: none (pc_pp_new
                                      takes its own reference) */
    pc_enc_settings_t encryption;  /* key_names NULL: no end-to-end encryption */
    pc_access_mode access_mode;
    const pc_property_t *properties; /* CommandProducer.metadata (borrowed: must outlive
                                        the producer) */
    size_t n_properties;
    const char *initial_subscription; /* created with the producer; NULL: none (borrowed) */
    pc_pp_sink_t *sink;               /* the owner's, for latencies; NULL: none recorded */
} pc_pp_settings_t;

/* Runs once per message: success with its id, or failure. The owner runs the user's
 * callback and releases what admission reserved (unless `released` did already). */
typedef void (*pc_pp_complete_fn)(void *owner, pc_msg_t *msg, pulsarc_result res,
                                  const pulsarc_message_id_t *id);
/* The messages of one batch are done, and their completions follow, each with
 * msg->released set: the owner gives back what it charged for all of them (the sum of
 * their pc_msg_t.charged) at once, as the Java client releases a batch's permits in one
 * go, rather than once per message (which made the sending and loop threads trade the
 * admission counters' cache lines per message). first: the batch's first message. */
typedef void (*pc_pp_released_fn)(void *owner, pc_msg_t *first, int64_t messages, size_t charged);
typedef void (*pc_pp_done_fn)(pc_pp_t *pp, pulsarc_result res, void *ctx);
/* The producer stopped for good after a terminal error (pulsarc_result_is_terminal), even
 * with nothing pending: every later send fails with res. */
typedef void (*pc_pp_stopped_fn)(void *owner, pulsarc_result res, const char *detail);

/* What a partition producer tells its owner. */
typedef struct pc_pp_hooks {
    pc_pp_complete_fn complete;
    pc_pp_released_fn released;
    pc_pp_stopped_fn stopped;
    void *owner;
    /* Counts this producer while it is started and not registered (connecting, stopped
     * or closed), so that any thread can tell whether every started producer of an owner
     * is connected; NULL: not counted. A producer freed while counted takes itself off. */
    _Atomic int *down;
    /* Set to the wall-clock time (ms since the epoch) when this producer, registered,
     * loses its connection or is closed by the broker; NULL: not kept. */
    _Atomic uint64_t *disconnected_at;
    pc_records_t records; /* where the owner keeps each message (all 0: not said) */
} pc_pp_hooks_t;

/* The rules by which messages of a producer with these settings are planned
 * (producer/plan.h). */
pc_plan_rules_t pc_pp_plan_rules(const pc_pp_settings_t *set);

pc_pp_t *pc_pp_new(pc_runtime_t *rt, const char *topic, int partition, const pc_pp_settings_t *set,
                   const pc_pp_hooks_t *hooks);
/* Look up, connect and register with the broker; retries retryable failures until
 * operationTimeoutMs. cb reports the outcome. */
void pc_pp_start(pc_pp_t *pp, pc_pp_done_fn cb, void *ctx);
/* Queue a message (the producer takes it; it completes through `complete`). */
void pc_pp_send(pc_pp_t *pp, pc_msg_t *msg);
/* cb once every message queued before this call has completed; res is the first failure. */
void pc_pp_flush(pc_pp_t *pp, pc_pp_done_fn cb, void *ctx);
/* Flush, then close on the broker. */
void pc_pp_close(pc_pp_t *pp, pc_pp_done_fn cb, void *ctx);
/* Fail everything pending with why and stop at once (client shutdown). */
void pc_pp_abort(pc_pp_t *pp, pulsarc_result why, const char *detail);
/* Stop counting this producer in its owner's hooks.down (taking it off if counted): the
 * count is going away before the producer does. pc_pp_free does it too. */
void pc_pp_leave_count(pc_pp_t *pp);
/* Release (after close or abort); memory goes once the timers have closed. */
void pc_pp_free(pc_pp_t *pp);

const char *pc_pp_name(const pc_pp_t *pp);
int64_t pc_pp_last_sequence_id(const pc_pp_t *pp);
/* The version of the producer's schema as a number (8-byte versions); -1 when none. */
int64_t pc_pp_schema_version(const pc_pp_t *pp);
/* The current connection's limit (the protocol default until connected). */
uint32_t pc_pp_max_message_size(const pc_pp_t *pp);
/* Why its last attempt at a first registration failed (PULSARC_OK: none failed, or it
 * has registered), with the detail (valid until the next attempt). Loop thread. */
pulsarc_result pc_pp_last_attempt(const pc_pp_t *pp, const char **detail);
/* What it has counted so far (valid until it is freed). */
const pc_pp_counters_t *pc_pp_counters(const pc_pp_t *pp);

#endif
