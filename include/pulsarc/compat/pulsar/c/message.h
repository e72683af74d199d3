/** @file
 * pulsarc-compat: messages. A message is built with the setters and sent once: a second
 * send of the same message fails with pulsar_result_InvalidMessage, as in libpulsar. The
 * getters read what was set (the consumer-side ones answer as for a message never
 * received: "", 0 or NULL). */
#ifndef PULSARC_COMPAT_PULSAR_C_MESSAGE_H
#define PULSARC_COMPAT_PULSAR_C_MESSAGE_H

#include <pulsar/c/string_map.h>
#include <pulsar/defines.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** A message, opaque. */
typedef struct _pulsar_message pulsar_message_t;
/** Where a message is stored (pulsar/c/message_id.h). */
typedef struct _pulsar_message_id pulsar_message_id_t;

/** An empty message (NULL when out of memory). */
PULSAR_PUBLIC pulsar_message_t *pulsar_message_create(void);
/** Makes to a copy of from (what was set, and whether it was sent). */
PULSAR_PUBLIC void pulsar_message_copy(const pulsar_message_t *from, pulsar_message_t *to);
/** Frees the message (NULL: nothing). */
PULSAR_PUBLIC void pulsar_message_free(pulsar_message_t *message);

/** The payload, copied. */
PULSAR_PUBLIC void pulsar_message_set_content(pulsar_message_t *message, const void *data,
                                              size_t size);
/** The payload, not copied: data must stay valid until the send's callback has run (or
 * the sync send returned). */
PULSAR_PUBLIC void pulsar_message_set_allocated_content(pulsar_message_t *message, void *data,
                                                        size_t size);
/** Adds (or replaces) a property. */
PULSAR_PUBLIC void pulsar_message_set_property(pulsar_message_t *message, const char *name,
                                               const char *value);
/** The key: its hash picks the partition (the producer's hashing scheme). */
PULSAR_PUBLIC void pulsar_message_set_partition_key(pulsar_message_t *message,
                                                    const char *partitionKey);
/** The ordering key, for Key_Shared subscriptions. */
PULSAR_PUBLIC void pulsar_message_set_ordering_key(pulsar_message_t *message,
                                                   const char *orderingKey);
/** The event time, milliseconds since the epoch. */
PULSAR_PUBLIC void pulsar_message_set_event_timestamp(pulsar_message_t *message,
                                                      uint64_t eventTimestamp);
/** An explicit sequence id (>= 0; a negative one is ignored, libpulsar throws). */
PULSAR_PUBLIC void pulsar_message_set_sequence_id(pulsar_message_t *message, int64_t sequenceId);
/** Deliver no earlier than now + delayMillis (the time is taken at this call, as libpulsar). */
PULSAR_PUBLIC void pulsar_message_set_deliver_after(pulsar_message_t *message,
                                                    uint64_t delayMillis);
/** Deliver no earlier than this time (milliseconds since the epoch). */
PULSAR_PUBLIC void pulsar_message_set_deliver_at(pulsar_message_t *message,
                                                 uint64_t deliveryTimestampMillis);
/** Replicate only to these clusters; size 0: as the namespace says. */
PULSAR_PUBLIC void pulsar_message_set_replication_clusters(pulsar_message_t *message,
                                                           const char **clusters, size_t size);
/** flag nonzero: replicate to no other cluster. */
PULSAR_PUBLIC void pulsar_message_disable_replication(pulsar_message_t *message, int flag);
/** A null value (a tombstone for its key on a compacted topic). */
PULSAR_PUBLIC void pulsar_message_set_null_value(pulsar_message_t *message);

/** A new map of the properties (the caller frees it with pulsar_string_map_free). */
PULSAR_PUBLIC pulsar_string_map_t *pulsar_message_get_properties(pulsar_message_t *message);
/** 1 when the property is set. */
PULSAR_PUBLIC int pulsar_message_has_property(pulsar_message_t *message, const char *name);
/** The property's value, "" when unset. */
PULSAR_PUBLIC const char *pulsar_message_get_property(pulsar_message_t *message, const char *name);
/** The payload (NULL when none). */
PULSAR_PUBLIC const void *pulsar_message_get_data(pulsar_message_t *message);
/** The payload's length. */
PULSAR_PUBLIC uint32_t pulsar_message_get_length(pulsar_message_t *message);
/** A new id (free it with pulsar_message_id_free); a message that was not received has
 * none, so this is always the id of pulsar_message_id_earliest's value. */
PULSAR_PUBLIC pulsar_message_id_t *pulsar_message_get_message_id(pulsar_message_t *message);
/** The key, "" when unset. */
PULSAR_PUBLIC const char *pulsar_message_get_partitionKey(pulsar_message_t *message);
/** 1 when a key is set. */
PULSAR_PUBLIC int pulsar_message_has_partition_key(pulsar_message_t *message);
/** The ordering key, "" when unset. */
PULSAR_PUBLIC const char *pulsar_message_get_orderingKey(pulsar_message_t *message);
/** 1 when an ordering key is set. */
PULSAR_PUBLIC int pulsar_message_has_ordering_key(pulsar_message_t *message);
/** 0 (set by the broker on received messages). */
PULSAR_PUBLIC uint64_t pulsar_message_get_publish_timestamp(pulsar_message_t *message);
/** The event time set, 0 when unset. */
PULSAR_PUBLIC uint64_t pulsar_message_get_event_timestamp(pulsar_message_t *message);
/** "" (received messages only). */
PULSAR_PUBLIC const char *pulsar_message_get_topic_name(pulsar_message_t *message);
/** 0 (received messages only). */
PULSAR_PUBLIC int pulsar_message_get_redelivery_count(pulsar_message_t *message);
/** 1 when a schema version was set with pulsar_message_set_schema_version. */
PULSAR_PUBLIC int pulsar_message_has_schema_version(pulsar_message_t *message);
/** The schema version set, "" when none. */
PULSAR_PUBLIC const char *pulsar_message_get_schemaVersion(pulsar_message_t *message);
/** Stores a schema version on the message (read back by the getters; not sent). */
PULSAR_PUBLIC void pulsar_message_set_schema_version(pulsar_message_t *message,
                                                     const char *schemaVersion);
/** "" (received messages only). */
PULSAR_PUBLIC const char *pulsar_message_get_producer_name(pulsar_message_t *message);
/** NULL (received messages only). */
PULSAR_PUBLIC const char *pulsar_message_get_replicated_from(pulsar_message_t *message);
/** 1 after pulsar_message_set_null_value (until content is set again). */
PULSAR_PUBLIC int pulsar_message_has_null_value(pulsar_message_t *message);

#ifdef __cplusplus
}
#endif

#endif
