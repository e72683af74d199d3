/* The client on the application's own libuv loop (pulsarc_client_new_on_loop), where it
 * differs from a client with a thread of its own: the test's thread plays the application,
 * running its loop (with a timer of its own on it) between the calls it makes. No thread of
 * pulsarc's runs the client: callbacks come inside uv_run, a send there never waits,
 * blocking calls refuse, an idle client lets uv_run end, and once the close is done
 * uv_loop_close finds nothing of pulsarc's, whatever was in flight (pending messages, an
 * HTTP lookup, a TLS handshake, an OAuth2 token request, failover probes).
 *
 * The suites where the mode does not matter beyond this run in both modes through the
 * harness (pulsarc-mock-tests-own-loop, PC_TEST_OWN_LOOP in client_harness.h). */
#include "client_harness.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>
#include <uv.h>

#include "pulsarc/pulsarc_uv.h"
#include "test_watchdog.h"

/* The clients here are the test thread's, which runs their loop: the harness's globals
 * (client, producer), which h_teardown destroys from the test's thread, stay unused. */
TestSuite(client_own_loop, .init = h_setup, .fini = h_teardown, .timeout = H_SUITE_TIMEOUT(60));

/* ---- the application: its loop, and a timer of its own on it ------------------------- */

static uv_loop_t app;
static uv_timer_t ticker;
static int ticks;
static pthread_t app_thread;

static void on_tick(uv_timer_t *t)
{
    ticks++;
}

/* with_ticker: the application keeps a handle of its own running on the loop (so that
 * run_until's turns end at least every few milliseconds). */
static void app_start(bool with_ticker)
{
    cr_assert_eq(uv_loop_init(&app), 0);
    app_thread = pthread_self();
    if (with_ticker) {
        uv_timer_init(&app, &ticker);
        uv_timer_start(&ticker, on_tick, 2, 2);
    }
}

/* Run the application's loop until cond holds (the deadline is a hang guard). */
static bool run_until(h_cond_fn cond, void *arg)
{
    uint64_t deadline = h_now_ms() + (uint64_t)h_deadline_ms(10000);
    while (!cond(arg)) {
        if (h_now_ms() >= deadline)
            return cond(arg);
        uv_run(&app, UV_RUN_ONCE);
    }
    return true;
}

static bool flag_set(void *flag)
{
    return *(bool *)flag;
}

static bool calls_reached(void *n)
{
    return h_total() >= *(int *)n;
}

static bool ticked(void *unused)
{
    (void)unused;
    return ticks > 0;
}

/* The application closes its own handle and its loop: nothing of pulsarc's may be left. */
static void app_finish(bool with_ticker)
{
    if (with_ticker) {
        /* A test may be over before the first tick is due: the timer must still run. */
        cr_assert(run_until(ticked, NULL), "the application's own timer never ran");
        cr_assert(uv_is_active((uv_handle_t *)&ticker) && !uv_is_closing((uv_handle_t *)&ticker),
                  "pulsarc stopped or closed the application's timer");
        uv_close((uv_handle_t *)&ticker, NULL);
    }
    uv_run(&app, UV_RUN_DEFAULT);
    int rc = uv_loop_close(&app);
    cr_assert_eq(rc, 0, "uv_loop_close: %s: a handle of pulsarc's is still on the loop",
                 uv_err_name(rc));
}

static pulsarc_client_t *app_client_url(const char *url, ...)
{
    pulsarc_client_config_t *cc = pulsarc_client_config_new();
    cr_assert_eq(pulsarc_client_config_set(cc, "operationTimeoutMs", "3000"), PULSARC_OK);
    cr_assert_eq(pulsarc_client_config_set(cc, "logLevel", "info"), PULSARC_OK);
    va_list ap;
    va_start(ap, url);
    h_set_va(cc, NULL, ap);
    va_end(ap);
    pulsarc_client_config_set_logger(cc, h_logger, NULL);
    pulsarc_client_t *c = NULL;
    pulsarc_result r = pulsarc_client_new_on_loop(&app, url, cc, &c);
    pulsarc_client_config_free(cc);
    cr_assert_eq(r, PULSARC_OK, "new_on_loop: %s", pulsarc_last_error_detail());
    return c;
}

