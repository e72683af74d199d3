/* The public producer handle's state, shared by the files that make up the handle:
 * producer.c (send, flush, close, free), producer_create.c (creation),
 * send_failures.c (what failed messages leave for flushes and later sends); its counters
 * are admission's (admission.h). The partition producers themselves are the partitioned
 * producer's (src/partitioned/).
 * Nothing outside src/client/ includes this. */
#ifndef PC_PRODUCER_IMPL_H
#define PC_PRODUCER_IMPL_H

#include <stdatomic.h>
#include <stdbool.h>

#include "client/admission.h"
#include "client/client.h"
#include "client/stats_producer.h"
#include "common/topic_name.h"
#include "partitioned/partitioned.h"
#include "producer/send_plan.h"
#include "spool/spool.h"

/* P_DETACHED: the client was destroyed. The handle holds only its own memory: its
 * accessors answer, every other call fails, pulsarc_producer_free frees it. */
enum { P_OPEN, P_CLOSING, P_CLOSED, P_DETACHED };

/* A flush or close in progress. */
typedef struct done_task {
    pc_task_t task;
    pc_partitioned_op_t parts;    /* every partition's flush or close */
    pulsarc_producer_t *producer;
    pulsarc_done_cb cb;
    void *ctx;
    pulsarc_result res;           /* flush: the first failure among what it covers */
    char detail[512];
    uint64_t covers;              /* flush: it covers the messages handed over before it */
    struct done_task *next_flush; /* the producer's other flushes in progress */
    uint64_t held_left;           /* flush: of those, how many a transaction still holds */
    struct done_task *next_held;  /* the producer's other flushes waiting for such sends */
} done_task;

struct pulsarc_producer {
    pulsarc_client_t *client;
    pulsarc_producer_config_t conf;
    pc_topic_name_t topic;
    pc_send_rules_t rules;  /* how its messages are planned (producer/send_plan.h) */
    pc_spool_t *spool;      /* spoolDir's (producer_spool.c), or NULL */
    struct pc_sealer *sealer; /* with spoolDir and encryptionKeys (producer_seal.c) */
    pc_partitioned_t *pt;   /* the partition producers, their router and updates; NULL
                               until creation has looked up the partitions */

    _Atomic int state;
    pc_permits_t permits;   /* pending messages; refused once closing */
    _Atomic uint32_t max_message_size; /* the broker's limit, for an early check */

    /* Written by the loop thread once per receipt: kept off the cache line the sending
     * threads read (state) and update (permits) for every send. */
    char loop_written_apart[64];

    /* What the accessors report. Kept on the handle, so that any thread may read it while
     * the loop thread replaces or frees the partition producers (pc_producer_publish). */
    _Atomic(char *) name;         /* partition 0's, once known; freed with the handle */
    _Atomic int64_t last_sequence_id;
    _Atomic int64_t schema_version;

    /* Failures (send_failures.c). */
    _Atomic int terminal;         /* a terminal result every later send gets; 0 = none */
    char terminal_detail[512];    /* written once, before terminal is set */
    uint64_t handed_over;         /* loop thread: messages given to partition producers */
    done_task *flushes;           /* loop thread: flushes in progress */
    uint64_t txn_held;            /* loop thread: handed-over sends a transaction holds
                                     back until their partition is registered with it */
    done_task *held_flushes;      /* loop thread: flushes waiting for some of those */
    pulsarc_result unreported;    /* loop thread: first failure no flush covered yet */
    char unreported_detail[512];

    pc_shutdown_hook_t on_shutdown; /* registered with the client while listed */
    bool listed;
    bool free_requested;
    bool closing_on_loop;
    pc_task_t free_task;

    /* Statistics (stats_producer.h); the loop thread records every receipt's latency in
     * it, far from what the sending threads touch per send. */
    pc_stats_source_t stats_source; /* in the client's statistics while listed */
    pc_producer_stats_t stats;
};

/* The owner hooks a handle gives its partitioned producer. */
void pc_producer_partitioned_owner(pulsarc_producer_t *p, pc_partitioned_owner_t *out);
/* Copy what the accessors report (name, last sequence id, schema version) from partition
 * i to the handle. Loop thread. */
void pc_producer_publish(pulsarc_producer_t *p, int partition);
/* The client is shutting down (a pc_shutdown_hook_t): fail and stop the producer. A
 * handle the user has not freed stays valid, detached, until pulsarc_producer_free. */
