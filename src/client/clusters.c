/* Building the clusters of a client (clusters.h). */
#include "client/clusters.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth/auth.h"
#include "common/error.h"
#include "net/tls.h"

/* Keep s (owned from now on, even on failure). NULL when s is NULL. */
static const char *keep_string(pc_client_clusters_t *cl, char *s)
{
    if (!s)
        return NULL;
    if (cl->n_strings == (int)(sizeof cl->strings / sizeof cl->strings[0])) {
        free(s); /* cannot happen: three strings at most per cluster */
        return NULL;
    }
    cl->strings[cl->n_strings++] = s;
    return s;
}

static void keep_auth(pc_client_clusters_t *cl, struct pc_auth *a)
{
    if (a)
        cl->auths[cl->n_auths++] = a;
}

static void keep_tls(pc_client_clusters_t *cl, struct pc_tls_ctx *t)
{
    if (t)
        cl->tls_ctxs[cl->n_tls_ctxs++] = t;
}

/* A context of the client's own settings, whatever the first URL's scheme. */
static pulsarc_result own_tls_new(const pulsarc_client_config_t *conf, struct pc_tls_ctx **out)
{
    static const pc_service_url_t any_tls_url = { .tls = true };
    return pc_client_tls_new(conf, &any_tls_url, out);
}

static pulsarc_result add_cluster(pc_client_clusters_t *cl, char *url_text, const char *what,
                                  pc_cluster_t **out)
{
    const char *url = keep_string(cl, url_text);
    if (!url)
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    if (cl->n == PC_MAX_CLUSTERS)
        return pc_fail(PULSARC_ERR_INVALID_CONFIG, "more than %d failover clusters",
                       PC_MAX_CLUSTERS - 1);
    /* Grown one at a time: callers use *out before they add the next. */
    pc_cluster_t *list = realloc(cl->list, (size_t)(cl->n + 1) * sizeof *list);
    if (!list)
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    cl->list = list;
    pc_cluster_t *c = &list[cl->n];
    memset(c, 0, sizeof *c);
    char err[256];
    if (pc_service_url_parse(url, &c->service, err, sizeof err) != 0)
        return pc_fail(PULSARC_ERR_INVALID_URL, "%s \"%.200s\": %s", what, url, err);
    c->url = url;
    cl->n++;
    *out = c;
    return PULSARC_OK;
}

/* One URL of failoverSecondaryUrls: the secondary gets the client's credentials (its TLS
 * context comes later, once it is known whether any URL needs one). */
static pulsarc_result add_secondary(pc_client_clusters_t *cl, const pulsarc_client_config_t *conf,
                                    struct pc_auth *auth, const char *url, size_t len,
                                    bool *need_tls)
{
    char *copy = malloc(len + 1);
    if (!copy)
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    size_t k = 0;
    for (size_t i = 0; i < len; i++)
        if (url[i] != ' ') /* blanks around the commas between its hosts */
            copy[k++] = url[i];
    copy[k] = '\0';
    pc_cluster_t *c;
    pulsarc_result r = add_cluster(cl, copy, "failoverSecondaryUrls", &c);
    if (r != PULSARC_OK)
        return r;
    c->auth = auth;
    pc_client_http_tls(conf, &c->http_tls);
    *need_tls |= c->service.tls;
    return PULSARC_OK;
}

/* failoverSecondaryUrls, split at its commas: a piece with a scheme starts a URL, a piece
 * without one is another host of the URL before it ("pulsar://a,b,pulsar://c" is two). */