#define app_client(...) app_client_url(mock_broker_url(mb), __VA_ARGS__)

/* ---- creation and close, through their callbacks ---------------------------------------- */

typedef struct creation {
    bool done;
    pulsarc_result res;
    pulsarc_producer_t *producer;
    bool on_app_thread;
} creation_t;

static void on_created(pulsarc_client_t *c, pulsarc_result res, pulsarc_producer_t *p, void *ctx)
{
    creation_t *cr = ctx;
    cr->done = true;
    cr->res = res;
    cr->producer = p;
    cr->on_app_thread = pthread_equal(pthread_self(), app_thread);
}

static pulsarc_producer_t *create_on_loop(pulsarc_client_t *c, pulsarc_producer_config_t *pc)
{
    creation_t cr = { 0 };
    cr_assert_eq(pulsarc_client_create_producer_async(c, H_TOPIC, pc, on_created, &cr), PULSARC_OK);
    pulsarc_producer_config_free(pc);
    cr_assert(run_until(flag_set, &cr.done), "the creation never answered");
    cr_assert_eq(cr.res, PULSARC_OK, "create: %s", pulsarc_result_name(cr.res));
    cr_assert(cr.on_app_thread, "the creation answered on another thread than the loop's");
    return cr.producer;
}

typedef struct closing {
    bool done;
    pulsarc_result res;
    bool destroy_in_cb;
    pulsarc_result destroy_res;
    bool on_app_thread;
} closing_t;

static void on_client_closed(pulsarc_client_t *c, pulsarc_result res, void *ctx)
{
    closing_t *cl = ctx;
    cl->res = res;
    cl->on_app_thread = pthread_equal(pthread_self(), app_thread);
    if (cl->destroy_in_cb)
        cl->destroy_res = pulsarc_client_destroy(c);
    cl->done = true;
}

/* Close the client through pulsarc_client_close_async and run the loop until it is done;
 * the client is destroyed in the callback. */
static void close_on_loop(pulsarc_client_t *c)
{
    closing_t cl = { .destroy_in_cb = true };
    cr_assert_eq(pulsarc_client_close_async(c, on_client_closed, &cl), PULSARC_OK);
    cr_assert(run_until(flag_set, &cl.done), "the close never finished");
    cr_assert_eq(cl.res, PULSARC_OK);
    cr_assert(cl.on_app_thread, "the close callback ran on another thread than the loop's");
    cr_assert_eq(cl.destroy_res, PULSARC_OK, "destroy in the close callback: %s",
                 pulsarc_result_name(cl.destroy_res));
}

/* ---- on the loop's thread --------------------------------------------------------------- */

static _Atomic int callbacks_elsewhere;

static void note_thread(pulsarc_producer_t *p, int idx, pulsarc_result res)
{
    if (!pthread_equal(pthread_self(), app_thread))
        atomic_fetch_add(&callbacks_elsewhere, 1);
}

Test(client_own_loop, callbacks_run_inside_the_applications_uv_run)
{
    app_start(true);
    pulsarc_client_t *c = app_client(NULL);
    pulsarc_producer_t *p = create_on_loop(c, h_producer_conf(0, NULL));
    T.hook = note_thread;
    h_send_range(p, 0, 5);
    int n = 5;
    cr_assert(run_until(calls_reached, &n), "only %d of 5 callbacks", h_total());
    h_assert_each_once(5, PULSARC_OK);
    h_assert_order(5);
    cr_assert_eq(atomic_load(&callbacks_elsewhere), 0, "a callback ran off the loop's thread");
    close_on_loop(c);
    pulsarc_producer_free(p); /* detached by the close: only its memory is left */
    app_finish(true);
    h_finish();
}

