/* The public producer handle: send (plan, route, admit, hand over to the loop thread),
 * flush, close, free; the hooks its partitions report through; the accessors; the client's
 * shutdown. @locality any thread, except the hooks and run_* tasks (loop thread). */
#include "client/producer_impl.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/interceptors.h"
#include "client/message.h"
#include "client/txn.h"
#include "common/error.h"
#include "common/topic_name.h"
#include "producer/message_id.h"
#include "routing/router.h"
#include "schema/schema.h"
#include "wire/crc32c_blocks.h"

/* ---- the end of a message --------------------------------------------------- */

/* A batch is done: give back its admission in one go and update the handle's record once,
 * before its messages' callbacks run (a pc_pp_released_fn). */
static void release_batch(void *owner, pc_msg_t *msgs)
{
    pulsarc_producer_t *p = owner;
    int partition = pc_send_of(msgs)->partition; /* one partition producer's batch */
    int64_t messages = 0;
    size_t bytes = 0;
    for (pc_msg_t *m = msgs; m; m = m->next) {
        pc_send_t *s = pc_send_of(m);
        s->released = true;
        bytes += s->reserved_bytes;
        messages++;
    }
    pc_admission_release(&p->client->admission, &p->permits, messages, bytes);
    pc_producer_publish(p, partition);
}

/* The one place a message ends: admission released (here, or for its whole batch just
 * before), the handle's record updated, the interceptors told, then the callback. The
 * memory goes with the op that carried it, once no write still reads it. */
static void complete_message(void *owner, pc_msg_t *msg, pulsarc_result res,
                             const pulsarc_message_id_t *id)
{
    pulsarc_producer_t *p = owner;
    pc_send_t *s = pc_send_of(msg);
    if (!s->released) {
        pc_admission_release(&p->client->admission, &p->permits, 1, s->reserved_bytes);
        pc_producer_publish(p, s->partition);
    }
    if (s->spooled)
        pc_producer_spool_done(s, res);
    if (res != PULSARC_OK) {
        pc_failures_note(p, s->handover, res, pulsarc_last_error_detail());
        p->stats.failed_by[pc_stats_result_slot(res)]++;
    }
    /* Before the interceptors and the callback, which may overwrite the detail. */
    if (s->txn)
        pc_txn_note_result(s->txn, res, pulsarc_last_error_detail());
    if (p->conf.interceptors.n)
        pc_interceptors_on_ack(&p->conf.interceptors, p, msg, res,
                               res == PULSARC_OK ? id : NULL);
    if (s->cb)
        s->cb(p, res, res == PULSARC_OK ? id : NULL, s->cb_ctx);
    if (s->txn)
        pc_txn_send_done(s->txn);
}

/* ---- sending ---------------------------------------------------------------- */

/* A borrowed payload stays as it is until its callback, so its CRCs can be computed before
 * the send waits for room: while the loop thread is still writing the messages before it
 * (a payload above memoryLimitBytes waits for all of them). NULL if not wanted or out of
 * memory (then they are computed after admission). A copied payload is checksummed as it
 * is copied instead: checksumming it early as well would read it from memory twice, which
 * measured slower for 100 MiB chunked messages. */
static uint32_t *early_crcs(const pulsarc_message_t *m, bool wanted)
{
    if (!wanted || !m->free_cb)
        return NULL;
    uint32_t *crcs = malloc(pc_crc32c_block_count(m->payload_len) * sizeof *crcs);
    if (crcs)
        pc_crc32c_blocks(m->payload, m->payload_len, crcs);
    return crcs;
}

static void held_send_released(pulsarc_producer_t *p, uint64_t handover);

void pc_producer_fail_send(pc_send_t *s, pulsarc_result res)
{
    pulsarc_producer_t *p = s->producer;
    bool held = s->txn_held;
    uint64_t handover = s->handover;
    complete_message(p, &s->msg, res, NULL);
    pc_msg_free(&s->msg);
    if (held)
        held_send_released(p, handover);
}

