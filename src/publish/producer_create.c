/* Producer creation: look up the partition count, start a partition producer for each
 * partition and answer the creator (blocked on a waiter, or through its callback), within
 * operationTimeoutMs however silent the broker is. What only creation needs lives in a
 * record of its own, from the creator's call until the loop thread is done with it. On
 * failure the loop thread frees the handle once nothing refers to it any more; the
 * creator only gets the result and detail.
 * @locality loop thread, except pulsarc_client_create_producer(_async). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "publish/producer.h"
#include "publish/seal_stage.h"
#include "publish/spool_stage.h"
#include "common/error.h"
#include "common/timer.h"
#include "net/backoff.h"
#include "net/lookup.h"
#include "producer/topic_schema.h"
#include "schema/schema.h"
#include "wire/frame.h"

typedef struct creation {
    pc_task_t task; /* the hand-over to the loop thread */
    pulsarc_producer_t *p;
    pc_partitioned_op_t start; /* the partitions' start */
    pulsarc_result res;
    char detail[1024];
    pc_waiter_t *waiter;  /* the blocked creator's; NULL: an async one */
    pulsarc_create_cb cb; /* the async creator's */
    void *cb_ctx;
    bool answered;        /* the creator has its answer */
    uv_timer_t *deadline; /* operationTimeoutMs */
    uv_timer_t *retry;    /* the next partition metadata lookup, after a failure */
    int retries;
    pc_backoff_t backoff;
    uv_thread_t replayer;           /* an async creation's spool replay (replay_main) */
    pc_shutdown_hook_t on_shutdown; /* ... which the client's shutdown ends and joins */
    bool joined;
} creation;

/* The lookup and registration phase is over: its timers go. */
static void stop_timers(creation *cr)
{
    pc_timer_free(cr->deadline);
    cr->deadline = NULL;
    pc_timer_free(cr->retry);
    cr->retry = NULL;
}

static void answer_creator(creation *cr)
{
    stop_timers(cr);
    cr->answered = true;
    if (cr->waiter) {
        pc_waiter_signal(cr->waiter, cr->res, cr->detail);
        return;
    }
    /* The handle is the creator's only on success; on failure the record frees it. */
    pc_set_detail(cr->res == PULSARC_OK ? NULL : cr->detail);
    cr->cb(cr->p->client, cr->res, cr->res == PULSARC_OK ? cr->p : NULL, cr->cb_ctx);
}

/* Nothing refers to the record any more; the handle goes with it unless it was given to
 * the creator. */
static void end_creation(creation *cr, bool keep_handle)
{
    if (!keep_handle)
        pc_producer_release(cr->p);
    free(cr);
}

static void fail_creation(creation *cr, pulsarc_result res, const char *detail)
{
    if (cr->res != PULSARC_OK)
        return;
    cr->res = res;
    snprintf(cr->detail, sizeof cr->detail, "%s", detail);
}

/* An async creation's spool replay, on a thread of its own: it reads the spool's files
 * and waits for room as a blocking send does, neither of which the loop thread (the
 * caller's own, perhaps) may do, and the thread pool is no place to wait for receipts. */
static void replay_main(void *arg)
{
    creation *cr = arg;
    cr->res = pc_producer_spool_replay(cr->p);
    if (cr->res != PULSARC_OK)
        snprintf(cr->detail, sizeof cr->detail, "%s", pulsarc_last_error_detail());
    /* After every resend: the creator's sends, posted once it has the handle, follow. */
    pc_client_post_in_order(cr->p->client, &cr->task);
}

/* The replay is over: the creator gets the handle (or, when the replay failed, the error,
 * and the handle closes and goes). */
static void replay_finished(pc_task_t *t)
{
    creation *cr = (creation *)t;
    pulsarc_producer_t *p = cr->p;
    if (!cr->joined) {
        uv_thread_join(&cr->replayer);
        pc_client_forget_shutdown(p->client, &cr->on_shutdown);
    }
    answer_creator(cr);
    bool ok = cr->res == PULSARC_OK;
    end_creation(cr, true);
    if (!ok)
        pulsarc_producer_free(p);
}

