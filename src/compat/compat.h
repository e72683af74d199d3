/* pulsarc-compat's shared state: libpulsar's C handles as structs of pulsarc's public API
 * and of what libpulsar's getters must answer. Private to src/compat/. Every file of the
 * layer is one area of libpulsar's C API (client, client configuration, producer,
 * producer configuration, message, message id, authentication, string map and list,
 * results, logger, router); they use pulsarc's public API only. */
#ifndef PC_COMPAT_H
#define PC_COMPAT_H

#include <pulsar/c/authentication.h>
#include <pulsar/c/client.h>
#include <pulsar/c/client_configuration.h>
#include <pulsar/c/message.h>
#include <pulsar/c/message_id.h>
#include <pulsar/c/message_router.h>
#include <pulsar/c/producer.h>
#include <pulsar/c/producer_configuration.h>
#include <pulsar/c/result.h>
#include <pulsar/c/string_list.h>
#include <pulsar/c/string_map.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "pulsarc/pulsarc.h"

/* ---- results (result.c) ---------------------------------------------------------------- */

/* libpulsar's code for a pulsarc result. */
pulsar_result pc_compat_result(pulsarc_result res);

/* ---- helpers (result.c) ---------------------------------------------------------------- */

/* A copy of s (NULL for NULL or out of memory). */
char *pc_compat_strdup(const char *s);
/* Frees s after overwriting it (secrets). */
void pc_compat_wipe_free(char *s);
/* Replaces *slot with a copy of s (NULL clears); 0, or -1 when out of memory. */
int pc_compat_set_str(char **slot, const char *s);
/* Nonzero while a callback of the compat layer runs on this thread (the loop thread):
 * blocking calls refuse to wait there. */
int pc_compat_in_callback(void);
void pc_compat_enter_callback(void);
void pc_compat_leave_callback(void);

/* Key=value pairs kept in order (the pulsarc keys of pulsarc_extensions.h). */
typedef struct pc_compat_kvs {
    char **keys, **values;
    size_t n, cap;
} pc_compat_kvs;

int pc_compat_kvs_put(pc_compat_kvs *kvs, const char *key, const char *value);
int pc_compat_kvs_copy(pc_compat_kvs *dst, const pc_compat_kvs *src);
void pc_compat_kvs_clear(pc_compat_kvs *kvs);

/* ---- string map and list (string_map.c, string_list.c) ---------------------------------- */

struct _pulsar_string_map {
    char **keys, **values; /* sorted by key (strcmp), as std::map orders them */
    size_t n, cap;
};

struct _pulsar_string_list {
    char **items;
    size_t n, cap;
};

/* A deep copy (NULL for NULL or out of memory). */
pulsar_string_map_t *pc_compat_map_copy(const pulsar_string_map_t *map);

/* ---- authentication (authentication.c) ------------------------------------------------- */

typedef enum pc_compat_auth_kind {
    PC_COMPAT_AUTH_NONE = 0,
    PC_COMPAT_AUTH_PLUGIN,   /* a = plugin name, b = parameters */
    PC_COMPAT_AUTH_TLS,      /* a = certificate path, b = key path */
    PC_COMPAT_AUTH_TOKEN,    /* b = token */
    PC_COMPAT_AUTH_SUPPLIER, /* supplier(ctx) */
    PC_COMPAT_AUTH_BASIC,    /* a = user, b = password */
    PC_COMPAT_AUTH_OAUTH2,   /* b = parameters (JSON) */
} pc_compat_auth_kind;

typedef struct pc_compat_auth {
    pc_compat_auth_kind kind;
    char *a;
    char *b; /* the secret part: wiped when freed */
    token_supplier supplier;
    void *supplier_ctx;
} pc_compat_auth;

struct _pulsar_authentication {
    pc_compat_auth auth;
};

int pc_compat_auth_copy(pc_compat_auth *dst, const pc_compat_auth *src);
void pc_compat_auth_clear(pc_compat_auth *auth);
/* Applies auth to a pulsarc client configuration; a token supplier keeps a pointer to
 * auth, which must live as long as the client. */
pulsarc_result pc_compat_auth_apply(const pc_compat_auth *auth, pulsarc_client_config_t *conf);

/* ---- logger (logger.c) ----------------------------------------------------------------- */

typedef struct pc_compat_logger {
    int set;                                                    /* a logger was given */
    bool (*is_enabled)(pulsar_logger_level_t level, void *ctx); /* NULL: INFO and above */
    pulsar_logger log;
    void *ctx;
} pc_compat_logger;

/* Installs logger (a copy the client owns, *owned) in a pulsarc configuration. */
pulsarc_result pc_compat_logger_apply(const pc_compat_logger *logger, pulsarc_client_config_t *conf,
                                      pc_compat_logger **owned);

