/* The client's event loop run by the target's own thread, in turns: see lockstep.h. */
#include "lockstep.h"

#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <uv.h>

#include "client/client.h"
#include "fuzz_check.h"
#include "virtual_clock.h"

/* A loop that is never idle after this many passes in one turn spins: a client bug (it
 * would burn a core in production too). */
#define SPIN_LIMIT 100000

#define LS_CHECK(cond, ...) FUZZ_CHECK("lockstep", cond, __VA_ARGS__)

/* The linker's --wrap names: __real_* are libuv's own functions. */
int __real_uv_thread_create(uv_thread_t *tid, uv_thread_cb entry, void *arg);
int __wrap_uv_thread_create(uv_thread_t *tid, uv_thread_cb entry, void *arg);
int __real_uv_thread_join(uv_thread_t *tid);
int __wrap_uv_thread_join(uv_thread_t *tid);
uv_thread_t __real_uv_thread_self(void);
uv_thread_t __wrap_uv_thread_self(void);
int __real_uv_run(uv_loop_t *loop, uv_run_mode mode);
int __wrap_uv_run(uv_loop_t *loop, uv_run_mode mode);
void __real_uv_cond_wait(uv_cond_t *cond, uv_mutex_t *mutex);
void __wrap_uv_cond_wait(uv_cond_t *cond, uv_mutex_t *mutex);
void __real_uv_cond_signal(uv_cond_t *cond);
void __wrap_uv_cond_signal(uv_cond_t *cond);
void __real_uv_cond_broadcast(uv_cond_t *cond);
void __wrap_uv_cond_broadcast(uv_cond_t *cond);

/* The client's loop thread's id: never a real thread's (it names a static object). */
static const char loop_thread_tag;
#define LOOP_THREAD ((uv_thread_t)(uintptr_t)&loop_thread_tag)

static struct {
    bool ready;               /* ls_init has run */
    pthread_t target;         /* the thread that plays both the broker and the loop thread */
    uv_loop_t *loop;          /* the client's, from its creation to its destroy */
    bool handing_over;        /* the loop thread's function is running: its uv_run hands over */
    jmp_buf handed_over;      /* ... by jumping back here, skipping the rest of the function */
    pulsarc_client_t *client; /* the function's argument, until its loop has ended */
    bool in_loop;             /* a turn runs: the target's thread is the loop thread */
    uint64_t next_timer;      /* after the last turn; UINT64_MAX: none */
    unsigned wakes;           /* uv_cond_signal and uv_cond_broadcast calls */
    void (*serve)(void *ctx, unsigned wakes);
    void *serve_ctx;
} ls;

void ls_init(void)
{
    ls.target = pthread_self();
    ls.ready = true;
    ls.next_timer = UINT64_MAX;
}

void ls_on_block(void (*serve)(void *ctx, unsigned wakes), void *ctx)
{
    ls.serve = serve;
    ls.serve_ctx = ctx;
}

static bool on_target(void)
{
    return ls.ready && pthread_equal(pthread_self(), ls.target);
}

static bool readable(int fd)
{
    struct pollfd p = { .fd = fd, .events = POLLIN };
    return poll(&p, 1, 0) > 0;
}

/* Descriptors the loop started watching during its last pass join its epoll set only at
 * the start of the next one. The queue of them is a private field, but its first member
 * is the link to the next element in every libuv 1.x (a void *[2] up to 1.44, a struct
 * uv__queue since), and an empty queue links to itself. */
static bool watchers_queued(uv_loop_t *loop)
{
    void *const *queue = (void *const *)&loop->watcher_queue;
    return queue[0] != (const void *)queue;
}

/* The loop has something to do now: a callback pending, a timer due, a descriptor to
 * watch, or I/O ready (the loop's epoll descriptor polls readable when any descriptor it
 * watches is ready). */
static bool has_work(uv_loop_t *loop)
{
    return uv_backend_timeout(loop) == 0 || watchers_queued(loop) || readable(uv_backend_fd(loop));
}

static uint64_t next_timer(uv_loop_t *loop)
{
    int t = uv_backend_timeout(loop);
    return t < 0 ? UINT64_MAX : uv_now(loop) + (uint64_t)t;
}

/* Run the loop as its own thread would, until it is idle. False once it has no handles
 * left (it ended). */
