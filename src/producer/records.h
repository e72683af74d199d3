/* Where a partition producer's owner keeps the messages it sends, so that a batch's
 * records can be fetched into the caches together.
 *
 * A batch's messages are a list linked through their records, walked when the batch is
 * encoded and again when its receipt completes them. When many producers share the loop
 * (100 topics, each with a batch open), a batch collects its messages among a hundred
 * times as many of the others', and by the time it is walked its records have left the
 * caches: one cache miss after another along the list, since each record says where the
 * next one is. Such a batch also keeps its messages' addresses in order
 * (pc_batch_t.order), and each walk asks for the records a few steps ahead of where it is
 * (pc_records_walk), so that it finds them in the caches or on their way. (Asking for
 * all of a batch's records at once, thousands of lines, took off less than half as much:
 * 15 % of the CPU against 35 %.) The completion is one walk: the batch gives its
 * admission back from the sum it kept (pc_batch_t.charged), not by walking its messages
 * first.
 *
 * How far a batch is spread: the messages every producer of the owner took from its
 * opening to the walk (pc_records_t.taken), its own among them. A walk fetches ahead when
 * the batch is spread over more than PC_RECORDS_COLD_BYTES of records; a producer's
 * batches keep their order while its last one was spread over half as much. One producer
 * alone, or the partitions of a topic taking turns, fill each batch in one run, which is
 * still in the caches: there nothing of this runs. @locality loop thread. */
#ifndef PC_PRODUCER_RECORDS_H
#define PC_PRODUCER_RECORDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/prefetch.h"
#include "producer/message.h"

/* Records a batch may be spread over and still be in the caches: about one core's
 * level-2 cache on current x86-64 servers. */
#define PC_RECORDS_COLD_BYTES (1024 * 1024)

typedef struct pc_records {
    size_t before;         /* the record starts this many bytes ahead of its pc_msg_t */
    size_t size;           /* and is this long, at most PC_RECORDS_MAX (0: the owner said
                              nothing, and nothing is fetched) */
    const uint64_t *taken; /* messages the owner's producers have taken on this loop, all
                              of them together; NULL: not counted (nothing is fetched) */
} pc_records_t;

/* Whether a batch opened when the count was opened_taken is spread over more than
 * `share` of PC_RECORDS_COLD_BYTES (1: fetch ahead; 2: keep the order). */
static inline bool pc_records_spread(const pc_records_t *r, uint64_t opened_taken, size_t share)
{
    return r->size && r->taken &&
           *r->taken - opened_taken > PC_RECORDS_COLD_BYTES / share / r->size;
}

/* Each record is fetched as the PC_PREFETCH_BLOCK bytes from its start, which hold a
 * record of up to PC_RECORDS_MAX bytes wherever it starts in a line and, for the
 * encoding, the start of what follows it (a small copied payload). */
#define PC_RECORDS_MAX (PC_PREFETCH_BLOCK - 64)

/* A walk along a batch's n messages that keeps their records PC_RECORDS_AHEAD steps
 * ahead of it on their way: the first ones as it starts, then one a step. Enough to
 * cover a miss's latency with a record's work, and few enough at a time for what a core
 * keeps in flight (64 lines). */
#define PC_RECORDS_AHEAD 8

typedef struct pc_records_walk {
    pc_msg_t *const *order; /* NULL: nothing is fetched */
    size_t before;
    int n;
} pc_records_walk_t;

/* Start a walk along order[0..n) (NULL: a walk that fetches nothing). */
static inline __attribute__((always_inline)) pc_records_walk_t
pc_records_walk(const pc_records_t *r, pc_msg_t *const *order, int n)
{
    pc_records_walk_t w = { .order = order };
    if (!order)
        return w;
    w.before = r->before;
    w.n = n;
    for (int i = 0; i < n && i < PC_RECORDS_AHEAD; i++)
        pc_prefetch_block((const char *)order[i] - w.before);
    return w;
}

/* At step i of the walk. */
static inline __attribute__((always_inline)) void pc_records_walk_step(const pc_records_walk_t *w,
                                                                       int i)
{
    if (w->order && i + PC_RECORDS_AHEAD < w->n)
        pc_prefetch_block((const char *)w->order[i + PC_RECORDS_AHEAD] - w->before);
}

#endif
