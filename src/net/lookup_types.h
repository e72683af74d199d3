/* What a topic lookup answers, shared by the binary lookup (lookup.c) and the one over the
 * admin REST API (lookup_http.c), so that neither has to include the other's header.
 * @locality loop thread. */
#ifndef PC_LOOKUP_TYPES_H
#define PC_LOOKUP_TYPES_H

#include "net/service_url.h"
#include "pulsarc/pulsarc.h"

/* Where a topic is served: logical is the owning broker, physical where to connect
 * (the service URL itself when the answer says proxy_through_service_url). */
typedef void (*pc_lookup_cb)(pulsarc_result res, const pc_host_port_t *logical,
                             const pc_host_port_t *physical, void *ctx);
/* The most partitions a topic may have: a larger count in an answer is a protocol error. */
#define PC_MAX_PARTITIONS 65536

typedef void (*pc_partitions_cb)(pulsarc_result res, int partitions, void *ctx);

#endif
