/* pulsar_client_configuration_t: libpulsar's settings and defaults, turned into pulsarc's
 * keys when a client is created (timeouts in seconds become milliseconds). */
#include <stdio.h>
#include <stdlib.h>

#include "compat/compat.h"

pulsar_client_configuration_t *pulsar_client_configuration_create(void)
{
    pulsar_client_configuration_t *conf = calloc(1, sizeof *conf);
    if (!conf)
        return NULL;
    conf->memory_limit = 0; /* libpulsar: no limit (pulsarc's own default is 64 MiB) */
    conf->operation_timeout_s = 30;
    conf->io_threads = 1;
    conf->listener_threads = 1;
    conf->lookup_concurrency = 50000;
    conf->stats_interval_s = 600;
    conf->partitions_update_s = 60;
    conf->keepalive_s = 30;
    conf->validate_hostname = 0; /* libpulsar's default; pulsarc's own is on */
    return conf;
}

void pulsar_client_configuration_free(pulsar_client_configuration_t *conf)
{
    if (!conf)
        return;
    free(conf->trust_certs);
    free(conf->cert);
    free(conf->key);
    free(conf->listener);
    pc_compat_auth_clear(&conf->auth);
    pc_compat_kvs_clear(&conf->extra);
    free(conf);
}

void pulsar_client_configuration_set_auth(pulsar_client_configuration_t *conf,
                                          pulsar_authentication_t *authentication)
{
    if (!conf)
        return;
    pc_compat_auth copy = { 0 };
    if (authentication && pc_compat_auth_copy(&copy, &authentication->auth) != 0)
        return;
    pc_compat_auth_clear(&conf->auth);
    conf->auth = copy;
}

void pulsar_client_configuration_set_memory_limit(pulsar_client_configuration_t *conf,
                                                  unsigned long long memoryLimitBytes)
{
    if (conf)
        conf->memory_limit = memoryLimitBytes;
}

unsigned long long pulsar_client_configuration_get_memory_limit(pulsar_client_configuration_t *conf)
{
    return conf ? conf->memory_limit : 0;
}

void pulsar_client_configuration_set_operation_timeout_seconds(pulsar_client_configuration_t *conf,
                                                               int timeout)
{
    if (conf && timeout >= 1 && timeout <= 3600)
        conf->operation_timeout_s = timeout;
}

int pulsar_client_configuration_get_operation_timeout_seconds(pulsar_client_configuration_t *conf)
{
    return conf ? conf->operation_timeout_s : 30;
}

void pulsar_client_configuration_set_io_threads(pulsar_client_configuration_t *conf, int threads)
{
    if (conf)
        conf->io_threads = threads;
}

int pulsar_client_configuration_get_io_threads(pulsar_client_configuration_t *conf)
{
    return conf ? conf->io_threads : 1;
}

void pulsar_client_configuration_set_message_listener_threads(pulsar_client_configuration_t *conf,
                                                              int threads)
{
    if (conf)
        conf->listener_threads = threads;
}

int pulsar_client_configuration_get_message_listener_threads(pulsar_client_configuration_t *conf)
{
    return conf ? conf->listener_threads : 1;
}

void pulsar_client_configuration_set_concurrent_lookup_request(pulsar_client_configuration_t *conf,
                                                               int concurrentLookupRequest)
{
    if (conf)
        conf->lookup_concurrency = concurrentLookupRequest;
}

int pulsar_client_configuration_get_concurrent_lookup_request(pulsar_client_configuration_t *conf)
{
    return conf ? conf->lookup_concurrency : 50000;
}

void pulsar_client_configuration_set_logger(pulsar_client_configuration_t *conf,
                                            pulsar_logger logger, void *ctx)
{
    if (conf)
        conf->logger = (pc_compat_logger){ .set = 1, .log = logger, .ctx = ctx };
}

void pulsar_client_configuration_set_logger_t(pulsar_client_configuration_t *conf,
                                              pulsar_logger_t logger)
{
    if (conf)
        conf->logger = (pc_compat_logger){ .set = 1,
                                           .is_enabled = logger.is_enabled,
                                           .log = logger.log,
                                           .ctx = logger.ctx };
}

