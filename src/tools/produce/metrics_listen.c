/* --metrics-listen (metrics_listen.h): a thread that runs a libuv loop holding the
 * /metrics server, and an async handle that tells it to close. */
#include "metrics_listen.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pulsarc/pulsarc_uv.h>

#include "util.h"

struct metrics_listen {
    uv_loop_t loop;
    uv_async_t stop;
    uv_thread_t thread;
    pulsarc_uv_metrics_server_t *server;
};

static void on_stop(uv_async_t *a)
{
    struct metrics_listen *m = a->data;
    pulsarc_uv_metrics_close(m->server, NULL, NULL);
    uv_close((uv_handle_t *)&m->stop, NULL);
}

static void run(void *arg)
{
    struct metrics_listen *m = arg;
    uv_run(&m->loop, UV_RUN_DEFAULT);
}

/* Splits "HOST:PORT" ("[v6]:PORT" for an IPv6 address) into host (size bytes) and port. */
static int split(const char *hostport, char *host, size_t size, int *port)
{
    const char *colon = strrchr(hostport, ':');
    if (!colon || colon == hostport || !colon[1])
        return -1;
    const char *h = hostport;
    size_t hlen = (size_t)(colon - hostport);
    if (h[0] == '[' && hlen >= 2 && h[hlen - 1] == ']') {
        h++;
        hlen -= 2;
    }
    if (hlen == 0 || hlen >= size)
        return -1;
    memcpy(host, h, hlen);
    host[hlen] = '\0';
    char *end;
    errno = 0;
    long p = strtol(colon + 1, &end, 10);
    if (errno || *end || p < 0 || p > 65535)
        return -1;
    *port = (int)p;
    return 0;
}

struct metrics_listen *metrics_listen_start(pulsarc_client_t *client, const char *hostport)
{
    char host[64];
    int port;
    if (split(hostport, host, sizeof host, &port) != 0) {
        fprintf(stderr,
                PROG
                ": --metrics-listen expects HOST:PORT (an IP address, a port 0..65535): '%s'\n",
                hostport);
        return NULL;
    }
    struct metrics_listen *m = calloc(1, sizeof *m);
    if (!m || uv_loop_init(&m->loop) != 0) {
        free(m);
        fprintf(stderr, PROG ": --metrics-listen: out of memory\n");
        return NULL;
    }
    /* The loop runs on no thread yet: the server may be made here. */
    pulsarc_result res = pulsarc_uv_metrics_serve(&m->loop, client, host, port, &m->server);
    if (res != PULSARC_OK) {
        fprintf(stderr, PROG ": --metrics-listen '%s': %s\n", hostport,
                pulsarc_last_error_detail());
        uv_run(&m->loop, UV_RUN_DEFAULT); /* finishes closing what the failed call opened */
        uv_loop_close(&m->loop);
        free(m);
        return NULL;
    }
    uv_async_init(&m->loop, &m->stop, on_stop);
    m->stop.data = m;
    if (uv_thread_create(&m->thread, run, m) != 0) {
        fprintf(stderr, PROG ": --metrics-listen: cannot start a thread\n");
        pulsarc_uv_metrics_close(m->server, NULL, NULL);
        uv_close((uv_handle_t *)&m->stop, NULL);
        uv_run(&m->loop, UV_RUN_DEFAULT);
        uv_loop_close(&m->loop);
        free(m);
        return NULL;
    }
    fprintf(stderr, PROG ": serving metrics on http://%s%s%s:%d/metrics\n",
            strchr(host, ':') ? "[" : "", host, strchr(host, ':') ? "]" : "",
            pulsarc_uv_metrics_port(m->server));
    return m;
}

void metrics_listen_stop(struct metrics_listen *m)
{
    if (!m)
        return;
    uv_async_send(&m->stop);
    uv_thread_join(&m->thread);
    uv_loop_close(&m->loop);
    free(m);
}
