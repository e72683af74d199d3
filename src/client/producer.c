#include "client/producer_impl.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/message.h"
#include "codec/crypto.h"
#include "common/error.h"
#include "common/topic_name.h"
#include "producer/message_id.h"
#include "producer/op_build.h"
#include "producer/partition_producer.h"
#include "routing/router.h"
#include "schema/schema.h"
#include "wire/crc32c_blocks.h"

/* ---- admission -------------------------------------------------------------- */

/* maxPendingMessages applies per partition, as in the Java client; pulsarc counts one
 * total against maxPendingMessages x partitions (so a busy partition may borrow an idle
 * one's share), capped by maxPendingMessagesAcrossPartitions when that is set. */
static int64_t pending_limit(const pulsarc_producer_t *p)
{
    int64_t per = p->conf.max_pending_messages;
    int64_t across = p->conf.max_pending_across_partitions;
    int64_t limit = per > 0 ? per * atomic_load(&p->pt.n_routable) : 0;
    if (across > 0 && (limit == 0 || across < limit))
        limit = across;
    return limit;
}

/* Take a permit and the memory if both are free, or neither. Compare-and-swap, so the
 * counters never hold a reservation that is about to be given back (which could refuse
 * another sender for nothing). */
static bool try_reserve(pulsarc_producer_t *p, int64_t max_pending, int64_t limit, int64_t bytes,
                        bool *room, bool *memory)
{
    pulsarc_client_t *c = p->client;
    int_fast64_t n = atomic_load(&p->pending);
    do {
        *room = max_pending == 0 || n < max_pending;
        if (!*room)
            return false;
    } while (!atomic_compare_exchange_weak(&p->pending, &n, n + 1));
    int_fast64_t used = atomic_load(&c->memory_used);
    do {
        /* Like the Java client, a message above the whole limit still goes when nothing
         * else holds memory, so large (chunked) payloads are possible at all. */
        *memory = limit == 0 || used + bytes <= limit || used == 0;
        if (!*memory) {
            atomic_fetch_sub(&p->pending, 1);
            return false;
        }
    } while (!atomic_compare_exchange_weak(&c->memory_used, &used, used + bytes));
    return true;
}

/* Whether m goes into a batch (the loop thread copies it into the batch's payload). */
static bool batched(const pulsarc_producer_t *p, const pulsarc_message_t *m)
{
    return p->conf.batching_enabled && !m->deliver_at &&
           m->payload_len < (uint64_t)p->conf.batching_max_bytes;
}

/* What a message counts against memoryLimitBytes: its payload, and a second time when
 * the loop thread makes bytes of it that its op holds beside the payload until the
 * receipt: a batch's payload, a compressed copy, a ciphertext (plus its tag). So RSS
 * stays near the limit whatever the producer does to its messages. */
static size_t memory_charge(const pulsarc_producer_t *p, const pulsarc_message_t *m)
{
    if (p->conf.encryption_keys)
        return 2 * m->payload_len + PC_AES_TAG_LEN;
    if (p->conf.compression != PC_CODEC_NONE || batched(p, m))
        return 2 * m->payload_len;
    return m->payload_len;
}

/* The common case takes no lock: the counters are atomics. Only a sender that finds no
 * room and may wait (blockIfQueueFull, not on the loop thread) uses the mutex and the
 * condition variable, and a release signals only when somebody is waiting. */
static pulsarc_result admit(pulsarc_producer_t *p, size_t bytes)
{
    pulsarc_client_t *c = p->client;
    int64_t limit = c->conf.memory_limit_bytes;
    int64_t max_pending = pending_limit(p);
    bool room, memory;
    if (atomic_load(&p->state) != P_OPEN)
        return pc_fail(PULSARC_ERR_ALREADY_CLOSED, "producer is closed");
    if (try_reserve(p, max_pending, limit, (int64_t)bytes, &room, &memory))
        return PULSARC_OK;
    bool may_block = p->conf.block_if_queue_full && !pc_client_on_loop(c);
    uv_mutex_lock(&c->admit_mu);
    /* Counted before the check, so a release that races the check sees a waiter. */
    atomic_fetch_add(&c->admit_waiters, 1);
    pulsarc_result res = PULSARC_OK;
    for (;;) {
        if (atomic_load(&p->state) != P_OPEN) {
            res = pc_fail(PULSARC_ERR_ALREADY_CLOSED, "producer is closed");
            break;
        }
        if (try_reserve(p, max_pending, limit, (int64_t)bytes, &room, &memory))
            break;
        if (!may_block) {
            res = !room ? pc_fail(PULSARC_ERR_QUEUE_FULL, "%lld messages pending (maxPendingMessages)",
                                  (long long)max_pending)
                        : pc_fail(PULSARC_ERR_MEMORY_LIMIT, "memoryLimitBytes (%lld) reached",
                                  (long long)limit);
            break;
        }
        uv_cond_wait(&c->admit_cond, &c->admit_mu);
    }
    atomic_fetch_sub(&c->admit_waiters, 1);
    /* A closing producer woke us: destroy may be waiting for the last sender to leave. */
    if (res == PULSARC_ERR_ALREADY_CLOSED)
        uv_cond_broadcast(&c->admit_cond);
    uv_mutex_unlock(&c->admit_mu);
    return res;
}

