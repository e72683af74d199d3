/* Statistics: the numbers of one snapshot (pc_stats_totals_t, what pulsarc_stats_get and
 * friends read), adding them up, the snapshot object the public API hands out, and the
 * JSON of a set of numbers. Knows nothing of producers or the client: they add what they
 * counted (stats_producer.c, stats_client.c). Not thread-safe: a snapshot is built on
 * the loop thread, then only read. */
#ifndef PC_STATS_H
#define PC_STATS_H

#include <stdbool.h>
#include <stdint.h>

#include "common/histogram.h"
#include "pulsarc/pulsarc.h"

/* One more than the last pulsarc_stat value this library knows. */
#define PC_STAT_COUNT (PULSARC_STAT_TOPIC_MIGRATIONS + 1)

/* Failures and refusals are counted per result in slots: local errors (-1 .. -31) and
 * broker errors (100 .. 131) each have one; anything else shares slot 0. */
#define PC_STATS_RESULTS 64
int pc_stats_result_slot(pulsarc_result res);
/* The result a slot counts (slot 0: PULSARC_OK, meaning "other"). */
pulsarc_result pc_stats_slot_result(int slot);

typedef struct pc_stats_totals {
    uint64_t v[PC_STAT_COUNT]; /* by pulsarc_stat */
    uint64_t failed_by[PC_STATS_RESULTS];
    uint64_t refused_by[PC_STATS_RESULTS];
    pc_histogram_t latency_us;
} pc_stats_totals_t;

void pc_stats_totals_init(pc_stats_totals_t *t);
/* Add src's numbers to dst (BATCH_MAX_MSGS: the larger; gauges added too). */
void pc_stats_totals_add(pc_stats_totals_t *dst, const pc_stats_totals_t *src);
/* Zero the gauges (what a closed producer leaves behind is counters only). */
void pc_stats_totals_clear_gauges(pc_stats_totals_t *t);

struct json_t;
/* A JSON string of text a user or a broker gave (a topic, a producer name): text that is
 * not UTF-8 has each stray byte replaced by U+FFFD (docs/statistics.md) rather than
 * failing the snapshot. NULL when out of memory. */
struct json_t *pc_stats_json_text(const char *s);
/* The numbers as the JSON object docs/statistics.md calls "counters" (messages, bytes,
 * failures and refusals by result, entries, batches, connections, latency). NULL when out
 * of memory. */
struct json_t *pc_stats_totals_json(const pc_stats_totals_t *t);

/* A snapshot: the numbers and their JSON (built by whoever took the snapshot). */
struct pulsarc_stats {
    pc_stats_totals_t t;
    char *json;
};

/* A new snapshot of t with the JSON text of root (which it takes and frees); NULL when
 * out of memory (root freed too). */
pulsarc_stats_t *pc_stats_new(const pc_stats_totals_t *t, struct json_t *root);

#endif
