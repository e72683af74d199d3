/* Client and producer configuration: plain structs filled from one table per struct.
 * Each table row names a key (as the official Java client spells it), its type, bounds and
 * default; the same table validates set(), fills defaults and prints the effective config.
 * Enumerated settings are stored as the enums of the layers that use them. */
#ifndef PC_CONFIG_H
#define PC_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

#include "codec/compression.h"
#include "producer/batch.h"
#include "producer/partition_producer.h"
#include "pulsarc/pulsarc.h"
#include "routing/router.h"

struct pulsarc_client_config {
    int64_t operation_timeout_ms;
    int64_t connection_timeout_ms;
    int64_t keepalive_interval_s;
    int64_t max_lookup_redirects;
    int64_t memory_limit_bytes;
    int64_t initial_backoff_ms;
    int64_t max_backoff_ms;
    pulsarc_log_level log_level;
    pulsarc_log_cb log_cb;
    void *log_ctx;
    /* TLS (pulsar+ssl:// and https:// service URLs). Strings are owned copies. */
    char *tls_trust_certs_file;   /* NULL: the system's trust store */
    bool tls_allow_insecure;      /* accept any certificate (off) */
    bool tls_hostname_verification; /* on by default, unlike the official clients */
    char *tls_cert_file;          /* client certificate and key, for mTLS */
    char *tls_key_file;
    char *tls_protocols;          /* e.g. "TLSv1.2,TLSv1.3"; NULL: TLS 1.2 and newer */
    char *tls_ciphers;            /* OpenSSL cipher list; NULL: OpenSSL's defaults */
    /* Authentication as the official clients configure it. auth_params is a secret. */
    char *auth_plugin;
    char *auth_params;
};

struct pulsarc_producer_config {
    char *producer_name; /* NULL = assigned by the broker */
    int64_t send_timeout_ms;
    int64_t max_pending_messages;
    bool block_if_queue_full;
    int64_t initial_sequence_id;
    pc_codec_t compression;
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
    /* Set with pulsarc_producer_config_set_router. */
    pulsarc_router_cb router;
    void *router_ctx;
};

void pc_client_config_defaults(pulsarc_client_config_t *c);
void pc_producer_config_defaults(pulsarc_producer_config_t *c);
/* Deep copies (strings duplicated). Return 0 or -1 on allocation failure. */
int pc_producer_config_copy(pulsarc_producer_config_t *dst, const pulsarc_producer_config_t *src);
void pc_producer_config_clear(pulsarc_producer_config_t *c);
int pc_client_config_copy(pulsarc_client_config_t *dst, const pulsarc_client_config_t *src);
void pc_client_config_clear(pulsarc_client_config_t *c);
/* What each layer needs of a producer configuration, in its own terms. */
void pc_producer_config_pp(const pulsarc_producer_config_t *c, pc_pp_settings_t *out);
void pc_producer_config_router(const pulsarc_producer_config_t *c, pc_router_settings_t *out);

#endif
