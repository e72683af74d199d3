/* Sends small messages around one large payload, for the chunking interop tests:
 *
 *   interop_chunks URL TOPIC FILE [--conf key=value]... [--around N] [--payload copied]
 *
 * Order: "before-0".."before-N-1", the FILE's bytes as one message (borrowed, zero copy;
 * with --payload copied, copied by send_async and unmapped as soon as it returns),
 * "after-0".."after-N-1" — all with send_async, then flush. Prints one line per message,
 * "index ledger entry first_ledger first_entry", and a summary "sent=N failed=M"; exits 0
 * only if every message succeeded. */
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "driver.h"
#include "pulsarc/pulsarc.h"

#define MAX_AROUND 1000

static atomic_int ok_count, failed_count;
static char lines[2 * MAX_AROUND + 1][128];

static void on_sent(pulsarc_producer_t *p, pulsarc_result res, const pulsarc_message_id_t *id,
                    void *ctx)
{
    int i = (int)(intptr_t)ctx;
    if (res != PULSARC_OK) {
        drv_message_failed(i, res);
        atomic_fetch_add(&failed_count, 1);
        return;
    }
    /* A chunked message's id also names its first chunk; a serialised copy must too. */
    int64_t first_ledger = pulsarc_message_id_ledger(id),
            first_entry = pulsarc_message_id_entry(id);
    uint8_t *bytes;
    size_t len;
    pulsarc_message_id_t *back = NULL;
    if (pulsarc_message_id_serialize(id, &bytes, &len) == PULSARC_OK) {
        pulsarc_message_id_deserialize(bytes, len, &back);
        pulsarc_free(bytes);
    }
    if (back)
        pulsarc_message_id_first_chunk(back, &first_ledger, &first_entry);
    pulsarc_message_id_free(back);
    snprintf(lines[i], sizeof lines[i], "%d %" PRId64 " %" PRId64 " %" PRId64 " %" PRId64, i,
             pulsarc_message_id_ledger(id), pulsarc_message_id_entry(id), first_ledger,
             first_entry);
    atomic_fetch_add(&ok_count, 1);
}

static void unmap(void *payload, size_t len, void *ctx)
{
    munmap(payload, len);
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr,
                "usage: %s URL TOPIC FILE [--conf k=v]... [--around N] [--payload copied]\n",
                argv[0]);
        return 2;
    }
    int around = 5;
    bool copied = false;
    pulsarc_producer_config_t *conf = pulsarc_producer_config_new();
    pulsarc_producer_config_set(conf, "blockIfQueueFull", "true");
    for (int i = 4; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--around")) {
            around = atoi(argv[i + 1]);
            if (around < 0 || around > MAX_AROUND)
                return 2;
            continue;
        }
        if (!strcmp(argv[i], "--payload") && !strcmp(argv[i + 1], "copied")) {
            copied = true;
            continue;
        }
        if (strcmp(argv[i], "--conf") || !drv_setting(argv[i], argv[i + 1], NULL, conf)) {
            fprintf(stderr, "bad option %s %s\n", argv[i], argv[i + 1]);
            return 2;
        }
    }
    int fd = open(argv[3], O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        perror(argv[3]);
        return 2;
    }
    void *big = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (big == MAP_FAILED) {
        perror("mmap");
        return 2;
    }
    pulsarc_client_t *client = drv_client(argv[1], NULL);
    pulsarc_producer_t *producer = drv_producer(client, argv[2], conf);
    pulsarc_message_t *msg = pulsarc_message_new();
    int index = 0;
    for (int k = 0; k < 2 * around + 1; k++, index++) {
        char small[32];
        pulsarc_message_clear(msg);
        if (k == around && copied) {
            pulsarc_message_set_payload(msg, big, (size_t)st.st_size);
        } else if (k == around) {
            pulsarc_message_set_payload_borrowed(msg, big, (size_t)st.st_size, unmap, NULL);
        } else {
            snprintf(small, sizeof small, "%s-%d", k < around ? "before" : "after",
                     k < around ? k : k - around - 1);
            pulsarc_message_set_payload(msg, small, strlen(small));
        }
        pulsarc_result res = pulsarc_producer_send_async(producer, msg, on_sent,
                                                         (void *)(intptr_t)index);
        if (k == around && copied) {
            /* The library has its copy: reading the mapping again would crash. */
            pulsarc_message_clear(msg);
            munmap(big, (size_t)st.st_size);
        }
        if (res != PULSARC_OK) {
            drv_message_failed(index, res);
            atomic_fetch_add(&failed_count, 1);
        }
    }
    pulsarc_producer_flush(producer);
    pulsarc_producer_close(producer);
    pulsarc_producer_free(producer);
    pulsarc_client_destroy(client);
    pulsarc_message_free(msg);
    for (int i = 0; i < index; i++)
        if (lines[i][0])
            printf("%s\n", lines[i]);
    printf("sent=%d failed=%d\n", atomic_load(&ok_count), atomic_load(&failed_count));
    return atomic_load(&failed_count) == 0 && atomic_load(&ok_count) == index ? 0 : 1;
}
