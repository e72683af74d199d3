/* The public producer handle's state, shared by the files that make up the handle:
 * producer.c (admission, send, flush, close, creation) and partition_updates.c (growing
 * a partitioned topic). Nothing outside src/client/ includes this. */
#ifndef PC_PRODUCER_IMPL_H
#define PC_PRODUCER_IMPL_H

#include <stdatomic.h>
#include <stdbool.h>

#include "client/client.h"
#include "common/topic_name.h"
#include "producer/partition_producer.h"
#include "routing/router.h"

enum { P_OPEN, P_CLOSING, P_CLOSED };

typedef struct done_task {
    pc_task_t task;
    pulsarc_producer_t *producer;
    pulsarc_done_cb cb;
    void *ctx;
    int remaining;
    pulsarc_result res;
} done_task;

struct pulsarc_producer {
    pulsarc_client_t *client;
    pulsarc_producer_config_t conf;
    pc_topic_name_t topic;
    pc_pp_t **parts;
    int n_parts;
    bool partitioned;
    pc_router_t router;
    _Atomic int n_routable; /* partitions the router may pick (grows with updates) */

    _Atomic int state;
    _Atomic int_fast64_t pending; /* accepted, callback not yet run */
    _Atomic uint32_t max_message_size; /* the broker's limit, for an early check */

    struct pulsarc_producer *next; /* client's list, loop thread */
    bool listed;
    bool free_requested;
    bool closing_on_loop;

    /* Creation, reported to the blocked creator. */
    pc_task_t create_task;
    int create_remaining;
    pulsarc_result create_res;
    char create_detail[1024];
    pc_waiter_t *create_waiter;
    pc_task_t free_task;

    /* Partition-count updates (partitioned topics). */
    uv_timer_t *update_timer; /* its own allocation: it may outlive the handle while closing */
    bool updating;            /* a metadata lookup or new partitions are in flight */
    int update_remaining;
    int update_old_n;
    bool update_failed;
};

/* A partition producer for partition i (or the whole topic when not partitioned). */
pc_pp_t *pc_producer_new_part(pulsarc_producer_t *p, int i);
/* Free the handle's memory (its partition producers included). */
void pc_producer_release(pulsarc_producer_t *p);

/* Watch the partition count of a partitioned topic (autoUpdatePartitions). */
void pc_partition_updates_start(pulsarc_producer_t *p);
/* Stop watching; the handle may be freed right after. */
void pc_partition_updates_stop(pulsarc_producer_t *p);

#endif
