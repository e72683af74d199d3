/* pulsar_client_t: a pulsarc client on a thread of its own, producer creation (results
 * and failures through the callback, as libpulsar reports them) and close. */
#include <pthread.h>
#include <stdlib.h>

#include "compat/compat.h"

pulsar_client_t *pulsar_client_create(const char *serviceUrl,
                                      const pulsar_client_configuration_t *clientConfiguration)
{
    pulsar_client_t *client = calloc(1, sizeof *client);
    if (!client)
        return NULL;
    atomic_init(&client->closing, 0);
    pulsarc_client_config_t *conf = NULL;
    pulsarc_result res = pc_compat_client_config(clientConfiguration, client, &conf);
    if (res == PULSARC_OK)
        res = serviceUrl ? pulsarc_client_new(serviceUrl, conf, &client->client)
                         : PULSARC_ERR_INVALID_URL;
    pulsarc_client_config_free(conf);
    if (res != PULSARC_OK) {
        /* libpulsar throws from here; the compat layer keeps the handle and answers every
         * producer creation with the error instead. */
        client->client = NULL;
        client->creation_error = pc_compat_result(res);
    }
    return client;
}

/* A producer handle around a pulsarc producer (NULL when out of memory: the pulsarc
 * producer is then freed). */
static pulsar_producer_t *wrap(pulsarc_producer_t *p, pc_compat_router *router)
{
    pulsar_producer_t *producer = calloc(1, sizeof *producer);
    if (!producer) {
        pulsarc_producer_free(p);
        free(router);
        return NULL;
    }
    producer->producer = p;
    producer->router = router;
    return producer;
}

pulsar_result pulsar_client_create_producer(pulsar_client_t *client, const char *topic,
                                            const pulsar_producer_configuration_t *conf,
                                            pulsar_producer_t **producer)
{
    if (!client || !producer)
        return pulsar_result_InvalidConfiguration;
    if (!client->client)
        return client->creation_error;
    if (!topic)
        return pulsar_result_InvalidTopicName;
    if (pc_compat_in_callback())
        return pulsar_result_OperationNotSupported;
    pulsarc_producer_config_t *pconf = NULL;
    pc_compat_router *router = NULL;
    pulsarc_result res = pc_compat_producer_config(conf, client, &pconf, &router);
    pulsarc_producer_t *p = NULL;
    if (res == PULSARC_OK)
        res = pulsarc_client_create_producer(client->client, topic, pconf, &p);
    pulsarc_producer_config_free(pconf);
    if (res != PULSARC_OK) {
        free(router);
        return pc_compat_result(res);
    }
    *producer = wrap(p, router);
    return *producer ? pulsar_result_Ok : pulsar_result_UnknownError;
}

typedef struct create_call {
    pulsar_create_producer_callback cb;
    void *ctx;
    pc_compat_router *router;
} create_call;

static void created(pulsarc_client_t *c, pulsarc_result res, pulsarc_producer_t *p, void *ctx)
{
    create_call *call = ctx;
    pulsar_producer_t *producer = NULL;
    pulsar_result r = pc_compat_result(res);
    if (res == PULSARC_OK) {
        producer = wrap(p, call->router);
        if (!producer)
            r = pulsar_result_UnknownError;
    } else {
        free(call->router);
    }
    if (call->cb) {
        pc_compat_enter_callback();
        call->cb(r, producer, call->ctx);
        pc_compat_leave_callback();
    } else {
        pulsar_producer_free(producer);
    }
    free(call);
}

