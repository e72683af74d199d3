/* The statistics as Prometheus text (metrics_text.h). */
#include "stats/metrics_text.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Seconds: .0005 .001 .0025 .005 .01 .025 .05 .1 .25 .5 1 2.5 5 10 30 60, as the Java
 * client's LatencyHistogram. */
const uint64_t pc_metrics_latency_bounds_us[PC_METRICS_LATENCY_BOUNDS] = {
    500,    1000,   2500,    5000,    10000,   25000,    50000,    100000,
    250000, 500000, 1000000, 2500000, 5000000, 10000000, 30000000, 60000000,
};
static const char *const bound_text[PC_METRICS_LATENCY_BOUNDS] = {
    "0.0005", "0.001", "0.0025", "0.005", "0.01", "0.025", "0.05", "0.1",
    "0.25",   "0.5",   "1",      "2.5",   "5",    "10",    "30",   "60",
};

typedef struct text {
    char *p;
    size_t len, cap;
    bool oom;
} text;

static void put(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(text *t, const char *fmt, ...)
{
    for (int round = 0; round < 2 && !t->oom; round++) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(t->p ? t->p + t->len : NULL, t->cap - t->len, fmt, ap);
        va_end(ap);
        if (n < 0) {
            t->oom = true;
            return;
        }
        if ((size_t)n < t->cap - t->len) {
            t->len += (size_t)n;
            return;
        }
        size_t cap = t->cap * 2 > t->len + (size_t)n + 1 ? t->cap * 2 : t->len + (size_t)n + 1;
        char *p = realloc(t->p, cap);
        if (!p) {
            t->oom = true;
            return;
        }
        t->p = p;
        t->cap = cap;
    }
}

/* A label value: backslash, double quote and line feed escaped, as the format says. */
static void put_value(text *t, const char *s)
{
    for (; *s; s++) {
        if (*s == '\\')
            put(t, "\\\\");
        else if (*s == '"')
            put(t, "\\\"");
        else if (*s == '\n')
            put(t, "\\n");
        else
            put(t, "%c", *s);
    }
}

