/* MessageRouter: picks the partition of a partitioned topic for each message.
 * Runs on the sending thread (like the Java client), so the state it keeps is atomic. */
#ifndef PC_ROUTER_H
#define PC_ROUTER_H

#include <stdatomic.h>
#include <stdint.h>

#include "client/config.h"
#include "client/message.h"

typedef enum pc_routing_mode {
    PC_ROUTE_ROUND_ROBIN = 0,
    PC_ROUTE_SINGLE = 1,
    PC_ROUTE_CUSTOM = 2,
} pc_routing_mode;

typedef struct pc_router {
    pc_routing_mode mode;
    int hashing;             /* 0 Java String.hashCode, 1 Murmur3_32 */
    pulsarc_router_cb custom;
    void *custom_ctx;
    uint32_t start;          /* random start partition (and SINGLE's partition) */
    uint64_t switch_ms;      /* batching on: keyless messages change partition this often */
    _Atomic uint32_t next;   /* batching off: plain rotation */
} pc_router_t;

void pc_router_init(pc_router_t *r, const pulsarc_producer_config_t *conf);
/* The partition for msg among n, or -1 when a custom router answered out of range.
 * Keyed messages go to hash(key) % n in every mode but custom. Keyless ones: round robin
 * rotates — with batching, by time (one partition per batching delay, as the Java client
 * does, so batches fill); single sticks to one partition picked at random. */
int pc_router_choose(pc_router_t *r, const pulsarc_message_t *msg, int n);
/* The hash of a key under the configured scheme. */
int32_t pc_router_hash(const pc_router_t *r, const char *key, size_t len);

#endif
