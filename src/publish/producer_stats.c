/* The statistics' public calls: a snapshot of a producer or of the client, taken on the
 * loop thread (at once from a callback, else through a task the caller waits for), and
 * a producer handle's part in its client's statistics.
 * @locality any thread, except the hooks (loop thread). */
#include <stdatomic.h>
#include <stdlib.h>

#include "publish/producer.h"
#include "common/error.h"

static pc_stats_source_t *source_of_producer(pulsarc_producer_t *p)
{
    return &p->stats_source;
}

static pulsarc_producer_t *producer_of_source(pc_stats_source_t *src)
{
    return (pulsarc_producer_t *)((char *)src - offsetof(pulsarc_producer_t, stats_source));
}

/* Loop thread: handed_over is its own. */
static pc_producer_gauges_t gauges_of(const pulsarc_producer_t *p)
{
    pc_producer_gauges_t g = { .accepted = p->handed_over,
                               .pending = (uint64_t)atomic_load(&p->permits.pending) };
    if (p->spool) {
        g.spooled = true;
        g.spool_skipped_records = pc_spool_skipped_records(p->spool);
        g.spool_skipped_bytes = pc_spool_skipped_bytes(p->spool);
    }
    return g;
}

static void source_add(pc_stats_source_t *src, pc_stats_totals_t *t)
{
    pulsarc_producer_t *p = producer_of_source(src);
    pc_producer_stats_add(&p->stats, p->pt, gauges_of(p), t);
}

static struct json_t *source_json(pc_stats_source_t *src)
{
    pulsarc_producer_t *p = producer_of_source(src);
    return pc_producer_stats_json(&p->stats, p->pt, gauges_of(p), p->topic.full,
                                  pulsarc_producer_name(p));
}

static int source_metrics(pc_stats_source_t *src, struct pc_metrics_set *set)
{
    pulsarc_producer_t *p = producer_of_source(src);
    return pc_producer_stats_metrics(&p->stats, p->pt, gauges_of(p), p->topic.full, set);
}

void pc_producer_stats_join(pulsarc_producer_t *p)
{
    pc_stats_source_t *src = source_of_producer(p);
    src->add = source_add;
    src->json = source_json;
    src->metrics = source_metrics;
    pc_client_stats_join(&p->client->stats, src);
}

void pc_producer_stats_leave(pulsarc_producer_t *p)
{
    pc_client_stats_leave(&p->client->stats, source_of_producer(p));
}

/* ---- snapshots --------------------------------------------------------------------- */

static pulsarc_stats_t *producer_snapshot(pulsarc_producer_t *p)
{
    pc_stats_totals_t *t = malloc(sizeof *t); /* 9 KiB: not on the loop's stack */
    if (!t)
        return NULL;
    pc_stats_totals_init(t);
    pc_producer_stats_add(&p->stats, p->pt, gauges_of(p), t);
    pulsarc_stats_t *snap = pc_stats_new(t, source_json(source_of_producer(p)));
    free(t);
    return snap;
}

typedef struct snapshot_task {
    pc_task_t task;
    pulsarc_client_t *client;
    pulsarc_producer_t *producer; /* NULL: the client's */
    bool text;                    /* the client's metrics text rather than a snapshot */
    pulsarc_stats_t *out;
    char *text_out;
    size_t text_len;
    pc_waiter_t waiter;
} snapshot_task;

static pulsarc_stats_t *take(pulsarc_client_t *c, pulsarc_producer_t *p)
{
    return p ? producer_snapshot(p) : pc_client_stats_snapshot(&c->stats);
}

/* The snapshot or text st asks for; false when out of memory. Loop thread. */
static bool take_task(snapshot_task *st)
{
    if (st->text) {
        st->text_out = pc_client_stats_metrics_text(&st->client->stats,
                                                    st->client->conf.metrics_per_partition,
                                                    &st->text_len);
        return st->text_out != NULL;
    }
    st->out = take(st->client, st->producer);
    return st->out != NULL;
}

static void run_snapshot(pc_task_t *t)
{
    snapshot_task *st = (snapshot_task *)t;
    bool ok = take_task(st);
    pc_waiter_signal(&st->waiter, ok ? PULSARC_OK : PULSARC_ERR_NO_MEMORY,
                     ok ? NULL : "out of memory");
}

/* Runs st on the loop thread: at once when called there, else through a task waited for. */
static pulsarc_result run_on_loop(snapshot_task *st)
{
    if (pc_client_on_loop(st->client))
        return take_task(st) ? PULSARC_OK : pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    st->task.run = run_snapshot;
    pc_waiter_init(&st->waiter);
    pc_client_post(st->client, &st->task);
    pulsarc_result res = pc_waiter_wait(&st->waiter);
    pc_waiter_destroy(&st->waiter);
    return res;
}

static pulsarc_result snapshot(pulsarc_client_t *c, pulsarc_producer_t *p, pulsarc_stats_t **out)
{
    snapshot_task st = { .client = c, .producer = p };
    pulsarc_result res = run_on_loop(&st);
    *out = st.out;
    return res;
}

pulsarc_result pulsarc_producer_stats(pulsarc_producer_t *p, pulsarc_stats_t **out)
{
    if (out)
        *out = NULL;
    if (!p || !out)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT, "producer and out must not be NULL");
    if (atomic_load(&p->state) == P_DETACHED)
        return pc_fail(PULSARC_ERR_ALREADY_CLOSED, "the client was destroyed");
    return snapshot(p->client, p, out);
}

pulsarc_result pulsarc_client_stats(pulsarc_client_t *c, pulsarc_stats_t **out)
{
    if (out)
        *out = NULL;
    if (!c || !out)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT, "client and out must not be NULL");
    return snapshot(c, NULL, out);
}

pulsarc_result pulsarc_client_metrics_text(pulsarc_client_t *c, char **out, size_t *len)
{
    if (out)
        *out = NULL;
    if (len)
        *len = 0;
    if (!c || !out)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT, "client and out must not be NULL");
    snapshot_task st = { .client = c, .text = true };
    pulsarc_result res = run_on_loop(&st);
    *out = st.text_out;
    if (len)
        *len = st.text_len;
    return res;
}

void pulsarc_metrics_text_free(char *text)
{
    free(text);
}
