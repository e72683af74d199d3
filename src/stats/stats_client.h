/* A client's statistics: the turn clock its producers time messages with, the producers
 * that report (sources), what closed ones left behind, client-wide snapshots, and the
 * periodic JSON callback (statsIntervalSeconds). It knows its producers only as sources,
 * so that the client need not know producers.
 * @locality loop thread, except pc_client_stats_init (before the loop thread runs). */
#ifndef PC_STATS_CLIENT_H
#define PC_STATS_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "accept/admission.h"
#include "stats/stats.h"
#include "common/turn_clock.h"
#include "net/runtime.h"

struct pc_metrics_set;

/* Something whose numbers count in the client's (a producer not freed yet). */
typedef struct pc_stats_source {
    struct pc_stats_source *next, *prev;
    /* Add its numbers to t. */
    void (*add)(struct pc_stats_source *src, pc_stats_totals_t *t);
    /* Its object in the client's JSON ("producers"); NULL when out of memory. */
    struct json_t *(*json)(struct pc_stats_source *src);
    /* Add its numbers to its topic's in set (metrics_set.h); -1 when out of memory. */
    int (*metrics)(struct pc_stats_source *src, struct pc_metrics_set *set);
} pc_stats_source_t;

typedef struct pc_client_stats {
    /* The clock is read for every message on the loop thread: kept off the cache line of
     * what comes before it in the client (the send pool's stash, which senders write for
     * every message). */
    char apart[64];
    pc_turn_clock_t clock;    /* the loop's turns: its producers' latency clock */
    uv_check_t tick;          /* ends each turn of the clock */
    uv_prepare_t before_poll; /* ... and its timers' part, before the loop may block:
                                     a time read by a timer must not date the I/O after */
    uv_timer_t *timer;        /* statsIntervalSeconds; NULL: no callback */
    pulsarc_stats_cb cb;
    void *cb_ctx;
    const pc_admission_t *admission; /* memory in use and its limit */
    const pc_runtime_t *rt;          /* the client's own counters (switches that left TLS) */
    pc_stats_source_t *sources;      /* producers not freed yet */
    pc_stats_totals_t gone;          /* what the producers that left counted */
    uint64_t started_ms;             /* monotonic: the client's age */
} pc_client_stats_t;

/* interval_ms 0 or cb NULL: no callback. Starts the tick (and timer) on rt's loop; rt
 * must outlive s. Returns 0, or -1 when out of memory. */
int pc_client_stats_init(pc_client_stats_t *s, const pc_runtime_t *rt, const pc_admission_t *a,
                         uint64_t interval_ms, pulsarc_stats_cb cb, void *ctx);
/* Close the handles (shutdown; also after a failed or no init, on a zeroed s); the loop
 * finishes closing them. */
void pc_client_stats_stop(pc_client_stats_t *s);
/* A producer reports from now on / no longer (its numbers stay in the client's). */
void pc_client_stats_join(pc_client_stats_t *s, pc_stats_source_t *src);
void pc_client_stats_leave(pc_client_stats_t *s, pc_stats_source_t *src);
/* The client's snapshot (docs/statistics.md); NULL when out of memory. */
pulsarc_stats_t *pc_client_stats_snapshot(pc_client_stats_t *s);
/* The client's statistics as Prometheus text (metrics_text.h), series per partition with
 * per_partition: malloc'd, NUL-terminated, *len bytes; NULL when out of memory. Producers
 * freed are not in it (their series end), unlike the snapshot's totals. */
char *pc_client_stats_metrics_text(pc_client_stats_t *s, bool per_partition, size_t *len);

#endif
