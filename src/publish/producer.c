/* The producer handle's close and free, the client's shutdown, and the hooks its
 * partitioned producer calls. @locality any thread for the public calls; the rest on the
 * loop thread. */
#include <stdlib.h>

#include "common/error.h"
#include "publish/interceptors.h"
#include "publish/producer.h"

static void unlink_and_free(pulsarc_producer_t *p)
{
    pulsarc_client_t *c = p->client;
    pc_producer_room_forget(p);
    if (p->listed) {
        pc_client_forget_shutdown(c, &p->on_shutdown);
        pc_producer_stats_leave(p);
    }
    p->listed = false;
    p->free_requested = true;
    if (pc_partitioned_updating(p->pt))
        return; /* the update finishing frees it (update_finished) */
    if (p->flushes)
        return; /* the last flush finishing frees it (on_flushed) */
    pc_producer_release(p);
}

/* Every partition has closed (the first failure, if any, is the close's). */
static void on_closed(pc_partitioned_op_t *op)
{
    pc_done_task_t *d = pc_done_task_of(op);
    pulsarc_producer_t *p = d->producer;
    atomic_store(&p->state, P_CLOSED);
    p->closing_on_loop = false;
    pc_block_pool_trim(&p->client->blocks); /* a large block kept for its next send */
    pc_spool_finish(p->spool);              /* unlocked: another producer may open it now */
    d->res = op->res;
    snprintf(d->detail, sizeof d->detail, "%s", op->detail);
    pc_done_task_report(d);
    if (p->free_requested)
        unlink_and_free(p);
}

static void run_close(pc_task_t *t)
{
    pc_done_task_t *d = (pc_done_task_t *)t;
    pulsarc_producer_t *p = d->producer;
    if (!p->closing_on_loop && !p->client->rt.stopping) {
        p->closing_on_loop = true;
        d->parts.done = on_closed;
        if (pc_partitioned_close(p->pt, &d->parts))
            return;
        p->closing_on_loop = false; /* the partitions are gone: nothing left to close */
    }
    if (d->cb)
        d->cb(p, PULSARC_OK, d->ctx);
    free(d);
}

static void begin_closing(pulsarc_producer_t *p)
{
    pc_admission_close(&p->client->admission, &p->permits);
    if (p->spool)
        pc_spool_stop_waiting(p->spool);
    int open = P_OPEN;
    atomic_compare_exchange_strong(&p->state, &open, P_CLOSING);
}

pulsarc_result pulsarc_producer_close_async(pulsarc_producer_t *p, pulsarc_done_cb cb, void *ctx)
{
    pulsarc_result res = pc_producer_check_attached(p);
    if (res != PULSARC_OK)
        return res;
    begin_closing(p);
    return pc_done_task_post(p, run_close, cb, ctx);
}

pulsarc_result pulsarc_producer_close(pulsarc_producer_t *p)
{
    pulsarc_result res = pc_producer_check_attached(p);
    if (res != PULSARC_OK)
        return res;
    if ((res = pc_client_may_block(p->client, "pulsarc_producer_close")) != PULSARC_OK)
        return res;
    return pc_done_task_wait(p, pulsarc_producer_close_async);
}

static void run_free(pc_task_t *t)
{
    pulsarc_producer_t *p = (pulsarc_producer_t *)((char *)t -
                                                   offsetof(pulsarc_producer_t, free_task));
    p->free_requested = true;
    if (p->closing_on_loop)
        return; /* on_closed frees it */
    if (atomic_load(&p->state) == P_CLOSED || p->client->rt.stopping) {
        unlink_and_free(p);
        return;
    }
    pc_done_task_t *d = calloc(1, sizeof *d);
    if (!d) {
        unlink_and_free(p);
        return;
    }
    d->producer = p;
    run_close(&d->task);
}

void pulsarc_producer_free(pulsarc_producer_t *p)
{
    if (!p)
        return;
    if (atomic_load(&p->state) == P_DETACHED) {
        pc_producer_release(p); /* the client is gone, and with it every other reference */
        return;
    }
    begin_closing(p);
    p->free_task.run = run_free;
    pc_producer_post(p, &p->free_task);
}

/* ---- the partitioned producer's owner ----------------------------------------- */

static void on_ready(void *ctx, int partition)
{
    pc_producer_publish(ctx, partition);
}

static bool may_grow(void *ctx)
{
    pulsarc_producer_t *p = ctx;
    return !p->free_requested && !p->closing_on_loop && atomic_load(&p->state) == P_OPEN;
}

static void on_grown(void *ctx, int n)
{
    pulsarc_producer_t *p = ctx;
    if (p->conf.interceptors.n)
        pc_interceptors_partitions_change(&p->conf.interceptors, p, p->topic.full, n);
}

static void on_update_finished(void *ctx)
{
    pulsarc_producer_t *p = ctx;
    if (p->free_requested && !p->closing_on_loop && !p->flushes)
        pc_producer_release(p);
}

void pc_producer_partitioned_owner(pulsarc_producer_t *p, pc_partitioned_owner_t *out)
{
    out->ctx = p;
    out->complete = pc_producer_complete;
    out->released = pc_producer_release_batch;
    out->stopped = pc_failures_note_terminal;
    _Static_assert(sizeof(pc_send_t) <= PC_RECORDS_MAX, "a send record is fetched whole");
    out->records = (pc_records_t){
        .before = offsetof(pc_send_t, msg),
        .size = sizeof(pc_send_t),
        .taken = &p->client->sends_taken,
    };
    out->ready = on_ready;
    out->may_grow = may_grow;
    out->update_finished = on_update_finished;
    out->grown = on_grown;
}

void pc_producer_shutdown(pc_shutdown_hook_t *hook)
{
    pulsarc_producer_t *p = (pulsarc_producer_t *)((char *)hook -
                                                   offsetof(pulsarc_producer_t, on_shutdown));
    /* A handle the user freed already goes with its close (on_closed); the others stay
     * the user's, detached from the client. */
    bool users = !p->free_requested;
    pc_producer_room_forget(p);
    pc_producer_stats_leave(p);
    p->listed = false;
    begin_closing(p);
    atomic_store(&p->state, P_CLOSED);
    /* Aborting a partition runs a close still in progress to its end, and on_closed frees
     * a handle the user already freed: touch p after the abort only if it is the user's
     * (the partitions are gone from the list before the first is aborted). */
    pc_partitioned_abort(p->pt, PULSARC_ERR_ALREADY_CLOSED, "client is closing");
    if (users)
        atomic_store(&p->state, P_DETACHED);
}
