/* Exponential backoff with jitter for reconnects. */
#ifndef PC_BACKOFF_H
#define PC_BACKOFF_H

#include <stdint.h>

typedef struct pc_backoff {
    uint64_t initial_ms;
    uint64_t max_ms;
    uint64_t next_ms;
} pc_backoff_t;

void pc_backoff_init(pc_backoff_t *b, uint64_t initial_ms, uint64_t max_ms);
/* The delay to wait now: the current step with up to 10% taken off at random (so that many
 * clients do not retry in lockstep), then the step doubles up to the maximum. */
uint64_t pc_backoff_next(pc_backoff_t *b);
void pc_backoff_reset(pc_backoff_t *b);

#endif
