/* Client and producer configuration: plain structs filled from one table per struct.
 * Each table row names a key (as the official Java client spells it), its type, bounds and
 * default; the same table validates set(), fills defaults and prints the effective config.
 * Enumerated settings are stored as the enums of the layers that use them. */
#ifndef PC_CONFIG_H
#define PC_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "auth/auth_plugin.h"
#include "config/interceptor_list.h"
#include "codec/compression.h"
#include "common/clock.h"
#include "net/http.h"
#include "producer/batch.h"
#include "producer/partition_producer.h"
#include "pulsarc/pulsarc.h"
#include "routing/router.h"
#include "spool/spool.h"

struct pc_tls_ctx;
struct pc_auth;

/* proxyProtocol: how proxyServiceUrl is used (the Java client's ProxyProtocol). */
typedef enum pc_proxy_protocol {
    PC_PROXY_PROTOCOL_NONE = 0,
    PC_PROXY_PROTOCOL_SNI, /* TLS to the proxy, the broker's host name as SNI */
} pc_proxy_protocol;

struct pulsarc_client_config {
    int64_t operation_timeout_ms;
    int64_t connection_timeout_ms;
    int64_t keepalive_interval_s;
    int64_t max_lookup_redirects;
    int64_t lookup_timeout_ms;            /* 0: operation_timeout_ms */
    bool http_lookup_auth_allow_redirect; /* credentials follow redirects off the service hosts */
    /* Where connections go (config_net.c turns them into net/'s settings). */
    char *listener_name; /* NULL: the brokers' internal listener */
    char *description;   /* appended to the client version the brokers show; NULL: none */
    int64_t connections_per_broker;
    int64_t connection_max_idle_s; /* <= 0: connections stay */
    char *proxy_service_url;       /* an SNI proxy, pulsar+ssl://host:port */
    pc_proxy_protocol proxy_protocol;
    int64_t memory_limit_bytes;
    int64_t initial_backoff_ms;
    int64_t max_backoff_ms;
    pulsarc_log_level log_level;
    pulsarc_log_cb log_cb;
    void *log_ctx;
    /* TLS (pulsar+ssl:// and https:// service URLs). Strings are owned copies. */
    char *tls_trust_certs_file;     /* NULL: the system's trust store */
    bool tls_allow_insecure;        /* accept any certificate (off) */
    bool tls_hostname_verification; /* on by default, unlike the official clients */
    bool tls_session_resumption;    /* resume sessions on reconnect (on) */
    char *tls_cert_file;            /* client certificate and key, for mTLS */
    char *tls_key_file;
    char *tls_protocols;         /* e.g. "TLSv1.2,TLSv1.3"; NULL: TLS 1.2 and newer */
    char *tls_ciphers;           /* OpenSSL cipher list; NULL: OpenSSL's defaults */
    int64_t auto_cert_refresh_s; /* re-read changed TLS files this often; 0: never */
    /* PEM in memory (config_tls.c; not table rows: copied and cleared by hand). */
    char *tls_trust_certs_pem;
    char *tls_cert_pem;
    char *tls_key_pem; /* a secret: wiped when freed */
    /* Authentication as the official clients configure it. auth_params is a secret: wiped
     * when replaced or freed, and NULL in a client's copy once its provider is built. */
    char *auth_plugin;
    char *auth_params;
    /* Set with pulsarc_client_config_set_auth_token_supplier (config_auth.c); not a
     * table row, and plain pointers, so a struct copy copies them. */
    pulsarc_token_supplier_cb auth_token_supplier;
    void *auth_token_supplier_ctx;
    /* Set with pulsarc_client_config_set_auth_provider (config_auth.c): a reference each
     * copy holds; in effect while auth_plugin is "custom:<its method>". */
    pc_auth_custom_t *auth_custom;
    /* Cluster failover: the table's rows, then the typed API's clusters and service URL
     * provider (config_failover.c; not table rows: copied, cleared and dumped by hand;
     * the service URL provider is never dumped). */
    char *failover_secondary_urls;
    int64_t failover_delay_ms;
    int64_t switch_back_delay_ms;
    int64_t failover_check_interval_ms;
    /* Statistics: the interval is a table row; the callback is set with
     * pulsarc_client_config_set_stats_cb (plain pointers, copied with the struct). */
    int64_t stats_interval_s;
    bool metrics_per_partition; /* metrics text: series per partition (stats/metrics_text.h) */
    bool enable_transaction;    /* pulsarc_txn_begin may be used (src/txn/) */
    pulsarc_stats_cb stats_cb;
    void *stats_ctx;
    struct pc_failover_cluster *failover_clusters; /* in the order added */
    size_t n_failover_clusters;
    pulsarc_service_url_provider_cb service_url_provider;
    void *service_url_provider_ctx;
    /* Test seams (client/test_seams.h), handed to the client's runtime context; NULL in
     * production. Not table rows: never set by key, never dumped. */
    const struct pc_transport *transport;
    const struct pc_clock *clock;
    const struct pc_tls_ctx *tls_ctx;
};

