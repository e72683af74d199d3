/* Sending in transactions of N messages (txn_batch.h). */
#include "txn_batch.h"

#include <inttypes.h>
#include <stdio.h>

#include "util.h"

static void report(const char *what, uint64_t first, uint64_t last, pulsarc_result res)
{
    char detail[DETAIL_MAX];
    copy_error_detail(detail);
    fprintf(stderr,
            PROG ": %s of the transaction of messages %" PRIu64 "..%" PRIu64 ": %s [%s]%s%s\n",
            what, first, last, pulsarc_strerror(res), pulsarc_result_name(res),
            detail[0] ? ": " : "", detail);
}

pulsarc_txn_t *txn_batch_current(struct txn_batch *tb, uint64_t index)
{
    if (tb->txn)
        return tb->txn;
    pulsarc_result res = pulsarc_txn_begin(tb->client, TXN_BATCH_TIMEOUT_MS, &tb->txn);
    if (res != PULSARC_OK) {
        report("begin", index, index, res);
        tb->failed++;
        return NULL;
    }
    tb->in_txn = 0;
    tb->first_index = index;
    return tb->txn;
}

/* Commit (or abort) the open transaction once every message of it has its receipt: the
 * flush sends an open batch now instead of after the batching delay, and the commit
 * waits for the receipts anyway. A commit that finds a failed message aborts. */
static bool end_txn(struct txn_batch *tb)
{
    uint64_t last = tb->first_index + tb->in_txn - 1;
    (void)pulsarc_producer_flush(tb->producer); /* its failures are the messages' own */
    pulsarc_result res = tb->abort ? pulsarc_txn_abort(tb->txn) : pulsarc_txn_commit(tb->txn);
    bool ok = res == PULSARC_OK;
    if (!ok) {
        report(tb->abort ? "abort" : "commit", tb->first_index, last, res);
        tb->failed++;
    } else if (tb->abort) {
        tb->aborted++;
    } else {
        tb->committed++;
    }
    pulsarc_txn_free(tb->txn);
    tb->txn = NULL;
    tb->in_txn = 0;
    return ok;
}

bool txn_batch_accepted(struct txn_batch *tb)
{
    if (++tb->in_txn < tb->size)
        return true;
    return end_txn(tb);
}

bool txn_batch_finish(struct txn_batch *tb)
{
    if (!tb->txn)
        return true;
    if (tb->in_txn == 0) {
        /* Begun for a message that was then not accepted: nothing to make visible. */
        pulsarc_result res = pulsarc_txn_abort(tb->txn);
        pulsarc_txn_free(tb->txn);
        tb->txn = NULL;
        return res == PULSARC_OK;
    }
    return end_txn(tb);
}
