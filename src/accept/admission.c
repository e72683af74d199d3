#include "accept/admission.h"

#include "common/error.h"

static bool on_loop(const pc_admission_t *a)
{
    uv_thread_t self = uv_thread_self();
    return uv_thread_equal(&self, a->loop_thread);
}

static void wake(pc_admission_t *a)
{
    uv_mutex_lock(&a->mu);
    uv_cond_broadcast(&a->cond);
    uv_mutex_unlock(&a->mu);
}

static void on_check(uv_check_t *h)
{
    pc_admission_t *a = h->data;
    if (!a->freed)
        return;
    a->freed = false;
    wake(a);
}

void pc_admission_init(pc_admission_t *a, uv_loop_t *loop, const uv_thread_t *loop_thread,
                       int64_t memory_limit)
{
    atomic_init(&a->memory_used, 0);
    atomic_init(&a->waiters, 0);
    a->memory_limit = memory_limit;
    a->loop_thread = loop_thread;
    a->freed = false;
    a->deferring = true;
    uv_mutex_init(&a->mu);
    uv_cond_init(&a->cond);
    uv_check_init(loop, &a->check);
    a->check.data = a;
    uv_check_start(&a->check, on_check);
    uv_unref((uv_handle_t *)&a->check);
}

void pc_admission_stop_deferring(pc_admission_t *a)
{
    a->deferring = false;
    uv_close((uv_handle_t *)&a->check, NULL);
    if (a->freed)
        wake(a);
    a->freed = false;
}

void pc_admission_wait_empty(pc_admission_t *a)
{
    uv_mutex_lock(&a->mu);
    while (atomic_load(&a->waiters) > 0)
        uv_cond_wait(&a->cond, &a->mu);
    uv_mutex_unlock(&a->mu);
}

void pc_admission_destroy(pc_admission_t *a)
{
    uv_cond_destroy(&a->cond);
    uv_mutex_destroy(&a->mu);
}

int64_t pc_admission_pending_limit(int64_t per_partition, int64_t across, int routable)
{
    int64_t limit = per_partition > 0 ? per_partition * routable : 0;
    if (across > 0 && (limit == 0 || across < limit))
        limit = across;
    return limit;
}

void pc_permits_init(pc_permits_t *pm)
{
    atomic_init(&pm->pending, 0);
    atomic_init(&pm->closed, false);
}

/* Take a permit and the memory if both are free, or neither. Compare-and-swap, so the
 * counters never hold a reservation that is about to be given back (which could refuse
 * another sender for nothing). */
static bool try_reserve(pc_admission_t *a, pc_permits_t *pm, int64_t max_pending, int64_t bytes,
                        bool *room, bool *memory)
{
    int_fast64_t n = atomic_load(&pm->pending);
    do {
        *room = max_pending == 0 || n < max_pending;
        if (!*room)
            return false;
    } while (!atomic_compare_exchange_weak(&pm->pending, &n, n + 1));
    int64_t limit = a->memory_limit;
    int_fast64_t used = atomic_load(&a->memory_used);
    do {
        /* Like the Java client, a message above the whole limit still goes when nothing
         * else holds memory, so large (chunked) payloads are possible at all. */
        *memory = limit == 0 || used + bytes <= limit || used == 0;
        if (!*memory) {
            atomic_fetch_sub(&pm->pending, 1);
            return false;
        }
    } while (!atomic_compare_exchange_weak(&a->memory_used, &used, used + bytes));
    return true;
}

static pulsarc_result no_room(const pc_admission_t *a, bool room, int64_t max_pending)
{
    return !room ? pc_fail(PULSARC_ERR_QUEUE_FULL, "%lld messages pending (maxPendingMessages)",
                           (long long)max_pending)
                 : pc_fail(PULSARC_ERR_MEMORY_LIMIT, "memoryLimitBytes (%lld) reached",
                           (long long)a->memory_limit);
}

pulsarc_result pc_admit(pc_admission_t *a, pc_permits_t *pm, int64_t max_pending, size_t bytes,
                        bool block)
{
    bool room, memory;
    if (atomic_load(&pm->closed))
        return pc_fail(PULSARC_ERR_ALREADY_CLOSED, "producer is closed");
    if (try_reserve(a, pm, max_pending, (int64_t)bytes, &room, &memory))
        return PULSARC_OK;
    /* The loop thread never waits (it is what makes room), so it needs neither the lock
     * nor the count of waiters: a send there, on the application's own loop too, stays
     * free of locks when it is refused. */
    if (on_loop(a))
        return no_room(a, room, max_pending);
    uv_mutex_lock(&a->mu);
    /* Counted before the check, so a release that races the check sees a waiter. */
    atomic_fetch_add(&a->waiters, 1);
    pulsarc_result res = PULSARC_OK;
    for (;;) {
        if (atomic_load(&pm->closed)) {
            res = pc_fail(PULSARC_ERR_ALREADY_CLOSED, "producer is closed");
            break;
        }
        if (try_reserve(a, pm, max_pending, (int64_t)bytes, &room, &memory))
            break;
        if (!block) {
            res = no_room(a, room, max_pending);
            break;
        }
        uv_cond_wait(&a->cond, &a->mu);
    }
    atomic_fetch_sub(&a->waiters, 1);
    /* A closing producer woke us: destroy may be waiting for the last sender to leave. */
    if (res == PULSARC_ERR_ALREADY_CLOSED)
        uv_cond_broadcast(&a->cond);
    uv_mutex_unlock(&a->mu);
    return res;
}

void pc_admission_release(pc_admission_t *a, pc_permits_t *pm, int64_t messages, size_t bytes)
{
    atomic_fetch_sub(&pm->pending, messages);
    atomic_fetch_sub(&a->memory_used, (int64_t)bytes);
    /* The lock and the wake-up are only needed when somebody is admitting right now. A
     * whole batch wakes them at once, so they send again while the loop thread runs the
     * batch's callbacks; a single message's release on the loop thread leaves it to the
     * check handle, once the loop turn's I/O is done. */
    if (atomic_load(&a->waiters) == 0)
        return;
    bool many = messages > 1;
    if (!many && on_loop(a) && a->deferring) /* the loop's own fields: read there only */
        a->freed = true;
    else
        wake(a);
}

void pc_admission_close(pc_admission_t *a, pc_permits_t *pm)
{
    /* Under the lock, so that a blocked sender wakes up and sees it. */
    uv_mutex_lock(&a->mu);
    atomic_store(&pm->closed, true);
    uv_cond_broadcast(&a->cond);
    uv_mutex_unlock(&a->mu);
}
