/* What the metrics text (metrics_text.c) is made from: the client's numbers by topic, each
 * topic's counters by partition. Producers add theirs (stats_producer.c); two producers of
 * one topic add into one entry, so that each series appears once. Built on the loop thread
 * when the text is asked for, then only read: no second set of counters. */
#ifndef PC_METRICS_SET_H
#define PC_METRICS_SET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/histogram.h"
#include "producer/pp_counters.h"
#include "stats/stats.h"

typedef struct pc_metrics_topic {
    char *topic;  /* the topic, a partition's without its -partition-N suffix */
    char *tenant; /* its tenant, and "tenant/namespace" */
    char *ns;
    int partition;    /* >= 0: the producer named one partition itself (t-partition-3) */
    bool partitioned; /* produced to through its partitions (partition labels per partition) */
    pc_pp_counters_t *parts; /* by partition (index 0 alone for a topic without) */
    int nparts;
    uint64_t pending;                     /* messages accepted, callback not run yet */
    uint64_t failed_by[PC_STATS_RESULTS]; /* failures by result slot (stats.h) */
    pc_histogram_t latency_us;            /* send-to-receipt of acknowledged messages */
} pc_metrics_topic_t;

typedef struct pc_metrics_set {
    pc_metrics_topic_t **topics;
    size_t n, cap;
    /* The client's gauges. */
    uint64_t memory_used, memory_limit, producers;
} pc_metrics_set_t;

void pc_metrics_set_init(pc_metrics_set_t *set);
void pc_metrics_set_free(pc_metrics_set_t *set);
/* The entry of topic (a full name as the producer has it; a -partition-N suffix becomes
 * the partition), made on first use; NULL when out of memory or the name does not parse. */
pc_metrics_topic_t *pc_metrics_set_topic(pc_metrics_set_t *set, const char *topic);
/* Partition i's counters in m (zeroed on first use), valid until the next call for m;
 * NULL when out of memory. */
pc_pp_counters_t *pc_metrics_topic_partition(pc_metrics_topic_t *m, int i);
/* Add one partition's counters to another's (batch_max_msgs: the larger). */
void pc_metrics_counters_add(pc_pp_counters_t *dst, const pc_pp_counters_t *src);

#endif
