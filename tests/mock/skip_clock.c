/* The mock tests' monotonic clock: see skip_clock.h. */
#include "skip_clock.h"

#include <stdatomic.h>
#include <time.h>

#include "real_clock.h"

#define NS_PER_MS 1000000ull
#define NS_PER_S 1000000000ull

static _Atomic uint64_t skipped_ns;

void skip_clock_forward(uint64_t ms)
{
    atomic_fetch_add(&skipped_ns, ms * NS_PER_MS);
}

/* Replaces the C library's for the whole program (and the sanitizers' interceptor). */
int clock_gettime(clockid_t id, struct timespec *ts)
{
    int rc = pc_test_real_clock_gettime(id, ts);
    if (rc != 0 || (id != CLOCK_MONOTONIC && id != CLOCK_MONOTONIC_COARSE))
        return rc;
    uint64_t skip = atomic_load(&skipped_ns);
    if (skip == 0)
        return 0;
    uint64_t ns = (uint64_t)ts->tv_nsec + skip % NS_PER_S;
    ts->tv_sec += (time_t)(skip / NS_PER_S + ns / NS_PER_S);
    ts->tv_nsec = (long)(ns % NS_PER_S);
    return 0;
}
