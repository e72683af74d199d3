/* Partition-count updates: a partitioned producer checks the topic's partition count
 * every autoUpdatePartitionsIntervalSeconds and starts producers for added partitions;
 * the router sees them once they are registered (or at once with lazy start).
 * @locality loop thread. */
#include <stdlib.h>

#include "client/producer_impl.h"
#include "net/lookup.h"

static void updates_done(pulsarc_producer_t *p)
{
    p->updating = false;
    if (p->free_requested && !p->closing_on_loop)
        pc_producer_release(p);
}

static void on_new_part_started(pc_pp_t *pp, pulsarc_result res, void *ctx)
{
    pulsarc_producer_t *p = ctx;
    if (res != PULSARC_OK)
        p->update_failed = true;
    if (--p->update_remaining > 0)
        return;
    if (p->client->stopping) {
        p->updating = false; /* shutdown frees every partition itself */
        return;
    }
    if (p->update_failed) {
        /* Try again at the next check; the router never saw these partitions. */
        PC_WARN(&p->client->log, "%s: could not start new partitions; retrying later",
                p->topic.full);
        for (int i = p->update_old_n; i < p->n_parts; i++)
            pc_pp_free(p->parts[i]);
        p->n_parts = p->update_old_n;
    } else {
        PC_INFO(&p->client->log, "%s: now sending to %d partitions", p->topic.full, p->n_parts);
        for (int i = p->update_old_n; i < p->n_parts; i++)
            pc_producer_publish(p, p->parts[i]);
        atomic_store(&p->n_routable, p->n_parts);
    }
    updates_done(p);
}

static void on_updated_partitions(pulsarc_result res, int n, void *ctx)
{
    pulsarc_producer_t *p = ctx;
    if (res != PULSARC_OK || n <= p->n_parts || p->free_requested || p->closing_on_loop ||
        atomic_load(&p->state) != P_OPEN || p->client->stopping) {
        updates_done(p);
        return;
    }
    pc_pp_t **parts = realloc(p->parts, (size_t)n * sizeof *parts);
    if (!parts) {
        updates_done(p);
        return;
    }
    p->parts = parts;
    p->update_old_n = p->n_parts;
    p->update_failed = false;
    for (int i = p->n_parts; i < n; i++) {
        if (!(p->parts[i] = pc_producer_new_part(p, i))) {
            for (int k = p->update_old_n; k < i; k++)
                pc_pp_free(p->parts[k]);
            updates_done(p);
            return;
        }
    }
    p->n_parts = n;
    if (p->conf.lazy_start) {
        atomic_store(&p->n_routable, n);
        updates_done(p);
        return;
    }
    p->update_remaining = n - p->update_old_n;
    for (int i = p->update_old_n; i < n; i++)
        pc_pp_start(p->parts[i], on_new_part_started, p);
}

static void on_update_tick(uv_timer_t *t)
{
    pulsarc_producer_t *p = t->data;
    if (p->updating || atomic_load(&p->state) != P_OPEN)
        return;
    p->updating = true;
    pc_lookup_partitions(p->client, p->topic.full, on_updated_partitions, p);
}

void pc_partition_updates_start(pulsarc_producer_t *p)
{
    if (!p->partitioned || !p->conf.auto_update_partitions)
        return;
    uint64_t every = (uint64_t)p->conf.partitions_update_interval_s * 1000u;
    p->update_timer = pc_client_timer_new(p->client, p);
    if (!p->update_timer) {
        PC_WARN(&p->client->log, "%s: no memory to watch the partition count", p->topic.full);
        return;
    }
    uv_timer_start(p->update_timer, on_update_tick, every, every);
}

void pc_partition_updates_stop(pulsarc_producer_t *p)
{
    pc_client_timer_free(p->update_timer);
    p->update_timer = NULL;
}