static void release(pulsarc_producer_t *p, int64_t messages, size_t bytes)
{
    pulsarc_client_t *c = p->client;
    atomic_fetch_sub(&p->pending, messages);
    atomic_fetch_sub(&c->memory_used, (int64_t)bytes);
    /* The lock and the wake-up are only needed when somebody is admitting right now. A
     * whole batch wakes them at once, so they send again while the loop thread runs the
     * batch's callbacks. */
    if (atomic_load(&c->admit_waiters) > 0)
        pc_client_admission_released(c, messages > 1);
}

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
    release(p, messages, bytes);
    if (p->pt.parts)
        pc_producer_publish(p, p->pt.parts[partition]);
}

/* The one place a message ends: admission released (here, or for its whole batch just
 * before), the handle's record updated, then the callback. The memory goes with the op
 * that carried it, once no write still reads it. */
static void complete_message(void *owner, pc_msg_t *msg, pulsarc_result res,
                             const pulsarc_message_id_t *id)
{
    pulsarc_producer_t *p = owner;
    pc_send_t *s = pc_send_of(msg);
    if (!s->released) {
        release(p, 1, s->reserved_bytes);
        if (p->pt.parts)
            pc_producer_publish(p, p->pt.parts[s->partition]);
    }
    if (res != PULSARC_OK)
        pc_failures_note(p, s->handover, res, pulsarc_last_error_detail());
    if (s->cb)
        s->cb(p, res, res == PULSARC_OK ? id : NULL, s->cb_ctx);
}

/* ---- sending ---------------------------------------------------------------- */

/* Large payloads that travel unchanged (no compression, no encryption, not batched),
 * whole or in chunks, get their CRCs here, on the sending thread: the loop thread, which
 * also writes every frame, is the one that runs out of time. They are kept per block
 * (wire/crc32c_blocks.h), so the loop derives any chunk's CRC from them whatever the
 * chunk bounds turn out to be; op building uses them only if the bytes it sends are still
 * the payload's (op_build.c). */
#define SENDER_CRC_MIN (64 * 1024)

static bool crcs_on_sender(const pulsarc_producer_t *p, const pulsarc_message_t *m)
{
    /* Compressed or encrypted bytes are made on the loop: a CRC of these would be wasted. */
    if (m->payload_len < SENDER_CRC_MIN || p->conf.compression != PC_CODEC_NONE ||
        p->conf.encryption_keys)
        return false;
    return !batched(p, m);
}

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

