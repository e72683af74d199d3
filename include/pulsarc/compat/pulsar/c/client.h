/** @file
 * pulsarc-compat: the client. Producer side only: the functions below that subscribe or
 * create readers or table views, and the partition listing, are declared so that a
 * program calling them compiles and then fails to link with their names (they are not
 * defined). One process cannot load both pulsarc-compat and libpulsar: both define these
 * names. */
#ifndef PULSARC_COMPAT_PULSAR_C_CLIENT_H
#define PULSARC_COMPAT_PULSAR_C_CLIENT_H

#include <pulsar/c/client_configuration.h>
#include <pulsar/c/consumer.h>
#include <pulsar/c/consumer_configuration.h>
#include <pulsar/c/message.h>
#include <pulsar/c/message_id.h>
#include <pulsar/c/producer.h>
#include <pulsar/c/producer_configuration.h>
#include <pulsar/c/reader.h>
#include <pulsar/c/reader_configuration.h>
#include <pulsar/c/result.h>
#include <pulsar/c/string_list.h>
#include <pulsar/c/table_view.h>
#include <pulsar/c/table_view_configuration.h>
#include <pulsar/defines.h>

#ifdef __cplusplus
extern "C" {
#endif

/** A client, opaque. */
typedef struct _pulsar_client pulsar_client_t;

/** A producer creation's outcome: the producer (the caller's: pulsar_producer_free) or
 * NULL. */
typedef void (*pulsar_create_producer_callback)(pulsar_result result, pulsar_producer_t *producer,
                                                void *ctx);
/** (Consumers are not provided.) */
typedef void (*pulsar_subscribe_callback)(pulsar_result result, pulsar_consumer_t *consumer,
                                          void *ctx);
/** (Readers are not provided.) */
typedef void (*pulsar_reader_callback)(pulsar_result result, pulsar_reader_t *reader, void *ctx);
/** (Table views are not provided.) */
typedef void (*pulsar_table_view_callback)(pulsar_result result, pulsar_table_view_t *tableView,
                                           void *ctx);
/** (The partition listing is not provided.) */
typedef void (*pulsar_get_partitions_callback)(pulsar_result result,
                                               pulsar_string_list_t *partitions, void *ctx);

/** A client of the cluster at serviceUrl (pulsar://, pulsar+ssl://, http://, https://)
 * with conf (NULL: the defaults; copied). Never NULL but when out of memory: a URL or
 * setting pulsarc refuses makes every producer creation fail with the matching result
 * (pulsar_result_InvalidUrl, pulsar_result_InvalidConfiguration). */
PULSAR_PUBLIC pulsar_client_t *
pulsar_client_create(const char *serviceUrl,
                     const pulsar_client_configuration_t *clientConfiguration);
/** Creates a producer on topic with conf (NULL: the defaults) and waits for it. */
PULSAR_PUBLIC pulsar_result pulsar_client_create_producer(
    pulsar_client_t *client, const char *topic, const pulsar_producer_configuration_t *conf,
    pulsar_producer_t **producer);
/** The same without waiting: callback gets the outcome once (on the calling thread when
 * the creation cannot start, on the client's loop thread otherwise). */
PULSAR_PUBLIC void pulsar_client_create_producer_async(pulsar_client_t *client, const char *topic,
                                                       const pulsar_producer_configuration_t *conf,
                                                       pulsar_create_producer_callback callback,
                                                       void *ctx);

/** Not provided (declared only). */
PULSAR_PUBLIC pulsar_result pulsar_client_subscribe(pulsar_client_t *client, const char *topic,
                                                    const char *subscriptionName,
                                                    const pulsar_consumer_configuration_t *conf,
                                                    pulsar_consumer_t **consumer);
/** Not provided (declared only). */
PULSAR_PUBLIC void pulsar_client_subscribe_async(pulsar_client_t *client, const char *topic,
                                                 const char *subscriptionName,
                                                 const pulsar_consumer_configuration_t *conf,
                                                 pulsar_subscribe_callback callback, void *ctx);
/** Not provided (declared only). */
PULSAR_PUBLIC pulsar_result pulsar_client_subscribe_multi_topics(
    pulsar_client_t *client, const char **topics, int topicsCount, const char *subscriptionName,
    const pulsar_consumer_configuration_t *conf, pulsar_consumer_t **consumer);
/** Not provided (declared only). */
PULSAR_PUBLIC void pulsar_client_subscribe_multi_topics_async(
    pulsar_client_t *client, const char **topics, int topicsCount, const char *subscriptionName,
    const pulsar_consumer_configuration_t *conf, pulsar_subscribe_callback callback, void *ctx);
/** Not provided (declared only). */
PULSAR_PUBLIC pulsar_result pulsar_client_subscribe_pattern(
    pulsar_client_t *client, const char *topicPattern, const char *subscriptionName,
    const pulsar_consumer_configuration_t *conf, pulsar_consumer_t **consumer);
/** Not provided (declared only). */
PULSAR_PUBLIC void pulsar_client_subscribe_pattern_async(
    pulsar_client_t *client, const char *topicPattern, const char *subscriptionName,
    const pulsar_consumer_configuration_t *conf, pulsar_subscribe_callback callback, void *ctx);
/** Not provided (declared only). */
PULSAR_PUBLIC pulsar_result pulsar_client_create_reader(pulsar_client_t *client, const char *topic,
                                                        const pulsar_message_id_t *startMessageId,
                                                        pulsar_reader_configuration_t *conf,
                                                        pulsar_reader_t **reader);
/** Not provided (declared only). */
PULSAR_PUBLIC void pulsar_client_create_reader_async(pulsar_client_t *client, const char *topic,
                                                     const pulsar_message_id_t *startMessageId,
                                                     pulsar_reader_configuration_t *conf,
                                                     pulsar_reader_callback callback, void *ctx);
/** Not provided (declared only). */
PULSAR_PUBLIC pulsar_result pulsar_client_create_table_view(pulsar_client_t *client,
                                                            const char *topic,
                                                            pulsar_table_view_configuration_t *conf,
                                                            pulsar_table_view_t **c_tableView);
/** Not provided (declared only). */
PULSAR_PUBLIC void pulsar_client_create_table_view_async(pulsar_client_t *client, const char *topic,
                                                         pulsar_table_view_configuration_t *conf,
                                                         pulsar_table_view_callback callback,
                                                         void *ctx);
/** Not provided (declared only). */
PULSAR_PUBLIC pulsar_result pulsar_client_get_topic_partitions(pulsar_client_t *client,
                                                               const char *topic,
                                                               pulsar_string_list_t **partitions);
/** Not provided (declared only). */
PULSAR_PUBLIC void pulsar_client_get_topic_partitions_async(pulsar_client_t *client,
                                                            const char *topic,
                                                            pulsar_get_partitions_callback callback,
                                                            void *ctx);

/** Closes every producer of the client (their pending messages fail with
 * pulsar_result_AlreadyClosed: close producers first to send them) and its connections,
 * and waits. The handle stays until pulsar_client_free; producers still need
 * pulsar_producer_free. */
PULSAR_PUBLIC pulsar_result pulsar_client_close(pulsar_client_t *client);
/** The same without waiting; callback (may be NULL) gets the outcome. */
PULSAR_PUBLIC void pulsar_client_close_async(pulsar_client_t *client,
                                             pulsar_close_callback callback, void *ctx);
/** Closes the client if open, and frees it (NULL: nothing). */
PULSAR_PUBLIC void pulsar_client_free(pulsar_client_t *client);

#ifdef __cplusplus
}
#endif

#endif