void pc_producer_hand_over(pc_send_t *s)
{
    pulsarc_producer_t *p = s->producer;
    if (!p->client->rt.stopping) {
        /* Read before the hand-over, after which s may be gone (completed at once). */
        bool held = s->txn_held;
        uint64_t handover = s->handover;
        s->txn_held = false;
        if (pc_partitioned_send(p->pt, s->partition, &s->msg)) {
            if (held)
                held_send_released(p, handover);
            return;
        }
        s->txn_held = held; /* released by the failure below */
    }
    pc_set_detail("client is closing: the message was not sent");
    pc_producer_fail_send(s, PULSARC_ERR_ALREADY_CLOSED);
}

/* The name of the topic partition s goes to, as a transaction registers it. */
static int partition_name(const pulsarc_producer_t *p, const pc_send_t *s, char *out, size_t len)
{
    if (pc_partitioned_count(p->pt) == 0)
        return snprintf(out, len, "%s", p->topic.full) < (int)len ? 0 : -1;
    return pc_topic_name_partition(&p->topic, s->partition, out, len);
}

void pc_producer_run_send(pc_task_t *t)
{
    pc_send_t *s = (pc_send_t *)t;
    pulsarc_producer_t *p = s->producer;
    s->handover = p->handed_over++;
    s->msg.handover_ns = pc_turn_clock_now(&p->client->stats.clock);
    if (s->txn) {
        char name[sizeof p->topic.full + 32];
        if (partition_name(p, s, name, sizeof name) != 0) {
            pc_set_detail("the topic partition's name is too long");
            pc_producer_fail_send(s, PULSARC_ERR_INVALID_TOPIC);
            return;
        }
        /* Counted as held first: a send that fails at once is released on the way. */
        s->txn_held = true;
        p->txn_held++;
        if (!pc_txn_admit_send(s, name))
            return; /* it waits for its partition's registration, or failed */
        s->txn_held = false;
        p->txn_held--;
    }
    pc_producer_hand_over(s);
}

void pc_producer_post(pulsarc_producer_t *p, pc_task_t *task)
{
    if (p->spool)
        pc_client_post_in_order(p->client, task);
    else
        pc_client_post(p->client, task);
}

/* Every call but the accessors and free starts here: after pulsarc_client_destroy the
 * handle has no client to touch. */
static pulsarc_result check_attached(const pulsarc_producer_t *p)
{
    if (!p)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT, "producer must not be NULL");
    if (atomic_load(&p->state) == P_DETACHED)
        return pc_fail(PULSARC_ERR_ALREADY_CLOSED, "the client was destroyed");
    return PULSARC_OK;
}

/* The interceptors' copy of msg goes through send_async in its place (send_async knows
 * it by copy_of). Kept apart so that the common send is the one call of what follows. */
static pulsarc_result send_intercepted(pulsarc_producer_t *p, pulsarc_txn_t *txn,
                                       pulsarc_message_t *msg, pulsarc_send_cb cb, void *ctx);

/* Check, plan, route, admit and hand over msg (the caller's, or the interceptors' copy of
 * it), in txn unless NULL. */