static pulsarc_result add_secondaries(pc_client_clusters_t *cl, const pulsarc_client_config_t *conf,
                                      struct pc_auth *auth, bool *need_tls)
{
    const char *list = conf->failover_secondary_urls;
    if (!list)
        return PULSARC_OK;
    const char *url = NULL; /* the URL being gathered, and its end */
    const char *url_end = NULL;
    for (const char *p = list; *p;) {
        size_t n = strcspn(p, ",");
        const char *piece = p, *piece_end = p + n;
        p = *piece_end ? piece_end + 1 : piece_end;
        while (piece < piece_end && *piece == ' ')
            piece++;
        while (piece_end > piece && piece_end[-1] == ' ')
            piece_end--;
        if (piece == piece_end)
            continue;
        const char *scheme = strstr(piece, "://");
        if (!scheme || scheme >= piece_end) {
            if (!url)
                return pc_fail(PULSARC_ERR_INVALID_URL,
                               "failoverSecondaryUrls: \"%.*s\" is "
                               "not a service URL",
                               (int)(piece_end - piece), piece);
            url_end = piece_end; /* one more host */
            continue;
        }
        if (url) {
            pulsarc_result r = add_secondary(cl, conf, auth, url, (size_t)(url_end - url),
                                             need_tls);
            if (r != PULSARC_OK)
                return r;
        }
        url = piece;
        url_end = piece_end;
    }
    if (!url)
        return pc_fail(PULSARC_ERR_INVALID_URL, "failoverSecondaryUrls names no service URL");
    return add_secondary(cl, conf, auth, url, (size_t)(url_end - url), need_tls);
}

/* The clusters added with their own credentials and trust. */
static pulsarc_result add_own_clusters(pc_client_clusters_t *cl, pulsarc_client_config_t *conf)
{
    for (size_t i = 0; i < conf->n_failover_clusters; i++) {
        const pc_failover_cluster_t *fc = &conf->failover_clusters[i];
        char *url = strdup(fc->url);
        pc_cluster_t *c = NULL;
        pulsarc_result r = url ? add_cluster(cl, url, "failover cluster", &c)
                               : pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
        if (r != PULSARC_OK)
            return r;
        pc_auth_tls_files_t files = { 0 };
        r = pc_cluster_config_auth(fc, conf->clock, &c->auth, &files);
        keep_auth(cl, c->auth);
        const char *cert = keep_string(cl, files.cert_file);
        const char *key = keep_string(cl, files.key_file);
        if (r != PULSARC_OK)
            return r;
        if (c->service.tls) {
            r = pc_cluster_tls_new(conf, fc->tls_trust_certs_file, cert, key, &c->tls);
            keep_tls(cl, c->tls);
            if (r != PULSARC_OK) {
                char detail[512];
                snprintf(detail, sizeof detail, "%s", pulsarc_last_error_detail());
                return pc_fail(r, "failover cluster %.200s: %s", c->url, detail);
            }
        }
        /* The trust file's string lives in conf, which lives as long as the client. */
        pc_cluster_http_tls(conf, fc->tls_trust_certs_file, cert, key, &c->http_tls);
    }
    return PULSARC_OK;
}

/* The clusters' secrets leave the client's copy of the configuration: the providers hold
 * what they need. */
static void drop_cluster_secrets(pulsarc_client_config_t *conf)
{
    for (size_t i = 0; i < conf->n_failover_clusters; i++) {
        pc_auth_secret_free(conf->failover_clusters[i].auth_params);
        conf->failover_clusters[i].auth_params = NULL;
    }
}

