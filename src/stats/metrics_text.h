/* The client's statistics as Prometheus text (the exposition format 0.0.4), named as the
 * Java client's OpenTelemetry metrics (PIP-342) come out of OpenTelemetry's Prometheus
 * exporter: dots as underscores, the unit as a suffix, counters ending in _total,
 * attributes as labels. docs/statistics.md ("Prometheus") lists every series. Pure: it
 * formats a pc_metrics_set_t and knows nothing of producers. */
#ifndef PC_METRICS_TEXT_H
#define PC_METRICS_TEXT_H

#include <stdbool.h>
#include <stddef.h>

#include "stats/metrics_set.h"

/* The latency buckets' upper bounds, in microseconds (the Java client's, in seconds:
 * 0.0005 ... 60). */
#define PC_METRICS_LATENCY_BOUNDS 16
extern const uint64_t pc_metrics_latency_bounds_us[PC_METRICS_LATENCY_BOUNDS];

/* The text of set: one series per topic, or per partition of a partitioned topic with
 * per_partition. A malloc'd NUL-terminated string of *len bytes; NULL when out of
 * memory. */
char *pc_metrics_text(const pc_metrics_set_t *set, bool per_partition, size_t *len);

#endif
