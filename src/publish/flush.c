/* Flushes, and what failed messages leave on their handle. A flush waits for every message
 * handed over before it and reports the first failure among those it covers (that reached
 * the loop thread before it did), with its detail, whether they failed before the flush
 * began or while it waited; a failure no flush covered waits for the next flush. A
 * terminal failure (pulsarc_result_is_terminal) that stopped a partition producer makes
 * every later send fail at once with the same result; one that ended a single message (a
 * message's own schema refused, a send the broker did not allow) does not.
 * @locality loop thread, except the public calls and pc_failures_refusal (any thread). */
#include <stdio.h>
#include <stdlib.h>

#include "common/error.h"
#include "publish/producer.h"

/* ---- failures ------------------------------------------------------------------------- */

void pc_failures_note_terminal(void *owner, pulsarc_result res, const char *detail)
{
    pulsarc_producer_t *p = owner;
    if (pulsarc_result_is_terminal(res) && atomic_load(&p->terminal) == PULSARC_OK) {
        /* Only this thread writes it, and only before the result is published. */
        snprintf(p->terminal_detail, sizeof p->terminal_detail, "%s", detail);
        atomic_store(&p->terminal, res);
    }
}

void pc_failures_note(pulsarc_producer_t *p, uint64_t handover, pulsarc_result res,
                      const char *detail)
{
    bool covered = false;
    for (pc_done_task_t *d = p->flushes; d; d = d->next_flush) {
        if (handover >= d->covers)
            continue;
        covered = true;
        if (d->res == PULSARC_OK) {
            d->res = res;
            snprintf(d->detail, sizeof d->detail, "%s", detail);
        }
    }
    if (!covered && p->unreported == PULSARC_OK) {
        p->unreported = res;
        snprintf(p->unreported_detail, sizeof p->unreported_detail, "%s", detail);
    }
}

pulsarc_result pc_failures_refusal(const pulsarc_producer_t *p)
{
    pulsarc_result res = (pulsarc_result)atomic_load(&p->terminal);
    if (res == PULSARC_OK)
        return PULSARC_OK;
    return pc_fail(res, "the producer stopped after a terminal error: %s", p->terminal_detail);
}

/* A flush starts: it covers every message handed over so far, and takes a failure no
 * flush covered yet. */
static void flush_begin(pulsarc_producer_t *p, pc_done_task_t *d)
{
    d->covers = p->handed_over;
    if (p->unreported != PULSARC_OK) {
        d->res = p->unreported;
        snprintf(d->detail, sizeof d->detail, "%s", p->unreported_detail);
        p->unreported = PULSARC_OK;
    }
    d->next_flush = p->flushes;
    p->flushes = d;
}

static void flush_end(pulsarc_producer_t *p, pc_done_task_t *d)
{
    for (pc_done_task_t **at = &p->flushes; *at; at = &(*at)->next_flush) {
        if (*at == d) {
            *at = d->next_flush;
            return;
        }
    }
}

/* ---- done tasks: flush and close ------------------------------------------------------- */

void pc_done_task_report(pc_done_task_t *d)
{
    if (d->cb) {
        pc_set_detail(d->res == PULSARC_OK ? NULL : d->detail);
        d->cb(d->producer, d->res, d->ctx);
    }
    free(d);
}

pc_done_task_t *pc_done_task_of(pc_partitioned_op_t *op)
{
    return (pc_done_task_t *)((char *)op - offsetof(pc_done_task_t, parts));
}

pulsarc_result pc_done_task_post(pulsarc_producer_t *p, void (*run)(pc_task_t *),
                                 pulsarc_done_cb cb, void *ctx)
{
    pc_done_task_t *d = calloc(1, sizeof *d);
    if (!d)
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    d->task.run = run;
    d->producer = p;
    d->cb = cb;
    d->ctx = ctx;
    pc_producer_post(p, &d->task);
    return PULSARC_OK;
}

static void on_sync_done(pulsarc_producer_t *p, pulsarc_result res, void *ctx)
{
    (void)p;
    pc_waiter_signal(ctx, res, pulsarc_last_error_detail());
}

pulsarc_result pc_done_task_wait(pulsarc_producer_t *p,
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

/* Every partition has flushed: the first failure is the flush's, unless a message it
 * covers failed first. */
static void on_flushed(pc_partitioned_op_t *op)
{
    pc_done_task_t *d = pc_done_task_of(op);
    if (op->res != PULSARC_OK && d->res == PULSARC_OK) {
        d->res = op->res;
        snprintf(d->detail, sizeof d->detail, "%s", op->detail);
    }
    pulsarc_producer_t *p = d->producer;
    flush_end(p, d);
    pc_done_task_report(d);
    /* A handle freed while this flush waited, its close done first, is left to the last
     * flush (producer.c, unlink_and_free). */
    if (p->free_requested && !p->listed && !p->closing_on_loop && !pc_partitioned_updating(p->pt) &&
        !p->flushes)
        pc_producer_release(p);
}

static void flush_partitions(pc_done_task_t *d)
{
    pulsarc_producer_t *p = d->producer;
    d->parts.done = on_flushed;
    if (pc_partitioned_flush(p->pt, &d->parts))
        return;
    /* The partitions are gone (the client is closing): so is whatever failed before. */
    flush_end(p, d);
    d->res = PULSARC_ERR_ALREADY_CLOSED;
    snprintf(d->detail, sizeof d->detail, "producer is closed");
    pc_done_task_report(d);
}

static void run_flush(pc_task_t *t)
{
    pc_done_task_t *d = (pc_done_task_t *)t;
    pulsarc_producer_t *p = d->producer;
    flush_begin(p, d);
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

void pc_flush_held_released(pulsarc_producer_t *p, uint64_t handover)
{
    p->txn_held--;
    pc_done_task_t *ready = NULL;
    for (pc_done_task_t **at = &p->held_flushes; *at;) {
        pc_done_task_t *d = *at;
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
        pc_done_task_t *d = ready;
        ready = d->next_held;
        flush_partitions(d);
    }
}

pulsarc_result pulsarc_producer_flush_async(pulsarc_producer_t *p, pulsarc_done_cb cb, void *ctx)
{
    pulsarc_result res = pc_producer_check_attached(p);
    if (res != PULSARC_OK)
        return res;
    return pc_done_task_post(p, run_flush, cb, ctx);
}

pulsarc_result pulsarc_producer_flush(pulsarc_producer_t *p)
{
    pulsarc_result res = pc_producer_check_attached(p);
    if (res != PULSARC_OK)
        return res;
    if ((res = pc_client_may_block(p->client, "pulsarc_producer_flush")) != PULSARC_OK)
        return res;
    return pc_done_task_wait(p, pulsarc_producer_flush_async);
}
