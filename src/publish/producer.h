/* The producer handle (struct pulsarc_producer) and what the files of src/publish/ share.
 * The module is the public producer: its creation, the send (an ordered list of accept
 * stages, accept.c), the hand-over to the loop thread, the completion of each message (an
 * ordered list of completion stages, complete.c), flush, close and free. Each feature that
 * joins the send is a stage in a file of its own: interceptors.c, txn_stage.c,
 * seal_stage.c, spool_stage.c; the send path calls them, they never call back into it.
 * The calls between the files go one way:
 *
 *   accept.c ─► admit.h, checks.c, interceptors.c, txn_stage.c, spool_stage.c ─► seal_stage.c
 *   producer_create.c ─► spool_replay.c ─► admit.h
 *   producer.c (close, free, shutdown, the partitions' hooks) ─► complete.c, flush.c
 *   handover.c ─► complete.c ─► flush.c, txn_stage.c, interceptors.c, spool_stage.c
 *   everything ─► handle.c (release, post, accessors), send.c, message.c
 *
 * Nothing outside src/publish/ includes this. */
#ifndef PC_PUBLISH_PRODUCER_H
#define PC_PUBLISH_PRODUCER_H

#include <stdatomic.h>
#include <stdbool.h>

#include "accept/admission.h"
#include "client/client.h"
#include "common/topic_name.h"
#include "partitioned/partitioned.h"
#include "producer/plan.h"
#include "publish/send.h"
#include "spool/spool.h"
#include "stats/stats_producer.h"

/* P_DETACHED: the client was destroyed. The handle holds only its own memory: its
 * accessors answer, every other call fails, pulsarc_producer_free frees it. */
enum { P_OPEN, P_CLOSING, P_CLOSED, P_DETACHED };

/* A flush or close in progress. */
typedef struct pc_done_task {
    pc_task_t task;
    pc_partitioned_op_t parts; /* every partition's flush or close */
    pulsarc_producer_t *producer;
    pulsarc_done_cb cb;
    void *ctx;
    pulsarc_result res; /* flush: the first failure among what it covers */
    char detail[512];
    uint64_t covers;                 /* flush: it covers the messages handed over before it */
    struct pc_done_task *next_flush; /* the producer's other flushes in progress */
    uint64_t held_left;              /* flush: of those, how many a transaction still holds */
    struct pc_done_task *next_held;  /* the producer's other flushes waiting for such sends */
} pc_done_task_t;

typedef struct pc_sealer pc_sealer_t;

struct pulsarc_producer {
    pulsarc_client_t *client;
    pulsarc_producer_config_t conf;
    pc_topic_name_t topic;
    pc_plan_rules_t rules; /* how its messages are planned (producer/plan.h) */
    pc_spool_t *spool;     /* spoolDir's (spool_stage.c), or NULL */
    pc_sealer_t *sealer;   /* with spoolDir and encryptionKeys (seal_stage.c), or NULL */
    pc_partitioned_t *pt;  /* the partition producers, their router and updates; NULL
                               until creation has looked up the partitions */

    _Atomic int state;
    pc_permits_t permits;              /* pending messages; refused once closing */
    _Atomic uint32_t max_message_size; /* the broker's limit, for an early check */

    /* Written by the loop thread once per receipt: kept off the cache line the sending
     * threads read (state) and update (permits) for every send. */
    char loop_written_apart[64];

    /* What the accessors report. Kept on the handle, so that any thread may read it while
     * the loop thread replaces or frees the partition producers (pc_producer_publish). */
    _Atomic(char *) name; /* partition 0's, once known; freed with the handle */
    _Atomic int64_t last_sequence_id;
    _Atomic int64_t schema_version;

    /* Failures (flush.c). */
    _Atomic int terminal;         /* a terminal result every later send gets; 0 = none */
    char terminal_detail[512];    /* written once, before terminal is set */
    uint64_t handed_over;         /* loop thread: messages given to partition producers */
    pc_done_task_t *flushes;      /* loop thread: flushes in progress */
    uint64_t txn_held;            /* loop thread: handed-over sends a transaction holds
                                     back until their partition is registered with it */
    pc_done_task_t *held_flushes; /* loop thread: flushes waiting for some of those */
    pulsarc_result unreported;    /* loop thread: first failure no flush covered yet */
    char unreported_detail[512];

    pc_shutdown_hook_t on_shutdown; /* registered with the client while listed */
    bool listed;
    bool free_requested;
    bool closing_on_loop;
    pc_task_t free_task;

    /* Statistics (stats/stats_producer.h); the loop thread records every receipt's
     * latency in it, far from what the sending threads touch per send. */
    pc_stats_source_t stats_source; /* in the client's statistics while listed */
    pc_producer_stats_t stats;
};

/* ---- handle.c: the handle itself ----------------------------------------------------- */

/* PULSARC_OK, or why no call but the accessors and free may use p (NULL, or its client
 * was destroyed). Any thread. */
