/* pulsar_producer_configuration_t: libpulsar's settings and defaults, turned into
 * pulsarc's keys and typed setters when a producer is created. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compat/compat.h"

pulsar_producer_configuration_t *pulsar_producer_configuration_create(void)
{
    pulsar_producer_configuration_t *conf = calloc(1, sizeof *conf);
    if (!conf)
        return NULL;
    conf->send_timeout_ms = 30000;
    conf->compression = pulsar_CompressionNone;
    conf->max_pending = 1000;
    conf->max_pending_across = 50000;
    conf->routing = pulsar_RoundRobinDistribution;
    conf->hashing = pulsar_BoostHash;
    conf->batching = 1;
    conf->batch_messages = 1000;
    conf->batch_bytes = 128 * 1024;
    conf->batch_delay_ms = 10;
    conf->crypto_failure = pulsar_ProducerFail;
    conf->access_mode = pulsar_ProducerAccessModeShared;
    return conf;
}

void pulsar_producer_configuration_free(pulsar_producer_configuration_t *conf)
{
    if (!conf)
        return;
    free(conf->name);
    free(conf->schema_name);
    free(conf->schema_definition);
    pulsar_string_map_free(conf->schema_properties);
    pulsar_string_map_free(conf->properties);
    free(conf->public_key_path);
    pulsar_string_list_free(conf->encryption_keys);
    pc_compat_kvs_clear(&conf->extra);
    free(conf);
}

void pulsar_producer_configuration_set_producer_name(pulsar_producer_configuration_t *conf,
                                                     const char *producerName)
{
    if (conf)
        pc_compat_set_str(&conf->name, producerName);
}

const char *pulsar_producer_configuration_get_producer_name(pulsar_producer_configuration_t *conf)
{
    return conf && conf->name ? conf->name : "";
}

void pulsar_producer_configuration_set_send_timeout(pulsar_producer_configuration_t *conf,
                                                    int sendTimeoutMs)
{
    if (conf)
        conf->send_timeout_ms = sendTimeoutMs;
}

int pulsar_producer_configuration_get_send_timeout(pulsar_producer_configuration_t *conf)
{
    return conf ? conf->send_timeout_ms : 30000;
}

void pulsar_producer_configuration_set_initial_sequence_id(pulsar_producer_configuration_t *conf,
                                                           int64_t initialSequenceId)
{
    if (!conf)
        return;
    conf->has_initial_sequence_id = 1;
    conf->initial_sequence_id = initialSequenceId;
}

int64_t pulsar_producer_configuration_get_initial_sequence_id(pulsar_producer_configuration_t *conf)
{
    return conf && conf->has_initial_sequence_id ? conf->initial_sequence_id : -1;
}

void pulsar_producer_configuration_set_compression_type(pulsar_producer_configuration_t *conf,
                                                        pulsar_compression_type compressionType)
{
    if (conf && compressionType >= pulsar_CompressionNone &&
        compressionType <= pulsar_CompressionSNAPPY)
        conf->compression = compressionType;
}

pulsar_compression_type
pulsar_producer_configuration_get_compression_type(pulsar_producer_configuration_t *conf)
{
    return conf ? conf->compression : pulsar_CompressionNone;
}

void pulsar_producer_configuration_set_schema_info(pulsar_producer_configuration_t *conf,
                                                   pulsar_schema_type schemaType, const char *name,
                                                   const char *schema,
                                                   pulsar_string_map_t *properties)
{
    if (!conf)
        return;
    pulsar_string_map_t *props = properties ? pc_compat_map_copy(properties) : NULL;
    if ((properties && !props) || pc_compat_set_str(&conf->schema_name, name ? name : "") != 0 ||
        pc_compat_set_str(&conf->schema_definition, schema ? schema : "") != 0) {
        pulsar_string_map_free(props);
        return;
    }
    pulsar_string_map_free(conf->schema_properties);
    conf->schema_properties = props;
    conf->schema_type = schemaType;
    conf->has_schema = 1;
}

void pulsar_producer_configuration_set_max_pending_messages(pulsar_producer_configuration_t *conf,
                                                            int maxPendingMessages)
{
    if (conf && maxPendingMessages >= 0)
        conf->max_pending = maxPendingMessages;
}

int pulsar_producer_configuration_get_max_pending_messages(pulsar_producer_configuration_t *conf)
{
    return conf ? conf->max_pending : 1000;
}

void pulsar_producer_configuration_set_max_pending_messages_across_partitions(
    pulsar_producer_configuration_t *conf, int maxPendingMessagesAcrossPartitions)
{
    if (conf && maxPendingMessagesAcrossPartitions >= 0)
        conf->max_pending_across = maxPendingMessagesAcrossPartitions;
}

int pulsar_producer_configuration_get_max_pending_messages_across_partitions(
    pulsar_producer_configuration_t *conf)
{
    return conf ? conf->max_pending_across : 50000;
}

void pulsar_producer_configuration_set_partitions_routing_mode(
    pulsar_producer_configuration_t *conf, pulsar_partitions_routing_mode mode)
{
    if (conf && mode >= pulsar_UseSinglePartition && mode <= pulsar_CustomPartition)
        conf->routing = mode;
}

pulsar_partitions_routing_mode
pulsar_producer_configuration_get_partitions_routing_mode(pulsar_producer_configuration_t *conf)
{
    return conf ? conf->routing : pulsar_RoundRobinDistribution;
}

void pulsar_producer_configuration_set_message_router(pulsar_producer_configuration_t *conf,
                                                      pulsar_message_router router, void *ctx)
{
    if (!conf)
        return;
    /* As libpulsar: a router also switches the mode to custom. */
    conf->router = router;
    conf->router_ctx = ctx;
    conf->routing = pulsar_CustomPartition;
}

