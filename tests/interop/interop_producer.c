/* Sends a deterministic set of messages for the interop tests, which regenerate the same
 * set in Python (gen_messages in pulsarc_messages.py) and compare it with what the
 * official client reads back.
 *
 *   interop_producer URL TOPIC COUNT MODE [options]
 *     MODE              sync | async
 *     --name NAME       producer name
 *     --seed N          generator seed (default 1)
 *     --max-size N      largest payload (default 512)
 *     --ids FILE        write "index ledger entry partition batch_index serialized_hex result"
 *                       lines (result: the pulsarc_result name of the callback)
 *     --conf k=v        producer configuration (repeatable)
 *     --start-seq N     explicit sequence ids N, N+1, ... (default: automatic)
 *     --first-index N   send messages N .. N+COUNT-1 of the deterministic set (default 0):
 *                       message i of this run is message N+i of the set (same payload,
 *                       keys and "index" property as in a run from 0), so a second run can
 *                       replay or continue a first one; the --ids file lists N+i too
 *     --client-conf k=v client configuration (repeatable), e.g. keepAliveIntervalSeconds=1
 *     --rate N          at most N messages per second
 *     --router mod3     custom router: message i goes to partition i % 3
 *     --no-block        blockIfQueueFull=false: a full queue rejects the send, which is
 *                       counted as rejected (not accepted, so no callback) and skipped
 *     --encrypt NAME=FILE encrypt for key NAME with the RSA public key in PEM FILE
 *                       (repeatable; cryptoFailureAction, dataKeyRotationMs via --conf)
 *
 * Prints "sent=N failed=M producer=NAME last_sequence_id=S" and exits 0 only if every
 * message succeeded. */
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver.h"
#include "pulsarc/pulsarc.h"

typedef struct gen {
    uint64_t state;
} gen;

/* xorshift64: simple to reproduce exactly in Python. */
static uint64_t next_rand(gen *g)
{
    uint64_t x = g->state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    g->state = x;
    return x;
}

typedef struct result {
    int64_t ledger, entry;
    int32_t partition, batch_index;
    char ser[128];
    int res;
} result;

static result *results;
static int first_index; /* --first-index: message i of this run is message first_index + i */
static atomic_int done_ok, done_failed;

static int route_mod3(const pulsarc_message_t *msg, int n, void *ctx)
{
    const char *index = pulsarc_message_property(msg, "index");
    return index ? atoi(index) % 3 : 0;
}

static void record(int index, pulsarc_result res, const pulsarc_message_id_t *id)
{
    result *r = &results[index];
    r->res = res;
    r->ledger = -1;
    if (res != PULSARC_OK || !id) {
        drv_message_failed(first_index + index, res);
        atomic_fetch_add(&done_failed, 1);
        return;
    }
    r->ledger = pulsarc_message_id_ledger(id);
    r->entry = pulsarc_message_id_entry(id);
    r->partition = pulsarc_message_id_partition(id);
    r->batch_index = pulsarc_message_id_batch_index(id);
    uint8_t *bytes;
    size_t len;
    if (pulsarc_message_id_serialize(id, &bytes, &len) == PULSARC_OK) {
        for (size_t i = 0; i < len && i < 60; i++)
            sprintf(r->ser + 2 * i, "%02x", bytes[i]);
        pulsarc_free(bytes);
    }
    atomic_fetch_add(&done_ok, 1);
}

static void on_sent(pulsarc_producer_t *p, pulsarc_result res, const pulsarc_message_id_t *id,
                    void *ctx)
{
    record((int)(intptr_t)ctx, res, id);
}

/* Advance g past message i of the deterministic set, as build() would. */
static void skip(gen *g, size_t max_size)
{
    size_t len = max_size ? (size_t)(next_rand(g) % (max_size + 1)) : 0;
    for (size_t k = 0; k < len; k++)
        next_rand(g);
}

