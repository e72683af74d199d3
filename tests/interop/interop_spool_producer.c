/* A producer with a spool, for the crash tests (test_spool_crash.py):
 *
 *   interop_spool_producer URL TOPIC NAME DIR FSYNC FROM TO [--conf key=value]...
 *
 * Creates a producer named NAME with spoolDir=DIR and spoolFsync=FSYNC (which first
 * resends what DIR holds), then sends messages FROM..TO-1: message i has the payload
 * "m-<i>", the property index=i and sequence id i (so that a rerun that sends i again is
 * dropped by a deduplicating broker). After each send_async that returns PULSARC_OK (the
 * message is accepted: in the spool) it writes "<i>\n" to stdout at once, so that a
 * test that kills the process knows which messages it may rely on. Then flush, close,
 * "done" on stdout; exit 0 only if nothing failed. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pulsarc/pulsarc.h"

static atomic_int failed;

static void on_sent(pulsarc_producer_t *p, pulsarc_result res, const pulsarc_message_id_t *id,
                    void *ctx)
{
    if (res == PULSARC_OK)
        return;
    fprintf(stderr, "message %ld failed: %s (%s)\n", (long)(intptr_t)ctx, pulsarc_strerror(res),
            pulsarc_last_error_detail());
    atomic_fetch_add(&failed, 1);
}

static int fail(const char *what, pulsarc_result res)
{
    fprintf(stderr, "%s: %s [%s]: %s\n", what, pulsarc_strerror(res), pulsarc_result_name(res),
            pulsarc_last_error_detail());
    return 1;
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
        { "producerName", argv[3] }, { "spoolDir", argv[4] }, { "spoolFsync", argv[5] },
        { "blockIfQueueFull", "true" }, { "sendTimeoutMs", "0" },
    };
    for (size_t i = 0; i < sizeof settings / sizeof settings[0]; i++)
        if (pulsarc_producer_config_set(pc, settings[i][0], settings[i][1]) != PULSARC_OK)
            return fail(settings[i][0], PULSARC_ERR_INVALID_CONFIG);
    for (int i = 8; i + 1 < argc; i += 2) {
        char *eq = strchr(argv[i + 1], '=');
        if (strcmp(argv[i], "--conf") != 0 || !eq)
            return fail("arguments", PULSARC_ERR_INVALID_ARGUMENT);
        *eq = '\0';
        pulsarc_result r = pulsarc_producer_config_set(pc, argv[i + 1], eq + 1);
        if (r != PULSARC_OK)
            return fail(argv[i + 1], r);
    }
    pulsarc_client_t *client;
    pulsarc_result r = pulsarc_client_new(argv[1], cc, &client);
    pulsarc_client_config_free(cc);
    if (r != PULSARC_OK)
        return fail("client", r);
    pulsarc_producer_t *producer;
    r = pulsarc_client_create_producer(client, argv[2], pc, &producer);
    pulsarc_producer_config_free(pc);
    if (r != PULSARC_OK)
        return fail("create producer", r);
    pulsarc_message_t *m = pulsarc_message_new();
    for (long i = from; i < to; i++) {
        char payload[32], index[32];
        snprintf(payload, sizeof payload, "m-%ld", i);
        snprintf(index, sizeof index, "%ld", i);
        pulsarc_message_set_payload(m, payload, strlen(payload));
        pulsarc_message_set_property(m, "index", index);
        pulsarc_message_set_sequence_id(m, i);
        r = pulsarc_producer_send_async(producer, m, on_sent, (void *)(intptr_t)i);
        if (r != PULSARC_OK)
            return fail("send", r);
        report(i);
    }
    pulsarc_message_free(m);
    r = pulsarc_producer_flush(producer);
    if (r != PULSARC_OK)
        return fail("flush", r);
    r = pulsarc_producer_close(producer);
    if (r != PULSARC_OK)
        return fail("close", r);
    pulsarc_producer_free(producer);
    pulsarc_client_destroy(client);
    printf("done\n");
    return atomic_load(&failed) ? 1 : 0;
}
