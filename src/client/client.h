/* The client: configuration, the loop thread and the hand-over of work to it. */
#ifndef PC_CLIENT_H
#define PC_CLIENT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "client/clusters.h"
#include "client/admission.h"
#include "client/config.h"
#include "client/send_pool.h"
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
    pc_client_clusters_t clusters;    /* what the service URL and failover settings name */
    pc_service_provider_t *services;  /* loop thread: the active cluster, failover */

    uv_loop_t loop;
    uv_thread_t thread;
    uv_async_t wakeup;
    pc_task_queue_t tasks;    /* posted from other threads (lock-free) */
    pc_task_t *local_head, *local_tail; /* loop thread: posted from the loop itself */
    atomic_bool tasks_closed; /* the wake-up handle is closed: nobody signals it again */

    /* What the layers below client/ get instead of the client: the loop, the logger, the
     * limits, the service URL, the pool, the id generators and whether destroy has started
     * (rt.stopping). Loop thread only. */
    pc_runtime_t rt;

    pc_admission_t admission; /* memoryLimitBytes and the wait for room (any thread) */
    pc_send_pool_t send_pool; /* accepted sends' memory, recycled (any thread) */

    struct pc_shutdown_hook *shutdown_hooks; /* loop thread: run when the client stops */
};

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
/* True on the client's loop thread. */
bool pc_client_on_loop(const pulsarc_client_t *c);

#endif
