/** @file
 * pulsarc-compat: producers, with libpulsar's contracts. A send callback runs once per
 * send_async call, also when the send is refused at once (the queue or the memory limit
 * full, the producer closed, the message sent already): then it runs before
 * pulsar_producer_send_async returns, on the calling thread; otherwise on the client's
 * loop thread. On success it gets a message id that it owns (free it with
 * pulsar_message_id_free). Blocking calls (send, flush, close, create) made on the loop
 * thread, i.e. inside a callback, do not wait: they fail with
 * pulsar_result_OperationNotSupported (libpulsar would deadlock there). */
#ifndef PULSARC_COMPAT_PULSAR_C_PRODUCER_H
#define PULSARC_COMPAT_PULSAR_C_PRODUCER_H

#include <pulsar/c/message.h>
#include <pulsar/c/message_id.h>
#include <pulsar/c/result.h>
#include <pulsar/defines.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** A producer, opaque. */
typedef struct _pulsar_producer pulsar_producer_t;

/** A send's outcome; msgId (the callback's to free) on success, NULL otherwise. */
typedef void (*pulsar_send_callback)(pulsar_result, pulsar_message_id_t *msgId, void *ctx);
/** A close's outcome. */
typedef void (*pulsar_close_callback)(pulsar_result, void *ctx);
/** A flush's outcome. */
typedef void (*pulsar_flush_callback)(pulsar_result, void *ctx);

/** The topic (fully qualified); valid until pulsar_producer_free. */
PULSAR_PUBLIC const char *pulsar_producer_get_topic(pulsar_producer_t *producer);
/** The producer's name (set, or given by the broker); valid until pulsar_producer_free. */
PULSAR_PUBLIC const char *pulsar_producer_get_producer_name(pulsar_producer_t *producer);
/** Sends msg and waits for the broker's receipt (or the send timeout). */
PULSAR_PUBLIC pulsar_result pulsar_producer_send(pulsar_producer_t *producer,
                                                 pulsar_message_t *msg);
/** Sends msg without waiting; callback (may be NULL) gets the outcome (see the file's
 * comment). msg may be freed or reused for reading once this returns. */
PULSAR_PUBLIC void pulsar_producer_send_async(pulsar_producer_t *producer, pulsar_message_t *msg,
                                              pulsar_send_callback callback, void *ctx);
/** The highest sequence id the broker confirmed, -1 when none. */
PULSAR_PUBLIC int64_t pulsar_producer_get_last_sequence_id(pulsar_producer_t *producer);
/** Waits for every pending message, then closes the producer on the broker. */
PULSAR_PUBLIC pulsar_result pulsar_producer_close(pulsar_producer_t *producer);
/** pulsar_producer_close without waiting; callback (may be NULL) gets the outcome. */
PULSAR_PUBLIC void pulsar_producer_close_async(pulsar_producer_t *producer,
                                               pulsar_close_callback callback, void *ctx);
/** Sends what is batched and waits until every earlier message has its outcome; returns
 * the first failure among them. */
PULSAR_PUBLIC pulsar_result pulsar_producer_flush(pulsar_producer_t *producer);
/** pulsar_producer_flush without waiting; callback (may be NULL) gets the outcome. */
PULSAR_PUBLIC void pulsar_producer_flush_async(pulsar_producer_t *producer,
                                               pulsar_flush_callback callback, void *ctx);
/** Closes the producer if open (without waiting) and frees it (NULL: nothing). */
PULSAR_PUBLIC void pulsar_producer_free(pulsar_producer_t *producer);
/** 1 when every started partition is registered with its broker. */
PULSAR_PUBLIC int pulsar_producer_is_connected(pulsar_producer_t *producer);

#ifdef __cplusplus
}
#endif

#endif
