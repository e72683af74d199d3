/* Is a cluster reachable? The official clients' failover probe: a TCP connection to the
 * hosts of its service URL, closed as soon as it is open (nothing is sent, so no
 * credentials either). Every host is tried at once; the first that connects answers yes,
 * and the probe answers no once all have failed or timeout_ms has passed. Names are
 * resolved with uv_getaddrinfo (libuv's thread pool); nothing blocks the loop.
 * Probes always use the network, also under a test transport (net/runtime.h): a test
 * makes a cluster unreachable by closing its listening socket.
 * @locality loop thread. */
#ifndef PC_PROBE_H
#define PC_PROBE_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "net/service_url.h"

typedef struct pc_probe pc_probe_t;

/* The answer, once. detail says why not (the first host's failure, or the timeout); it
 * is valid during the call only. The probe is gone after the call: drop the pointer. */
typedef void (*pc_probe_cb)(bool reachable, const char *detail, void *ctx);

/* Start probing url's hosts (copied). Returns NULL when out of memory (cb not called). */
pc_probe_t *pc_probe_start(uv_loop_t *loop, const pc_service_url_t *url, uint64_t timeout_ms,
                           pc_probe_cb cb, void *ctx);
/* Before the answer only: cb is never called, and the probe frees itself once libuv has
 * let go of its handles. */
void pc_probe_cancel(pc_probe_t *p);

#endif
