/* The list of partition producers: creation, routing, and the operations that go to every
 * partition at once (start, flush, close, abort), each reported once when the last
 * partition has answered. @locality loop thread, except pc_partitioned_route,
 * pc_partitioned_connected and pc_partitioned_count. */
#include "partitioned/partitioned_internal.h"

#include <stdio.h>
#include <stdlib.h>

#include "common/error.h"
#include "common/timer.h"

/* The producer for partition i (or the whole topic when it has no partitions). */
pc_pp_t *pc_partitioned_new_part(pc_partitioned_t *pt, int i)
{
    char name[600];
    if (pt->partitioned)
        pc_topic_name_partition(pt->topic, i, name, sizeof name);
    else
        snprintf(name, sizeof name, "%s", pt->topic->full);
    pc_pp_hooks_t hooks = {
        .complete = pt->owner.complete,
        .released = pt->owner.released,
        .stopped = pt->owner.stopped,
        .owner = pt->owner.ctx,
        .down = &pt->down,
        .disconnected_at = &pt->disconnected_at,
        .records = pt->owner.records,
    };
    return pc_pp_new(pt->rt, name, pt->partitioned ? i : -1, &pt->pp, &hooks);
}

static void free_parts(pc_pp_t **parts, int n)
{
    for (int i = 0; i < n; i++)
        pc_pp_free(parts[i]);
    free(parts);
}

pc_partitioned_t *pc_partitioned_new(pc_runtime_t *rt, const pc_topic_name_t *topic, int n,
                                     const pc_pp_settings_t *pp,
                                     const pc_router_settings_t *routing,
                                     const pc_partitioned_owner_t *owner)
{
    pc_partitioned_t *pt = calloc(1, sizeof *pt);
    if (!pt)
        return NULL;
    pt->rt = rt;
    pt->topic = topic;
    pt->pp = *pp;
    pt->owner = *owner;
    pc_router_init(&pt->router, routing);
    pt->partitioned = n > 0;
    atomic_init(&pt->down, 0);
    atomic_init(&pt->disconnected_at, 0);
    int count = n > 0 ? n : 1;
    if (!(pt->parts = calloc((size_t)count, sizeof *pt->parts))) {
        free(pt);
        return NULL;
    }
    for (int i = 0; i < count; i++) {
        if (!(pt->parts[i] = pc_partitioned_new_part(pt, i))) {
            free_parts(pt->parts, i);
            free(pt);
            return NULL;
        }
    }
    pt->n_parts = count;
    atomic_init(&pt->n_routable, count);
    return pt;
}

void pc_partitioned_free(pc_partitioned_t *pt)
{
    if (!pt)
        return;
    pc_timer_free(pt->update_timer);
    free_parts(pt->parts, pt->n_parts);
    free(pt);
}

/* ---- operations on every partition --------------------------------------------- */

static void op_begin(pc_partitioned_op_t *op, int remaining)
{
    op->res = PULSARC_OK;
    op->detail[0] = '\0';
    op->remaining = remaining;
}

/* One partition (or the caller's hold) answered: the first failure is kept, with the
 * detail it left. After the last, op is done, and may be gone. */
static void op_answer(pc_partitioned_op_t *op, pulsarc_result res)
{
    if (res != PULSARC_OK && op->res == PULSARC_OK) {
        op->res = res;
        snprintf(op->detail, sizeof op->detail, "%s", pulsarc_last_error_detail());
    }
    if (--op->remaining == 0)
        op->done(op);
}

static void on_part_answered(pc_pp_t *pp, pulsarc_result res, void *ctx)
{
    op_answer(ctx, res);
}

/* Partitions may answer at once, from inside the call: a hold keeps op until every call
 * has returned, so it is done only after the loop and never while it still runs. */
static void op_run(pc_partitioned_t *pt, pc_partitioned_op_t *op,
                   void (*call)(pc_pp_t *, pc_pp_done_fn, void *))
{
    int n = pt->n_parts;
    op_begin(op, n + 1);
    for (int i = 0; i < n; i++)
        call(pt->parts[i], on_part_answered, op);
    op_answer(op, PULSARC_OK);
}

/* The start is over: with success the owner hears that every partition is routable,
 * then the caller hears the outcome. */
