/* The clusters a client can talk to, built from its configuration when it is created:
 * [0] the service URL given to pulsarc_client_new, with the client's own authentication
 * and TLS; then failoverSecondaryUrls' URLs, with the same; then the clusters added with
 * pulsarc_client_config_add_failover_cluster, each with only its own credentials. The
 * list goes to net/service_provider.h, which switches between them; this owns what the
 * clusters point to (providers, TLS contexts, strings) for the client's lifetime.
 * @locality the thread creating or destroying the client, except where said. */
#ifndef PC_CLIENT_CLUSTERS_H
#define PC_CLIENT_CLUSTERS_H

#include <stdatomic.h>

#include "config/config.h"
#include "net/runtime.h"
#include "net/service_provider.h"

typedef struct pc_client_clusters {
    pc_cluster_t *list; /* n of them, at most PC_MAX_CLUSTERS (allocated: each is over
                           4 KiB, and most clients have one) */
    int n;
    /* What this owns. */
    struct pc_auth *auths[PC_MAX_CLUSTERS];
    int n_auths;
    struct pc_tls_ctx *tls_ctxs[PC_MAX_CLUSTERS + 1];
    int n_tls_ctxs;
    char *strings[3 * PC_MAX_CLUSTERS]; /* URLs, a tls plugin's certificate files */
    int n_strings;
    /* The client's own TLS settings' context, when a URL needed it at creation (or a
     * service URL provider may give one later); also in the clusters that use it. */
    struct pc_tls_ctx *own_tls;
    /* The same, for a pulsar+ssl:// URL given later
     * (pulsarc_client_update_service_url) when none was needed at creation. */
    _Atomic(struct pc_tls_ctx *) late_tls;
} pc_client_clusters_t;

/* Build every cluster of conf (the client's own copy: the secrets in it, authParams and
 * the clusters' auth_params, are wiped and dropped once the providers hold them, whatever
 * the outcome). url is the service URL's text. On failure nothing is left to free; the
 * detail says which setting failed. */
pulsarc_result pc_client_clusters_build(pulsarc_client_config_t *conf, const char *url,
                                        pc_client_clusters_t *out);
/* Warn of credentials that would cross the network in clear text (each cluster's, once
 * per provider and scheme). */
void pc_client_clusters_warn(const pc_client_clusters_t *cl, const pc_logger_t *log);
/* Once the runtime has its loop: providers that need HTTP (OAuth2) get their client. */
pulsarc_result pc_client_clusters_use_http(const pc_client_clusters_t *cl,
                                           const pulsarc_client_config_t *conf,
                                           const pc_runtime_t *rt);
/* At shutdown, on the loop while it runs: the providers let their HTTP clients go. */
void pc_client_clusters_detach_http(const pc_client_clusters_t *cl);
/* After the loop has stopped. */
void pc_client_clusters_free(pc_client_clusters_t *cl);
/* The TLS context of the client's own settings, for a pulsar+ssl:// URL that replaces the
 * service URL: the one built at creation, else one built now (once; any thread). */
pulsarc_result pc_client_clusters_own_tls(pc_client_clusters_t *cl,
                                          const pulsarc_client_config_t *conf,
                                          struct pc_tls_ctx **out);

#endif
