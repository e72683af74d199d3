/* Cluster failover in the client configuration: the typed API beside the failover* keys
 * (clusters with their own credentials, plugin or custom provider, the user's service URL
 * provider) and the clusters' share of copying, clearing and dumping a configuration.
 * What a client builds from all this is in clusters.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth/auth.h"
#include "auth/auth_plugin.h"
#include "config/config.h"
#include "common/error.h"
#include "net/service_provider.h"
#include "net/service_url.h"

static void cluster_clear(pc_failover_cluster_t *fc)
{
    free(fc->url);
    free(fc->auth_plugin);
    pc_auth_secret_free(fc->auth_params);
    free(fc->tls_trust_certs_file);
    pc_auth_custom_unref(fc->auth_custom);
    memset(fc, 0, sizeof *fc);
}

/* Each field becomes a copy or NULL, so clearing after a failure stays safe. */
static int dup_or_null(char **dst, const char *src)
{
    *dst = src ? strdup(src) : NULL;
    return src && !*dst ? -1 : 0;
}

static int cluster_copy(pc_failover_cluster_t *dst, const pc_failover_cluster_t *src)
{
    int rc = dup_or_null(&dst->url, src->url);
    rc |= dup_or_null(&dst->auth_plugin, src->auth_plugin);
    rc |= dup_or_null(&dst->auth_params, src->auth_params);
    rc |= dup_or_null(&dst->tls_trust_certs_file, src->tls_trust_certs_file);
    pc_auth_custom_ref(src->auth_custom);
    dst->auth_custom = src->auth_custom;
    return rc;
}

pulsarc_result pulsarc_client_config_add_failover_cluster(pulsarc_client_config_t *conf,
                                                          const char *service_url,
                                                          const char *auth_plugin,
                                                          const char *auth_params,
                                                          const char *tls_trust_certs_file)
{
    if (!conf || !service_url)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT, "config and service URL must be given");
    if (auth_params && !auth_plugin)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT,
                       "auth_params without auth_plugin: name the plugin they are for");
    pc_service_url_t parsed;
    char err[256];
    if (pc_service_url_parse(service_url, &parsed, err, sizeof err) != 0)
        return pc_fail(PULSARC_ERR_INVALID_URL, "failover cluster \"%.200s\": %s", service_url,
                       err);
    pc_auth_kind_t kind;
    if (auth_plugin && pc_auth_kind_from_name(auth_plugin, &kind) != PULSARC_OK)
        return PULSARC_ERR_INVALID_CONFIG; /* the detail names the plugin */
    if (conf->n_failover_clusters + 1 >= PC_MAX_CLUSTERS)
        return pc_fail(PULSARC_ERR_INVALID_CONFIG, "at most %d failover clusters",
                       PC_MAX_CLUSTERS - 1);
    pc_failover_cluster_t *grown = realloc(conf->failover_clusters,
                                           (conf->n_failover_clusters + 1) * sizeof *grown);
    if (!grown)
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    conf->failover_clusters = grown;
    pc_failover_cluster_t given = {
        .url = (char *)service_url,
        .auth_plugin = (char *)auth_plugin,
        .auth_params = (char *)auth_params,
        .tls_trust_certs_file = (char *)tls_trust_certs_file,
    };
    pc_failover_cluster_t *fc = &grown[conf->n_failover_clusters];
    if (cluster_copy(fc, &given) != 0) {
        cluster_clear(fc);
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    }
    conf->n_failover_clusters++;
    return PULSARC_OK;
}

/* The cluster added last with this service URL, or NULL. */
static pc_failover_cluster_t *cluster_of_url(pulsarc_client_config_t *conf, const char *url)
{
    for (size_t i = conf->n_failover_clusters; i-- > 0;)
        if (!strcmp(conf->failover_clusters[i].url, url))
            return &conf->failover_clusters[i];
    return NULL;
}

