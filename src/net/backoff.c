#include "net/backoff.h"

#include <stdlib.h>

void pc_backoff_init(pc_backoff_t *b, uint64_t initial_ms, uint64_t max_ms)
{
    b->initial_ms = initial_ms ? initial_ms : 1;
    b->max_ms = max_ms < b->initial_ms ? b->initial_ms : max_ms;
    b->next_ms = b->initial_ms;
}

uint64_t pc_backoff_next(pc_backoff_t *b)
{
    uint64_t cur = b->next_ms;
    b->next_ms = cur > b->max_ms / 2 ? b->max_ms : cur * 2;
    uint64_t jitter = cur / 10;
    if (jitter > 0)
        cur -= (uint64_t)rand() % (jitter + 1);
    return cur;
}

void pc_backoff_reset(pc_backoff_t *b)
{
    b->next_ms = b->initial_ms;
}
