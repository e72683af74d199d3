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

/* A source of monotonic milliseconds other than the real one, so that tests can decide
 * what time it is (a cached token's expiry, a key re-read) instead of sleeping. Code
 * that takes one reads the time through pc_clock_now_ms; NULL, what production passes,
 * is the real monotonic clock, read directly (no indirect call). It decides "now" only:
 * libuv timers still fire on real time. A test clock is read on the loop thread while
 * the test moves it, so its now_ms must be thread-safe (an atomic). */
typedef struct pc_clock {
    uint64_t (*now_ms)(const struct pc_clock *clock);
} pc_clock_t;

static inline uint64_t pc_clock_now_ms(const pc_clock_t *clock)
{
    return clock ? clock->now_ms(clock) : pc_mono_ms();
}

#endif
