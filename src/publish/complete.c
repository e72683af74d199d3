/* The end of each accepted message: the completion stages, in this order, written here and
 * nowhere else, then exactly one callback:
 *   1. admission: its permit and memory given back (for a batch, at once for all of its
 *      messages, before their callbacks), and the handle's record updated
 *   2. spool: its record let go (spool_stage.c), unless it stays for the next producer
 *   3. failures: a failure noted for the flushes that cover it, and counted (flush.c)
 *   4. transaction: its result noted (txn_stage.c)
 *   5. interceptors: on_ack (interceptors.c)
 *   6. the application's callback
 *   7. transaction: its end, which a commit or abort may wait for
 * The memory goes with the op that carried it, once no write still reads it.
 * @locality loop thread. */
#include "common/error.h"
#include "publish/interceptors.h"
#include "publish/producer.h"
#include "publish/spool_stage.h"
#include "publish/txn_stage.h"

void pc_producer_release_batch(void *owner, pc_msg_t *first, int64_t messages, size_t charged)
{
    pulsarc_producer_t *p = owner;
    pc_admission_release(&p->client->admission, &p->permits, messages, charged);
    pc_producer_publish(p, pc_send_of(first)->partition); /* one partition's batch */
}

/* Stages 2 to 7 for a message that has business with one of 2 to 5 or 7. Kept out of
 * line, as release_and_finish below: inlined, their calls would make every completion save
 * and restore registers. */
static __attribute__((noinline)) void complete_in_stages(pulsarc_producer_t *p, pc_send_t *s,
                                                         pulsarc_result res,
                                                         const pulsarc_message_id_t *id)
{
    if (s->spooled)
        pc_spool_stage_release(s, res);
    if (res != PULSARC_OK) {
        pc_failures_note(p, s->handover, res, pulsarc_last_error_detail());
        p->stats.failed_by[pc_stats_result_slot(res)]++;
    }
    /* Before the interceptors and the callback, which may overwrite the detail. */
    if (s->txn)
        pc_txn_stage_result(s, res, pulsarc_last_error_detail());
    if (p->conf.interceptors.n)
        pc_interceptors_on_ack(&p->conf.interceptors, p, &s->msg, res,
                               res == PULSARC_OK ? id : NULL);
    if (s->cb)
        s->cb(p, res, res == PULSARC_OK ? id : NULL, s->cb_ctx);
    if (s->txn)
        pc_txn_stage_done(s);
}

/* Stages 2 to 7. Most messages are stored and have no business with any stage but the
 * callback, which then comes last: a tail call, with no frame kept for it. */
static inline void finish(pulsarc_producer_t *p, pc_send_t *s, pulsarc_result res,
                          const pulsarc_message_id_t *id)
{
    if (res != PULSARC_OK || s->spooled || s->txn || p->conf.interceptors.n)
        complete_in_stages(p, s, res, id);
    else if (s->cb)
        s->cb(p, res, id, s->cb_ctx);
}

/* Stage 1 for a message whose batch did not give its admission back already, then the
 * rest. */
static __attribute__((noinline)) void release_and_finish(pulsarc_producer_t *p, pc_send_t *s,
                                                         pulsarc_result res,
                                                         const pulsarc_message_id_t *id)
{
    pc_admission_release(&p->client->admission, &p->permits, 1, s->msg.charged);
    pc_producer_publish(p, s->partition);
    finish(p, s, res, id);
}

void pc_producer_complete(void *owner, pc_msg_t *msg, pulsarc_result res,
                          const pulsarc_message_id_t *id)
{
    pulsarc_producer_t *p = owner;
    pc_send_t *s = pc_send_of(msg);
    if (!msg->released)
        release_and_finish(p, s, res, id);
    else
        finish(p, s, res, id);
}

void pc_producer_fail_send(pc_send_t *s, pulsarc_result res)
{
    pulsarc_producer_t *p = s->producer;
    bool held = s->txn_held;
    uint64_t handover = s->handover;
    pc_producer_complete(p, &s->msg, res, NULL);
    pc_msg_free(&s->msg);
    if (held)
        pc_flush_held_released(p, handover);
}
