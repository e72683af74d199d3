#include "routing/router.h"

#include <stdlib.h>

#include "common/clock.h"
#include "routing/hash.h"

void pc_router_init(pc_router_t *r, const pc_router_settings_t *set)
{
    r->set = *set;
    /* Start at a random partition so that many producers do not all begin on partition 0. */
    r->start = (uint32_t)rand();
    atomic_init(&r->next, r->start);
}

int32_t pc_router_hash(const pc_router_t *r, const char *key, size_t len)
{
    switch (r->set.hashing) {
    case PC_HASH_MURMUR3_32:
        return pc_hash_murmur3_32(key, len);
    case PC_HASH_BOOST:
        return pc_hash_boost(PC_BOOST_1_82, key, len);
    case PC_HASH_BOOST_1_81:
        return pc_hash_boost(PC_BOOST_1_81, key, len);
    case PC_HASH_BOOST_1_80:
        return pc_hash_boost(PC_BOOST_1_80, key, len);
    case PC_HASH_BOOST_1_80_ARM:
        return pc_hash_boost(PC_BOOST_1_80_UNSIGNED_CHAR, key, len);
    case PC_HASH_JAVA_STRING:
    default:
        return pc_hash_java_string(key, len);
    }
}

int pc_router_choose(pc_router_t *r, const pc_route_view_t *m, int n)
{
    if (r->set.mode == PC_ROUTE_CUSTOM && r->set.custom) {
        int i = r->set.custom(m->message, n, r->set.custom_ctx);
        return i >= 0 && i < n ? i : -1;
    }
    if (n <= 1)
        return 0;
    if (m->key)
        return pc_hash_partition(pc_router_hash(r, m->key, m->key_len), n);
    if (r->set.mode == PC_ROUTE_SINGLE)
        return (int)(r->start % (uint32_t)n);
    if (r->set.mode == PC_ROUTE_SEQUENCE_ID && m->sequence_id >= 0)
        return (int)(((uint64_t)m->sequence_id / r->set.id_run) % (uint64_t)n);
    if (r->set.switch_ms)
        return (int)((pc_mono_ms() / r->set.switch_ms + r->start) % (uint32_t)n);
    return (int)(atomic_fetch_add(&r->next, 1) % (uint32_t)n);
}
