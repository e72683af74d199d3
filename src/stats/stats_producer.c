/* A producer handle's statistics: its own counters plus its partitions', added up on the
 * loop thread. */
#include "stats/stats_producer.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

void pc_producer_stats_init(pc_producer_stats_t *s, pc_turn_clock_t *clock)
{
    memset(s, 0, sizeof *s);
    s->sink.clock = clock;
    for (int i = 0; i < PC_STATS_RESULTS; i++)
        atomic_init(&s->refused_by[i], 0);
}

/* A partition's counters, in the snapshot's terms. */
static void add_partition(const pc_pp_counters_t *k, uint64_t *v)
{
    v[PULSARC_STAT_MSGS_SENT] += k->sent_msgs;
    v[PULSARC_STAT_BYTES_SENT] += k->sent_bytes;
    v[PULSARC_STAT_MSGS_ACKED] += k->acked_msgs;
    v[PULSARC_STAT_BYTES_ACKED] += k->acked_bytes;
    v[PULSARC_STAT_MSGS_FAILED] += k->failed_msgs;
    v[PULSARC_STAT_BYTES_FAILED] += k->failed_bytes;
    v[PULSARC_STAT_ENTRIES] += k->entries;
    v[PULSARC_STAT_ENTRY_RAW_BYTES] += k->entry_raw_bytes;
    v[PULSARC_STAT_ENTRY_BYTES] += k->entry_bytes;
    v[PULSARC_STAT_ENTRIES_RESENT] += k->entries_resent;
    v[PULSARC_STAT_BATCHES] += k->batches;
    v[PULSARC_STAT_BATCHED_MSGS] += k->batched_msgs;
    if (k->batch_max_msgs > v[PULSARC_STAT_BATCH_MAX_MSGS])
        v[PULSARC_STAT_BATCH_MAX_MSGS] = k->batch_max_msgs;
    v[PULSARC_STAT_RECONNECTS] += k->registrations > 1 ? k->registrations - 1 : 0;
    v[PULSARC_STAT_DISCONNECTS] += k->disconnects;
    v[PULSARC_STAT_TOPIC_MIGRATIONS] += k->migrations;
}

void pc_producer_stats_add(const pc_producer_stats_t *s, const pc_partitioned_t *pt,
                           pc_producer_gauges_t g, pc_stats_totals_t *t)
{
    uint64_t *v = t->v;
    v[PULSARC_STAT_MSGS_ACCEPTED] += g.accepted;
    v[PULSARC_STAT_MSGS_PENDING] += g.pending;
    v[PULSARC_STAT_PRODUCERS] += 1;
    int n = pc_partitioned_producers(pt);
    v[PULSARC_STAT_PARTITIONS] += (uint64_t)n;
    for (int i = 0; i < n; i++)
        add_partition(pc_partitioned_counters(pt, i), v);
    v[PULSARC_STAT_LATENCY_COUNT] += s->sink.latency_us.total;
    for (int i = 0; i < PC_STATS_RESULTS; i++) {
        uint64_t refused = atomic_load_explicit(&s->refused_by[i], memory_order_relaxed);
        t->failed_by[i] += s->failed_by[i];
        t->refused_by[i] += refused;
        v[PULSARC_STAT_MSGS_REFUSED] += refused;
    }
    pc_histogram_merge(&t->latency_us, &s->sink.latency_us);
}

/* One partition: what it counted by itself. */
static json_t *partition_json(int i, const pc_pp_counters_t *k)
{
    return json_pack("{s:i,s:{s:I,s:I,s:I},s:{s:I,s:I,s:I},s:{s:I,s:I,s:I,s:I},"
                     "s:{s:I,s:I,s:I},s:{s:I,s:I,s:I}}",
                     "partition", i, "messages", "sent", (json_int_t)k->sent_msgs, "acked",
                     (json_int_t)k->acked_msgs, "failed", (json_int_t)k->failed_msgs, "bytes",
                     "sent", (json_int_t)k->sent_bytes, "acked", (json_int_t)k->acked_bytes,
                     "failed", (json_int_t)k->failed_bytes, "entries", "count",
                     (json_int_t)k->entries, "resent", (json_int_t)k->entries_resent, "raw_bytes",
                     (json_int_t)k->entry_raw_bytes, "bytes", (json_int_t)k->entry_bytes, "batches",
                     "count", (json_int_t)k->batches, "messages", (json_int_t)k->batched_msgs,
                     "max_messages", (json_int_t)k->batch_max_msgs, "connections", "reconnects",
                     (json_int_t)(k->registrations > 1 ? k->registrations - 1 : 0), "disconnects",
                     (json_int_t)k->disconnects, "migrations", (json_int_t)k->migrations);
}

json_t *pc_producer_stats_json(const pc_producer_stats_t *s, const pc_partitioned_t *pt,
                               pc_producer_gauges_t g, const char *topic, const char *name)
{
    pc_stats_totals_t *t = malloc(sizeof *t); /* 9 KiB: not on the loop's stack */
    if (!t)
        return NULL;
    pc_stats_totals_init(t);
    pc_producer_stats_add(s, pt, g, t);
    json_t *counters = pc_stats_totals_json(t);
    free(t);
    json_t *parts = json_array();
    int n = pc_partitioned_producers(pt);
    for (int i = 0; parts && i < n; i++) {
        if (json_array_append_new(parts, partition_json(i, pc_partitioned_counters(pt, i)))) {
            json_decref(parts);
            parts = NULL;
        }
    }
    /* "o" takes each reference, also on failure (a NULL one fails the pack). */
    json_t *o = json_pack("{s:o,s:o,s:i}", "topic", pc_stats_json_text(topic), "name",
                          pc_stats_json_text(name), "partitions", n);
    if (o && g.spooled &&
        json_object_set_new(o, "spool",
                            json_pack("{s:I,s:I}", "skipped_records",
                                      (json_int_t)g.spool_skipped_records, "skipped_bytes",
                                      (json_int_t)g.spool_skipped_bytes)) != 0) {
        json_decref(o);
        o = NULL;
    }
    if (!o || !counters || !parts || json_object_update(o, counters) != 0) {
        json_decref(o);
        json_decref(counters);
        json_decref(parts);
        return NULL;
    }
    json_decref(counters);
    if (json_object_set_new(o, "partition_stats", parts) != 0) { /* takes parts in any case */
        json_decref(o);
        return NULL;
    }
    return o;
}

int pc_producer_stats_metrics(const pc_producer_stats_t *s, const pc_partitioned_t *pt,
                              pc_producer_gauges_t g, const char *topic, pc_metrics_set_t *set)
{
    pc_metrics_topic_t *m = pc_metrics_set_topic(set, topic);
    if (!m)
        return -1;
    int n = pc_partitioned_producers(pt);
    if (pc_partitioned_count(pt) > 0)
        m->partitioned = true;
    for (int i = 0; i < n; i++) {
        pc_pp_counters_t *k = pc_metrics_topic_partition(m, i);
        if (!k)
            return -1;
        pc_metrics_counters_add(k, pc_partitioned_counters(pt, i));
    }
    m->pending += g.pending;
    for (int i = 0; i < PC_STATS_RESULTS; i++)
        m->failed_by[i] += s->failed_by[i];
    pc_histogram_merge(&m->latency_us, &s->sink.latency_us);
    return 0;
}
