#include "common/timer.h"

#include <stdlib.h>

uv_timer_t *pc_timer_new(uv_loop_t *loop, void *data)
{
    uv_timer_t *t = malloc(sizeof *t);
    if (!t)
        return NULL;
    uv_timer_init(loop, t);
    t->data = data;
    return t;
}

static void free_closed_timer(uv_handle_t *h)
{
    free(h);
}

void pc_timer_free(uv_timer_t *t)
{
    if (t)
        uv_close((uv_handle_t *)t, free_closed_timer);
}