void pulsar_producer_configuration_set_hashing_scheme(pulsar_producer_configuration_t *conf,
                                                      pulsar_hashing_scheme scheme)
{
    if (conf && scheme >= pulsar_Murmur3_32Hash && scheme <= pulsar_JavaStringHash)
        conf->hashing = scheme;
}

pulsar_hashing_scheme
pulsar_producer_configuration_get_hashing_scheme(pulsar_producer_configuration_t *conf)
{
    return conf ? conf->hashing : pulsar_BoostHash;
}

void pulsar_producer_configuration_set_lazy_start_partitioned_producers(
    pulsar_producer_configuration_t *conf, int useLazyStartPartitionedProducers)
{
    if (conf)
        conf->lazy_start = useLazyStartPartitionedProducers != 0;
}

int pulsar_producer_configuration_get_lazy_start_partitioned_producers(
    pulsar_producer_configuration_t *conf)
{
    return conf ? conf->lazy_start : 0;
}

void pulsar_producer_configuration_set_block_if_queue_full(pulsar_producer_configuration_t *conf,
                                                           int blockIfQueueFull)
{
    if (conf)
        conf->block_if_full = blockIfQueueFull != 0;
}

int pulsar_producer_configuration_get_block_if_queue_full(pulsar_producer_configuration_t *conf)
{
    return conf ? conf->block_if_full : 0;
}

void pulsar_producer_configuration_set_batching_enabled(pulsar_producer_configuration_t *conf,
                                                        int batchingEnabled)
{
    if (conf)
        conf->batching = batchingEnabled != 0;
}

int pulsar_producer_configuration_get_batching_enabled(pulsar_producer_configuration_t *conf)
{
    return conf ? conf->batching : 1;
}

void pulsar_producer_configuration_set_batching_max_messages(pulsar_producer_configuration_t *conf,
                                                             unsigned int batchingMaxMessages)
{
    /* libpulsar refuses 0 and 1 (it throws). */
    if (conf && batchingMaxMessages > 1)
        conf->batch_messages = batchingMaxMessages;
}

unsigned int
pulsar_producer_configuration_get_batching_max_messages(pulsar_producer_configuration_t *conf)
{
    return conf ? conf->batch_messages : 1000;
}

void pulsar_producer_configuration_set_batching_max_allowed_size_in_bytes(
    pulsar_producer_configuration_t *conf, unsigned long batchingMaxAllowedSizeInBytes)
{
    if (conf)
        conf->batch_bytes = batchingMaxAllowedSizeInBytes;
}

