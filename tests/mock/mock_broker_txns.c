/* The mock broker's transaction table: see mock_broker_txns.h. */
#include "mock_broker_txns.h"

#include <stdlib.h>
#include <string.h>

mtxn_t *mtxn_begin(mtxn_table_t *t, uint64_t tc_id, uint64_t ttl_ms, uint64_t now_ms)
{
    if (t->len == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 8;
        mtxn_t *v = realloc(t->v, cap * sizeof *v);
        if (!v)
            return NULL;
        t->v = v;
        t->cap = cap;
    }
    mtxn_t *x = &t->v[t->len++];
    /* The real coordinator's sequence starts at 0 too (MLTransactionSequenceIdGenerator). */
    *x = (mtxn_t){ .most = tc_id,
                   .least = t->next_least++,
                   .state = MOCK_TXN_OPEN,
                   .deadline_ms = now_ms + ttl_ms };
    return x;
}

mtxn_t *mtxn_find(mtxn_table_t *t, uint64_t most, uint64_t least)
{
    for (size_t i = 0; i < t->len; i++)
        if (t->v[i].most == most && t->v[i].least == least)
            return &t->v[i];
    return NULL;
}

int mtxn_expire(mtxn_table_t *t, uint64_t now_ms, bool all)
{
    int n = 0;
    for (size_t i = 0; i < t->len; i++) {
        mtxn_t *x = &t->v[i];
        if (x->state == MOCK_TXN_OPEN && (all || x->deadline_ms <= now_ms)) {
            x->state = MOCK_TXN_ABORTED;
            x->timed_out = true;
            n++;
        }
    }
    return n;
}

bool mtxn_below_low_water_mark(const mtxn_table_t *t, const mtxn_t *x)
{
    for (size_t i = 0; i < t->len; i++) {
        const mtxn_t *y = &t->v[i];
        if (y->most == x->most && y->least <= x->least && y->state == MOCK_TXN_OPEN)
            return false;
    }
    return true;
}

bool mtxn_has_partition(const mtxn_t *x, const char *partition)
{
    for (size_t i = 0; i < x->n_partitions; i++)
        if (strcmp(x->partitions[i], partition) == 0)
            return true;
    return false;
}

int mtxn_add_partition(mtxn_t *x, const char *partition)
{
    if (mtxn_has_partition(x, partition))
        return 0;
    if (x->n_partitions == x->cap_partitions) {
        size_t cap = x->cap_partitions ? 2 * x->cap_partitions : 4;
        char **v = realloc(x->partitions, cap * sizeof *v);
        if (!v)
            return -1;
        x->partitions = v;
        x->cap_partitions = cap;
    }
    char *copy = strdup(partition);
    if (!copy)
        return -1;
    x->partitions[x->n_partitions++] = copy;
    return 0;
}

void mtxn_table_free(mtxn_table_t *t)
{
    for (size_t i = 0; i < t->len; i++) {
        for (size_t k = 0; k < t->v[i].n_partitions; k++)
            free(t->v[i].partitions[k]);
        free(t->v[i].partitions);
    }
    free(t->v);
    memset(t, 0, sizeof *t);
}
