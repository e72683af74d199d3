/* Shared helpers for the client-against-mock-broker tests (test_client_*.c).
 *
 * Criterion forks every test, so the globals here are per test. A test typically:
 *   h_start();                                  mock broker up (also done by h_setup)
 *   client = h_client("keepAliveIntervalSeconds", "1", NULL);
 *   producer = h_producer(client, "t", "sendTimeoutMs", "500", NULL);
 *   h_send(producer, 0) ... h_wait_calls(n, ms) ... assert on T.calls / T.res / mock counters
 *   h_finish();                                 free producer, client and mock in the body
 * and h_teardown() (the suite's .fini) frees whatever an early failure left behind.
 *
 * Every client uses short timeouts (see h_client) and a logger that keeps the lines in
 * memory (h_log_contains); set PULSARC_TEST_LOG=1 to also see them on stderr.
 *
 * Two modes. By default h_client makes a client with a thread of its own
 * (pulsarc_client_new). Built with PC_TEST_OWN_LOOP (the pulsarc-mock-tests-own-loop
 * binary, which compiles the suites where the mode matters a second time), h_client makes
 * it with pulsarc_client_new_on_loop on a libuv loop that the harness runs on a thread of
 * its own, as an application runs its loop: a handle of the harness's keeps that loop
 * running whether the client has work or not, and the test's thread is "another thread"
 * to the client, as it is in thread mode. h_teardown then closes the harness's handle and
 * insists that uv_loop_close finds nothing of pulsarc's left on the loop.
 *
 * Timing rules (a loaded 2-core CI machine running sanitizer builds must not flake):
 *   - Never sleep to wait for something that must happen: wait for the event with
 *     h_wait_calls, h_wait_sends / h_wait_count, h_wait_log, h_wait_until or
 *     h_wait_changed. Their deadlines are generous (at least H_WAIT_MIN_MS) and scaled
 *     by h_time_scale(); a deadline only decides how long a failing test takes to fail.
 *   - To check that something must NOT happen in response to what is already in motion
 *     (a second callback, a batch sent too early), settle instead of sleeping:
 *     h_expect_no_more_callbacks() or h_settle(b) return once the mock and the client
 *     have exchanged everything pending, without looking at the clock; h_quiet() also
 *     waits for what the client does on its own (a connect, a lookup, a timer due).
 *   - Nothing sleeps. For what would come from a timer (a retry after backoff, a second
 *     timeout, a periodic check) let the time pass on the clock the client's timers read:
 *     h_let_time_pass(ms) moves it forward (skip_clock.h) in steps, and after each one
 *     waits until the client and the mock have done everything it brought (h_quiet), so
 *     the next assertion sees what those timers did, or that they did nothing. To wait
 *     for what a timer brings, h_let_time_pass_until*; for a blocking call that a timer
 *     ends, h_call_while_time_passes. None of these takes wall-clock time to speak of;
 *     time the test does not skip passes as usual.
 *   - Where a duration is what a test checks, keep lower bounds the library guarantees
 *     and put upper bounds at h_upper_ms(nominal): the nominal time plus slack scaled
 *     like the deadlines. When a bound must stay below another duration to mean
 *     anything (e.g. "failed at once, not at operationTimeoutMs"), derive that duration
 *     from the bound (h_ms_str) instead of fixing it.
 *   - The scale is PC_TEST_TIME_SCALE (tests/CMakeLists.txt: 1, or more for ASan/TSan
 *     builds), overridden at run time by the environment variable
 *     PULSARC_TEST_TIME_SCALE (an integer, 1..100). Suite timeouts use
 *     H_SUITE_TIMEOUT(seconds), scaled by the compile-time factor only. */
#ifndef PC_TEST_CLIENT_HARNESS_H
#define PC_TEST_CLIENT_HARNESS_H

#include <criterion/criterion.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mock_broker.h"
#include "pulsarc/pulsarc.h"

#define H_MAX_MSGS 512
#define H_TOPIC "persistent://public/default/faults"

/* ---- time ------------------------------------------------------------------------- */

/* Monotonic ms as the client sees them: the real clock plus what the test skipped. */
uint64_t h_now_ms(void);

/* A condition a test waits for (h_wait_until, h_let_time_pass_until). */
typedef bool (*h_cond_fn)(void *arg);

/* Wait until nothing is in motion between c (NULL: no client) and the n brokers: the
 * client's loop has no timer due, no I/O ready and no request in flight (a name lookup, a
 * connect), and then no broker had anything to read, accept or write (mock_broker_sync).
 * Whatever the client or a broker would do in response to what happened so far has then
 * happened, without looking at the clock (timers not yet due are not waited for). */