static pulsarc_result accept_send(pulsarc_producer_t *p, pulsarc_txn_t *txn,
                                  pulsarc_message_t *msg, pulsarc_send_cb cb, void *ctx)
{
    if (msg->payload_len > PC_MAX_PAYLOAD)
        return pc_fail(PULSARC_ERR_MESSAGE_TOO_BIG,
                       "payload of %zu bytes is above the protocol's limit of %d bytes",
                       msg->payload_len, PC_MAX_PAYLOAD);
    /* Key-based batches interleave keys, so their ids are given at flush, in flush order;
     * an id of the application's could not keep that order. */
    if (msg->sequence_id >= 0 && p->conf.batching_enabled && p->conf.batcher == PC_BATCHER_KEY_BASED)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT,
                       "explicit sequence ids cannot be used with key-based batching: its "
                       "batches would interleave them and a deduplicating broker would drop "
                       "whole batches");
    /* Uncompressed payloads can be judged at once; compressed ones after compression. */
    uint32_t max = atomic_load(&p->max_message_size);
    if (p->conf.compression == PC_CODEC_NONE && !p->conf.chunking_enabled && msg->payload_len > max)
        return pc_fail(PULSARC_ERR_MESSAGE_TOO_BIG,
                       "payload of %zu bytes is above the broker's limit of %u bytes",
                       msg->payload_len, max);
    /* The schema check comes before the message takes any permit. A null value (KeyValue
     * SEPARATED) is no payload to check. */
    const pc_schema_t *schema = msg->schema ? msg->schema : p->conf.schema;
    if (schema && p->conf.schema_validation && !msg->null_value) {
        pulsarc_result bad = pc_schema_check(schema, msg->payload, msg->payload_len);
        if (bad != PULSARC_OK)
            return bad;
    }
    if (p->spool) {
        pulsarc_result refused = pc_producer_spool_check(p, msg);
        if (refused != PULSARC_OK)
            return refused;
    }
    pc_route_view_t view = { .key = msg->key, .key_len = msg->key ? strlen(msg->key) : 0,
                             .message = msg, .sequence_id = msg->sequence_id };
    int routable;
    int partition = pc_partitioned_route(p->pt, &view, &routable);
    if (partition < 0)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT,
                       "the custom router chose a partition out of range");
    pc_send_plan_t plan = pc_send_plan(&p->rules, msg->payload_len, pc_message_alone(msg));
    uint32_t *known_crcs = early_crcs(msg, plan.sender_crcs);
    pulsarc_client_t *c = p->client;
    int64_t max_pending = pc_admission_pending_limit(
        p->conf.max_pending_messages, p->conf.max_pending_across_partitions, routable);
    size_t charge = pc_send_charge(plan.memory_charge);
    pulsarc_result res = pc_admit(&c->admission, &p->permits, max_pending, charge,
                                  p->conf.block_if_queue_full);
    if (res != PULSARC_OK) {
        free(known_crcs);
        return res;
    }
    pulsarc_message_t *caller = msg->copy_of;
    bool borrowed = caller && pc_interceptors_borrow_begin(msg, caller);
    pc_send_t *s = plan.sender_crcs ? pc_send_from_builder_crcs(&c->send_pool, msg, known_crcs)
                                    : pc_send_from_builder(&c->send_pool, msg);
    if (borrowed)
        pc_interceptors_borrow_end(msg, caller, s != NULL);
    free(known_crcs);
    if (!s) {
        pc_admission_release(&c->admission, &p->permits, 1, charge);
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    }
    s->reserved_bytes = charge;
    s->cb = cb;
    s->cb_ctx = ctx;
    s->producer = p;
    s->partition = partition;
    s->task.run = pc_producer_run_send;
    if (txn) {
        pc_txn_hold(txn);
        s->txn = txn;
        s->msg.txn = pc_txn_ids(txn);
    }
    if (p->spool)
        return pc_producer_spool_accept(p, s, msg); /* appended, then handed over in order */
    pc_client_post(c, &s->task);
    return PULSARC_OK;
}

/* A send in txn (NULL: none): the interceptors first (on a copy), then accept_send. */
static pulsarc_result send_async_in(pulsarc_producer_t *p, pulsarc_txn_t *txn,
                                    pulsarc_message_t *msg, pulsarc_send_cb cb, void *ctx)
{
    if (p->conf.interceptors.n && !msg->copy_of)
        return send_intercepted(p, txn, msg, cb, ctx);
    pulsarc_result res = check_attached(p);
    if (res == PULSARC_OK)
        res = pc_failures_refusal(p);
    if (res == PULSARC_OK && txn)
        res = pc_txn_check_send(txn, p->client);
    if (res == PULSARC_OK)
        res = accept_send(p, txn, msg, cb, ctx);
    if (res != PULSARC_OK)
        pc_producer_stats_refused(&p->stats, res);
    return res;
}

