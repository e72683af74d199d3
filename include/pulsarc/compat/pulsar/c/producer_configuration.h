/** @file
 * pulsarc-compat: a producer's configuration, with libpulsar's defaults: send timeout
 * 30000 ms, 1000 pending messages per partition and 50000 across partitions, batching on
 * (1000 messages, 128 KiB, 10 ms), no compression, keys hashed with BoostHash (the Boost
 * 1.82+ string hash of libpulsar's current packages; PULSARC_COMPAT_BOOST_HASH in the
 * environment, or pulsarc_compat_producer_configuration_set with hashingScheme, picks
 * another), keyless messages spread round robin (libpulsar 3.8 and later; up to 3.7 the
 * default was pulsar_UseSinglePartition). A value libpulsar refuses by throwing (a
 * negative maximum, batching of fewer than 2 messages) is ignored with a warning in the
 * log, and the setting keeps its value. */
#ifndef PULSARC_COMPAT_PULSAR_C_PRODUCER_CONFIGURATION_H
#define PULSARC_COMPAT_PULSAR_C_PRODUCER_CONFIGURATION_H

#include <pulsar/c/message_router.h>
#include <pulsar/c/string_map.h>
#include <pulsar/defines.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Where keyless messages go on a partitioned topic. */
typedef enum {
    pulsar_UseSinglePartition,     /**< one partition, picked at random per producer */
    pulsar_RoundRobinDistribution, /**< each partition in turn (a batch's worth each) */
    pulsar_CustomPartition         /**< the message router's choice */
} pulsar_partitions_routing_mode;

/** The hash that maps a key to its partition. */
typedef enum {
    pulsar_Murmur3_32Hash, /**< Murmur3 32-bit, as the Java client's Murmur3 scheme */
    pulsar_BoostHash,      /**< boost::hash<std::string> (see the file's comment) */
    pulsar_JavaStringHash  /**< String.hashCode (Java's, over UTF-16 for non-ASCII keys) */
} pulsar_hashing_scheme;

/** How payloads are compressed. */
typedef enum {
    pulsar_CompressionNone = 0,
    pulsar_CompressionLZ4 = 1,
    pulsar_CompressionZLib = 2,
    pulsar_CompressionZSTD = 3,
    pulsar_CompressionSNAPPY = 4
} pulsar_compression_type;

/** Schema types, numbered as libpulsar numbers them. */
typedef enum {
    pulsar_None = 0,
    pulsar_String = 1,
    pulsar_Json = 2,
    pulsar_Protobuf = 3,
    pulsar_Avro = 4,
    pulsar_Boolean = 5,
    pulsar_Int8 = 6,
    pulsar_Int16 = 7,
    pulsar_Int32 = 8,
    pulsar_Int64 = 9,
    pulsar_Float32 = 10,
    pulsar_Float64 = 11,
    pulsar_KeyValue = 15,
    pulsar_Bytes = -1,
    pulsar_AutoConsume = -3,
    pulsar_AutoPublish = -4,
} pulsar_schema_type;

/** What happens to a message whose encryption fails. */
typedef enum {
    pulsar_ProducerFail, /**< it fails with pulsar_result_CryptoError (the default) */
    pulsar_ProducerSend  /**< it is sent unencrypted */
} pulsar_producer_crypto_failure_action;

/** Who may publish on the topic beside this producer. */
typedef enum {
    pulsar_ProducerAccessModeShared = 0,              /**< anyone (the default) */
    pulsar_ProducerAccessModeExclusive = 1,           /**< fail while another producer is on */
    pulsar_ProducerAccessModeWaitForExclusive = 2,    /**< wait until the others are gone */
    pulsar_ProducerAccessModeExclusiveWithFencing = 3 /**< fence the others out */
} pulsar_producer_access_mode;

/** A producer configuration, opaque. */
typedef struct _pulsar_producer_configuration pulsar_producer_configuration_t;
/** (Declared as libpulsar declares it; no function takes it.) */
typedef struct _pulsar_crypto_key_reader pulsar_crypto_key_reader;

/** A configuration with libpulsar's defaults (NULL when out of memory). */
PULSAR_PUBLIC pulsar_producer_configuration_t *pulsar_producer_configuration_create(void);
/** Frees it (NULL: nothing). */
PULSAR_PUBLIC void pulsar_producer_configuration_free(pulsar_producer_configuration_t *conf);
/** A fixed producer name (needed to resume deduplication). */
PULSAR_PUBLIC void
pulsar_producer_configuration_set_producer_name(pulsar_producer_configuration_t *conf,
                                                const char *producerName);
