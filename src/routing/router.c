#include "routing/router.h"

#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "routing/hash.h"

void pc_router_init(pc_router_t *r, const pulsarc_producer_config_t *conf)
{
    r->mode = (pc_routing_mode)conf->routing_mode;
    r->hashing = (int)conf->hashing;
    r->custom = conf->router;
    r->custom_ctx = conf->router_ctx;
    /* Start at a random partition so that many producers do not all begin on partition 0. */
    r->start = (uint32_t)rand();
    r->switch_ms = conf->batching_enabled
                       ? (conf->batching_max_delay_ms > 0 ? (uint64_t)conf->batching_max_delay_ms : 1)
                       : 0;
    atomic_init(&r->next, r->start);
}

int32_t pc_router_hash(const pc_router_t *r, const char *key, size_t len)
{
    return r->hashing == 1 ? pc_hash_murmur3_32(key, len) : pc_hash_java_string(key, len);
}

int pc_router_choose(pc_router_t *r, const pulsarc_message_t *msg, int n)
{
    if (r->mode == PC_ROUTE_CUSTOM && r->custom) {
        int i = r->custom(msg, n, r->custom_ctx);
        return i >= 0 && i < n ? i : -1;
    }
    if (n <= 1)
        return 0;
    const char *key = pulsarc_message_key(msg);
    if (key)
        return pc_hash_partition(pc_router_hash(r, key, strlen(key)), n);
    if (r->mode == PC_ROUTE_SINGLE)
        return (int)(r->start % (uint32_t)n);
    if (r->switch_ms)
        return (int)((pc_mono_ms() / r->switch_ms + r->start) % (uint32_t)n);
    return (int)(atomic_fetch_add(&r->next, 1) % (uint32_t)n);
}