static pulsarc_result build(pulsarc_client_config_t *conf, const char *url,
                            pc_client_clusters_t *cl)
{
    char *copy = strdup(url);
    pc_cluster_t *primary;
    pulsarc_result r = copy ? add_cluster(cl, copy, "service URL", &primary)
                            : pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    if (r != PULSARC_OK)
        return r;
    /* First the client's credentials: a tls plugin may name the client certificate. */
    struct pc_auth *auth = NULL;
    r = pc_client_config_auth(conf, &auth);
    keep_auth(cl, auth);
    if (r != PULSARC_OK)
        return r;
    primary->auth = auth;
    pc_client_http_tls(conf, &primary->http_tls);
    /* With a provider, any later URL may want TLS: the context is there from the start. */
    bool need_tls = primary->service.tls || conf->service_url_provider;
    if ((r = add_secondaries(cl, conf, auth, &need_tls)) != PULSARC_OK)
        return r;
    int own = cl->n; /* [0, own) use the client's own TLS settings */
    if (need_tls) {
        struct pc_tls_ctx *tls;
        if ((r = own_tls_new(conf, &tls)) != PULSARC_OK)
            return r;
        keep_tls(cl, tls);
        cl->own_tls = tls;
        for (int i = 0; i < own; i++)
            if (cl->list[i].service.tls)
                cl->list[i].tls = tls;
    }
    if ((r = add_own_clusters(cl, conf)) != PULSARC_OK)
        return r;
    if (conf->service_url_provider && cl->n > 1)
        return pc_fail(PULSARC_ERR_INVALID_CONFIG,
                       "a service URL provider and failover "
                       "clusters do not go together: the provider decides the cluster");
    return PULSARC_OK;
}

pulsarc_result pc_client_clusters_build(pulsarc_client_config_t *conf, const char *url,
                                        pc_client_clusters_t *out)
{
    memset(out, 0, sizeof *out);
    atomic_init(&out->late_tls, NULL);
    pulsarc_result r = build(conf, url, out);
    drop_cluster_secrets(conf);
    if (r != PULSARC_OK)
        pc_client_clusters_free(out);
    return r;
}

void pc_client_clusters_warn(const pc_client_clusters_t *cl, const pc_logger_t *log)
{
    for (int i = 0; i < cl->n; i++) {
        const pc_cluster_t *c = &cl->list[i];
        bool told = false; /* the same provider over the same kind of URL before */
        for (int j = 0; j < i && !told; j++)
            told = cl->list[j].auth == c->auth && cl->list[j].service.tls == c->service.tls;
        if (!told)
            pc_auth_warn_cleartext(c->auth, c->service.tls, log);
    }
}

pulsarc_result pc_client_clusters_use_http(const pc_client_clusters_t *cl,
                                           const pulsarc_client_config_t *conf,
                                           const pc_runtime_t *rt)
{
    for (int i = 0; i < cl->n_auths; i++) {
        pulsarc_result r = pc_client_auth_http(conf, rt, cl->auths[i]);
        if (r != PULSARC_OK)
            return r;
    }
    return PULSARC_OK;
}

void pc_client_clusters_detach_http(const pc_client_clusters_t *cl)
{
    for (int i = 0; i < cl->n_auths; i++)
        pc_auth_use_http(cl->auths[i], NULL);
}

void pc_client_clusters_free(pc_client_clusters_t *cl)
{
    for (int i = 0; i < cl->n_auths; i++)
        pc_auth_free(cl->auths[i]);
    for (int i = 0; i < cl->n_tls_ctxs; i++)
        pc_client_tls_free(cl->tls_ctxs[i]);
    pc_client_tls_free(atomic_load(&cl->late_tls));
    for (int i = 0; i < cl->n_strings; i++)
        free(cl->strings[i]);
    free(cl->list);
    memset(cl, 0, sizeof *cl);
}

pulsarc_result pc_client_clusters_own_tls(pc_client_clusters_t *cl,
                                          const pulsarc_client_config_t *conf,
                                          struct pc_tls_ctx **out)
{
    if (cl->own_tls) {
        *out = cl->own_tls;
        return PULSARC_OK;
    }
    struct pc_tls_ctx *t = atomic_load(&cl->late_tls);
    if (!t) {
        pulsarc_result r = own_tls_new(conf, &t);
        if (r != PULSARC_OK)
            return r;
        struct pc_tls_ctx *expected = NULL;
        if (!atomic_compare_exchange_strong(&cl->late_tls, &expected, t)) {
            pc_client_tls_free(t); /* another thread was first */
            t = expected;
        }
    }
    *out = t;
    return PULSARC_OK;
}
