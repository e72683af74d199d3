/* The own-loop workload of chaos_producer: the client on this program's own libuv loop
 * (pulsarc_client_new_on_loop), the producer made with the async create, and every send
 * made from a timer on that loop at the workload's rate. The end is asynchronous too:
 * flush_async, close_async, pulsarc_client_close_async, and uv_loop_close must then find
 * nothing left.
 *
 * On the loop thread a send never waits: with the queue full (an outage longer than
 * maxPendingMessages at the rate) it returns PULSARC_ERR_QUEUE_FULL (or MEMORY_LIMIT)
 * whatever blockIfQueueFull says. That is no refusal of the message but the loop's way of
 * waiting, so the same counter is sent again once a callback has made room: its
 * "sending" line then appears more than once, and only the last attempt has an
 * "accepted" line. */
#include <stdio.h>
#include <stdlib.h>

#include <uv.h>

#include "chaos_producer.h"
#include "driver.h"
#include "pulsarc/pulsarc_uv.h"

enum {
    TICK_MS = 10,        /* how often the timer looks for what is due, and for a stop */
    RETRY_MS = 1000,     /* between producer creations that failed */
    UNPACED_BURST = 100, /* --rate 0: sends per tick */
};

static const chaos_opts *opts;
static uv_loop_t loop;
static uv_timer_t tick, retry;
static pulsarc_client_t *client;
static pulsarc_producer_t *producer;
static pulsarc_producer_config_t *pconf;
static pulsarc_message_t *msg;
static unsigned char *buf;

/* All on the loop thread. */
static long sent;         /* counters accepted or refused: the next one is from + sent */
static long full_at = -1; /* callbacks counted when the queue was found full; -1: not full */
static double t0;
static bool signals_open, finishing, never_created, clean = true;

static void on_client_closed(pulsarc_client_t *c, pulsarc_result res, void *ctx)
{
    pulsarc_result r = pulsarc_client_destroy(c); /* the close is done: frees at once */
    if (r != PULSARC_OK) {
        drv_fail("client destroy", r);
        clean = false;
    }
    client = NULL;
    uv_close((uv_handle_t *)&tick, NULL);
    uv_close((uv_handle_t *)&retry, NULL);
}

static void close_client(void)
{
    pulsarc_result r = pulsarc_client_close_async(client, on_client_closed, NULL);
    if (r != PULSARC_OK) {
        /* No callback will come; the loop may then not end, which the run sees. */
        drv_fail("client close", r);
        clean = false;
        uv_close((uv_handle_t *)&tick, NULL);
        uv_close((uv_handle_t *)&retry, NULL);
    }
}

static void on_producer_closed(pulsarc_producer_t *p, pulsarc_result res, void *ctx)
{
    if (res != PULSARC_OK) {
        drv_fail("close", res);
        clean = false;
    }
    pulsarc_producer_free(p); /* allowed in its own callback */
    producer = NULL;
    close_client();
}

static void on_flushed(pulsarc_producer_t *p, pulsarc_result res, void *ctx)
{
    chaos_flushed(res);
    pulsarc_result r = pulsarc_producer_close_async(p, on_producer_closed, NULL);
    if (r != PULSARC_OK)
        on_producer_closed(p, r, NULL);
}

static void finish(void)
{
    finishing = true;
    uv_timer_stop(&tick);
    pulsarc_result r = pulsarc_producer_flush_async(producer, on_flushed, NULL);
    if (r != PULSARC_OK)
        on_flushed(producer, r, NULL);
}

static bool all_sent(void)
{
    return opts->count >= 0 && sent >= opts->count;
}

static void on_tick(uv_timer_t *t)
{
    if (finishing)
        return;
    if (!signals_open) {
        /* Here, not in on_created: pulsarc runs its callbacks in a turn that ends by
         * setting the thread's signal mask back to what it was before the turn, which
         * would block SIGTERM again. This timer's callback is outside such a turn. */
        chaos_unblock_signals();
        signals_open = true;
    }
    long due = opts->rate > 0 ? (long)((drv_now_s() - t0) * opts->rate) + 1 : sent + UNPACED_BURST;
    /* After a full queue, wait for a callback before trying the same counter again. */
    if (full_at >= 0 && chaos_completed() == full_at)
        due = sent;
    while (!chaos_stop && !all_sent() && sent < due) {
        long c = opts->from + sent;
        pulsarc_result r = chaos_build(opts, msg, c, buf);
        if (r == PULSARC_OK) {
            chaos_log("sending %ld", c);
            r = pulsarc_producer_send_async(producer, msg, chaos_on_sent, (void *)(intptr_t)c);
            if (r == PULSARC_ERR_QUEUE_FULL || r == PULSARC_ERR_MEMORY_LIMIT) {
                full_at = chaos_completed();
                break;
            }
        } else {
            drv_fail("message", r);
        }
        full_at = -1;
        chaos_send_returned(c, r);
        sent++;
    }
    if (chaos_stop || all_sent())
        finish();
}

static void create(void);

static void on_retry(uv_timer_t *t)
{
    if (chaos_stop_pending()) {
        never_created = true;
        close_client();
        return;
    }
    create();
}

static void on_created(pulsarc_client_t *c, pulsarc_result res, pulsarc_producer_t *p, void *ctx)
{
    int e;
    if (res == PULSARC_OK) {
        producer = p;
        chaos_log("created");
        t0 = drv_now_s();
        e = uv_timer_start(&tick, on_tick, 0, TICK_MS);
        if (e) {
            fprintf(stderr, "timer: %s\n", uv_strerror(e));
            clean = false;
            finish();
        }
        return;
    }
    drv_fail("create producer", res);
    if (chaos_create_retryable(res)) {
        e = uv_timer_start(&retry, on_retry, RETRY_MS, 0);
        if (!e)
            return;
        fprintf(stderr, "timer: %s\n", uv_strerror(e));
    }
    never_created = true;
    close_client();
}

static void create(void)
{
    pulsarc_result r = pulsarc_client_create_producer_async(client, opts->topics[0], pconf,
                                                            on_created, NULL);
    if (r != PULSARC_OK)
        on_created(client, r, NULL, NULL);
}

int chaos_run_own_loop(const chaos_opts *o, pulsarc_client_config_t *cc,
                       pulsarc_producer_config_t *pc)
{
    opts = o;
    pconf = pc;
    msg = pulsarc_message_new();
    buf = malloc(chaos_max_payload(o));
    if (!msg || !buf)
        return drv_fail("message", PULSARC_ERR_NO_MEMORY);
    int e = uv_loop_init(&loop);
    if (!e)
        e = uv_timer_init(&loop, &tick);
    if (!e)
        e = uv_timer_init(&loop, &retry);
    if (e) {
        fprintf(stderr, "libuv: %s\n", uv_strerror(e));
        return 1;
    }
    pulsarc_result r = pulsarc_client_new_on_loop(&loop, o->url, cc, &client);
    pulsarc_client_config_free(cc);
    if (r != PULSARC_OK)
        return drv_fail("client", r);
    create();
    uv_run(&loop, UV_RUN_DEFAULT);
    e = uv_loop_close(&loop);
    if (e) {
        fprintf(stderr, "uv_loop_close: %s: a handle was left on the loop\n", uv_strerror(e));
        clean = false;
    }
    pulsarc_producer_config_free(pconf);
    pulsarc_message_free(msg);
    free(buf);
    return never_created ? 1 : chaos_end(clean);
}