void h_quiet_on(pulsarc_client_t *c, mock_broker_t *const *brokers, size_t n);
/* h_quiet_on for the test's client and mb. */
void h_quiet(void);
/* Let ms pass (see the timing rules above): the clock moves forward in steps of at most
 * H_TIME_STEP_MS, after each of which h_quiet_on(c, brokers, n), so that timers repeating
 * or backing off within ms fire as often as they would in real time. Only before
 * asserting what timers did, or did NOT do, by then. */
void h_let_time_pass_on(unsigned ms, pulsarc_client_t *c, mock_broker_t *const *brokers, size_t n);
#define H_TIME_STEP_MS 10
/* h_let_time_pass_on for the test's client and mb. */
void h_let_time_pass(unsigned ms);
/* For what a timer brings when the test need not know when exactly (the next attempt
 * after a backoff): let time pass, as h_let_time_pass does, until cond(arg) holds, for at
 * most max_ms. Returns whether it holds. */
bool h_let_time_pass_until(h_cond_fn cond, void *arg, unsigned max_ms);
/* The same until counter c of b is at least at_least, until at least n callbacks ran
 * in total (T), or until *v is no longer `initial`. */
bool h_let_time_pass_until_count(mock_broker_t *b, mock_counter_t c, uint64_t at_least,
                                 unsigned max_ms);
bool h_let_time_pass_until_calls(int n, unsigned max_ms);
bool h_let_time_pass_until_changed(_Atomic int *v, int initial, unsigned max_ms);
/* Run fn(arg) on a thread of its own, a blocking call that a timer of the client's ends
 * (a create or a flush that fails at operationTimeoutMs), and let time pass until it
 * has returned, for at most max_ms. Returns whether it returned (fn must keep what the
 * test needs of pulsarc_last_error_detail(), which is per thread). */
bool h_call_while_time_passes(void (*fn)(void *arg), void *arg, unsigned max_ms);
/* A blocking pulsarc_client_create_producer of H_TOPIC on the test's client, made while
 * time passes (h_call_while_time_passes) for at most max_ms: its result, producer and
 * detail. Returns whether it returned. */
typedef struct h_create_call {
    pulsarc_result result;
    pulsarc_producer_t *producer;
    char detail[512];
} h_create_call_t;
bool h_create_while_time_passes(h_create_call_t *cc, unsigned max_ms);

/* ---- time scale, deadlines and bounds ------------------------------------------------ */

#ifndef PC_TEST_TIME_SCALE
#define PC_TEST_TIME_SCALE 1
#endif
/* Criterion's per-test timeout (seconds), scaled for sanitizer builds. */
#define H_SUITE_TIMEOUT(seconds) ((seconds)*PC_TEST_TIME_SCALE)
/* The shortest deadline of a wait for something that must happen, before scaling. */
#define H_WAIT_MIN_MS 10000
/* Slack for a machine that is slow or busy, before scaling (see h_upper_ms). */
#define H_SLACK_MS 2000

unsigned h_time_scale(void);
/* ms scaled for this build and machine. */
uint64_t h_scaled_ms(uint64_t ms);
/* The deadline of a wait for something that must happen: at least H_WAIT_MIN_MS, scaled. */
int h_deadline_ms(int timeout_ms);
/* An upper bound on a duration whose nominal value is nominal_ms: that plus scaled slack. */
uint64_t h_upper_ms(uint64_t nominal_ms);
/* ms as a decimal string for a config value (a few rotating buffers, so that several may
 * appear in one h_client / h_producer call). */
const char *h_ms_str(uint64_t ms);

/* Poll cond(arg) every 2 ms until it holds or the (scaled, generous) deadline passes;
 * returns whether it holds. For conditions nothing signals (atomics set in hooks, log
 * lines, handle state). */
bool h_wait_until(h_cond_fn cond, void *arg, int timeout_ms);
/* Wait until *v is no longer `initial` (a hook or done-callback stored its result). */
bool h_wait_changed(_Atomic int *v, int initial, int timeout_ms);

/* ---- log capture ------------------------------------------------------------------ */

/* The logger every h_client gets: keeps the lines in memory (and prints them with
 * PULSARC_TEST_LOG set). */