static void start_finished(pc_partitioned_op_t *op)
{
    pc_partitioned_t *pt = (pc_partitioned_t *)((char *)op - offsetof(pc_partitioned_t, start));
    pc_partitioned_op_t *caller = pt->starting;
    pt->starting = NULL;
    caller->res = op->res;
    snprintf(caller->detail, sizeof caller->detail, "%s", op->detail);
    if (op->res == PULSARC_OK)
        for (int i = 0; i < pt->n_parts; i++)
            pt->owner.ready(pt->owner.ctx, i);
    caller->done(caller);
}

void pc_partitioned_start(pc_partitioned_t *pt, pc_partitioned_op_t *op)
{
    pt->starting = op;
    pt->start.done = start_finished;
    if (pt->partitioned && pt->pp.lazy_start) {
        /* Each partition registers on its first message. */
        op_begin(&pt->start, 1);
        op_answer(&pt->start, PULSARC_OK);
        return;
    }
    op_run(pt, &pt->start, pc_pp_start);
}

int pc_partitioned_route(pc_partitioned_t *pt, const pc_route_view_t *view, int *routable)
{
    if (!pt->partitioned) {
        *routable = 1;
        return 0;
    }
    int n = atomic_load(&pt->n_routable);
    *routable = n;
    return pc_router_choose(&pt->router, view, n);
}

int pc_partitioned_routable(const pc_partitioned_t *pt)
{
    return pt->partitioned ? atomic_load(&pt->n_routable) : 1;
}

bool pc_partitioned_send(pc_partitioned_t *pt, int i, pc_msg_t *msg)
{
    if (!pt->parts)
        return false;
    pc_pp_send(pt->parts[i], msg);
    return true;
}

bool pc_partitioned_flush(pc_partitioned_t *pt, pc_partitioned_op_t *op)
{
    if (!pt->parts)
        return false;
    op_run(pt, op, pc_pp_flush);
    return true;
}

bool pc_partitioned_close(pc_partitioned_t *pt, pc_partitioned_op_t *op)
{
    if (!pt->parts)
        return false;
    op_run(pt, op, pc_pp_close);
    return true;
}

void pc_partitioned_abort(pc_partitioned_t *pt, pulsarc_result why, const char *detail)
{
    pc_timer_free(pt->update_timer);
    pt->update_timer = NULL;
    pc_pp_t **parts = pt->parts;
    int n = pt->n_parts;
    pt->parts = NULL;
    pt->n_parts = 0;
    /* Aborting a registering partition answers the start: hold it until every abort has
     * returned, since its end may free pt. */
    bool starting = pt->starting != NULL;
    if (starting)
        pt->start.remaining++;
    /* The aborts' callbacks may free pt, and the count of partitions not connected in it:
     * no partition may touch that count from now on. */
    for (int i = 0; i < n; i++)
        pc_pp_leave_count(parts[i]);
    for (int i = 0; i < n; i++)
        pc_pp_abort(parts[i], why, detail);
    free_parts(parts, n);
    if (starting)
        op_answer(&pt->start, PULSARC_OK);
}

int pc_partitioned_producers(const pc_partitioned_t *pt)
{
    return pt && pt->parts ? pt->n_parts : 0;
}

const pc_pp_counters_t *pc_partitioned_counters(const pc_partitioned_t *pt, int i)
{
    return i >= 0 && i < pc_partitioned_producers(pt) ? pc_pp_counters(pt->parts[i]) : NULL;
}

bool pc_partitioned_status(const pc_partitioned_t *pt, int i, pc_partition_status_t *out)
{
    if (!pt->parts || i >= pt->n_parts)
        return false;
    const pc_pp_t *pp = pt->parts[i];
    out->name = pc_pp_name(pp);
    out->last_sequence_id = pc_pp_last_sequence_id(pp);
    out->schema_version = pc_pp_schema_version(pp);
    out->max_message_size = pc_pp_max_message_size(pp);
    return true;
}

pulsarc_result pc_partitioned_last_attempt(const pc_partitioned_t *pt, const char **detail)
{
    for (int i = 0; pt->parts && i < pt->n_parts; i++) {
        pulsarc_result res = pc_pp_last_attempt(pt->parts[i], detail);
        if (res != PULSARC_OK)
            return res;
    }
    *detail = "";
    return PULSARC_OK;
}

bool pc_partitioned_connected(const pc_partitioned_t *pt)
{
    return atomic_load(&pt->down) == 0;
}

uint64_t pc_partitioned_disconnected_at(const pc_partitioned_t *pt)
{
    return atomic_load(&pt->disconnected_at);
}

int pc_partitioned_count(const pc_partitioned_t *pt)
{
    return pt->partitioned ? atomic_load(&pt->n_routable) : 0;
}
