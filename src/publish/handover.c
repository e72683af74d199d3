/* The loop thread takes an accepted send: stamps its place among the producer's messages,
 * lets its transaction admit it (its topic partition registered with the transaction
 * first, txn_stage.c), and gives it to its partition producer. @locality loop thread. */
#include "common/error.h"
#include "publish/producer.h"
#include "publish/txn_stage.h"

/* Give s to its partition producer; while the client stops it fails with ALREADY_CLOSED. */
static void hand_over(pc_send_t *s)
{
    pulsarc_producer_t *p = s->producer;
    if (!p->client->rt.stopping) {
        /* Read before the hand-over, after which s may be gone (completed at once). */
        bool held = s->txn_held;
        uint64_t handover = s->handover;
        s->txn_held = false;
        if (pc_partitioned_send(p->pt, s->partition, &s->msg)) {
            if (held)
                pc_flush_held_released(p, handover);
            return;
        }
        s->txn_held = held; /* released by the failure below */
    }
    pc_set_detail("client is closing: the message was not sent");
    pc_producer_fail_send(s, PULSARC_ERR_ALREADY_CLOSED);
}

/* The transaction registered s's partition (or could not). */
static void resume_held(pc_transaction_waiter_t *w, pulsarc_result res)
{
    pc_send_t *s = (pc_send_t *)((char *)w - offsetof(pc_send_t, txn_wait));
    if (res == PULSARC_OK)
        hand_over(s);
    else
        pc_producer_fail_send(s, res);
}

void pc_producer_run_send(pc_task_t *t)
{
    pc_send_t *s = (pc_send_t *)t;
    pulsarc_producer_t *p = s->producer;
    s->handover = p->handed_over++;
    p->client->sends_taken++;
    s->msg.handover_ns = pc_turn_clock_now(&p->client->stats.clock);
    if (s->txn) {
        pulsarc_result res = PULSARC_OK;
        switch (pc_txn_stage_admit(s, resume_held, &res)) {
        case PC_TXN_STAGE_GO:
            break;
        case PC_TXN_STAGE_HELD:
            return; /* it waits for its partition's registration */
        case PC_TXN_STAGE_FAILED:
            pc_producer_fail_send(s, res);
            return;
        }
    }
    hand_over(s);
}