/* The client stops while the replay runs: what the replay waits for (room) refuses it
 * from now on, so the thread ends soon; it is joined here, before the producer's own
 * shutdown (registered earlier, so run later) and before the client can go. Its
 * replay_finished, posted already, tells the creator. */
static void replay_shutdown(pc_shutdown_hook_t *hook)
{
    creation *cr = (creation *)((char *)hook - offsetof(creation, on_shutdown));
    pulsarc_producer_t *p = cr->p;
    pc_admission_close(&p->client->admission, &p->permits);
    pc_spool_stop_waiting(p->spool);
    uv_thread_join(&cr->replayer);
    cr->joined = true;
}

/* Spooled messages go before every new one: the handle is the creator's once they are
 * all handed over. The blocking creator replays on its own thread after the wait; an
 * async one here, on the replay thread. False when that thread cannot start. */
static bool replay_spool_first(creation *cr)
{
    /* The replay is bounded by the spool, not by operationTimeoutMs: the creation's
     * timers go now, while the loop still runs to close them. */
    stop_timers(cr);
    cr->task.run = replay_finished;
    if (uv_thread_create(&cr->replayer, replay_main, cr) == 0) {
        cr->on_shutdown.run = replay_shutdown;
        pc_client_on_shutdown(cr->p->client, &cr->on_shutdown);
        return true;
    }
    fail_creation(cr, PULSARC_ERR_NO_MEMORY, "cannot start the spool's replay thread");
    return false;
}

/* Every partition has answered (or none was started). */
static void creation_finished(creation *cr)
{
    pulsarc_producer_t *p = cr->p;
    pulsarc_client_t *c = p->client;
    /* A producer the shutdown did not see must not outlive the client attached to it. */
    if (c->rt.stopping)
        fail_creation(cr, PULSARC_ERR_ALREADY_CLOSED, "client is closing");
    if (cr->res != PULSARC_OK) {
        answer_creator(cr);
        end_creation(cr, false);
        return;
    }
    pc_partition_status_t first;
    if (pc_partitioned_status(p->pt, 0, &first))
        atomic_store(&p->max_message_size, first.max_message_size);
    p->on_shutdown.run = pc_producer_shutdown;
    pc_client_on_shutdown(c, &p->on_shutdown);
    p->listed = true;
    pc_producer_stats_join(p);
    if (p->conf.auto_update_partitions)
        pc_partitioned_updates_start(p->pt, (uint64_t)p->conf.partitions_update_interval_s * 1000u);
    if (p->spool && !cr->waiter) {
        if (replay_spool_first(cr))
            return;
        answer_creator(cr);
        end_creation(cr, true);
        pulsarc_producer_free(p);
        return;
    }
    answer_creator(cr);
    end_creation(cr, true);
}

static void on_started(pc_partitioned_op_t *op)
{
    creation *cr = (creation *)((char *)op - offsetof(creation, start));
    if (op->res != PULSARC_OK)
        fail_creation(cr, op->res, op->detail);
    creation_finished(cr);
}

/* Whatever is still in progress is given up: the lookup answers into the void (its
 * callback frees the handle), partitions still registering are aborted. A partition
 * whose attempts kept failing names the cause (an unreachable broker is CONNECT_FAILED,
 * as the official clients answer), whether the deadline came while it waited to retry or
 * in the middle of an attempt; TIMEOUT is for answers that never came. */
