/* The partitioned producer: the list of partition producers behind one producer handle,
 * the router that picks among them, and the partition-count updates that grow the list.
 * A topic without partitions is a list of one. It sits between client/ (the public
 * handle: admission, callbacks, flush and close bookkeeping) and producer/ (one partition
 * each), and knows nothing of either's internals beyond the partition producer's API.
 * @locality loop thread, except pc_partitioned_route (any thread). */
#ifndef PC_PARTITIONED_H
#define PC_PARTITIONED_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "common/topic_name.h"
#include "net/runtime.h"
#include "producer/partition_producer.h"
#include "routing/router.h"

/* What the owner hears and decides. */
typedef struct pc_partitioned_owner {
    void *ctx;
    pc_pp_complete_fn complete;   /* each message of every partition */
    pc_pp_released_fn released;   /* a batch's messages, before their completions */
    pc_pp_stopped_fn stopped;     /* a partition stopped after a terminal error */
    /* Partitions [from, to) were added by an update and are routable now. */
    void (*grown)(void *ctx, int from, int to);
    /* May the list still grow (the owner is open)? */
    bool (*may_grow)(void *ctx);
    /* An update round has finished (the owner may be waiting to free itself). */
    void (*update_finished)(void *ctx);
} pc_partitioned_owner_t;

typedef struct pc_partitioned {
    pc_runtime_t *rt;
    const pc_topic_name_t *topic; /* the owner's */
    pc_pp_settings_t pp;          /* for every partition producer (name borrowed) */
    pc_router_t router;
    pc_partitioned_owner_t owner;
    pc_pp_t **parts;              /* NULL until created and after freed */
    int n_parts;
    bool partitioned;             /* false: one producer for the whole topic */
    _Atomic int n_routable;       /* partitions the router may pick (grows with updates) */

    /* Partition-count updates. */
    uv_timer_t *update_timer;
    bool updating;                /* a metadata lookup or new partitions are in flight */
    int update_remaining;
    int update_old_n;
    bool update_failed;
} pc_partitioned_t;

void pc_partitioned_init(pc_partitioned_t *pt, pc_runtime_t *rt, const pc_topic_name_t *topic,
                         const pc_pp_settings_t *pp, const pc_router_settings_t *routing,
                         const pc_partitioned_owner_t *owner);
/* Create the partition producers for n partitions (0: a topic without partitions), not
 * started yet. Returns 0, or -1 when out of memory (nothing is left then). */
int pc_partitioned_create(pc_partitioned_t *pt, int n);
/* The partition for a message among the routable ones, or -1 when a custom router chose
 * one out of range. Any thread. */
int pc_partitioned_route(pc_partitioned_t *pt, const pc_route_view_t *view);
/* The list is gone: free every partition producer (their memory follows once their timers
 * have closed). */
void pc_partitioned_free_parts(pc_partitioned_t *pt);
/* Client shutdown: fail what every partition holds with why, then free them. The list is
 * taken off pt first, since an abort may run callbacks that look at it. */
void pc_partitioned_abort_all(pc_partitioned_t *pt, pulsarc_result why, const char *detail);

/* The producer for partition i, not started (partition_updates.c grows the list with it). */
pc_pp_t *pc_partitioned_new_part(pc_partitioned_t *pt, int i);

/* Check the partition count every every_ms and grow the list (partitioned topics). */
void pc_partitioned_updates_start(pc_partitioned_t *pt, uint64_t every_ms);
void pc_partitioned_updates_stop(pc_partitioned_t *pt);

#endif