Test(client_own_loop, a_send_on_the_loop_never_waits_and_blocking_calls_refuse)
{
    app_start(true);
    pulsarc_client_t *c = app_client("memoryLimitBytes", "2000", NULL);
    cr_assert_eq(pulsarc_client_create_producer(c, H_TOPIC, NULL, &(pulsarc_producer_t *){ NULL }),
                 PULSARC_ERR_WOULD_BLOCK);
    pulsarc_producer_t *p = create_on_loop(c, h_producer_conf(0, "maxPendingMessages", "2",
                                                              "blockIfQueueFull", "true", NULL));
    /* Until the loop runs again nothing can complete: two messages fill the queue. */
    h_send_range(p, 0, 2);
    /* Full, and blockIfQueueFull on: refused at once, as the loop is what makes room. */
    cr_assert_eq(h_send(p, 2), PULSARC_ERR_QUEUE_FULL);
    cr_assert_eq(h_send_sync(p, 2), PULSARC_ERR_WOULD_BLOCK);
    cr_assert_eq(pulsarc_producer_flush(p), PULSARC_ERR_WOULD_BLOCK);
    cr_assert_eq(pulsarc_producer_close(p), PULSARC_ERR_WOULD_BLOCK);
    cr_assert_eq(pulsarc_client_destroy(c), PULSARC_ERR_WOULD_BLOCK);
    int n = 2;
    cr_assert(run_until(calls_reached, &n), "only %d of 2 callbacks", h_total());
    h_assert_each_once(2, PULSARC_OK);
    /* The memory limit likewise: a 600-byte payload and its 512-byte record fit in 2000
     * bytes, two do not. */
    cr_assert_eq(h_send_len(p, 3, 600), PULSARC_OK);
    cr_assert_eq(h_send_len(p, 4, 600), PULSARC_ERR_MEMORY_LIMIT);
    n = 3;
    cr_assert(run_until(calls_reached, &n), "message 3 never completed");
    /* Destroy after the close (not in its callback) frees at once on the loop's thread. */
    closing_t cl = { 0 };
    cr_assert_eq(pulsarc_client_close_async(c, on_client_closed, &cl), PULSARC_OK);
    cr_assert_eq(pulsarc_client_close_async(c, on_client_closed, &cl), PULSARC_ERR_ALREADY_CLOSED);
    cr_assert_eq(pulsarc_client_destroy(c), PULSARC_ERR_WOULD_BLOCK, "destroyed before the close");
    cr_assert(run_until(flag_set, &cl.done), "the close never finished");
    cr_assert_eq(pulsarc_client_destroy(c), PULSARC_OK);
    pulsarc_producer_free(p);
    app_finish(true);
    h_finish();
}

/* ---- room again (pulsarc_room_cb) ------------------------------------------------------ */

typedef struct room {
    int calls;
    bool on_app_thread;
    pulsarc_producer_t *producer;
    int resend;                /* the message to send again from the callback; -1: none */
    pulsarc_result resend_res; /* what that send returned */
    size_t resend_len;
} room_t;

static void on_room(pulsarc_producer_t *p, void *ctx)
{
    room_t *r = ctx;
    r->calls++;
    r->on_app_thread = pthread_equal(pthread_self(), app_thread);
    r->producer = p;
    if (r->resend >= 0)
        r->resend_res = r->resend_len ? h_send_len(p, r->resend, r->resend_len)
                                      : h_send(p, r->resend);
}

static bool room_called(void *r)
{
    return ((room_t *)r)->calls > 0;
}

static pulsarc_producer_config_t *with_room(pulsarc_producer_config_t *pc, room_t *r)
{
    cr_assert_eq(pulsarc_producer_config_set_room_cb(pc, on_room, r), PULSARC_OK);
    return pc;
}

/* A send on the loop refused with QUEUE_FULL: once receipts make room, the room callback
 * runs once, on the loop's thread, and the refused message goes in from there. Without a
 * new refusal it does not run again. */
