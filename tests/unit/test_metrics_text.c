/* The Prometheus text of a known set of numbers (stats/metrics_text.c): names and types as
 * OpenTelemetry's Prometheus exporter spells PIP-342's, label escaping, cumulative
 * histogram buckets in seconds, _total counters, series per topic or per partition. */
#include <criterion/criterion.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats/metrics_text.h"

static pc_metrics_set_t set;
static char *text;

static void teardown(void)
{
    free(text);
    text = NULL;
    pc_metrics_set_free(&set);
}

static void has(const char *line)
{
    cr_assert_not_null(strstr(text, line), "missing:\n%s\nin:\n%s", line, text);
}

/* has() of a line made with printf's format. */
static void hasf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void hasf(const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    has(line);
}

static void lacks(const char *s)
{
    cr_assert_null(strstr(text, s), "unexpected %s in:\n%s", s, text);
}

/* A partitioned topic of 2 partitions and one without partitions. */
static void fill(void)
{
    pc_metrics_set_init(&set);
    pc_metrics_topic_t *m = pc_metrics_set_topic(&set, "persistent://acme/prod/orders");
    cr_assert_not_null(m);
    m->partitioned = true;
    pc_pp_counters_t *p1 = pc_metrics_topic_partition(m, 1); /* makes 0 too */
    pc_pp_counters_t *p0 = pc_metrics_topic_partition(m, 0);
    cr_assert(p0 && p1);
    p0->acked_msgs = 3, p0->acked_bytes = 300, p0->sent_msgs = 4, p0->registrations = 2;
    p1->acked_msgs = 1, p1->acked_bytes = 50, p1->sent_msgs = 1, p1->registrations = 1;
    p1->failed_msgs = 1;
    m->pending = 7;
    m->failed_by[pc_stats_result_slot(PULSARC_ERR_TIMEOUT)] = 1;
    pc_histogram_record_n(&m->latency_us, 400, 1);      /* <= 0.0005 */
    pc_histogram_record_n(&m->latency_us, 2000, 2);     /* <= 0.0025 */
    pc_histogram_record_n(&m->latency_us, 90000000, 1); /* past 60 s: +Inf only */
    set.memory_used = 10, set.memory_limit = 64, set.producers = 2;

    pc_metrics_topic_t *q = pc_metrics_set_topic(&set, "we\"ird\\ns/x/y");
    cr_assert_null(q, "a v1 name is refused by the topic parser");
    q = pc_metrics_set_topic(&set, "persistent://t/n/a\\b\"c");
    cr_assert_not_null(q);
    pc_metrics_topic_partition(q, 0)->acked_bytes = 5;
}

Test(metrics_text, histogram_in_seconds_with_cumulative_buckets, .fini = teardown)
{
    fill();
    size_t len = 0;
    text = pc_metrics_text(&set, false, &len);
    cr_assert_not_null(text);
    cr_assert_eq(strlen(text), len);
    const char
        *l = "pulsar_tenant=\"acme\",pulsar_namespace=\"acme/prod\","
             "pulsar_topic=\"persistent://acme/prod/orders\",pulsar_response_status=\"success\"";
    has("# TYPE pulsar_client_producer_message_send_duration_seconds histogram\n");
    has("# HELP pulsar_client_producer_message_send_duration_seconds Publish latency");
    hasf("_seconds_bucket{%s,le=\"0.0005\"} 1\n", l);
    hasf("_seconds_bucket{%s,le=\"0.001\"} 1\n", l);
    hasf("_seconds_bucket{%s,le=\"0.0025\"} 3\n", l);
    hasf("_seconds_bucket{%s,le=\"60\"} 3\n", l);
    hasf("_seconds_bucket{%s,le=\"+Inf\"} 4\n", l);
    hasf("_seconds_count{%s} 4\n", l);
    hasf("_seconds_sum{%s} 90.004400\n", l);
}

Test(metrics_text, counters_per_topic, .fini = teardown)
{
    fill();
    size_t len;
    text = pc_metrics_text(&set, false, &len);
    cr_assert_not_null(text);
    const char *l = "pulsar_tenant=\"acme\",pulsar_namespace=\"acme/prod\","
                    "pulsar_topic=\"persistent://acme/prod/orders\"";
    has("# TYPE pulsar_client_producer_message_send_size_bytes_total counter\n");
    hasf("pulsar_client_producer_message_send_size_bytes_total{%s} 350\n", l);
    has("# TYPE pulsar_client_producer_message_pending_count gauge\n");
    hasf("pulsar_client_producer_message_pending_count{%s} 7\n", l);
    hasf("pulsarc_producer_message_acked_total{%s} 4\n", l);
    hasf("pulsarc_producer_reconnect_total{%s} 1\n", l);
    hasf("pulsarc_producer_message_failure_total{%s,pulsarc_result=\"TIMEOUT\"} 1\n", l);
    has("pulsarc_client_memory_used_bytes 10\n");
    has("pulsarc_client_producer_count 2\n");
    lacks("pulsar_partition");
}

Test(metrics_text, counters_per_partition, .fini = teardown)
{
    fill();
    size_t len;
    text = pc_metrics_text(&set, true, &len);
    cr_assert_not_null(text);
    const char *l = "pulsar_tenant=\"acme\",pulsar_namespace=\"acme/prod\","
                    "pulsar_topic=\"persistent://acme/prod/orders\"";
    hasf("pulsar_client_producer_message_send_size_bytes_total{%s,pulsar_partition=\"0\"} 300\n",
         l);
    hasf("pulsar_client_producer_message_send_size_bytes_total{%s,pulsar_partition=\"1\"} 50\n", l);
    hasf("pulsarc_producer_message_failed_total{%s,pulsar_partition=\"1\"} 1\n", l);
    /* the topic without partitions keeps one series, without the label */
    has("pulsar_client_producer_message_send_size_bytes_total{pulsar_tenant=\"t\","
        "pulsar_namespace=\"t/n\",pulsar_topic=\"persistent://t/n/a\\\\b\\\"c\"} 5\n");
}

Test(metrics_text, label_values_escaped, .fini = teardown)
{
    fill();
    size_t len;
    text = pc_metrics_text(&set, false, &len);
    cr_assert_not_null(text);
    has("pulsar_topic=\"persistent://t/n/a\\\\b\\\"c\"}");
    /* every line is a comment or NAME{...} VALUE / NAME VALUE: no raw newline in a label */
    for (char *p = text; *p;) {
        char *nl = strchr(p, '\n');
        cr_assert_not_null(nl, "the text ends in a line feed");
        cr_assert(*p == '#' || (*p >= 'a' && *p <= 'z'), "line starts with %.20s", p);
        p = nl + 1;
    }
}

Test(metrics_text, producers_of_one_topic_share_series, .fini = teardown)
{
    pc_metrics_set_init(&set);
    pc_metrics_topic_t *a = pc_metrics_set_topic(&set, "orders");
    pc_metrics_topic_t *b = pc_metrics_set_topic(&set, "persistent://public/default/orders");
    pc_metrics_topic_t *c = pc_metrics_set_topic(&set, "orders-partition-3");
    cr_assert_eq(a, b);
    cr_assert_neq(a, c);
    cr_assert_eq(c->partition, 3);
    cr_assert_str_eq(c->topic, "persistent://public/default/orders");
    size_t len;
    text = pc_metrics_text(&set, false, &len);
    has("pulsar_client_producer_message_pending_count{pulsar_tenant=\"public\","
        "pulsar_namespace=\"public/default\",pulsar_topic=\"persistent://public/default/orders\","
        "pulsar_partition=\"3\"} 0\n");
}
