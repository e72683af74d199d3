/* MessageRouter: picks the partition for each message of a partitioned producer. */
#ifndef PC_ROUTER_H
#define PC_ROUTER_H

#include <stdint.h>

#include "client/config.h"
#include "client/message.h"

typedef struct pc_router {
    uint32_t next; /* round-robin position */
} pc_router_t;

void pc_router_init(pc_router_t *r, const pulsarc_producer_config_t *conf, int n_partitions);
/* Keyed messages go to hash(key) % n (Java's String.hashCode rules, as the Java client's
 * default); keyless ones rotate over the partitions. */
int pc_router_choose(pc_router_t *r, const pc_msg_t *msg, int n_partitions);

#endif
