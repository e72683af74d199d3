/* Topic lookup and partition metadata over the admin REST API, for http:// and https://
 * service URLs: GET /lookup/v2/topic/... and /admin/v2/.../partitions with the client's TLS
 * settings and credentials (rt->http, rt->auth; SASL's exchange in headers, then its role
 * token); the producer then connects to the broker the answer names over the binary
 * protocol. lookup.c chooses this by the URL's scheme. @locality loop thread. */
#ifndef PC_LOOKUP_HTTP_H
#define PC_LOOKUP_HTTP_H

#include <stdbool.h>
#include <stddef.h>

#include "net/lookup_types.h"
#include "net/runtime.h"

/* Like pc_lookup_topic / pc_lookup_partitions: start from the next host of the service URL
 * (round-robin), try the others when one cannot be reached; cb runs once, on the loop
 * thread (from within the call only when the request cannot even start, as with the
 * binary lookup). */
void pc_http_lookup_topic(pc_runtime_t *rt, const char *topic, pc_lookup_cb cb, void *ctx);
void pc_http_lookup_partitions(pc_runtime_t *rt, const char *topic, pc_partitions_cb cb, void *ctx);

/* What an answer is judged against. */
typedef struct pc_http_lookup_query {
    const char *topic;    /* full name, for details */
    const char *via_host; /* the service host asked, for details */
    int via_port;
    bool partitions; /* a partition-metadata request, not a lookup */
    bool tls;        /* the service URL is https://: the broker must be pulsar+ssl:// */
} pc_http_lookup_query_t;

/* Judge an HTTP answer (status and body, as the server sent them): PULSARC_OK with
 * *broker (lookup) or *partitions set, or a named error with the detail set (a status
 * maps to the broker's error; a body that is not the expected JSON is PROTOCOL). Pure:
 * the fuzz target fuzz_http_answers feeds it. */
pulsarc_result pc_http_lookup_judge(const pc_http_lookup_query_t *q, long status, const char *body,
                                    size_t len, pc_host_port_t *broker, int *partitions);

#endif
