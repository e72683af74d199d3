/* The virtual monotonic clock: see virtual_clock.h. */
#include "virtual_clock.h"

#include <dlfcn.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static _Atomic uint64_t now_ms = VC_START_MS;

uint64_t vc_now(void)
{
    return atomic_load(&now_ms);
}

void vc_set(uint64_t ms)
{
    atomic_store(&now_ms, ms);
}

/* The C library's clock_gettime (through the vDSO, no system call), for every clock but
 * the monotonic ones: found once, as the definition after this program's own. */
typedef int (*clock_gettime_fn)(clockid_t, struct timespec *);
static _Atomic(clock_gettime_fn) real_clock_gettime;

static int real_time(clockid_t id, struct timespec *ts)
{
    clock_gettime_fn f = atomic_load(&real_clock_gettime);
    if (!f) {
        f = (clock_gettime_fn)dlsym(RTLD_NEXT, "clock_gettime");
        if (!f)
            return (int)syscall(SYS_clock_gettime, id, ts);
        atomic_store(&real_clock_gettime, f);
    }
    return f(id, ts);
}

/* Replaces the C library's for the whole program (and the sanitizers' interceptor, which
 * is a weak symbol). */
int clock_gettime(clockid_t id, struct timespec *ts)
{
    if (id != CLOCK_MONOTONIC && id != CLOCK_MONOTONIC_COARSE)
        return real_time(id, ts);
    uint64_t ms = vc_now();
    ts->tv_sec = (time_t)(ms / 1000u);
    ts->tv_nsec = (long)(ms % 1000u) * 1000000L;
    return 0;
}
