/** @file
 * pulsarc-compat: a client's configuration, with libpulsar's defaults: operation timeout
 * 30 s, no memory limit, hostname verification off, keep-alive 30 s, partitions looked up
 * every 60 s. Thread counts, the lookup concurrency and the statistics interval are kept
 * for their getters only (pulsarc has one loop thread and no periodic statistics log). */
#ifndef PULSARC_COMPAT_PULSAR_C_CLIENT_CONFIGURATION_H
#define PULSARC_COMPAT_PULSAR_C_CLIENT_CONFIGURATION_H

#include <pulsar/defines.h>
#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Log levels, as libpulsar numbers them. */
typedef enum {
    pulsar_DEBUG = 0,
    pulsar_INFO = 1,
    pulsar_WARN = 2,
    pulsar_ERROR = 3
} pulsar_logger_level_t;

/** Receives a log line: its level, the source file and line, the text and ctx. Runs on the
 * thread that logs (mostly the client's loop thread). */
typedef void (*pulsar_logger)(pulsar_logger_level_t level, const char *file, int line,
                              const char *message, void *ctx);

/** A logger with its own level filter. */
typedef struct pulsar_logger_t {
    void *ctx;                                                  /**< given to both functions */
    bool (*is_enabled)(pulsar_logger_level_t level, void *ctx); /**< log this level? */
    pulsar_logger log;                                          /**< writes a line */
} pulsar_logger_t;

/** A client configuration, opaque. */
typedef struct _pulsar_client_configuration pulsar_client_configuration_t;
/** Authentication (pulsar/c/authentication.h). */
typedef struct _pulsar_authentication pulsar_authentication_t;

/** A configuration with libpulsar's defaults (NULL when out of memory). */
PULSAR_PUBLIC pulsar_client_configuration_t *pulsar_client_configuration_create(void);
/** Frees it (NULL: nothing); clients made with it keep what they need. */
PULSAR_PUBLIC void pulsar_client_configuration_free(pulsar_client_configuration_t *conf);
/** The authentication (copied: the object may be freed afterwards). */
PULSAR_PUBLIC void pulsar_client_configuration_set_auth(pulsar_client_configuration_t *conf,
                                                        pulsar_authentication_t *authentication);
/** The client's memory limit in bytes for pending messages; 0 (the default): none. */
PULSAR_PUBLIC void
pulsar_client_configuration_set_memory_limit(pulsar_client_configuration_t *conf,
                                             unsigned long long memoryLimitBytes);
/** The memory limit. */
PULSAR_PUBLIC unsigned long long
pulsar_client_configuration_get_memory_limit(pulsar_client_configuration_t *conf);
/** Lookups, producer creation and close time out after this many seconds (default 30;
 * values below 1 are ignored). */
PULSAR_PUBLIC void
pulsar_client_configuration_set_operation_timeout_seconds(pulsar_client_configuration_t *conf,
                                                          int timeout);
/** The operation timeout in seconds. */
PULSAR_PUBLIC int
pulsar_client_configuration_get_operation_timeout_seconds(pulsar_client_configuration_t *conf);
/** Kept for the getter (default 1): pulsarc runs one loop thread. */
PULSAR_PUBLIC void pulsar_client_configuration_set_io_threads(pulsar_client_configuration_t *conf,
                                                              int threads);
/** What set_io_threads stored. */
PULSAR_PUBLIC int pulsar_client_configuration_get_io_threads(pulsar_client_configuration_t *conf);
/** Kept for the getter (default 1): there are no consumers. */
PULSAR_PUBLIC void
pulsar_client_configuration_set_message_listener_threads(pulsar_client_configuration_t *conf,
                                                         int threads);
/** What set_message_listener_threads stored. */
PULSAR_PUBLIC int
pulsar_client_configuration_get_message_listener_threads(pulsar_client_configuration_t *conf);
/** Kept for the getter (default 50000). */
PULSAR_PUBLIC void
pulsar_client_configuration_set_concurrent_lookup_request(pulsar_client_configuration_t *conf,
                                                          int concurrentLookupRequest);
/** What set_concurrent_lookup_request stored. */
PULSAR_PUBLIC int
pulsar_client_configuration_get_concurrent_lookup_request(pulsar_client_configuration_t *conf);
/** Log through logger (INFO and above), with ctx. Unlike libpulsar's, the logger belongs
 * to the clients made with this configuration, not to the process. */
PULSAR_PUBLIC void pulsar_client_configuration_set_logger(pulsar_client_configuration_t *conf,
                                                          pulsar_logger logger, void *ctx);