pulsarc_result pc_producer_check_attached(const pulsarc_producer_t *p);
/* Free the handle's memory (its partition producers included). */
void pc_producer_release(pulsarc_producer_t *p);

/* room.c: the room callback (pulsarc_room_cb). At creation, after pc_permits_init: give
 * admission the producer's callback, if it has one. Loop thread, when the producer goes
 * away: forget a watch for room in progress. */
void pc_producer_room_init(pulsarc_producer_t *p);
void pc_producer_room_forget(pulsarc_producer_t *p);
/* Post a task of the handle's (send, flush, close, free): with a spool, in the one order
 * of all threads (pc_client_post_in_order), so that a flush posted after a send from the
 * loop thread covers it. Any thread. */
void pc_producer_post(pulsarc_producer_t *p, pc_task_t *task);
/* Copy what the accessors report (name, last sequence id, schema version) from partition
 * i to the handle. Loop thread. */
void pc_producer_publish(pulsarc_producer_t *p, int partition);

/* ---- handover.c: the loop thread takes an accepted send ------------------------------ */

/* The loop thread's side of an accepted send (a pc_send_t's task): a transaction's send
 * waits for its partition's registration, then it goes to its partition. */
void pc_producer_run_send(pc_task_t *t);

/* ---- complete.c: the end of each message -------------------------------------------- */

/* The completion stages, then exactly one callback (a pc_pp_complete_fn; owner is the
 * handle). Loop thread. */
void pc_producer_complete(void *owner, pc_msg_t *msg, pulsarc_result res,
                          const pulsarc_message_id_t *id);
/* A batch is done: its admission given back at once (a pc_pp_released_fn). */
void pc_producer_release_batch(void *owner, pc_msg_t *first, int64_t messages, size_t charged);
/* End s with res now (its callback runs, its memory goes), and with it its transaction's
 * hold. Loop thread. */
void pc_producer_fail_send(pc_send_t *s, pulsarc_result res);

/* ---- flush.c: flushes, and what failed messages leave for them ---------------------- */

/* A partition producer stopped after a terminal error (a pc_pp_stopped_fn; owner is the
 * handle): every later send fails at once with res. Loop thread. */
void pc_failures_note_terminal(void *owner, pulsarc_result res, const char *detail);
/* A failed message (its hand-over number): remember it for the flushes that cover it (or
 * the next flush). Loop thread. */
void pc_failures_note(pulsarc_producer_t *p, uint64_t handover, pulsarc_result res,
                      const char *detail);
/* The terminal result a new send must fail with (and its detail), or PULSARC_OK. Any
 * thread. */
pulsarc_result pc_failures_refusal(const pulsarc_producer_t *p);
/* A send a transaction held back went on to its partition or failed (its hand-over
 * number): the flushes that waited for it may start. Loop thread. */
void pc_flush_held_released(pulsarc_producer_t *p, uint64_t handover);
/* A done task of p's that runs run on the loop thread (flush, close), or NO_MEMORY. */
pulsarc_result pc_done_task_post(pulsarc_producer_t *p, void (*run)(pc_task_t *),
                                 pulsarc_done_cb cb, void *ctx);
/* The callback hears the result with its detail; d goes. Loop thread. */
void pc_done_task_report(pc_done_task_t *d);
pc_done_task_t *pc_done_task_of(pc_partitioned_op_t *op);
/* Start an async call and wait for its callback. Not on the loop thread. */
pulsarc_result pc_done_task_wait(pulsarc_producer_t *p,
                                 pulsarc_result (*start)(pulsarc_producer_t *, pulsarc_done_cb,
                                                         void *));

/* ---- producer.c: close, free, the client's shutdown, the partitions' hooks ---------- */

/* The owner hooks a handle gives its partitioned producer. */
void pc_producer_partitioned_owner(pulsarc_producer_t *p, pc_partitioned_owner_t *out);
/* The client is shutting down (a pc_shutdown_hook_t): fail and stop the producer. A
 * handle the user has not freed stays valid, detached, until pulsarc_producer_free. */
void pc_producer_shutdown(pc_shutdown_hook_t *hook);

/* ---- producer_stats.c --------------------------------------------------------------- */

/* The handle reports to its client's statistics from now on (it is listed), or no longer
 * (what it counted stays in the client's). Loop thread. */
void pc_producer_stats_join(pulsarc_producer_t *p);
void pc_producer_stats_leave(pulsarc_producer_t *p);

/* ---- spool_replay.c ----------------------------------------------------------------- */

/* After a successful creation, before anyone else has the handle: hand every spooled
 * message over, oldest first, with its sequence id (waiting for room as a blocking send
 * does: not on the loop thread), then make the spool's automatic ids continue above the
 * broker's last one. */
pulsarc_result pc_producer_spool_replay(pulsarc_producer_t *p);

#endif
