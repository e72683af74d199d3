/* Authentication in the client configuration: the typed setters of the public API, which
 * write authPlugin + authParams in the official formats (so that one path, and one
 * masking rule, serves both ways of configuring), and the provider built from them when
 * the client is created. */
#include "config/config.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth/auth.h"
#include "auth/auth_plugin.h"
#include "auth/secret_json.h"
#include "common/error.h"
#include "net/http.h"
#include "net/runtime.h"

/* Replace plugin and params; params is taken over (wiped when replaced). */
static pulsarc_result set_auth(pulsarc_client_config_t *conf, const char *plugin, char *params)
{
    char *p = strdup(plugin);
    if (!p) {
        pc_auth_secret_free(params);
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    }
    free(conf->auth_plugin);
    pc_auth_secret_free(conf->auth_params);
    conf->auth_plugin = p;
    conf->auth_params = params;
    conf->auth_token_supplier = NULL;
    conf->auth_token_supplier_ctx = NULL;
    pc_auth_custom_unref(conf->auth_custom);
    conf->auth_custom = NULL;
    return PULSARC_OK;
}

static pulsarc_result set_prefixed(pulsarc_client_config_t *conf, const char *prefix,
                                   const char *value, const char *what)
{
    if (!conf || !value || !*value)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT, "config and %s must be given", what);
    size_t n = strlen(prefix) + strlen(value) + 1;
    char *params = malloc(n);
    if (!params)
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    memcpy(params, prefix, strlen(prefix));
    memcpy(params + strlen(prefix), value, strlen(value) + 1);
    return set_auth(conf, "token", params);
}

/* {"k1":"v1","k2":"v2"} through jansson, so quotes and backslashes are escaped right. */
static pulsarc_result set_json_pair(pulsarc_client_config_t *conf, const char *plugin,
                                    const char *k1, const char *v1, const char *k2, const char *v2)
{
    pc_secret_json_init(); /* a value may be a password: jansson's copies are wiped */
    json_t *o = json_pack("{s:s,s:s}", k1, v1, k2, v2);
    char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    if (!text)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT, "the values must be UTF-8 text");
    return set_auth(conf, plugin, text);
}

pulsarc_result pulsarc_client_config_set_auth_token(pulsarc_client_config_t *conf,
                                                    const char *token)
{
    return set_prefixed(conf, "token:", token, "token");
}

pulsarc_result pulsarc_client_config_set_auth_token_file(pulsarc_client_config_t *conf,
                                                         const char *path)
{
    /* "file:" + "/abs" reads as a path; file:// would need the path to be absolute. */
    return set_prefixed(conf, "file:", path, "path");
}

pulsarc_result pulsarc_client_config_set_auth_token_env(pulsarc_client_config_t *conf,
                                                        const char *name)
{
    return set_prefixed(conf, "env:", name, "variable name");
}

pulsarc_result pulsarc_client_config_set_auth_token_supplier(pulsarc_client_config_t *conf,
                                                             pulsarc_token_supplier_cb cb,
                                                             void *ctx)
{
    if (!conf || !cb)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT, "config and callback must not be NULL");
    pulsarc_result r = set_auth(conf, "token", NULL);
    if (r == PULSARC_OK) {
        conf->auth_token_supplier = cb;
        conf->auth_token_supplier_ctx = ctx;
    }
    return r;
}

pulsarc_result pulsarc_client_config_set_auth_basic(pulsarc_client_config_t *conf, const char *user,
                                                    const char *password)
{
    if (!conf || !user || !*user || !password)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT, "config, user and password must be given");
    if (strchr(user, ':'))
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT, "the user name must not contain ':'");
    return set_json_pair(conf, "basic", "userId", user, "password", password);
}

pulsarc_result pulsarc_client_config_set_auth_tls(pulsarc_client_config_t *conf,
                                                  const char *cert_file, const char *key_file)
{
    if (!conf || !cert_file || !*cert_file || !key_file || !*key_file)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT,
                       "config, certificate and key file must be given");
    return set_json_pair(conf, "tls", "tlsCertFile", cert_file, "tlsKeyFile", key_file);
}

pulsarc_result pulsarc_client_config_set_auth_provider(pulsarc_client_config_t *conf,
                                                       const pulsarc_auth_provider_t *provider,
                                                       size_t size, void *ctx)
{
    if (!conf || !provider)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT, "config and provider must not be NULL");
    pc_auth_custom_t *cu;
    pulsarc_result r = pc_auth_custom_new(provider, size, ctx, &cu);
    if (r != PULSARC_OK)
        return r;
    /* Shown in dumps as authPlugin: the method, nothing of ctx. */
    char plugin[80];
    snprintf(plugin, sizeof plugin, "%s%s", PC_AUTH_CUSTOM_PREFIX, pc_auth_custom_method(cu));
    r = set_auth(conf, plugin, NULL);
    if (r != PULSARC_OK) {
        pc_auth_custom_unref(cu);
        return r;
    }
    conf->auth_custom = cu;
    return PULSARC_OK;
}

/* The custom provider, while authPlugin is still the one its setter wrote; NULL when the
 * key was set since (the key wins, as with any later setter). */
