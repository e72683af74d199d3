/* A transaction's id as the protocol carries it (txnid_most_bits, txnid_least_bits): the
 * most significant bits name the coordinator that owns the transaction. */
#ifndef PC_TXN_IDS_H
#define PC_TXN_IDS_H

#include <stdbool.h>
#include <stdint.h>

typedef struct pc_txn_ids {
    uint64_t most, least;
    bool set; /* false: no transaction */
} pc_txn_ids_t;

static inline bool pc_txn_ids_equal(pc_txn_ids_t a, pc_txn_ids_t b)
{
    return a.set == b.set && (!a.set || (a.most == b.most && a.least == b.least));
}

#endif
