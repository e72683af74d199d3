#include "perf_histogram.h"

#include <math.h>

/* The lowest and the largest value that land in bucket i. */
static uint64_t bucket_low(size_t i)
{
    if (i < PERF_H_SUB)
        return i;
    size_t group = (i - PERF_H_SUB) / PERF_H_HALF;
    uint64_t sub = (i - PERF_H_SUB) % PERF_H_HALF + PERF_H_HALF;
    return sub << (group + 1);
}

static uint64_t bucket_high(size_t i)
{
    if (i < PERF_H_SUB)
        return i;
    size_t group = (i - PERF_H_SUB) / PERF_H_HALF;
    return bucket_low(i) + ((uint64_t)1 << (group + 1)) - 1;
}

/* What a bucket reports: its upper bound, never above the exact maximum. */
static uint64_t reported(const perf_histogram_t *h, size_t i)
{
    uint64_t v = bucket_high(i);
    return v < h->max_us ? v : h->max_us;
}

uint64_t perf_hist_quantile(const perf_histogram_t *h, double q)
{
    if (h->total == 0)
        return 0;
    uint64_t rank = (uint64_t)ceil(q * (double)h->total);
    if (rank < 1)
        rank = 1;
    uint64_t seen = 0;
    for (size_t i = 0; i < PERF_H_BUCKETS; i++) {
        seen += h->counts[i];
        if (seen >= rank)
            return reported(h, i);
    }
    return h->max_us;
}

/* Mean and standard deviation over the buckets' middles, as HdrHistogram computes them
 * over its buckets' "median equivalent" values. */
static void mean_stddev(const perf_histogram_t *h, double *mean, double *sd)
{
    double sum = 0, sq = 0;
    for (size_t i = 0; i < PERF_H_BUCKETS; i++) {
        if (!h->counts[i])
            continue;
        double mid = ((double)bucket_low(i) + (double)bucket_high(i)) / 2.0;
        sum += mid * (double)h->counts[i];
    }
    *mean = h->total ? sum / (double)h->total : 0;
    for (size_t i = 0; i < PERF_H_BUCKETS; i++) {
        if (!h->counts[i])
            continue;
        double d = ((double)bucket_low(i) + (double)bucket_high(i)) / 2.0 - *mean;
        sq += d * d * (double)h->counts[i];
    }
    *sd = h->total ? sqrt(sq / (double)h->total) : 0;
}

/* The reporting levels of HdrHistogram's percentile iterator: 5 ticks in each half of the
 * distance left to 100 %, so the tail gets ever finer steps. */
#define TICKS_PER_HALF 5

static double next_level(double level)
{
    double halvings = floor(log2(100.0 / (100.0 - level)));
    return level + 100.0 / (TICKS_PER_HALF * pow(2.0, halvings + 1));
}

int perf_hist_write_percentiles(const perf_histogram_t *h, FILE *f)
{
    const double ms = 1000.0; /* recorded in microseconds, written in milliseconds */
    fprintf(f, "%12s %14s %10s %14s\n\n", "Value", "Percentile", "TotalCount", "1/(1-Percentile)");
    uint64_t cum = 0;
    double level = 0;
    size_t last = 0;
    for (size_t i = 0; i < PERF_H_BUCKETS && cum < h->total; i++) {
        if (!h->counts[i])
            continue;
        cum += h->counts[i];
        last = i;
        /* Every level this bucket reaches is a line; the bucket that completes the count
         * gives one, then the 100 % line below. */
        while (100.0 * (double)cum / (double)h->total >= level) {
            fprintf(f, "%12.3f %2.12f %10llu %14.2f\n", (double)reported(h, i) / ms, level / 100.0,
                    (unsigned long long)cum, 1.0 / (1.0 - level / 100.0));
            level = next_level(level);
            if (cum == h->total)
                break;
        }
    }
    if (h->total)
        fprintf(f, "%12.3f %2.12f %10llu\n", (double)reported(h, last) / ms, 1.0,
                (unsigned long long)h->total);
    double mean, sd;
    mean_stddev(h, &mean, &sd);
    fprintf(f, "#[Mean    = %12.3f, StdDeviation   = %12.3f]\n", mean / ms, sd / ms);
    fprintf(f, "#[Max     = %12.3f, Total count    = %12llu]\n", (double)h->max_us / ms,
            (unsigned long long)h->total);
    fprintf(f, "#[Buckets = %12d, SubBuckets     = %12d]\n", 1 + PERF_H_MAX_BITS - PERF_H_SUB_BITS,
            (int)PERF_H_SUB);
    return ferror(f) ? -1 : 0;
}
