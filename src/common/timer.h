/* A libuv timer in its own allocation, so that it may outlive its owner while it closes
 * (uv_close finishes on a later loop turn). @locality the loop's thread. */
#ifndef PC_TIMER_H
#define PC_TIMER_H

#include <uv.h>

/* A timer on loop with data set; NULL when out of memory. */
uv_timer_t *pc_timer_new(uv_loop_t *loop, void *data);
/* Stop, close and free it (NULL is a no-op). */
void pc_timer_free(uv_timer_t *t);

#endif