static pc_auth_custom_t *custom_in_effect(const pulsarc_client_config_t *c)
{
    if (!c->auth_custom || !c->auth_plugin ||
        strncmp(c->auth_plugin, PC_AUTH_CUSTOM_PREFIX, strlen(PC_AUTH_CUSTOM_PREFIX)) != 0 ||
        strcmp(c->auth_plugin + strlen(PC_AUTH_CUSTOM_PREFIX),
               pc_auth_custom_method(c->auth_custom)))
        return NULL;
    return c->auth_custom;
}

/* A tls plugin's certificate becomes the TLS client certificate, unless the TLS settings
 * name one themselves (the more specific setting wins). */
static void adopt_tls_files(pulsarc_client_config_t *c, pc_auth_tls_files_t *f)
{
    if (f->cert_file && !c->tls_cert_file && !c->tls_key_file) {
        c->tls_cert_file = f->cert_file;
        c->tls_key_file = f->key_file;
        f->cert_file = f->key_file = NULL;
    }
    pc_auth_tls_files_clear(f);
}

pulsarc_result pc_client_config_auth(pulsarc_client_config_t *c, struct pc_auth **out)
{
    pc_auth_custom_t *cu = custom_in_effect(c);
    if (cu) {
        pc_auth_secret_free(c->auth_params);
        c->auth_params = NULL;
        return pc_auth_custom(cu, out);
    }
    pc_auth_config_t in = {
        .plugin = c->auth_plugin,
        .params = c->auth_params,
        .supplier = c->auth_token_supplier,
        .supplier_ctx = c->auth_token_supplier_ctx,
        .tls_cert_file = c->tls_cert_file,
        .tls_key_file = c->tls_key_file,
        .clock = c->clock,
    };
    pc_auth_tls_files_t files;
    pulsarc_result r = pc_auth_from_config(&in, out, &files);
    if (r == PULSARC_OK)
        adopt_tls_files(c, &files);
    /* The provider holds what it needs of the secret now: this copy goes, so that the
     * client's memory holds one copy of the credentials, not two. */
    pc_auth_secret_free(c->auth_params);
    c->auth_params = NULL;
    return r;
}

pulsarc_result pc_cluster_config_auth(const pc_failover_cluster_t *fc, const pc_clock_t *clock,
                                      struct pc_auth **out, pc_auth_tls_files_t *files)
{
    /* Only what was given for this cluster: its own provider, or its plugin without a
     * supplier and without the client certificate of the client's TLS settings (a tls
     * plugin without files of its own has no identity). */
    pulsarc_result r;
    if (fc->auth_custom) {
        *files = (pc_auth_tls_files_t){ 0 };
        r = pc_auth_custom(fc->auth_custom, out);
    } else {
        pc_auth_config_t in = {
            .plugin = fc->auth_plugin,
            .params = fc->auth_params,
            .clock = clock,
        };
        r = pc_auth_from_config(&in, out, files);
    }
    if (r != PULSARC_OK) {
        char detail[512];
        snprintf(detail, sizeof detail, "%s", pulsarc_last_error_detail());
        return pc_fail(r, "failover cluster %.200s: %s", fc->url, detail);
    }
    return PULSARC_OK;
}

/* ---- the HTTP client of a provider that needs one (OAuth2) ------------------------- */

static int auth_http_get(void *h, const char *url, uint64_t timeout_ms, pc_auth_http_done_cb done,
                         void *ctx)
{
    return pc_http_get(h, url, NULL, timeout_ms, done, ctx);
}

static int auth_http_post(void *h, const char *url, const char *form, uint64_t timeout_ms,
                          pc_auth_http_done_cb done, void *ctx)
{
    return pc_http_post_form(h, url, form, timeout_ms, done, ctx);
}

static void auth_http_release(void *h)
{
    pc_http_free(h);
}

pulsarc_result pc_client_auth_http(const pulsarc_client_config_t *c, const pc_runtime_t *rt,
                                   struct pc_auth *auth)
{
    if (!pc_auth_wants_http(auth))
        return PULSARC_OK;
    if (rt->transport && rt->transport->auth_http) {
        pc_auth_http_t fake;
        if (rt->transport->auth_http(rt->transport->ctx, rt->loop, &fake) != 0)
            return pc_fail(PULSARC_ERR_NO_MEMORY, "the test's HTTP table failed");
        pc_auth_use_http(auth, &fake);
        return PULSARC_OK;
    }
    pc_http_tls_t tls;
    pulsarc_result r = pc_client_issuer_http_tls(c, pc_auth_http_trust_file(auth), &tls);
    if (r != PULSARC_OK)
        return r;
    pc_http_t *h = pc_http_new(rt->loop, rt->log, &tls);
    if (!h) {
        char detail[600]; /* libcurl missing (the library and the loader's reason), or memory */
        snprintf(detail, sizeof detail, "%s", pulsarc_last_error_detail());
        pulsarc_result why = pc_http_unavailable();
        return pc_fail(why != PULSARC_OK ? why : PULSARC_ERR_NO_MEMORY,
                       "cannot create the HTTP client for OAuth2: %s", detail);
    }
    pc_auth_http_t table = {
        .get = auth_http_get,
        .post_form = auth_http_post,
        .release = auth_http_release,
        .h = h,
        .timeout_ms = (uint64_t)c->connection_timeout_ms,
    };
    pc_auth_use_http(auth, &table);
    return PULSARC_OK;
}