/** The name set, "" when unset. */
PULSAR_PUBLIC const char *
pulsar_producer_configuration_get_producer_name(pulsar_producer_configuration_t *conf);
/** A message fails with pulsar_result_Timeout without a receipt after this many
 * milliseconds (default 30000); 0 or less: never. */
PULSAR_PUBLIC void
pulsar_producer_configuration_set_send_timeout(pulsar_producer_configuration_t *conf,
                                               int sendTimeoutMs);
/** The send timeout in milliseconds. */
PULSAR_PUBLIC int
pulsar_producer_configuration_get_send_timeout(pulsar_producer_configuration_t *conf);
/** The first automatic sequence id is this + 1 (unset: go on from the broker's last). */
PULSAR_PUBLIC void
pulsar_producer_configuration_set_initial_sequence_id(pulsar_producer_configuration_t *conf,
                                                      int64_t initialSequenceId);
/** The initial sequence id, -1 when unset. */
PULSAR_PUBLIC int64_t
pulsar_producer_configuration_get_initial_sequence_id(pulsar_producer_configuration_t *conf);
/** The compression codec. */
PULSAR_PUBLIC void
pulsar_producer_configuration_set_compression_type(pulsar_producer_configuration_t *conf,
                                                   pulsar_compression_type compressionType);
/** The compression codec. */
PULSAR_PUBLIC pulsar_compression_type
pulsar_producer_configuration_get_compression_type(pulsar_producer_configuration_t *conf);
/** The schema the producer registers: type, name, definition (NUL-terminated text) and
 * properties (copied; NULL: none). pulsar_KeyValue and pulsar_AutoConsume make producer
 * creation fail with pulsar_result_InvalidConfiguration. */
PULSAR_PUBLIC void
pulsar_producer_configuration_set_schema_info(pulsar_producer_configuration_t *conf,
                                              pulsar_schema_type schemaType, const char *name,
                                              const char *schema, pulsar_string_map_t *properties);
/** Messages waiting for a receipt, per partition (default 1000; 0: no limit). */
PULSAR_PUBLIC void
pulsar_producer_configuration_set_max_pending_messages(pulsar_producer_configuration_t *conf,
                                                       int maxPendingMessages);
/** The per-partition limit. */
PULSAR_PUBLIC int
pulsar_producer_configuration_get_max_pending_messages(pulsar_producer_configuration_t *conf);
/** Messages waiting for a receipt over all partitions (default 50000; 0: no limit). */
PULSAR_PUBLIC void pulsar_producer_configuration_set_max_pending_messages_across_partitions(
    pulsar_producer_configuration_t *conf, int maxPendingMessagesAcrossPartitions);
/** The limit over all partitions. */
PULSAR_PUBLIC int pulsar_producer_configuration_get_max_pending_messages_across_partitions(
    pulsar_producer_configuration_t *conf);
/** Where keyless messages go (see pulsar_partitions_routing_mode). */
PULSAR_PUBLIC void
pulsar_producer_configuration_set_partitions_routing_mode(pulsar_producer_configuration_t *conf,
                                                          pulsar_partitions_routing_mode mode);
/** The routing mode. */
PULSAR_PUBLIC pulsar_partitions_routing_mode
pulsar_producer_configuration_get_partitions_routing_mode(pulsar_producer_configuration_t *conf);
/** A custom router, for keyed and keyless messages (and the mode pulsar_CustomPartition). */
PULSAR_PUBLIC void
pulsar_producer_configuration_set_message_router(pulsar_producer_configuration_t *conf,
                                                 pulsar_message_router router, void *ctx);
/** The hash of keys. */
PULSAR_PUBLIC void
pulsar_producer_configuration_set_hashing_scheme(pulsar_producer_configuration_t *conf,
                                                 pulsar_hashing_scheme scheme);
/** The hash of keys. */
PULSAR_PUBLIC pulsar_hashing_scheme
pulsar_producer_configuration_get_hashing_scheme(pulsar_producer_configuration_t *conf);
/** Nonzero: connect a partition at its first message. */
PULSAR_PUBLIC void pulsar_producer_configuration_set_lazy_start_partitioned_producers(
    pulsar_producer_configuration_t *conf, int useLazyStartPartitionedProducers);
/** 1 with lazy start. */
PULSAR_PUBLIC int pulsar_producer_configuration_get_lazy_start_partitioned_producers(
    pulsar_producer_configuration_t *conf);
