/** @file
 * pulsarc-compat: a custom message router (pulsar_producer_configuration_set_message_router). */
#ifndef PULSARC_COMPAT_PULSAR_C_MESSAGE_ROUTER_H
#define PULSARC_COMPAT_PULSAR_C_MESSAGE_ROUTER_H

#include <pulsar/c/message.h>
#include <pulsar/defines.h>

#ifdef __cplusplus
extern "C" {
#endif

/** What a router learns of the topic, opaque. */
typedef struct _pulsar_topic_metadata pulsar_topic_metadata_t;

/** Returns the partition (0 .. partitions-1) for msg, the message given to the send (its
 * getters work). Runs on the thread that sends, before the send returns. A partition out
 * of range fails the send with pulsar_result_InvalidConfiguration. */
typedef int (*pulsar_message_router)(pulsar_message_t *msg, pulsar_topic_metadata_t *topicMetadata,
                                     void *ctx);

/** The topic's number of partitions. */
PULSAR_PUBLIC int pulsar_topic_metadata_get_num_partitions(pulsar_topic_metadata_t *topicMetadata);

#ifdef __cplusplus
}
#endif

#endif