pulsarc_result pulsarc_producer_send_async(pulsarc_producer_t *p, pulsarc_message_t *msg,
                                           pulsarc_send_cb cb, void *ctx)
{
    if (!p || !msg)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT, "producer and message must not be NULL");
    return send_async_in(p, NULL, msg, cb, ctx);
}

pulsarc_result pulsarc_producer_send_txn_async(pulsarc_producer_t *p, pulsarc_txn_t *txn,
                                               pulsarc_message_t *msg, pulsarc_send_cb cb,
                                               void *ctx)
{
    if (!p || !txn || !msg)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT,
                       "producer, transaction and message must not be NULL");
    /* A spool replays what it holds after a restart, outside any transaction. */
    if (p->spool)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT,
                       "a producer with spoolDir cannot send in a transaction");
    return send_async_in(p, txn, msg, cb, ctx);
}

static pulsarc_result send_intercepted(pulsarc_producer_t *p, pulsarc_txn_t *txn,
                                       pulsarc_message_t *msg, pulsarc_send_cb cb, void *ctx)
{
    /* A producer that refuses every send does so before any interceptor runs. */
    pulsarc_result res = check_attached(p);
    if (res == PULSARC_OK)
        res = pc_failures_refusal(p);
    pulsarc_message_t *copy = NULL;
    if (res == PULSARC_OK)
        res = pc_interceptors_before_send(&p->conf.interceptors, p, msg, &copy);
    if (res != PULSARC_OK) {
        pc_producer_stats_refused(&p->stats, res);
        return res;
    }
    res = send_async_in(p, txn, copy, cb, ctx); /* counts its own refusal */
    pulsarc_message_free(copy);
    return res;
}

typedef struct sync_send {
    pc_waiter_t waiter;
    pulsarc_message_id_t id;
    bool has_id;
} sync_send;

static void on_sync_sent(pulsarc_producer_t *p, pulsarc_result res, const pulsarc_message_id_t *id,
                         void *ctx)
{
    sync_send *s = ctx;
    if (id) {
        s->id = *id;
        s->has_id = true;
    }
    pc_waiter_signal(&s->waiter, res, pulsarc_last_error_detail());
}

pulsarc_result pulsarc_producer_send(pulsarc_producer_t *p, pulsarc_message_t *msg,
                                     pulsarc_message_id_t **id_out)
{
    if (id_out)
        *id_out = NULL;
    if (!p || !msg)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT, "producer and message must not be NULL");
    pulsarc_result res = check_attached(p);
    if (res != PULSARC_OK)
        return res;
    if ((res = pc_client_may_block(p->client, "pulsarc_producer_send")) != PULSARC_OK)
        return res;
    sync_send s;
    memset(&s, 0, sizeof s);
    pc_waiter_init(&s.waiter);
    res = pulsarc_producer_send_async(p, msg, on_sync_sent, &s);
    if (res == PULSARC_OK) {
        res = pc_waiter_wait(&s.waiter);
        if (res == PULSARC_OK && id_out && s.has_id)
            *id_out = pulsarc_message_id_copy(&s.id);
    }
    pc_waiter_destroy(&s.waiter);
    return res;
}

/* ---- flush and close -------------------------------------------------------- */

/* The callback hears the result with its detail (pulsarc_last_error_detail). */
static void done_task_report(done_task *d)
{
    if (d->cb) {
        pc_set_detail(d->res == PULSARC_OK ? NULL : d->detail);
        d->cb(d->producer, d->res, d->ctx);
    }
    free(d);
}

static done_task *done_task_of(pc_partitioned_op_t *op)
{
    return (done_task *)((char *)op - offsetof(done_task, parts));
}

/* Every partition has flushed: the first failure is the flush's, unless a message it
 * covers failed first (send_failures.c). */
