/* Plugin names and parameter formats (see auth_plugin.h), mapped to providers. */
#include "auth/auth_plugin.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "auth/auth_params.h"
#include "common/error.h"

#define JAVA_AUTH "org.apache.pulsar.client.impl.auth."

static const struct {
    const char *short_name;
    const char *class_name;
    pc_auth_kind_t kind;
} plugins[] = {
    { "token", JAVA_AUTH "AuthenticationToken", PC_AUTH_TOKEN },
    { "tls", JAVA_AUTH "AuthenticationTls", PC_AUTH_TLS },
    { "basic", JAVA_AUTH "AuthenticationBasic", PC_AUTH_BASIC },
    { "oauth2", JAVA_AUTH "oauth2.AuthenticationOAuth2", PC_AUTH_OAUTH2 },
    { "sasl", JAVA_AUTH "AuthenticationSasl", PC_AUTH_SASL },
};

pulsarc_result pc_auth_kind_from_name(const char *name, pc_auth_kind_t *out)
{
    for (size_t i = 0; i < sizeof plugins / sizeof plugins[0]; i++) {
        if (!strcasecmp(name, plugins[i].short_name) || !strcmp(name, plugins[i].class_name)) {
            *out = plugins[i].kind;
            return PULSARC_OK;
        }
    }
    if (!strncmp(name, PC_AUTH_CUSTOM_PREFIX, strlen(PC_AUTH_CUSTOM_PREFIX)))
        return pc_fail(PULSARC_ERR_INVALID_CONFIG,
                       "authPlugin \"%s\" names a custom provider, which only "
                       "pulsarc_client_config_set_auth_provider sets (a failover cluster's: "
                       "pulsarc_client_config_set_failover_cluster_auth_provider)",
                       name);
    return pc_fail(
        PULSARC_ERR_INVALID_CONFIG,
        "authPlugin \"%s\" is not known (token, tls, basic, oauth2, sasl or the official "
        "clients' class names, e.g. " JAVA_AUTH "AuthenticationToken)",
        name);
}

/* "file:///p" and "file:/p" name /p; "file:p" a relative path. */
static const char *file_path(const char *uri)
{
    const char *p = uri + strlen("file:");
    return strncmp(p, "//", 2) ? p : p + 2;
}

static pulsarc_result token_from_json(const char *params, pc_auth_t **out)
{
    pc_auth_params_t kv;
    pulsarc_result r = pc_auth_params_parse(params, &kv);
    if (r != PULSARC_OK)
        return r;
    const char *token = pc_auth_params_get(&kv, "token");
    const char *file = pc_auth_params_get(&kv, "file");
    if (token && *token)
        r = pc_auth_token_literal(token, out);
    else if (file && *file)
        r = pc_auth_token_file(strncmp(file, "file:", 5) ? file : file_path(file), out);
    else
        r = pc_fail(PULSARC_ERR_INVALID_CONFIG,
                    "authParams for token: the JSON object needs \"token\" or \"file\"");
    pc_auth_params_clear(&kv);
    return r;
}

static pulsarc_result token_from_params(const char *params, pc_auth_t **out)
{
    if (!params || !*params)
        return pc_fail(PULSARC_ERR_INVALID_CONFIG,
                       "authPlugin token needs authParams (token:<jwt>, file:///path, env:NAME "
                       "or {\"token\":\"<jwt>\"})");
    if (pc_auth_params_is_json(params))
        return token_from_json(params, out);
    if (!strncmp(params, "token:", 6)) {
        if (!params[6])
            return pc_fail(PULSARC_ERR_INVALID_CONFIG, "authParams for token: empty token");
        return pc_auth_token_literal(params + 6, out);
    }
    if (!strncmp(params, "file:", 5)) {
        if (!*file_path(params))
            return pc_fail(PULSARC_ERR_INVALID_CONFIG, "authParams for token: empty file path");
        return pc_auth_token_file(file_path(params), out);
    }
    if (!strncmp(params, "env:", 4)) {
        if (!params[4])
            return pc_fail(PULSARC_ERR_INVALID_CONFIG,
                           "authParams for token: empty environment variable name");
        return pc_auth_token_env(params + 4, out);
    }
    return pc_auth_token_literal(params, out); /* the bare token, as Java accepts it */
}

static pulsarc_result basic_from_params(const char *params, pc_auth_t **out)
{
    pc_auth_params_t kv;
    if (!params || !*params)
        return pc_fail(PULSARC_ERR_INVALID_CONFIG,
                       "authPlugin basic needs authParams {\"userId\":..,\"password\":..}");
    pulsarc_result r = pc_auth_params_parse(params, &kv);
    if (r != PULSARC_OK)
        return r;
    const char *user = pc_auth_params_get(&kv, "userId");
    const char *password = pc_auth_params_get(&kv, "password");
    if (!user || !*user || !password)
        r = pc_fail(PULSARC_ERR_INVALID_CONFIG,
                    "authParams for basic: userId and password are required");
    else if (strchr(user, ':'))
        r = pc_fail(PULSARC_ERR_INVALID_CONFIG,
                    "authParams for basic: userId must not contain ':'");
    else
        r = pc_auth_basic(user, password, out);
    pc_auth_params_clear(&kv);
    return r;
}

