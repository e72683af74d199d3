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

/* ---- room callbacks: loop thread only ----------------------------------------------- */

/* A send on the loop thread found no room: tell pm's producer when there is some again. */
static void watch(pc_admission_t *a, pc_permits_t *pm, int64_t max_pending, int64_t bytes)
{
    pm->watched_max_pending = max_pending;
    pm->watched_bytes = bytes;
    if (pm->watched)
        return;
    pm->watched = true;
    pm->next_watched = a->watching;
    a->watching = pm;
    atomic_fetch_add(&a->interest, PC_ADMISSION_WATCHER);
}

static void stop_watching(pc_admission_t *a, pc_permits_t *pm)
{
    pm->watched = false;
    pm->next_watched = NULL;
    atomic_fetch_sub(&a->interest, PC_ADMISSION_WATCHER);
}

void pc_admission_unwatch(pc_admission_t *a, pc_permits_t *pm)
{
    if (!pm->watched)
        return;
    for (pc_permits_t **at = &a->watching; *at; at = &(*at)->next_watched) {
        if (*at == pm) {
            *at = pm->next_watched;
            break;
        }
    }
    stop_watching(a, pm);
}

/* Whether the send a watched producer refused would now find room. */
static bool has_room(const pc_admission_t *a, const pc_permits_t *pm)
{
    int64_t max = pm->watched_max_pending;
    if (max > 0 && atomic_load(&pm->pending) >= max)
        return false;
    int64_t used = atomic_load(&a->memory_used);
    return a->memory_limit == 0 || used + pm->watched_bytes <= a->memory_limit || used == 0;
}

/* After a loop turn that released room: each watching producer that has room again hears
 * of it once; the others keep watching. A callback may send and be refused again, which
 * watches anew. */
static __attribute__((noinline)) void tell_watchers(pc_admission_t *a)
{
    pc_permits_t *list = a->watching, *keep = NULL;
    a->watching = NULL;
    while (list) {
        pc_permits_t *pm = list;
        list = pm->next_watched;
        if (atomic_load(&pm->closed)) {
            stop_watching(a, pm); /* a closing producer takes no more sends */
        } else if (has_room(a, pm)) {
            stop_watching(a, pm);
            pm->room(pm->room_owner);
        } else {
            pm->next_watched = keep;
            keep = pm;
        }
    }
    while (keep) { /* back in front of any the callbacks watched anew */
        pc_permits_t *pm = keep;
        keep = pm->next_watched;
        pm->next_watched = a->watching;
        a->watching = pm;
    }
}

static void on_check(uv_check_t *h)
{
    pc_admission_t *a = h->data;
    if (!a->freed)
        return;
    a->freed = false;
    wake(a);
    if (a->watching)
        tell_watchers(a);
}

void pc_admission_init(pc_admission_t *a, uv_loop_t *loop, const uv_thread_t *loop_thread,
                       int64_t memory_limit)
{
    atomic_init(&a->memory_used, 0);
    atomic_init(&a->interest, 0);
    a->watching = NULL;
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
    /* The client is closing: no room callback runs from now on. */
    while (a->watching) {
        pc_permits_t *pm = a->watching;
        a->watching = pm->next_watched;
        stop_watching(a, pm);
    }
    a->deferring = false;
    uv_close((uv_handle_t *)&a->check, NULL);
    if (a->freed)
        wake(a);
    a->freed = false;
}

void pc_admission_wait_empty(pc_admission_t *a)
{
    uv_mutex_lock(&a->mu);
    while ((atomic_load(&a->interest) & PC_ADMISSION_WAITERS) > 0)
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
    pm->room = NULL;
    pm->room_owner = NULL;
    pm->watched = false;
    pm->next_watched = NULL;
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

/* The loop thread's refusal; its producer hears when room comes back (pulsarc_room_cb)
 * when it has the callback. Out of line: pc_admit, inlined into the send path, stays as it
 * was without room callbacks. */
static __attribute__((noinline)) pulsarc_result
refuse_on_loop(pc_admission_t *a, pc_permits_t *pm, bool room, int64_t max_pending, int64_t bytes)
{
    if (pm->room)
        watch(a, pm, max_pending, bytes);
    return no_room(a, room, max_pending);
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
        return refuse_on_loop(a, pm, room, max_pending, (int64_t)bytes);
    uv_mutex_lock(&a->mu);
    /* Counted before the check, so a release that races the check sees a waiter. */
    atomic_fetch_add(&a->interest, 1);
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
    atomic_fetch_sub(&a->interest, 1);
    /* A closing producer woke us: destroy may be waiting for the last sender to leave. */
    if (res == PULSARC_ERR_ALREADY_CLOSED)
        uv_cond_broadcast(&a->cond);
    uv_mutex_unlock(&a->mu);
    return res;
}

/* A batch's release, or one off the loop thread, while senders wait or producers watch:
 * waiting senders are woken now, the watchers after the loop turn (a release on another
 * thread tells them at the next one on the loop). Out of line, so that the release stays
 * as small as it was, where it is inlined into the completion of every message. */
static __attribute__((noinline)) void release_slow(pc_admission_t *a, int_fast64_t interest)
{
    if (interest >= PC_ADMISSION_WATCHER && on_loop(a) && a->deferring)
        a->freed = true;
    if (interest & PC_ADMISSION_WAITERS)
        wake(a);
}

void pc_admission_release(pc_admission_t *a, pc_permits_t *pm, int64_t messages, size_t bytes)
{
    atomic_fetch_sub(&pm->pending, messages);
    atomic_fetch_sub(&a->memory_used, (int64_t)bytes);
    /* The lock and the wake-up are only needed when somebody is admitting right now, or
     * a producer watches for room. A whole batch wakes waiting senders at once, so they
     * send again while the loop thread runs the batch's callbacks; a single message's
     * release on the loop thread leaves it to the check handle, once the loop turn's I/O
     * is done, which also tells watching producers. */
    int_fast64_t interest = atomic_load(&a->interest);
    if (interest == 0)
        return;
    bool many = messages > 1;
    if (!many && on_loop(a) && a->deferring) /* the loop's own fields: read there only */
        a->freed = true;
    else
        release_slow(a, interest);
}

void pc_admission_close(pc_admission_t *a, pc_permits_t *pm)
{
    /* Under the lock, so that a blocked sender wakes up and sees it. */
    uv_mutex_lock(&a->mu);
    atomic_store(&pm->closed, true);
    uv_cond_broadcast(&a->cond);
    uv_mutex_unlock(&a->mu);
}
