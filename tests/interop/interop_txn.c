/* Sends messages to several topics in transactions, for tests/interop/test_transactions.py.
 *
 *   interop_txn URL MODE N TOPIC...
 *     One producer per topic (batching on). Begins a transaction with a 60 s timeout,
 *     sends N messages ("<topic index>-<i>") to each topic in it, then by MODE:
 *       commit   commits
 *       abort    aborts
 *       hold     prints "sent" once every send has its receipt, waits for a line on
 *                stdin, then commits
 *       expire   begins with a 1 s timeout instead, prints "sent" once every send has its
 *                receipt, waits for a line on stdin (the test waits past the timeout),
 *                sends one more message to the first topic and one to the last, which
 *                got none before (expire takes two or more topics), prints
 *                "late=RESULT" and "late_new=RESULT" (their sends'), then commits
 *     and prints "end=RESULT state=S sends_failed=F" (RESULT a pulsarc_result_name).
 *   interop_txn URL interleave N TOPIC
 *     One producer, batching on: N transactions open at once, message i of round r goes
 *     to transaction i, 5 rounds; then the even ones commit and the odd ones abort.
 *     Prints "txn=I end=RESULT" for each.
 *
 * Exits 0 when the program ran; the test judges the printed results. */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver.h"
#include "pulsarc/pulsarc.h"

enum { MAX_TOPICS = 8, MAX_TXNS = 64, ROUNDS = 5 };

static atomic_int failed_sends, done_sends;

static void on_sent(pulsarc_producer_t *p, pulsarc_result res, const pulsarc_message_id_t *id,
                    void *ctx)
{
    (void)p;
    (void)id;
    (void)ctx;
    if (res != PULSARC_OK) {
        drv_fail("send failed", res);
        atomic_fetch_add(&failed_sends, 1);
    }
    atomic_fetch_add(&done_sends, 1);
}

static pulsarc_producer_t *producer(pulsarc_client_t *c, const char *topic)
{
    pulsarc_producer_config_t *pc = pulsarc_producer_config_new();
    pulsarc_producer_config_set(pc, "batchingEnabled", "true");
    pulsarc_producer_config_set(pc, "batchingMaxPublishDelayMs", "50");
    pulsarc_producer_t *p = NULL;
    pulsarc_result res = drv_create_producer(c, topic, pc, false, &p);
    if (res != PULSARC_OK) {
        char what[512];
        snprintf(what, sizeof what, "create producer for %s", topic);
        drv_fail(what, res);
        exit(2);
    }
    return p;
}

static void send_one(pulsarc_producer_t *p, pulsarc_txn_t *txn, const char *text)
{
    pulsarc_message_t *m = pulsarc_message_new();
    pulsarc_message_set_payload(m, text, strlen(text));
    pulsarc_result res = pulsarc_producer_send_txn_async(p, txn, m, on_sent, NULL);
    pulsarc_message_free(m);
    if (res != PULSARC_OK) {
        drv_fail("send refused", res);
        exit(2);
    }
}

static pulsarc_txn_t *begin(pulsarc_client_t *c, uint64_t timeout_ms)
{
    pulsarc_txn_t *txn = NULL;
    pulsarc_result res = pulsarc_txn_begin(c, timeout_ms, &txn);
    if (res != PULSARC_OK) {
        drv_fail("begin", res);
        exit(2);
    }
    return txn;
}

static void wait_line(void)
{
    char line[64];
    printf("sent\n");
    fflush(stdout);
    if (!fgets(line, sizeof line, stdin))
        exit(2);
}

static int interleave(pulsarc_client_t *c, int n, const char *topic)
{
    pulsarc_producer_t *p = producer(c, topic);
    pulsarc_txn_t *txns[MAX_TXNS];
    for (int i = 0; i < n; i++)
        txns[i] = begin(c, 60000);
    char text[64];
    for (int r = 0; r < ROUNDS; r++) {
        for (int i = 0; i < n; i++) {
            snprintf(text, sizeof text, "%d-%d", i, r);
            send_one(p, txns[i], text);
        }
    }
    for (int i = 0; i < n; i++) {
        pulsarc_result res = i % 2 == 0 ? pulsarc_txn_commit(txns[i]) : pulsarc_txn_abort(txns[i]);
        printf("txn=%d end=%s\n", i, pulsarc_result_name(res));
        pulsarc_txn_free(txns[i]);
    }
    pulsarc_producer_close(p);
    pulsarc_producer_free(p);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: interop_txn URL MODE N TOPIC...\n");
        return 2;
    }
    const char *mode = argv[2];
    int n = atoi(argv[3]);
    int n_topics = argc - 4;
    if (n < 1 || n > MAX_TXNS || n_topics > MAX_TOPICS)
        return 2;
    pulsarc_client_config_t *cc = pulsarc_client_config_new();
    pulsarc_client_config_set(cc, "enableTransaction", "true");
    pulsarc_client_t *c = NULL;
    pulsarc_result res = pulsarc_client_new(argv[1], cc, &c);
    pulsarc_client_config_free(cc);
    if (res != PULSARC_OK) {
        drv_fail("client", res);
        return 2;
    }
    if (strcmp(mode, "interleave") == 0) {
        interleave(c, n, argv[4]);
        pulsarc_client_destroy(c);
        return 0;
    }
    bool expire = strcmp(mode, "expire") == 0;
    if (expire && n_topics < 2)
        return 2;
    pulsarc_producer_t *ps[MAX_TOPICS];
    for (int t = 0; t < n_topics; t++)
        ps[t] = producer(c, argv[4 + t]);
    pulsarc_txn_t *txn = begin(c, expire ? 1000 : 60000);
    char text[64];
    for (int t = 0; t < n_topics - expire; t++) {
        for (int i = 0; i < n; i++) {
            snprintf(text, sizeof text, "%d-%d", t, i);
            send_one(ps[t], txn, text);
        }
    }
    if (strcmp(mode, "hold") == 0 || expire) {
        for (int t = 0; t < n_topics - expire; t++)
            pulsarc_producer_flush(ps[t]);
        wait_line();
    }
    if (expire) {
        /* A flush reports the failure of the message it covers. */
        send_one(ps[0], txn, "late");
        printf("late=%s\n", pulsarc_result_name(pulsarc_producer_flush(ps[0])));
        send_one(ps[n_topics - 1], txn, "late");
        printf("late_new=%s\n", pulsarc_result_name(pulsarc_producer_flush(ps[n_topics - 1])));
        fflush(stdout);
    }
    res = strcmp(mode, "abort") == 0 ? pulsarc_txn_abort(txn) : pulsarc_txn_commit(txn);
    if (res != PULSARC_OK)
        fprintf(stderr, "end: %s\n", pulsarc_last_error_detail());
    printf("end=%s state=%d sends_failed=%d\n", pulsarc_result_name(res),
           (int)pulsarc_txn_get_state(txn), atomic_load(&failed_sends));
    pulsarc_txn_free(txn);
    for (int t = 0; t < n_topics; t++) {
        pulsarc_producer_close(ps[t]);
        pulsarc_producer_free(ps[t]);
    }
    pulsarc_client_destroy(c);
    return 0;
}
