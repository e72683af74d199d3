/* pulsar_producer_t: sends with libpulsar's contracts on pulsarc's producer. A send
 * callback owns the id it gets, and a send pulsarc refuses at once is reported through
 * the callback (libpulsar's way) rather than returned (pulsarc's). */
#include <stdlib.h>

#include "compat/compat.h"

const char *pulsar_producer_get_topic(pulsar_producer_t *producer)
{
    return producer ? pulsarc_producer_topic(producer->producer) : "";
}

const char *pulsar_producer_get_producer_name(pulsar_producer_t *producer)
{
    return producer ? pulsarc_producer_name(producer->producer) : "";
}

int64_t pulsar_producer_get_last_sequence_id(pulsar_producer_t *producer)
{
    return producer ? pulsarc_producer_last_sequence_id(producer->producer) : -1;
}

int pulsar_producer_is_connected(pulsar_producer_t *producer)
{
    return producer ? pulsarc_producer_is_connected(producer->producer) : 0;
}

/* Checks shared by both sends, and the pulsarc message; pulsar_result_Ok to go on. */
static pulsar_result prepare(pulsar_producer_t *producer, pulsar_message_t *msg)
{
    if (!producer)
        return pulsar_result_ProducerNotInitialized;
    if (!msg)
        return pulsar_result_InvalidMessage;
    if (atomic_load(&msg->sent))
        return pulsar_result_InvalidMessage; /* libpulsar: a message is sent once */
    pulsarc_result res = pc_compat_message_build(msg);
    return res == PULSARC_OK ? pulsar_result_Ok : pc_compat_result(res);
}

pulsar_result pulsar_producer_send(pulsar_producer_t *producer, pulsar_message_t *msg)
{
    pulsar_result r = prepare(producer, msg);
    if (r != pulsar_result_Ok)
        return r;
    if (pc_compat_in_callback())
        return pulsar_result_OperationNotSupported;
    pc_compat_set_sending(msg);
    pulsarc_result res = pulsarc_producer_send(producer->producer, msg->built, NULL);
    pc_compat_set_sending(NULL);
    /* Stored or failed after it was accepted: either way the message was used. */
    if (res == PULSARC_OK || res == PULSARC_ERR_SEND_TIMEOUT)
        atomic_store(&msg->sent, 1);
    return pc_compat_result(res);
}

typedef struct send_call {
    pulsar_send_callback cb;
    void *ctx;
} send_call;

static void sent(pulsarc_producer_t *p, pulsarc_result res, const pulsarc_message_id_t *id,
                 void *ctx)
{
    (void)p;
    send_call *call = ctx;
    pulsar_send_callback cb = call->cb;
    void *user = call->ctx;
    free(call);
    if (!cb)
        return;
    pulsar_message_id_t *mid = NULL;
    pulsar_result r = pc_compat_result(res);
    if (res == PULSARC_OK && !(mid = pc_compat_message_id(id)))
        r = pulsar_result_UnknownError; /* stored, but no memory left to say where */
    pc_compat_enter_callback();
    cb(r, mid, user); /* mid is the callback's to free, as in libpulsar */
    pc_compat_leave_callback();
}

void pulsar_producer_send_async(pulsar_producer_t *producer, pulsar_message_t *msg,
                                pulsar_send_callback callback, void *ctx)
{
    pulsar_result r = prepare(producer, msg);
    if (r == pulsar_result_Ok) {
        send_call *call = malloc(sizeof *call);
        if (call) {
            call->cb = callback;
            call->ctx = ctx;
            pc_compat_set_sending(msg);
            pulsarc_result res = pulsarc_producer_send_async(producer->producer, msg->built, sent,
                                                             call);
            pc_compat_set_sending(NULL);
            if (res == PULSARC_OK) {
                atomic_store(&msg->sent, 1);
                return;
            }
            free(call);
            r = pc_compat_result(res);
        } else {
            r = pulsar_result_UnknownError;
        }
    }
    /* Not accepted: libpulsar reports this through the callback, before returning. */
    if (callback)
        callback(r, NULL, ctx);
}

pulsar_result pulsar_producer_flush(pulsar_producer_t *producer)
{
    if (!producer)
        return pulsar_result_ProducerNotInitialized;
    if (pc_compat_in_callback())
        return pulsar_result_OperationNotSupported;
    return pc_compat_result(pulsarc_producer_flush(producer->producer));
}

typedef struct done_call {
    pulsar_result_callback_fn cb;
    void *ctx;
} done_call;

static void done(pulsarc_producer_t *p, pulsarc_result res, void *ctx)
{
    (void)p;
    done_call *call = ctx;
    if (call->cb) {
        pc_compat_enter_callback();
        call->cb(pc_compat_result(res), call->ctx);
        pc_compat_leave_callback();
    }
    free(call);
}

/* Starts a flush or close (which); refusals go through the callback. */
static void start(pulsar_producer_t *producer, int close, pulsar_result_callback_fn callback,
                  void *ctx)
{
    pulsar_result r = pulsar_result_ProducerNotInitialized;
    if (producer) {
        done_call *call = malloc(sizeof *call);
        if (call) {
            call->cb = callback;
            call->ctx = ctx;
            pulsarc_result res = close
                                     ? pulsarc_producer_close_async(producer->producer, done, call)
                                     : pulsarc_producer_flush_async(producer->producer, done, call);
            if (res == PULSARC_OK)
                return;
            free(call);
            r = pc_compat_result(res);
        } else {
            r = pulsar_result_UnknownError;
        }
    }
    if (callback)
        callback(r, ctx);
}

void pulsar_producer_flush_async(pulsar_producer_t *producer, pulsar_flush_callback callback,
                                 void *ctx)
{
    start(producer, 0, callback, ctx);
}

pulsar_result pulsar_producer_close(pulsar_producer_t *producer)
{
    if (!producer)
        return pulsar_result_ProducerNotInitialized;
    if (pc_compat_in_callback())
        return pulsar_result_OperationNotSupported;
    return pc_compat_result(pulsarc_producer_close(producer->producer));
}

void pulsar_producer_close_async(pulsar_producer_t *producer, pulsar_close_callback callback,
                                 void *ctx)
{
    start(producer, 1, callback, ctx);
}

void pulsar_producer_free(pulsar_producer_t *producer)
{
    if (!producer)
        return;
    pulsarc_producer_free(producer->producer);
    /* A router runs on sending threads only, and no send may race a free. */
    free(producer->router);
    free(producer);
}
