/* The partitioned producer's state, shared by its files: partitioned.c (the list, routing,
 * start, send, flush, close, abort) and partition_updates.c (partition-count updates).
 * Nothing outside src/partitioned/ includes this. @locality loop thread, except
 * n_routable and down (atomics read by any thread). */
#ifndef PC_PARTITIONED_INTERNAL_H
#define PC_PARTITIONED_INTERNAL_H

#include <stdatomic.h>
#include <stddef.h>
#include <uv.h>

#include "partitioned/partitioned.h"

struct pc_partitioned {
    pc_runtime_t *rt;
    const pc_topic_name_t *topic; /* the owner's */
    pc_pp_settings_t pp;          /* for every partition producer (name borrowed) */
    pc_router_t router;
    pc_partitioned_owner_t owner;
    pc_pp_t **parts; /* NULL once aborted */
    int n_parts;
    bool partitioned;                 /* false: one producer for the whole topic */
    _Atomic int n_routable;           /* partitions the router may pick (grows with updates) */
    _Atomic int down;                 /* started partitions not connected (pc_pp_hooks_t.down) */
    _Atomic uint64_t disconnected_at; /* any partition's latest (pc_pp_hooks_t) */
    pc_partitioned_op_t *starting;    /* the caller's start in progress, if any */
    pc_partitioned_op_t start;        /* ... which waits for the partitions in this one */

    /* Partition-count updates. */
    uv_timer_t *update_timer; /* freed with the list, or when it is aborted */
    bool updating;            /* a metadata lookup or new partitions are in flight */
    int update_remaining;
    int update_old_n;
    bool update_failed;
};

/* The producer for partition i, not started (partition_updates.c grows the list with it). */
pc_pp_t *pc_partitioned_new_part(pc_partitioned_t *pt, int i);

#endif