static bool run_until_idle(uv_loop_t *loop)
{
    bool alive = true;
    ls.in_loop = true;
    for (unsigned n = 0; alive; n++) {
        LS_CHECK(n < SPIN_LIMIT, "the client's loop is never idle (it spins)");
        alive = __real_uv_run(loop, UV_RUN_NOWAIT) != 0;
        if (!has_work(loop))
            break;
    }
    if (!alive && ls.client) {
        /* The loop has ended: what the loop thread's function does after its uv_run
         * (client_loop.c's loop_main; skipped at the hand-over), but its pthread_detach:
         * this thread is the target's. It wakes a destroy waiting for the close. */
        pulsarc_client_t *c = ls.client;
        ls.client = NULL;
        ls.loop = NULL;
        pc_client_closed(c);
    }
    ls.in_loop = false;
    ls.next_timer = alive ? next_timer(loop) : UINT64_MAX;
    return alive;
}

void ls_turn(void)
{
    LS_CHECK(!ls.in_loop, "a turn inside a turn");
    if (ls.loop)
        LS_CHECK(run_until_idle(ls.loop) || !ls.loop, "the client's loop ended before the "
                                                      "client was closed");
}

bool ls_pending(void)
{
    return ls.loop && readable(uv_backend_fd(ls.loop));
}

uint64_t ls_next_timer(void)
{
    return ls.loop ? ls.next_timer : UINT64_MAX;
}

unsigned ls_wakes(void)
{
    return ls.wakes;
}

/* pulsarc_client_new starts its loop thread: run the thread's function now, on this
 * thread; its uv_run only hands the loop over (it blocks SIGPIPE first, which the loop
 * needs on whichever thread runs it). */
int __wrap_uv_thread_create(uv_thread_t *tid, uv_thread_cb entry, void *arg)
{
    if (!on_target() || ls.in_loop)
        return __real_uv_thread_create(tid, entry, arg);
    LS_CHECK(!ls.loop, "a second client loop");
    *tid = LOOP_THREAD;
    ls.client = arg; /* the only thread the target makes: the client's (loop_main) */
    ls.handing_over = true;
    if (setjmp(ls.handed_over) == 0)
        entry(arg); /* leaves through its uv_run's longjmp */
    ls.handing_over = false;
    LS_CHECK(ls.loop, "the client's loop thread did not run its loop");
    ls.next_timer = UINT64_MAX;
    return 0;
}

int __wrap_uv_run(uv_loop_t *loop, uv_run_mode mode)
{
    if (!ls.handing_over)
        return __real_uv_run(loop, mode);
    ls.loop = loop;
    longjmp(ls.handed_over, 1);
}

/* pulsarc_client_destroy has posted its shutdown and waits for the loop thread to end:
 * the loop runs alone to its end. Nobody plays the broker now, so time flies: the clock
 * jumps to each timer the loop waits for. */
int __wrap_uv_thread_join(uv_thread_t *tid)
{
    const uv_thread_t loop_thread = LOOP_THREAD;
    if (!uv_thread_equal(tid, &loop_thread))
        return __real_uv_thread_join(tid);
    uv_loop_t *loop = ls.loop; /* NULL: it has ended already, with the close */
    while (loop && run_until_idle(loop)) {
        LS_CHECK(ls.next_timer != UINT64_MAX,
                 "the client's loop waits for I/O while it shuts down (nobody will write)");
        vc_set(ls.next_timer);
    }
    ls.loop = NULL;
    return 0;
}

uv_thread_t __wrap_uv_thread_self(void)
{
    return ls.in_loop && on_target() ? LOOP_THREAD : __real_uv_thread_self();
}

/* A blocking call waits for the loop's answer: serve until the loop has woken somebody
 * (a condition variable allows wake-ups for nothing: the caller checks and waits again). */
void __wrap_uv_cond_wait(uv_cond_t *cond, uv_mutex_t *mutex)
{
    if (!ls.loop || ls.in_loop || !on_target()) {
        __real_uv_cond_wait(cond, mutex);
        return;
    }
    LS_CHECK(ls.serve, "a blocking call, and nobody to serve it (ls_on_block)");
    unsigned wakes = ls.wakes;
    uv_mutex_unlock(mutex); /* the loop takes it to answer */
    ls.serve(ls.serve_ctx, wakes);
    uv_mutex_lock(mutex);
}

void __wrap_uv_cond_signal(uv_cond_t *cond)
{
    __real_uv_cond_signal(cond);
    ls.wakes++;
}

void __wrap_uv_cond_broadcast(uv_cond_t *cond)
{
    __real_uv_cond_broadcast(cond);
    ls.wakes++;
}
