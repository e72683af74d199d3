/* The partition producer's state, shared by the files that make it up, each with one job:
 *   partition_producer.c  lifecycle: create, close, abort, free, accessors
 *   pp_registration.c     look up, connect, register; reconnect with backoff; stop
 *   pp_queue.c            pendingMessages: writing, resending, receipts, send errors,
 *                         the send timeout, flush waiters
 *   pp_batching.c         sequence ids, the batch container, turning messages into ops
 *   pp_schema.c           schema versions: the producer's own, and those of messages with
 *                         their own schema (GET_OR_CREATE_SCHEMA, once per schema)
 * Nothing outside src/producer/ includes this.
 * @locality loop thread. */
#ifndef PC_PP_INTERNAL_H
#define PC_PP_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "codec/compression.h"
#include "net/backoff.h"
#include "net/connection.h"
#include "net/runtime.h"
#include "net/service_provider.h"
#include "producer/batch.h"
#include "producer/encryption.h"
#include "producer/op.h"
#include "producer/partition_producer.h"
#include "schema/schema.h"

typedef enum pp_state {
    PP_IDLE,       /* created, not started */
    PP_CONNECTING, /* looking up, connecting or registering */
    PP_READY,      /* registered: ops are written as they come */
    PP_CLOSING,    /* CLOSE_PRODUCER sent */
    PP_CLOSED,
    PP_FAILED, /* terminal error: every send fails */
} pp_state;

#define WAITING_TARGET UINT64_MAX

/* A schema and the version the broker gave it on this topic. */
typedef enum pp_slot_state {
    SLOT_UNKNOWN,  /* not asked yet, or asked on a connection that went away */
    SLOT_FETCHING, /* GET_OR_CREATE_SCHEMA in flight */
    SLOT_READY,    /* version known (or none, for a producer without schema) */
} pp_slot_state;

typedef struct pp_schema_slot {
    struct pp_schema_slot *next;
    pc_schema_t *schema; /* a reference; NULL in the producer's own slot without schema */
    uint64_t hash;
    pp_slot_state state;
    uint8_t version[PC_SCHEMA_VERSION_MAX];
    size_t version_len;
    bool has_version;
} pp_schema_slot;

typedef struct flush_waiter {
    struct flush_waiter *next;
    uint64_t target;    /* done when every op with index < target completed */
    pulsarc_result res; /* first failure among those ops */
    pc_pp_done_fn cb;
    void *ctx;
} flush_waiter;

struct pc_pp {
    pc_runtime_t *rt;
    pc_pp_settings_t set;
    char *topic;
    int partition;
    pc_pp_complete_fn complete;
    pc_pp_released_fn released;
    pc_pp_stopped_fn stopped;
    void *owner;
    pc_records_t records; /* where the owner keeps the messages (hooks) */

    pp_state state;                    /* changed by pc_pp_set_state only */
    _Atomic int *down;                 /* the owner's count of producers not connected (hooks) */
    bool counted;                      /* ... and whether this one is in it */
    _Atomic uint64_t *disconnected_at; /* the owner's last disconnect time (hooks) */
    pulsarc_result fail_res;           /* PP_FAILED: the error every send gets */
    char fail_detail[256];             /* ... and its detail */
    pulsarc_result attempt_res;        /* the last failed attempt of the first registration */
    char attempt_detail[256];          /* (PULSARC_OK: none), told if creation times out first */
    uint64_t producer_id;
    char *name;
    size_t name_len; /* strlen(name), for each message's metadata */
    bool user_named;
    uint64_t epoch;
    bool has_topic_epoch;      /* the broker gave the topic's epoch (exclusive access): */
    uint64_t topic_epoch;      /* sent again at every registration, so a producer fenced
                                 meanwhile is refused rather than taking over again */
    bool registering;          /* a PRODUCER request of the current attempt is in flight */
    uint64_t registration_rid; /* ... its request id */
    pc_conn_t *conn;
    pc_conn_listener_t listener;
    pc_cluster_listener_t cluster_listener; /* hears of a switch to another cluster */
    /* The service URL of the cluster the topic moved to (TOPIC_MIGRATED), where every later
     * lookup of the topic goes; NULL: the client's own. Forgotten on a switch of cluster. */
    pc_service_url_t *moved_to;
    uint32_t max_message_size;

