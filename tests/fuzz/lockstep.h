/* The client's event loop run by a session fuzz target's own thread, in turns (test
 * support).
 *
 * A client runs its libuv loop on a thread it starts, while the target plays the broker.
 * So that what an input does depends on its bytes alone, and so that neither waits for
 * the other, the target's thread plays the loop thread too: the client's thread is never
 * started, and the target gives the loop turns (ls_turn). A turn runs the loop until it
 * has nothing left to do at this instant, that is until it would wait for the broker's
 * bytes or for a timer. Between turns the target writes and reads the broker's ends of the
 * connections, makes API calls (their tasks run in the next turn) and moves the virtual
 * clock (virtual_clock.h) to the loop's next timer (ls_next_timer), which then fires in
 * the next turn.
 *
 * No seam in the library is needed. A program linked with lockstep.c must also be linked
 * with -Wl,--wrap= for uv_thread_create, uv_thread_join, uv_thread_self, uv_run,
 * uv_cond_wait, uv_cond_signal and uv_cond_broadcast (tests/CMakeLists.txt does it for
 * the session targets); only the library's calls are wrapped, libuv's own are not:
 * - the client's uv_thread_create of its loop thread runs the thread's function at once,
 *   whose uv_run(UV_RUN_DEFAULT) only hands the loop over; turns run it with
 *   UV_RUN_NOWAIT, and uv_thread_self says "the loop thread" during a turn, so the client
 *   sees itself on its loop thread exactly when it would be;
 * - the uv_thread_join in pulsarc_client_destroy runs the loop to its end instead (nobody
 *   plays the broker then, and the clock jumps to each timer the loop waits for);
 * - a blocking call (pulsarc_client_create_producer) waits with uv_cond_wait for the loop
 *   to wake it with uv_cond_signal or uv_cond_broadcast: the wait serves the broker and
 *   gives turns instead (ls_on_block), until the loop has woken somebody (ls_wakes).
 *
 * One client at a time. Every function is for the thread that called ls_init. */
#ifndef PC_FUZZ_LOCKSTEP_H
#define PC_FUZZ_LOCKSTEP_H

#include <stdbool.h>
#include <stdint.h>

/* Once per process, on the target's thread. */
void ls_init(void);
/* How a blocking call of the library is served: serve(ctx, wakes) plays the broker and
 * gives turns until ls_wakes() differs from wakes (or aborts). */
void ls_on_block(void (*serve)(void *ctx, unsigned wakes), void *ctx);
/* Give the loop a turn: run it until it is idle (at once when no client exists). */
void ls_turn(void);
/* The loop has I/O to handle now (the broker wrote, or a call posted work). */
bool ls_pending(void);
/* The virtual time of the loop's next timer after its last turn; UINT64_MAX when it has
 * none (or no client exists). */
uint64_t ls_next_timer(void);
/* How many times the loop has woken a thread waiting on a condition variable. */
unsigned ls_wakes(void);

#endif
