/* The client's TLS configuration: PEM given in memory (the typed API beside the tls*
 * keys), the TLS context a pulsar+ssl:// client builds from all of it, and the TLS the
 * OAuth2 issuer is reached with. */
#include <openssl/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "common/error.h"
#include "net/http.h"
#include "net/tls.h"

/* Secrets leave no copy behind in freed memory. */
static void wipe_free(char *s)
{
    if (!s)
        return;
    OPENSSL_cleanse(s, strlen(s));
    free(s);
}

static void tls_settings(const pulsarc_client_config_t *c, pc_tls_settings_t *s)
{
    *s = (pc_tls_settings_t){
        .trust_file = c->tls_trust_certs_file,
        .trust_pem = c->tls_trust_certs_pem,
        .cert_file = c->tls_cert_file,
        .cert_pem = c->tls_cert_pem,
        .key_file = c->tls_key_file,
        .key_pem = c->tls_key_pem,
        .protocols = c->tls_protocols,
        .ciphers = c->tls_ciphers,
        .allow_insecure = c->tls_allow_insecure,
        .verify_hostname = c->tls_hostname_verification,
        .session_resumption = c->tls_session_resumption,
        .connections_per_peer = (unsigned)c->connections_per_broker,
        .refresh_s = (unsigned)c->auto_cert_refresh_s,
    };
}

/* Parse the PEM now, so that a bad one is reported by the setter that took it rather
 * than by pulsarc_client_new. Only the PEM under test is set; no file is read. */
static pulsarc_result check_pem(const char *trust, const char *cert, const char *key)
{
    pc_tls_settings_t s = { .trust_pem = trust,
                            .cert_pem = cert,
                            .key_pem = key,
                            .allow_insecure = !trust };
    pc_tls_ctx_t *ctx;
    pulsarc_result r = pc_tls_ctx_new(&s, &ctx);
    pc_tls_ctx_free(ctx);
    return r;
}

pulsarc_result pulsarc_client_config_set_tls_trust_certs_pem(pulsarc_client_config_t *conf,
                                                             const char *pem)
{
    if (!conf)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT, "conf must not be NULL");
    char *copy = NULL;
    if (pem) {
        pulsarc_result r = check_pem(pem, NULL, NULL);
        if (r != PULSARC_OK)
            return r;
        if (!(copy = strdup(pem)))
            return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    }
    free(conf->tls_trust_certs_pem);
    conf->tls_trust_certs_pem = copy;
    return PULSARC_OK;
}

pulsarc_result pulsarc_client_config_set_tls_cert_pem(pulsarc_client_config_t *conf,
                                                      const char *cert_pem, const char *key_pem)
{
    if (!conf || !cert_pem != !key_pem)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT,
                       "conf must not be NULL; give the certificate and its key, or neither");
    char *cert = NULL, *key = NULL;
    if (cert_pem) {
        pulsarc_result r = check_pem(NULL, cert_pem, key_pem);
        if (r != PULSARC_OK)
            return r;
        cert = strdup(cert_pem);
        key = strdup(key_pem);
        if (!cert || !key) {
            free(cert);
            wipe_free(key);
            return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
        }
    }
    free(conf->tls_cert_pem);
    wipe_free(conf->tls_key_pem);
    conf->tls_cert_pem = cert;
    conf->tls_key_pem = key;
    return PULSARC_OK;
}

static int dup_field(char **dst, const char *src)
{
    *dst = src ? strdup(src) : NULL;
    return src && !*dst ? -1 : 0;
}

int pc_client_config_copy_tls_pem(pulsarc_client_config_t *dst, const pulsarc_client_config_t *src)
{
    /* Each field becomes a copy or NULL, so clearing after a failure stays safe. */
    int rc = dup_field(&dst->tls_trust_certs_pem, src->tls_trust_certs_pem);
    rc |= dup_field(&dst->tls_cert_pem, src->tls_cert_pem);
    rc |= dup_field(&dst->tls_key_pem, src->tls_key_pem);
    return rc;
}

void pc_client_config_clear_tls_pem(pulsarc_client_config_t *c)
{
    free(c->tls_trust_certs_pem);
    free(c->tls_cert_pem);
    wipe_free(c->tls_key_pem);
    c->tls_trust_certs_pem = c->tls_cert_pem = c->tls_key_pem = NULL;
}

