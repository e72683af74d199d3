/* Connections shared by address: up to connectionsPerBroker (rt->net) per (logical,
 * physical) broker pair, told apart by an index. The pool owns them: each tells the pool
 * when it closes, and the pool closes what is left at the end.
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
/* A connection for a producer: an open or opening one (a new one if none is usable).
 * Calls for one pair take the indexes 0, 1, ..., N-1, 0, ... in turn (N =
 * connections_per_broker), so producers spread evenly over N connections to a broker.
 * NULL when out of memory. */
pc_conn_t *pc_pool_get(pc_pool_t *pool, const pc_host_port_t *logical,
                       const pc_host_port_t *physical);
/* A connection for a single request (a lookup): any usable one of the pair, a ready one
 * first; else the one of index 0 is opened. Leaves the producers' turn alone. */
pc_conn_t *pc_pool_get_any(pc_pool_t *pool, const pc_host_port_t *logical,
                           const pc_host_port_t *physical);
void pc_pool_close_all(pc_pool_t *pool);

#endif
