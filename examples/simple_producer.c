/*
 * simple_producer — the smallest complete pulsarc program.
 *
 *   simple_producer [SERVICE_URL [TOPIC]]
 *   (defaults: pulsar://localhost:6650 and persistent://public/default/pulsarc-example)
 *
 * It shows, in order:
 *   1. creating a client and a producer, and reporting errors properly;
 *   2. sending 10 messages synchronously and printing their message ids;
 *   3. sending asynchronously when the producer's queue may be full: wait, then retry;
 *   4. flushing, closing and freeing everything.
 *
 * Build: cc simple_producer.c $(pkg-config --cflags --libs pulsarc)
 */
#define _POSIX_C_SOURCE 200809L /* nanosleep */

#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <pulsarc/pulsarc.h>

/* Print a failed call with both the code's description and the detail of this failure
 * (for a broker error, the broker's own message). The detail is only valid until the
 * next pulsarc call on this thread, so it is read first. */
static void print_error(const char *what, pulsarc_result res)
{
    const char *detail = pulsarc_last_error_detail();
    char saved[512];
    snprintf(saved, sizeof saved, "%s", detail);
    fprintf(stderr, "%s: %s%s%s\n", what, pulsarc_strerror(res), saved[0] ? ": " : "", saved);
}

/* Counts the results of the asynchronous sends in step 3. Callbacks run on the client's
 * own thread, so the counters are atomic. */
static atomic_int async_ok;
static atomic_int async_failed;

static void on_sent(pulsarc_producer_t *producer, pulsarc_result res,
                    const pulsarc_message_id_t *id, void *ctx)
{
    (void)producer;
    (void)id;
    (void)ctx;
    if (res == PULSARC_OK) {
        atomic_fetch_add(&async_ok, 1);
    } else {
        atomic_fetch_add(&async_failed, 1);
        print_error("async send failed", res);
    }
}

static void sleep_ms(long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
    const char *service_url = argc > 1 ? argv[1] : "pulsar://localhost:6650";
    const char *topic = argc > 2 ? argv[2] : "persistent://public/default/pulsarc-example";
    int status = 1;

    /* 1. Client and producer. ------------------------------------------------------ */

    /* The client owns one background thread and the connections to the brokers. A NULL
     * config means all defaults; no connection is made until a producer is created. */
    pulsarc_client_t *client = NULL;
    pulsarc_result res = pulsarc_client_new(service_url, NULL, &client);
    if (res != PULSARC_OK) {
        print_error("pulsarc_client_new", res);
        return 1;
    }

    /* Producer settings are key/value strings named like the Java client's. */
    pulsarc_producer_config_t *conf = pulsarc_producer_config_new();
    if (!conf) {
        pulsarc_client_destroy(client);
        return 1;
    }
    /* At most 100 messages waiting for the broker's receipt. With blockIfQueueFull=false
     * (the default, spelled out here) send_async fails at once with PULSARC_ERR_QUEUE_FULL
     * when they are all taken; step 3 shows how to handle that. With "true" send_async
     * would simply wait for room instead. */
    if ((res = pulsarc_producer_config_set(conf, "maxPendingMessages", "100")) != PULSARC_OK ||
        (res = pulsarc_producer_config_set(conf, "blockIfQueueFull", "false")) != PULSARC_OK) {
        print_error("pulsarc_producer_config_set", res);
        pulsarc_producer_config_free(conf);
        pulsarc_client_destroy(client);
        return 1;
    }

    /* Blocks until the broker has registered the producer (or operationTimeoutMs). The
     * config is copied, so it can be freed right away. */
    pulsarc_producer_t *producer = NULL;
    res = pulsarc_client_create_producer(client, topic, conf, &producer);
    pulsarc_producer_config_free(conf);
    if (res != PULSARC_OK) {
        print_error("pulsarc_client_create_producer", res);
        pulsarc_client_destroy(client);
        return 1;
    }
    printf("producer %s on %s\n", pulsarc_producer_name(producer),
           pulsarc_producer_topic(producer));

    /* One message builder, reused: a send copies what it needs, so the builder can take a
     * new payload as soon as the call returns. */
    pulsarc_message_t *msg = pulsarc_message_new();
    if (!msg) {
        pulsarc_producer_free(producer);
        pulsarc_client_destroy(client);
        return 1;
    }

    /* 2. Synchronous sends. -------------------------------------------------------- */

    /* pulsarc_producer_send waits for the broker's receipt: simple, but one round trip
     * per message. Use it when each message must be confirmed before the next. */
    bool ok = true;
    for (int i = 0; ok && i < 10; i++) {
        char text[64];
        int len = snprintf(text, sizeof text, "hello from pulsarc, sync message %d", i);
        pulsarc_message_set_payload(msg, text, (size_t)len);

        pulsarc_message_id_t *id = NULL;
        res = pulsarc_producer_send(producer, msg, &id);
        if (res != PULSARC_OK) {
            print_error("pulsarc_producer_send", res);
            ok = false;
            break;
        }
        /* 96 bytes always hold "ledger:entry:partition:batch_index". */
        char id_str[96];
        pulsarc_message_id_str(id, id_str, sizeof id_str);
        printf("sent message %d: id %s\n", i, id_str);
        pulsarc_message_id_free(id); /* ids returned through id_out belong to us */
    }

    /* 3. Asynchronous sends with queue-full handling. ------------------------------ */

    /* send_async returns as soon as the message is queued; on_sent runs later, exactly
     * once per accepted message. A QUEUE_FULL (or MEMORY_LIMIT) result means "not
     * accepted, try again later": no callback will come for that attempt. Wait briefly
     * for receipts to free room, then retry the same message. */
    const int async_count = ok ? 1000 : 0;
    int accepted = 0, waits = 0;
    for (int i = 0; i < async_count; i++) {
        char text[64];
        int len = snprintf(text, sizeof text, "hello from pulsarc, async message %d", i);
        pulsarc_message_set_payload(msg, text, (size_t)len);

        for (;;) {
            res = pulsarc_producer_send_async(producer, msg, on_sent, NULL);
            if (res != PULSARC_ERR_QUEUE_FULL && res != PULSARC_ERR_MEMORY_LIMIT)
                break;
            sleep_ms(1); /* room appears as the broker's receipts arrive */
            waits++;
        }
        if (res != PULSARC_OK) {
            /* Any other error is not going to fix itself by retrying. */
            print_error("pulsarc_producer_send_async", res);
            break;
        }
        accepted++;
    }

    /* 4. Flush, close, free. ------------------------------------------------------- */

    /* flush waits until every message accepted so far has had its callback. */
    res = pulsarc_producer_flush(producer);
    if (res != PULSARC_OK)
        print_error("pulsarc_producer_flush", res);
    printf("async: %d accepted, %d persisted, %d failed, waited for room %d times\n", accepted,
           atomic_load(&async_ok), atomic_load(&async_failed), waits);
    if (ok && res == PULSARC_OK && accepted == async_count && atomic_load(&async_failed) == 0)
        status = 0;

    /* close flushes too, then tells the broker; free releases the handle. */
    res = pulsarc_producer_close(producer);
    if (res != PULSARC_OK) {
        print_error("pulsarc_producer_close", res);
        status = 1;
    }
    pulsarc_producer_free(producer);
    pulsarc_message_free(msg);
    /* Stops the client's thread. Never call it from inside a callback. */
    pulsarc_client_destroy(client);
    return status;
}