static void on_flushed(pc_partitioned_op_t *op)
{
    done_task *d = done_task_of(op);
    if (op->res != PULSARC_OK && d->res == PULSARC_OK) {
        d->res = op->res;
        snprintf(d->detail, sizeof d->detail, "%s", op->detail);
    }
    pulsarc_producer_t *p = d->producer;
    pc_failures_flush_end(p, d);
    done_task_report(d);
    /* A handle freed while this flush waited, its close done first, is left to the last
     * flush (unlink_and_free). */
    if (p->free_requested && !p->listed && !p->closing_on_loop &&
        !pc_partitioned_updating(p->pt) && !p->flushes)
        pc_producer_release(p);
}

static void flush_partitions(done_task *d)
{
    pulsarc_producer_t *p = d->producer;
    d->parts.done = on_flushed;
    if (pc_partitioned_flush(p->pt, &d->parts))
        return;
    /* The partitions are gone (the client is closing): so is whatever failed before. */
    pc_failures_flush_end(p, d);
    d->res = PULSARC_ERR_ALREADY_CLOSED;
    snprintf(d->detail, sizeof d->detail, "producer is closed");
    done_task_report(d);
}

static void run_flush(pc_task_t *t)
{
    done_task *d = (done_task *)t;
    pulsarc_producer_t *p = d->producer;
    pc_failures_flush_begin(p, d);
    if (p->txn_held == 0) {
        flush_partitions(d);
        return;
    }
    /* Sends handed over before the flush that a transaction holds back (until their
     * partition is registered with it) are not at their partitions yet: the flush starts
     * there once the last of them went on. Later sends do not delay it. */
    d->held_left = p->txn_held;
    d->next_held = p->held_flushes;
    p->held_flushes = d;
}

/* A send that its transaction held back went on to its partition, or failed: the flushes
 * that waited for it may start. */
static void held_send_released(pulsarc_producer_t *p, uint64_t handover)
{
    p->txn_held--;
    done_task *ready = NULL;
    for (done_task **at = &p->held_flushes; *at;) {
        done_task *d = *at;
        if (handover < d->covers && --d->held_left == 0) {
            *at = d->next_held;
            d->next_held = ready;
            ready = d;
        } else {
            at = &d->next_held;
        }
    }
    /* Each is still among p->flushes until it ends, so none of them frees p but the
     * last, after which nothing here touches p. */
    while (ready) {
        done_task *d = ready;
        ready = d->next_held;
        flush_partitions(d);
    }
}

static pulsarc_result post_done_task(pulsarc_producer_t *p, void (*run)(pc_task_t *),
                                     pulsarc_done_cb cb, void *ctx)
{
    done_task *d = calloc(1, sizeof *d);
    if (!d)
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    d->task.run = run;
    d->producer = p;
    d->cb = cb;
    d->ctx = ctx;
    pc_producer_post(p, &d->task);
    return PULSARC_OK;
}

pulsarc_result pulsarc_producer_flush_async(pulsarc_producer_t *p, pulsarc_done_cb cb, void *ctx)
{
    pulsarc_result res = check_attached(p);
    if (res != PULSARC_OK)
        return res;
    return post_done_task(p, run_flush, cb, ctx);
}

static void on_sync_done(pulsarc_producer_t *p, pulsarc_result res, void *ctx)
{
    pc_waiter_signal(ctx, res, pulsarc_last_error_detail());
}

static pulsarc_result wait_done(pulsarc_producer_t *p,
                                pulsarc_result (*start)(pulsarc_producer_t *, pulsarc_done_cb,
                                                        void *))
{
    pc_waiter_t w;
    pc_waiter_init(&w);
    pulsarc_result res = start(p, on_sync_done, &w);
    if (res == PULSARC_OK)
        res = pc_waiter_wait(&w);
    pc_waiter_destroy(&w);
    return res;
}

pulsarc_result pulsarc_producer_flush(pulsarc_producer_t *p)
{
    pulsarc_result res = check_attached(p);
    if (res != PULSARC_OK)
        return res;
    if ((res = pc_client_may_block(p->client, "pulsarc_producer_flush")) != PULSARC_OK)
        return res;
    return wait_done(p, pulsarc_producer_flush_async);
}