static void header(text *t, const char *name, const char *type, const char *help)
{
    put(t, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* The labels of a topic's series (without braces); partition < 0: none. */
static void put_labels(text *t, const pc_metrics_topic_t *m, int partition)
{
    put(t, "pulsar_tenant=\"");
    put_value(t, m->tenant);
    put(t, "\",pulsar_namespace=\"");
    put_value(t, m->ns);
    put(t, "\",pulsar_topic=\"");
    put_value(t, m->topic);
    put(t, "\"");
    if (partition >= 0)
        put(t, ",pulsar_partition=\"%d\"", partition);
}

enum field { ACKED_BYTES, SENT_MSGS, ACKED_MSGS, FAILED_MSGS, RECONNECTS, DISCONNECTS, MIGRATIONS };

static uint64_t field_of(const pc_pp_counters_t *k, enum field f)
{
    switch (f) {
    case ACKED_BYTES:
        return k->acked_bytes;
    case SENT_MSGS:
        return k->sent_msgs;
    case ACKED_MSGS:
        return k->acked_msgs;
    case FAILED_MSGS:
        return k->failed_msgs;
    case RECONNECTS:
        return k->registrations > 1 ? k->registrations - 1 : 0;
    case DISCONNECTS:
        return k->disconnects;
    case MIGRATIONS:
        return k->migrations;
    }
    return 0;
}

/* One counter kept per partition: a series per topic, or per partition of a partitioned
 * topic with per_partition. */
static void partition_counter(text *t, const pc_metrics_set_t *set, bool per_partition,
                              const char *name, const char *help, enum field f)
{
    header(t, name, "counter", help);
    for (size_t i = 0; i < set->n; i++) {
        const pc_metrics_topic_t *m = set->topics[i];
        bool split = per_partition && m->partitioned;
        for (int p = split ? 0 : -1; p < (split ? m->nparts : 0); p++) {
            uint64_t v = 0; /* partition p's, or all of them (p < 0) */
            for (int i = 0; i < m->nparts; i++)
                if (p < 0 || i == p)
                    v += field_of(&m->parts[i], f);
            put(t, "%s{", name);
            put_labels(t, m, split ? p : m->partition);
            put(t, "} %" PRIu64 "\n", v);
        }
    }
}

static void send_duration(text *t, const pc_metrics_set_t *set)
{
    static const char name[] = "pulsar_client_producer_message_send_duration_seconds";
    header(t, name, "histogram",
           "Publish latency experienced by the application, includes client batching time");
    for (size_t i = 0; i < set->n; i++) {
        const pc_metrics_topic_t *m = set->topics[i];
        const pc_histogram_t *h = &m->latency_us;
        /* A bucket of the histogram counts below a bound when all of it lies at or below
         * the bound: values within 1/32 under a bound may count in the next one up. */
        uint64_t below = 0;
        size_t b = 0;
        for (int j = 0; j < PC_METRICS_LATENCY_BOUNDS; j++) {
            for (; b < PC_HIST_BUCKETS &&
                   pc_histogram_bucket_high(b) <= pc_metrics_latency_bounds_us[j];
                 b++)
                below += h->counts[b];
            put(t, "%s_bucket{", name);
            put_labels(t, m, m->partition);
            put(t, ",pulsar_response_status=\"success\",le=\"%s\"} %" PRIu64 "\n", bound_text[j],
                below);
        }
        put(t, "%s_bucket{", name);
        put_labels(t, m, m->partition);
        put(t, ",pulsar_response_status=\"success\",le=\"+Inf\"} %" PRIu64 "\n", h->total);
        put(t, "%s_sum{", name);
        put_labels(t, m, m->partition);
        put(t, ",pulsar_response_status=\"success\"} %" PRIu64 ".%06" PRIu64 "\n",
            h->sum / 1000000u, h->sum % 1000000u);
        put(t, "%s_count{", name);
        put_labels(t, m, m->partition);
        put(t, ",pulsar_response_status=\"success\"} %" PRIu64 "\n", h->total);
    }
}

static void pending(text *t, const pc_metrics_set_t *set)
{
    static const char name[] = "pulsar_client_producer_message_pending_count";
    header(t, name, "gauge",
           "The number of messages in the producer internal send queue, waiting to be sent");
    for (size_t i = 0; i < set->n; i++) {
        put(t, "%s{", name);
        put_labels(t, set->topics[i], set->topics[i]->partition);
        put(t, "} %" PRIu64 "\n", set->topics[i]->pending);
    }
}

static void failures(text *t, const pc_metrics_set_t *set)
{
    static const char name[] = "pulsarc_producer_message_failure_total";
    header(t, name, "counter", "Messages completed with an error, by result (pulsarc)");
    for (size_t i = 0; i < set->n; i++) {
        const pc_metrics_topic_t *m = set->topics[i];
        for (int s = 0; s < PC_STATS_RESULTS; s++) {
            if (!m->failed_by[s])
                continue;
            pulsarc_result res = pc_stats_slot_result(s);
            put(t, "%s{", name);
            put_labels(t, m, m->partition);
            put(t, ",pulsarc_result=\"%s\"} %" PRIu64 "\n",
                res == PULSARC_OK ? "OTHER" : pulsarc_result_name(res), m->failed_by[s]);
        }
    }
}

static void gauge(text *t, const char *name, const char *help, uint64_t v)
{
    header(t, name, "gauge", help);
    put(t, "%s %" PRIu64 "\n", name, v);
}

char *pc_metrics_text(const pc_metrics_set_t *set, bool per_partition, size_t *len)
{
    text t = { 0 };
    send_duration(&t, set);
    partition_counter(&t, set, per_partition,
                      "pulsar_client_producer_message_send_size_bytes_total",
                      "The number of bytes published", ACKED_BYTES);
    pending(&t, set);
    /* pulsarc's own counters kept per partition, and its failures by result. */
    static const struct {
        const char *name, *help;
        enum field f;
    } own[] = {
        { "pulsarc_producer_message_sent_total",
          "Messages put into entries for the broker (pulsarc)", SENT_MSGS },
        { "pulsarc_producer_message_acked_total", "Messages completed with success (pulsarc)",
          ACKED_MSGS },
        { "pulsarc_producer_message_failed_total", "Messages completed with an error (pulsarc)",
          FAILED_MSGS },
        { "pulsarc_producer_reconnect_total",
          "Producer registrations after each partition's first (pulsarc)", RECONNECTS },
        { "pulsarc_producer_disconnect_total", "Connections lost while registered (pulsarc)",
          DISCONNECTS },
        { "pulsarc_producer_topic_migration_total",
          "Moves of the topic to another cluster followed (TOPIC_MIGRATED, pulsarc)", MIGRATIONS },
    };
    for (size_t i = 0; i < sizeof own / sizeof own[0]; i++)
        partition_counter(&t, set, per_partition, own[i].name, own[i].help, own[i].f);
    failures(&t, set);
    gauge(&t, "pulsarc_client_memory_used_bytes", "Bytes memoryLimitBytes counts (pulsarc)",
          set->memory_used);
    gauge(&t, "pulsarc_client_memory_limit_bytes", "memoryLimitBytes, 0: none (pulsarc)",
          set->memory_limit);
    gauge(&t, "pulsarc_client_producer_count", "Producers not freed yet (pulsarc)", set->producers);
    if (t.oom || !t.p) {
        free(t.p);
        return NULL;
    }
    *len = t.len;
    return t.p;
}
