/* The partitioned producer: the partition producers behind one producer handle, the
 * router that picks among them, and the partition-count updates that grow the list. A
 * topic without partitions is a list of one. It sits between client/ (the public handle:
 * admission, callbacks, flush and close bookkeeping) and producer/ (one partition each);
 * its owner sees partitions only as numbers: it routes a message to one, hands it over,
 * and starts, flushes, closes or aborts them all at once.
 * @locality loop thread, except pc_partitioned_route, pc_partitioned_connected,
 * pc_partitioned_disconnected_at and pc_partitioned_count (any thread). */
#ifndef PC_PARTITIONED_H
#define PC_PARTITIONED_H

#include <stdbool.h>
#include <stdint.h>

#include "common/topic_name.h"
#include "net/runtime.h"
#include "producer/message.h"
#include "producer/partition_producer.h"
#include "routing/router.h"

typedef struct pc_partitioned pc_partitioned_t;

/* What the owner hears and decides. */
typedef struct pc_partitioned_owner {
    void *ctx;
    pc_pp_complete_fn complete; /* each message of every partition */
    pc_pp_released_fn released; /* a batch's messages, before their completions */
    pc_pp_stopped_fn stopped;   /* a partition stopped after a terminal error */
    pc_records_t records;       /* where it keeps each message (pc_pp_hooks_t) */
    /* Partition i has joined: every partition once a start has succeeded (or at once with
     * lazy start), those an update added once they have registered. Its status
     * (pc_partitioned_status) is worth reading. */
    void (*ready)(void *ctx, int i);
    /* May the list still grow (the owner is open)? */
    bool (*may_grow)(void *ctx);
    /* An update round has finished (the owner may be waiting to free itself). */
    void (*update_finished)(void *ctx);
    /* The topic has grown to n partitions, all of them routable now (after their ready
     * calls; at once with lazy start). NULL: not wanted. */
    void (*grown)(void *ctx, int n);
} pc_partitioned_owner_t;

/* A start, flush or close of every partition, in the caller's memory until `done` runs:
 * once, after the last partition answered, with the first failure in res and detail.
 * `done` may free the partitioned producer. */
typedef struct pc_partitioned_op {
    void (*done)(struct pc_partitioned_op *op);
    pulsarc_result res;
    char detail[512];
    int remaining; /* the partitioned producer's */
} pc_partitioned_op_t;

/* What the owner's accessors report of one partition. */
typedef struct pc_partition_status {
    const char *name; /* "" until it registered; valid until the next call */
    int64_t last_sequence_id;
    int64_t schema_version;    /* -1: none */
    uint32_t max_message_size; /* its connection's (the protocol default until then) */
} pc_partition_status_t;

/* n partitions (0: a topic without partitions), created but not started. The settings
 * are copied (pp's strings borrowed: they must outlive it). NULL when out of memory. */
pc_partitioned_t *pc_partitioned_new(pc_runtime_t *rt, const pc_topic_name_t *topic, int n,
                                     const pc_pp_settings_t *pp,
                                     const pc_router_settings_t *routing,
                                     const pc_partitioned_owner_t *owner);
/* Free the partitions and the list (after close or abort; their memory follows once their
 * timers have closed). Not while pc_partitioned_updating. NULL is fine. */
void pc_partitioned_free(pc_partitioned_t *pt);

/* Look up, connect and register every partition; with lazy start on a partitioned topic
 * each partition does so on its first message instead, and op is done at once. */
void pc_partitioned_start(pc_partitioned_t *pt, pc_partitioned_op_t *op);
/* The partition for a message among the routable ones, or -1 when a custom router chose
 * one out of range; *routable is how many there were. Any thread. */
int pc_partitioned_route(pc_partitioned_t *pt, const pc_route_view_t *view, int *routable);
/* How many partitions a message may go to now (1 for a topic without partitions). Any
 * thread. */
int pc_partitioned_routable(const pc_partitioned_t *pt);
/* Give msg to partition i (pc_partitioned_route's). False when the partitions are gone
 * (aborted): msg was not taken. */
bool pc_partitioned_send(pc_partitioned_t *pt, int i, pc_msg_t *msg);
/* op is done once every message given before has completed (pc_pp_flush), or once every
 * partition has closed (pc_pp_close). False when the partitions are gone: op is not
 * started. */
bool pc_partitioned_flush(pc_partitioned_t *pt, pc_partitioned_op_t *op);
bool pc_partitioned_close(pc_partitioned_t *pt, pc_partitioned_op_t *op);
/* Fail everything the partitions hold with why, stop the updates and free the partitions
 * (a start in progress is done with why). The list is gone first, since the aborts run
 * callbacks that may look at it. */
void pc_partitioned_abort(pc_partitioned_t *pt, pulsarc_result why, const char *detail);
/* False when the partitions are gone. */
bool pc_partitioned_status(const pc_partitioned_t *pt, int i, pc_partition_status_t *out);
/* Every partition producer that has been started (all of them, or with lazy start those
 * that had a message) is registered on a connection now; a partition not started yet
 * does not count (as the C++ client's isConnected). Any thread: one atomic read. */
bool pc_partitioned_connected(const pc_partitioned_t *pt);
/* When a registered partition last lost its connection or was closed by the broker (ms
 * since the epoch), the latest of all partitions; 0: never. Any thread. */
uint64_t pc_partitioned_disconnected_at(const pc_partitioned_t *pt);
/* Why a partition's last attempt to register failed, the first such partition's
 * (PULSARC_OK: none has failed one); for a creation that runs out of time while its
 * partitions retry. Loop thread. */
pulsarc_result pc_partitioned_last_attempt(const pc_partitioned_t *pt, const char **detail);
/* The partitions messages are routed to (grows with updates once the new ones have
 * registered); 0 for a topic without partitions. Any thread. */
int pc_partitioned_count(const pc_partitioned_t *pt);
/* How many partition producers there are now (0 once they are gone), and what partition i
 * has counted (NULL past the last; valid until the list changes). Loop thread. */
int pc_partitioned_producers(const pc_partitioned_t *pt);
const pc_pp_counters_t *pc_partitioned_counters(const pc_partitioned_t *pt, int i);

/* Check the partition count every every_ms and grow the list (partitioned topics). */
void pc_partitioned_updates_start(pc_partitioned_t *pt, uint64_t every_ms);
/* A check is in flight: its answer will call the owner (update_finished), so the owner
 * must not go before it. */
bool pc_partitioned_updating(const pc_partitioned_t *pt);

#endif
