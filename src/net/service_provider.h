/* Which cluster the client talks to, and the switch from one to another (cluster
 * failover, as the Java client's AutoClusterFailover and the C++ client's
 * ServiceInfoProvider do it).
 *
 * A cluster is a service URL with the credentials and trust for it (the C++ client's
 * ServiceInfo). The provider installs the active one into the runtime context
 * (rt->service, rt->tls, rt->auth, rt->http) and keeps it there; a switch replaces all of
 * them at once and then closes every connection through the pool, so that each producer
 * takes its usual path: connection lost, look up again (now on the new cluster),
 * register, resend what is pending in order. There is no second reconnect path.
 *
 * Three ways a switch comes about:
 *   automatic   several clusters, [0] the primary and the others in order of preference:
 *               every check_interval_ms the active cluster is probed (net/probe.h, a TCP
 *               connect). Unreachable for failover_delay_ms: the first reachable of the
 *               others (primary first) becomes active. While a secondary is active, the
 *               primary is probed too; reachable for switch_back_delay_ms: back to it.
 *   asked       the user's function (ask) gives the service URL at every check; a new
 *               one becomes active, with the credentials and trust of clusters[0].
 *   told        pc_service_provider_use_url (the public pulsarc_client_update_service_url).
 *
 * A switch from a TLS cluster to a plain-text one is logged at WARN and counted
 * (rt->tls_downgrades), never refused (pulsarc.h, "Cluster failover", says why).
 *
 * Delays are measured on rt->clock (a test's fake clock decides when they have passed);
 * the check timer runs on real time. A message in flight at a switch may be stored by
 * both clusters: deduplication does not span clusters.
 * @locality loop thread. */
#ifndef PC_SERVICE_PROVIDER_H
#define PC_SERVICE_PROVIDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "net/http.h"
#include "net/runtime.h"
#include "net/service_url.h"

struct pc_tls_ctx;
struct pc_auth;

/* One cluster. Pointers are borrowed: they must outlive the provider. */
typedef struct pc_cluster {
    const char *url;          /* as the user wrote it, for log lines (never a secret) */
    pc_service_url_t service; /* where lookups start */
    struct pc_tls_ctx *tls;   /* connections' TLS; NULL: plain TCP */
    struct pc_auth *auth;     /* what connections present; NULL: nothing */
    pc_http_tls_t http_tls;   /* for http(s):// lookups: how the web service is verified
                                 and the client certificate shown to it */
} pc_cluster_t;

/* The user's provider: write the service URL (NUL-terminated) into buf and return 0, or
 * return nonzero to keep the current one. Called on the loop thread. */
typedef int (*pc_service_ask_fn)(void *ctx, char *buf, size_t len);

typedef struct pc_service_settings {
    uint64_t check_interval_ms;
    uint64_t failover_delay_ms;    /* the active cluster unreachable this long: switch */
    uint64_t switch_back_delay_ms; /* the primary reachable this long again: back to it */
    uint64_t probe_timeout_ms;     /* one probe's TCP connect */
    pc_service_ask_fn ask;         /* set: the asked form (one cluster, no probes) */
    void *ask_ctx;
    struct pc_tls_ctx *own_tls; /* for a pulsar+ssl:// URL asked for or told later, with
                                      clusters[0]'s credentials; NULL: none yet */
} pc_service_settings_t;

typedef struct pc_service_provider pc_service_provider_t;

/* Take the clusters (copied; n >= 1, at most PC_MAX_CLUSTERS), install clusters[0] into
 * rt (an http(s):// one gets its HTTP client), and start checking when there is more
 * than one cluster or an ask function. NULL when out of memory. */
#define PC_MAX_CLUSTERS 17
pc_service_provider_t *pc_service_provider_new(pc_runtime_t *rt, const pc_cluster_t *clusters,
                                               int n, const pc_service_settings_t *s);
/* Make url the service URL, with clusters[0]'s credentials and, for a pulsar+ssl:// or
 * https:// URL, the own_tls context (tls, when given, becomes it: the caller built one
 * for such a URL where none was needed before; it must outlive the provider). A URL
 * equal to the active one changes nothing. PULSARC_ERR_INVALID_URL (detail set) when it
 * does not parse or needs TLS without a context. */
pulsarc_result pc_service_provider_use_url(pc_service_provider_t *sp, const char *url,
                                           struct pc_tls_ctx *tls);
/* The active cluster's index (0: the primary, or the only one). */
int pc_service_provider_active(const pc_service_provider_t *sp);
/* The client stops: no more checks or switches; the memory goes once the timer and the
 * probe in flight have closed (the loop must still run). The runtime keeps the active
 * cluster's service, tls and auth; rt->http stays the caller's to free. */
void pc_service_provider_stop(pc_service_provider_t *sp);

/* ---- who hears of a switch ------------------------------------------------------------ */

/* Told after a switch has closed the old cluster's connections, on the loop thread: a
 * producer waiting to reconnect tries the new cluster at once instead of at the end of
 * a backoff that grew against the old one. Embed it; it must not unlisten others. */
typedef struct pc_cluster_listener {
    struct pc_cluster_listener *next, *prev;
    void (*on_switch)(struct pc_cluster_listener *l);
} pc_cluster_listener_t;

void pc_cluster_listen(pc_runtime_t *rt, pc_cluster_listener_t *l);
/* No-op when l is not listening. */
void pc_cluster_unlisten(pc_runtime_t *rt, pc_cluster_listener_t *l);

#endif