/** Log through logger.log the levels logger.is_enabled accepts. */
PULSAR_PUBLIC void pulsar_client_configuration_set_logger_t(pulsar_client_configuration_t *conf,
                                                            pulsar_logger_t logger);
/** A PEM file of the CAs trusted for the brokers' certificates. */
PULSAR_PUBLIC void
pulsar_client_configuration_set_tls_trust_certs_file_path(pulsar_client_configuration_t *conf,
                                                          const char *tlsTrustCertsFilePath);
/** Nonzero: accept any broker certificate (for tests only). */
PULSAR_PUBLIC void
pulsar_client_configuration_set_tls_allow_insecure_connection(pulsar_client_configuration_t *conf,
                                                              int allowInsecure);
/** The client certificate's private key (PEM file), for mTLS. */
PULSAR_PUBLIC void
pulsar_client_configuration_set_tls_private_key_file_path(pulsar_client_configuration_t *conf,
                                                          const char *private_key_file_path);
/** The key's path, "" when unset. */
PULSAR_PUBLIC const char *
pulsar_client_configuration_get_tls_private_key_file_path(pulsar_client_configuration_t *conf);
/** The client certificate (PEM file), for mTLS. */
PULSAR_PUBLIC void
pulsar_client_configuration_set_tls_certificate_file_path(pulsar_client_configuration_t *conf,
                                                          const char *certificateFilePath);
/** The certificate's path, "" when unset. */
PULSAR_PUBLIC const char *
pulsar_client_configuration_get_tls_certificate_file_path(pulsar_client_configuration_t *conf);
/** 1 when any certificate is accepted. */
PULSAR_PUBLIC int
pulsar_client_configuration_is_tls_allow_insecure_connection(pulsar_client_configuration_t *conf);
/** Kept for the getter (default 600): no statistics are logged. */
PULSAR_PUBLIC void
pulsar_client_configuration_set_stats_interval_in_seconds(pulsar_client_configuration_t *conf,
                                                          const unsigned int interval);
/** 1 when the broker's certificate must name the host (default 0, as libpulsar). */
PULSAR_PUBLIC int
pulsar_client_configuration_is_validate_hostname(pulsar_client_configuration_t *conf);
/** Nonzero: check that the broker's certificate names the host connected to. */
PULSAR_PUBLIC void
pulsar_client_configuration_set_validate_hostname(pulsar_client_configuration_t *conf,
                                                  int validateHostName);
/** The brokers' advertised listener to use. */
PULSAR_PUBLIC void
pulsar_client_configuration_set_listener_name(pulsar_client_configuration_t *conf,
                                              const char *listenerName);
/** The listener's name, "" when unset. */
PULSAR_PUBLIC const char *
pulsar_client_configuration_get_listener_name(pulsar_client_configuration_t *conf);
/** How often producers look for partitions added to their topic, in seconds (default 60;
 * 0: never). */
PULSAR_PUBLIC void
pulsar_client_configuration_set_partitions_update_interval(pulsar_client_configuration_t *conf,
                                                           const unsigned int intervalInSeconds);
/** The partitions update interval in seconds. */
PULSAR_PUBLIC unsigned int
pulsar_client_configuration_get_partitions_update_interval(pulsar_client_configuration_t *conf);
/** The statistics interval stored. */
PULSAR_PUBLIC unsigned int
pulsar_client_configuration_get_stats_interval_in_seconds(pulsar_client_configuration_t *conf);
/** A PING after this many seconds of silence (default 30). */
PULSAR_PUBLIC void pulsar_client_configuration_set_keep_alive_interval_in_seconds(
    pulsar_client_configuration_t *conf, unsigned int keepAliveIntervalInSeconds);
/** The keep-alive interval in seconds. */
PULSAR_PUBLIC unsigned int
pulsar_client_configuration_get_keep_alive_interval_in_seconds(pulsar_client_configuration_t *conf);
/** Nonzero: an HTTP lookup's credentials follow a redirect to another host. */
PULSAR_PUBLIC void
pulsar_client_configuration_set_http_lookup_auth_allow_redirect(pulsar_client_configuration_t *conf,
                                                                int httpLookupAuthAllowRedirect);
/** 1 when the credentials follow redirects. */
PULSAR_PUBLIC int
pulsar_client_configuration_is_http_lookup_auth_allow_redirect(pulsar_client_configuration_t *conf);

#ifdef __cplusplus
}
#endif

#endif
