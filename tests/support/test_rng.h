/* A small deterministic generator for the tests that compare an encoder or decoder with
 * protobuf-c over many generated inputs: the same sequence on every run and machine, so a
 * failing round can be found again. Each test file has its own state (static). */
#ifndef PC_TEST_RNG_H
#define PC_TEST_RNG_H

#include <stdbool.h>
#include <stdint.h>

static uint64_t rng_state = 0x9e3779b97f4a7c15u;

/* xorshift64 */
static inline uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static inline bool coin(void)
{
    return rnd() & 1;
}

#endif
