/* A client's statistics: its producers' numbers added up, what closed producers left, the
 * turn clock and the periodic callback. @locality loop thread (see stats_client.h). */
#include "stats/stats_client.h"

#include <jansson.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/timer.h"
#include "stats/metrics_text.h"

static void on_tick(uv_check_t *h)
{
    pc_client_stats_t *s = h->data;
    pc_turn_clock_tick(&s->clock);
}

/* The loop may wait in its poll now: what the timers read is over (a receipt that arrives
 * during the wait must not be stamped with the time before it). */
static void on_before_poll(uv_prepare_t *h)
{
    pc_client_stats_t *s = h->data;
    pc_turn_clock_tick(&s->clock);
}

static void on_interval(uv_timer_t *t)
{
    pc_client_stats_t *s = t->data;
    pulsarc_stats_t *snap = pc_client_stats_snapshot(s);
    if (!snap)
        return; /* out of memory: the next interval tries again */
    s->cb(snap->json, strlen(snap->json), s->cb_ctx);
    pulsarc_stats_free(snap);
}

int pc_client_stats_init(pc_client_stats_t *s, const pc_runtime_t *rt, const pc_admission_t *a,
                         uint64_t interval_ms, pulsarc_stats_cb cb, void *ctx)
{
    uv_loop_t *loop = rt->loop;
    memset(s, 0, sizeof *s);
    pc_stats_totals_init(&s->gone);
    s->admission = a;
    s->rt = rt;
    s->started_ms = pc_mono_ms();
    s->cb = cb;
    s->cb_ctx = ctx;
    if (interval_ms && cb) {
        if (!(s->timer = pc_timer_new(loop, s)))
            return -1;
        uv_timer_start(s->timer, on_interval, interval_ms, interval_ms);
        /* Reporting is no work: on the application's loop an idle client must let uv_run
         * end (client_loop.c counts what keeps the client's loop alive). The callback comes
         * whenever the loop runs; the client's own thread runs until the close anyway. */
        uv_unref((uv_handle_t *)s->timer);
    }
    uv_check_init(loop, &s->tick);
    s->tick.data = s;
    uv_check_start(&s->tick, on_tick);
    uv_unref((uv_handle_t *)&s->tick); /* it never keeps the loop running by itself */
    uv_prepare_init(loop, &s->before_poll);
    s->before_poll.data = s;
    uv_prepare_start(&s->before_poll, on_before_poll);
    uv_unref((uv_handle_t *)&s->before_poll);
    return 0;
}

void pc_client_stats_stop(pc_client_stats_t *s)
{
    pc_timer_free(s->timer);
    s->timer = NULL;
    /* The tick has no loop when init never got that far (a client that failed to start). */
    if (s->tick.loop && !uv_is_closing((uv_handle_t *)&s->tick))
        uv_close((uv_handle_t *)&s->tick, NULL);
    if (s->before_poll.loop && !uv_is_closing((uv_handle_t *)&s->before_poll))
        uv_close((uv_handle_t *)&s->before_poll, NULL);
}

void pc_client_stats_join(pc_client_stats_t *s, pc_stats_source_t *src)
{
    src->prev = NULL;
    src->next = s->sources;
    if (s->sources)
        s->sources->prev = src;
    s->sources = src;
}

void pc_client_stats_leave(pc_client_stats_t *s, pc_stats_source_t *src)
{
    if (src->prev)
        src->prev->next = src->next;
    else if (s->sources == src)
        s->sources = src->next;
    else
        return; /* not listed */
    if (src->next)
        src->next->prev = src->prev;
    src->next = src->prev = NULL;
    src->add(src, &s->gone);
    pc_stats_totals_clear_gauges(&s->gone);
}

pulsarc_stats_t *pc_client_stats_snapshot(pc_client_stats_t *s)
{
    pc_stats_totals_t *t = malloc(sizeof *t); /* 9 KiB: not on the loop's stack */
    if (!t)
        return NULL;
    *t = s->gone;
    json_t *producers = json_array();
    for (pc_stats_source_t *src = s->sources; src; src = src->next) {
        src->add(src, t);
        if (producers && json_array_append_new(producers, src->json(src)) != 0) {
            json_decref(producers);
            producers = NULL;
        }
    }
    t->v[PULSARC_STAT_MEMORY_USED] = (uint64_t)atomic_load(&s->admission->memory_used);
    t->v[PULSARC_STAT_MEMORY_LIMIT] = (uint64_t)s->admission->memory_limit;
    t->v[PULSARC_STAT_TLS_DOWNGRADES] = s->rt->tls_downgrades;
    t->v[PULSARC_STAT_TLS_RELOADS] = s->rt->tls_reloads;
    t->v[PULSARC_STAT_TLS_RELOAD_FAILURES] = s->rt->tls_reload_failures;
    json_t *root = NULL;
    json_t *totals = pc_stats_totals_json(t);
    if (producers && totals)
        root = json_pack("{s:s,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:o,s:o}", "pulsarc",
                         pulsarc_version_string(), "time_ms", (json_int_t)pc_wall_ms(), "uptime_ms",
                         (json_int_t)(pc_mono_ms() - s->started_ms), "memory_used",
                         (json_int_t)t->v[PULSARC_STAT_MEMORY_USED], "memory_limit",
                         (json_int_t)t->v[PULSARC_STAT_MEMORY_LIMIT], "producer_count",
                         (json_int_t)t->v[PULSARC_STAT_PRODUCERS], "tls_downgrades",
                         (json_int_t)t->v[PULSARC_STAT_TLS_DOWNGRADES], "tls_reloads",
                         (json_int_t)t->v[PULSARC_STAT_TLS_RELOADS], "tls_reload_failures",
                         (json_int_t)t->v[PULSARC_STAT_TLS_RELOAD_FAILURES], "totals", totals,
                         "producers", producers);
    else {
        json_decref(producers);
        json_decref(totals);
    }
    pulsarc_stats_t *snap = pc_stats_new(t, root);
    free(t);
    return snap;
}

char *pc_client_stats_metrics_text(pc_client_stats_t *s, bool per_partition, size_t *len)
{
    pc_metrics_set_t set;
    pc_metrics_set_init(&set);
    char *text = NULL;
    uint64_t producers = 0;
    for (pc_stats_source_t *src = s->sources; src; src = src->next, producers++)
        if (src->metrics(src, &set) != 0)
            goto out;
    set.memory_used = (uint64_t)atomic_load(&s->admission->memory_used);
    set.memory_limit = (uint64_t)s->admission->memory_limit;
    set.producers = producers;
    text = pc_metrics_text(&set, per_partition, len);
out:
    pc_metrics_set_free(&set);
    return text;
}
