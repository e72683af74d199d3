#include "routing/router.h"

#include <stdlib.h>
#include <string.h>

#include "routing/hash.h"

void pc_router_init(pc_router_t *r, const pulsarc_producer_config_t *conf, int n_partitions)
{
    /* Start at a random partition so that many producers do not all begin on partition 0. */
    r->next = n_partitions > 0 ? (uint32_t)rand() % (uint32_t)n_partitions : 0;
}

int pc_router_choose(pc_router_t *r, const pc_msg_t *msg, int n_partitions)
{
    if (n_partitions <= 1)
        return 0;
    if (msg->key)
        return pc_hash_partition(pc_hash_java_string(msg->key, strlen(msg->key)), n_partitions);
    return (int)(r->next++ % (uint32_t)n_partitions);
}