unsigned long pulsar_producer_configuration_get_batching_max_allowed_size_in_bytes(
    pulsar_producer_configuration_t *conf)
{
    return conf ? conf->batch_bytes : 128 * 1024;
}

void pulsar_producer_configuration_set_batching_max_publish_delay_ms(
    pulsar_producer_configuration_t *conf, unsigned long batchingMaxPublishDelayMs)
{
    if (conf)
        conf->batch_delay_ms = batchingMaxPublishDelayMs;
}

unsigned long pulsar_producer_configuration_get_batching_max_publish_delay_ms(
    pulsar_producer_configuration_t *conf)
{
    return conf ? conf->batch_delay_ms : 10;
}

void pulsar_producer_configuration_set_property(pulsar_producer_configuration_t *conf,
                                                const char *name, const char *value)
{
    if (!conf || !name || !value)
        return;
    if (!conf->properties && !(conf->properties = pulsar_string_map_create()))
        return;
    pulsar_string_map_put(conf->properties, name, value);
}

int pulsar_producer_is_encryption_enabled(pulsar_producer_configuration_t *conf)
{
    return conf && conf->public_key_path && pulsar_string_list_size(conf->encryption_keys) > 0;
}

void pulsar_producer_configuration_set_default_crypto_key_reader(
    pulsar_producer_configuration_t *conf, const char *public_key_path,
    const char *private_key_path)
{
    (void)private_key_path; /* a consumer's: producers encrypt with public keys only */
    if (conf)
        pc_compat_set_str(&conf->public_key_path, public_key_path);
}

pulsar_producer_crypto_failure_action
pulsar_producer_configuration_get_crypto_failure_action(pulsar_producer_configuration_t *conf)
{
    return conf ? conf->crypto_failure : pulsar_ProducerFail;
}

void pulsar_producer_configuration_set_crypto_failure_action(
    pulsar_producer_configuration_t *conf,
    pulsar_producer_crypto_failure_action cryptoFailureAction)
{
    if (conf &&
        (cryptoFailureAction == pulsar_ProducerFail || cryptoFailureAction == pulsar_ProducerSend))
        conf->crypto_failure = cryptoFailureAction;
}

void pulsar_producer_configuration_set_encryption_key(pulsar_producer_configuration_t *conf,
                                                      const char *key)
{
    if (!conf || !key || !*key)
        return;
    if (!conf->encryption_keys && !(conf->encryption_keys = pulsar_string_list_create()))
        return;
    for (int i = 0; i < pulsar_string_list_size(conf->encryption_keys); i++)
        if (strcmp(pulsar_string_list_get(conf->encryption_keys, i), key) == 0)
            return; /* a set, as libpulsar's */
    pulsar_string_list_append(conf->encryption_keys, key);
}

void pulsar_producer_configuration_set_chunking_enabled(pulsar_producer_configuration_t *conf,
                                                        int chunkingEnabled)
{
    if (conf)
        conf->chunking = chunkingEnabled != 0;
}

int pulsar_producer_configuration_is_chunking_enabled(pulsar_producer_configuration_t *conf)
{
    return conf ? conf->chunking : 0;
}

pulsar_producer_access_mode
pulsar_producer_configuration_get_access_mode(pulsar_producer_configuration_t *conf)
{
    return conf ? conf->access_mode : pulsar_ProducerAccessModeShared;
}

void pulsar_producer_configuration_set_access_mode(pulsar_producer_configuration_t *conf,
                                                   pulsar_producer_access_mode accessMode)
{
    if (conf && accessMode >= pulsar_ProducerAccessModeShared &&
        accessMode <= pulsar_ProducerAccessModeExclusiveWithFencing)
        conf->access_mode = accessMode;
}

pulsar_result pulsarc_compat_producer_configuration_set(pulsar_producer_configuration_t *conf,
                                                        const char *key, const char *value)
{
    if (!conf || !key || !value)
        return pulsar_result_InvalidConfiguration;
    pulsarc_producer_config_t *scratch = pulsarc_producer_config_new();
    if (!scratch)
        return pulsar_result_UnknownError;
    pulsarc_result res = pulsarc_producer_config_set(scratch, key, value);
    pulsarc_producer_config_free(scratch);
    if (res != PULSARC_OK)
        return pc_compat_result(res);
    return pc_compat_kvs_put(&conf->extra, key, value) == 0 ? pulsar_result_Ok
                                                            : pulsar_result_UnknownError;
}

