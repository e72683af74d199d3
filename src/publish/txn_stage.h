/* The transaction stage: a send in a transaction as the producer handle sees it. Checked
 * and held on the sending thread (accept), admitted on the loop thread before its
 * partition producer may have it (hand-over: its topic partition registered with the
 * transaction first), its result noted before its callback and its end told after it
 * (completion). The rest is the transaction's (transaction/transaction.h).
 * @locality as each function says. */
#ifndef PC_TXN_STAGE_H
#define PC_TXN_STAGE_H

#include <stdbool.h>

#include "publish/send.h"
#include "pulsarc/pulsarc.h"

struct pulsarc_producer;

/* Accept, before admission: may p send in txn? PULSARC_OK or the refusal (detail set).
 * Sending thread. */
pulsarc_result pc_txn_stage_check(const struct pulsarc_producer *p, pulsarc_txn_t *txn);
/* Accept, once s is built: s is part of txn (a reference held until its end). */
void pc_txn_stage_attach(pc_send_t *s, pulsarc_txn_t *txn);
typedef enum pc_txn_stage_admit {
    PC_TXN_STAGE_GO,     /* s goes to its partition producer now */
    PC_TXN_STAGE_HELD,   /* the transaction holds it: resume is called once its partition's
                            registration answers (hand it over then, or fail it) */
    PC_TXN_STAGE_FAILED, /* fail it now with *res (the detail is set) */
} pc_txn_stage_admit_t;

/* Hand-over, loop thread. */
pc_txn_stage_admit_t
pc_txn_stage_admit(pc_send_t *s, void (*resume)(pc_transaction_waiter_t *w, pulsarc_result res),
                   pulsarc_result *res);
/* Completion, loop thread: s's result, before its callback (with the detail it has now),
 * and its end, after the callback. */
void pc_txn_stage_result(pc_send_t *s, pulsarc_result res, const char *detail);
void pc_txn_stage_done(pc_send_t *s);

#endif