static void run_send(pc_task_t *t)
{
    pc_send_t *s = (pc_send_t *)t;
    pulsarc_producer_t *p = s->producer;
    s->handover = p->handed_over++;
    if (p->client->rt.stopping || !p->pt.parts) {
        pc_set_detail("client is closing: the message was not sent");
        complete_message(p, &s->msg, PULSARC_ERR_ALREADY_CLOSED, NULL);
        pc_msg_free(&s->msg);
        return;
    }
    pc_pp_send(p->pt.parts[s->partition], &s->msg);
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

pulsarc_result pulsarc_producer_send_async(pulsarc_producer_t *p, pulsarc_message_t *msg,
                                           pulsarc_send_cb cb, void *ctx)
{
    if (!p || !msg)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT, "producer and message must not be NULL");
    pulsarc_result refused = check_attached(p);
    if (refused == PULSARC_OK)
        refused = pc_failures_refusal(p);
    if (refused != PULSARC_OK)
        return refused;
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
    pc_route_view_t view = { .key = msg->key, .key_len = msg->key ? strlen(msg->key) : 0,
                             .message = msg };
    int partition = pc_partitioned_route(&p->pt, &view);
    if (partition < 0)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT,
                       "the custom router chose a partition out of range");
    size_t charge = memory_charge(p, msg);
    bool crcs = crcs_on_sender(p, msg);
    uint32_t *known_crcs = early_crcs(msg, crcs);
    pulsarc_result res = admit(p, charge);
    if (res != PULSARC_OK) {
        free(known_crcs);
        return res;
    }
    pc_send_t *s = crcs ? pc_send_from_builder_crcs(&p->client->send_pool, msg, known_crcs)
                        : pc_send_from_builder(&p->client->send_pool, msg);
    free(known_crcs);
    if (!s) {
        release(p, 1, charge);
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    }
    s->reserved_bytes = charge;
    s->cb = cb;
    s->cb_ctx = ctx;
    s->producer = p;
    s->partition = partition;
    s->task.run = run_send;
    pc_client_post(p->client, &s->task);
    return PULSARC_OK;
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
    if (pc_client_on_loop(p->client))
        return pc_fail(PULSARC_ERR_WOULD_BLOCK, "pulsarc_producer_send called from a callback");
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

/* One partition answered; true when it was the last. The first failure is kept. */
static bool done_task_part_finished(done_task *d, pulsarc_result res)
{
    if (res != PULSARC_OK && d->res == PULSARC_OK) {
        d->res = res;
        snprintf(d->detail, sizeof d->detail, "%s", pulsarc_last_error_detail());
    }
    return --d->remaining == 0;
}

/* The callback hears the result with its detail (pulsarc_last_error_detail). */
static void done_task_report(done_task *d)
{
    if (d->cb) {
        pc_set_detail(d->res == PULSARC_OK ? NULL : d->detail);
        d->cb(d->producer, d->res, d->ctx);
    }
    free(d);
}

static void close_part_done(pc_pp_t *pp, pulsarc_result res, void *ctx)
{
    done_task *d = ctx;
    if (done_task_part_finished(d, res))
        done_task_report(d);
}

static void flush_part_done(pc_pp_t *pp, pulsarc_result res, void *ctx)
{
    done_task *d = ctx;
    if (!done_task_part_finished(d, res))
        return;
    pulsarc_producer_t *p = d->producer;
    pc_failures_flush_end(p, d);
    done_task_report(d);
    /* A handle freed while this flush waited, its close done first, is left to the last
     * flush (unlink_and_free). */
    if (p->free_requested && !p->listed && !p->closing_on_loop && !p->pt.updating && !p->flushes)
        pc_producer_release(p);
}

static void run_flush(pc_task_t *t)
{
    done_task *d = (done_task *)t;
    pulsarc_producer_t *p = d->producer;
    if (!p->pt.parts) {
        d->res = PULSARC_ERR_ALREADY_CLOSED;
        snprintf(d->detail, sizeof d->detail, "producer is closed");
        done_task_report(d);
        return;
    }
    pc_failures_flush_begin(p, d);
    d->remaining = p->pt.n_parts;
    for (int i = 0, n = p->pt.n_parts; i < n; i++)
        pc_pp_flush(p->pt.parts[i], flush_part_done, d);
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
    d->remaining = 1;
    pc_client_post(p->client, &d->task);
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
    if (pc_client_on_loop(p->client))
        return pc_fail(PULSARC_ERR_WOULD_BLOCK, "pulsarc_producer_flush called from a callback");
    return wait_done(p, pulsarc_producer_flush_async);
}

void pc_producer_release(pulsarc_producer_t *p)
{
    pc_partitioned_free_parts(&p->pt);
    pc_partitioned_updates_stop(&p->pt);
    pc_producer_config_clear(&p->conf);
    free(atomic_load(&p->name));
    free(p);
}

static void unlink_and_free(pulsarc_producer_t *p)
{
    pulsarc_client_t *c = p->client;
    if (p->listed)
        pc_client_forget_shutdown(c, &p->on_shutdown);
    p->listed = false;
    p->free_requested = true;
    if (p->pt.updating)
        return; /* the update finishing frees it (update_finished) */
    if (p->flushes)
        return; /* the last flush finishing frees it (flush_part_done) */
    pc_producer_release(p);
}

