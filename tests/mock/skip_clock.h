/* The mock tests' monotonic clock: the real one plus the time the test skipped (test
 * support).
 *
 * Linking skip_clock.c into a program replaces clock_gettime for the whole process, as
 * tests/fuzz/virtual_clock.c does for the fuzz targets: CLOCK_MONOTONIC and
 * CLOCK_MONOTONIC_COARSE, which libuv's timers, uv_hrtime and pc_mono_ms read, show the
 * real monotonic time plus every skip so far; every other clock is the real one (publish
 * times, log stamps). So the clock runs at real speed, and whatever waits for real events
 * (a broker's answer, a thread) works as before, and a skip moves it forward at once, as
 * if the process had been suspended for that long: every timer due by then fires in its
 * loop's next turn. Nothing in the library changes: it reads the time as always.
 *
 * A skip does not wake a loop asleep in epoll_wait (its timeout was computed before), so
 * a test skips through h_skip (client_harness.h), which then gives the client's loop its
 * turns. The kernel's clock is not skipped: a condition variable's CLOCK_MONOTONIC
 * deadline computed from this clock (uv_cond_timedwait, the mock broker's timed waits)
 * comes up to the time skipped so far later; only a wait that times out notices.
 * @locality any thread. */
#ifndef PC_TEST_SKIP_CLOCK_H
#define PC_TEST_SKIP_CLOCK_H

#include <stdint.h>

/* Move the monotonic clock forward by ms, for every thread at once. */
void skip_clock_forward(uint64_t ms);

#endif
