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

void pc_producer_stats_join(pulsarc_producer_t *p)
{
    pc_stats_source_t *src = source_of_producer(p);
    src->add = source_add;
    src->json = source_json;
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
    pulsarc_stats_t *out;
    pc_waiter_t waiter;
} snapshot_task;

static pulsarc_stats_t *take(pulsarc_client_t *c, pulsarc_producer_t *p)
{
    return p ? producer_snapshot(p) : pc_client_stats_snapshot(&c->stats);
}

static void run_snapshot(pc_task_t *t)
{
    snapshot_task *st = (snapshot_task *)t;
    st->out = take(st->client, st->producer);
    pc_waiter_signal(&st->waiter, st->out ? PULSARC_OK : PULSARC_ERR_NO_MEMORY,
                     st->out ? NULL : "out of memory");
}

static pulsarc_result snapshot(pulsarc_client_t *c, pulsarc_producer_t *p, pulsarc_stats_t **out)
{
    if (pc_client_on_loop(c)) {
        *out = take(c, p);
        return *out ? PULSARC_OK : pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    }
    snapshot_task st = { .client = c, .producer = p };
    st.task.run = run_snapshot;
    pc_waiter_init(&st.waiter);
    pc_client_post(c, &st.task);
    pulsarc_result res = pc_waiter_wait(&st.waiter);
    pc_waiter_destroy(&st.waiter);
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