/* Fill msg with message number i of the deterministic set; seq >= 0: its sequence id. */
static void build(pulsarc_message_t *msg, gen *g, int i, size_t max_size, uint8_t *buf, int64_t seq)
{
    pulsarc_message_clear(msg);
    size_t len = max_size ? (size_t)(next_rand(g) % (max_size + 1)) : 0;
    for (size_t k = 0; k < len; k++)
        buf[k] = (uint8_t)(next_rand(g) & 0xff);
    pulsarc_message_set_payload(msg, buf, len);
    char s[64];
    if (i % 5 != 0) {
        snprintf(s, sizeof s, "key-%d", i % 13);
        pulsarc_message_set_key(msg, s);
    }
    if (i % 4 == 1) {
        snprintf(s, sizeof s, "ok-%d", i % 3);
        pulsarc_message_set_ordering_key(msg, s, strlen(s));
    }
    snprintf(s, sizeof s, "%d", i);
    pulsarc_message_set_property(msg, "index", s);
    snprintf(s, sizeof s, "t%d", i % 3);
    pulsarc_message_set_property(msg, "tag", s);
    pulsarc_message_set_event_time(msg, 1700000000000ULL + (uint64_t)i);
    if (seq >= 0)
        pulsarc_message_set_sequence_id(msg, seq);
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: %s URL TOPIC COUNT sync|async [options]\n", argv[0]);
        return 2;
    }
    const char *url = argv[1], *topic = argv[2], *mode = argv[4];
    int count = atoi(argv[3]);
    const char *ids_file = NULL;
    uint64_t seed = 1;
    size_t max_size = 512;
    int64_t start_seq = -1;
    double rate = 0;
    int block = 1, rejected = 0;
    pulsarc_producer_config_t *pconf = pulsarc_producer_config_new();
    pulsarc_client_config_t *cconf = pulsarc_client_config_new();
    for (int i = 5; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--name"))
            pulsarc_producer_config_set(pconf, "producerName", argv[i + 1]);
        else if (!strcmp(argv[i], "--seed"))
            seed = strtoull(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--max-size"))
            max_size = strtoull(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--ids"))
            ids_file = argv[i + 1];
        else if (!strcmp(argv[i], "--start-seq"))
            start_seq = strtoll(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--first-index"))
            first_index = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--rate"))
            rate = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--router") && !strcmp(argv[i + 1], "mod3"))
            pulsarc_producer_config_set_router(pconf, route_mod3, NULL);
        else if (!strcmp(argv[i], "--no-block")) {
            block = 0;
            i--; /* takes no value */
        } else if (!drv_setting(argv[i], argv[i + 1], cconf, pconf)) {
            fprintf(stderr, "unknown option %s\n", argv[i]);
            return 2;
        }
    }
    pulsarc_producer_config_set(pconf, "blockIfQueueFull", block ? "true" : "false");

    pulsarc_client_t *client = drv_client(url, cconf);
    pulsarc_producer_t *producer = drv_producer(client, topic, pconf);
    results = calloc((size_t)count + 1, sizeof *results);
    uint8_t *buf = malloc(max_size + 1);
    pulsarc_message_t *msg = pulsarc_message_new();
    gen g = { seed };
    for (int i = 0; i < first_index; i++)
        skip(&g, max_size);
    double t0 = drv_now_s();
    pulsarc_result res;
    for (int i = 0; i < count; i++) {
        drv_pace(t0, i, rate);
        build(msg, &g, first_index + i, max_size, buf, start_seq >= 0 ? start_seq + i : -1);
        if (!strcmp(mode, "sync")) {
            pulsarc_message_id_t *id = NULL;
            res = pulsarc_producer_send(producer, msg, &id);
            record(i, res, id);
            pulsarc_message_id_free(id);
        } else {
            res = pulsarc_producer_send_async(producer, msg, on_sent, (void *)(intptr_t)i);
            if (res == PULSARC_ERR_QUEUE_FULL && !block) {
                results[i].res = res;
                rejected++;
            } else if (res != PULSARC_OK) {
                record(i, res, NULL);
            }
        }
    }
    res = pulsarc_producer_flush(producer);
    if (res != PULSARC_OK)
        fprintf(stderr, "flush: %s\n", pulsarc_strerror(res));
    int64_t last_seq = pulsarc_producer_last_sequence_id(producer);
    uint64_t pending = pulsarc_producer_pending_count(producer);
    uint64_t memory = pulsarc_client_memory_used(client);
    char name[256];
    snprintf(name, sizeof name, "%s", pulsarc_producer_name(producer));
    res = pulsarc_producer_close(producer);
    if (res != PULSARC_OK)
        fprintf(stderr, "close: %s (%s)\n", pulsarc_strerror(res), pulsarc_last_error_detail());
    pulsarc_producer_free(producer);
    pulsarc_client_destroy(client);

    if (ids_file) {
        FILE *f = fopen(ids_file, "w");
        for (int i = 0; f && i < count; i++)
            fprintf(f, "%d %" PRId64 " %" PRId64 " %d %d %s %s\n", first_index + i,
                    results[i].res == PULSARC_ERR_QUEUE_FULL ? -2 : results[i].ledger,
                    results[i].entry, results[i].partition, results[i].batch_index,
                    results[i].ser[0] ? results[i].ser : "-",
                    pulsarc_result_name((pulsarc_result)results[i].res));
        if (f)
            fclose(f);
    }
    int ok = atomic_load(&done_ok), failed = atomic_load(&done_failed);
    printf("sent=%d failed=%d producer=%s last_sequence_id=%" PRId64 " rejected=%d pending=%" PRIu64
           " memory=%" PRIu64 "\n",
           ok, failed, name, last_seq, rejected, pending, memory);
    pulsarc_message_free(msg);
    free(buf);
    free(results);
    return ok + rejected == count && failed == 0 ? 0 : 1;
}