Test(client_own_loop, room_again_after_queue_full)
{
    app_start(false);
    pulsarc_client_t *c = app_client(NULL);
    room_t r = { .resend = 2 };
    pulsarc_producer_t *p = create_on_loop(c, with_room(h_producer_conf(0, "maxPendingMessages",
                                                                        "2", "batchingEnabled",
                                                                        "false", NULL),
                                                        &r));
    h_send_range(p, 0, 2);
    cr_assert_eq(h_send(p, 2), PULSARC_ERR_QUEUE_FULL);
    cr_assert_eq(r.calls, 0, "no room yet, and the loop has not run");
    cr_assert(run_until(room_called, &r), "the room callback never ran");
    cr_assert_eq(r.calls, 1);
    cr_assert(r.on_app_thread, "the room callback ran off the loop's thread");
    cr_assert_eq(r.producer, p);
    cr_assert_eq(r.resend_res, PULSARC_OK, "no room in the room callback: %s",
                 pulsarc_result_name(r.resend_res));
    int n = 3;
    cr_assert(run_until(calls_reached, &n), "only %d of 3 callbacks", h_total());
    h_assert_each_once(3, PULSARC_OK);
    cr_assert_eq(r.calls, 1, "called again without a refusal");
    close_on_loop(c);
    pulsarc_producer_free(p);
    app_finish(false);
    h_finish();
}

/* The client's memory limit likewise: a 600-byte message and its 512-byte record fit in
 * 2000 bytes, two do not, until the first one's receipt. */
Test(client_own_loop, room_again_after_memory_limit)
{
    app_start(false);
    pulsarc_client_t *c = app_client("memoryLimitBytes", "2000", NULL);
    room_t r = { .resend = 1, .resend_len = 600 };
    pulsarc_producer_t *p = create_on_loop(c, with_room(h_producer_conf(0, NULL), &r));
    cr_assert_eq(h_send_len(p, 0, 600), PULSARC_OK);
    cr_assert_eq(h_send_len(p, 1, 600), PULSARC_ERR_MEMORY_LIMIT);
    cr_assert(run_until(room_called, &r), "the room callback never ran");
    cr_assert_eq(r.resend_res, PULSARC_OK);
    int n = 2;
    cr_assert(run_until(calls_reached, &n), "only %d of 2 callbacks", h_total());
    cr_assert_eq(r.calls, 1);
    close_on_loop(c);
    pulsarc_producer_free(p);
    app_finish(false);
    h_finish();
}

/* A producer freed while it waits for room hears nothing (and nothing is left behind). */
Test(client_own_loop, no_room_callback_once_freed)
{
    app_start(false);
    pulsarc_client_t *c = app_client(NULL);
    room_t r = { .resend = -1 };
    pulsarc_producer_t *p = create_on_loop(c, with_room(h_producer_conf(0, "maxPendingMessages",
                                                                        "1", NULL),
                                                        &r));
    cr_assert_eq(h_send(p, 0), PULSARC_OK);
    cr_assert_eq(h_send(p, 1), PULSARC_ERR_QUEUE_FULL);
    pulsarc_producer_free(p);
    int n = 1;
    cr_assert(run_until(calls_reached, &n), "message 0 never completed");
    cr_assert_eq(r.calls, 0, "a freed producer's room callback ran");
    close_on_loop(c);
    app_finish(false);
    h_finish();
}

Test(client_own_loop, room_callback_arguments)
{
    cr_assert_eq(pulsarc_producer_config_set_room_cb(NULL, on_room, NULL),
                 PULSARC_ERR_INVALID_ARGUMENT);
    pulsarc_producer_config_t *pc = pulsarc_producer_config_new();
    cr_assert_eq(pulsarc_producer_config_set_room_cb(pc, NULL, NULL), PULSARC_OK, "removes it");
    pulsarc_producer_config_free(pc);
}

/* ---- from another thread ---------------------------------------------------------------- */

typedef struct sender {
    pulsarc_producer_t *producer;
    int n;
    _Atomic int flush_res;
    atomic_bool done;
} sender_t;

static void *send_from_a_thread(void *arg)
{
    sender_t *s = arg;
    for (int i = 0; i < s->n; i++) {
        pulsarc_result r = h_send(s->producer, i);
        if (r != PULSARC_OK) {
            atomic_store(&s->flush_res, r);
            atomic_store(&s->done, true);
            return NULL;
        }
    }
    atomic_store(&s->flush_res, pulsarc_producer_flush(s->producer));
    atomic_store(&s->done, true);
    return NULL;
}

static bool sender_done(void *arg)
{
    return atomic_load(&((sender_t *)arg)->done);
}

