/* The active cluster, its checks and the switch (service_provider.h).
 *
 * One check at a time, each a chain of probes on the loop: the active cluster; when it
 * has been unreachable for the failover delay, the others in order of preference until
 * one answers; while a secondary is active, the primary. The next check is scheduled
 * when the chain ends, so a slow probe never overlaps the next one.
 * @locality loop thread. */
#include "net/service_provider.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth/auth.h"
#include "common/clock.h"
#include "common/error.h"
#include "common/log.h"
#include "net/pool.h"
#include "net/probe.h"

struct pc_service_provider {
    pc_runtime_t *rt;
    pc_service_settings_t set;
    int n;
    int active;
    char *told_url;   /* clusters[0].url once a URL was asked for or told (owned) */
    uv_timer_t timer; /* the next check; the struct goes when it has closed */
    bool stopped;
    pc_probe_t *probe;   /* in flight, or NULL */
    int scan;            /* the cluster the failover scan probes now */
    bool stranded;       /* no cluster answered the last failover scan (logged once) */
    bool down;           /* the active cluster failed its last probe ... */
    uint64_t down_since; /* ... and every probe since this time */
    bool primary_up;     /* a secondary is active and the primary answered ... */
    uint64_t up_since;   /* ... every probe since this time */
    /* As many as the client has (a cluster is over 4 KiB: most clients have one). */
    pc_cluster_t clusters[];
};

static uint64_t now_ms(const pc_service_provider_t *sp)
{
    return pc_clock_now_ms(sp->rt->clock);
}

/* ---- listeners ------------------------------------------------------------------------ */

void pc_cluster_listen(pc_runtime_t *rt, pc_cluster_listener_t *l)
{
    l->prev = NULL;
    l->next = rt->cluster_listeners;
    if (l->next)
        l->next->prev = l;
    rt->cluster_listeners = l;
}

void pc_cluster_unlisten(pc_runtime_t *rt, pc_cluster_listener_t *l)
{
    if (l->prev)
        l->prev->next = l->next;
    else if (rt->cluster_listeners == l)
        rt->cluster_listeners = l->next;
    else
        return; /* not listening */
    if (l->next)
        l->next->prev = l->prev;
    l->next = l->prev = NULL;
}

/* ---- installing a cluster ------------------------------------------------------------- */

/* The runtime's view of cluster i: where lookups start, what connections present and
 * trust, and the HTTP client of an http(s):// service URL (made for it, since its trust
 * may differ from the previous cluster's). */
static void install(pc_service_provider_t *sp, int i)
{
    pc_runtime_t *rt = sp->rt;
    const pc_cluster_t *cl = &sp->clusters[i];
    sp->active = i;
    rt->service = &cl->service;
    rt->next_host = 0;
    rt->tls = cl->tls;
    rt->auth = cl->auth;
    if (cl->service.http && !rt->http) {
        rt->http = pc_http_new(rt->loop, rt->log, &cl->http_tls);
        /* Lookups fail (lookup_http.c says why: libcurl missing, or out of memory); the
         * next switch tries again. */
        if (!rt->http)
            PC_ERROR(rt->log, "no HTTP client for the lookups of %s: %s", cl->url,
                     pulsarc_last_error_detail());
    }
}

/* A switch from TLS to plain text: whatever the client sends from now on, its credentials
 * included, crosses the network in clear. Said at every such switch (the URLs, never a
 * secret) and counted (PULSARC_STAT_TLS_DOWNGRADES); not refused, as the official
 * clients do not refuse it either (service_provider.h). */
static void left_tls(pc_runtime_t *rt, const pc_cluster_t *to, const char *from)
{
    rt->tls_downgrades++;
    PC_WARN(rt->log,
            "cluster failover: the switch from %s to %s leaves TLS: connections are "
            "not encrypted from now on%s",
            from, to->url, to->auth ? ", and neither are the credentials they present" : "");
    pc_auth_warn_cleartext(to->auth, 0, rt->log); /* what exactly goes in clear */
}

/* Make cluster i active: the runtime gets its service URL and credentials, then every
 * connection to the old one closes (producers look up again and land on the new one),
 * then those waiting to reconnect hear of it. from names the old one for the log, and
 * from_tls says whether it was pulsar+ssl:// or https://. */