static pulsarc_result tls_from_params(const pc_auth_config_t *in, pc_auth_t **out,
                                      pc_auth_tls_files_t *tls)
{
    const char *params = in->params;
    pc_auth_params_t kv = { 0 };
    if (params && *params) {
        pulsarc_result r = pc_auth_params_parse(params, &kv);
        if (r != PULSARC_OK)
            return r;
    }
    const char *cert = pc_auth_params_get(&kv, "tlsCertFile");
    const char *key = pc_auth_params_get(&kv, "tlsKeyFile");
    pulsarc_result r = PULSARC_OK;
    if (!cert != !key || (cert && (!*cert || !*key)))
        r = pc_fail(PULSARC_ERR_INVALID_CONFIG,
                    "authParams for tls: give both tlsCertFile and tlsKeyFile");
    else if (cert && (!(tls->cert_file = strdup(cert)) || !(tls->key_file = strdup(key))))
        r = pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    else if (in->tls_cert_file || in->tls_key_file) /* the TLS settings win */
        r = pc_auth_tls(in->tls_cert_file, in->tls_key_file, out);
    else
        r = pc_auth_tls(tls->cert_file, tls->key_file, out);
    pc_auth_params_clear(&kv);
    if (r != PULSARC_OK)
        pc_auth_tls_files_clear(tls);
    return r;
}

static pulsarc_result sasl_from_params(const char *params, pc_auth_t **out)
{
    pc_auth_params_t kv = { 0 };
    if (params && *params) {
        pulsarc_result r = pc_auth_params_parse(params, &kv);
        if (r != PULSARC_OK)
            return r;
    }
    pc_auth_sasl_params_t p = {
        .keytab = pc_auth_params_get(&kv, "keytab"),
        .principal = pc_auth_params_get(&kv, "principal"),
        .server_type = pc_auth_params_get(&kv, "serverType"),
    };
    pulsarc_result r = PULSARC_OK;
    if (p.keytab && !strncmp(p.keytab, "file:", 5))
        p.keytab = file_path(p.keytab);
    if (p.server_type && (!*p.server_type || strpbrk(p.server_type, "/@")))
        r = pc_fail(PULSARC_ERR_INVALID_CONFIG,
                    "authParams for sasl: serverType must be a service name such as broker or "
                    "proxy (no '/' or '@')");
    else if (p.principal && !*p.principal)
        r = pc_fail(PULSARC_ERR_INVALID_CONFIG, "authParams for sasl: empty principal");
    else if (p.keytab && (!*p.keytab || access(p.keytab, R_OK) != 0))
        r = pc_fail(PULSARC_ERR_AUTH_PROVIDER, "authParams for sasl: cannot read the keytab %s",
                    p.keytab);
    else
        r = pc_auth_sasl(&p, out);
    pc_auth_params_clear(&kv);
    return r;
}

static pulsarc_result build(pc_auth_kind_t kind, const pc_auth_config_t *in, pc_auth_t **out,
                            pc_auth_tls_files_t *tls)
{
    if (in->supplier && kind != PC_AUTH_TOKEN)
        return pc_fail(PULSARC_ERR_INVALID_CONFIG,
                       "a token supplier is set, but authPlugin \"%s\" is not token", in->plugin);
    switch (kind) {
    case PC_AUTH_TOKEN:
        if (in->supplier)
            return pc_auth_token_supplier(in->supplier, in->supplier_ctx, out);
        return token_from_params(in->params, out);
    case PC_AUTH_BASIC:
        return basic_from_params(in->params, out);
    case PC_AUTH_TLS:
        return tls_from_params(in, out, tls);
    case PC_AUTH_SASL:
        return sasl_from_params(in->params, out);
    case PC_AUTH_OAUTH2: {
        pulsarc_result r = pc_auth_oauth2_from_params(in->params, out);
        if (r == PULSARC_OK)
            pc_auth_oauth2_set_clock(*out, in->clock);
        return r;
    }
    }
    return pc_fail(PULSARC_ERR_INVALID_CONFIG, "unknown authentication plugin");
}

pulsarc_result pc_auth_from_config(const pc_auth_config_t *in, pc_auth_t **out,
                                   pc_auth_tls_files_t *tls)
{
    *out = NULL;
    memset(tls, 0, sizeof *tls);
    pc_auth_kind_t kind = PC_AUTH_TOKEN;
    if (!in->plugin && !in->supplier) {
        if (in->params)
            return pc_fail(PULSARC_ERR_INVALID_CONFIG, "authParams is set but authPlugin is not");
        return PULSARC_OK;
    }
    if (in->plugin) {
        pulsarc_result r = pc_auth_kind_from_name(in->plugin, &kind);
        if (r != PULSARC_OK)
            return r;
    }
    return build(kind, in, out, tls);
}

void pc_auth_tls_files_clear(pc_auth_tls_files_t *f)
{
    free(f->cert_file);
    free(f->key_file);
    f->cert_file = f->key_file = NULL;
}