/* ---- what a producer is created with ------------------------------------------------ */

static pulsarc_result set_num(pulsarc_producer_config_t *c, const char *key, long long v)
{
    char text[32];
    snprintf(text, sizeof text, "%lld", v);
    return pulsarc_producer_config_set(c, key, text);
}

static pulsarc_result set_bool(pulsarc_producer_config_t *c, const char *key, int v)
{
    return pulsarc_producer_config_set(c, key, v ? "true" : "false");
}

/* The Boost release whose string hash pulsar_BoostHash means: Boost 1.82+ (libpulsar's own
 * packages from 3.5.0 on), unless PULSARC_COMPAT_BOOST_HASH names another scheme. */
static const char *boost_scheme(void)
{
    const char *env = getenv("PULSARC_COMPAT_BOOST_HASH");
    return env && *env ? env : "boost";
}

static pulsarc_result apply_schema(const pulsar_producer_configuration_t *conf,
                                   pulsarc_producer_config_t *c)
{
    pulsarc_schema_type type;
    switch (conf->schema_type) {
    case pulsar_None:
    case pulsar_Bytes:
        return PULSARC_OK; /* no schema is registered for bytes */
    case pulsar_AutoPublish:
        type = PULSARC_SCHEMA_AUTO_PRODUCE;
        break;
    case pulsar_String:
    case pulsar_Json:
    case pulsar_Protobuf:
    case pulsar_Avro:
    case pulsar_Boolean:
    case pulsar_Int8:
    case pulsar_Int16:
    case pulsar_Int32:
    case pulsar_Int64:
    case pulsar_Float32:
    case pulsar_Float64:
        type = (pulsarc_schema_type)conf->schema_type; /* the protocol's numbers, alike */
        break;
    default: /* KeyValue (its two parts are not expressible here), AutoConsume */
        return PULSARC_ERR_INVALID_CONFIG;
    }
    pulsarc_schema_t *schema = NULL;
    const char *def = conf->schema_definition ? conf->schema_definition : "";
    pulsarc_result res = type == PULSARC_SCHEMA_AUTO_PRODUCE
                             ? pulsarc_schema_new_primitive(type, &schema)
                             : pulsarc_schema_new(type,
                                                  conf->schema_name && *conf->schema_name
                                                      ? conf->schema_name
                                                      : NULL,
                                                  def, strlen(def), &schema);
    for (size_t i = 0;
         res == PULSARC_OK && conf->schema_properties && i < conf->schema_properties->n; i++)
        res = pulsarc_schema_set_property(schema, conf->schema_properties->keys[i],
                                          conf->schema_properties->values[i]);
    if (res == PULSARC_OK)
        res = pulsarc_producer_config_set_schema(c, schema);
    pulsarc_schema_free(schema);
    return res;
}