    int64_t next_sequence_id;
    bool ids_exhausted;               /* INT64_MAX was used: no automatic id is left */
    _Atomic int64_t last_sequence_id; /* confirmed by the broker; read from any thread */
    bool sequence_known;              /* sequence ids were fixed by the first registration */
    /* Deduplication: the broker drops a whole entry whose first id is at or below the
     * highest it has seen from this producer name. `pushed` is that mark as far as we can
     * know it: the highest id that entered the op stream or the open batch, or the
     * broker's last id at registration. An id at or below it is a replay, and replays
     * never share a batch with new ids. */
    int64_t pushed;
    bool batch_replays;    /* the open batch holds replayed ids */
    uint64_t registration; /* counts successful registrations (1 = the first) */

    pc_op_t *head, *tail; /* pendingMessages: ops written or waiting to be */
    uint64_t next_op_index;
    flush_waiter *flushes;
    pc_msg_t *waiting_head, *waiting_tail; /* sent before the first registration, or
                                              behind a message whose schema version is
                                              being fetched (order is kept) */
    pp_schema_slot own_schema;          /* the producer's schema: version from PRODUCER_SUCCESS */
    _Atomic int64_t schema_version;     /* own_schema's 8-byte version as a number, or -1 */
    pp_schema_slot *schemas;            /* messages' own schemas, registered once each */
    const pp_schema_slot *batch_schema; /* the schema of the open batches' messages */
    pc_txn_ids_t batch_txn;             /* the transaction of the open batches' messages: a batch
                                 is one entry, committed or aborted whole */
    pc_batcher_t batcher;
    pc_compressor_t compressor; /* compression contexts, reused for every op */
    pc_batch_t *taken;          /* scratch for pc_batcher_take */
    int cap_taken;
    int64_t chunk_first_ledger, chunk_first_entry; /* first chunk of the message in flight */
    uint64_t chunk_attempts; /* numbers attempts at chunked messages (their uuids), from a
                                 random start: unique across restarts as well */
    pc_encryptor_t *enc;     /* NULL: entries go unencrypted */

    pc_backoff_t backoff;
    uv_timer_t reconnect_timer;
    uv_timer_t timeout_timer;
    uv_timer_t batch_timer;
    uv_timer_t close_timer; /* bounds a close by operationTimeoutMs */
    int live_handles;
    int inflight;     /* lookups, connection waits and requests that will call back */
    uint64_t attempt; /* numbers (re)connection attempts; answers to older ones are stale */
    bool freed;

    /* First registration (pc_pp_start). */
    pc_pp_done_fn start_cb;
    void *start_ctx;
    uint64_t start_deadline_ms;
    /* Close. */
    pc_pp_done_fn close_cb;
    void *close_ctx;

    pc_pp_counters_t counters; /* for the statistics */
};

#define NOT_SENT_DETAIL "the message was never written to a connection: not sent"

/* partition_producer.c */
/* Every change of state goes here: it keeps the owner's count of producers that are
 * started and not connected (pc_pp_hooks_t.down). */
void pc_pp_set_state(pc_pp_t *pp, pp_state s);
/* An asynchronous call made with pp as context returned; false when pp is gone. */
bool pc_pp_callback_returned(pc_pp_t *pp);
/* The producer is closed: whatever is still pending fails, then the closer hears. */
void pc_pp_finish_close(pc_pp_t *pp, pulsarc_result res);

/* pp_registration.c */
void pc_pp_stop_with(pc_pp_t *pp, pulsarc_result res, const char *detail);
/* The answer to the registration in flight is no longer wanted (close, abort): tell the
 * broker to drop the producer, which it may still create (a WaitForExclusive producer it
 * queued would otherwise take the topic with nobody behind it). */