struct pulsarc_producer_config {
    char *producer_name; /* NULL = assigned by the broker */
    int64_t send_timeout_ms;
    int64_t max_pending_messages;
    bool block_if_queue_full;
    int64_t initial_sequence_id;
    pc_codec_t compression;
    pc_compress_level_t compression_level;
    bool batching_enabled;
    int64_t batching_max_messages;
    int64_t batching_max_bytes;
    int64_t batching_max_delay_ms;
    pc_batcher_kind_t batcher;
    bool chunking_enabled;
    int64_t chunk_max_size; /* 0 = the broker's max message size */
    pc_routing_mode routing_mode;
    pc_hash_scheme hashing;
    int64_t max_pending_across_partitions;
    bool lazy_start;
    bool auto_update_partitions;
    int64_t partitions_update_interval_s;
    bool schema_validation;
    /* Set with pulsarc_producer_config_set_router. */
    pulsarc_router_cb router;
    void *router_ctx;
    /* Set with pulsarc_producer_config_set_room_cb; NULL: none. */
    pulsarc_room_cb room_cb;
    void *room_ctx;
    /* Set with pulsarc_producer_config_set_schema: a reference, or NULL (BYTES). */
    pulsarc_schema_t *schema;
    /* End-to-end encryption: the names (a table row), and where their public keys come
     * from (crypto_key_reader.c; not table rows, so never dumped). */
    char *encryption_keys;
    pc_crypto_failure_action crypto_failure_action;
    int64_t data_key_rotation_ms;
    struct pc_key_source *key_sources; /* from add_encryption_key_file/_pem */
    size_t n_key_sources;
    pulsarc_crypto_key_reader_cb key_reader;
    void *key_reader_ctx;
    pc_access_mode access_mode;
    char *initial_subscription;
    /* The producer's properties (CommandProducer.metadata), from
     * pulsarc_producer_config_set_property: not table rows (client/properties.h copies and
     * clears them; not dumped). */
    pc_property_t *properties;
    size_t n_properties, cap_properties;
    /* Added with pulsarc_producer_config_add_interceptor (not table rows: copied and
     * cleared by hand, never dumped). */
    pc_interceptors_t interceptors;
    /* The spool (client/producer_spool.c); spool_dir NULL: none. */
    char *spool_dir;
    pc_spool_fsync_t spool_fsync;
    int64_t spool_fsync_interval_ms;
    int64_t spool_max_bytes;
};

/* The kinds of value a key takes. A secret is a string that dumps (and so logs) show
 * only as set or not, and that is wiped from memory when replaced or freed. */
