/* Sends a known set of messages through an interceptor and writes the client's
 * statistics, for the interop tests that compare both with what the official client
 * reads back (test_interceptors_stats.py).
 *
 *   interop_stats URL TOPIC COUNT --stats FILE [--too-big-every K] [--pause-after N]
 *     --stats FILE       the client's statistics (pulsarc_client_stats) as JSON, taken
 *                        after the producer was flushed and closed
 *     --too-big-every K  message i with i % K == K - 1 has an incompressible 6 MiB payload:
 *                        accepted (compressionType=lz4, so its size is judged once
 *                        compressed) and failed with MESSAGE_TOO_BIG (chunking is off)
 *     --pause-after N    after N messages, flush, print "PAUSED", and wait for a line on
 *                        standard input before sending the rest (the test terminates the
 *                        topic meanwhile)
 *
 * Every message carries the property "index" (its number); the interceptor adds
 * "intercepted" = "pulsarc-<index>" and counts on_ack calls per message. Prints one line:
 *   accepted=A acked=K failed=F refused=R too_big=T terminated=X refused_terminated=Y
 *   acked_bytes=B ack_calls=C ack_dups=D ack_missing=M ack_mismatch=Z
 * and exits 0 unless the run could not be made (the test judges the numbers). */
#include <inttypes.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver.h"
#include "pulsarc/pulsarc.h"

#define BIG_PAYLOAD (6u * 1024 * 1024)

typedef struct outcome {
    _Atomic int callbacks; /* send callbacks */
    _Atomic int res;       /* the callback's result */
    _Atomic int acks;      /* on_ack calls */
    _Atomic int ack_res;   /* on_ack's result */
} outcome;

static outcome *out;
static int count;

