/* A connection's listeners by producer id: the producer a receipt, SEND_ERROR,
 * CLOSE_PRODUCER or TOPIC_MIGRATED is for, found in a step or two however many producers
 * share the connection (1000 partitions' producers on one connection walked a list of
 * 1000 for each receipt). An open-addressing table of ids and listeners, linear probing,
 * kept at most half full. A producer id is unique on its connection (ids are the
 * client's, one per producer). @locality the connection's loop thread. */
#ifndef PC_LISTENER_INDEX_H
#define PC_LISTENER_INDEX_H

#include <stddef.h>
#include <stdint.h>

struct pc_conn_listener;

typedef struct pc_listener_slot {
    uint64_t producer_id;
    struct pc_conn_listener *listener; /* NULL: an empty slot */
} pc_listener_slot_t;

typedef struct pc_listener_index {
    pc_listener_slot_t *slots;
    size_t cap; /* 0, or a power of two */
    size_t n;
} pc_listener_index_t;

/* Index l under producer_id. -1 when out of memory (the index is left as it was). */
int pc_listener_index_add(pc_listener_index_t *x, uint64_t producer_id, struct pc_conn_listener *l);
/* Forget producer_id's listener, if indexed. */
void pc_listener_index_remove(pc_listener_index_t *x, uint64_t producer_id);
/* The listener of producer_id, or NULL. */
struct pc_conn_listener *pc_listener_index_find(const pc_listener_index_t *x, uint64_t producer_id);
/* Forget every listener and free the table. */
void pc_listener_index_clear(pc_listener_index_t *x);

#endif