pulsarc_result pc_compat_producer_config(const pulsar_producer_configuration_t *conf,
                                         const pulsar_client_t *client,
                                         pulsarc_producer_config_t **out, pc_compat_router **router)
{
    static const char *const codecs[] = { "none", "lz4", "zlib", "zstd", "snappy" };
    static const char *const access[] = { "shared", "exclusive", "wait_for_exclusive",
                                          "exclusive_with_fencing" };
    pulsar_producer_configuration_t *defaults = NULL;
    *router = NULL;
    if (!conf && !(conf = defaults = pulsar_producer_configuration_create()))
        return PULSARC_ERR_NO_MEMORY;
    pulsarc_producer_config_t *c = pulsarc_producer_config_new();
    pulsarc_result res = c ? PULSARC_OK : PULSARC_ERR_NO_MEMORY;
    if (res == PULSARC_OK && conf->name)
        res = pulsarc_producer_config_set(c, "producerName", conf->name);
    if (res == PULSARC_OK) /* libpulsar: 0 or less waits for ever, as pulsarc's 0 */
        res = set_num(c, "sendTimeoutMs", conf->send_timeout_ms > 0 ? conf->send_timeout_ms : 0);
    if (res == PULSARC_OK && conf->has_initial_sequence_id)
        res = set_num(c, "initialSequenceId", conf->initial_sequence_id);
    if (res == PULSARC_OK)
        res = pulsarc_producer_config_set(c, "compressionType", codecs[conf->compression]);
    if (res == PULSARC_OK)
        res = set_num(c, "maxPendingMessages", conf->max_pending);
    if (res == PULSARC_OK)
        res = set_num(c, "maxPendingMessagesAcrossPartitions", conf->max_pending_across);
    if (res == PULSARC_OK)
        res = set_bool(c, "lazyStartPartitionedProducers", conf->lazy_start);
    if (res == PULSARC_OK)
        res = set_bool(c, "blockIfQueueFull", conf->block_if_full);
    if (res == PULSARC_OK)
        res = set_bool(c, "batchingEnabled", conf->batching);
    if (res == PULSARC_OK)
        res = set_num(c, "batchingMaxMessages", conf->batch_messages);
    if (res == PULSARC_OK)
        res = set_num(c, "batchingMaxBytes", (long long)conf->batch_bytes);
    if (res == PULSARC_OK)
        res = set_num(c, "batchingMaxPublishDelayMs", (long long)conf->batch_delay_ms);
    if (res == PULSARC_OK)
        res = set_bool(c, "chunkingEnabled", conf->chunking);
    if (res == PULSARC_OK)
        res = pulsarc_producer_config_set(c, "accessMode", access[conf->access_mode]);
    if (res == PULSARC_OK)
        res = pulsarc_producer_config_set(c, "cryptoFailureAction",
                                          conf->crypto_failure == pulsar_ProducerSend ? "send"
                                                                                      : "fail");
    if (res == PULSARC_OK)
        res = pulsarc_producer_config_set(c, "hashingScheme",
                                          conf->hashing == pulsar_Murmur3_32Hash ? "murmur3"
                                          : conf->hashing == pulsar_JavaStringHash
                                              ? "java"
                                              : boost_scheme());
    if (res == PULSARC_OK && conf->routing != pulsar_CustomPartition)
        res = pulsarc_producer_config_set(c, "messageRoutingMode",
                                          conf->routing == pulsar_UseSinglePartition
                                              ? "single"
                                              : "round_robin");
    if (res == PULSARC_OK && conf->routing == pulsar_CustomPartition) {
        if (!conf->router) {
            res = PULSARC_ERR_INVALID_CONFIG; /* custom routing without a router */
        } else if (!(*router = malloc(sizeof **router))) {
            res = PULSARC_ERR_NO_MEMORY;
        } else {
            **router = (pc_compat_router){ .fn = conf->router, .ctx = conf->router_ctx };
            res = pulsarc_producer_config_set_router(c, pc_compat_route, *router);
        }
    }
    if (res == PULSARC_OK) {
        unsigned int every = client ? client->partitions_update_s : 60;
        res = set_bool(c, "autoUpdatePartitions", every > 0);
        if (res == PULSARC_OK && every > 0)
            res = set_num(c, "autoUpdatePartitionsIntervalSeconds", every > 86400 ? 86400 : every);
    }
    for (size_t i = 0; res == PULSARC_OK && conf->properties && i < conf->properties->n; i++)
        res = pulsarc_producer_config_set_property(c, conf->properties->keys[i],
                                                   conf->properties->values[i]);
    if (res == PULSARC_OK && conf->has_schema)
        res = apply_schema(conf, c);
    /* As libpulsar: messages are encrypted only with both key names and a key reader. */
    if (res == PULSARC_OK && conf->public_key_path)
        for (int i = 0; res == PULSARC_OK && i < pulsar_string_list_size(conf->encryption_keys);
             i++)
            res = pulsarc_producer_config_add_encryption_key_file(
                c, pulsar_string_list_get(conf->encryption_keys, i), conf->public_key_path);
    for (size_t i = 0; res == PULSARC_OK && i < conf->extra.n; i++)
        res = pulsarc_producer_config_set(c, conf->extra.keys[i], conf->extra.values[i]);
    pulsar_producer_configuration_free(defaults);
    if (res != PULSARC_OK) {
        pulsarc_producer_config_free(c);
        free(*router);
        *router = NULL;
        return res;
    }
    *out = c;
    return PULSARC_OK;
}