static void on_create_deadline(uv_timer_t *t)
{
    creation *cr = t->data;
    pulsarc_producer_t *p = cr->p;
    const char *last = "";
    pulsarc_result res = p->pt ? pc_partitioned_last_attempt(p->pt, &last) : PULSARC_OK;
    char detail[768];
    if (res != PULSARC_OK)
        snprintf(detail, sizeof detail,
                 "no producer for %.300s within operationTimeoutMs (%d ms); the last attempt "
                 "failed: %.300s",
                 p->topic.full, (int)p->client->conf.operation_timeout_ms, last);
    else
        snprintf(detail, sizeof detail,
                 "no producer for %.300s within operationTimeoutMs (%d ms): %s", p->topic.full,
                 (int)p->client->conf.operation_timeout_ms,
                 p->pt ? "partitions still looking up, connecting or registering"
                       : "no answer to the schema or partition metadata lookup");
    fail_creation(cr, res != PULSARC_OK ? res : PULSARC_ERR_TIMEOUT, detail);
    if (!p->pt) {
        /* Waiting to retry the lookup, nothing is in flight: the record goes now. Else the
         * lookup's answer frees it (on_partitions). */
        bool idle = cr->retry && uv_is_active((uv_handle_t *)cr->retry);
        answer_creator(cr);
        if (idle)
            end_creation(cr, false);
        return;
    }
    /* The partitions still registering answer the start with this failure, and its end
     * (on_started) finishes the creation: cr may be gone after this. */
    pc_partitioned_abort(p->pt, PULSARC_ERR_TIMEOUT, detail);
}

static void start_parts(creation *cr, int n)
{
    pulsarc_producer_t *p = cr->p;
    pc_pp_settings_t pp;
    pc_router_settings_t routing;
    pc_partitioned_owner_t owner;
    pc_producer_config_pp(&p->conf, &pp);
    pc_producer_config_router(&p->conf, &routing);
    pp.sink = &p->stats.sink;
    pc_producer_partitioned_owner(p, &owner);
    p->pt = pc_partitioned_new(&p->client->rt, &p->topic, n, &pp, &routing, &owner);
    if (!p->pt) {
        fail_creation(cr, PULSARC_ERR_NO_MEMORY, "out of memory");
        creation_finished(cr);
        return;
    }
    cr->start.done = on_started;
    pc_partitioned_start(p->pt, &cr->start);
}

static void on_partitions(pulsarc_result res, int n, void *ctx);

static void on_create_retry(uv_timer_t *t)
{
    creation *cr = t->data;
    pc_lookup_partitions(&cr->p->client->rt, cr->p->topic.full, on_partitions, cr);
}

/* Failures of the partition metadata lookup that a moment may cure: the connection
 * dropped mid-request or mid-handshake, the broker is still loading or shedding load. An
 * unreachable service URL (CONNECT_FAILED) and local credential problems fail at once.
 * A drop that keeps happening is a set-up problem (a plain-text client on a TLS port looks
 * just like a cut connection): after a few tries its own error is the answer.
 * With failover clusters an unreachable cluster is what they are there for: the lookup is
 * tried again until operationTimeoutMs (as the Java client retries its lookups), on the
 * cluster the client has switched to by then, so that a producer created during an
 * outage of the primary waits for the switch instead of failing at once. */
#define LOOKUP_RETRIES 4

static bool lookup_may_pass(creation *cr, pulsarc_result res)
{
    if (res == PULSARC_ERR_CONNECT_FAILED && cr->p->client->clusters.n > 1)
        return true;
    bool transient = res == PULSARC_ERR_CONNECTION_CLOSED || res == PULSARC_ERR_TLS_HANDSHAKE ||
                     res == PULSARC_ERR_BROKER_SERVICE_NOT_READY ||
                     res == PULSARC_ERR_BROKER_TOO_MANY_REQUESTS;
    return transient && cr->retries++ < LOOKUP_RETRIES;
}

/* Such a lookup is tried again with backoff until operationTimeoutMs, as the official
 * clients do. False when it cannot be (out of memory). */