void pulsar_client_configuration_set_tls_trust_certs_file_path(pulsar_client_configuration_t *conf,
                                                               const char *tlsTrustCertsFilePath)
{
    if (conf)
        pc_compat_set_str(&conf->trust_certs, tlsTrustCertsFilePath);
}

void pulsar_client_configuration_set_tls_allow_insecure_connection(
    pulsar_client_configuration_t *conf, int allowInsecure)
{
    if (conf)
        conf->allow_insecure = allowInsecure != 0;
}

void pulsar_client_configuration_set_tls_private_key_file_path(pulsar_client_configuration_t *conf,
                                                               const char *private_key_file_path)
{
    if (conf)
        pc_compat_set_str(&conf->key, private_key_file_path);
}

const char *
pulsar_client_configuration_get_tls_private_key_file_path(pulsar_client_configuration_t *conf)
{
    return conf && conf->key ? conf->key : "";
}

void pulsar_client_configuration_set_tls_certificate_file_path(pulsar_client_configuration_t *conf,
                                                               const char *certificateFilePath)
{
    if (conf)
        pc_compat_set_str(&conf->cert, certificateFilePath);
}

const char *
pulsar_client_configuration_get_tls_certificate_file_path(pulsar_client_configuration_t *conf)
{
    return conf && conf->cert ? conf->cert : "";
}

int pulsar_client_configuration_is_tls_allow_insecure_connection(
    pulsar_client_configuration_t *conf)
{
    return conf ? conf->allow_insecure : 0;
}

void pulsar_client_configuration_set_stats_interval_in_seconds(pulsar_client_configuration_t *conf,
                                                               const unsigned int interval)
{
    if (conf)
        conf->stats_interval_s = interval;
}

unsigned int
pulsar_client_configuration_get_stats_interval_in_seconds(pulsar_client_configuration_t *conf)
{
    return conf ? conf->stats_interval_s : 600;
}

int pulsar_client_configuration_is_validate_hostname(pulsar_client_configuration_t *conf)
{
    return conf ? conf->validate_hostname : 0;
}

void pulsar_client_configuration_set_validate_hostname(pulsar_client_configuration_t *conf,
                                                       int validateHostName)
{
    if (conf)
        conf->validate_hostname = validateHostName != 0;
}

void pulsar_client_configuration_set_listener_name(pulsar_client_configuration_t *conf,
                                                   const char *listenerName)
{
    if (conf)
        pc_compat_set_str(&conf->listener, listenerName && *listenerName ? listenerName : NULL);
}

const char *pulsar_client_configuration_get_listener_name(pulsar_client_configuration_t *conf)
{
    return conf && conf->listener ? conf->listener : "";
}

void pulsar_client_configuration_set_partitions_update_interval(
    pulsar_client_configuration_t *conf, const unsigned int intervalInSeconds)
{
    if (conf)
        conf->partitions_update_s = intervalInSeconds;
}

unsigned int
pulsar_client_configuration_get_partitions_update_interval(pulsar_client_configuration_t *conf)
{
    return conf ? conf->partitions_update_s : 60;
}

void pulsar_client_configuration_set_keep_alive_interval_in_seconds(
    pulsar_client_configuration_t *conf, unsigned int keepAliveIntervalInSeconds)
{
    if (conf && keepAliveIntervalInSeconds >= 1 && keepAliveIntervalInSeconds <= 3600)
        conf->keepalive_s = keepAliveIntervalInSeconds;
}

unsigned int
pulsar_client_configuration_get_keep_alive_interval_in_seconds(pulsar_client_configuration_t *conf)
{
    return conf ? conf->keepalive_s : 30;
}

void pulsar_client_configuration_set_http_lookup_auth_allow_redirect(
    pulsar_client_configuration_t *conf, int httpLookupAuthAllowRedirect)
{
    if (conf)
        conf->http_auth_redirect = httpLookupAuthAllowRedirect != 0;
}

int pulsar_client_configuration_is_http_lookup_auth_allow_redirect(
    pulsar_client_configuration_t *conf)
{
    return conf ? conf->http_auth_redirect : 0;
}