void pulsar_client_create_producer_async(pulsar_client_t *client, const char *topic,
                                         const pulsar_producer_configuration_t *conf,
                                         pulsar_create_producer_callback callback, void *ctx)
{
    pulsar_result r = pulsar_result_InvalidConfiguration;
    create_call *call = NULL;
    if (client && !client->client)
        r = client->creation_error;
    else if (client && !topic)
        r = pulsar_result_InvalidTopicName;
    else if (client && (call = calloc(1, sizeof *call)) == NULL)
        r = pulsar_result_UnknownError;
    if (call) {
        call->cb = callback;
        call->ctx = ctx;
        pulsarc_producer_config_t *pconf = NULL;
        pulsarc_result res = pc_compat_producer_config(conf, client, &pconf, &call->router);
        if (res == PULSARC_OK)
            res = pulsarc_client_create_producer_async(client->client, topic, pconf, created, call);
        pulsarc_producer_config_free(pconf);
        if (res == PULSARC_OK)
            return;
        free(call->router);
        free(call);
        r = pc_compat_result(res);
    }
    /* Refused before it started: libpulsar reports that through the callback too. */
    if (callback)
        callback(r, NULL, ctx);
}

/* Waiting for a completion on the loop thread, from another thread. */
typedef struct waiter {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int done;
    pulsar_result res;
} waiter;

static void waiter_init(waiter *w)
{
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
    w->done = 0;
    w->res = pulsar_result_Ok;
}

static pulsar_result waiter_wait(waiter *w)
{
    pthread_mutex_lock(&w->mu);
    while (!w->done)
        pthread_cond_wait(&w->cv, &w->mu);
    pthread_mutex_unlock(&w->mu);
    pthread_cond_destroy(&w->cv);
    pthread_mutex_destroy(&w->mu);
    return w->res;
}

static void client_closed_wake(pulsarc_client_t *c, pulsarc_result res, void *ctx)
{
    waiter *w = ctx;
    pthread_mutex_lock(&w->mu);
    w->res = pc_compat_result(res);
    w->done = 1;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
}

pulsar_result pulsar_client_close(pulsar_client_t *client)
{
    if (!client)
        return pulsar_result_InvalidConfiguration;
    if (!client->client)
        return pulsar_result_Ok;
    if (pc_compat_in_callback())
        return pulsar_result_OperationNotSupported;
    if (atomic_exchange(&client->closing, 1))
        return pulsar_result_AlreadyClosed;
    waiter w;
    waiter_init(&w);
    pulsarc_result res = pulsarc_client_close_async(client->client, client_closed_wake, &w);
    if (res != PULSARC_OK) {
        w.done = 1;
        waiter_wait(&w);
        return pc_compat_result(res);
    }
    return waiter_wait(&w);
}

typedef struct close_call {
    pulsar_close_callback cb;
    void *ctx;
} close_call;

static void client_closed(pulsarc_client_t *c, pulsarc_result res, void *ctx)
{
    close_call *call = ctx;
    if (call->cb) {
        pc_compat_enter_callback();
        call->cb(pc_compat_result(res), call->ctx);
        pc_compat_leave_callback();
    }
    free(call);
}

void pulsar_client_close_async(pulsar_client_t *client, pulsar_close_callback callback, void *ctx)
{
    pulsar_result r = pulsar_result_InvalidConfiguration;
    if (client && !client->client) {
        r = pulsar_result_Ok;
    } else if (client && atomic_exchange(&client->closing, 1)) {
        r = pulsar_result_AlreadyClosed;
    } else if (client) {
        close_call *call = calloc(1, sizeof *call);
        if (call) {
            call->cb = callback;
            call->ctx = ctx;
            pulsarc_result res = pulsarc_client_close_async(client->client, client_closed, call);
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

void pulsar_client_free(pulsar_client_t *client)
{
    if (!client)
        return;
    /* Inside a callback pulsarc cannot destroy a client that is not closed yet (it would
     * wait for its own thread): the handle is then left, rather than freed under it. */
    if (client->client && pulsarc_client_destroy(client->client) != PULSARC_OK)
        return;
    free(client->logger);
    if (client->auth) {
        pc_compat_auth_clear(client->auth);
        free(client->auth);
    }
    free(client);
}
