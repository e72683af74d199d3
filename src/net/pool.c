#include "net/pool.h"

#include <stdlib.h>
#include <string.h>

/* A pooled connection and its index among its pair's. */
typedef struct entry {
    pc_conn_t *conn;
    int index;
} entry_t;

/* The next index producers of a pair get, while the pair has connections: one per
 * broker (or broker behind a proxy) the client talks to. */
typedef struct turn {
    pc_host_port_t logical, physical;
    unsigned next;
} turn_t;

struct pc_pool {
    pc_runtime_t *rt;
    entry_t *entries;
    size_t n, cap;
    turn_t *turns;
    size_t n_turns, cap_turns;
};

pc_pool_t *pc_pool_new(pc_runtime_t *rt)
{
    pc_pool_t *p = calloc(1, sizeof *p);
    if (p)
        p->rt = rt;
    return p;
}

void pc_pool_free(pc_pool_t *p)
{
    if (!p)
        return;
    free(p->entries);
    free(p->turns);
    free(p);
}

/* The owner hook: a closed connection leaves the pool at once, so that it is never handed
 * out again. */
static void forget(pc_conn_t *conn, void *ctx)
{
    pc_pool_t *p = ctx;
    for (size_t i = 0; i < p->n; i++) {
        if (p->entries[i].conn == conn) {
            p->entries[i] = p->entries[--p->n];
            return;
        }
    }
}

static bool same(const pc_host_port_t *a, const pc_host_port_t *b)
{
    return a->port == b->port && !strcmp(a->host, b->host);
}

static bool of_pair(pc_conn_t *c, const pc_host_port_t *logical, const pc_host_port_t *physical)
{
    return pc_conn_state(c) != PC_CONN_CLOSED && same(pc_conn_logical(c), logical) &&
           same(pc_conn_physical(c), physical);
}

/* arr (n elements of `size` bytes), with room for one more: arr itself, or a larger
 * copy; NULL when out of memory (arr is then unchanged). */
static void *room_for_one(void *arr, size_t *cap, size_t n, size_t size)
{
    if (n < *cap)
        return arr;
    size_t want = *cap ? *cap * 2 : 8;
    void *a = realloc(arr, want * size);
    if (a)
        *cap = want;
    return a;
}

/* The connection of index `index` for the pair, opened when there is none. */
static pc_conn_t *get_index(pc_pool_t *p, const pc_host_port_t *logical,
                            const pc_host_port_t *physical, int index)
{
    for (size_t i = 0; i < p->n; i++)
        if (p->entries[i].index == index && of_pair(p->entries[i].conn, logical, physical))
            return p->entries[i].conn;
    entry_t *entries = room_for_one(p->entries, &p->cap, p->n, sizeof *entries);
    if (!entries)
        return NULL;
    p->entries = entries;
    pc_conn_t *c = pc_conn_open(p->rt, logical, physical);
    /* A connection that failed at once is already closed and must not be pooled. */
    if (c && pc_conn_state(c) != PC_CONN_CLOSED) {
        pc_conn_set_owner(c, forget, p);
        p->entries[p->n++] = (entry_t){ c, index };
    }
    return c;
}

static bool has_connections(const pc_pool_t *p, const turn_t *t)
{
    for (size_t i = 0; i < p->n; i++)
        if (of_pair(p->entries[i].conn, &t->logical, &t->physical))
            return true;
    return false;
}

/* The pair's turn, made on first use; NULL when out of memory. Making one drops the
 * turns of pairs left without connections (brokers gone, or moved to other addresses),
 * so that a long-lived client keeps no more than it uses; such a pair starts again
 * from index 0. */
static turn_t *turn_of(pc_pool_t *p, const pc_host_port_t *logical, const pc_host_port_t *physical)
{
    for (size_t i = 0; i < p->n_turns; i++)
        if (same(&p->turns[i].logical, logical) && same(&p->turns[i].physical, physical))
            return &p->turns[i];
    for (size_t i = 0; i < p->n_turns;) {
        if (has_connections(p, &p->turns[i]))
            i++;
        else
            p->turns[i] = p->turns[--p->n_turns];
    }
    turn_t *turns = room_for_one(p->turns, &p->cap_turns, p->n_turns, sizeof *turns);
    if (!turns)
        return NULL;
    p->turns = turns;
    turn_t *t = &p->turns[p->n_turns++];
    *t = (turn_t){ .logical = *logical, .physical = *physical };
    return t;
}

pc_conn_t *pc_pool_get(pc_pool_t *p, const pc_host_port_t *logical, const pc_host_port_t *physical)
{
    int per_broker = p->rt->net.connections_per_broker;
    if (per_broker <= 1)
        return get_index(p, logical, physical, 0);
    turn_t *t = turn_of(p, logical, physical);
    if (!t)
        return NULL;
    int index = (int)(t->next++ % (unsigned)per_broker);
    return get_index(p, logical, physical, index);
}

pc_conn_t *pc_pool_get_any(pc_pool_t *p, const pc_host_port_t *logical,
                           const pc_host_port_t *physical)
{
    pc_conn_t *opening = NULL;
    for (size_t i = 0; i < p->n; i++) {
        pc_conn_t *c = p->entries[i].conn;
        if (!of_pair(c, logical, physical))
            continue;
        if (pc_conn_state(c) == PC_CONN_READY)
            return c;
        if (!opening)
            opening = c;
    }
    return opening ? opening : get_index(p, logical, physical, 0);
}

void pc_pool_close_all(pc_pool_t *p)
{
    /* Closing removes the connection from the array (forget), so always take the last one. */
    while (p->n > 0)
        pc_conn_close(p->entries[p->n - 1].conn, PULSARC_ERR_ALREADY_CLOSED, "client is closing");
}

size_t pc_pool_close_current(pc_pool_t *p, pulsarc_result why, const char *detail)
{
    size_t n = p->n;
    if (n == 0)
        return 0;
    /* A snapshot: closing changes the array (forget), and the closes' callbacks may add
     * connections that belong to the new cluster. A closed connection stays allocated
     * until its handles have closed, on a later loop turn, so every entry is valid for
     * the whole loop below (closing one twice is a no-op). */
    pc_conn_t **old = malloc(n * sizeof *old);
    if (!old) {
        /* Without memory for the snapshot, close from the end: what the callbacks add is
         * closed too, and retried by its owner like any lost connection. */
        while (p->n > 0)
            pc_conn_close(p->entries[p->n - 1].conn, why, detail);
        return n;
    }
    for (size_t i = 0; i < n; i++)
        old[i] = p->entries[i].conn;
    for (size_t i = 0; i < n; i++)
        pc_conn_close(old[i], why, detail);
    free(old);
    return n;
}
