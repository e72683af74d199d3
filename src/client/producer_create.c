/* Producer creation: look up the partition count, start a partition producer for each
 * partition and answer the blocked creator, within operationTimeoutMs however silent the
 * broker is. On failure the loop thread frees the handle once nothing refers to it any
 * more; the creator only reads the result and detail from its waiter.
 * @locality loop thread, except pulsarc_client_create_producer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/producer_impl.h"
#include "common/error.h"
#include "common/timer.h"
#include "net/lookup.h"
#include "producer/topic_schema.h"
#include "schema/schema.h"
#include "wire/frame.h"

static void answer_creator(pulsarc_producer_t *p)
{
    pc_timer_free(p->create_deadline);
    p->create_deadline = NULL;
    pc_timer_free(p->create_retry);
    p->create_retry = NULL;
    pc_waiter_signal(p->create_waiter, p->create_res, p->create_detail);
    p->create_waiter = NULL;
}

static void fail_creation(pulsarc_producer_t *p, pulsarc_result res, const char *detail)
{
    if (p->create_res != PULSARC_OK)
        return;
    p->create_res = res;
    snprintf(p->create_detail, sizeof p->create_detail, "%s", detail);
}

/* Every partition has answered (or none was started). */
static void creation_finished(pulsarc_producer_t *p)
{
    pulsarc_client_t *c = p->client;
    /* A producer the shutdown did not see must not outlive the client attached to it. */
    if (c->rt.stopping)
        fail_creation(p, PULSARC_ERR_ALREADY_CLOSED, "client is closing");
    if (p->create_res != PULSARC_OK) {
        answer_creator(p);
        pc_producer_release(p);
        return;
    }
    atomic_store(&p->max_message_size, pc_pp_max_message_size(p->pt.parts[0]));
    for (int i = 0; i < p->pt.n_parts; i++)
        pc_producer_publish(p, p->pt.parts[i]);
    p->on_shutdown.run = pc_producer_shutdown;
    pc_client_on_shutdown(c, &p->on_shutdown);
    p->listed = true;
    if (p->conf.auto_update_partitions)
        pc_partitioned_updates_start(&p->pt, (uint64_t)p->conf.partitions_update_interval_s * 1000u);
    answer_creator(p);
}

static void on_part_started(pc_pp_t *pp, pulsarc_result res, void *ctx)
{
    pulsarc_producer_t *p = ctx;
    if (res != PULSARC_OK)
        fail_creation(p, res, pulsarc_last_error_detail());
    if (--p->create_remaining == 0)
        creation_finished(p);
}

/* Whatever is still in progress is given up: the lookup answers into the void (its
 * callback frees the handle), partitions still registering are aborted. */
static void on_create_deadline(uv_timer_t *t)
{
    pulsarc_producer_t *p = t->data;
    char detail[768];
    snprintf(detail, sizeof detail,
             "no producer for %.300s within operationTimeoutMs (%d ms): %s", p->topic.full,
             (int)p->client->conf.operation_timeout_ms,
             p->pt.parts ? "partitions still looking up, connecting or registering"
                      : "no answer to the schema or partition metadata lookup");
    fail_creation(p, PULSARC_ERR_TIMEOUT, detail);
    if (!p->pt.parts) {
        /* Waiting to retry the lookup, nothing is in flight: the handle goes now. Else the
         * lookup's answer frees it (on_partitions). */
        bool idle = p->create_retry && uv_is_active((uv_handle_t *)p->create_retry);
        answer_creator(p);
        if (idle)
            pc_producer_release(p);
        return;
    }
    /* Aborting a registering partition calls on_part_started; this count keeps the
     * handle until every abort has returned. */
    p->create_remaining++;
    for (int i = 0; i < p->pt.n_parts; i++)
        pc_pp_abort(p->pt.parts[i], PULSARC_ERR_TIMEOUT, detail);
    if (--p->create_remaining == 0)
        creation_finished(p);
}

static void start_parts(pulsarc_producer_t *p, int n)
{
    if (pc_partitioned_create(&p->pt, n) != 0) {
        fail_creation(p, PULSARC_ERR_NO_MEMORY, "out of memory");
        creation_finished(p);
        return;
    }
    if (p->pt.partitioned && p->conf.lazy_start) {
        /* Each partition connects on its first message. */
        creation_finished(p);
        return;
    }
    p->create_remaining = p->pt.n_parts;
    for (int i = 0, n_parts = p->pt.n_parts; i < n_parts; i++)
        pc_pp_start(p->pt.parts[i], on_part_started, p);
}

static void on_partitions(pulsarc_result res, int n, void *ctx);

static void on_create_retry(uv_timer_t *t)
{
    pulsarc_producer_t *p = t->data;
    pc_lookup_partitions(&p->client->rt, p->topic.full, on_partitions, p);
}

/* Failures of the partition metadata lookup that a moment may cure: the connection
 * dropped mid-request or mid-handshake, the broker is still loading or shedding load. An
 * unreachable service URL (CONNECT_FAILED) and local credential problems fail at once.
 * A drop that keeps happening is a set-up problem (a plain-text client on a TLS port looks
 * just like a cut connection): after a few tries its own error is the answer. */
#define LOOKUP_RETRIES 4

static bool lookup_may_pass(pulsarc_producer_t *p, pulsarc_result res)
{
    bool transient = res == PULSARC_ERR_CONNECTION_CLOSED || res == PULSARC_ERR_TLS_HANDSHAKE ||
                     res == PULSARC_ERR_BROKER_SERVICE_NOT_READY ||
                     res == PULSARC_ERR_BROKER_TOO_MANY_REQUESTS;
    return transient && p->create_retries++ < LOOKUP_RETRIES;
}

