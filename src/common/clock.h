#ifndef PC_CLOCK_H
#define PC_CLOCK_H

#include <stdint.h>
#include <time.h>

/* Milliseconds since the epoch, for publish times. */
static inline uint64_t pc_wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Monotonic milliseconds, for timeouts. */
static inline uint64_t pc_mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

#endif
