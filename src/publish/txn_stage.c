/* The transaction stage (txn_stage.h). */
#include "publish/txn_stage.h"

#include <stdio.h>

#include "common/error.h"
#include "publish/producer.h"
#include "transaction/transaction.h"

pulsarc_result pc_txn_stage_check(const pulsarc_producer_t *p, pulsarc_txn_t *txn)
{
    /* A spool replays what it holds after a restart, outside any transaction. */
    if (p->spool)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT,
                       "a producer with spoolDir cannot send in a transaction");
    return pc_transaction_check_send(txn, p->client);
}

void pc_txn_stage_attach(pc_send_t *s, pulsarc_txn_t *txn)
{
    pc_transaction_hold(txn);
    s->txn = txn;
    s->msg.txn = pc_transaction_ids(txn);
}

/* The name of the topic partition s goes to, as a transaction registers it. */
static int partition_name(const pulsarc_producer_t *p, const pc_send_t *s, char *out, size_t len)
{
    if (pc_partitioned_count(p->pt) == 0)
        return snprintf(out, len, "%s", p->topic.full) < (int)len ? 0 : -1;
    return pc_topic_name_partition(&p->topic, s->partition, out, len);
}

pc_txn_stage_admit_t
pc_txn_stage_admit(pc_send_t *s, void (*resume)(pc_transaction_waiter_t *w, pulsarc_result res),
                   pulsarc_result *res)
{
    pulsarc_producer_t *p = s->producer;
    pc_transaction_send_begins(s->txn);
    char name[sizeof p->topic.full + 32];
    if (partition_name(p, s, name, sizeof name) != 0) {
        *res = pc_fail(PULSARC_ERR_INVALID_TOPIC, "the topic partition's name is too long");
        return PC_TXN_STAGE_FAILED;
    }
    /* Counted as held first: a send that fails at once is released on the way. */
    s->txn_held = true;
    p->txn_held++;
    s->txn_wait.resume = resume;
    switch (pc_transaction_admit(s->txn, name, &s->txn_wait, res)) {
    case PC_TRANSACTION_GO:
        s->txn_held = false;
        p->txn_held--;
        return PC_TXN_STAGE_GO;
    case PC_TRANSACTION_WAIT:
        return PC_TXN_STAGE_HELD; /* s may be resumed already: not touched any more */
    case PC_TRANSACTION_REFUSED:
        break;
    }
    return PC_TXN_STAGE_FAILED;
}

void pc_txn_stage_result(pc_send_t *s, pulsarc_result res, const char *detail)
{
    pc_transaction_note_result(s->txn, res, detail);
}

void pc_txn_stage_done(pc_send_t *s)
{
    pc_transaction_send_done(s->txn);
}