static bool retry_partitions_later(creation *cr, pulsarc_result res)
{
    pulsarc_client_t *c = cr->p->client;
    if (!cr->retry && !(cr->retry = pc_timer_new(c->rt.loop, cr)))
        return false;
    uint64_t delay = pc_backoff_next(&cr->backoff);
    PC_INFO(&c->log, "%s: partition metadata lookup failed (%s: %s); retrying in %llu ms",
            cr->p->topic.full, pulsarc_result_name(res), pulsarc_last_error_detail(),
            (unsigned long long)delay);
    uv_timer_start(cr->retry, on_create_retry, delay, 0);
    return true;
}

static void on_partitions(pulsarc_result res, int n, void *ctx)
{
    creation *cr = ctx;
    pulsarc_producer_t *p = cr->p;
    if (cr->answered) {
        /* The deadline has answered the creator already. */
        end_creation(cr, false);
        return;
    }
    if (!p->client->rt.stopping && lookup_may_pass(cr, res) && retry_partitions_later(cr, res))
        return;
    if (res != PULSARC_OK) {
        char detail[768];
        snprintf(detail, sizeof detail, "partition metadata of %.300s: %.400s", p->topic.full,
                 pulsarc_last_error_detail());
        fail_creation(cr, res, detail);
        creation_finished(cr);
        return;
    }
    start_parts(cr, n);
}

/* AUTO_PRODUCE: the topic's schema (GET_SCHEMA) becomes the producer's, registered by
 * every partition and checked at send; a topic without one takes raw bytes. */
static void on_topic_schema(pulsarc_result res, pulsarc_schema_t *schema, void *ctx)
{
    creation *cr = ctx;
    pulsarc_producer_t *p = cr->p;
    if (cr->answered) {
        pc_schema_unref(schema);
        end_creation(cr, false);
        return;
    }
    if (res != PULSARC_OK) {
        fail_creation(cr, res, pulsarc_last_error_detail());
        creation_finished(cr);
        return;
    }
    pc_schema_unref(p->conf.schema);
    p->conf.schema = schema;
    pc_lookup_partitions(&p->client->rt, p->topic.full, on_partitions, cr);
}

static void run_create(pc_task_t *t)
{
    creation *cr = (creation *)t;
    pulsarc_producer_t *p = cr->p;
    pulsarc_client_t *c = p->client;
    if (c->rt.stopping) {
        creation_finished(cr);
        return;
    }
    cr->deadline = pc_timer_new(c->rt.loop, cr);
    if (!cr->deadline) {
        fail_creation(cr, PULSARC_ERR_NO_MEMORY, "out of memory");
        creation_finished(cr);
        return;
    }
    uv_timer_start(cr->deadline, on_create_deadline, (uint64_t)c->conf.operation_timeout_ms, 0);
    pc_backoff_init(&cr->backoff, c->rt.limits.initial_backoff_ms, c->rt.limits.max_backoff_ms);
    if (p->conf.schema && p->conf.schema->type == PULSARC_SCHEMA_AUTO_PRODUCE)
        pc_topic_schema_fetch(&c->rt, p->topic.full, on_topic_schema, cr);
    else
        pc_lookup_partitions(&c->rt, p->topic.full, on_partitions, cr);
}

