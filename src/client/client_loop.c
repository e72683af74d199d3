/* How the client's loop runs: on a thread of the client's own (pulsarc_client_new), or
 * driven by the application's libuv loop (pulsarc_client_new_on_loop). Everything else,
 * in client/ and below it, is the same in both modes: it runs on c->loop, and "the loop
 * thread" is c->thread.
 *
 * Driven, the client's loop is embedded in the application's: a uv_poll_t on the
 * application's loop watches the client loop's backend descriptor (its epoll or kqueue
 * descriptor, readable whenever one of the client's descriptors is, the wake-up's
 * included), and a uv_timer_t fires at the client loop's next timeout; either runs one
 * turn of the client's loop that does not block (UV_RUN_NOWAIT). So the application's loop
 * holds exactly two handles of pulsarc's, whatever the client has open (connections, HTTP
 * transfers, timers, probes), and the close is done when the client's loop has run dry, as
 * with a thread, and those two have closed: nothing below client/ counts its handles, and
 * a handle added there later is covered too.
 * @locality loop thread, except pc_client_loop_start and pc_client_loop_join (the
 * creator's and destroyer's threads). */
#include "client/client.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>

#include "common/error.h"

/* The two handles on the application's loop; their own allocation, freed by the last of
 * their close callbacks. */
struct pc_app_loop {
    pulsarc_client_t *client; /* NULL when creation failed after the handles were made */
    uv_poll_t poll;           /* the client loop's backend descriptor is readable */
    uv_timer_t timer;         /* the client loop's next timeout */
    int open;                 /* handles whose close callback has not run yet */
    bool warned;              /* driven from a thread other than c->thread, said once */
};

/* ---- a thread of the client's own -------------------------------------------------- */

static void loop_main(void *arg)
{
    pulsarc_client_t *c = arg;
    /* libuv writes with write()/writev(): a broker that resets the connection would
     * raise SIGPIPE and kill the application. Blocked on this thread, the write fails
     * with EPIPE instead and the connection is dropped like any other. */
    sigset_t pipe_set;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_set, NULL);
    uv_run(&c->loop, UV_RUN_DEFAULT);
    /* Destroyed in the close callback: nobody will join this thread. */
    if (c->loop_dry(c))
        pthread_detach(pthread_self());
}

/* ---- driven by the application's loop ---------------------------------------------- */

/* One turn of the client's loop with SIGPIPE blocked, as on a thread of its own; the
 * application's signal mask is left as it was, or as its callbacks changed it during the
 * turn: only the blocking of SIGPIPE is undone. */
static void run_turn(uv_loop_t *loop)
{
    sigset_t pipe_set, before;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_set, &before);
    uv_run(loop, UV_RUN_NOWAIT);
    if (sigismember(&before, SIGPIPE))
        return; /* blocked by the application already: what is pending is its own */
    /* A write that met a reset connection left SIGPIPE pending on this thread: take it,
     * or unblocking would deliver it. */
    sigset_t pending;
    if (sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE)) {
        static const struct timespec at_once = { 0, 0 };
        sigtimedwait(&pipe_set, NULL, &at_once);
    }
    pthread_sigmask(SIG_UNBLOCK, &pipe_set, NULL);
}

/* Whether anything but the wake-up keeps the client's loop alive: an operation in flight, a
 * connection, a timer, a close. Only then do pulsarc's handles keep the application's
 * loop running; an idle client lets uv_run return. */
static bool has_work(pulsarc_client_t *c)
{
    if (atomic_load(&c->phase) != PC_CLIENT_OPEN)
        return true; /* closing (and the wake-up may be closed already) */
    uv_unref((uv_handle_t *)&c->wakeup);
    bool alive = uv_loop_alive(&c->loop) != 0;
    uv_ref((uv_handle_t *)&c->wakeup);
    return alive;
}

static void keep_alive(struct pc_app_loop *a, bool yes)
{
    if (yes) {
        uv_ref((uv_handle_t *)&a->poll);
        uv_ref((uv_handle_t *)&a->timer);
    } else {
        uv_unref((uv_handle_t *)&a->poll);
        uv_unref((uv_handle_t *)&a->timer);
    }
}

