/* MessageRouter: picks the partition of a partitioned topic for each message.
 * Runs on the sending thread (like the Java client), so the state it keeps is atomic.
 * It sees a read-only view of the message and its own settings, nothing else. */
#ifndef PC_ROUTER_H
#define PC_ROUTER_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "pulsarc/pulsarc.h"

typedef enum pc_routing_mode {
    PC_ROUTE_ROUND_ROBIN = 0,
    PC_ROUTE_SINGLE = 1,
    PC_ROUTE_CUSTOM = 2,
    PC_ROUTE_SEQUENCE_ID = 3, /* keyless messages with an explicit id: by the id, in runs */
} pc_routing_mode;

typedef enum pc_hash_scheme {
    PC_HASH_JAVA_STRING = 0, /* Java's String.hashCode, the Java client's default */
    PC_HASH_MURMUR3_32 = 1,
    /* boost::hash<std::string>, the C++ client's BoostHash, by Boost release (hash.h) */
    PC_HASH_BOOST = 2,          /* Boost 1.82 and later */
    PC_HASH_BOOST_1_81 = 3,     /* Boost 1.81 */
    PC_HASH_BOOST_1_80 = 4,     /* Boost 1.56 .. 1.80, char signed (x86-64) */
    PC_HASH_BOOST_1_80_ARM = 5, /* Boost 1.56 .. 1.80, char unsigned (Linux on arm64) */
} pc_hash_scheme;

typedef struct pc_router_settings {
    pc_routing_mode mode;
    pc_hash_scheme hashing;
    pulsarc_router_cb custom; /* PC_ROUTE_CUSTOM */
    void *custom_ctx;
    uint64_t switch_ms; /* 0: keyless messages rotate per message; else per period
                                  (the batching delay, so that batches fill) */
    uint64_t id_run;    /* PC_ROUTE_SEQUENCE_ID: consecutive ids that share a
                                  partition (a batch's worth, so that batches fill); >= 1 */
} pc_router_settings_t;

/* What a router may look at: the key, and the message as the application built it (for
 * a custom router, which gets the public handle). */
typedef struct pc_route_view {
    const char *key; /* NULL: no key */
    size_t key_len;
    const pulsarc_message_t *message;
    int64_t sequence_id; /* the message's explicit sequence id, or -1 */
} pc_route_view_t;

typedef struct pc_router {
    pc_router_settings_t set;
    uint32_t start;        /* random start partition (and SINGLE's partition) */
    _Atomic uint32_t next; /* per-message rotation */
} pc_router_t;

void pc_router_init(pc_router_t *r, const pc_router_settings_t *set);
/* The partition for the message among n, or -1 when a custom router answered out of
 * range. Keyed messages go to hash(key) % n in every mode but custom. Keyless ones: round
 * robin rotates (by period when switch_ms is set, as the Java client does with batching);
 * single sticks to one partition picked at random; sequence id puts a message with an
 * explicit id on partition (id / id_run) % n, so that a run that sends the same ids
 * again (a replay after a crash) puts each where the first did, and deduplication, which
 * the broker keeps per partition, recognises it (those without an id rotate). */
int pc_router_choose(pc_router_t *r, const pc_route_view_t *m, int n);
/* The hash of a key under the configured scheme. */
int32_t pc_router_hash(const pc_router_t *r, const char *key, size_t len);

#endif
