/* The hand-over queue: many threads push pc_task_t, one thread (the loop) pops. Lock-free
 * and intrusive (Dmitry Vyukov's MPSC queue): a push is one atomic exchange and one store,
 * whatever the contention, and allocates nothing.
 *
 * A pop can briefly see the queue as empty while a push is half done (the pusher has
 * swapped the head but not yet linked its predecessor to it). That pusher reaches its
 * wake-up step afterwards, so a consumer that, on finding the queue empty, re-arms the
 * wake-up (pc_task_queue_rearm) and pops once more never misses a task: either that pop
 * sees it, or its pusher finds the wake-up re-armed and wakes the consumer again. */
#ifndef PC_TASK_QUEUE_H
#define PC_TASK_QUEUE_H

#include <stdatomic.h>
#include <stdbool.h>

#include "common/task.h"

typedef struct pc_task_queue {
    /* The pushers' side: each push exchanges both. */
    _Atomic(pc_task_t *) head; /* the last pushed; pushers swap it */
    atomic_bool wake_pending;  /* a wake-up is on its way and has not been taken yet */
    /* The consumer's side, on cache lines of its own: it writes tail at every pop, which
     * on the pushers' line would take that line away from them at every message. */
    char apart[64];
    pc_task_t *tail; /* consumer only: the next to pop (or the stub) */
    pc_task_t stub;  /* keeps the queue non-empty, so push never sees NULL */
} pc_task_queue_t;

void pc_task_queue_init(pc_task_queue_t *q);
/* Any thread. Returns true when the caller must wake the consumer: the first push since
 * the consumer last armed its wake-up. Later pushes ride on the same wake-up. */
bool pc_task_queue_push(pc_task_queue_t *q, pc_task_t *t);
/* Consumer, on being woken, before popping: later pushes wake it again. */
void pc_task_queue_rearm(pc_task_queue_t *q);
/* Consumer. The oldest task, or NULL when the queue is empty (or a push is half done:
 * that pusher wakes the consumer again). */
pc_task_t *pc_task_queue_pop(pc_task_queue_t *q);

#endif
