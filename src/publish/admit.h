/* Admission: one routine for what a send and a spool resend take before they are accepted
 * (a permit, memory, the send's block), and its undoing. Inline: it is on every send's
 * path. @locality any thread. */
#ifndef PC_ADMIT_H
#define PC_ADMIT_H

#include "common/error.h"
#include "publish/producer.h"

/* What an accepted send takes: a permit and memory (waiting for room when wait), then
 * its block, built from b (b's borrowed payload is taken over; known_crcs: its block CRCs
 * when the plan wants them and the caller has them already). The send carries the plan
 * from then on, and its task is the hand-over. NULL with *res set when refused (nothing
 * held). */
static inline pc_send_t *pc_producer_admit(pulsarc_producer_t *p, pulsarc_message_t *b,
                                           pc_plan_t plan, int64_t max_pending, bool wait,
                                           const uint32_t *known_crcs, pulsarc_result *res)
{
    pulsarc_client_t *c = p->client;
    size_t charge = pc_send_charge(b, plan.sender_crcs, plan.memory_charge);
    if ((*res = pc_admit(&c->admission, &p->permits, max_pending, charge, wait)) != PULSARC_OK)
        return NULL;
    pc_send_t *s = plan.sender_crcs ? pc_send_from_builder_crcs(&c->blocks, b, known_crcs)
                                    : pc_send_from_builder(&c->blocks, b);
    if (!s) {
        pc_admission_release(&c->admission, &p->permits, 1, charge);
        *res = pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
        return NULL;
    }
    s->msg.charged = charge;
    s->producer = p;
    s->msg.batched = plan.batched;
    s->task.run = pc_producer_run_send;
    return s;
}

/* Give back what pc_producer_admit took and free s (a borrowed payload goes back to b). */
void pc_producer_unadmit(pulsarc_producer_t *p, pc_send_t *s, pulsarc_message_t *b);

#endif
