/* The virtual monotonic clock: see virtual_clock.h. */
#include "virtual_clock.h"

#include <stdatomic.h>
#include <time.h>

#include "real_clock.h"

static _Atomic uint64_t now_ms = VC_START_MS;

uint64_t vc_now(void)
{
    return atomic_load(&now_ms);
}

void vc_set(uint64_t ms)
{
    atomic_store(&now_ms, ms);
}

/* Replaces the C library's for the whole program (and the sanitizers' interceptor, which
 * is a weak symbol). */
int clock_gettime(clockid_t id, struct timespec *ts)
{
    if (id != CLOCK_MONOTONIC && id != CLOCK_MONOTONIC_COARSE)
        return pc_test_real_clock_gettime(id, ts);
    uint64_t ms = vc_now();
    ts->tv_sec = (time_t)(ms / 1000u);
    ts->tv_nsec = (long)(ms % 1000u) * 1000000L;
    return 0;
}