static void on_closed(pulsarc_producer_t *p, pulsarc_result res, void *ctx)
{
    done_task *d = ctx;
    atomic_store(&p->state, P_CLOSED);
    p->closing_on_loop = false;
    pc_send_pool_trim(&p->client->send_pool); /* a large block kept for its next send */
    if (d->cb)
        d->cb(p, res, d->ctx);
    free(d);
    if (p->free_requested)
        unlink_and_free(p);
}

static void run_close(pc_task_t *t)
{
    done_task *d = (done_task *)t;
    pulsarc_producer_t *p = d->producer;
    if (p->closing_on_loop || !p->pt.parts || p->client->rt.stopping) {
        if (d->cb)
            d->cb(p, PULSARC_OK, d->ctx);
        free(d);
        return;
    }
    p->closing_on_loop = true;
    /* A second done_task collects the partitions and then reports through on_closed. */
    done_task *all = calloc(1, sizeof *all);
    if (!all) {
        p->closing_on_loop = false;
        if (d->cb)
            d->cb(p, PULSARC_ERR_NO_MEMORY, d->ctx);
        free(d);
        return;
    }
    all->producer = p;
    all->cb = on_closed;
    all->ctx = d;
    all->remaining = p->pt.n_parts;
    for (int i = 0, n = p->pt.n_parts; i < n; i++)
        pc_pp_close(p->pt.parts[i], close_part_done, all);
}

static void begin_closing(pulsarc_producer_t *p)
{
    /* Under the admission lock so that blocked senders wake up and see the state. */
    uv_mutex_lock(&p->client->admit_mu);
    int open = P_OPEN;
    atomic_compare_exchange_strong(&p->state, &open, P_CLOSING);
    uv_cond_broadcast(&p->client->admit_cond);
    uv_mutex_unlock(&p->client->admit_mu);
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
    if (pc_client_on_loop(p->client))
        return pc_fail(PULSARC_ERR_WOULD_BLOCK, "pulsarc_producer_close called from a callback "
                                                "(pulsarc_producer_close_async does not block)");
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
    pc_client_post(p->client, &p->free_task);
}

/* ---- the partitioned producer's owner ----------------------------------------- */

static void on_grown(void *ctx, int from, int to)
{
    pulsarc_producer_t *p = ctx;
    for (int i = from; i < to; i++)
        pc_producer_publish(p, p->pt.parts[i]);
}

static bool may_grow(void *ctx)
{
    pulsarc_producer_t *p = ctx;
    return !p->free_requested && !p->closing_on_loop && atomic_load(&p->state) == P_OPEN;
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
    out->grown = on_grown;
    out->may_grow = may_grow;
    out->update_finished = on_update_finished;
}

void pc_producer_publish(pulsarc_producer_t *p, const pc_pp_t *pp)
{
    int64_t last = pc_pp_last_sequence_id(pp);
    if (last > atomic_load(&p->last_sequence_id))
        atomic_store(&p->last_sequence_id, last);
    int64_t version = pc_pp_schema_version(pp);
    if (version >= 0)
        atomic_store(&p->schema_version, version);
    /* The name is partition 0's, known once it has registered (later with lazy start). */
    if (!atomic_load(&p->name) && pp == p->pt.parts[0] && *pc_pp_name(pp)) {
        char *name = strdup(pc_pp_name(pp));
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
    return p ? (uint64_t)atomic_load(&p->pending) : 0;
}

void pc_producer_shutdown(pc_shutdown_hook_t *hook)
{
    pulsarc_producer_t *p =
        (pulsarc_producer_t *)((char *)hook - offsetof(pulsarc_producer_t, on_shutdown));
    /* A handle the user freed already goes with its close (on_closed); the others stay
     * the user's, detached from the client. */
    bool users = !p->free_requested;
    p->listed = false;
    pc_partitioned_updates_stop(&p->pt);
    begin_closing(p);
    atomic_store(&p->state, P_CLOSED);
    /* Aborting a partition runs a close still in progress to its end, and on_closed frees
     * a handle the user already freed: touch p after the aborts only if it is the user's
     * (abort_all takes the partitions off the handle first). */
    pc_partitioned_abort_all(&p->pt, PULSARC_ERR_ALREADY_CLOSED, "client is closing");
    if (users)
        atomic_store(&p->state, P_DETACHED);
}
