/* A bound on uv_run(loop, UV_RUN_DEFAULT) for a test that expects it to return by itself
 * (nothing keeps the loop alive): a timer that does not keep the loop alive itself
 * (unref'd) and, if it fires because something else did, stops the loop. The test then
 * fails on the result instead of hanging until the suite's timeout; no time is asserted.
 *
 *   test_watchdog_t w;
 *   cr_assert(tw_run_returns(&loop, &w, ms), "uv_run went on");  ...  tw_close(&w);
 */
#ifndef PC_TEST_WATCHDOG_H
#define PC_TEST_WATCHDOG_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

typedef struct test_watchdog {
    uv_timer_t timer;
    bool fired;
} test_watchdog_t;

static inline void tw_on_fire(uv_timer_t *t)
{
    ((test_watchdog_t *)t->data)->fired = true;
    uv_stop(t->loop);
}

/* Run the loop, bounded by ms; true when uv_run returned by itself. The watchdog stays on
 * the loop (unref'd, uv_ref it to make it a reason to run) until tw_close. */
static inline bool tw_run_returns(uv_loop_t *loop, test_watchdog_t *w, uint64_t ms)
{
    uv_timer_init(loop, &w->timer);
    w->timer.data = w;
    w->fired = false;
    uv_timer_start(&w->timer, tw_on_fire, ms, 0);
    uv_unref((uv_handle_t *)&w->timer);
    uv_run(loop, UV_RUN_DEFAULT);
    return !w->fired;
}

static inline void tw_close(test_watchdog_t *w)
{
    uv_close((uv_handle_t *)&w->timer, NULL);
}

#endif
