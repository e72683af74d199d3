/* What a partition producer counts as it works, for the statistics (client/stats.c):
 * plain counters, written on the loop thread where each event happens and read there.
 * The latency histogram is its owner's, shared by the owner's partitions (the sink).
 * @locality loop thread. */
#ifndef PC_PP_COUNTERS_H
#define PC_PP_COUNTERS_H

#include <stdint.h>

#include "common/histogram.h"
#include "common/turn_clock.h"

typedef struct pc_pp_counters {
    uint64_t sent_msgs;  /* messages put into entries for the broker (a chunked one once) */
    uint64_t sent_bytes; /* their payload bytes, as the application gave them */
    uint64_t acked_msgs, acked_bytes;   /* completed with success */
    uint64_t failed_msgs, failed_bytes; /* completed with an error */
    uint64_t entries;                   /* entries built: batches, messages sent alone, chunks */
    uint64_t entry_raw_bytes;           /* their payloads before compression (a batch's layout) */
    uint64_t entry_bytes;               /* ... as written: compressed, encrypted */
    uint64_t entries_resent;            /* written again after a reconnect */
    uint64_t batches;                   /* batch entries, and the messages in them */
    uint64_t batched_msgs;
    uint64_t batch_max_msgs; /* the most messages one batch held */
    uint64_t disconnects;    /* connections lost (or producers closed by the broker) while
                                 registered */
    uint64_t registrations;  /* successful registrations, the first one included */
    uint64_t migrations;     /* TOPIC_MIGRATED followed: moves to another cluster */
} pc_pp_counters_t;

/* Where a producer's partitions record what they share: the send-to-receipt latency of
 * each message, in microseconds, from the loop turn that took it over (pc_msg_t's
 * handover_ns, stamped by the owner from the same clock) to the loop turn that read its
 * receipt. */
typedef struct pc_pp_sink {
    pc_histogram_t latency_us;
    pc_turn_clock_t *clock;
} pc_pp_sink_t;

#endif