pulsarc_result pulsarc_client_config_set_failover_cluster_auth_provider(
    pulsarc_client_config_t *conf, const char *service_url, const pulsarc_auth_provider_t *provider,
    size_t size, void *ctx)
{
    if (!provider)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT, "provider must not be NULL");
    /* Handed over from here on: each failure below lets go of it, so its free runs. */
    pc_auth_custom_t *cu;
    pulsarc_result r = pc_auth_custom_new(provider, size, ctx, &cu);
    if (r != PULSARC_OK)
        return r;
    pc_failover_cluster_t *fc = conf && service_url ? cluster_of_url(conf, service_url) : NULL;
    char plugin[80]; /* shown in dumps: the method, nothing of ctx */
    snprintf(plugin, sizeof plugin, "%s%s", PC_AUTH_CUSTOM_PREFIX, pc_auth_custom_method(cu));
    char *copy = fc ? strdup(plugin) : NULL;
    if (!copy) {
        pc_auth_custom_unref(cu);
        if (!conf || !service_url)
            return pc_fail(PULSARC_ERR_INVALID_ARGUMENT, "config and service URL must be given");
        if (!fc)
            return pc_fail(PULSARC_ERR_INVALID_ARGUMENT,
                           "no failover cluster was added with service URL \"%.200s\" "
                           "(pulsarc_client_config_add_failover_cluster first)",
                           service_url);
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    }
    free(fc->auth_plugin);
    pc_auth_secret_free(fc->auth_params);
    pc_auth_custom_unref(fc->auth_custom);
    fc->auth_plugin = copy;
    fc->auth_params = NULL;
    fc->auth_custom = cu;
    return PULSARC_OK;
}

pulsarc_result pulsarc_client_config_set_service_url_provider(pulsarc_client_config_t *conf,
                                                              pulsarc_service_url_provider_cb cb,
                                                              void *ctx)
{
    if (!conf)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT, "config must not be NULL");
    conf->service_url_provider = cb;
    conf->service_url_provider_ctx = cb ? ctx : NULL;
    return PULSARC_OK;
}

int pc_client_config_copy_failover(pulsarc_client_config_t *dst, const pulsarc_client_config_t *src)
{
    size_t n = src->n_failover_clusters;
    dst->failover_clusters = NULL;
    dst->n_failover_clusters = 0;
    if (n == 0)
        return 0;
    pc_failover_cluster_t *list = calloc(n, sizeof *list);
    if (!list)
        return -1;
    dst->failover_clusters = list;
    dst->n_failover_clusters = n;
    int rc = 0;
    for (size_t i = 0; i < n; i++)
        rc |= cluster_copy(&list[i], &src->failover_clusters[i]);
    return rc;
}

void pc_client_config_clear_failover(pulsarc_client_config_t *c)
{
    for (size_t i = 0; i < c->n_failover_clusters; i++)
        cluster_clear(&c->failover_clusters[i]);
    free(c->failover_clusters);
    c->failover_clusters = NULL;
    c->n_failover_clusters = 0;
}

size_t pc_client_config_dump_failover(const pulsarc_client_config_t *c, char *buf, size_t len)
{
    size_t used = 0;
    for (size_t i = 0; i < c->n_failover_clusters; i++) {
        const pc_failover_cluster_t *fc = &c->failover_clusters[i];
        const char *trust = fc->tls_trust_certs_file ? fc->tls_trust_certs_file : "";
        /* No buffer, or a full one: only counted (a NULL destination always with 0 room,
         * which GCC's format checks can see). */
        char *dst = buf && used < len ? buf + used : NULL;
        int w = snprintf(dst, dst ? len - used : 0,
                         "failoverCluster.%zu.serviceUrl=%s\n"
                         "failoverCluster.%zu.authPlugin=%s\n"
                         "failoverCluster.%zu.authParams=%s\n"
                         "failoverCluster.%zu.tlsTrustCertsFilePath=%s\n",
                         i, fc->url, i, fc->auth_plugin ? fc->auth_plugin : "", i,
                         fc->auth_params ? "<set, not shown>" : "", i, trust);
        if (w > 0)
            used += (size_t)w;
    }
    return used;
}
