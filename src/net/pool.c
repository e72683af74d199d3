#include "net/pool.h"

#include <stdlib.h>
#include <string.h>

struct pc_pool {
    pc_runtime_t *rt;
    pc_conn_t **conns;
    size_t n, cap;
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
    free(p->conns);
    free(p);
}

/* The owner hook: a closed connection leaves the pool at once, so that it is never handed
 * out again. */
static void forget(pc_conn_t *conn, void *ctx)
{
    pc_pool_t *p = ctx;
    for (size_t i = 0; i < p->n; i++) {
        if (p->conns[i] == conn) {
            p->conns[i] = p->conns[--p->n];
            return;
        }
    }
}

static bool same(const pc_host_port_t *a, const pc_host_port_t *b)
{
    return a->port == b->port && !strcmp(a->host, b->host);
}

pc_conn_t *pc_pool_get(pc_pool_t *p, const pc_host_port_t *logical,
                       const pc_host_port_t *physical)
{
    for (size_t i = 0; i < p->n; i++) {
        pc_conn_t *c = p->conns[i];
        if (pc_conn_state(c) != PC_CONN_CLOSED && same(pc_conn_logical(c), logical) &&
            same(pc_conn_physical(c), physical))
            return c;
    }
    if (p->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 8;
        pc_conn_t **a = realloc(p->conns, cap * sizeof *a);
        if (!a)
            return NULL;
        p->conns = a;
        p->cap = cap;
    }
    pc_conn_t *c = pc_conn_open(p->rt, logical, physical);
    /* A connection that failed at once is already closed and must not be pooled. */
    if (c && pc_conn_state(c) != PC_CONN_CLOSED) {
        pc_conn_set_owner(c, forget, p);
        p->conns[p->n++] = c;
    }
    return c;
}

void pc_pool_close_all(pc_pool_t *p)
{
    /* Closing removes the connection from the array (forget), so always take the last one. */
    while (p->n > 0)
        pc_conn_close(p->conns[p->n - 1], PULSARC_ERR_ALREADY_CLOSED, "client is closing");
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
            pc_conn_close(p->conns[p->n - 1], why, detail);
        return n;
    }
    memcpy(old, p->conns, n * sizeof *old);
    for (size_t i = 0; i < n; i++)
        pc_conn_close(old[i], why, detail);
    free(old);
    return n;
}
