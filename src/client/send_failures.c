/* What failed messages leave on their handle. A flush reports the first failure among
 * the messages it covers (those that reached the loop thread before it did), with its
 * detail, whether they failed before the flush began or while it waited; a failure no
 * flush covered waits for the next flush. A terminal failure (pulsarc_result_is_terminal)
 * that stopped a partition producer makes every later send fail at once with the same
 * result; one that ended a single message (a message's own schema refused, a send the
 * broker did not allow) does not.
 * @locality loop thread, except pc_failures_refusal (any thread). */
#include <stdio.h>

#include "client/producer_impl.h"
#include "common/error.h"

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
    for (done_task *d = p->flushes; d; d = d->next_flush) {
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

void pc_failures_flush_begin(pulsarc_producer_t *p, done_task *d)
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

void pc_failures_flush_end(pulsarc_producer_t *p, done_task *d)
{
    for (done_task **at = &p->flushes; *at; at = &(*at)->next_flush) {
        if (*at == d) {
            *at = d->next_flush;
            return;
        }
    }
}

pulsarc_result pc_failures_refusal(const pulsarc_producer_t *p)
{
    pulsarc_result res = (pulsarc_result)atomic_load(&p->terminal);
    if (res == PULSARC_OK)
        return PULSARC_OK;
    return pc_fail(res, "the producer stopped after a terminal error: %s", p->terminal_detail);
}
