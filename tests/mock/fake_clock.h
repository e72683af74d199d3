/* A clock the test moves by hand (common/clock.h), for a client created with it
 * (pc_client_config_set_clock): what the client decides by "now" (a cached token's
 * renewal, a key re-read, a data key's rotation) then happens when the test says so, at
 * the exact millisecond, without sleeping. The client reads it on its loop thread while
 * the test thread moves it, hence the atomic. It never moves by itself. */
#ifndef PC_TEST_FAKE_CLOCK_H
#define PC_TEST_FAKE_CLOCK_H

#include <stdatomic.h>
#include <stdint.h>

#include "common/clock.h"

typedef struct h_fake_clock {
    pc_clock_t base; /* what the client is given: &clock.base */
    _Atomic uint64_t now_ms;
} h_fake_clock_t;

static inline uint64_t h_fake_clock_read(const pc_clock_t *c)
{
    return atomic_load(&((const h_fake_clock_t *)c)->now_ms);
}

/* Starting far from 0, so that "now minus a lifetime" never wraps. */
#define H_FAKE_CLOCK_START 1000000000u
#define H_FAKE_CLOCK_INIT                         \
    {                                             \
        { h_fake_clock_read }, H_FAKE_CLOCK_START \
    }

static inline void h_fake_clock_advance(h_fake_clock_t *c, uint64_t ms)
{
    atomic_fetch_add(&c->now_ms, ms);
}

#endif
