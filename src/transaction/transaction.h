/* Transactions (transaction.c): the public pulsarc_txn_t, and what a send in a transaction
 * goes through: a check and a reference on the sending thread, the registration of its
 * topic partition with the coordinator on the loop thread before it may be handed over,
 * and its result, which a commit or abort waits for. It knows sends only as waiters it
 * resumes (pc_transaction_waiter_t): the producer handle calls it, never the other way.
 * Nothing outside src/ includes this. */
#ifndef PC_TRANSACTION_H
#define PC_TRANSACTION_H

#include <stdbool.h>

#include "pulsarc/pulsarc.h"
#include "wire/txn_ids.h"

/* A send held back until its topic partition is registered with the transaction: resumed
 * once, on the loop thread, with PULSARC_OK (hand it over now) or the failure (fail it,
 * with the detail set). */
typedef struct pc_transaction_waiter {
    struct pc_transaction_waiter *next;
    void (*resume)(struct pc_transaction_waiter *w, pulsarc_result res);
} pc_transaction_waiter_t;

/* A sending thread takes a reference for an accepted send after checking
 * pc_transaction_check_send; the send's completion gives it back. Any thread. */
pulsarc_result pc_transaction_check_send(pulsarc_txn_t *txn, const pulsarc_client_t *client);
void pc_transaction_hold(pulsarc_txn_t *txn);
pc_txn_ids_t pc_transaction_ids(const pulsarc_txn_t *txn);

typedef enum pc_transaction_admit {
    PC_TRANSACTION_GO,      /* its partition is registered: hand it over now */
    PC_TRANSACTION_WAIT,    /* w is resumed once the registration answers */
    PC_TRANSACTION_REFUSED, /* fail it now with *res (the detail is set) */
} pc_transaction_admit_t;

/* Loop thread, the send's hand-over: first it counts among the transaction's pending
 * sends (its end, pc_transaction_send_done, follows its callback whatever happens), then
 * it is admitted to partition, the full name of the topic partition it goes to. */
void pc_transaction_send_begins(pulsarc_txn_t *txn);
pc_transaction_admit_t pc_transaction_admit(pulsarc_txn_t *txn, const char *partition,
                                            pc_transaction_waiter_t *w, pulsarc_result *res);
/* Loop thread, a send's completion in two steps: its result and the thread's error
 * detail for it (before its callback, which may overwrite the detail), then, after the
 * callback, its end (a commit or abort that waited for it may go on). */
void pc_transaction_note_result(pulsarc_txn_t *txn, pulsarc_result res, const char *detail);
void pc_transaction_send_done(pulsarc_txn_t *txn);

#endif