void pc_pp_abandon_registration(pc_pp_t *pp);
void pc_pp_on_broker_close(void *ctx);
/* The broker moved the topic to another cluster: register there (net/connection.h). */
void pc_pp_on_migrated(void *ctx, const pc_service_url_t *to);
void pc_pp_on_disconnect(void *ctx, pulsarc_result why);
/* The client switched to another cluster: waiting to reconnect, try it now. */
void pc_pp_on_cluster_switch(pc_cluster_listener_t *l);

/* pp_queue.c */
void pc_pp_check_flushes(pc_pp_t *pp);
void pc_pp_complete_head(pc_pp_t *pp, pulsarc_result res, const pulsarc_message_id_t *id,
                         const char *detail);
/* pc_pp_complete_head for the op after prev (the head when prev is NULL). */
void pc_pp_complete_op(pc_pp_t *pp, pc_op_t *prev, pulsarc_result res,
                       const pulsarc_message_id_t *id, const char *detail);
void pc_pp_fail_message(pc_pp_t *pp, pc_msg_t *msg, pulsarc_result res, const char *detail);
void pc_pp_fail_batch(pc_pp_t *pp, pc_batch_t *b, pulsarc_result res, const char *detail);
void pc_pp_fail_all(pc_pp_t *pp, pulsarc_result res, const char *detail);
/* pc_pp_fail_all, with a detail per message that says whether it may have been stored (the
 * docs/delivery.md's "a timeout is maybe, unless it says not sent"): "<why>: no receipt yet; the
 * message may have been persisted" once written to a connection, "<why>: ...: not sent"
 * otherwise. */
void pc_pp_fail_all_in_doubt(pc_pp_t *pp, pulsarc_result res, const char *why);
void pc_pp_enqueue(pc_pp_t *pp, pc_op_t *first, pc_op_t *last);
void pc_pp_resend_pending(pc_pp_t *pp);
void pc_pp_send_close_producer(pc_pp_t *pp);
void pc_pp_on_receipt(void *ctx, const Pulsar__Proto__CommandSendReceipt *r);
void pc_pp_on_send_error(void *ctx, const Pulsar__Proto__CommandSendError *e);
void pc_pp_on_timeout_tick(uv_timer_t *t);

/* pp_schema.c */
/* Put the producer's schema (if any) into a PRODUCER command; *mem is freed with
 * pc_pp_schema_proto_free after the command was sent. Returns 0 or -1. */
int pc_pp_schema_fill_producer(pc_pp_t *pp, Pulsar__Proto__CommandProducer *reg, void **mem);
void pc_pp_schema_proto_free(void *mem);
/* Keep the version a PRODUCER_SUCCESS carries. PULSARC_OK or PROTOCOL with a detail. */
pulsarc_result pc_pp_schema_registered(pc_pp_t *pp,
                                       const Pulsar__Proto__CommandProducerSuccess *ok);
/* The slot of msg's schema, fetching its version when unknown and the producer is
 * connected; NULL when out of memory. */
pp_schema_slot *pc_pp_schema_slot_of(pc_pp_t *pp, pc_msg_t *msg);
void pc_pp_schema_free_all(pc_pp_t *pp);

/* pp_batching.c */
/* The chunks of one message, the op after prev (the head when NULL) and those after it,
 * were written on an earlier connection, where some may have been stored. Build the
 * message again from its first chunk, under a new uuid, in their place: a consumer then
 * assembles this attempt whole and never sees one of its chunks twice (the official C++
 * consumers before 4.x drop a message whose chunk comes twice). Returns the first new
 * chunk op; NULL when the message could not be built again, and failed. */
pc_op_t *pc_pp_restart_chunks(pc_pp_t *pp, pc_op_t *prev);
void pc_pp_note_id_used(pc_pp_t *pp, int64_t id);
void pc_pp_flush_batches(pc_pp_t *pp);
void pc_pp_fail_unsent(pc_pp_t *pp, pulsarc_result res, const char *detail);
void pc_pp_send_waiting(pc_pp_t *pp);

#endif
