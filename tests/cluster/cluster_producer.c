/* Sends COUNT numbered messages for the cluster rig's tests (tests/cluster) and counts
 * each message's callbacks, so a test can tell "every callback once" from "as many
 * callbacks as messages".
 *
 *   cluster_producer URL TOPIC COUNT [options]
 *     --client-conf k=v  client setting (repeatable)
 *     --conf k=v         producer setting (repeatable)
 *     --size N           payload bytes (default 100): "m<index, 9 digits>" then filler
 *     --keys K           message i has the key "k<i mod K>" (default 0: no key)
 *     --rate R           at most R messages per second (default: no limit)
 *     --progress N       print "progress A" (A acknowledged so far) each time N more
 *                        messages are acknowledged
 *     --hold             after the flush, print "holding" and wait for a line (or the
 *                        end) on stdin before closing: the test looks at the open
 *                        connections meanwhile
 *
 * Every line goes to stdout at once (flushed), but failures, which go to stderr
 * (driver.h; the rig reads both as one stream). Prints at the end
 *   "acked=A failed=F twice=T missing=M"
 * (T: messages with more than one callback, M: messages with none after the producer
 * closed) and exits 0 only when A = COUNT and F = T = M = 0. The producer waits for room
 * (blockIfQueueFull=true). */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver.h"
#include "pulsarc/pulsarc.h"

static atomic_uchar *calls; /* per message */
static atomic_long acked, failed;
static long progress_every;

static void on_sent(pulsarc_producer_t *p, pulsarc_result res, const pulsarc_message_id_t *id,
                    void *ctx)
{
    (void)p;
    (void)id;
    long i = (long)(intptr_t)ctx;
    atomic_fetch_add(&calls[i], 1);
    if (res != PULSARC_OK) {
        if (atomic_fetch_add(&failed, 1) < 10)
            drv_message_failed(i, res);
        return;
    }
    long a = atomic_fetch_add(&acked, 1) + 1;
    if (progress_every > 0 && a % progress_every == 0) {
        printf("progress %ld\n", a);
        fflush(stdout);
    }
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: %s URL TOPIC COUNT [options]\n", argv[0]);
        return 2;
    }
    const char *url = argv[1], *topic = argv[2];
    long count = atol(argv[3]);
    size_t size = 100;
    long keys = 0;
    double rate = 0;
    int hold = 0;
    pulsarc_client_config_t *cc = pulsarc_client_config_new();
    pulsarc_producer_config_t *pc = pulsarc_producer_config_new();
    pulsarc_producer_config_set(pc, "blockIfQueueFull", "true");
    for (int i = 4; i < argc; i++) {
        const char *opt = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(opt, "--hold")) {
            hold = 1;
            continue;
        }
        if (!val) {
            fprintf(stderr, "%s needs a value\n", opt);
            return 2;
        }
        i++;
        if (!strcmp(opt, "--size"))
            size = strtoul(val, NULL, 10);
        else if (!strcmp(opt, "--keys"))
            keys = atol(val);
        else if (!strcmp(opt, "--rate"))
            rate = atof(val);
        else if (!strcmp(opt, "--progress"))
            progress_every = atol(val);
        else if (!drv_setting(opt, val, cc, pc)) { /* --client-conf, --conf */
            fprintf(stderr, "unknown option %s\n", opt);
            return 2;
        }
    }
    if (count <= 0 || count > 999999999 || size < 10) {
        fprintf(stderr, "COUNT must be 1..999999999 and --size at least 10\n");
        return 2;
    }
    calls = calloc((size_t)count, sizeof *calls);
    char *payload = malloc(size + 1);
    if (!calls || !payload)
        return 1;
    memset(payload, 'x', size);

    pulsarc_client_t *client = drv_client(url, cc);
    pulsarc_producer_t *producer = drv_producer(client, topic, pc);
    printf("created\n");
    fflush(stdout);

    pulsarc_message_t *msg = pulsarc_message_new();
    double t0 = drv_now_s();
    for (long i = 0; i < count; i++) {
        drv_pace(t0, i, rate);
        char head[24];
        snprintf(head, sizeof head, "m%09ld", i);
        memcpy(payload, head, 10);
        pulsarc_message_clear(msg);
        pulsarc_message_set_payload(msg, payload, size);
        if (keys > 0) {
            char key[32];
            snprintf(key, sizeof key, "k%ld", i % keys);
            pulsarc_message_set_key(msg, key);
        }
        pulsarc_result r = pulsarc_producer_send_async(producer, msg, on_sent, (void *)(intptr_t)i);
        if (r != PULSARC_OK) {
            /* Not accepted: no callback will come; counted as failed and as a call. */
            atomic_fetch_add(&calls[i], 1);
            atomic_fetch_add(&failed, 1);
            drv_message_failed(i, r);
        }
    }
    pulsarc_result r = pulsarc_producer_flush(producer);
    if (r != PULSARC_OK)
        drv_fail("flush", r);
    if (hold) {
        printf("holding\n");
        fflush(stdout);
        char line[16];
        (void)!fgets(line, sizeof line, stdin);
    }
    r = pulsarc_producer_close(producer);
    if (r != PULSARC_OK)
        drv_fail("close", r);
    pulsarc_producer_free(producer);
    pulsarc_client_destroy(client);

    long twice = 0, missing = 0;
    for (long i = 0; i < count; i++) {
        unsigned char n = atomic_load(&calls[i]);
        twice += n > 1;
        missing += n == 0;
    }
    long a = atomic_load(&acked), f = atomic_load(&failed);
    printf("acked=%ld failed=%ld twice=%ld missing=%ld elapsed=%.1fs\n", a, f, twice, missing,
           drv_now_s() - t0);
    pulsarc_message_free(msg);
    free(payload);
    free(calls);
    return a == count && f == 0 && twice == 0 && missing == 0 ? 0 : 1;
}