static void on_app_closed(uv_handle_t *h)
{
    struct pc_app_loop *a = h->data;
    if (--a->open > 0)
        return;
    pulsarc_client_t *c = a->client;
    free(a);
    if (c) {
        c->app = NULL;
        c->loop_dry(c); /* may free the client */
    }
}

static void close_app_handles(struct pc_app_loop *a)
{
    uv_close((uv_handle_t *)&a->poll, on_app_closed);
    uv_close((uv_handle_t *)&a->timer, on_app_closed);
}

static void on_app_timer(uv_timer_t *t);

static void drive(struct pc_app_loop *a)
{
    pulsarc_client_t *c = a->client;
    if (!a->warned && !pc_client_on_loop(c)) {
        a->warned = true;
        PC_ERROR(&c->log, "pulsarc_client_new_on_loop was called on another thread than the "
                          "one running the loop: calls on the loop's thread are not known "
                          "as such, and a blocking one there would deadlock");
    }
    run_turn(&c->loop);
    /* The wake-up lives until the close: a loop that has run dry is closed. */
    if (!uv_loop_alive(&c->loop)) {
        close_app_handles(a);
        return;
    }
    /* 0 also when the client's loop has callbacks to run or descriptors to register with
     * its backend: another turn at once. */
    int timeout = uv_backend_timeout(&c->loop);
    if (timeout >= 0)
        uv_timer_start(&a->timer, on_app_timer, (uint64_t)timeout, 0);
    else
        uv_timer_stop(&a->timer);
    keep_alive(a, has_work(c));
}

static void on_app_poll(uv_poll_t *p, int status, int events)
{
    drive(p->data);
}

static void on_app_timer(uv_timer_t *t)
{
    drive(t->data);
}

static pulsarc_result drive_from(pulsarc_client_t *c, uv_loop_t *app)
{
    int fd = uv_backend_fd(&c->loop);
    if (fd < 0)
        return pc_fail(PULSARC_ERR_UNSUPPORTED, "this platform's libuv loop cannot be run "
                                                "from another one (no backend descriptor to poll)");
    struct pc_app_loop *a = calloc(1, sizeof *a);
    if (!a)
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    int rc = uv_poll_init(app, &a->poll, fd);
    if (rc != 0) {
        free(a);
        return pc_fail(PULSARC_ERR_UNSUPPORTED,
                       "the application's loop cannot watch the "
                       "client's: %s",
                       uv_strerror(rc));
    }
    uv_timer_init(app, &a->timer);
    a->poll.data = a->timer.data = a;
    a->open = 2;
    rc = uv_poll_start(&a->poll, UV_READABLE, on_app_poll);
    if (rc != 0) {
        close_app_handles(a); /* a->client is NULL: they go by themselves */
        return pc_fail(PULSARC_ERR_UNSUPPORTED,
                       "the application's loop cannot watch the "
                       "client's: %s",
                       uv_strerror(rc));
    }
    a->client = c;
    c->thread = uv_thread_self();
    c->driven = true;
    c->app = a;
    /* The first turn registers the client loop's descriptors (the wake-up's among them)
     * with its backend; until then nothing could make that readable. */
    uv_timer_start(&a->timer, on_app_timer, 0, 0);
    return PULSARC_OK;
}

/* ---- both ---------------------------------------------------------------------------- */

pulsarc_result pc_client_loop_start(pulsarc_client_t *c, uv_loop_t *app)
{
    if (app)
        return drive_from(c, app);
    if (uv_thread_create(&c->thread, loop_main, c) != 0)
        return pc_fail(PULSARC_ERR_NO_MEMORY, "cannot start the client thread");
    return PULSARC_OK;
}

void pc_client_loop_join(pulsarc_client_t *c)
{
    if (!c->driven)
        uv_thread_join(&c->thread);
}

void pc_client_loop_hold(pulsarc_client_t *c)
{
    /* A post outside the client's turn (the application's own callback sending, say) must
     * not let the application's uv_run end before the turn that runs it; that turn decides
     * again (keep_alive). */
    if (c->app)
        uv_ref((uv_handle_t *)&c->app->poll);
}

bool pc_client_on_loop(const pulsarc_client_t *c)
{
    /* uv_thread_t is pthread_t here: asked directly, it costs no call into libuv. */
    return pthread_equal(pthread_self(), c->thread);
}