static uint64_t xorshift(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

static int index_of(const pulsarc_message_t *msg)
{
    const char *v = pulsarc_message_property(msg, "index");
    int i = v ? atoi(v) : -1;
    return i >= 0 && i < count ? i : -1;
}

static pulsarc_result stamp(pulsarc_producer_t *p, pulsarc_message_t *msg, void *ctx)
{
    char v[32];
    snprintf(v, sizeof v, "pulsarc-%d", index_of(msg));
    return pulsarc_message_set_property(msg, "intercepted", v);
}

static void on_ack(pulsarc_producer_t *p, const pulsarc_message_t *msg, pulsarc_result res,
                   const pulsarc_message_id_t *id, void *ctx)
{
    int i = index_of(msg);
    if (i < 0)
        return;
    atomic_fetch_add(&out[i].acks, 1);
    atomic_store(&out[i].ack_res, res);
}

static void on_sent(pulsarc_producer_t *p, pulsarc_result res, const pulsarc_message_id_t *id,
                    void *ctx)
{
    int i = (int)(intptr_t)ctx;
    atomic_fetch_add(&out[i].callbacks, 1);
    atomic_store(&out[i].res, res);
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr,
                "usage: %s URL TOPIC COUNT --stats FILE [--too-big-every K] "
                "[--pause-after N]\n",
                argv[0]);
        return 2;
    }
    const char *url = argv[1], *topic = argv[2], *stats_file = NULL;
    count = atoi(argv[3]);
    int too_big_every = 0, pause_after = -1;
    for (int i = 4; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--stats"))
            stats_file = argv[i + 1];
        else if (!strcmp(argv[i], "--too-big-every"))
            too_big_every = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--pause-after"))
            pause_after = atoi(argv[i + 1]);
        else {
            fprintf(stderr, "unknown option %s\n", argv[i]);
            return 2;
        }
    }
    if (!stats_file || count <= 0)
        return 2;
    out = calloc((size_t)count, sizeof *out);
    uint8_t *big = malloc(BIG_PAYLOAD);
    uint8_t small[256];
    uint64_t seed = 42;
    for (size_t k = 0; k < BIG_PAYLOAD; k++)
        big[k] = (uint8_t)(xorshift(&seed) >> 56);

    pulsarc_client_t *client = drv_client(url, NULL);
    pulsarc_producer_config_t *pconf = pulsarc_producer_config_new();
    pulsarc_producer_config_set(pconf, "compressionType", "lz4");
    pulsarc_producer_config_set(pconf, "blockIfQueueFull", "true");
    pulsarc_interceptor_t ic = { .before_send = stamp, .on_ack = on_ack };
    pulsarc_producer_config_add_interceptor(pconf, &ic, sizeof ic, NULL);
    pulsarc_producer_t *producer = drv_producer(client, topic, pconf);

    int refused = 0, refused_terminated = 0;
    pulsarc_message_t *msg = pulsarc_message_new();
    for (int i = 0; i < count; i++) {
        if (i == pause_after) {
            pulsarc_producer_flush(producer);
            printf("PAUSED\n");
            fflush(stdout);
            char line[16];
            if (!fgets(line, sizeof line, stdin))
                break;
        }
        pulsarc_message_clear(msg);
        bool too_big = too_big_every > 0 && i % too_big_every == too_big_every - 1;
        size_t len = 1 + (size_t)(xorshift(&seed) % 200);
        for (size_t k = 0; k < len; k++)
            small[k] = (uint8_t)('a' + k % 26);
        pulsarc_message_set_payload(msg, too_big ? big : small, too_big ? BIG_PAYLOAD : len);
        char v[16];
        snprintf(v, sizeof v, "%d", i);
        pulsarc_message_set_property(msg, "index", v);
        pulsarc_result res = pulsarc_producer_send_async(producer, msg, on_sent,
                                                         (void *)(intptr_t)i);
        if (res != PULSARC_OK) {
            refused++;
            refused_terminated += res == PULSARC_ERR_BROKER_TOPIC_TERMINATED;
            atomic_store(&out[i].res, res);
        }
    }
    pulsarc_producer_flush(producer);
    pulsarc_producer_close(producer);

    pulsarc_stats_t *stats = NULL;
    pulsarc_result res = pulsarc_client_stats(client, &stats);
    FILE *f = res == PULSARC_OK ? fopen(stats_file, "w") : NULL;
    if (f) {
        fputs(pulsarc_stats_json(stats), f);
        fclose(f);
    }
    pulsarc_stats_free(stats);
    pulsarc_producer_free(producer);
    pulsarc_client_destroy(client);

    int accepted = 0, acked = 0, failed = 0, too_big_failed = 0, terminated = 0;
    int ack_calls = 0, ack_dups = 0, ack_missing = 0, ack_mismatch = 0;
    uint64_t acked_bytes = 0;
    seed = 42;
    for (size_t k = 0; k < BIG_PAYLOAD; k++)
        xorshift(&seed);
    for (int i = 0; i < count; i++) {
        bool too_big = too_big_every > 0 && i % too_big_every == too_big_every - 1;
        size_t len = 1 + (size_t)(xorshift(&seed) % 200);
        int calls = atomic_load(&out[i].callbacks), acks = atomic_load(&out[i].acks);
        ack_calls += acks;
        if (!calls)
            continue; /* refused (or never sent): no callback, no on_ack */
        accepted++;
        pulsarc_result r = (pulsarc_result)atomic_load(&out[i].res);
        if (r == PULSARC_OK) {
            acked++;
            acked_bytes += too_big ? BIG_PAYLOAD : len;
        } else {
            failed++;
            too_big_failed += r == PULSARC_ERR_MESSAGE_TOO_BIG;
            terminated += r == PULSARC_ERR_BROKER_TOPIC_TERMINATED;
        }
        ack_dups += acks > 1 || calls > 1;
        ack_missing += acks == 0;
        ack_mismatch += acks && atomic_load(&out[i].ack_res) != (int)r;
    }
    printf("accepted=%d acked=%d failed=%d refused=%d too_big=%d terminated=%d "
           "refused_terminated=%d acked_bytes=%" PRIu64 " ack_calls=%d ack_dups=%d "
           "ack_missing=%d ack_mismatch=%d\n",
           accepted, acked, failed, refused, too_big_failed, terminated, refused_terminated,
           acked_bytes, ack_calls, ack_dups, ack_missing, ack_mismatch);
    pulsarc_message_free(msg);
    free(big);
    free(out);
    return f ? 0 : 1;
}
