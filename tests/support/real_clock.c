/* The C library's clock_gettime: see real_clock.h. */
#include "real_clock.h"

#include <dlfcn.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <unistd.h>

typedef int (*clock_gettime_fn)(clockid_t, struct timespec *);
static _Atomic(clock_gettime_fn) real_fn;

int pc_test_real_clock_gettime(clockid_t id, struct timespec *ts)
{
    clock_gettime_fn f = atomic_load(&real_fn);
    if (!f) {
        f = (clock_gettime_fn)dlsym(RTLD_NEXT, "clock_gettime");
        if (!f)
            return (int)syscall(SYS_clock_gettime, id, ts);
        atomic_store(&real_fn, f);
    }
    return f(id, ts);
}
