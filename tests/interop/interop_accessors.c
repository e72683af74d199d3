/* Calls the producer's accessors in a tight loop on a thread of their own while the main
 * thread sends to a partitioned topic whose partition count the test raises, so that a
 * ThreadSanitizer build sees the accessors race with the partition updates if they do.
 *
 *   interop_accessors URL TOPIC COUNT...
 *     Sends until the router has seen each partition count in COUNT..., in turn, printing
 *     "partitions=N" (and flushing stdout) as each is reached; the test raises the count
 *     after reading a line. Then flushes, closes and prints
 *     "reads=R sent=S failed=F name=NAME last_sequence_id=L".
 *
 * Exits 0 only if every count was reached, every message succeeded and the accessors
 * always answered sensibly; gives up after 120 s (a hang guard, not a timing check). */
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver.h"
#include "pulsarc/pulsarc.h"

enum { HANG_GUARD_S = 120, MAX_COUNTS = 16 };

static atomic_int seen_partitions;
static atomic_uint next_partition;
static atomic_int sent_ok, sent_failed;
static atomic_bool stop_reading;
static atomic_bool bad_read;
static atomic_long reads;

/* Round robin over every partition the router is offered, remembering the count. */
static int route(const pulsarc_message_t *msg, int n, void *ctx)
{
    int seen = atomic_load(&seen_partitions);
    while (n > seen && !atomic_compare_exchange_weak(&seen_partitions, &seen, n)) {
    }
    return (int)(atomic_fetch_add(&next_partition, 1) % (unsigned)n);
}

static void on_sent(pulsarc_producer_t *p, pulsarc_result res, const pulsarc_message_id_t *id,
                    void *ctx)
{
    if (res == PULSARC_OK) {
        atomic_fetch_add(&sent_ok, 1);
        return;
    }
    fprintf(stderr, "send failed: %s (%s)\n", pulsarc_strerror(res), pulsarc_last_error_detail());
    atomic_fetch_add(&sent_failed, 1);
}

static void *read_accessors(void *arg)
{
    const pulsarc_producer_t *p = arg;
    while (!atomic_load(&stop_reading)) {
        const char *name = pulsarc_producer_name(p);
        int64_t last = pulsarc_producer_last_sequence_id(p);
        uint64_t pending = pulsarc_producer_pending_count(p);
        const char *topic = pulsarc_producer_topic(p);
        /* New partitions register while this runs: connected may be false then. */
        int connected = pulsarc_producer_is_connected(p);
        int partitions = pulsarc_producer_partitions(p);
        if (!name[0] || last < -1 || pending > 1000000 || !topic[0] || connected < 0 ||
            partitions < 1)
            atomic_store(&bad_read, true);
        atomic_fetch_add(&reads, 1);
    }
    return NULL;
}

/* Send one small message; the rate is modest so that the broker is not the bottleneck. */
static pulsarc_result send_one(pulsarc_producer_t *producer, pulsarc_message_t *msg, int i)
{
    char payload[32];
    int len = snprintf(payload, sizeof payload, "accessors-%d", i);
    pulsarc_message_set_payload(msg, payload, (size_t)len);
    return pulsarc_producer_send_async(producer, msg, on_sent, NULL);
}

int main(int argc, char **argv)
{
    if (argc < 4 || argc - 3 > MAX_COUNTS) {
        fprintf(stderr, "usage: %s URL TOPIC COUNT...\n", argv[0]);
        return 2;
    }
    pulsarc_client_t *client = drv_client(argv[1], NULL);
    pulsarc_producer_config_t *conf = pulsarc_producer_config_new();
    pulsarc_producer_config_set(conf, "autoUpdatePartitionsIntervalSeconds", "1");
    pulsarc_producer_config_set(conf, "batchingMaxPublishDelayMs", "1");
    pulsarc_producer_config_set_router(conf, route, NULL);
    pulsarc_producer_t *producer = drv_producer(client, argv[2], conf);
    pthread_t reader;
    pthread_create(&reader, NULL, read_accessors, producer);

    pulsarc_message_t *msg = pulsarc_message_new();
    double give_up = drv_now_s() + HANG_GUARD_S;
    int next_count = 3, i = 0;
    pulsarc_result res = PULSARC_OK;
    while (next_count < argc && drv_now_s() < give_up) {
        res = send_one(producer, msg, i++);
        if (res != PULSARC_OK)
            break;
        if (atomic_load(&seen_partitions) >= atoi(argv[next_count])) {
            printf("partitions=%d\n", atomic_load(&seen_partitions));
            fflush(stdout);
            next_count++;
        }
        drv_pause_ms(5);
    }
    /* A few more, so that the newest partitions get messages too. */
    for (int k = 0; k < 50 && res == PULSARC_OK; k++)
        res = send_one(producer, msg, i++);
    pulsarc_message_free(msg);
    pulsarc_result flushed = pulsarc_producer_flush(producer);
    atomic_store(&stop_reading, true);
    pthread_join(reader, NULL);

    printf("reads=%ld sent=%d failed=%d name=%s last_sequence_id=%" PRId64 "\n",
           atomic_load(&reads), atomic_load(&sent_ok), atomic_load(&sent_failed),
           pulsarc_producer_name(producer), pulsarc_producer_last_sequence_id(producer));
    pulsarc_result closed = pulsarc_producer_close(producer);
    pulsarc_producer_free(producer);
    pulsarc_client_destroy(client);

    if (res != PULSARC_OK)
        return drv_fail("send_async", res);
    if (flushed != PULSARC_OK)
        return drv_fail("flush", flushed);
    if (closed != PULSARC_OK)
        return drv_fail("close", closed);
    if (next_count < argc) {
        fprintf(stderr, "the router never saw %s partitions (saw %d)\n", argv[next_count],
                atomic_load(&seen_partitions));
        return 1;
    }
    if (atomic_load(&bad_read)) {
        fprintf(stderr, "an accessor answered nonsense\n");
        return 1;
    }
    return atomic_load(&sent_failed) == 0 ? 0 : 1;
}
