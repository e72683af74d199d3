/* Connections shared by address: one per (logical, physical) broker pair. The pool owns
 * them: each tells the pool when it closes, and the pool closes what is left at the end.
 * @locality loop thread. */
#ifndef PC_POOL_H
#define PC_POOL_H

#include "net/connection.h"
#include "net/runtime.h"

typedef struct pc_pool pc_pool_t;

/* rt must outlive the pool and its connections. */
pc_pool_t *pc_pool_new(pc_runtime_t *rt);
/* Frees the bookkeeping only: close every connection first (pc_pool_close_all). */
void pc_pool_free(pc_pool_t *pool);
/* An open or opening connection for the pair (a new one if none is usable). */
pc_conn_t *pc_pool_get(pc_pool_t *pool, const pc_host_port_t *logical,
                       const pc_host_port_t *physical);
void pc_pool_close_all(pc_pool_t *pool);
/* Close the connections open now with why and detail (a cluster switch). Connections
 * that the closes' callbacks open (a lookup trying the next host of the new service URL)
 * stay open. Returns how many were closed. */
size_t pc_pool_close_current(pc_pool_t *pool, pulsarc_result why, const char *detail);

#endif
