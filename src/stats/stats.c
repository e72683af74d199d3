/* The numbers of a statistics snapshot, their JSON and the public accessors. */
#include "stats/stats.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "common/safe_text.h"

int pc_stats_result_slot(pulsarc_result res)
{
    if (res < 0 && res >= -31)
        return -(int)res;
    if (res >= PULSARC_ERR_BROKER_BASE && res < PULSARC_ERR_BROKER_BASE + 32)
        return 32 + (int)(res - PULSARC_ERR_BROKER_BASE);
    return 0;
}

pulsarc_result pc_stats_slot_result(int slot)
{
    if (slot >= 1 && slot < 32)
        return (pulsarc_result)-slot;
    if (slot >= 32 && slot < PC_STATS_RESULTS)
        return (pulsarc_result)(PULSARC_ERR_BROKER_BASE + slot - 32);
    return PULSARC_OK;
}

void pc_stats_totals_init(pc_stats_totals_t *t)
{
    memset(t, 0, sizeof *t);
}

void pc_stats_totals_add(pc_stats_totals_t *dst, const pc_stats_totals_t *src)
{
    for (int i = 0; i < PC_STAT_COUNT; i++) {
        if (i == PULSARC_STAT_BATCH_MAX_MSGS || i == PULSARC_STAT_MEMORY_LIMIT)
            dst->v[i] = src->v[i] > dst->v[i] ? src->v[i] : dst->v[i];
        else
            dst->v[i] += src->v[i];
    }
    for (int i = 0; i < PC_STATS_RESULTS; i++) {
        dst->failed_by[i] += src->failed_by[i];
        dst->refused_by[i] += src->refused_by[i];
    }
    pc_histogram_merge(&dst->latency_us, &src->latency_us);
}

void pc_stats_totals_clear_gauges(pc_stats_totals_t *t)
{
    t->v[PULSARC_STAT_MSGS_PENDING] = 0;
    t->v[PULSARC_STAT_MEMORY_USED] = 0;
    t->v[PULSARC_STAT_PARTITIONS] = 0;
    t->v[PULSARC_STAT_PRODUCERS] = 0;
}

/* ---- JSON ----------------------------------------------------------------------------- */

json_t *pc_stats_json_text(const char *s)
{
    json_t *j = json_string(s ? s : "");
    if (j)
        return j;
    char *repaired = pc_utf8_repaired(s); /* jansson takes nothing but UTF-8 */
    j = repaired ? json_string(repaired) : NULL;
    free(repaired);
    return j;
}

/* jansson's integers are signed 64-bit; no counter gets near 2^63. */
static int put(json_t *obj, const char *key, uint64_t v)
{
    return json_object_set_new(obj, key, json_integer((json_int_t)v));
}

static json_t *by_result(const uint64_t *slots)
{
    json_t *o = json_object();
    for (int i = 0; o && i < PC_STATS_RESULTS; i++) {
        if (!slots[i])
            continue;
        const char *name = i ? pulsarc_result_name(pc_stats_slot_result(i)) : "OTHER";
        if (put(o, name, slots[i]) != 0) {
            json_decref(o);
            return NULL;
        }
    }
    return o;
}

static json_t *latency(const pc_histogram_t *h)
{
    return json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I}", "count", (json_int_t)h->total, "min",
                     (json_int_t)(h->total ? h->min : 0), "mean",
                     (json_int_t)(h->total ? h->sum / h->total : 0), "p50",
                     (json_int_t)pc_histogram_percentile(h, 50), "p90",
                     (json_int_t)pc_histogram_percentile(h, 90), "p99",
                     (json_int_t)pc_histogram_percentile(h, 99), "p99_9",
                     (json_int_t)pc_histogram_percentile(h, 99.9), "max", (json_int_t)h->max);
}

