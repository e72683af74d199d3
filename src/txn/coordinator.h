/* The transaction coordinator client: finds the coordinators (the partitions of
 * persistent://pulsar/system/transaction_coordinator_assign, each looked up like a topic),
 * connects to each (TC_CLIENT_CONNECT) and sends it NEW_TXN, ADD_PARTITION_TO_TXN and
 * END_TXN. A coordinator that moves or is not ready yet (connection lost,
 * TransactionCoordinatorNotFound, ServiceNotReady) is looked up and connected again and
 * the request retried after a backoff, until operationTimeoutMs after the request began.
 * @locality loop thread: every function here, every callback runs there. */
#ifndef PC_TXN_COORDINATOR_H
#define PC_TXN_COORDINATOR_H

#include <stdbool.h>
#include <stdint.h>

#include "net/runtime.h"
#include "pulsarc/pulsarc.h"
#include "wire/txn_ids.h"

typedef struct pc_tc pc_tc_t;

/* A request's end: PULSARC_OK, a broker error (PULSARC_ERR_BROKER_*) with the broker's
 * message as the detail, PULSARC_ERR_TIMEOUT, or PULSARC_ERR_ALREADY_CLOSED after
 * pc_tc_close. A request refused at once (after pc_tc_close, out of memory) is answered
 * inside the call that made it. */
typedef void (*pc_tc_begun_cb)(pulsarc_result res, pc_txn_ids_t id, void *ctx);
typedef void (*pc_tc_done_cb)(pulsarc_result res, void *ctx);

/* rt must outlive the client. NULL when out of memory. Nothing happens on the network
 * before the first request. */
pc_tc_t *pc_tc_new(pc_runtime_t *rt);
/* NEW_TXN on the next coordinator in turn; the broker aborts it after ttl_ms. */
void pc_tc_new_txn(pc_tc_t *tc, uint64_t ttl_ms, pc_tc_begun_cb cb, void *ctx);
/* ADD_PARTITION_TO_TXN of one topic partition (its full name, copied). */
void pc_tc_add_partition(pc_tc_t *tc, pc_txn_ids_t id, const char *partition, pc_tc_done_cb cb,
                         void *ctx);
/* END_TXN, COMMIT or ABORT. */
void pc_tc_end_txn(pc_tc_t *tc, pc_txn_ids_t id, bool commit, pc_tc_done_cb cb, void *ctx);
/* Fail every request with PULSARC_ERR_ALREADY_CLOSED and let the client go; the memory
 * goes once the last answer and the timer's close have come back. */
void pc_tc_close(pc_tc_t *tc);

#endif
