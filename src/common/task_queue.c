#include "common/task_queue.h"

#include <stddef.h>

#include "common/prefetch.h"

void pc_task_queue_init(pc_task_queue_t *q)
{
    atomic_init(&q->stub.next, NULL);
    q->stub.run = NULL;
    atomic_init(&q->head, &q->stub);
    q->tail = &q->stub;
    atomic_init(&q->wake_pending, false);
}

static void link_in(pc_task_queue_t *q, pc_task_t *t)
{
    atomic_store_explicit(&t->next, NULL, memory_order_relaxed);
    pc_task_t *prev = atomic_exchange_explicit(&q->head, t, memory_order_acq_rel);
    atomic_store_explicit(&prev->next, t, memory_order_release);
}

bool pc_task_queue_push(pc_task_queue_t *q, pc_task_t *t)
{
    link_in(q, t);
    /* After the link: a consumer that takes this wake-up flag (an acquire exchange)
     * sees the link. Only the first pusher after a re-arm wakes the consumer. */
    return !atomic_exchange_explicit(&q->wake_pending, true, memory_order_acq_rel);
}

void pc_task_queue_rearm(pc_task_queue_t *q)
{
    atomic_exchange_explicit(&q->wake_pending, false, memory_order_acq_rel);
}

/* The task after the one handed out is read next, and with a long queue (many producers'
 * windows of sends waiting) its block has left the caches since its sender wrote it: its
 * lines are fetched while the consumer runs the one handed out, instead of stalling the
 * next pop on one miss and the task's run on the rest. A task is a send's record (a
 * 512-byte block, accept/block_pool.h) most of the time. */
pc_task_t *pc_task_queue_pop(pc_task_queue_t *q)
{
    pc_task_t *tail = q->tail;
    pc_task_t *next = atomic_load_explicit(&tail->next, memory_order_acquire);
    if (tail == &q->stub) {
        if (!next)
            return NULL;
        q->tail = tail = next;
        next = atomic_load_explicit(&tail->next, memory_order_acquire);
    }
    if (next) {
        q->tail = next;
        pc_prefetch_block(next);
        return tail;
    }
    /* tail is the last task linked. Unless a push is half done, put the stub behind it so
     * that tail can be handed out without leaving the queue without a node. */
    if (tail != atomic_load_explicit(&q->head, memory_order_acquire))
        return NULL;
    link_in(q, &q->stub);
    next = atomic_load_explicit(&tail->next, memory_order_acquire);
    if (next) {
        q->tail = next;
        return tail;
    }
    return NULL;
}
