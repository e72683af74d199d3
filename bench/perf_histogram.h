/*
 * pulsarc-perf's latency histogram: send_async -> callback times in microseconds.
 *
 * Log-linear, like HdrHistogram with ~2 significant digits: values below 256 us are
 * exact; above, each power of two is split into 128 equal buckets, so a reported value
 * is at most 0.8 % above the true one. Written by one thread (the client's loop thread,
 * where the callbacks run); read after the run, when every callback has run.
 *
 * It is the tool's own measurement, kept apart from the printing so that the printing can
 * take its percentiles from elsewhere (the library's statistics) without touching how
 * messages are timed.
 */
#ifndef PULSARC_PERF_HISTOGRAM_H
#define PULSARC_PERF_HISTOGRAM_H

#include <stdint.h>
#include <stdio.h>

#define PERF_H_SUB_BITS 8
#define PERF_H_SUB (1u << PERF_H_SUB_BITS) /* exact range and first bucket group */
#define PERF_H_HALF (PERF_H_SUB / 2)       /* buckets per power of two above it */
#define PERF_H_MAX_BITS 40                 /* ~12.7 days in microseconds */
#define PERF_H_BUCKETS (PERF_H_SUB + (PERF_H_MAX_BITS - PERF_H_SUB_BITS) * PERF_H_HALF)

typedef struct perf_histogram {
    uint64_t counts[PERF_H_BUCKETS];
    uint64_t total;
    uint64_t max_us;
} perf_histogram_t;

/* The bucket of a value: exact below PERF_H_SUB, then the top 8 bits of the value. */
static inline size_t perf_hist_index(uint64_t us)
{
    if (us < PERF_H_SUB)
        return (size_t)us;
    int msb = 63 - __builtin_clzll(us);
    if (msb >= PERF_H_MAX_BITS)
        return PERF_H_BUCKETS - 1;
    int shift = msb - (PERF_H_SUB_BITS - 1);
    return PERF_H_SUB + (size_t)(msb - PERF_H_SUB_BITS) * PERF_H_HALF +
           (size_t)((us >> shift) - PERF_H_HALF);
}

/* On the callback path: inline, one increment and a compare. */
static inline void perf_hist_record(perf_histogram_t *h, uint64_t us)
{
    h->counts[perf_hist_index(us)]++;
    h->total++;
    if (us > h->max_us)
        h->max_us = us;
}

/* Value at quantile q (0..1), reported as its bucket's upper bound but never above the
 * exact maximum. 0 for an empty histogram. */
uint64_t perf_hist_quantile(const perf_histogram_t *h, double q);

/* Write the percentile distribution in the text layout of HdrHistogram's
 * outputPercentileDistribution (values in milliseconds, 5 ticks per half distance), which
 * HdrHistogram's plotter reads. Returns 0, or -1 when writing failed. */
int perf_hist_write_percentiles(const perf_histogram_t *h, FILE *f);

#endif
