/*
 * async_producer — send many messages without waiting for each receipt.
 *
 *   async_producer [SERVICE_URL [TOPIC [COUNT]]]
 *   (defaults: pulsar://localhost:6650, persistent://public/default/pulsarc-example, 10000)
 *
 * It shows:
 *   - pulsarc_producer_send_async with a callback that counts results through its ctx;
 *   - blockIfQueueFull=true, so the send loop waits for room instead of failing;
 *   - message keys (same key -> same partition, in order), properties and event time;
 *   - keeping a message id beyond the callback with pulsarc_message_id_copy;
 *   - flush, then close, then free.
 *
 * Build: cc async_producer.c $(pkg-config --cflags --libs pulsarc)
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <pulsarc/pulsarc.h>

/* What the callback updates. Callbacks run on the client's own thread while main keeps
 * sending, so the counters are atomic. */
struct send_stats {
    atomic_long ok;
    atomic_long failed;
    /* Copy of the first message's id. Only the callback thread writes it (all callbacks
     * run on that one thread), and main reads it after flush, when all have run. */
    pulsarc_message_id_t *first_id;
};

static void on_sent(pulsarc_producer_t *producer, pulsarc_result res,
                    const pulsarc_message_id_t *id, void *ctx)
{
    (void)producer;
    struct send_stats *stats = ctx;
    if (res != PULSARC_OK) {
        /* The detail (e.g. the broker's message) is available inside the callback too.
         * It stays valid only until the next pulsarc call, so it is fetched last. */
        const char *description = pulsarc_strerror(res);
        const char *detail = pulsarc_last_error_detail();
        fprintf(stderr, "send failed: %s: %s\n", description, detail);
        atomic_fetch_add(&stats->failed, 1);
        return;
    }
    /* id is only valid during this call: copy it to keep it. */
    if (!stats->first_id)
        stats->first_id = pulsarc_message_id_copy(id);
    atomic_fetch_add(&stats->ok, 1);
}

static uint64_t now_ms(void)
{
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static int fail(const char *what, pulsarc_result res)
{
    const char *description = pulsarc_strerror(res);
    const char *detail = pulsarc_last_error_detail(); /* last: the next pulsarc call ends it */
    fprintf(stderr, "%s: %s: %s\n", what, description, detail);
    return 1;
}

int main(int argc, char **argv)
{
    const char *service_url = argc > 1 ? argv[1] : "pulsar://localhost:6650";
    const char *topic = argc > 2 ? argv[2] : "persistent://public/default/pulsarc-example";
    long count = argc > 3 ? strtol(argv[3], NULL, 10) : 10000;
    if (count <= 0) {
        fprintf(stderr, "usage: %s [SERVICE_URL [TOPIC [COUNT]]]\n", argv[0]);
        return 2;
    }

    pulsarc_client_t *client = NULL;
    pulsarc_result res = pulsarc_client_new(service_url, NULL, &client);
    if (res != PULSARC_OK)
        return fail("pulsarc_client_new", res);

    /* Wait for room when maxPendingMessages (default 1000) messages are in flight, rather
     * than failing with PULSARC_ERR_QUEUE_FULL. This blocking only ever happens in the
     * sending thread: inside a callback send_async never waits. */
    pulsarc_producer_config_t *conf = pulsarc_producer_config_new();
    res = conf ? pulsarc_producer_config_set(conf, "blockIfQueueFull", "true")
               : PULSARC_ERR_NO_MEMORY;

    /* The config is copied by create_producer, so it is freed right after. */
    pulsarc_producer_t *producer = NULL;
    if (res == PULSARC_OK)
        res = pulsarc_client_create_producer(client, topic, conf, &producer);
    pulsarc_producer_config_free(conf);
    pulsarc_message_t *msg = res == PULSARC_OK ? pulsarc_message_new() : NULL;
    if (res == PULSARC_OK && !msg)
        res = PULSARC_ERR_NO_MEMORY;
    if (res != PULSARC_OK) {
        fail("creating the producer", res);
        if (producer)
            pulsarc_producer_free(producer);
        pulsarc_client_destroy(client);
        return 1;
    }

    struct send_stats stats = { 0 };

    uint64_t start = now_ms();
    long accepted = 0;
    for (long i = 0; i < count; i++) {
        /* Reuse one builder: clear the previous message's key and properties first. */
        pulsarc_message_clear(msg);

        char payload[64];
        int len = snprintf(payload, sizeof payload, "async message %ld", i);
        pulsarc_message_set_payload(msg, payload, (size_t)len);

        /* Messages with the same key go to the same partition, in send order; the key
         * hashes like the Java client's, so other clients agree on the partition. */
        char key[32];
        snprintf(key, sizeof key, "customer-%ld", i % 8);
        pulsarc_message_set_key(msg, key);

        /* Properties are free-form string pairs that consumers see beside the payload. */
        char index[32];
        snprintf(index, sizeof index, "%ld", i);
        pulsarc_message_set_property(msg, "index", index);
        pulsarc_message_set_property(msg, "source", "async_producer");

        /* When the event happened, as opposed to when the broker stored it. */
        pulsarc_message_set_event_time(msg, now_ms());

        res = pulsarc_producer_send_async(producer, msg, on_sent, &stats);
        if (res != PULSARC_OK) {
            /* Not accepted, so on_sent will not be called for it. */
            fail("pulsarc_producer_send_async", res);
            break;
        }
        accepted++;
    }

    /* Wait until every accepted message has had its callback. */
    res = pulsarc_producer_flush(producer);
    if (res != PULSARC_OK)
        fail("pulsarc_producer_flush (first failure)", res);
    uint64_t elapsed = now_ms() - start;

    long ok = atomic_load(&stats.ok), failed = atomic_load(&stats.failed);
    printf("%ld accepted, %ld persisted, %ld failed in %llu ms\n", accepted, ok, failed,
           (unsigned long long)elapsed);
    if (stats.first_id) {
        char id_str[96];
        pulsarc_message_id_str(stats.first_id, id_str, sizeof id_str);
        printf("first message id: %s\n", id_str);
        pulsarc_message_id_free(stats.first_id);
    }

    res = pulsarc_producer_close(producer);
    if (res != PULSARC_OK)
        fail("pulsarc_producer_close", res);
    pulsarc_producer_free(producer);
    pulsarc_message_free(msg);
    pulsarc_client_destroy(client);
    return ok == count ? 0 : 1;
}