Test(client_own_loop, sends_from_another_thread_are_handed_over_and_may_wait)
{
    app_start(true);
    pulsarc_client_t *c = app_client(NULL);
    pulsarc_producer_t *p = create_on_loop(c, h_producer_conf(0, "maxPendingMessages", "4",
                                                              "blockIfQueueFull", "true", NULL));
    sender_t s = { .producer = p, .n = 200 };
    atomic_init(&s.flush_res, 1000);
    atomic_init(&s.done, false);
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, send_from_a_thread, &s), 0);
    /* The sender waits for room (blockIfQueueFull) and for its flush while this thread runs
     * the loop that makes room and answers. */
    bool done = run_until(sender_done, &s);
    if (!done)
        pulsarc_client_close_async(c, NULL, NULL); /* wakes the sender before failing */
    while (!sender_done(&s))
        uv_run(&app, UV_RUN_ONCE);
    pthread_join(t, NULL);
    cr_assert(done, "the sender never finished");
    cr_assert_eq(atomic_load(&s.flush_res), PULSARC_OK, "%s",
                 pulsarc_result_name(atomic_load(&s.flush_res)));
    h_assert_each_once(200, PULSARC_OK);
    h_assert_order(200);
    close_on_loop(c);
    pulsarc_producer_free(p);
    app_finish(true);
    h_finish();
}

/* ---- the loop's life -------------------------------------------------------------------- */

static creation_t late;
static closing_t late_close;

static void close_when_created(pulsarc_client_t *c, pulsarc_result res, pulsarc_producer_t *p,
                               void *ctx)
{
    on_created(c, res, p, &late);
    late_close.destroy_in_cb = true;
    pulsarc_client_close_async(c, on_client_closed, &late_close);
}

/* The application's last handle goes, and its close callback creates a producer: the
 * last callback of a loop turn, after which uv_run ends unless a handle keeps the loop
 * alive. */
static void create_when_closed(uv_handle_t *h)
{
    pulsarc_client_create_producer_async(h->data, H_TOPIC, NULL, close_when_created, NULL);
}

static void create_later(uv_timer_t *t)
{
    uv_close((uv_handle_t *)t, create_when_closed);
}

Test(client_own_loop, an_idle_client_lets_uv_run_end_and_work_keeps_it_running)
{
    app_start(false);
    pulsarc_client_t *c = app_client(NULL);
    /* Nothing of the application's and nothing for the client to do: uv_run returns (a
     * client that kept the loop alive would hang here until the suite's timeout). */
    uv_run(&app, UV_RUN_DEFAULT);
    /* Work posted from the application's last callback keeps the loop running until it is
     * done: the creation, then (from its callback) the close. */
    uv_timer_t once;
    uv_timer_init(&app, &once);
    once.data = c;
    uv_timer_start(&once, create_later, 1, 0);
    uv_run(&app, UV_RUN_DEFAULT);
    cr_assert(late.done, "uv_run returned before the creation was answered");
    cr_assert_eq(late.res, PULSARC_OK, "create: %s", pulsarc_result_name(late.res));
    cr_assert(late_close.done, "uv_run returned before the close was done");
    cr_assert_eq(late_close.destroy_res, PULSARC_OK);
    pulsarc_producer_free(late.producer);
    app_finish(false);
    h_finish();
}

/* A producer freed in its creation's callback leaves an unused connection in the pool: the
 * idle client lets uv_run end, and the next producer takes that connection. */
static void free_at_once(pulsarc_client_t *c, pulsarc_result res, pulsarc_producer_t *p, void *ctx)
{
    on_created(c, res, p, ctx);
    pulsarc_producer_free(p);
}

Test(client_own_loop, a_connection_left_by_a_closed_producer_lets_uv_run_end)
{
    app_start(false);
    pulsarc_client_t *c = app_client(NULL);
    creation_t cr = { 0 };
    cr_assert_eq(pulsarc_client_create_producer_async(c, H_TOPIC, NULL, free_at_once, &cr),
                 PULSARC_OK);
    test_watchdog_t w; /* a connection that serves nobody is no work */
    cr_assert(tw_run_returns(&app, &w, (uint64_t)h_deadline_ms(5000)), "uv_run went on");
    tw_close(&w);
    cr_assert(cr.done && cr.res == PULSARC_OK, "create: %s", pulsarc_result_name(cr.res));
    pulsarc_producer_free(create_on_loop(c, NULL));
    cr_assert_eq(h_count(mb, MOCK_CONNECTS), 1, "the pooled connection was not used again");
    close_on_loop(c);
    app_finish(false);
    h_finish();
}