pulsarc_result pc_client_tls_new(const pulsarc_client_config_t *conf, const pc_service_url_t *url,
                                 struct pc_tls_ctx **out)
{
    *out = NULL;
    if (!url->tls)
        return PULSARC_OK;
    if (conf->tls_ctx)
        return pc_tls_ctx_share(conf->tls_ctx, out);
    pc_tls_settings_t s;
    tls_settings(conf, &s);
    return pc_tls_ctx_new(&s, out);
}

pulsarc_result pc_cluster_tls_new(const pulsarc_client_config_t *conf, const char *trust_file,
                                  const char *cert_file, const char *key_file,
                                  struct pc_tls_ctx **out)
{
    *out = NULL;
    pc_tls_settings_t s;
    tls_settings(conf, &s);
    if (trust_file) {
        s.trust_file = trust_file;
        s.trust_pem = NULL;
    }
    /* Never the client's certificate: it identifies the client to the clusters it was
     * configured for, not to this one. */
    s.cert_file = cert_file;
    s.key_file = key_file;
    s.cert_pem = s.key_pem = NULL;
    return pc_tls_ctx_new(&s, out);
}

void pc_client_http_tls(const pulsarc_client_config_t *c, pc_http_tls_t *out)
{
    *out = (pc_http_tls_t){
        .trust_certs_file = c->tls_trust_certs_file,
        .trust_certs_pem = c->tls_trust_certs_pem,
        .cert_file = c->tls_cert_file,
        .key_file = c->tls_key_file,
        .cert_pem = c->tls_cert_pem,
        .key_pem = c->tls_key_pem,
        .protocols = c->tls_protocols,
        .ciphers = c->tls_ciphers,
        .allow_insecure = c->tls_allow_insecure,
        .verify_hostname = c->tls_hostname_verification,
    };
}

void pc_cluster_http_tls(const pulsarc_client_config_t *c, const char *trust_file,
                         const char *cert_file, const char *key_file, pc_http_tls_t *out)
{
    pc_client_http_tls(c, out);
    if (trust_file) {
        out->trust_certs_file = trust_file;
        out->trust_certs_pem = NULL;
    }
    out->cert_file = cert_file;
    out->key_file = key_file;
    out->cert_pem = out->key_pem = NULL;
}

void pc_client_tls_free(struct pc_tls_ctx *ctx)
{
    pc_tls_ctx_free(ctx);
}

/* The issuer receives the client secret: its certificate and host name are always
 * verified, against its own CA file or the system's store. tlsAllowInsecureConnection,
 * tlsEnableHostnameVerification=false and the broker's CAs are for the broker only; the
 * protocol and cipher restrictions apply to every TLS connection of the client. No client
 * certificate is presented (client_secret_post). */
pulsarc_result pc_client_issuer_http_tls(const pulsarc_client_config_t *c, const char *trust_file,
                                         pc_http_tls_t *out)
{
    *out = (pc_http_tls_t){
        .trust_certs_file = trust_file,
        .protocols = c->tls_protocols,
        .ciphers = c->tls_ciphers,
        .allow_insecure = 0,
        .verify_hostname = 1,
    };
    /* Load now what would otherwise fail at the first token request. allow_insecure only
     * skips loading the system's store here. */
    pc_tls_settings_t check = { .protocols = c->tls_protocols,
                                .ciphers = c->tls_ciphers,
                                .allow_insecure = true };
    pc_tls_ctx_t *ctx;
    pulsarc_result r = pc_tls_ctx_new(&check, &ctx);
    pc_tls_ctx_free(ctx);
    if (r != PULSARC_OK || !trust_file)
        return r;
    check = (pc_tls_settings_t){ .trust_file = trust_file, .allow_insecure = true };
    if ((r = pc_tls_ctx_new(&check, &ctx)) != PULSARC_OK) {
        char why[400];
        snprintf(why, sizeof why, "%s", pulsarc_last_error_detail());
        return pc_fail(r, "the OAuth2 issuer's trustCertsFilePath: %s", why);
    }
    pc_tls_ctx_free(ctx);
    return PULSARC_OK;
}
