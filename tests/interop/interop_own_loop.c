/* pulsarc on the program's own libuv loop (pulsarc_client_new_on_loop) against a real
 * broker, with sends from the loop's thread and from another thread at once, so that a
 * ThreadSanitizer build sees the hand-over and the wait for room race if they do.
 *
 *   interop_own_loop URL TOPIC LOOP_COUNT THREAD_COUNT
 *
 * The producer is created with pulsarc_client_create_producer_async (blockIfQueueFull on,
 * maxPendingMessages 64). In its callback, every blocking call is made once and must
 * return PULSARC_ERR_WOULD_BLOCK; then a worker thread sends "thread-<i>" for i below
 * THREAD_COUNT (waiting for room when the queue is full) and flushes, while a timer on the
 * loop sends "loop-<i>" for i below LOOP_COUNT as fast as it is accepted, meeting
 * PULSARC_ERR_QUEUE_FULL whenever the queue is full (on the loop a send never waits). When
 * both are done the producer and the client close asynchronously, and uv_loop_close must
 * find nothing left. Prints
 *   "loop_sent=L thread_sent=T failed=F queue_full=Q would_block=W off_thread=O loop_close=R"
 * and exits 0 only if everything was as it should. Gives up after 120 s (a hang guard). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uv.h>

#include "driver.h"
#include "pulsarc/pulsarc.h"
#include "pulsarc/pulsarc_uv.h"

enum { HANG_GUARD_MS = 120000, BLOCKING_CALLS = 5 };

static uv_loop_t loop;
static uv_timer_t pump, guard;
static uv_async_t worker_done;
static pthread_t loop_thread, worker;
static pulsarc_client_t *client;
static pulsarc_producer_t *producer;
static long loop_count, thread_count;

/* Loop thread only. */
static long loop_next, loop_ok, queue_full, would_block, completed;
static bool worker_finished, closing, hung;
/* Written by the worker, read once it has signalled (worker_done). */
static long thread_accepted;
static pulsarc_result worker_flush = PULSARC_OK;
/* Callbacks count here: all on the loop thread, which off_thread checks. */
static atomic_long thread_ok, failed, off_thread;

static void on_sent(pulsarc_producer_t *p, pulsarc_result res, const pulsarc_message_id_t *id,
                    void *ctx)
{
    if (!pthread_equal(pthread_self(), loop_thread))
        atomic_fetch_add(&off_thread, 1);
    if (res != PULSARC_OK) {
        atomic_fetch_add(&failed, 1);
        fprintf(stderr, "send failed: %s: %s\n", pulsarc_result_name(res),
                pulsarc_last_error_detail());
        return;
    }
    if (ctx)
        atomic_fetch_add(&thread_ok, 1);
    else
        loop_ok++;
    completed++;
}

static pulsarc_result send_text(const char *prefix, long i, void *ctx)
{
    char text[64];
    int len = snprintf(text, sizeof text, "%s-%ld", prefix, i);
    pulsarc_message_t *m = pulsarc_message_new();
    pulsarc_message_set_payload(m, text, (size_t)len);
    pulsarc_result r = pulsarc_producer_send_async(producer, m, on_sent, ctx);
    pulsarc_message_free(m);
    return r;
}

/* ---- the end ------------------------------------------------------------------------- */

static void on_client_closed(pulsarc_client_t *c, pulsarc_result res, void *ctx)
{
    pulsarc_client_destroy(c);
    client = NULL;
    uv_close((uv_handle_t *)&pump, NULL);
    uv_close((uv_handle_t *)&guard, NULL);
    uv_close((uv_handle_t *)&worker_done, NULL);
}

static void on_producer_closed(pulsarc_producer_t *p, pulsarc_result res, void *ctx)
{
    if (res != PULSARC_OK)
        fprintf(stderr, "producer close: %s: %s\n", pulsarc_result_name(res),
                pulsarc_last_error_detail());
    pulsarc_producer_free(p);
    producer = NULL;
    pulsarc_client_close_async(client, on_client_closed, NULL);
}

static void finish_when_done(void)
{
    if (closing || !worker_finished || loop_next < loop_count)
        return;
    closing = true;
    uv_timer_stop(&pump);
    /* The producer's close waits for what the loop sent last. */
    pulsarc_producer_close_async(producer, on_producer_closed, NULL);
}

static void on_guard(uv_timer_t *t)
{
    fprintf(stderr, "hang guard: loop %ld/%ld accepted, %ld completed, worker %s\n", loop_next,
            loop_count, completed, worker_finished ? "done" : "still sending");
    hung = true;
    if (!closing) {
        closing = true;
        uv_timer_stop(&pump);
        pulsarc_client_close_async(client, on_client_closed, NULL);
    }
}

/* ---- the loop's sends ---------------------------------------------------------------- */

