/* Topic lookup and partition metadata through the service URL.
 * @locality loop thread. */
#ifndef PC_LOOKUP_H
#define PC_LOOKUP_H

#include "net/runtime.h"
#include "net/service_url.h"
#include "pulsarc/pulsarc.h"

/* Where a topic is served: logical is the owning broker, physical where to connect
 * (the service URL itself when the answer says proxy_through_service_url). */
typedef void (*pc_lookup_cb)(pulsarc_result res, const pc_host_port_t *logical,
                             const pc_host_port_t *physical, void *ctx);
/* The most partitions a topic may have: a larger count in an answer is a protocol error. */
#define PC_MAX_PARTITIONS 65536

typedef void (*pc_partitions_cb)(pulsarc_result res, int partitions, void *ctx);

/* Both start from the next host of rt's service URL (round-robin) and connect through
 * rt's pool; cb runs once, on the loop thread. */
void pc_lookup_topic(pc_runtime_t *rt, const char *topic, pc_lookup_cb cb, void *ctx);
void pc_lookup_partitions(pc_runtime_t *rt, const char *topic, pc_partitions_cb cb, void *ctx);

#endif
