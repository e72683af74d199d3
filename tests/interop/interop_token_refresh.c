/* Publishes steadily for a while with a token that comes from a callback
 * (pulsarc_client_config_set_auth_token_supplier), for the token refresh test: the
 * callback reads TOKEN_FILE each time it is asked, and the test rewrites that file with
 * fresh short-lived tokens while the producer runs, across the broker's expiry checks.
 *
 *   interop_token_refresh URL TOPIC TOKEN_FILE SECONDS [options]
 *     --interval-ms N   pause between messages (default 200)
 *     --client-conf k=v client configuration (repeatable), e.g. tlsTrustCertsFilePath=...
 *
 * Message i has the payload "refresh-<i>". Prints
 * "sent=N failed=M supplier_calls=K first_error=NAME" and exits 0 only if every send
 * succeeded. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver.h"
#include "pulsarc/pulsarc.h"

static atomic_int supplier_calls;

/* The library frees (and wipes) what this returns. */
static char *read_token(void *ctx)
{
    const char *path = ctx;
    atomic_fetch_add(&supplier_calls, 1);
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    char buf[4096];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' '))
        n--;
    if (n == 0)
        return NULL;
    char *tok = malloc(n + 1);
    if (!tok)
        return NULL;
    memcpy(tok, buf, n);
    tok[n] = 0;
    return tok;
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: %s URL TOPIC TOKEN_FILE SECONDS [options]\n", argv[0]);
        return 2;
    }
    const char *url = argv[1], *topic = argv[2];
    char *token_file = argv[3];
    double seconds = atof(argv[4]);
    long interval_ms = 200;
    pulsarc_client_config_t *cconf = pulsarc_client_config_new();
    for (int i = 5; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--interval-ms")) {
            interval_ms = atol(argv[i + 1]);
        } else if (!drv_setting(argv[i], argv[i + 1], cconf, NULL)) {
            fprintf(stderr, "unknown option %s\n", argv[i]);
            return 2;
        }
    }
    pulsarc_result res = pulsarc_client_config_set_auth_token_supplier(cconf, read_token,
                                                                       token_file);
    if (res != PULSARC_OK) {
        drv_fail("token supplier", res);
        return 2;
    }
    pulsarc_client_t *client;
    res = pulsarc_client_new(url, cconf, &client);
    pulsarc_client_config_free(cconf);
    if (res != PULSARC_OK) {
        drv_fail("client", res);
        printf("sent=0 failed=0 supplier_calls=%d first_error=%s\n", atomic_load(&supplier_calls),
               pulsarc_result_name(res));
        return 1;
    }
    pulsarc_producer_config_t *pconf = pulsarc_producer_config_new();
    pulsarc_producer_config_set(pconf, "batchingEnabled", "false");
    pulsarc_producer_t *producer;
    res = drv_create_producer(client, topic, pconf, false, &producer);
    if (res != PULSARC_OK) {
        drv_fail("create producer", res);
        printf("sent=0 failed=0 supplier_calls=%d first_error=%s\n", atomic_load(&supplier_calls),
               pulsarc_result_name(res));
        pulsarc_client_destroy(client);
        return 1;
    }
    drv_tally_t t = { 0 };
    pulsarc_message_t *msg = pulsarc_message_new();
    double end = drv_now_s() + seconds;
    for (long i = 0; drv_now_s() < end; i++) {
        drv_send_numbered(producer, msg, "refresh-", i, &t);
        drv_pause_ms(interval_ms);
    }
    pulsarc_message_free(msg);
    pulsarc_producer_close(producer);
    pulsarc_producer_free(producer);
    pulsarc_client_destroy(client);
    printf("sent=%d failed=%d supplier_calls=%d first_error=%s\n", t.sent, t.failed,
           atomic_load(&supplier_calls), pulsarc_result_name(t.first_error));
    return t.failed == 0 && t.sent > 0 ? 0 : 1;
}
