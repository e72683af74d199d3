/* A log-linear histogram of non-negative integers (HdrHistogram's layout, reduced): values
 * below 2 * PC_HIST_SUB are counted exactly; above, each power of two is cut into
 * PC_HIST_SUB equal buckets, so a value read back is at most 1/PC_HIST_SUB (3.1 %) above
 * the true one. Fixed memory (about 8 KiB), no allocation, O(1) to record; values from
 * 2^PC_HIST_MAX_BITS up share the last bucket (the exact maximum is kept apart).
 * Not thread-safe: one writer, or copies. */
#ifndef PC_HISTOGRAM_H
#define PC_HISTOGRAM_H

#include <stddef.h>
#include <stdint.h>

#define PC_HIST_SUB_BITS 5
#define PC_HIST_SUB (1u << PC_HIST_SUB_BITS)
#define PC_HIST_MAX_BITS 36 /* in microseconds, 19 hours: nothing real waits longer */
#define PC_HIST_BUCKETS ((PC_HIST_MAX_BITS - PC_HIST_SUB_BITS + 1) * PC_HIST_SUB)

typedef struct pc_histogram {
    uint64_t counts[PC_HIST_BUCKETS];
    uint64_t total;    /* values recorded */
    uint64_t sum;      /* of the values, for the mean */
    uint64_t min, max; /* exact; min is meaningless while total is 0 */
} pc_histogram_t;

void pc_histogram_reset(pc_histogram_t *h);
/* Record value n times (n > 0). */
void pc_histogram_record_n(pc_histogram_t *h, uint64_t value, uint64_t n);
/* Add everything src recorded to dst. */
void pc_histogram_merge(pc_histogram_t *dst, const pc_histogram_t *src);
/* The value below or at which percent (0..100) of the recorded values lie, as the upper
 * bound of its bucket but never above the exact maximum; 100 is the maximum. 0 when
 * nothing was recorded. */
uint64_t pc_histogram_percentile(const pc_histogram_t *h, double percent);
/* The bucket of a value, and the largest value in bucket i (for tests of the layout). */
size_t pc_histogram_index(uint64_t value);
uint64_t pc_histogram_bucket_high(size_t i);

#endif
