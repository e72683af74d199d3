/* The client: configuration, the loop thread and the hand-over of work to it, and its
 * close. How its loop runs (on a thread of its own, or driven by the application's loop)
 * is client_loop.c's; nothing else knows which mode a client is in. */
#ifndef PC_CLIENT_H
#define PC_CLIENT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "client/clusters.h"
#include "accept/admission.h"
#include "config/config.h"
#include "accept/block_pool.h"
#include "stats/stats_client.h"
#include "common/log.h"
#include "common/task.h"
#include "common/task_queue.h"
#include "net/runtime.h"
#include "net/service_provider.h"
#include "net/service_url.h"
#include "pulsarc/pulsarc.h"

/* A one-shot rendezvous for blocking calls: the loop thread signals a result and its
 * detail, the caller waits and gets both (the detail is per thread, so it must travel). */
typedef struct pc_waiter {
    uv_mutex_t mu;
    uv_cond_t cond;
    bool done;
    pulsarc_result res;
    char detail[512];
} pc_waiter_t;

void pc_waiter_init(pc_waiter_t *w);
void pc_waiter_destroy(pc_waiter_t *w);
/* detail (may be NULL) explains a failure. */
void pc_waiter_signal(pc_waiter_t *w, pulsarc_result res, const char *detail);
/* Returns the result; a failure's detail becomes the calling thread's. */
pulsarc_result pc_waiter_wait(pc_waiter_t *w);

struct pulsarc_client {
    pulsarc_client_config_t conf;
    pc_logger_t log;
    pc_client_clusters_t clusters;   /* what the service URL and failover settings name */
    pc_service_provider_t *services; /* loop thread: the active cluster, failover */

    /* The client's own loop: everything below client/ runs on it. A thread of the client's
     * runs it, or (pulsarc_client_new_on_loop) the application's loop drives it. */
    uv_loop_t loop;
    uv_thread_t thread;      /* the loop thread: the client's own, or the application's */
    bool driven;             /* by the application's loop (client_loop.c); else a thread */
    struct pc_app_loop *app; /* driven: pulsarc's handles on the application's loop, until
                                 they have closed */
    bool (*loop_dry)(pulsarc_client_t *c); /* pc_client_closed, which client_loop.c calls
                                              once the loop ran dry after the close */
    uv_async_t wakeup;
    pc_task_queue_t tasks;              /* posted from other threads (lock-free) */
    pc_task_t *local_head, *local_tail; /* loop thread: posted from the loop itself */
    atomic_bool tasks_closed;           /* the wake-up handle is closed: nobody signals it again */

    /* What the layers below client/ get instead of the client: the loop, the logger, the
     * limits, the service URL, the pool, the id generators and whether destroy has started
     * (rt.stopping). Loop thread only. */
    pc_runtime_t rt;

    pc_admission_t admission; /* memoryLimitBytes and the wait for room (any thread) */
    pc_block_pool_t blocks;   /* accepted sends' memory, recycled (any thread) */
    pc_client_stats_t stats;  /* loop thread: statistics, and the latency clock */
    uint64_t sends_taken;     /* loop thread: sends handed over, every producer's
                                 (producer/records.h) */

    struct pc_shutdown_hook *shutdown_hooks; /* loop thread: run when the client stops */
    struct pc_tc *tc;                        /* loop thread: the transaction coordinator client,
                                        made at the first pulsarc_txn_begin (client/txn.c) */

    /* Closing: pulsarc_client_close_async or pulsarc_client_destroy starts it (once), the
     * loop running dry ends it (pc_client_closed). */
    _Atomic int phase; /* PC_CLIENT_OPEN, _CLOSING, _CLOSED */
    pc_task_t close_task;
    pulsarc_client_done_cb close_cb; /* written before close_task is posted */
    void *close_ctx;
    pc_waiter_t closed;       /* signalled once the close is done */
    bool in_close_cb;         /* loop thread: close_cb is running */
    bool free_after_close_cb; /* loop thread: destroy was called in close_cb */
};

enum { PC_CLIENT_OPEN, PC_CLIENT_CLOSING, PC_CLIENT_CLOSED };

/* Something that must stop with the client (an open producer): registered on the loop
 * thread, run there once when the client shuts down, after which it is unregistered. The
 * client calls nothing else of its registrants, so it never depends on them. */
typedef struct pc_shutdown_hook {
    struct pc_shutdown_hook *next;
    void (*run)(struct pc_shutdown_hook *hook);
} pc_shutdown_hook_t;

/* Loop thread. */
void pc_client_on_shutdown(pulsarc_client_t *c, pc_shutdown_hook_t *hook);
void pc_client_forget_shutdown(pulsarc_client_t *c, pc_shutdown_hook_t *hook);

/* Queue work for the loop thread (any thread). */
void pc_client_post(pulsarc_client_t *c, pc_task_t *task);
/* The same, but posts made on the loop thread too join the one queue every other thread
 * posts to, so that all of them run in the order they were posted (pc_client_post runs
 * the loop's own first). For work whose order across threads matters: a spooled
 * producer's sends carry their sequence ids in that order. Any thread. */
void pc_client_post_in_order(pulsarc_client_t *c, pc_task_t *task);
/* True on the client's loop thread (client_loop.c). */
bool pc_client_on_loop(const pulsarc_client_t *c);
/* PULSARC_OK, or PULSARC_ERR_WOULD_BLOCK (with a detail naming call) on the loop thread,
 * where a call that waits for the loop would wait for ever. Any thread. */
pulsarc_result pc_client_may_block(const pulsarc_client_t *c, const char *call);
/* PULSARC_OK, or PULSARC_ERR_ALREADY_CLOSED once the client's close has begun. Any thread. */
pulsarc_result pc_client_check_open(const pulsarc_client_t *c);

/* The loop has run dry after the close: every handle of the client's is closed. Runs the
 * close callback and answers a waiting destroy. Returns true when the client is gone
 * (destroyed from the callback). Loop thread (client_loop.c calls it, as c->loop_dry). */
bool pc_client_closed(pulsarc_client_t *c);

/* ---- client_loop.c: how the loop runs --------------------------------------------- */

/* Start running c->loop: on a thread of the client's own when app is NULL, else driven by
 * the application's loop app from the calling thread, which must be the one running app
 * (it becomes c->thread). On failure nothing of it is left on either loop. */
pulsarc_result pc_client_loop_start(pulsarc_client_t *c, uv_loop_t *app);
/* Wait for the client's own thread to end after the close (no-op when driven). */
void pc_client_loop_join(pulsarc_client_t *c);
/* Work was just posted on the loop thread: keep the application's loop running until the
 * client's loop has run it (no-op with a thread of its own). Loop thread. */
void pc_client_loop_hold(pulsarc_client_t *c);

#endif