void h_logger(pulsarc_log_level level, const char *file, int line, const char *message, void *ctx);
bool h_log_contains(const char *needle);
/* Number of times needle occurs in the client's log so far. */
int h_log_count(const char *needle);
/* Wait until the client's log contains needle. */
bool h_wait_log(const char *needle, int timeout_ms);
/* Wait until needle occurs at least at_least times in the client's log. */
bool h_wait_log_count(const char *needle, int at_least, int timeout_ms);

/* ---- send callbacks ---------------------------------------------------------------- */

typedef struct h_slot {
    int idx;
} h_slot_t;

typedef struct h_tracker {
    pthread_mutex_t mu;
    pthread_cond_t cond;
    int calls[H_MAX_MSGS];          /* callbacks per message */
    pulsarc_result res[H_MAX_MSGS]; /* result of the last callback */
    int64_t ledger[H_MAX_MSGS], entry[H_MAX_MSGS];
    int32_t partition[H_MAX_MSGS];
    char detail[H_MAX_MSGS][160]; /* pulsarc_last_error_detail() in the callback */
    bool on_null_id_ok;           /* an OK callback arrived without an id */
    bool id_on_failure;           /* a failed callback arrived with an id */
    int order[4 * H_MAX_MSGS];    /* message indices in callback order */
    int n_order;
    int total;
    h_slot_t slots[H_MAX_MSGS];
    /* Run inside the callback (on the loop thread) after recording, if set. */
    void (*hook)(pulsarc_producer_t *p, int idx, pulsarc_result res);
} h_tracker_t;

/* What the callbacks of h_send's messages recorded (h_on_sent with &T.slots[idx]). */
extern h_tracker_t T;

/* The send callback that records into T; ctx is &T.slots[idx]. */
void h_on_sent(pulsarc_producer_t *p, pulsarc_result res, const pulsarc_message_id_t *id,
               void *ctx);
/* Forget every callback seen so far (between two producers of one test). */
void h_reset_tracker(void);
/* Wait until at least n callbacks ran in total (deadline: h_deadline_ms). */
bool h_wait_calls(int n, int timeout_ms);
int h_total(void);
/* Every message in [0, n) had exactly one callback, with result want. */
void h_assert_each_once(int n, pulsarc_result want);
/* Callbacks ran in message order 0, 1, ..., n-1 (each once). */
void h_assert_order(int n);

/* ---- client, producer, messages ---------------------------------------------------- */

/* The test's broker, client and producer: h_teardown and h_finish free what is set.
 * Criterion runs each test in a process of its own, so these are per test. */
extern mock_broker_t *mb;
extern pulsarc_client_t *client;
extern pulsarc_producer_t *producer;

/* Start mb (if not started yet). */
void h_start(void);
/* The suites' .init. */
void h_setup(void);
/* The suites' .fini: free the producer, the client and the mock, whatever is left. In the
 * own-loop binary (PC_TEST_OWN_LOOP) it also stops the harness's loop and insists that
 * nothing of pulsarc's is left on it. */
void h_teardown(void);
/* The end of a test body: the same clean-up as the suite's .fini, but here a crash while
 * freeing the producer, destroying the client or stopping the mock fails the test
 * (Criterion only warns about a crash in .fini). */
void h_finish(void);

/* Apply key/value pairs (NULL-terminated) to cc, or to pc when cc is NULL; insist on
 * each. */
void h_set_va(pulsarc_client_config_t *cc, pulsarc_producer_config_t *pc, va_list ap);

/* When set, h_client passes every configuration through it last (for a test seam, say:
 * client/test_seams.h). Per test, like every global here. */
extern void (*h_client_setup)(pulsarc_client_config_t *cc);

/* A client of `url` with short timeouts; key/value pairs (NULL-terminated) override. In
 * the own-loop binary it runs on the harness's loop (pulsarc_client_new_on_loop). */
pulsarc_client_t *h_client_url(const char *url, ...);
#define h_client(...) h_client_url(mock_broker_url(mb), __VA_ARGS__)

/* A pulsarc_auth_provider_t of a newer header, one member longer, for the layout rule of
 * the provider setters: a library that does not know `future` takes it while it is NULL
 * only; h_future_hook is something to set it to. */
typedef struct h_newer_provider {
    pulsarc_auth_provider_t known;
    void (*future)(void *ctx);
} h_newer_provider_t;
void h_future_hook(void *ctx);

/* Producer config: batching off unless the pairs turn it on, so that one message is one
 * SEND and one receipt (the batching tests say so explicitly). */
pulsarc_producer_config_t *h_producer_conf(int dummy, ...);

