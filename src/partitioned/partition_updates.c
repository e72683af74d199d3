/* Partition-count updates: a partitioned producer checks the topic's partition count
 * every autoUpdatePartitionsIntervalSeconds and starts producers for added partitions;
 * the router sees them once they are registered (or at once with lazy start).
 * @locality loop thread. */
#include <stdlib.h>

#include "common/log.h"
#include "common/timer.h"
#include "net/lookup.h"
#include "partitioned/partitioned_internal.h"

static void update_finished(pc_partitioned_t *pt)
{
    pt->updating = false;
    pt->owner.update_finished(pt->owner.ctx);
}

/* Every partition up to n is routable now: the owner hears the new count. */
static void grown(pc_partitioned_t *pt, int n)
{
    atomic_store(&pt->n_routable, n);
    if (pt->owner.grown)
        pt->owner.grown(pt->owner.ctx, n);
}

/* The new partitions become routable together, or are given up together. */
static void on_new_part_started(pc_pp_t *pp, pulsarc_result res, void *ctx)
{
    pc_partitioned_t *pt = ctx;
    if (res != PULSARC_OK)
        pt->update_failed = true;
    if (--pt->update_remaining > 0)
        return;
    if (pt->rt->stopping) {
        pt->updating = false; /* shutdown frees every partition itself */
        return;
    }
    if (pt->update_failed) {
        /* Try again at the next check; the router never saw these partitions. */
        PC_WARN(pt->rt->log, "%s: could not start new partitions; retrying later", pt->topic->full);
        for (int i = pt->update_old_n; i < pt->n_parts; i++)
            pc_pp_free(pt->parts[i]);
        pt->n_parts = pt->update_old_n;
    } else {
        PC_INFO(pt->rt->log, "%s: now sending to %d partitions", pt->topic->full, pt->n_parts);
        for (int i = pt->update_old_n; i < pt->n_parts; i++)
            pt->owner.ready(pt->owner.ctx, i);
        grown(pt, pt->n_parts);
    }
    update_finished(pt);
}

static void on_updated_partitions(pulsarc_result res, int n, void *ctx)
{
    pc_partitioned_t *pt = ctx;
    if (res != PULSARC_OK || n <= pt->n_parts || pt->rt->stopping ||
        !pt->owner.may_grow(pt->owner.ctx)) {
        update_finished(pt);
        return;
    }
    pc_pp_t **parts = realloc(pt->parts, (size_t)n * sizeof *parts);
    if (!parts) {
        update_finished(pt);
        return;
    }
    pt->parts = parts;
    pt->update_old_n = pt->n_parts;
    pt->update_failed = false;
    for (int i = pt->n_parts; i < n; i++) {
        if (!(pt->parts[i] = pc_partitioned_new_part(pt, i))) {
            for (int k = pt->update_old_n; k < i; k++)
                pc_pp_free(pt->parts[k]);
            update_finished(pt);
            return;
        }
    }
    pt->n_parts = n;
    if (pt->pp.lazy_start) {
        grown(pt, n);
        update_finished(pt);
        return;
    }
    pt->update_remaining = n - pt->update_old_n;
    for (int i = pt->update_old_n; i < n; i++)
        pc_pp_start(pt->parts[i], on_new_part_started, pt);
}

static void on_update_tick(uv_timer_t *t)
{
    pc_partitioned_t *pt = t->data;
    if (pt->updating || !pt->owner.may_grow(pt->owner.ctx))
        return;
    pt->updating = true;
    pc_lookup_partitions(pt->rt, pt->topic->full, on_updated_partitions, pt);
}

void pc_partitioned_updates_start(pc_partitioned_t *pt, uint64_t every_ms)
{
    if (!pt->partitioned)
        return;
    pt->update_timer = pc_timer_new(pt->rt->loop, pt);
    if (!pt->update_timer) {
        PC_WARN(pt->rt->log, "%s: no memory to watch the partition count", pt->topic->full);
        return;
    }
    uv_timer_start(pt->update_timer, on_update_tick, every_ms, every_ms);
}

bool pc_partitioned_updating(const pc_partitioned_t *pt)
{
    return pt && pt->updating;
}