json_t *pc_stats_totals_json(const pc_stats_totals_t *t)
{
    const uint64_t *v = t->v;
    json_t *ratio = v[PULSARC_STAT_ENTRY_BYTES]
                        ? json_real((double)v[PULSARC_STAT_ENTRY_RAW_BYTES] /
                                    (double)v[PULSARC_STAT_ENTRY_BYTES])
                        : json_null();
    json_t *mean = v[PULSARC_STAT_BATCHES] ? json_real((double)v[PULSARC_STAT_BATCHED_MSGS] /
                                                       (double)v[PULSARC_STAT_BATCHES])
                                           : json_null();
    /* "o" steals each reference, also on failure. */
    return json_pack("{s:{s:I,s:I,s:I,s:I,s:I,s:I},s:{s:I,s:I,s:I},s:o,s:o,"
                     "s:{s:I,s:I,s:I,s:I,s:o},s:{s:I,s:I,s:o,s:I},s:{s:I,s:I,s:I},s:o}",
                     "messages", "accepted", (json_int_t)v[PULSARC_STAT_MSGS_ACCEPTED], "refused",
                     (json_int_t)v[PULSARC_STAT_MSGS_REFUSED], "sent",
                     (json_int_t)v[PULSARC_STAT_MSGS_SENT], "acked",
                     (json_int_t)v[PULSARC_STAT_MSGS_ACKED], "failed",
                     (json_int_t)v[PULSARC_STAT_MSGS_FAILED], "pending",
                     (json_int_t)v[PULSARC_STAT_MSGS_PENDING], "bytes", "sent",
                     (json_int_t)v[PULSARC_STAT_BYTES_SENT], "acked",
                     (json_int_t)v[PULSARC_STAT_BYTES_ACKED], "failed",
                     (json_int_t)v[PULSARC_STAT_BYTES_FAILED], "failed_by_result",
                     by_result(t->failed_by), "refused_by_result", by_result(t->refused_by),
                     "entries", "count", (json_int_t)v[PULSARC_STAT_ENTRIES], "resent",
                     (json_int_t)v[PULSARC_STAT_ENTRIES_RESENT], "raw_bytes",
                     (json_int_t)v[PULSARC_STAT_ENTRY_RAW_BYTES], "bytes",
                     (json_int_t)v[PULSARC_STAT_ENTRY_BYTES], "compression_ratio", ratio, "batches",
                     "count", (json_int_t)v[PULSARC_STAT_BATCHES], "messages",
                     (json_int_t)v[PULSARC_STAT_BATCHED_MSGS], "mean_messages", mean,
                     "max_messages", (json_int_t)v[PULSARC_STAT_BATCH_MAX_MSGS], "connections",
                     "reconnects", (json_int_t)v[PULSARC_STAT_RECONNECTS], "disconnects",
                     (json_int_t)v[PULSARC_STAT_DISCONNECTS], "migrations",
                     (json_int_t)v[PULSARC_STAT_TOPIC_MIGRATIONS], "latency_us",
                     latency(&t->latency_us));
}

/* ---- the snapshot handed out ----------------------------------------------------------- */

pulsarc_stats_t *pc_stats_new(const pc_stats_totals_t *t, json_t *root)
{
    pulsarc_stats_t *s = root ? malloc(sizeof *s) : NULL;
    if (s) {
        s->t = *t;
        s->json = json_dumps(root, JSON_COMPACT);
        if (!s->json) {
            free(s);
            s = NULL;
        }
    }
    json_decref(root);
    return s;
}

void pulsarc_stats_free(pulsarc_stats_t *s)
{
    if (!s)
        return;
    free(s->json);
    free(s);
}

uint64_t pulsarc_stats_get(const pulsarc_stats_t *s, pulsarc_stat which)
{
    if (!s || (int)which < 0 || (int)which >= PC_STAT_COUNT)
        return 0;
    return s->t.v[which];
}

uint64_t pulsarc_stats_failed(const pulsarc_stats_t *s, pulsarc_result res)
{
    int slot = pc_stats_result_slot(res);
    return s && slot ? s->t.failed_by[slot] : 0;
}

uint64_t pulsarc_stats_refused(const pulsarc_stats_t *s, pulsarc_result res)
{
    int slot = pc_stats_result_slot(res);
    return s && slot ? s->t.refused_by[slot] : 0;
}

uint64_t pulsarc_stats_latency_us(const pulsarc_stats_t *s, double percent)
{
    if (!s || !(percent >= 0))
        return 0;
    return pc_histogram_percentile(&s->t.latency_us, percent);
}

const char *pulsarc_stats_json(const pulsarc_stats_t *s)
{
    return s ? s->json : "";
}
