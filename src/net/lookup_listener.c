#include "net/lookup_listener.h"

#include <stdio.h>
#include <string.h>

#include "common/error.h"

bool pc_lookup_no_such_listener(const pc_runtime_t *rt, const char *text, size_t len)
{
    const char *name = rt->net.listener_name;
    if (!name || !text)
        return false;
    char needle[300];
    int n = snprintf(needle, sizeof needle, "do not have %s listener", name);
    return n > 0 && (size_t)n < sizeof needle && memmem(text, len, needle, (size_t)n) != NULL;
}

/* The caller's detail names the topic already ("lookup of T: ..."). */
pulsarc_result pc_lookup_listener_missing(const pc_runtime_t *rt, const pc_host_port_t *via)
{
    return pc_fail(PULSARC_ERR_INVALID_CONFIG,
                   "the broker at %.255s:%d has no advertised "
                   "listener named \"%s\" (listenerName; see the brokers' advertisedListeners)",
                   via->host, via->port, rt->net.listener_name);
}