typedef enum pc_conf_type {
    PC_CONF_INT,
    PC_CONF_BOOL,
    PC_CONF_STR,
    PC_CONF_SECRET,
    PC_CONF_ENUM,
} pc_conf_type_t;

/* A row of a configuration table, as the documentation shows it. */
typedef struct pc_config_key {
    const char *key;
    pc_conf_type_t type;
    int64_t min, max;         /* PC_CONF_INT: the range; strings: the length's */
    const char *def;          /* NULL: unset */
    const char *const *names; /* PC_CONF_ENUM: the values, NULL-terminated */
    const char *doc;          /* the description */
} pc_config_key_t;

/* The i-th row of the client's (or the producer's) table, in table order; false past
 * the last. For docs/configuration.md and the test that keeps it and the header true. */
bool pc_client_config_key(size_t i, pc_config_key_t *out);
bool pc_producer_config_key(size_t i, pc_config_key_t *out);

void pc_client_config_defaults(pulsarc_client_config_t *c);
void pc_producer_config_defaults(pulsarc_producer_config_t *c);
/* Deep copies (strings duplicated). Return 0 or -1 on allocation failure. */
int pc_producer_config_copy(pulsarc_producer_config_t *dst, const pulsarc_producer_config_t *src);
void pc_producer_config_clear(pulsarc_producer_config_t *c);
int pc_client_config_copy(pulsarc_client_config_t *dst, const pulsarc_client_config_t *src);
void pc_client_config_clear(pulsarc_client_config_t *c);
/* The PEM fields' share of copy and clear (config_tls.c). */
int pc_client_config_copy_tls_pem(pulsarc_client_config_t *dst, const pulsarc_client_config_t *src);
void pc_client_config_clear_tls_pem(pulsarc_client_config_t *c);
/* The TLS context of a client of url: NULL (and PULSARC_OK) for a plain pulsar:// URL;
 * PULSARC_ERR_TLS_CONFIG with the detail set when the settings do not load. */
struct pc_service_url;
struct pc_tls_ctx;
pulsarc_result pc_client_tls_new(const pulsarc_client_config_t *conf,
                                 const struct pc_service_url *url, struct pc_tls_ctx **out);
void pc_client_tls_free(struct pc_tls_ctx *ctx);
/* The TLS of the OAuth2 issuer's HTTP client (config_tls.c): always verified, against
 * trust_file (the provider's; NULL: the system's store), never loosened by the broker's
 * settings; tlsProtocols and tlsCiphers apply. Strings borrowed from c and trust_file.
 * PULSARC_ERR_TLS_CONFIG with a detail when they do not load. */
struct pc_http_tls;
pulsarc_result pc_client_issuer_http_tls(const pulsarc_client_config_t *c, const char *trust_file,
                                         struct pc_http_tls *out);
struct pc_net_settings;
/* The connection settings in net/'s terms (config_net.c): the listener name (pointing
 * into c, which must outlive out), connections per broker, the SNI proxy. Fails with
 * PULSARC_ERR_INVALID_CONFIG and the detail set when the settings do not fit together or
 * with url (an SNI proxy needs TLS). */
pulsarc_result pc_client_config_net(const pulsarc_client_config_t *c,
                                    const struct pc_service_url *url, struct pc_net_settings *out);
struct pc_auth;
/* The authentication provider the configuration asks for (config_auth.c): *out is NULL
 * when none. A tls plugin's certificate files fill tls_cert_file/tls_key_file when those
 * are unset, so call this before the TLS settings are used. Fails with a detail. For the
 * client's own copy of the configuration: auth_params is wiped and dropped afterwards,
 * whatever the outcome (the provider keeps the only copy of the secret). */
pulsarc_result pc_client_config_auth(pulsarc_client_config_t *c, struct pc_auth **out);
/* Give a provider that needs HTTP (OAuth2) its client, made on rt's loop with the
 * client's TLS trust settings; the provider frees it when detached
 * (pc_auth_use_http(auth, NULL), on the loop while it still runs). No-op for the other
 * providers. A test transport's auth_http (rt->transport) fills the table instead. */
