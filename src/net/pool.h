/* Connections shared by address: one per (logical, physical) broker pair.
 * @locality loop thread. */
#ifndef PC_POOL_H
#define PC_POOL_H

#include "client/client.h"
#include "net/connection.h"

typedef struct pc_pool pc_pool_t;

pc_pool_t *pc_pool_new(pulsarc_client_t *client);
void pc_pool_free(pc_pool_t *pool);
/* An open or opening connection for the pair (a new one if none is usable). */
pc_conn_t *pc_pool_get(pc_pool_t *pool, const pc_host_port_t *logical,
                       const pc_host_port_t *physical);
/* A connection leaves the pool when it closes. */
void pc_pool_forget(pc_pool_t *pool, pc_conn_t *conn);
void pc_pool_close_all(pc_pool_t *pool);

#endif
