/* A virtual monotonic clock for the session fuzz targets (test support).
 *
 * Linking virtual_clock.c into a program replaces clock_gettime for the whole process:
 * CLOCK_MONOTONIC and CLOCK_MONOTONIC_COARSE (what libuv's timers and pc_mono_ms read)
 * show milliseconds that move only when vc_set moves them; every other clock is the real
 * one. libFuzzer and the sanitizers time themselves with the wall clock, so they are not
 * affected. libuv, a shared library, reaches the replacement too: the program defines the
 * symbol, and the dynamic linker binds libuv's calls to the program's definition first.
 *
 * The clock starts at VC_START_MS; a target puts it back there at the start of each input,
 * so that an input sees the same times wherever it runs in a fuzzing session. */
#ifndef PC_FUZZ_VIRTUAL_CLOCK_H
#define PC_FUZZ_VIRTUAL_CLOCK_H

#include <stdint.h>

/* Far from 0, so that nothing mistakes the start for "never". */
#define VC_START_MS 1000000000ull

/* The virtual monotonic time, in ms (any thread). */
uint64_t vc_now(void);
/* Move the clock to ms (backwards only while no client exists). Any thread, but only the
 * thread the loop's turns belong to (lockstep.h) may call it while a client runs. */
void vc_set(uint64_t ms);

#endif