/* Create a producer (key/value pairs, NULL-terminated) and insist on success. */
#define h_producer(c, topic, ...) h_producer_ok((c), (topic), h_producer_conf(0, __VA_ARGS__))
pulsarc_producer_t *h_producer_ok(pulsarc_client_t *c, const char *topic,
                                  pulsarc_producer_config_t *pc);
/* Create a producer expecting failure; returns the result and copies the detail. */
pulsarc_result h_producer_fails(pulsarc_client_t *c, const char *topic,
                                pulsarc_producer_config_t *pc, char *detail, size_t len,
                                uint64_t *elapsed_ms);

/* The payload of message idx: "msg-<idx>" padded to len bytes (len 0: just the text). */
pulsarc_message_t *h_message(int idx, size_t len);
/* send_async message idx with the tracking callback; returns the call's result. */
pulsarc_result h_send_len(pulsarc_producer_t *p, int idx, size_t len);
pulsarc_result h_send(pulsarc_producer_t *p, int idx);
/* send_async messages [from, to) of len bytes (0: "msg-<i>") and insist each is accepted. */
void h_send_range_len(pulsarc_producer_t *p, int from, int to, size_t len);
void h_send_range(pulsarc_producer_t *p, int from, int to);
/* Messages 0..n-1 sent with receipts suppressed, so that they are pending on the broker's
 * side when the test breaks the connection. Receipts are normal again on return. */
void h_pending_unanswered(int n);
/* A blocking send of message idx (untracked). */
pulsarc_result h_send_sync(pulsarc_producer_t *p, int idx);

/* ---- mock queries ------------------------------------------------------------------ */

uint64_t h_count(mock_broker_t *b, mock_counter_t c);
/* The mock's waits with the harness's deadlines (h_deadline_ms): for counts that must be
 * reached. */
bool h_wait_count(mock_broker_t *b, mock_counter_t c, uint64_t at_least, int timeout_ms);
bool h_wait_count_at_most(mock_broker_t *b, mock_counter_t c, uint64_t at_most, int timeout_ms);
bool h_wait_sends(mock_broker_t *b, size_t n, int timeout_ms);

/* Messages 0..n-1 wait for receipts the mock holds (MOCK_RECEIPTS_HOLD): let the receipts
 * go, and insist each message succeeds once and the client's memory is all given back. */
void h_release_held_expect_freed(mock_broker_t *b, pulsarc_client_t *c, int n);

/* Have the broker write cmd (framed by the project's own code) to every connection.
 * Returns the number of connections. */
int h_broker_send_cmd(mock_broker_t *b, const Pulsar__Proto__BaseCommand *cmd);

/* A barrier: returns once the client has handled every frame the mock wrote before the
 * call (mock_broker_barrier: the mock PINGs every connection and waits for the PONGs,
 * which the client sends only after it has read, and acted on, everything ahead of the
 * PING). Returns the number of connections. */
int h_barrier(mock_broker_t *b);
/* h_barrier, insisting that there was a connection to ping. */
void h_client_caught_up(mock_broker_t *b);
/* Let everything already in motion between the client and b land, without looking at the
 * clock: two barriers. After the first the client has acted on every frame b had written;
 * after the second also on b's answers to what the client wrote meanwhile (sends the test
 * made before, a resend). Whatever must not happen in response to all that (a second
 * callback, a batch sent too early, a flush completed too early) has happened by then.
 * Without a connection to b there is nothing in flight to wait for. */
void h_settle(mock_broker_t *b);
/* After the callbacks a test waited for: nothing in motion brings another one (h_settle
 * on the harness's broker). The assertions that follow say which callbacks there are. */
void h_expect_no_more_callbacks(void);

/* The broker drops the producer that registered last and, from now on, answers every
 * registration as a broker does for a fenced topic (one whose write failed, e.g. while it
 * was being terminated): ServiceNotReady, TopicFencedException, which clients retry by
 * design. Nothing can be stored any more, and no terminal error says so. */
void h_fence_for_ever(mock_broker_t *b);

/* Recorded SEND i; the caller frees it with mock_send_free. */
mock_send_t h_get_send(mock_broker_t *b, size_t i);
/* The "msg-<idx>" index of a recorded SEND's payload, or -1. */
int h_send_index(const mock_send_t *s);
/* Sequence ids a producer sent on one connection strictly increase (resends start over
 * only on a new connection; chunks of one message repeat its id). Returns how many
 * (connection, producer) pairs sent. */
int h_assert_seq_in_order_per_connection(mock_broker_t *b);

#endif