/* ---- the close leaves nothing, whatever was in flight ----------------------------------- */

static bool receipts_held(void *n)
{
    return h_count(mb, MOCK_HELD_RECEIPTS) >= *(uint64_t *)n;
}

Test(client_own_loop, the_close_fails_pending_messages_and_leaves_nothing_on_the_loop)
{
    app_start(true);
    pulsarc_client_t *c = app_client(NULL);
    pulsarc_producer_t *p = create_on_loop(c, h_producer_conf(0, "sendTimeoutMs", "0", NULL));
    mock_broker_set_receipt_mode(mb, MOCK_RECEIPTS_HOLD);
    h_send_range(p, 0, 3);
    uint64_t held = 3;
    cr_assert(run_until(receipts_held, &held), "the sends never reached the broker");
    close_on_loop(c);
    h_assert_each_once(3, PULSARC_ERR_ALREADY_CLOSED);
    for (int i = 0; i < 3; i++)
        cr_assert(strstr(T.detail[i], "may have been persisted"), "message %d: %s", i, T.detail[i]);
    cr_assert_eq(h_send(p, 3), PULSARC_ERR_ALREADY_CLOSED, "the producer outlived its client");
    pulsarc_producer_free(p);
    app_finish(true);
    h_finish();
}

/* A TCP listener that accepts connections and never says a word: whatever pulsarc sends it
 * (an HTTP request, a TLS ClientHello, CONNECT, a probe) stays unanswered. */
typedef struct silent {
    int fd, port;
    int conns[32];
    int n;
    int want;
} silent_t;