pulsar_result pulsarc_compat_client_configuration_set(pulsar_client_configuration_t *conf,
                                                      const char *key, const char *value)
{
    if (!conf || !key || !value)
        return pulsar_result_InvalidConfiguration;
    /* Checked on a scratch configuration now; applied when a client is created. */
    pulsarc_client_config_t *scratch = pulsarc_client_config_new();
    if (!scratch)
        return pulsar_result_UnknownError;
    pulsarc_result res = pulsarc_client_config_set(scratch, key, value);
    pulsarc_client_config_free(scratch);
    if (res != PULSARC_OK)
        return pc_compat_result(res);
    return pc_compat_kvs_put(&conf->extra, key, value) == 0 ? pulsar_result_Ok
                                                            : pulsar_result_UnknownError;
}

static pulsarc_result set_num(pulsarc_client_config_t *c, const char *key, unsigned long long v)
{
    char text[32];
    snprintf(text, sizeof text, "%llu", v);
    return pulsarc_client_config_set(c, key, text);
}

static pulsarc_result set_opt(pulsarc_client_config_t *c, const char *key, const char *v)
{
    return v ? pulsarc_client_config_set(c, key, v) : PULSARC_OK;
}

pulsarc_result pc_compat_client_config(const pulsar_client_configuration_t *conf,
                                       pulsar_client_t *client, pulsarc_client_config_t **out)
{
    pulsar_client_configuration_t *defaults = NULL;
    if (!conf && !(conf = defaults = pulsar_client_configuration_create()))
        return PULSARC_ERR_NO_MEMORY;
    pulsarc_client_config_t *c = pulsarc_client_config_new();
    pulsarc_result res = c ? PULSARC_OK : PULSARC_ERR_NO_MEMORY;
    if (res == PULSARC_OK)
        res = set_num(c, "operationTimeoutMs",
                      (unsigned long long)conf->operation_timeout_s * 1000);
    if (res == PULSARC_OK)
        res = set_num(c, "memoryLimitBytes", conf->memory_limit);
    if (res == PULSARC_OK)
        res = set_num(c, "keepAliveIntervalSeconds", conf->keepalive_s);
    if (res == PULSARC_OK)
        res = pulsarc_client_config_set(c, "tlsEnableHostnameVerification",
                                        conf->validate_hostname ? "true" : "false");
    if (res == PULSARC_OK)
        res = pulsarc_client_config_set(c, "tlsAllowInsecureConnection",
                                        conf->allow_insecure ? "true" : "false");
    if (res == PULSARC_OK)
        res = pulsarc_client_config_set(c, "httpLookupAuthAllowRedirect",
                                        conf->http_auth_redirect ? "true" : "false");
    if (res == PULSARC_OK)
        res = set_opt(c, "tlsTrustCertsFilePath", conf->trust_certs);
    if (res == PULSARC_OK)
        res = set_opt(c, "tlsCertificateFilePath", conf->cert);
    if (res == PULSARC_OK)
        res = set_opt(c, "tlsKeyFilePath", conf->key);
    if (res == PULSARC_OK)
        res = set_opt(c, "listenerName", conf->listener);
    if (res == PULSARC_OK && conf->auth.kind != PC_COMPAT_AUTH_NONE) {
        client->auth = calloc(1, sizeof *client->auth);
        if (!client->auth || pc_compat_auth_copy(client->auth, &conf->auth) != 0)
            res = PULSARC_ERR_NO_MEMORY;
        else
            res = pc_compat_auth_apply(client->auth, c);
    }
    if (res == PULSARC_OK)
        res = pc_compat_logger_apply(&conf->logger, c, &client->logger);
    for (size_t i = 0; res == PULSARC_OK && i < conf->extra.n; i++)
        res = pulsarc_client_config_set(c, conf->extra.keys[i], conf->extra.values[i]);
    client->partitions_update_s = conf->partitions_update_s;
    pulsar_client_configuration_free(defaults);
    if (res != PULSARC_OK) {
        pulsarc_client_config_free(c);
        return res;
    }
    *out = c;
    return PULSARC_OK;
}