static void switch_to(pc_service_provider_t *sp, int i, const char *from, bool from_tls,
                      const char *why)
{
    pc_runtime_t *rt = sp->rt;
    PC_WARN(rt->log, "cluster failover: switching from %s to %s (%s)", from, sp->clusters[i].url,
            why);
    if (from_tls && !sp->clusters[i].service.tls)
        left_tls(rt, &sp->clusters[i], from);
    /* Lookups still waiting on the old cluster's web service fail now (lookup_http.c
     * also drops any answer that comes after a switch). */
    pc_http_free(rt->http);
    rt->http = NULL;
    rt->cluster_switches++;
    install(sp, i);
    sp->down = false;
    sp->stranded = false;
    sp->primary_up = false;
    char detail[512];
    snprintf(detail, sizeof detail, "the client switched to cluster %s", sp->clusters[i].url);
    size_t closed = pc_pool_close_current(rt->pool, PULSARC_ERR_CONNECTION_CLOSED, detail);
    PC_INFO(rt->log, "cluster failover: %zu connection(s) to %s closed", closed, from);
    /* A listener must not unlisten another (service_provider.h), so next stays valid. */
    for (pc_cluster_listener_t *l = rt->cluster_listeners, *next; l; l = next) {
        next = l->next;
        l->on_switch(l);
    }
}

/* A switch the checks decided on, away from the active cluster. */
static void fail_over_to(pc_service_provider_t *sp, int i, const char *why)
{
    const pc_cluster_t *from = &sp->clusters[sp->active];
    switch_to(sp, i, from->url, from->service.tls, why);
}

static bool same_url(const pc_service_url_t *a, const pc_service_url_t *b)
{
    if (a->tls != b->tls || a->http != b->http || a->n_hosts != b->n_hosts)
        return false;
    for (int i = 0; i < a->n_hosts; i++)
        if (a->hosts[i].port != b->hosts[i].port || strcmp(a->hosts[i].host, b->hosts[i].host))
            return false;
    return true;
}

pulsarc_result pc_service_provider_use_url(pc_service_provider_t *sp, const char *url,
                                           struct pc_tls_ctx *tls)
{
    pc_service_url_t parsed;
    char err[256];
    if (pc_service_url_parse(url, &parsed, err, sizeof err) != 0)
        return pc_fail(PULSARC_ERR_INVALID_URL, "service URL \"%.200s\": %s", url, err);
    if (sp->rt->net.sni_proxy && !parsed.tls)
        return pc_fail(PULSARC_ERR_INVALID_URL,
                       "service URL \"%.200s\": the SNI proxy "
                       "(proxyServiceUrl) needs pulsar+ssl:// or https://",
                       url);
    pc_cluster_t *cl = &sp->clusters[0];
    if (tls && !sp->set.own_tls)
        sp->set.own_tls = tls;
    if (parsed.tls && !sp->set.own_tls)
        return pc_fail(PULSARC_ERR_INVALID_URL,
                       "service URL \"%.200s\" needs TLS, which the "
                       "client has no context for",
                       url);
    if (sp->active == 0 && same_url(&parsed, &cl->service))
        return PULSARC_OK;
    char *copy = strdup(url);
    if (!copy)
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    /* The runtime points at clusters[0]: replacing it in place is the switch's first
     * step (the active index stays 0). The old URL's text lives until it is logged. */
    char *old_url = sp->told_url;
    char from[512];
    snprintf(from, sizeof from, "%s", cl->url);
    bool from_tls = cl->service.tls;
    cl->service = parsed;
    cl->tls = parsed.tls ? sp->set.own_tls : NULL;
    cl->url = sp->told_url = copy;
    switch_to(sp, 0, from, from_tls, "the service URL was changed");
    free(old_url);
    return PULSARC_OK;
}

/* ---- the checks ----------------------------------------------------------------------- */

static void on_check(uv_timer_t *t);

static void check_done(pc_service_provider_t *sp)
{
    if (!sp->stopped && !sp->rt->stopping)
        uv_timer_start(&sp->timer, on_check, sp->set.check_interval_ms, 0);
}

/* Probe cluster i and continue in cb; without memory for a probe, this check ends. */
static void probe(pc_service_provider_t *sp, int i, pc_probe_cb cb)
{
    sp->probe = pc_probe_start(sp->rt->loop, &sp->clusters[i].service, sp->set.probe_timeout_ms, cb,
                               sp);
    if (!sp->probe)
        check_done(sp);
}

static void on_primary_probed(bool reachable, const char *detail, void *ctx)
{
    pc_service_provider_t *sp = ctx;
    sp->probe = NULL;
    uint64_t now = now_ms(sp);
    if (!reachable) {
        if (sp->primary_up)
            PC_INFO(sp->rt->log, "cluster failover: the primary %s is unreachable again (%s)",
                    sp->clusters[0].url, detail);
        sp->primary_up = false;
    } else {
        if (!sp->primary_up) {
            sp->primary_up = true;
            sp->up_since = now;
            PC_INFO(sp->rt->log,
                    "cluster failover: the primary %s is reachable again; "
                    "switching back after %llu ms",
                    sp->clusters[0].url, (unsigned long long)sp->set.switch_back_delay_ms);
        }
        if (now - sp->up_since >= sp->set.switch_back_delay_ms) {
            char why[96];
            snprintf(why, sizeof why, "the primary has been reachable for %llu ms",
                     (unsigned long long)(now - sp->up_since));
            fail_over_to(sp, 0, why);
        }
    }
    check_done(sp);
}

