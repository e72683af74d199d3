/* A lookup for an advertised listener the broker does not have (listenerName). Pulsar
 * answers it like a broker that is not ready (binary: Failed, ServiceNotReady; HTTP:
 * 500), which a client would retry until operationTimeoutMs; it is a configuration
 * error instead, and both lookups (lookup.c, lookup_http.c) report it as one at once.
 * @locality loop thread. */
#ifndef PC_LOOKUP_LISTENER_H
#define PC_LOOKUP_LISTENER_H

#include <stdbool.h>
#include <stddef.h>

#include "net/runtime.h"
#include "pulsarc/pulsarc.h"

/* Whether a failed lookup's text (the answer's message, or an HTTP body; len bytes, not
 * necessarily NUL-terminated) is the broker saying it has no listener named as rt's
 * listenerName: "the broker do not have NAME listener" (Pulsar 2.6 to 4.0). Always false
 * without a listenerName. */
bool pc_lookup_no_such_listener(const pc_runtime_t *rt, const char *text, size_t len);

/* PULSARC_ERR_INVALID_CONFIG, with a detail naming the listener and the host that
 * answered. */
pulsarc_result pc_lookup_listener_missing(const pc_runtime_t *rt, const pc_host_port_t *via);

#endif
