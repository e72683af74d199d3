/* A producer with a spool, for the crash tests (test_spool_crash.py):
 *
 *   interop_spool_producer URL TOPIC NAME DIR FSYNC FROM TO [options]
 *     --conf key=value     producer configuration (repeatable)
 *     --encrypt NAME=FILE  encrypt for key NAME with the RSA public key in PEM FILE
 *     --async-create       create with pulsarc_client_create_producer_async
 *     --size N             payloads of N bytes: "m-<i>" then byte k is (i * 31 + k) & 0xff
 *
 * Creates a producer named NAME with spoolDir=DIR and spoolFsync=FSYNC (which first
 * resends what DIR holds), then sends messages FROM..TO-1: message i has the payload
 * "m-<i>", the property index=i and sequence id i (so that a rerun that sends i again is
 * dropped by a deduplicating broker). After each send_async that returns PULSARC_OK (the
 * message is accepted: in the spool) it writes "<i>\n" to stdout at once, so that a
 * test that kills the process knows which messages it may rely on. Then flush, close,
 * "done" on stdout; exit 0 only if nothing failed. */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "driver.h"
#include "pulsarc/pulsarc.h"

static atomic_int failed;

static void on_sent(pulsarc_producer_t *p, pulsarc_result res, const pulsarc_message_id_t *id,
                    void *ctx)
{
    if (res == PULSARC_OK)
        return;
    drv_message_failed((long)(intptr_t)ctx, res);
    atomic_fetch_add(&failed, 1);
}

/* "<i>\n" in one write, unbuffered: the line is out before the next send. */
static void report(long i)
{
    char line[32];
    int n = snprintf(line, sizeof line, "%ld\n", i);
    if (write(STDOUT_FILENO, line, (size_t)n) != n)
        exit(1);
}

int main(int argc, char **argv)
{
    if (argc < 8) {
        fprintf(stderr, "usage: %s URL TOPIC NAME DIR FSYNC FROM TO [--conf key=value]...\n",
                argv[0]);
        return 2;
    }
    long from = atol(argv[6]), to = atol(argv[7]);
    pulsarc_client_config_t *cc = pulsarc_client_config_new();
    pulsarc_client_config_set(cc, "logLevel", "info");
    pulsarc_producer_config_t *pc = pulsarc_producer_config_new();
    const char *settings[][2] = {
        { "producerName", argv[3] },    { "spoolDir", argv[4] },  { "spoolFsync", argv[5] },
        { "blockIfQueueFull", "true" }, { "sendTimeoutMs", "0" },
    };
    for (size_t i = 0; i < sizeof settings / sizeof settings[0]; i++)
        if (pulsarc_producer_config_set(pc, settings[i][0], settings[i][1]) != PULSARC_OK)
            return drv_fail(settings[i][0], PULSARC_ERR_INVALID_CONFIG);
    bool async_create = false;
    size_t size = 0;
    for (int i = 8; i < argc; i++) {
        if (!strcmp(argv[i], "--async-create")) {
            async_create = true;
            continue;
        }
        if (!strcmp(argv[i], "--size") && i + 1 < argc) {
            size = (size_t)atol(argv[++i]);
            continue;
        }
        if (i + 1 >= argc || !drv_setting(argv[i], argv[i + 1], NULL, pc)) {
            fprintf(stderr, "unknown option %s\n", argv[i]);
            return 2;
        }
        i++;
    }
    pulsarc_client_t *client = drv_client(argv[1], cc);
    pulsarc_producer_t *producer;
    pulsarc_result r = drv_create_producer(client, argv[2], pc, async_create, &producer);
    if (r != PULSARC_OK)
        return drv_fail("create producer", r);
    pulsarc_message_t *m = pulsarc_message_new();
    char *payload = malloc(size > 32 ? size : 32);
    if (!payload)
        return drv_fail("payload", PULSARC_ERR_NO_MEMORY);
    for (long i = from; i < to; i++) {
        char index[32];
        size_t len = (size_t)snprintf(payload, 32, "m-%ld", i);
        for (size_t k = len; k < size; k++)
            payload[k] = (char)((i * 31 + (long)k) & 0xff);
        if (size > len)
            len = size;
        snprintf(index, sizeof index, "%ld", i);
        pulsarc_message_set_payload(m, payload, len);
        pulsarc_message_set_property(m, "index", index);
        pulsarc_message_set_sequence_id(m, i);
        r = pulsarc_producer_send_async(producer, m, on_sent, (void *)(intptr_t)i);
        if (r != PULSARC_OK)
            return drv_fail("send", r);
        report(i);
    }
    pulsarc_message_free(m);
    free(payload);
    r = pulsarc_producer_flush(producer);
    if (r != PULSARC_OK)
        return drv_fail("flush", r);
    r = pulsarc_producer_close(producer);
    if (r != PULSARC_OK)
        return drv_fail("close", r);
    pulsarc_producer_free(producer);
    pulsarc_client_destroy(client);
    printf("done\n");
    return atomic_load(&failed) ? 1 : 0;
}
