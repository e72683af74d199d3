/* Client and producer configuration: plain structs filled from one table per struct.
 * Each table row names a key (as the official Java client spells it), its type, bounds and
 * default; the same table validates set(), fills defaults and prints the effective config. */
#ifndef PC_CONFIG_H
#define PC_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

#include "pulsarc/pulsarc.h"

struct pulsarc_client_config {
    int64_t operation_timeout_ms;
    int64_t connection_timeout_ms;
    int64_t keepalive_interval_s;
    int64_t max_lookup_redirects;
    int64_t memory_limit_bytes;
    int64_t initial_backoff_ms;
    int64_t max_backoff_ms;
    int64_t log_level; /* pulsarc_log_level */
    pulsarc_log_cb log_cb;
    void *log_ctx;
};

struct pulsarc_producer_config {
    char *producer_name; /* NULL = assigned by the broker */
    int64_t send_timeout_ms;
    int64_t max_pending_messages;
    bool block_if_queue_full;
    int64_t initial_sequence_id;
    int64_t compression; /* pc_codec_t */
    bool batching_enabled;
    int64_t batching_max_messages;
    int64_t batching_max_bytes;
    int64_t batching_max_delay_ms;
    int64_t batcher;     /* 0 default, 1 key-based */
    bool chunking_enabled;
    int64_t chunk_max_size; /* 0 = the broker's max message size */
    int64_t routing_mode;   /* pc_routing_mode */
    int64_t hashing;        /* 0 java string hash, 1 murmur3 */
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

#endif
