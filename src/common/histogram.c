#include "common/histogram.h"

#include <string.h>

void pc_histogram_reset(pc_histogram_t *h)
{
    memset(h, 0, sizeof *h);
}

size_t pc_histogram_index(uint64_t value)
{
    if (value < 2 * PC_HIST_SUB)
        return (size_t)value;
    int msb = 63 - __builtin_clzll(value);
    if (msb >= PC_HIST_MAX_BITS)
        return PC_HIST_BUCKETS - 1;
    int shift = msb - PC_HIST_SUB_BITS; /* keep the top PC_HIST_SUB_BITS + 1 bits */
    return (size_t)(shift + 1) * PC_HIST_SUB + (size_t)((value >> shift) - PC_HIST_SUB);
}

uint64_t pc_histogram_bucket_high(size_t i)
{
    if (i < 2 * PC_HIST_SUB)
        return i;
    unsigned shift = (unsigned)(i / PC_HIST_SUB) - 1;
    uint64_t sub = i % PC_HIST_SUB + PC_HIST_SUB;
    return ((sub + 1) << shift) - 1;
}

void pc_histogram_record_n(pc_histogram_t *h, uint64_t value, uint64_t n)
{
    h->counts[pc_histogram_index(value)] += n;
    if (h->total == 0 || value < h->min)
        h->min = value;
    if (value > h->max)
        h->max = value;
    h->total += n;
    h->sum += value * n;
}

void pc_histogram_merge(pc_histogram_t *dst, const pc_histogram_t *src)
{
    if (src->total == 0)
        return;
    for (size_t i = 0; i < PC_HIST_BUCKETS; i++)
        dst->counts[i] += src->counts[i];
    if (dst->total == 0 || src->min < dst->min)
        dst->min = src->min;
    if (src->max > dst->max)
        dst->max = src->max;
    dst->total += src->total;
    dst->sum += src->sum;
}

uint64_t pc_histogram_percentile(const pc_histogram_t *h, double percent)
{
    if (h->total == 0)
        return 0;
    if (percent >= 100)
        return h->max;
    double want = percent / 100.0 * (double)h->total;
    uint64_t rank = (uint64_t)want;
    if ((double)rank < want || rank == 0)
        rank++; /* the smallest rank covering percent of the values */
    uint64_t seen = 0;
    for (size_t i = 0; i < PC_HIST_BUCKETS; i++) {
        seen += h->counts[i];
        if (seen >= rank) {
            uint64_t v = pc_histogram_bucket_high(i);
            return v < h->max ? v : h->max;
        }
    }
    return h->max;
}
