/* What a topic lookup answers, and the bits both lookups share: the binary one (lookup.c)
 * and the one over the admin REST API (lookup_http.c), so that neither has to include the
 * other's header. @locality loop thread. */
#ifndef PC_LOOKUP_TYPES_H
#define PC_LOOKUP_TYPES_H

#include <stdbool.h>

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

/* Who hears a lookup's answer: one of the two callbacks, by the kind of lookup. */
typedef struct pc_lookup_reply {
    bool partitions; /* partition metadata instead of the topic's owner */
    pc_lookup_cb lookup_cb;
    pc_partitions_cb partitions_cb;
    void *ctx;
} pc_lookup_reply_t;

static inline void pc_lookup_answer(const pc_lookup_reply_t *r, pulsarc_result res,
                                    const pc_host_port_t *logical, const pc_host_port_t *physical,
                                    int partitions)
{
    if (r->partitions)
        r->partitions_cb(res, partitions, r->ctx);
    else
        r->lookup_cb(res, logical, physical, r->ctx);
}

/* Spread lookups over the service URL's hosts. */
static inline pc_host_port_t pc_next_service_host(pc_runtime_t *rt)
{
    return rt->service->hosts[rt->next_host++ % rt->service->n_hosts];
}

#endif