static void on_pump(uv_timer_t *t)
{
    while (loop_next < loop_count) {
        pulsarc_result r = send_text("loop", loop_next, NULL);
        if (r == PULSARC_ERR_QUEUE_FULL) {
            queue_full++; /* at once, though blockIfQueueFull is on: try on the next tick */
            break;
        }
        if (r != PULSARC_OK) {
            fprintf(stderr, "loop send %ld: %s: %s\n", loop_next, pulsarc_result_name(r),
                    pulsarc_last_error_detail());
            atomic_fetch_add(&failed, 1);
        }
        loop_next++;
    }
    finish_when_done();
}

/* ---- the other thread's sends -------------------------------------------------------- */

static void *work(void *arg)
{
    long ok = 0;
    for (long i = 0; i < thread_count; i++) {
        pulsarc_result r = send_text("thread", i, &thread_ok); /* waits for room when full */
        if (r != PULSARC_OK) {
            fprintf(stderr, "thread send %ld: %s: %s\n", i, pulsarc_result_name(r),
                    pulsarc_last_error_detail());
            break;
        }
        ok++;
    }
    thread_accepted = ok;
    worker_flush = pulsarc_producer_flush(producer); /* blocking, from another thread */
    uv_async_send(&worker_done);
    return NULL;
}

static void on_worker_done(uv_async_t *a)
{
    pthread_join(worker, NULL);
    worker_finished = true;
    finish_when_done();
}

/* ---- creation ------------------------------------------------------------------------ */

static void count_would_block(pulsarc_result r, const char *call)
{
    if (r == PULSARC_ERR_WOULD_BLOCK)
        would_block++;
    else
        fprintf(stderr, "%s on the loop's thread: %s, not WOULD_BLOCK\n", call,
                pulsarc_result_name(r));
}

static void on_created(pulsarc_client_t *c, pulsarc_result res, pulsarc_producer_t *p, void *ctx)
{
    if (res != PULSARC_OK) {
        drv_fail("create producer", res);
        atomic_fetch_add(&failed, 1);
        closing = true;
        pulsarc_client_close_async(c, on_client_closed, NULL);
        return;
    }
    producer = p;
    /* Every blocking call refuses on the loop's thread, and does nothing. */
    pulsarc_producer_t *other = NULL;
    pulsarc_message_t *m = pulsarc_message_new();
    pulsarc_message_set_payload(m, "never", 5);
    count_would_block(pulsarc_client_create_producer(c, "never", NULL, &other), "create_producer");
    count_would_block(pulsarc_producer_send(p, m, NULL), "send");
    count_would_block(pulsarc_producer_flush(p), "flush");
    count_would_block(pulsarc_producer_close(p), "close");
    count_would_block(pulsarc_client_destroy(c), "client_destroy");
    pulsarc_message_free(m);
    if (pthread_create(&worker, NULL, work, NULL) != 0) {
        fprintf(stderr, "cannot start the worker\n");
        exit(1);
    }
    uv_timer_start(&pump, on_pump, 0, 1);
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: %s URL TOPIC LOOP_COUNT THREAD_COUNT\n", argv[0]);
        return 2;
    }
    loop_count = strtol(argv[3], NULL, 10);
    thread_count = strtol(argv[4], NULL, 10);
    loop_thread = pthread_self();
    uv_loop_init(&loop);
    uv_timer_init(&loop, &pump);
    uv_timer_init(&loop, &guard);
    uv_timer_start(&guard, on_guard, HANG_GUARD_MS, 0);
    uv_async_init(&loop, &worker_done, on_worker_done);

    pulsarc_client_config_t *cc = pulsarc_client_config_new();
    pulsarc_client_config_set(cc, "logLevel", "warn");
    pulsarc_result r = pulsarc_client_new_on_loop(&loop, argv[1], cc, &client);
    pulsarc_client_config_free(cc);
    if (r != PULSARC_OK)
        return drv_fail("client", r);
    pulsarc_producer_config_t *pc = pulsarc_producer_config_new();
    pulsarc_producer_config_set(pc, "blockIfQueueFull", "true");
    pulsarc_producer_config_set(pc, "maxPendingMessages", "64");
    r = pulsarc_client_create_producer_async(client, argv[2], pc, on_created, NULL);
    pulsarc_producer_config_free(pc);
    if (r != PULSARC_OK)
        return drv_fail("create_producer_async", r);

    uv_run(&loop, UV_RUN_DEFAULT);
    int loop_close = uv_loop_close(&loop);

    long thread_sent = atomic_load(&thread_ok);
    printf("loop_sent=%ld thread_sent=%ld failed=%ld queue_full=%ld would_block=%ld "
           "off_thread=%ld loop_close=%d\n",
           loop_ok, thread_sent, atomic_load(&failed), queue_full, would_block,
           atomic_load(&off_thread), loop_close);
    bool ok = !hung && loop_ok == loop_count && thread_sent == thread_count &&
              thread_accepted == thread_count && worker_flush == PULSARC_OK &&
              atomic_load(&failed) == 0 && would_block == BLOCKING_CALLS &&
              atomic_load(&off_thread) == 0 && loop_close == 0;
    return ok ? 0 : 1;
}
