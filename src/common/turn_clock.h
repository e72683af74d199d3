/* The time of the current loop turn, in monotonic nanoseconds, read at most once per turn:
 * the first reader of a turn reads the clock, later readers of the same turn get that
 * value, and whoever runs the loop marks the end of each turn (pc_turn_clock_tick, from a
 * uv_check handle) and the start of its poll (from a uv_prepare handle: a value a timer
 * read must not stamp the I/O the poll then waits for). A clock read costs tens of
 * nanoseconds, more than the rest of a small message's handling on the loop; events of
 * one turn (the sends one wake-up takes over, the receipts one read brings) share one
 * reading. @locality the loop's thread. */
#ifndef PC_TURN_CLOCK_H
#define PC_TURN_CLOCK_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

typedef struct pc_turn_clock {
    uint64_t now_ns;
    bool valid; /* now_ns was read during this turn */
} pc_turn_clock_t;

static inline uint64_t pc_turn_clock_now(pc_turn_clock_t *c)
{
    if (!c->valid) {
        c->now_ns = uv_hrtime();
        c->valid = true;
    }
    return c->now_ns;
}

/* The turn is over: the next reader reads the clock again. */
static inline void pc_turn_clock_tick(pc_turn_clock_t *c)
{
    c->valid = false;
}

#endif