void pc_producer_shutdown(pc_shutdown_hook_t *hook);
/* Free the handle's memory (its partition producers included). */
void pc_producer_release(pulsarc_producer_t *p);
/* The handle reports to its client's statistics from now on (it is listed), or no longer
 * (what it counted stays in the client's). stats_api.c; loop thread. */
void pc_producer_stats_join(pulsarc_producer_t *p);
void pc_producer_stats_leave(pulsarc_producer_t *p);
/* The loop thread's side of an accepted send (a pc_send_t's task): give it to its
 * partition. */
void pc_producer_run_send(pc_task_t *t);
/* Give s to its partition producer (it fails with ALREADY_CLOSED while the client stops),
 * or end it with res now (its callback runs, its memory goes). Loop thread. */
struct pc_send;
void pc_producer_hand_over(struct pc_send *s);
void pc_producer_fail_send(struct pc_send *s, pulsarc_result res);
/* Post a task of the handle's (send, flush, close, free): with a spool, in the one order
 * of all threads (pc_client_post_in_order), so that a flush posted after a send from the
 * loop thread covers it. */
void pc_producer_post(pulsarc_producer_t *p, pc_task_t *task);

/* The spool (producer_spool.c). */
struct pc_send;
/* Open the spool the configuration names (PULSARC_OK without spoolDir), before the
 * producer registers. Fails with INVALID_CONFIG on settings a spool cannot work with, or
 * with pc_spool_open's errors. Creating thread. */
pulsarc_result pc_producer_spool_open(pulsarc_producer_t *p);
/* After a successful creation, before anyone else has the handle: hand every spooled
 * message over, oldest first, with its sequence id (waiting for room as a blocking send
 * does when may_wait, else admitting them all), then make the spool's automatic ids
 * continue above the broker's last one. */
pulsarc_result pc_producer_spool_replay(pulsarc_producer_t *p, bool may_wait);
/* Whether msg may be spooled by a send on this thread (checked before admission). */
pulsarc_result pc_producer_spool_check(const pulsarc_producer_t *p, const pulsarc_message_t *msg);
/* The accept step of a send with a spool: append s (admitted, built from msg) and hand
 * it over in sequence-id order once the spool's policy is met. On failure, s is undone:
 * its admission released, a borrowed payload given back to msg, s freed. */
pulsarc_result pc_producer_spool_accept(pulsarc_producer_t *p, struct pc_send *s,
                                        pulsarc_message_t *msg);
/* s completed with res: let its record go, unless res is ALREADY_CLOSED (the client or
 * producer closed before its receipt: the next producer on the spool sends it). Loop
 * thread. */
void pc_producer_spool_done(struct pc_send *s, pulsarc_result res);

/* Sealing (producer_seal.c): what a producer with both spoolDir and encryptionKeys
 * encrypts on the sending thread, before its spool appends it. */
typedef struct pc_sealer pc_sealer_t;
/* The sealer, when the spool is open and encryption keys are named (PULSARC_OK and
 * nothing otherwise). Creating thread. */
pulsarc_result pc_producer_seal_open(pulsarc_producer_t *p);
void pc_producer_seal_close(pulsarc_producer_t *p);
/* Compress and encrypt s's message into s->msg.sealed (its plaintext stays in memory
 * only, for the interceptors and the callback). PULSARC_ERR_CRYPTO when no data key can
 * be had, MESSAGE_TOO_BIG when it cannot be framed, NO_MEMORY. Any thread. */
pulsarc_result pc_producer_seal(pulsarc_producer_t *p, struct pc_send *s);

/* A partition producer stopped after a terminal error (a pc_pp_stopped_fn; owner is the
 * handle): every later send fails at once with res. Loop thread. */
void pc_failures_note_terminal(void *owner, pulsarc_result res, const char *detail);
/* A failed message (its hand-over number): remember it for the flushes that cover it (or
 * the next flush) and, when terminal, for every later send. Loop thread. */
void pc_failures_note(pulsarc_producer_t *p, uint64_t handover, pulsarc_result res,
                      const char *detail);
/* A flush starts (d covers every message handed over so far) or ends. Loop thread. */
void pc_failures_flush_begin(pulsarc_producer_t *p, done_task *d);
void pc_failures_flush_end(pulsarc_producer_t *p, done_task *d);
/* The terminal result a new send must fail with (and its detail), or PULSARC_OK. Any
 * thread. */
pulsarc_result pc_failures_refusal(const pulsarc_producer_t *p);


#endif
