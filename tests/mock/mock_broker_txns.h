/* The mock broker's transaction coordinator state (mock_broker.c answers the commands):
 * the transactions it began, their state, and the topic partitions each registered. No
 * sockets and no lock of its own: the broker calls it under its mutex. */
#ifndef PC_TEST_MOCK_BROKER_TXNS_H
#define PC_TEST_MOCK_BROKER_TXNS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mock_broker.h"

typedef struct mtxn {
    uint64_t most, least; /* most: the coordinator's id; least: its sequence */
    mock_txn_state_t state;
    bool timed_out;       /* aborted by the timeout, not by END_TXN */
    uint64_t deadline_ms; /* monotonic; the broker aborts it then */
    char **partitions;    /* registered with ADD_PARTITION_TO_TXN, in order */
    size_t n_partitions, cap_partitions;
} mtxn_t;

typedef struct mtxn_table {
    mtxn_t *v;
    size_t len, cap;
    uint64_t next_least;
} mtxn_table_t;

/* A new open transaction of coordinator tc_id; NULL when out of memory. The pointer is
 * valid until the next mtxn_begin. */
mtxn_t *mtxn_begin(mtxn_table_t *t, uint64_t tc_id, uint64_t ttl_ms, uint64_t now_ms);
mtxn_t *mtxn_find(mtxn_table_t *t, uint64_t most, uint64_t least);
/* What the coordinator's timeout tracker does: open transactions past their deadline
 * (every open one when all) become aborted. Returns how many. */
int mtxn_expire(mtxn_table_t *t, uint64_t now_ms, bool all);
/* Whether the coordinator's low water mark passed x: x and every transaction its
 * coordinator began before it have ended. */
bool mtxn_below_low_water_mark(const mtxn_table_t *t, const mtxn_t *x);
/* 0, or -1 when out of memory. Registering a partition twice keeps one. */
int mtxn_add_partition(mtxn_t *x, const char *partition);
bool mtxn_has_partition(const mtxn_t *x, const char *partition);
void mtxn_table_free(mtxn_table_t *t);

#endif
