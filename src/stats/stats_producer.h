/* A producer handle's statistics: what only the handle sees (sends taken over, refused,
 * failures by result) and the latency histogram its partitions share; the partitions
 * count the rest themselves (producer/pp_counters.h). Adds them all up into a snapshot
 * and describes the producer in JSON. */
#ifndef PC_STATS_PRODUCER_H
#define PC_STATS_PRODUCER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "stats/metrics_set.h"
#include "stats/stats.h"
#include "partitioned/partitioned.h"
#include "producer/pp_counters.h"

typedef struct pc_producer_stats {
    pc_pp_sink_t sink;                    /* loop thread: the partitions record latencies here */
    uint64_t failed_by[PC_STATS_RESULTS]; /* loop thread */
    _Atomic uint64_t refused_by[PC_STATS_RESULTS]; /* the sending threads */
} pc_producer_stats_t;

/* clock: the client's turn clock (it outlives the producer). */
void pc_producer_stats_init(pc_producer_stats_t *s, pc_turn_clock_t *clock);

/* A send call refused its message with res (any thread). */
static inline void pc_producer_stats_refused(pc_producer_stats_t *s, pulsarc_result res)
{
    atomic_fetch_add_explicit(&s->refused_by[pc_stats_result_slot(res)], 1, memory_order_relaxed);
}

/* What the handle knows that the statistics count: messages taken over (the handle
 * numbers them anyway) and pending (admission's gauge); with spoolDir, the damage its
 * spool's replay skipped (spool/spool.h), shown in the producer's JSON only. */
typedef struct pc_producer_gauges {
    uint64_t accepted;
    uint64_t pending;
    bool spooled;
    uint64_t spool_skipped_records;
    uint64_t spool_skipped_bytes;
} pc_producer_gauges_t;

/* Add the producer's numbers (its partitions' included) to t. Loop thread. */
void pc_producer_stats_add(const pc_producer_stats_t *s, const pc_partitioned_t *pt,
                           pc_producer_gauges_t g, pc_stats_totals_t *t);
/* The producer as docs/statistics.md's producer object: topic, name, its counters and one
 * object per partition. NULL when out of memory. Loop thread. */
struct json_t *pc_producer_stats_json(const pc_producer_stats_t *s, const pc_partitioned_t *pt,
                                      pc_producer_gauges_t g, const char *topic, const char *name);
/* Add the producer's numbers to its topic's entry in set (metrics_set.h); -1 when out of
 * memory. Loop thread. */
int pc_producer_stats_metrics(const pc_producer_stats_t *s, const pc_partitioned_t *pt,
                              pc_producer_gauges_t g, const char *topic, pc_metrics_set_t *set);

#endif
