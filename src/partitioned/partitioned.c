#include "partitioned/partitioned.h"

#include <stdio.h>
#include <stdlib.h>

void pc_partitioned_init(pc_partitioned_t *pt, pc_runtime_t *rt, const pc_topic_name_t *topic,
                         const pc_pp_settings_t *pp, const pc_router_settings_t *routing,
                         const pc_partitioned_owner_t *owner)
{
    pt->rt = rt;
    pt->topic = topic;
    pt->pp = *pp;
    pt->owner = *owner;
    pc_router_init(&pt->router, routing);
    pt->parts = NULL;
    pt->n_parts = 0;
    pt->partitioned = false;
    atomic_init(&pt->n_routable, 0);
    pt->update_timer = NULL;
    pt->updating = false;
}

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
    };
    return pc_pp_new(pt->rt, name, pt->partitioned ? i : -1, &pt->pp, &hooks);
}

int pc_partitioned_create(pc_partitioned_t *pt, int n)
{
    pt->partitioned = n > 0;
    int count = n > 0 ? n : 1;
    pt->parts = calloc((size_t)count, sizeof *pt->parts);
    if (!pt->parts)
        return -1;
    for (int i = 0; i < count; i++) {
        pt->parts[i] = pc_partitioned_new_part(pt, i);
        if (!pt->parts[i]) {
            pt->n_parts = i;
            pc_partitioned_free_parts(pt);
            return -1;
        }
    }
    pt->n_parts = count;
    atomic_store(&pt->n_routable, count);
    return 0;
}

int pc_partitioned_route(pc_partitioned_t *pt, const pc_route_view_t *view)
{
    if (!pt->partitioned)
        return 0;
    return pc_router_choose(&pt->router, view, atomic_load(&pt->n_routable));
}

void pc_partitioned_free_parts(pc_partitioned_t *pt)
{
    for (int i = 0; i < pt->n_parts; i++)
        pc_pp_free(pt->parts[i]);
    free(pt->parts);
    pt->parts = NULL;
    pt->n_parts = 0;
}

void pc_partitioned_abort_all(pc_partitioned_t *pt, pulsarc_result why, const char *detail)
{
    pc_pp_t **parts = pt->parts;
    int n = pt->n_parts;
    pt->parts = NULL;
    pt->n_parts = 0;
    for (int i = 0; i < n; i++)
        pc_pp_abort(parts[i], why, detail);
    for (int i = 0; i < n; i++)
        pc_pp_free(parts[i]);
    free(parts);
}
