/*
 * pulsarc-spool-senders — what the spool's group commit buys: THREADS threads send
 * 100-byte messages with send_async on ONE producer with a spool, as fast as they can,
 * for SECONDS; then flush and print the rate.
 *
 *   pulsarc-spool-senders URL THREADS SECONDS DIR always|interval|never
 *
 * With spoolFsync=always each send returns once an fdatasync covered its message; one
 * thread pays one fdatasync per message, several threads share them (bench/README.md,
 * "The spool"). pulsarc-perf sends from one thread, so it shows only the first case.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <pulsarc/pulsarc.h>

#define MAX_THREADS 64

static pulsarc_producer_t *producer;
static atomic_long accepted;
static double seconds;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *sender(void *arg)
{
    pulsarc_message_t *m = pulsarc_message_new();
    char payload[100];
    memset(payload, 'x', sizeof payload);
    double end = now_s() + seconds;
    while (now_s() < end) {
        pulsarc_message_set_payload(m, payload, sizeof payload);
        if (pulsarc_producer_send_async(producer, m, NULL, NULL) == PULSARC_OK)
            atomic_fetch_add(&accepted, 1);
    }
    pulsarc_message_free(m);
    return NULL;
}

static int fail(const char *what, pulsarc_result res)
{
    fprintf(stderr, "%s: %s: %s\n", what, pulsarc_strerror(res), pulsarc_last_error_detail());
    return 1;
}

int main(int argc, char **argv)
{
    int threads = argc == 6 ? atoi(argv[2]) : 0;
    seconds = argc == 6 ? atof(argv[3]) : 0;
    if (threads < 1 || threads > MAX_THREADS || seconds <= 0) {
        fprintf(stderr, "usage: %s URL THREADS(1..%d) SECONDS DIR always|interval|never\n", argv[0],
                MAX_THREADS);
        return 2;
    }
    pulsarc_client_t *client;
    pulsarc_result res = pulsarc_client_new(argv[1], NULL, &client);
    if (res != PULSARC_OK)
        return fail("client", res);
    char topic[96], name[48];
    snprintf(topic, sizeof topic, "persistent://public/default/spool-senders-%d", (int)getpid());
    snprintf(name, sizeof name, "spool-senders-%d", (int)getpid());
    pulsarc_producer_config_t *conf = pulsarc_producer_config_new();
    const char *settings[][2] = { { "producerName", name },
                                  { "spoolDir", argv[4] },
                                  { "spoolFsync", argv[5] },
                                  { "blockIfQueueFull", "true" } };
    for (size_t i = 0; i < sizeof settings / sizeof settings[0]; i++)
        if ((res = pulsarc_producer_config_set(conf, settings[i][0], settings[i][1])) != PULSARC_OK)
            return fail(settings[i][0], res);
    res = pulsarc_client_create_producer(client, topic, conf, &producer);
    pulsarc_producer_config_free(conf);
    if (res != PULSARC_OK)
        return fail("create producer", res);
    pthread_t th[MAX_THREADS];
    double t0 = now_s();
    for (int i = 0; i < threads; i++)
        pthread_create(&th[i], NULL, sender, NULL);
    for (int i = 0; i < threads; i++)
        pthread_join(th[i], NULL);
    res = pulsarc_producer_flush(producer);
    double elapsed = now_s() - t0;
    printf("threads=%d spoolFsync=%s messages=%ld rate=%.0f msg/s%s\n", threads, argv[5],
           atomic_load(&accepted), (double)atomic_load(&accepted) / elapsed,
           res == PULSARC_OK ? "" : " (flush failed)");
    pulsarc_producer_close(producer);
    pulsarc_producer_free(producer);
    pulsarc_client_destroy(client);
    return res == PULSARC_OK ? 0 : 1;
}
