/* Where a partition producer's owner keeps the messages it sends, so that a batch's
 * records can be fetched into the caches together.
 *
 * A batch's messages are a list linked through their records, walked when the batch is
 * encoded and again when its receipt completes them. When many producers share the loop
 * (100 topics, each with a batch open), a batch collects its messages among a hundred
 * times as many of the others', and by the time it is walked its records have left the
 * caches: one cache miss after another along the list, since each record says where the
 * next one is. Such a batch also keeps its messages' addresses in order
 * (pc_batch_t.order), and each walk first asks for all of its records at once
 * (pc_records_prefetch), so that the walk finds them in the caches or on their way.
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

#include "producer/message.h"

/* Records a batch may be spread over and still be in the caches: about one core's
 * level-2 cache on current x86-64 servers. */
#define PC_RECORDS_COLD_BYTES (1024 * 1024)

typedef struct pc_records {
    size_t before; /* the record starts this many bytes ahead of its pc_msg_t */
    size_t size;   /* and is this long; 0: the owner said nothing (nothing is fetched) */
    const uint64_t *taken; /* messages the owner's producers have taken on this loop, all
                              of them together; NULL: not counted (nothing is fetched) */
} pc_records_t;

/* The owner's count of messages taken so far (0 when not counted). */
static inline uint64_t pc_records_taken(const pc_records_t *r)
{
    return r->taken ? *r->taken : 0;
}

/* Whether a batch opened when the count was opened_taken is spread over more than
 * `share` of PC_RECORDS_COLD_BYTES (1: fetch ahead; 2: keep the order). */
static inline bool pc_records_spread(const pc_records_t *r, uint64_t opened_taken, size_t share)
{
    return r->size && r->taken &&
           *r->taken - opened_taken > PC_RECORDS_COLD_BYTES / share / r->size;
}

/* Cache lines a record of r's may span: one more than its size needs, since records
 * need not start on a line; at most 8 are fetched. */
static inline int pc_records_lines(const pc_records_t *r)
{
    size_t lines = (r->size + 63) / 64 + 1;
    return r->size == 0 ? 0 : lines > 8 ? 8 : (int)lines;
}

/* Ask for the n records of msgs, every cache line of each (pc_records_lines), the lines
 * unrolled, since this runs for every message of a batch, twice.
 * A hint: it changes no memory and reads nothing from the records themselves. Always
 * inlined: GCC finds a function of prefetches alone free of effects, and drops the calls
 * to it that it has not inlined first. */
static inline __attribute__((always_inline)) void
pc_records_prefetch(const pc_records_t *r, pc_msg_t *const *msgs, int n)
{
    int lines = pc_records_lines(r);
    for (int i = 0; i < n; i++) {
        const char *rec = (const char *)msgs[i] - r->before;
#pragma GCC unroll 8
        for (int line = 0; line < 8; line++)
            if (line < lines)
                __builtin_prefetch(rec + line * 64);
    }
}

#endif