/* The handle, with its configuration copied; NULL on failure (the detail is set). */
static pulsarc_producer_t *new_handle(pulsarc_client_t *c, const char *topic,
                                      const pulsarc_producer_config_t *conf, pulsarc_result *res)
{
    pulsarc_producer_t *p = calloc(1, sizeof *p);
    if (!p) {
        *res = pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
        return NULL;
    }
    char err[256];
    if (pc_topic_name_parse(topic, &p->topic, err, sizeof err) != 0) {
        free(p);
        *res = pc_fail(PULSARC_ERR_INVALID_TOPIC, "topic \"%s\": %s", topic, err);
        return NULL;
    }
    pulsarc_producer_config_t defaults;
    if (!conf) {
        pc_producer_config_defaults(&defaults);
        conf = &defaults;
    }
    if (pc_producer_config_copy(&p->conf, conf) != 0) {
        pc_producer_config_clear(&p->conf);
        free(p);
        *res = pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
        return NULL;
    }
    p->client = c;
    pc_pp_settings_t pp;
    pc_producer_config_pp(&p->conf, &pp);
    p->rules = pc_pp_plan_rules(&pp);
    atomic_init(&p->state, P_OPEN);
    pc_permits_init(&p->permits);
    pc_producer_room_init(p);
    atomic_init(&p->max_message_size, PC_FRAME_DEFAULT_MAX_MESSAGE_SIZE);
    atomic_init(&p->name, NULL);
    atomic_init(&p->last_sequence_id, -1);
    atomic_init(&p->schema_version, -1);
    atomic_init(&p->terminal, PULSARC_OK);
    pc_producer_stats_init(&p->stats, &c->stats.clock);
    return p;
}

/* The record and its handle, ready to be posted; NULL on failure (res and the detail
 * say why). */
static creation *new_creation(pulsarc_client_t *c, const char *topic,
                              const pulsarc_producer_config_t *conf, pulsarc_result *res)
{
    if ((*res = pc_client_check_open(c)) != PULSARC_OK)
        return NULL;
    creation *cr = calloc(1, sizeof *cr);
    if (!cr) {
        *res = pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
        return NULL;
    }
    if (!(cr->p = new_handle(c, topic, conf, res))) {
        free(cr);
        return NULL;
    }
    /* A spool that cannot be used fails the creation before anything connects, whichever
     * create was called. */
    if ((*res = pc_spool_stage_open(cr->p)) != PULSARC_OK ||
        (*res = pc_seal_stage_open(cr->p)) != PULSARC_OK) {
        pc_producer_release(cr->p);
        free(cr);
        return NULL;
    }
    /* A sealed message is an entry of its own (encrypted apart): nothing is batched. */
    if (cr->p->sealer)
        cr->p->rules.batching = false;
    cr->task.run = run_create;
    return cr;
}

pulsarc_result pulsarc_client_create_producer(pulsarc_client_t *c, const char *topic,
                                              const pulsarc_producer_config_t *conf,
                                              pulsarc_producer_t **out)
{
    if (out)
        *out = NULL;
    if (!c || !topic || !out)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT, "client, topic and out must not be NULL");
    pulsarc_result res = pc_client_may_block(c, "pulsarc_client_create_producer");
    if (res != PULSARC_OK)
        return res;
    creation *cr = new_creation(c, topic, conf, &res);
    if (!cr)
        return res;
    pulsarc_producer_t *p = cr->p;
    pc_waiter_t w;
    pc_waiter_init(&w);
    cr->waiter = &w;
    pc_client_post(c, &cr->task);
    /* After a failure the handle is the loop thread's to free: neither cr nor p is touched
     * again. */
    res = pc_waiter_wait(&w);
    pc_waiter_destroy(&w);
    /* Before the handle is anyone's: spooled messages go before every new one. */
    if (res == PULSARC_OK && p->spool && (res = pc_producer_spool_replay(p)) != PULSARC_OK) {
        pulsarc_producer_free(p);
        return res;
    }
    if (res == PULSARC_OK)
        *out = p;
    return res;
}

pulsarc_result pulsarc_client_create_producer_async(pulsarc_client_t *c, const char *topic,
                                                    const pulsarc_producer_config_t *conf,
                                                    pulsarc_create_cb cb, void *ctx)
{
    if (!c || !topic || !cb)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT, "client, topic and cb must not be NULL");
    pulsarc_result res;
    creation *cr = new_creation(c, topic, conf, &res);
    if (!cr)
        return res;
    cr->cb = cb;
    cr->cb_ctx = ctx;
    pc_client_post(c, &cr->task);
    return PULSARC_OK;
}
