/* The send. Every message a producer accepts goes through these stages, in this order,
 * which is written here and nowhere else (the order is a security property: what is
 * encrypted comes before anything is stored):
 *
 *   1. refusals      the handle is attached, and no terminal error stopped it (flush.c)
 *   2. interceptors  before_send, on a copy of the caller's message (interceptors.c)
 *   3. checks        sizes, ids, schema, what a spool can keep (checks.c)
 *   4. transaction   may this producer send in it (txn_stage.c)
 *   5. route, plan   the partition (the router runs on this thread) and the send plan
 *                    (producer/plan.h), made once and carried with the message
 *   6. admission     a permit and memory, waiting for room with blockIfQueueFull; the
 *                    send's block (admit.c, shared with the spool's resends)
 *   7. seal          compressed and encrypted, for a spool with encryption (seal_stage.c)
 *   8. spool         appended before the send returns; the spool hands it over in
 *                    sequence-id order (spool_stage.c)
 *   9. hand-over     posted to the loop thread, which takes it (handover.c)
 *
 * A stage whose feature is off costs one test. A refusal at any stage is counted in the
 * statistics and undoes what the stages before it took; the caller's message is then as
 * it was (a borrowed payload still the caller's). @locality any thread. */
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "publish/checks.h"
#include "publish/interceptors.h"
#include "publish/admit.h"
#include "publish/producer.h"
#include "publish/seal_stage.h"
#include "publish/spool_stage.h"
#include "publish/txn_stage.h"
#include "wire/crc32c_blocks.h"

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

/* Stages 5 and 6: route, plan, admit. The interceptors' copy hands the caller's borrowed
 * payload to the send it builds (the caller keeps it when the send is refused). */
static pc_send_t *route_and_admit(pulsarc_producer_t *p, pulsarc_message_t *msg,
                                  pulsarc_result *res)
{
    pc_route_view_t view = { .key = msg->key,
                             .key_len = msg->key ? strlen(msg->key) : 0,
                             .message = msg,
                             .sequence_id = msg->sequence_id };
    int routable;
    int partition = pc_partitioned_route(p->pt, &view, &routable);
    if (partition < 0) {
        *res = pc_fail(PULSARC_ERR_INVALID_ARGUMENT,
                       "the custom router chose a partition out of range");
        return NULL;
    }
    pc_plan_t plan = pc_plan(&p->rules, msg->payload_len, pc_message_alone(msg));
    int64_t max_pending = pc_admission_pending_limit(p->conf.max_pending_messages,
                                                     p->conf.max_pending_across_partitions,
                                                     routable);
    uint32_t *known_crcs = early_crcs(msg, plan.sender_crcs);
    pulsarc_message_t *caller = msg->copy_of;
    bool borrowed = caller && pc_interceptors_borrow_begin(msg, caller);
    pc_send_t *s = pc_producer_admit(p, msg, plan, max_pending, p->conf.block_if_queue_full,
                                     known_crcs, res);
    if (borrowed)
        pc_interceptors_borrow_end(msg, caller, s != NULL);
    if (known_crcs)
        free(known_crcs);
    if (s)
        s->partition = partition;
    return s;
}

/* Stages 3 to 9 for msg: the caller's message, or the interceptors' copy of it. */
static pulsarc_result accept_message(pulsarc_producer_t *p, pulsarc_txn_t *txn,
                                     pulsarc_message_t *msg, pulsarc_send_cb cb, void *ctx)
{
    pulsarc_result res = pc_check_message(p, msg);
    if (res == PULSARC_OK && txn)
        res = pc_txn_stage_check(p, txn);
    if (res != PULSARC_OK)
        return res;
    pc_send_t *s = route_and_admit(p, msg, &res);
    if (!s)
        return res;
    s->cb = cb;
    s->cb_ctx = ctx;
    if (p->sealer && (res = pc_seal_stage_seal(p, s)) != PULSARC_OK) {
        pc_producer_unadmit(p, s, msg->copy_of ? msg->copy_of : msg);
        return res;
    }
    if (p->spool) {
        if ((res = pc_spool_stage_append(p, s)) != PULSARC_OK)
            pc_producer_unadmit(p, s, msg->copy_of ? msg->copy_of : msg);
        return res;
    }
    if (txn)
        pc_txn_stage_attach(s, txn);
    pc_client_post(p->client, &s->task);
    return PULSARC_OK;
}

/* Stages 1 and 2, then the rest on the message they leave; every refusal is counted.
 * Inlined into both entry points: with two callers the compiler (and link-time
 * optimisation in a program that uses both) kept it out of line, about 23 instructions on
 * every plain send, which the transaction argument, a constant NULL there, then folds. */
static inline __attribute__((always_inline)) pulsarc_result send_in(pulsarc_producer_t *p,
                                                                    pulsarc_txn_t *txn,
                                                                    pulsarc_message_t *msg,
                                                                    pulsarc_send_cb cb, void *ctx)
{
    pulsarc_result res = pc_producer_check_attached(p);
    if (res == PULSARC_OK)
        res = pc_failures_refusal(p);
    if (res == PULSARC_OK && p->conf.interceptors.n) {
        pulsarc_message_t *copy = NULL;
        res = pc_interceptors_before_send(&p->conf.interceptors, p, msg, &copy);
        if (res == PULSARC_OK) {
            res = accept_message(p, txn, copy, cb, ctx);
            pulsarc_message_free(copy);
        }
    } else if (res == PULSARC_OK) {
        res = accept_message(p, txn, msg, cb, ctx);
    }
    if (res != PULSARC_OK)
        pc_producer_stats_refused(&p->stats, res);
    return res;
}

pulsarc_result pulsarc_producer_send_async(pulsarc_producer_t *p, pulsarc_message_t *msg,
                                           pulsarc_send_cb cb, void *ctx)
{
    if (!p || !msg)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT, "producer and message must not be NULL");
    return send_in(p, NULL, msg, cb, ctx);
}

pulsarc_result pulsarc_producer_send_txn_async(pulsarc_producer_t *p, pulsarc_txn_t *txn,
                                               pulsarc_message_t *msg, pulsarc_send_cb cb,
                                               void *ctx)
{
    if (!p || !txn || !msg)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT,
                       "producer, transaction and message must not be NULL");
    return send_in(p, txn, msg, cb, ctx);
}

typedef struct sync_send {
    pc_waiter_t waiter;
    pulsarc_message_id_t id;
    bool has_id;
} sync_send;

static void on_sync_sent(pulsarc_producer_t *p, pulsarc_result res, const pulsarc_message_id_t *id,
                         void *ctx)
{
    (void)p;
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
    pulsarc_result res = pc_producer_check_attached(p);
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