void pc_producer_release(pulsarc_producer_t *p)
{
    pc_partitioned_free(p->pt);
    pc_spool_close(p->spool); /* every message of it has completed */
    pc_producer_seal_close(p);
    pc_producer_config_clear(&p->conf);
    free(atomic_load(&p->name));
    free(p);
}

static void unlink_and_free(pulsarc_producer_t *p)
{
    pulsarc_client_t *c = p->client;
    if (p->listed) {
        pc_client_forget_shutdown(c, &p->on_shutdown);
        pc_producer_stats_leave(p);
    }
    p->listed = false;
    p->free_requested = true;
    if (pc_partitioned_updating(p->pt))
        return; /* the update finishing frees it (update_finished) */
    if (p->flushes)
        return; /* the last flush finishing frees it (on_flushed) */
    pc_producer_release(p);
}

/* Every partition has closed (the first failure, if any, is the close's). */
static void on_closed(pc_partitioned_op_t *op)
{
    done_task *d = done_task_of(op);
    pulsarc_producer_t *p = d->producer;
    atomic_store(&p->state, P_CLOSED);
    p->closing_on_loop = false;
    pc_send_pool_trim(&p->client->send_pool); /* a large block kept for its next send */
    pc_spool_finish(p->spool); /* unlocked: another producer may open it now */
    d->res = op->res;
    snprintf(d->detail, sizeof d->detail, "%s", op->detail);
    done_task_report(d);
    if (p->free_requested)
        unlink_and_free(p);
}

static void run_close(pc_task_t *t)
{
    done_task *d = (done_task *)t;
    pulsarc_producer_t *p = d->producer;
    if (!p->closing_on_loop && !p->client->rt.stopping) {
        p->closing_on_loop = true;
        d->parts.done = on_closed;
        if (pc_partitioned_close(p->pt, &d->parts))
            return;
        p->closing_on_loop = false; /* the partitions are gone: nothing left to close */
    }
    if (d->cb)
        d->cb(p, PULSARC_OK, d->ctx);
    free(d);
}

static void begin_closing(pulsarc_producer_t *p)
{
    pc_admission_close(&p->client->admission, &p->permits);
    if (p->spool)
        pc_spool_stop_waiting(p->spool);
    int open = P_OPEN;
    atomic_compare_exchange_strong(&p->state, &open, P_CLOSING);
}

pulsarc_result pulsarc_producer_close_async(pulsarc_producer_t *p, pulsarc_done_cb cb, void *ctx)
{
    pulsarc_result res = check_attached(p);
    if (res != PULSARC_OK)
        return res;
    begin_closing(p);
    return post_done_task(p, run_close, cb, ctx);
}

pulsarc_result pulsarc_producer_close(pulsarc_producer_t *p)
{
    pulsarc_result res = check_attached(p);
    if (res != PULSARC_OK)
        return res;
    if ((res = pc_client_may_block(p->client, "pulsarc_producer_close")) != PULSARC_OK)
        return res;
    return wait_done(p, pulsarc_producer_close_async);
}

static void run_free(pc_task_t *t)
{
    pulsarc_producer_t *p = (pulsarc_producer_t *)((char *)t - offsetof(pulsarc_producer_t, free_task));
    p->free_requested = true;
    if (p->closing_on_loop)
        return; /* on_closed frees it */
    if (atomic_load(&p->state) == P_CLOSED || p->client->rt.stopping) {
        unlink_and_free(p);
        return;
    }
    done_task *d = calloc(1, sizeof *d);
    if (!d) {
        unlink_and_free(p);
        return;
    }
    d->producer = p;
    run_close(&d->task);
}

void pulsarc_producer_free(pulsarc_producer_t *p)
{
    if (!p)
        return;
    if (atomic_load(&p->state) == P_DETACHED) {
        pc_producer_release(p); /* the client is gone, and with it every other reference */
        return;
    }
    begin_closing(p);
    p->free_task.run = run_free;
    pc_producer_post(p, &p->free_task);
}

/* ---- the partitioned producer's owner ----------------------------------------- */

static void on_ready(void *ctx, int partition)
{
    pc_producer_publish(ctx, partition);
}

