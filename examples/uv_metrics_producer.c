/*
 * uv_metrics_producer — a Prometheus /metrics endpoint served from the application's own
 * libuv loop, next to a client on that loop that publishes.
 *
 *   uv_metrics_producer [SERVICE_URL [TOPIC [HOST:PORT [COUNT]]]]
 *   (defaults: pulsar://localhost:6650, persistent://public/default/pulsarc-metrics,
 *   127.0.0.1:9464, 100; PORT 0 takes any free port)
 *
 * It publishes COUNT messages, one every 10 ms, and serves the client's statistics on
 * http://HOST:PORT/metrics (try: curl http://127.0.0.1:9464/metrics) until SIGINT or
 * SIGTERM. Then it stops serving, closes the producer and the client, and the loop ends
 * with nothing left on it. It prints the address it serves on, and at the end what was
 * published.
 *
 * It shows:
 *   - pulsarc_uv_metrics_serve on the loop pulsarc_client_new_on_loop runs on: each
 *     scrape is answered on that loop with pulsarc_client_metrics_text, at once (no
 *     thread, no wait);
 *   - the series a Prometheus server scrapes: pulsar_client_producer_message_send_duration
 *     _seconds (a histogram), ..._send_size_bytes_total, ..._pending_count, with labels
 *     pulsar_tenant, pulsar_namespace and pulsar_topic (docs/statistics.md, "Prometheus");
 *   - the shutdown order: the server first (pulsarc_uv_metrics_close), then the producer
 *     and the client.
 *
 * Build: cc uv_metrics_producer.c $(pkg-config --cflags --libs pulsarc-uv). It exits 1
 * when the server could not listen, the producer could not be created or a message
 * failed.
 */
/* uv.h needs POSIX's types (pthread_rwlock_t), which strict C11 (-std=c11) hides. */
#define _POSIX_C_SOURCE 200809L

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uv.h>

#include <pulsarc/pulsarc.h>
#include <pulsarc/pulsarc_uv.h>

/* Everything runs on the loop's thread, pulsarc's callbacks included: no atomics. */
struct app {
    uv_loop_t loop;
    uv_timer_t sender;
    uv_signal_t sigint, sigterm;
    pulsarc_client_t *client;
    pulsarc_producer_t *producer;
    pulsarc_uv_metrics_server_t *metrics;
    long count, sent, published, failed;
    bool stopping, broken;
};

static void on_client_closed(pulsarc_client_t *client, pulsarc_result res, void *ctx)
{
    struct app *app = ctx;
    (void)res;
    pulsarc_client_destroy(client);
    app->client = NULL;
}

static void on_producer_closed(pulsarc_producer_t *producer, pulsarc_result res, void *ctx)
{
    struct app *app = ctx;
    (void)res;
    (void)producer;
    pulsarc_producer_free(app->producer);
    app->producer = NULL;
    pulsarc_client_close_async(app->client, on_client_closed, app);
}

static void stop(struct app *app)
{
    if (app->stopping)
        return;
    app->stopping = true;
    uv_close((uv_handle_t *)&app->sender, NULL);
    uv_close((uv_handle_t *)&app->sigint, NULL);
    uv_close((uv_handle_t *)&app->sigterm, NULL);
    pulsarc_uv_metrics_close(app->metrics, NULL, NULL); /* NULL: nothing */
    if (app->producer)
        pulsarc_producer_close_async(app->producer, on_producer_closed, app);
    else
        pulsarc_client_close_async(app->client, on_client_closed, app);
}

static void on_signal(uv_signal_t *s, int signum)
{
    (void)signum;
    stop(s->data);
}

static void on_sent(pulsarc_producer_t *producer, pulsarc_result res,
                    const pulsarc_message_id_t *id, void *ctx)
{
    struct app *app = ctx;
    (void)producer;
    (void)id;
    if (res == PULSARC_OK)
        app->published++;
    else
        app->failed++;
}

static void on_send_timer(uv_timer_t *t)
{
    struct app *app = t->data;
    if (!app->producer)
        return; /* not created yet */
    if (app->sent == app->count) {
        uv_timer_stop(t); /* done: serve until told to stop */
        return;
    }
    char text[64];
    int len = snprintf(text, sizeof text, "metrics example %ld", app->sent);
    pulsarc_message_t *msg = pulsarc_message_new();
    pulsarc_message_set_payload(msg, text, (size_t)len);
    if (pulsarc_producer_send_async(app->producer, msg, on_sent, app) == PULSARC_OK)
        app->sent++; /* a refusal (a full queue) is retried on the next tick */
    pulsarc_message_free(msg);
}

static void on_created(pulsarc_client_t *client, pulsarc_result res, pulsarc_producer_t *producer,
                       void *ctx)
{
    struct app *app = ctx;
    (void)client;
    if (res != PULSARC_OK) {
        fprintf(stderr, "cannot create the producer: %s\n", pulsarc_strerror(res));
        app->broken = true;
        stop(app);
        return;
    }
    app->producer = producer;
    if (app->stopping) /* a signal came first */
        pulsarc_producer_close_async(producer, on_producer_closed, app);
}

int main(int argc, char **argv)
{
    const char *url = argc > 1 ? argv[1] : "pulsar://localhost:6650";
    const char *topic = argc > 2 ? argv[2] : "persistent://public/default/pulsarc-metrics";
    const char *listen = argc > 3 ? argv[3] : "127.0.0.1:9464";
    struct app app = { .count = argc > 4 ? atol(argv[4]) : 100 };

    char host[64];
    const char *colon = strrchr(listen, ':');
    if (!colon || (size_t)(colon - listen) >= sizeof host) {
        fprintf(stderr, "HOST:PORT expected, got '%s'\n", listen);
        return 2;
    }
    memcpy(host, listen, (size_t)(colon - listen));
    host[colon - listen] = '\0';

    uv_loop_init(&app.loop);
    pulsarc_result res = pulsarc_client_new_on_loop(&app.loop, url, NULL, &app.client);
    if (res != PULSARC_OK) {
        fprintf(stderr, "cannot create the client: %s\n", pulsarc_strerror(res));
        return 1;
    }
    res = pulsarc_uv_metrics_serve(&app.loop, app.client, host, atoi(colon + 1), &app.metrics);
    if (res != PULSARC_OK) {
        fprintf(stderr, "cannot serve metrics on %s: %s\n", listen, pulsarc_last_error_detail());
        app.broken = true;
    } else {
        printf("serving metrics on http://%s:%d/metrics\n", host,
               pulsarc_uv_metrics_port(app.metrics));
        fflush(stdout);
    }
    uv_timer_init(&app.loop, &app.sender);
    app.sender.data = &app;
    uv_timer_start(&app.sender, on_send_timer, 10, 10);
    uv_signal_init(&app.loop, &app.sigint);
    uv_signal_init(&app.loop, &app.sigterm);
    app.sigint.data = app.sigterm.data = &app;
    uv_signal_start(&app.sigint, on_signal, SIGINT);
    uv_signal_start(&app.sigterm, on_signal, SIGTERM);
    if (app.broken)
        stop(&app);
    else
        pulsarc_client_create_producer_async(app.client, topic, NULL, on_created, &app);

    uv_run(&app.loop, UV_RUN_DEFAULT);
    int closed = uv_loop_close(&app.loop);
    printf("published=%ld failed=%ld loop_close=%d\n", app.published, app.failed, closed);
    return app.broken || app.failed || closed ? 1 : 0;
}
