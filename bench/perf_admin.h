/*
 * pulsarc-perf's one use of the broker's admin REST API: creating the partitioned topics
 * it is asked to produce to (--partitions N), as pulsar-perf does. libcurl (loaded as the
 * library loads it, only for --partitions), blocking, called before the run starts. No
 * authentication is sent.
 */
#ifndef PULSARC_PERF_ADMIN_H
#define PULSARC_PERF_ADMIN_H

#include <stddef.h>

typedef enum perf_admin_outcome {
    PERF_ADMIN_FAILED = -1,
    PERF_ADMIN_CREATED = 0,
    PERF_ADMIN_EXISTED = 1, /* already partitioned with that many partitions */
} perf_admin_outcome_t;

/* Before the first request: loads libcurl through the library's own loader
 * (net/curl_lib.h), so that a run without --partitions never maps it. Returns 0, or -1
 * with err saying why (the library and the dynamic loader's reason). */
int perf_admin_init(char *err, size_t err_len);

/* PUT {admin_url}/admin/v2/{domain}/{tenant}/{namespace}/{topic}/partitions with the
 * count. A topic that exists (409) is accepted when its partition count is the one asked
 * for (read back with GET), refused otherwise. topic: domain://tenant/namespace/name, or
 * a bare name (persistent://public/default/name). On failure err says why. */
perf_admin_outcome_t perf_admin_create_partitioned(const char *admin_url, const char *topic,
                                                   int partitions, char *err, size_t err_len);

#endif
