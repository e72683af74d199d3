/* See listener_index.h. */
#include "net/listener_index.h"

#include <stdlib.h>

/* Producer ids are a counter's values: Fibonacci hashing spreads neighbours apart. */
static size_t home(const pc_listener_index_t *x, uint64_t id)
{
    return (size_t)((id * UINT64_C(0x9E3779B97F4A7C15)) >> 32) & (x->cap - 1);
}

static void place(pc_listener_index_t *x, pc_listener_slot_t s)
{
    size_t i = home(x, s.producer_id);
    while (x->slots[i].listener)
        i = (i + 1) & (x->cap - 1);
    x->slots[i] = s;
}

static int grow(pc_listener_index_t *x)
{
    size_t cap = x->cap ? 2 * x->cap : 16;
    pc_listener_slot_t *slots = calloc(cap, sizeof *slots);
    if (!slots)
        return -1;
    pc_listener_index_t bigger = { slots, cap, x->n };
    for (size_t i = 0; i < x->cap; i++)
        if (x->slots[i].listener)
            place(&bigger, x->slots[i]);
    free(x->slots);
    *x = bigger;
    return 0;
}

int pc_listener_index_add(pc_listener_index_t *x, uint64_t producer_id, struct pc_conn_listener *l)
{
    if (2 * (x->n + 1) > x->cap && grow(x) != 0)
        return -1;
    place(x, (pc_listener_slot_t){ producer_id, l });
    x->n++;
    return 0;
}

/* The slot of producer_id, or of the empty slot that ends its run. */
static size_t find_slot(const pc_listener_index_t *x, uint64_t producer_id)
{
    size_t i = home(x, producer_id);
    while (x->slots[i].listener && x->slots[i].producer_id != producer_id)
        i = (i + 1) & (x->cap - 1);
    return i;
}

struct pc_conn_listener *pc_listener_index_find(const pc_listener_index_t *x, uint64_t producer_id)
{
    return x->cap ? x->slots[find_slot(x, producer_id)].listener : NULL;
}

void pc_listener_index_remove(pc_listener_index_t *x, uint64_t producer_id)
{
    if (!x->cap)
        return;
    size_t hole = find_slot(x, producer_id), mask = x->cap - 1;
    if (!x->slots[hole].listener)
        return; /* not indexed */
    /* Backward shift: each later entry of the run moves into the hole when its home
     * lies at or before the hole (cyclically), so every probe still reaches it. */
    for (size_t j = (hole + 1) & mask; x->slots[j].listener; j = (j + 1) & mask) {
        size_t h = home(x, x->slots[j].producer_id);
        if (((j - h) & mask) >= ((j - hole) & mask)) {
            x->slots[hole] = x->slots[j];
            hole = j;
        }
    }
    x->slots[hole].listener = NULL;
    x->n--;
}

void pc_listener_index_clear(pc_listener_index_t *x)
{
    free(x->slots);
    x->slots = NULL;
    x->cap = x->n = 0;
}
