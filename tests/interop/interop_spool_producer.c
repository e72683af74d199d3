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
#include <uv.h>

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

typedef struct creation {
    uv_mutex_t mu;
    uv_cond_t cond;
    bool done;
    pulsarc_result res;
    pulsarc_producer_t *producer;
} creation;

static void on_created(pulsarc_client_t *c, pulsarc_result res, pulsarc_producer_t *p, void *ctx)
{
    creation *cr = ctx;
    if (res != PULSARC_OK)
        fprintf(stderr, "async create: %s\n", pulsarc_last_error_detail());
    uv_mutex_lock(&cr->mu);
    cr->res = res;
    cr->producer = p;
    cr->done = true;
    uv_cond_signal(&cr->cond);
    uv_mutex_unlock(&cr->mu);
}

/* pulsarc_client_create_producer_async, waited for. */
static pulsarc_result create_async(pulsarc_client_t *client, const char *topic,
                                   const pulsarc_producer_config_t *pc, pulsarc_producer_t **out)
{
    creation cr = { .done = false };
    uv_mutex_init(&cr.mu);
    uv_cond_init(&cr.cond);
    pulsarc_result r = pulsarc_client_create_producer_async(client, topic, pc, on_created, &cr);
    uv_mutex_lock(&cr.mu);
    while (r == PULSARC_OK && !cr.done)
        uv_cond_wait(&cr.cond, &cr.mu);
    uv_mutex_unlock(&cr.mu);
    uv_cond_destroy(&cr.cond);
    uv_mutex_destroy(&cr.mu);
    *out = cr.producer;
    return r == PULSARC_OK ? cr.res : r;
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
        char *eq = i + 1 < argc ? strchr(argv[i + 1], '=') : NULL;
        if (!eq)
            return fail("arguments", PULSARC_ERR_INVALID_ARGUMENT);
        *eq = '\0';
        pulsarc_result r;
        if (!strcmp(argv[i], "--conf"))
            r = pulsarc_producer_config_set(pc, argv[i + 1], eq + 1);
        else if (!strcmp(argv[i], "--encrypt"))
            r = pulsarc_producer_config_add_encryption_key_file(pc, argv[i + 1], eq + 1);
        else
            r = PULSARC_ERR_INVALID_ARGUMENT;
        if (r != PULSARC_OK)
            return fail(argv[i + 1], r);
        i++;
    }
    pulsarc_client_t *client;
    pulsarc_result r = pulsarc_client_new(argv[1], cc, &client);
    pulsarc_client_config_free(cc);
    if (r != PULSARC_OK)
        return fail("client", r);
    pulsarc_producer_t *producer;
    r = async_create ? create_async(client, argv[2], pc, &producer)
                     : pulsarc_client_create_producer(client, argv[2], pc, &producer);
    pulsarc_producer_config_free(pc);
    if (r != PULSARC_OK)
        return fail("create producer", r);
    pulsarc_message_t *m = pulsarc_message_new();
    char *payload = malloc(size > 32 ? size : 32);
    if (!payload)
        return fail("payload", PULSARC_ERR_NO_MEMORY);
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
            return fail("send", r);
        report(i);
    }
    pulsarc_message_free(m);
    free(payload);
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