/* While a secondary is active, see whether the primary is back. */
static void check_primary(pc_service_provider_t *sp)
{
    if (sp->active == 0)
        check_done(sp);
    else
        probe(sp, 0, on_primary_probed);
}

static void scan_next(pc_service_provider_t *sp);

static void on_candidate_probed(bool reachable, const char *detail, void *ctx)
{
    pc_service_provider_t *sp = ctx;
    sp->probe = NULL;
    if (reachable) {
        char why[96];
        snprintf(why, sizeof why, "unreachable for %llu ms",
                 (unsigned long long)(now_ms(sp) - sp->down_since));
        fail_over_to(sp, sp->scan, why);
        check_done(sp);
        return;
    }
    PC_DEBUG(sp->rt->log, "cluster failover: %s is unreachable too (%s)",
             sp->clusters[sp->scan].url, detail);
    if (sp->scan == 0)
        sp->primary_up = false;
    sp->scan++;
    scan_next(sp);
}

/* The others, in order of preference (the primary first), until one answers. */
static void scan_next(pc_service_provider_t *sp)
{
    if (sp->scan == sp->active)
        sp->scan++;
    if (sp->scan < sp->n) {
        probe(sp, sp->scan, on_candidate_probed);
        return;
    }
    if (!sp->stranded)
        PC_WARN(sp->rt->log,
                "cluster failover: no other cluster is reachable either; "
                "staying on %s and probing on",
                sp->clusters[sp->active].url);
    sp->stranded = true;
    check_done(sp);
}

static void on_active_probed(bool reachable, const char *detail, void *ctx)
{
    pc_service_provider_t *sp = ctx;
    sp->probe = NULL;
    uint64_t now = now_ms(sp);
    if (reachable) {
        if (sp->down)
            PC_INFO(sp->rt->log, "cluster failover: %s is reachable again",
                    sp->clusters[sp->active].url);
        sp->down = false;
        sp->stranded = false;
    } else {
        if (!sp->down) {
            sp->down = true;
            sp->down_since = now;
            PC_WARN(sp->rt->log,
                    "cluster failover: %s is unreachable (%s); failing over after "
                    "%llu ms",
                    sp->clusters[sp->active].url, detail,
                    (unsigned long long)sp->set.failover_delay_ms);
        }
        if (now - sp->down_since >= sp->set.failover_delay_ms) {
            sp->scan = 0;
            scan_next(sp);
            return;
        }
    }
    check_primary(sp);
}

/* The asked form: the user's function names the service URL. */
static void ask(pc_service_provider_t *sp)
{
    char url[4096];
    url[0] = '\0';
    if (sp->set.ask(sp->set.ask_ctx, url, sizeof url) != 0)
        return;
    url[sizeof url - 1] = '\0';
    if (pc_service_provider_use_url(sp, url, NULL) != PULSARC_OK)
        PC_WARN(sp->rt->log, "the service URL provider's answer is not used: %s",
                pulsarc_last_error_detail());
}

static void on_check(uv_timer_t *t)
{
    pc_service_provider_t *sp = t->data;
    if (sp->stopped || sp->rt->stopping)
        return;
    if (sp->set.ask) {
        ask(sp);
        check_done(sp);
        return;
    }
    probe(sp, sp->active, on_active_probed);
}

/* ---- life ----------------------------------------------------------------------------- */

pc_service_provider_t *pc_service_provider_new(pc_runtime_t *rt, const pc_cluster_t *clusters,
                                               int n, const pc_service_settings_t *s)
{
    if (n < 1 || n > PC_MAX_CLUSTERS)
        return NULL;
    pc_service_provider_t *sp = calloc(1, sizeof *sp + (size_t)n * sizeof *clusters);
    if (!sp)
        return NULL;
    sp->rt = rt;
    sp->set = *s;
    sp->n = n;
    memcpy(sp->clusters, clusters, (size_t)n * sizeof *clusters);
    uv_timer_init(rt->loop, &sp->timer);
    sp->timer.data = sp;
    install(sp, 0);
    if (n > 1 || s->ask)
        uv_timer_start(&sp->timer, on_check, s->check_interval_ms, 0);
    return sp;
}

int pc_service_provider_active(const pc_service_provider_t *sp)
{
    return sp->active;
}

static void on_timer_closed(uv_handle_t *h)
{
    pc_service_provider_t *sp = h->data;
    free(sp->told_url);
    free(sp);
}

void pc_service_provider_stop(pc_service_provider_t *sp)
{
    if (!sp || sp->stopped)
        return;
    sp->stopped = true;
    pc_probe_cancel(sp->probe);
    sp->probe = NULL;
    uv_close((uv_handle_t *)&sp->timer, on_timer_closed);
}