static bool may_grow(void *ctx)
{
    pulsarc_producer_t *p = ctx;
    return !p->free_requested && !p->closing_on_loop && atomic_load(&p->state) == P_OPEN;
}

static void on_grown(void *ctx, int n)
{
    pulsarc_producer_t *p = ctx;
    if (p->conf.interceptors.n)
        pc_interceptors_partitions_change(&p->conf.interceptors, p, p->topic.full, n);
}

static void on_update_finished(void *ctx)
{
    pulsarc_producer_t *p = ctx;
    if (p->free_requested && !p->closing_on_loop && !p->flushes)
        pc_producer_release(p);
}

void pc_producer_partitioned_owner(pulsarc_producer_t *p, pc_partitioned_owner_t *out)
{
    out->ctx = p;
    out->complete = complete_message;
    out->released = release_batch;
    out->stopped = pc_failures_note_terminal;
    out->ready = on_ready;
    out->may_grow = may_grow;
    out->update_finished = on_update_finished;
    out->grown = on_grown;
}

void pc_producer_publish(pulsarc_producer_t *p, int partition)
{
    pc_partition_status_t st;
    if (!pc_partitioned_status(p->pt, partition, &st))
        return; /* the partitions are gone (the client is closing) */
    if (st.last_sequence_id > atomic_load(&p->last_sequence_id))
        atomic_store(&p->last_sequence_id, st.last_sequence_id);
    if (st.schema_version >= 0)
        atomic_store(&p->schema_version, st.schema_version);
    /* The name is partition 0's, known once it has registered (later with lazy start). */
    if (!atomic_load(&p->name) && partition == 0 && *st.name) {
        char *name = strdup(st.name);
        if (name)
            atomic_store(&p->name, name);
    }
}

/* ---- accessors and client shutdown ------------------------------------------ */

const char *pulsarc_producer_name(const pulsarc_producer_t *p)
{
    const char *name = p ? atomic_load(&p->name) : NULL;
    return name ? name : "";
}

const char *pulsarc_producer_topic(const pulsarc_producer_t *p)
{
    return p ? p->topic.full : "";
}

int64_t pulsarc_producer_schema_version(const pulsarc_producer_t *p)
{
    return p ? atomic_load(&p->schema_version) : -1;
}

int64_t pulsarc_producer_last_sequence_id(const pulsarc_producer_t *p)
{
    return p ? atomic_load(&p->last_sequence_id) : -1;
}

uint64_t pulsarc_producer_pending_count(const pulsarc_producer_t *p)
{
    return p ? (uint64_t)atomic_load(&p->permits.pending) : 0;
}

/* The handle outlives its partitioned producer's partitions but not the list itself, which
 * goes with the handle (pc_producer_release): reading its count is safe until free. */
int pulsarc_producer_is_connected(const pulsarc_producer_t *p)
{
    return p && atomic_load(&p->state) == P_OPEN && p->pt && pc_partitioned_connected(p->pt);
}

int pulsarc_producer_partitions(const pulsarc_producer_t *p)
{
    return p && p->pt ? pc_partitioned_count(p->pt) : 0;
}

void pc_producer_shutdown(pc_shutdown_hook_t *hook)
{
    pulsarc_producer_t *p =
        (pulsarc_producer_t *)((char *)hook - offsetof(pulsarc_producer_t, on_shutdown));
    /* A handle the user freed already goes with its close (on_closed); the others stay
     * the user's, detached from the client. */
    bool users = !p->free_requested;
    pc_producer_stats_leave(p);
    p->listed = false;
    begin_closing(p);
    atomic_store(&p->state, P_CLOSED);
    /* Aborting a partition runs a close still in progress to its end, and on_closed frees
     * a handle the user already freed: touch p after the abort only if it is the user's
     * (the partitions are gone from the list before the first is aborted). */
    pc_partitioned_abort(p->pt, PULSARC_ERR_ALREADY_CLOSED, "client is closing");
    if (users)
        atomic_store(&p->state, P_DETACHED);
}
