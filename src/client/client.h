/* The client: configuration, the loop thread and the hand-over of work to it. */
#ifndef PC_CLIENT_H
#define PC_CLIENT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "client/config.h"
#include "common/log.h"
#include "net/service_url.h"
#include "pulsarc/pulsarc.h"

struct pc_pool;

/* A unit of work handed to the loop thread. Embed it in a larger struct. */
typedef struct pc_task {
    struct pc_task *next;
    void (*run)(struct pc_task *task);
} pc_task_t;

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
    pc_service_url_t url;
    char service_url[1024];

    uv_loop_t loop;
    uv_thread_t thread;
    uv_async_t wakeup;
    uv_mutex_t tasks_mu;
    pc_task_t *tasks_head, *tasks_tail;
    bool stopping;            /* loop thread: destroy has started */
    bool tasks_closed;        /* under tasks_mu: the loop takes no more tasks */

    struct pc_pool *pool;
    uint64_t next_request_id; /* loop thread only */
    uint64_t next_producer_id;
    int next_host;            /* round-robin over the service URL's hosts */

    /* Admission counters, touched from any thread. */
    atomic_int_fast64_t memory_used;
    atomic_int admit_waiters;  /* threads inside admission (see producer.c admit) */
    uv_mutex_t admit_mu;
    uv_cond_t admit_cond;     /* signalled when memory or permits are released */

    struct pulsarc_producer *producers; /* loop thread: every open producer */
};

/* Queue work for the loop thread (any thread). */
void pc_client_post(pulsarc_client_t *c, pc_task_t *task);
/* True on the client's loop thread. */
bool pc_client_on_loop(const pulsarc_client_t *c);
/* Wake threads waiting for admission (memory or permits were released). */
void pc_client_admission_released(pulsarc_client_t *c);
/* A timer on the loop, in its own allocation so that it may outlive its owner while it
 * closes; NULL when out of memory. pc_client_timer_free stops, closes and frees it. */
uv_timer_t *pc_client_timer_new(pulsarc_client_t *c, void *data);
void pc_client_timer_free(uv_timer_t *t);

#endif
