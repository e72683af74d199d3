/* Transactions, the client's side (txn.c): the public pulsarc_txn_t, and what a send in a
 * transaction does on the loop thread before and after its partition producer has it.
 * Nothing outside src/client/ includes this. */
#ifndef PC_CLIENT_TXN_H
#define PC_CLIENT_TXN_H

#include <stdbool.h>

#include "client/message.h"
#include "pulsarc/pulsarc.h"
#include "wire/txn_ids.h"

/* A sending thread takes a reference for an accepted send (s->txn) after checking
 * pc_txn_check_send; the send's completion gives it back. Any thread. */
pulsarc_result pc_txn_check_send(pulsarc_txn_t *txn, const pulsarc_client_t *client);
void pc_txn_hold(pulsarc_txn_t *txn);
pc_txn_ids_t pc_txn_ids(const pulsarc_txn_t *txn);

/* Loop thread, the send's hand-over: true when s may go to its partition producer now;
 * false when the transaction took it (it waits for its partition's registration with the
 * coordinator and is handed over or failed then, or it failed at once: the transaction is
 * no longer open). partition is the full name of the topic partition s goes to. */
bool pc_txn_admit_send(pc_send_t *s, const char *partition);
/* Loop thread, a send's completion in two steps: its result and the thread's error
 * detail for it (before its callback, which may overwrite the detail), then, after the
 * callback, its end (a commit or abort that waited for it may go on). */
void pc_txn_note_result(pulsarc_txn_t *txn, pulsarc_result res, const char *detail);
void pc_txn_send_done(pulsarc_txn_t *txn);

#endif
