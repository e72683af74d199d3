/*
 * pulsarc-produce --txn-batch N (txn_batch.c): the messages go in transactions of N, each
 * committed (or, with --txn-abort, aborted) once N messages were accepted, and the last
 * one at the end of the run. Main thread only.
 */
#ifndef PULSARC_PRODUCE_TXN_BATCH_H
#define PULSARC_PRODUCE_TXN_BATCH_H

#include <stdbool.h>
#include <stdint.h>

#include <pulsarc/pulsarc.h>

/* How long the broker keeps a transaction open before it aborts it (the broker's own
 * default, transactionTimeout, is 60 s too). */
#define TXN_BATCH_TIMEOUT_MS 60000

struct txn_batch {
    uint64_t size; /* N; 0: no transactions */
    bool abort;    /* --txn-abort */
    pulsarc_client_t *client;
    pulsarc_producer_t *producer;
    pulsarc_txn_t *txn;                  /* the open transaction, or NULL */
    uint64_t in_txn;                     /* messages accepted into it */
    uint64_t first_index;                /* the 1-based send index of its first message */
    uint64_t committed, aborted, failed; /* transactions */
};

/* The transaction the next message goes into (begun now if none is open), or NULL with
 * the failure reported and counted. A failed transaction stops the run (send.c). */
pulsarc_txn_t *txn_batch_current(struct txn_batch *tb, uint64_t index);
/* A message was accepted into the current transaction: ends it when it is full. False
 * when that end failed. */
bool txn_batch_accepted(struct txn_batch *tb);
/* Ends the open transaction, if any (the run is over). False when that end failed. */
bool txn_batch_finish(struct txn_batch *tb);

#endif
