/* The client's numbers by topic and partition, for the metrics text (metrics_set.h). */
#include "stats/metrics_set.h"

#include <stdlib.h>
#include <string.h>

#include "common/topic_name.h"

void pc_metrics_set_init(pc_metrics_set_t *set)
{
    memset(set, 0, sizeof *set);
}

static void topic_free(pc_metrics_topic_t *m)
{
    free(m->topic);
    free(m->tenant);
    free(m->ns);
    free(m->parts);
    free(m);
}

void pc_metrics_set_free(pc_metrics_set_t *set)
{
    for (size_t i = 0; i < set->n; i++)
        topic_free(set->topics[i]);
    free(set->topics);
    memset(set, 0, sizeof *set);
}

/* The length of the topic's name without its partition suffix ("-partition-N"). */
static size_t base_len(const pc_topic_name_t *tn)
{
    if (tn->partition < 0)
        return strlen(tn->full);
    return (size_t)(strrchr(tn->full, '-') - tn->full) - strlen("-partition");
}

/* "tenant/namespace", and the topic without the partition suffix. */
static pc_metrics_topic_t *topic_new(const pc_topic_name_t *tn)
{
    pc_metrics_topic_t *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    pc_histogram_reset(&m->latency_us);
    m->partition = tn->partition;
    size_t tl = strlen(tn->tenant), nl = strlen(tn->ns), full = base_len(tn);
    m->topic = malloc(full + 1);
    m->tenant = malloc(tl + 1);
    m->ns = malloc(tl + 1 + nl + 1);
    if (!m->topic || !m->tenant || !m->ns) {
        topic_free(m);
        return NULL;
    }
    memcpy(m->topic, tn->full, full);
    m->topic[full] = '\0';
    memcpy(m->tenant, tn->tenant, tl + 1);
    memcpy(m->ns, tn->tenant, tl);
    m->ns[tl] = '/';
    memcpy(m->ns + tl + 1, tn->ns, nl + 1);
    return m;
}

pc_metrics_topic_t *pc_metrics_set_topic(pc_metrics_set_t *set, const char *topic)
{
    pc_topic_name_t *tn = malloc(sizeof *tn); /* 1 KiB: not on the loop's stack */
    if (!tn)
        return NULL;
    pc_metrics_topic_t *m = NULL;
    if (pc_topic_name_parse(topic, tn, NULL, 0) != 0)
        goto out;
    for (size_t i = 0; i < set->n; i++) {
        pc_metrics_topic_t *o = set->topics[i];
        if (o->partition == tn->partition && strlen(o->topic) == base_len(tn) &&
            strncmp(o->topic, tn->full, base_len(tn)) == 0) {
            m = o;
            goto out;
        }
    }
    if (set->n == set->cap) {
        size_t cap = set->cap ? set->cap * 2 : 8;
        pc_metrics_topic_t **v = realloc(set->topics, cap * sizeof *v);
        if (!v)
            goto out;
        set->topics = v;
        set->cap = cap;
    }
    if ((m = topic_new(tn)))
        set->topics[set->n++] = m;
out:
    free(tn);
    return m;
}

pc_pp_counters_t *pc_metrics_topic_partition(pc_metrics_topic_t *m, int i)
{
    if (i < 0)
        return NULL;
    if (i >= m->nparts) {
        pc_pp_counters_t *v = realloc(m->parts, (size_t)(i + 1) * sizeof *v);
        if (!v)
            return NULL;
        memset(v + m->nparts, 0, (size_t)(i + 1 - m->nparts) * sizeof *v);
        m->parts = v;
        m->nparts = i + 1;
    }
    return &m->parts[i];
}

void pc_metrics_counters_add(pc_pp_counters_t *d, const pc_pp_counters_t *s)
{
    d->sent_msgs += s->sent_msgs;
    d->sent_bytes += s->sent_bytes;
    d->acked_msgs += s->acked_msgs;
    d->acked_bytes += s->acked_bytes;
    d->failed_msgs += s->failed_msgs;
    d->failed_bytes += s->failed_bytes;
    d->entries += s->entries;
    d->entry_raw_bytes += s->entry_raw_bytes;
    d->entry_bytes += s->entry_bytes;
    d->entries_resent += s->entries_resent;
    d->batches += s->batches;
    d->batched_msgs += s->batched_msgs;
    if (s->batch_max_msgs > d->batch_max_msgs)
        d->batch_max_msgs = s->batch_max_msgs;
    d->disconnects += s->disconnects;
    d->registrations += s->registrations;
    d->migrations += s->migrations;
}
