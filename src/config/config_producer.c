/* What a producer's configuration means for the layers below: the partition producers'
 * settings, the spool's and the router's. @locality any thread (the configuration's
 * owner). */
#include "config/config.h"

/* How often producers read their public keys again to notice a changed one. Tests move
 * the client's clock (config/test_seams.h) past it rather than shortening it. */
#define KEY_CHECK_MS 60000u

/* A batch holds at most half of a partition's pending-message window, so that the next
 * batch fills while the one before it waits for its receipt. With a window as large as a
 * batch (1000 and 1000, the defaults), each full batch would stop every sender for a round
 * trip to the broker: 100 B batched messages on the null broker went 2.6 -> 3.7 M msg/s
 * and 0.51 -> 0.40 CPU s per million with the defaults. */
static int64_t batch_messages_cap(const pulsarc_producer_config_t *c)
{
    int64_t cap = c->batching_max_messages;
    int64_t window = c->max_pending_messages;
    if (c->max_pending_across_partitions > 0 &&
        (window == 0 || c->max_pending_across_partitions < window))
        window = c->max_pending_across_partitions;
    if (window > 0 && window / 2 < cap)
        cap = window / 2 > 0 ? window / 2 : 1;
    return cap;
}

void pc_producer_config_pp(const pulsarc_producer_config_t *c, pc_pp_settings_t *out)
{
    out->producer_name = c->producer_name;
    out->initial_sequence_id = c->initial_sequence_id;
    out->send_timeout_ms = (uint64_t)c->send_timeout_ms;
    out->compression = c->compression;
    out->compression_level = c->compression_level;
    out->batching_enabled = c->batching_enabled;
    out->batcher = c->batcher;
    out->batching_max_messages = (int)batch_messages_cap(c);
    out->batching_max_bytes = (size_t)c->batching_max_bytes;
    out->batching_max_delay_ms = (uint64_t)c->batching_max_delay_ms;
    out->chunking_enabled = c->chunking_enabled;
    out->chunk_max_size = (size_t)c->chunk_max_size;
    /* Only shared producers start lazily, as in the Java and C++ clients: an exclusive one
     * must hold every partition from its creation. */
    out->lazy_start = c->lazy_start && c->access_mode == PC_ACCESS_SHARED;
    out->access_mode = c->access_mode;
    out->properties = c->properties;
    out->n_properties = c->n_properties;
    out->initial_subscription = c->initial_subscription;
    out->schema = c->schema;
    out->encryption = (pc_enc_settings_t){
        .key_names = c->encryption_keys,
        .fetch = pc_producer_config_fetch_key,
        .fetch_ctx = (void *)c,
        .failure_action = c->crypto_failure_action,
        .rotation_ms = (uint64_t)c->data_key_rotation_ms,
        .check_ms = KEY_CHECK_MS,
    };
    out->sink = NULL; /* the producer handle's, which it sets itself */
}

void pc_producer_config_spool(const pulsarc_producer_config_t *c, pc_spool_settings_t *out)
{
    *out = (pc_spool_settings_t){
        .dir = c->spool_dir,
        .producer_name = c->producer_name,
        .fsync = c->spool_fsync,
        .fsync_interval_ms = (uint64_t)c->spool_fsync_interval_ms,
        .max_bytes = (uint64_t)c->spool_max_bytes,
    };
}

void pc_producer_config_router(const pulsarc_producer_config_t *c, pc_router_settings_t *out)
{
    out->mode = c->routing_mode;
    out->hashing = c->hashing;
    out->custom = c->router;
    out->custom_ctx = c->router_ctx;
    /* With batching, keyless messages stay on one partition for a batching delay so that
     * batches fill, as the Java client does. */
    out->switch_ms = !c->batching_enabled           ? 0
                     : c->batching_max_delay_ms > 0 ? (uint64_t)c->batching_max_delay_ms
                                                    : 1;
    /* By id, a batch's worth of consecutive ids shares a partition, so batches fill. */
    out->id_run = c->batching_enabled && c->batching_max_messages > 0
                      ? (uint64_t)c->batching_max_messages
                      : 1;
}