/* ---- client configuration and client (client_configuration.c, client.c) ---------------- */

struct _pulsar_client_configuration {
    unsigned long long memory_limit;
    int operation_timeout_s, io_threads, listener_threads, lookup_concurrency;
    unsigned int stats_interval_s, partitions_update_s, keepalive_s;
    int validate_hostname, allow_insecure, http_auth_redirect;
    char *trust_certs, *cert, *key, *listener;
    pc_compat_auth auth;
    pc_compat_logger logger;
    pc_compat_kvs extra;
};

struct _pulsar_client {
    pulsarc_client_t *client;     /* NULL when creation failed */
    pulsar_result creation_error; /* then: what producer creations answer */
    pc_compat_logger *logger;     /* owned; the pulsarc client logs through it */
    pc_compat_auth *auth;         /* owned; a token supplier's context */
    unsigned int partitions_update_s;
    atomic_int closing;
};

/* A pulsarc client configuration that says what conf says (NULL: libpulsar's defaults),
 * with client->logger and client->auth set to what the client must keep. */
pulsarc_result pc_compat_client_config(const pulsar_client_configuration_t *conf,
                                       pulsar_client_t *client, pulsarc_client_config_t **out);

/* ---- producer configuration (producer_configuration.c) --------------------------------- */

struct _pulsar_producer_configuration {
    char *name;
    int send_timeout_ms;
    int has_initial_sequence_id;
    int64_t initial_sequence_id;
    pulsar_compression_type compression;
    int has_schema;
    pulsar_schema_type schema_type;
    char *schema_name, *schema_definition;
    pulsar_string_map_t *schema_properties;
    int max_pending, max_pending_across;
    pulsar_partitions_routing_mode routing;
    pulsar_message_router router;
    void *router_ctx;
    pulsar_hashing_scheme hashing;
    int lazy_start, block_if_full, batching;
    unsigned int batch_messages;
    unsigned long batch_bytes, batch_delay_ms;
    pulsar_string_map_t *properties;
    char *public_key_path; /* the default key reader's */
    pulsar_producer_crypto_failure_action crypto_failure;
    pulsar_string_list_t *encryption_keys;
    int chunking;
    pulsar_producer_access_mode access_mode;
    pc_compat_kvs extra;
};

/* The router a producer keeps (router.c). */
typedef struct pc_compat_router {
    pulsar_message_router fn;
    void *ctx;
} pc_compat_router;

/* A pulsarc producer configuration that says what conf says (NULL: libpulsar's defaults)
 * for a producer of client; *router is set to what the producer must keep (or NULL). */
pulsarc_result pc_compat_producer_config(const pulsar_producer_configuration_t *conf,
                                         const pulsar_client_t *client,
                                         pulsarc_producer_config_t **out,
                                         pc_compat_router **router);

/* The pulsarc router callback of a compat router (router.c). */
int pc_compat_route(const pulsarc_message_t *msg, int n_partitions, void *ctx);

/* ---- messages (message.c) -------------------------------------------------------------- */

struct _pulsar_message {
    void *data; /* owned copy, or the caller's buffer when borrowed */
    size_t len;
    int borrowed;
    char *key, *ordering_key, *schema_version;
    pulsar_string_map_t *properties;
    uint64_t event_time, deliver_at;
    int64_t sequence_id; /* -1: none */
    char **clusters;
    size_t n_clusters;
    int disable_replication, null_value;
    atomic_int sent;          /* a send accepted it: libpulsar refuses a second send */
    pulsarc_message_t *built; /* what the last send gave pulsarc */
};

/* Fills msg->built from msg, for a send. */
pulsarc_result pc_compat_message_build(pulsar_message_t *msg);
/* The message being sent on this thread (for a custom router), set around each send. */
pulsar_message_t *pc_compat_sending(void);
void pc_compat_set_sending(pulsar_message_t *msg);

/* ---- message ids (message_id.c) -------------------------------------------------------- */

struct _pulsar_message_id {
    pulsarc_message_id_t *id;
    int is_static; /* earliest / latest: never freed */
};

/* A new id holding a copy of id (NULL when out of memory). */
pulsar_message_id_t *pc_compat_message_id(const pulsarc_message_id_t *id);

/* The completion of a flush or close: pulsar_close_callback and pulsar_flush_callback. */
typedef void (*pulsar_result_callback_fn)(pulsar_result res, void *ctx);

/* ---- producers (producer.c) ------------------------------------------------------------ */

struct _pulsar_producer {
    pulsarc_producer_t *producer;
    pc_compat_router *router; /* owned, or NULL */
};

#endif
