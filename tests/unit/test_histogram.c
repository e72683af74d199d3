/* The latency histogram: exact below 64, then 32 buckets per power of two; percentiles
 * never below the true value, never more than 1/32 above it, never above the maximum. */
#include <criterion/criterion.h>

#include <stdlib.h>

#include "common/histogram.h"

static pc_histogram_t *new_hist(void)
{
    pc_histogram_t *h = malloc(sizeof *h);
    cr_assert_not_null(h);
    pc_histogram_reset(h);
    return h;
}

Test(histogram, buckets_cover_every_value_once_in_order)
{
    /* Each bucket's values map back to it, and buckets follow each other without gaps. */
    uint64_t low = 0;
    for (size_t i = 0; i + 1 < PC_HIST_BUCKETS; i++) {
        uint64_t high = pc_histogram_bucket_high(i);
        cr_assert_geq(high, low, "bucket %zu", i);
        cr_assert_eq(pc_histogram_index(low), i, "low end of bucket %zu", i);
        cr_assert_eq(pc_histogram_index(high), i, "high end of bucket %zu", i);
        cr_assert_leq((double)(high - low), (double)low / 32.0 + 0.5,
                      "bucket %zu is %llu..%llu: wider than 1/32", i, (unsigned long long)low,
                      (unsigned long long)high);
        low = high + 1;
    }
    cr_assert_eq(pc_histogram_index(UINT64_MAX), PC_HIST_BUCKETS - 1);
    cr_assert_eq(pc_histogram_index(63), 63, "exact below 64");
}

Test(histogram, percentiles_from_buckets_are_bounded_by_the_truth)
{
    pc_histogram_t *h = new_hist();
    /* 1..10000 once each: the p-th percentile is p * 100. */
    for (uint64_t v = 1; v <= 10000; v++)
        pc_histogram_record_n(h, v, 1);
    double ps[] = { 1, 50, 90, 99, 99.9 };
    for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++) {
        double truth = ps[i] * 100;
        uint64_t got = pc_histogram_percentile(h, ps[i]);
        cr_assert_geq((double)got, truth, "p%g: %llu below %g", ps[i], (unsigned long long)got,
                      truth);
        cr_assert_leq((double)got, truth * (1 + 1.0 / 32), "p%g: %llu", ps[i],
                      (unsigned long long)got);
    }
    cr_assert_eq(pc_histogram_percentile(h, 100), 10000);
    cr_assert_eq(h->min, 1);
    cr_assert_eq(h->total, 10000);
    cr_assert_eq(h->sum, 10000ull * 10001 / 2);
    free(h);
}

Test(histogram, counts_merge_and_the_maximum_caps_a_bucket)
{
    pc_histogram_t *a = new_hist(), *b = new_hist();
    pc_histogram_record_n(a, 1000, 99);
    pc_histogram_record_n(b, 70001, 1); /* in a bucket whose high end is above it */
    pc_histogram_merge(a, b);
    cr_assert_eq(a->total, 100);
    cr_assert_eq(pc_histogram_percentile(a, 99),
                 pc_histogram_bucket_high(pc_histogram_index(1000)));
    cr_assert_eq(pc_histogram_percentile(a, 99.5), 70001, "capped at the exact maximum");
    cr_assert_eq(a->min, 1000);
    cr_assert_eq(pc_histogram_percentile(b, 0), 70001);
    pc_histogram_reset(b);
    cr_assert_eq(pc_histogram_percentile(b, 50), 0, "empty");
    free(a);
    free(b);
}
