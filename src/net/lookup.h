/* Topic lookup and partition metadata through the service URL.
 * @locality loop thread. */
#ifndef PC_LOOKUP_H
#define PC_LOOKUP_H

#include "net/lookup_types.h"
#include "net/runtime.h"
#include "net/service_url.h"
#include "pulsarc/pulsarc.h"

/* Both start from the next host of rt's service URL (round-robin) and connect through
 * rt's pool; cb runs once, on the loop thread. An http(s):// service URL asks its admin
 * REST API instead (lookup_http.h). */
void pc_lookup_topic(pc_runtime_t *rt, const char *topic, pc_lookup_cb cb, void *ctx);
/* pc_lookup_topic through the service URL of the cluster the topic moved to (moved, a
 * producer's TOPIC_MIGRATED; copied): a binary lookup from its first host, over rt's pool,
 * TLS and credentials. moved NULL: pc_lookup_topic. */
void pc_lookup_topic_at(pc_runtime_t *rt, const pc_service_url_t *moved, const char *topic,
                        pc_lookup_cb cb, void *ctx);
void pc_lookup_partitions(pc_runtime_t *rt, const char *topic, pc_partitions_cb cb, void *ctx);

#endif