struct pc_runtime;
pulsarc_result pc_client_auth_http(const pulsarc_client_config_t *c, const struct pc_runtime *rt,
                                   struct pc_auth *auth);
/* A cluster added with pulsarc_client_config_add_failover_cluster: owned copies. */
typedef struct pc_failover_cluster {
    char *url;
    char *auth_plugin;          /* NULL: no authentication */
    char *auth_params;          /* a secret: wiped when freed; NULL in a client's copy
                                   once its provider is built */
    char *tls_trust_certs_file; /* NULL: the client's trust settings */
    /* Set with pulsarc_client_config_set_failover_cluster_auth_provider: a reference each
     * copy holds; auth_plugin is then "custom:<its method>" (for dumps) and auth_params
     * NULL. */
    pc_auth_custom_t *auth_custom;
} pc_failover_cluster_t;
/* The clusters' share of copy, clear and dump (config_failover.c). */
int pc_client_config_copy_failover(pulsarc_client_config_t *dst,
                                   const pulsarc_client_config_t *src);
void pc_client_config_clear_failover(pulsarc_client_config_t *c);
/* failoverCluster.N.* lines, written into buf as snprintf writes (buf may be NULL when
 * len is 0); returns the length needed. Secrets only as set or not. */
size_t pc_client_config_dump_failover(const pulsarc_client_config_t *c, char *buf, size_t len);
/* A failover cluster's own authentication provider (config_auth.c): over its custom
 * provider when it has one, else from its plugin; *out NULL when it has neither. The
 * client's credentials and client certificate are never used for it; a tls
 * plugin's certificate files go to *files. Fails with a detail naming the cluster. */
pulsarc_result pc_cluster_config_auth(const pc_failover_cluster_t *fc, const pc_clock_t *clock,
                                      struct pc_auth **out, pc_auth_tls_files_t *files);
/* A failover cluster's TLS (config_tls.c): the client's protocols, ciphers and
 * verification settings; trust_file, else the client's trust; the client certificate
 * only when cert_file is given (its own tls plugin's), never the client's. */
pulsarc_result pc_cluster_tls_new(const pulsarc_client_config_t *conf, const char *trust_file,
                                  const char *cert_file, const char *key_file,
                                  struct pc_tls_ctx **out);
/* How a failover cluster's http(s):// lookups verify the web service, by the same rule. */
void pc_cluster_http_tls(const pulsarc_client_config_t *conf, const char *trust_file,
                         const char *cert_file, const char *key_file, pc_http_tls_t *out);
/* The client's own http(s):// lookups: its trust and client certificate. */
void pc_client_http_tls(const pulsarc_client_config_t *conf, pc_http_tls_t *out);
/* The key sources' share of copy and clear (crypto_key_reader.c). */
int pc_producer_config_copy_keys(pulsarc_producer_config_t *dst,
                                 const pulsarc_producer_config_t *src);
void pc_producer_config_clear_keys(pulsarc_producer_config_t *c);
/* A pc_key_fetch_fn over a producer configuration (ctx): the file or PEM added for the
 * name, else the key reader callback (crypto_key_reader.c). */
pulsarc_result pc_producer_config_fetch_key(void *ctx, const char *name, pc_key_material_t *out);
/* What each layer needs of a producer configuration, in its own terms. */
void pc_producer_config_pp(const pulsarc_producer_config_t *c, pc_pp_settings_t *out);
void pc_producer_config_router(const pulsarc_producer_config_t *c, pc_router_settings_t *out);
/* The spool's settings from the configuration (dir NULL: no spool); strings borrowed from
 * c. The rest (topic, logger, hand-over) is the handle's to fill. */
void pc_producer_config_spool(const pulsarc_producer_config_t *c, pc_spool_settings_t *out);

#endif
