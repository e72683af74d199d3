#include <criterion/criterion.h>

#include "net/backoff.h"

Test(backoff, doubles_with_jitter_up_to_the_maximum_and_resets)
{
    pc_backoff_t b;
    pc_backoff_init(&b, 100, 1000);
    uint64_t expect[] = { 100, 200, 400, 800, 1000, 1000 };
    for (size_t i = 0; i < sizeof expect / sizeof expect[0]; i++) {
        uint64_t d = pc_backoff_next(&b);
        cr_assert_leq(d, expect[i]);
        cr_assert_geq(d, expect[i] - expect[i] / 10, "step %zu gave %llu", i,
                      (unsigned long long)d);
    }
    pc_backoff_reset(&b);
    cr_assert_leq(pc_backoff_next(&b), 100);
}