static void silent_start(silent_t *s)
{
    *s = (silent_t){ 0 };
    s->fd = socket(AF_INET, SOCK_STREAM, 0);
    cr_assert_geq(s->fd, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    cr_assert_eq(bind(s->fd, (struct sockaddr *)&a, sizeof a), 0);
    cr_assert_eq(listen(s->fd, 32), 0);
    socklen_t len = sizeof a;
    cr_assert_eq(getsockname(s->fd, (struct sockaddr *)&a, &len), 0);
    s->port = ntohs(a.sin_port);
    fcntl(s->fd, F_SETFL, fcntl(s->fd, F_GETFL) | O_NONBLOCK);
}

/* Accept what is waiting; true once `want` connections came. */
static bool silent_reached(void *arg)
{
    silent_t *s = arg;
    int fd;
    while (s->n < 32 && (fd = accept(s->fd, NULL, NULL)) >= 0)
        s->conns[s->n++] = fd;
    return s->n >= s->want;
}

static void silent_stop(silent_t *s)
{
    for (int i = 0; i < s->n; i++)
        close(s->conns[i]);
    close(s->fd);
}

static char silent_url[128];

static const char *silent_at(const char *scheme, const silent_t *s)
{
    snprintf(silent_url, sizeof silent_url, "%s://127.0.0.1:%d", scheme, s->port);
    return silent_url;
}

/* A producer whose creation waits on the silent peer (reached `want` times) when the
 * client closes: the creation answers with a failure, and nothing is left on the loop. */
static void close_while_waiting(pulsarc_client_t *c, silent_t *s, int want)
{
    creation_t cr = { 0 };
    cr_assert_eq(pulsarc_client_create_producer_async(c, H_TOPIC, NULL, on_created, &cr),
                 PULSARC_OK);
    s->want = want;
    cr_assert(run_until(silent_reached, s), "%d of %d connections reached the silent peer", s->n,
              want);
    cr_assert_not(cr.done, "the creation answered before the close");
    close_on_loop(c);
    cr_assert(cr.done, "the creation was never answered");
    cr_assert_neq(cr.res, PULSARC_OK);
    cr_assert_null(cr.producer);
    silent_stop(s);
    app_finish(true);
}

Test(client_own_loop, the_close_leaves_nothing_with_an_http_lookup_in_flight)
{
    silent_t s;
    silent_start(&s);
    app_start(true);
    close_while_waiting(app_client_url(silent_at("http", &s), NULL), &s, 1);
    h_finish();
}

Test(client_own_loop, the_close_leaves_nothing_with_a_tls_handshake_in_flight)
{
    silent_t s;
    silent_start(&s);
    app_start(true);
    close_while_waiting(app_client_url(silent_at("pulsar+ssl", &s), NULL), &s, 1);
    h_finish();
}

Test(client_own_loop, the_close_leaves_nothing_with_an_oauth2_token_request_in_flight)
{
    silent_t s;
    silent_start(&s);
    app_start(true);
    char params[256];
    snprintf(params, sizeof params,
             "{\"issuerUrl\":\"http://127.0.0.1:%d\",\"clientId\":\"cid\","
             "\"clientSecret\":\"secret\",\"audience\":\"urn:pulsar\"}",
             s.port);
    pulsarc_client_t *c = app_client("authPlugin", "oauth2", "authParams", params, NULL);
    close_while_waiting(c, &s, 1);
    cr_assert_eq(h_count(mb, MOCK_CONNECTS), 0, "CONNECT went out without a token");
    h_finish();
}

Test(client_own_loop, the_close_leaves_nothing_with_failover_probes_running)
{
    silent_t s;
    silent_start(&s);
    app_start(true);
    /* The primary never answers a lookup; every check probes it (a TCP connect, which the
     * silent peer's kernel accepts): the lookup's connection and two probes. */
    pulsarc_client_t *c = app_client_url(silent_at("pulsar", &s), "failoverSecondaryUrls",
                                         mock_broker_url(mb), "failoverCheckIntervalMs", "10",
                                         NULL);
    close_while_waiting(c, &s, 3);
    h_finish();
}

/* ---- signals ---------------------------------------------------------------------------- */

static void raise_sigpipe(pulsarc_client_t *c, pulsarc_result res, pulsarc_producer_t *p, void *ctx)
{
    /* What a write to a connection the broker reset does: SIGPIPE to the writing thread. */
    raise(SIGPIPE);
    on_created(c, res, p, ctx);
}

Test(client_own_loop, sigpipe_while_the_client_runs_does_not_kill_the_application)
{
    app_start(true);
    pulsarc_client_t *c = app_client(NULL);
    creation_t cr = { 0 };
    cr_assert_eq(pulsarc_client_create_producer_async(c, H_TOPIC, NULL, raise_sigpipe, &cr),
                 PULSARC_OK);
    cr_assert(run_until(flag_set, &cr.done), "the creation never answered");
    /* Alive, and the application's signal mask is as it was. */
    sigset_t mask, pending;
    pthread_sigmask(SIG_SETMASK, NULL, &mask);
    sigpending(&pending);
    cr_assert_not(sigismember(&mask, SIGPIPE), "SIGPIPE left blocked");
    cr_assert_not(sigismember(&pending, SIGPIPE), "SIGPIPE left pending");
    close_on_loop(c);
    pulsarc_producer_free(cr.producer);
    app_finish(true);
    h_finish();
}

static void unblock_sigusr2(pulsarc_client_t *c, pulsarc_result res, pulsarc_producer_t *p,
                            void *ctx)
{
    /* The application changes its own mask from a callback (as a program that blocks its
     * signals until its producer exists does). */
    sigset_t usr2;
    sigemptyset(&usr2);
    sigaddset(&usr2, SIGUSR2);
    pthread_sigmask(SIG_UNBLOCK, &usr2, NULL);
    on_created(c, res, p, ctx);
}

/* pulsarc blocks SIGPIPE for its turn and unblocks only that: a change the application
 * made to its mask from a callback during the turn stays (before the fix the whole mask
 * from before the turn came back, and SIGUSR2 was blocked again). */
Test(client_own_loop, a_mask_change_made_in_a_callback_stays)
{
    sigset_t usr2, mask;
    sigemptyset(&usr2);
    sigaddset(&usr2, SIGUSR2);
    pthread_sigmask(SIG_BLOCK, &usr2, NULL);
    app_start(true);
    pulsarc_client_t *c = app_client(NULL);
    creation_t cr = { 0 };
    cr_assert_eq(pulsarc_client_create_producer_async(c, H_TOPIC, NULL, unblock_sigusr2, &cr),
                 PULSARC_OK);
    cr_assert(run_until(flag_set, &cr.done), "the creation never answered");
    pthread_sigmask(SIG_SETMASK, NULL, &mask);
    cr_assert_not(sigismember(&mask, SIGUSR2), "the callback's unblocking was undone");
    cr_assert_not(sigismember(&mask, SIGPIPE), "SIGPIPE left blocked");
    close_on_loop(c);
    pulsarc_producer_free(cr.producer);
    app_finish(true);
    h_finish();
}

/* ---- the same calls with a thread of the client's own ----------------------------------- */

static _Atomic int thread_created = 1000, thread_closed = 1000;
static pulsarc_producer_t *thread_producer;
static atomic_bool closed_on_caller;

static void on_thread_created(pulsarc_client_t *c, pulsarc_result res, pulsarc_producer_t *p,
                              void *ctx)
{
    thread_producer = p;
    atomic_store(&thread_created, res);
}

static void destroy_when_closed(pulsarc_client_t *c, pulsarc_result res, void *ctx)
{
    atomic_store(&closed_on_caller, pthread_equal(pthread_self(), *(pthread_t *)ctx));
    /* The client's thread ends after this callback and frees the client itself. */
    atomic_store(&thread_closed, pulsarc_client_destroy(c));
}

Test(client_own_loop, create_and_close_async_with_a_thread_of_the_clients_own)
{
    pulsarc_client_t *c = h_client(NULL);
    pulsarc_producer_config_t *pc = h_producer_conf(0, NULL);
    cr_assert_eq(pulsarc_client_create_producer_async(c, H_TOPIC, pc, on_thread_created, NULL),
                 PULSARC_OK);
    pulsarc_producer_config_free(pc); /* copied */
    cr_assert(h_wait_changed(&thread_created, 1000, 10000), "the creation never answered");
    cr_assert_eq(atomic_load(&thread_created), PULSARC_OK);
    mock_broker_set_receipt_mode(mb, MOCK_RECEIPTS_HOLD);
    h_send_range(thread_producer, 0, 2);
    cr_assert(h_wait_sends(mb, 2, 10000));
    pthread_t self = pthread_self();
    cr_assert_eq(pulsarc_client_close_async(c, destroy_when_closed, &self), PULSARC_OK);
    cr_assert(h_wait_changed(&thread_closed, 1000, 10000), "the close never finished");
    cr_assert_eq(atomic_load(&thread_closed), PULSARC_OK, "destroy in the close callback");
    cr_assert_not(atomic_load(&closed_on_caller), "the close callback ran on the caller's thread");
    h_assert_each_once(2, PULSARC_ERR_ALREADY_CLOSED);
    pulsarc_producer_free(thread_producer);
    h_finish();
}

Test(client_own_loop, bad_arguments)
{
    pulsarc_client_t *c = NULL;
    cr_assert_eq(pulsarc_client_new_on_loop(NULL, mock_broker_url(mb), NULL, &c),
                 PULSARC_ERR_INVALID_ARGUMENT);
    cr_assert_null(c);
    cr_assert_eq(pulsarc_client_close_async(NULL, NULL, NULL), PULSARC_ERR_INVALID_ARGUMENT);
    client = h_client(NULL);
    cr_assert_eq(pulsarc_client_create_producer_async(client, H_TOPIC, NULL, NULL, NULL),
                 PULSARC_ERR_INVALID_ARGUMENT);
    cr_assert_eq(pulsarc_client_create_producer_async(client, NULL, NULL, on_created, NULL),
                 PULSARC_ERR_INVALID_ARGUMENT);
    cr_assert_eq(pulsarc_client_close_async(client, NULL, NULL), PULSARC_OK);
    cr_assert_eq(pulsarc_client_create_producer_async(client, H_TOPIC, NULL, on_created, NULL),
                 PULSARC_ERR_ALREADY_CLOSED, "a creation started on a closing client");
    h_finish();
}