/* Such a lookup is tried again with backoff until operationTimeoutMs, as the official
 * clients do. False when it cannot be (out of memory). */
static bool retry_partitions_later(pulsarc_producer_t *p, pulsarc_result res)
{
    if (!p->create_retry && !(p->create_retry = pc_timer_new(p->client->rt.loop, p)))
        return false;
    uint64_t delay = pc_backoff_next(&p->create_backoff);
    PC_INFO(&p->client->log, "%s: partition metadata lookup failed (%s: %s); retrying in %llu ms",
            p->topic.full, pulsarc_result_name(res), pulsarc_last_error_detail(),
            (unsigned long long)delay);
    uv_timer_start(p->create_retry, on_create_retry, delay, 0);
    return true;
}

static void on_partitions(pulsarc_result res, int n, void *ctx)
{
    pulsarc_producer_t *p = ctx;
    if (!p->create_waiter) {
        /* The deadline has answered the creator already. */
        pc_producer_release(p);
        return;
    }
    if (!p->client->rt.stopping && lookup_may_pass(p, res) && retry_partitions_later(p, res))
        return;
    if (res != PULSARC_OK) {
        char detail[768];
        snprintf(detail, sizeof detail, "partition metadata of %.300s: %.400s", p->topic.full,
                 pulsarc_last_error_detail());
        fail_creation(p, res, detail);
        creation_finished(p);
        return;
    }
    start_parts(p, n);
}

/* AUTO_PRODUCE: the topic's schema (GET_SCHEMA) becomes the producer's, registered by
 * every partition and checked at send; a topic without one takes raw bytes. */
static void on_topic_schema(pulsarc_result res, pulsarc_schema_t *schema, void *ctx)
{
    pulsarc_producer_t *p = ctx;
    if (!p->create_waiter) {
        pc_schema_unref(schema);
        pc_producer_release(p);
        return;
    }
    if (res != PULSARC_OK) {
        fail_creation(p, res, pulsarc_last_error_detail());
        creation_finished(p);
        return;
    }
    pc_schema_unref(p->conf.schema);
    p->conf.schema = schema;
    p->pt.pp.schema = schema;
    pc_lookup_partitions(&p->client->rt, p->topic.full, on_partitions, p);
}

static void run_create(pc_task_t *t)
{
    pulsarc_producer_t *p = (pulsarc_producer_t *)((char *)t - offsetof(pulsarc_producer_t, create_task));
    pulsarc_client_t *c = p->client;
    if (c->rt.stopping) {
        creation_finished(p);
        return;
    }
    p->create_deadline = pc_timer_new(c->rt.loop, p);
    if (!p->create_deadline) {
        fail_creation(p, PULSARC_ERR_NO_MEMORY, "out of memory");
        creation_finished(p);
        return;
    }
    uv_timer_start(p->create_deadline, on_create_deadline, (uint64_t)c->conf.operation_timeout_ms, 0);
    pc_backoff_init(&p->create_backoff, c->rt.limits.initial_backoff_ms, c->rt.limits.max_backoff_ms);
    if (p->conf.schema && p->conf.schema->type == PULSARC_SCHEMA_AUTO_PRODUCE)
        pc_topic_schema_fetch(&c->rt, p->topic.full, on_topic_schema, p);
    else
        pc_lookup_partitions(&c->rt, p->topic.full, on_partitions, p);
}

pulsarc_result pulsarc_client_create_producer(pulsarc_client_t *c, const char *topic,
                                              const pulsarc_producer_config_t *conf,
                                              pulsarc_producer_t **out)
{
    if (out)
        *out = NULL;
    if (!c || !topic || !out)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT, "client, topic and out must not be NULL");
    if (pc_client_on_loop(c))
        return pc_fail(PULSARC_ERR_WOULD_BLOCK, "create_producer called from a callback");
    pulsarc_producer_t *p = calloc(1, sizeof *p);
    if (!p)
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    char err[256];
    if (pc_topic_name_parse(topic, &p->topic, err, sizeof err) != 0) {
        free(p);
        return pc_fail(PULSARC_ERR_INVALID_TOPIC, "topic \"%s\": %s", topic, err);
    }
    pulsarc_producer_config_t defaults;
    if (!conf) {
        pc_producer_config_defaults(&defaults);
        conf = &defaults;
    }
    if (pc_producer_config_copy(&p->conf, conf) != 0) {
        pc_producer_config_clear(&p->conf);
        free(p);
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    }
    p->client = c;
    pc_pp_settings_t pp;
    pc_router_settings_t routing;
    pc_partitioned_owner_t owner;
    pc_producer_config_pp(&p->conf, &pp);
    pc_producer_config_router(&p->conf, &routing);
    pc_producer_partitioned_owner(p, &owner);
    pc_partitioned_init(&p->pt, &c->rt, &p->topic, &pp, &routing, &owner);
    atomic_init(&p->state, P_OPEN);
    atomic_init(&p->pending, 0);
    atomic_init(&p->max_message_size, PC_FRAME_DEFAULT_MAX_MESSAGE_SIZE);
    atomic_init(&p->name, NULL);
    atomic_init(&p->last_sequence_id, -1);
    atomic_init(&p->schema_version, -1);
    atomic_init(&p->terminal, PULSARC_OK);
    pc_waiter_t w;
    pc_waiter_init(&w);
    p->create_waiter = &w;
    p->create_task.run = run_create;
    pc_client_post(c, &p->create_task);
    /* After a failure the handle is the loop thread's to free: p is not touched again. */
    pulsarc_result res = pc_waiter_wait(&w);
    pc_waiter_destroy(&w);
    if (res == PULSARC_OK)
        *out = p;
    return res;
}