/** Nonzero: a send waits for room instead of failing with ProducerQueueIsFull or
 * MemoryBufferIsFull (never on the client's loop thread, where it fails). */
PULSAR_PUBLIC void
pulsar_producer_configuration_set_block_if_queue_full(pulsar_producer_configuration_t *conf,
                                                      int blockIfQueueFull);
/** 1 when sends wait for room. */
PULSAR_PUBLIC int
pulsar_producer_configuration_get_block_if_queue_full(pulsar_producer_configuration_t *conf);
/** Nonzero (the default): group messages into batches. */
PULSAR_PUBLIC void
pulsar_producer_configuration_set_batching_enabled(pulsar_producer_configuration_t *conf,
                                                   int batchingEnabled);
/** 1 with batching. */
PULSAR_PUBLIC int
pulsar_producer_configuration_get_batching_enabled(pulsar_producer_configuration_t *conf);
/** A batch is sent when it holds this many messages (2 or more; default 1000). */
PULSAR_PUBLIC void
pulsar_producer_configuration_set_batching_max_messages(pulsar_producer_configuration_t *conf,
                                                        unsigned int batchingMaxMessages);
/** The batch's message limit. */
PULSAR_PUBLIC unsigned int
pulsar_producer_configuration_get_batching_max_messages(pulsar_producer_configuration_t *conf);
/** A batch is sent when it holds this many bytes (default 131072). */
PULSAR_PUBLIC void pulsar_producer_configuration_set_batching_max_allowed_size_in_bytes(
    pulsar_producer_configuration_t *conf, unsigned long batchingMaxAllowedSizeInBytes);
/** The batch's byte limit. */
PULSAR_PUBLIC unsigned long pulsar_producer_configuration_get_batching_max_allowed_size_in_bytes(
    pulsar_producer_configuration_t *conf);
/** A batch is sent this many milliseconds after its first message (default 10). */
PULSAR_PUBLIC void pulsar_producer_configuration_set_batching_max_publish_delay_ms(
    pulsar_producer_configuration_t *conf, unsigned long batchingMaxPublishDelayMs);
/** The batch's delay. */
PULSAR_PUBLIC unsigned long pulsar_producer_configuration_get_batching_max_publish_delay_ms(
    pulsar_producer_configuration_t *conf);
/** A property of the producer, sent when it registers. */
PULSAR_PUBLIC void pulsar_producer_configuration_set_property(pulsar_producer_configuration_t *conf,
                                                              const char *name, const char *value);
/** 1 when messages will be encrypted: key names added and a key reader set. */
PULSAR_PUBLIC int pulsar_producer_is_encryption_enabled(pulsar_producer_configuration_t *conf);
/** Reads the public key of every key name from public_key_path (a PEM file, read again
 * when the key is needed); private_key_path is for consumers and not used. */
PULSAR_PUBLIC void
pulsar_producer_configuration_set_default_crypto_key_reader(pulsar_producer_configuration_t *conf,
                                                            const char *public_key_path,
                                                            const char *private_key_path);
/** What happens when encryption fails. */
PULSAR_PUBLIC pulsar_producer_crypto_failure_action
pulsar_producer_configuration_get_crypto_failure_action(pulsar_producer_configuration_t *conf);
/** What happens when encryption fails. */
PULSAR_PUBLIC void pulsar_producer_configuration_set_crypto_failure_action(
    pulsar_producer_configuration_t *conf,
    pulsar_producer_crypto_failure_action cryptoFailureAction);
/** Adds a key name to encrypt for (with a key reader: every message is encrypted). */
PULSAR_PUBLIC void
pulsar_producer_configuration_set_encryption_key(pulsar_producer_configuration_t *conf,
                                                 const char *key);
/** Nonzero: split payloads above the broker's limit into chunks. */
PULSAR_PUBLIC void
pulsar_producer_configuration_set_chunking_enabled(pulsar_producer_configuration_t *conf,
                                                   int chunkingEnabled);
/** 1 with chunking. */
PULSAR_PUBLIC int
pulsar_producer_configuration_is_chunking_enabled(pulsar_producer_configuration_t *conf);
/** The access mode. */
PULSAR_PUBLIC pulsar_producer_access_mode
pulsar_producer_configuration_get_access_mode(pulsar_producer_configuration_t *conf);
/** The access mode. */
PULSAR_PUBLIC void
pulsar_producer_configuration_set_access_mode(pulsar_producer_configuration_t *conf,
                                              pulsar_producer_access_mode accessMode);

#ifdef __cplusplus
}
#endif

#endif
