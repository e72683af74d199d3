/* Publishes COUNT messages with the application's own authentication provider
 * (pulsarc_client_config_set_auth_provider) doing token authentication: method "token",
 * data the JWT read from TOKEN_FILE each time the library asks (connect, challenge,
 * HTTP lookup through the default Bearer header).
 *
 *   interop_custom_auth URL TOPIC TOKEN_FILE COUNT [--client-conf k=v ...]
 *                       [--failover-from PRIMARY_URL]
 *
 * With --failover-from the client is made for PRIMARY_URL, with the client's own
 * authentication of the --client-conf settings, and URL is a failover cluster whose
 * credentials are the provider alone (pulsarc_client_config_add_failover_cluster without
 * a plugin, then pulsarc_client_config_set_failover_cluster_auth_provider); the failover*
 * settings say when the client moves there; the producer's creation waits for that.
 *
 * Message i has the payload "custom-auth-<i>". Prints
 * "sent=N failed=M initial_calls=K refreshes=R frees=F first_error=NAME" once the client
 * is gone (frees must then be 1) and exits 0 only if every send succeeded. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver.h"
#include "pulsarc/pulsarc.h"

typedef struct token_source {
    const char *path;
    atomic_int initial_calls, refreshes, frees;
} token_source_t;

/* Read the token into a stack buffer, hand it to the library's buffer, wipe ours. */
static pulsarc_result token_data(void *ctx, pulsarc_auth_data_t *out)
{
    token_source_t *src = ctx;
    atomic_fetch_add(&src->initial_calls, 1);
    FILE *f = fopen(src->path, "r");
    if (!f)
        return PULSARC_ERR_AUTH_PROVIDER;
    char buf[4096];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' '))
        n--;
    pulsarc_result r = n ? pulsarc_auth_data_set(out, buf, n) : PULSARC_ERR_AUTH_PROVIDER;
    volatile char *p = buf; /* not optimised away, unlike a plain memset before return */
    for (size_t i = 0; i < sizeof buf; i++)
        p[i] = 0;
    return r;
}

static void token_refresh(void *ctx)
{
    atomic_fetch_add(&((token_source_t *)ctx)->refreshes, 1);
}

static void token_free(void *ctx)
{
    atomic_fetch_add(&((token_source_t *)ctx)->frees, 1);
}

static const pulsarc_auth_provider_t token_provider = {
    .method_name = "token",
    .initial_data = token_data,
    .refresh = token_refresh,
    .free = token_free,
};

static token_source_t src;

static void report(int sent, int failed, pulsarc_result first_error)
{
    printf("sent=%d failed=%d initial_calls=%d refreshes=%d frees=%d first_error=%s\n", sent,
           failed, atomic_load(&src.initial_calls), atomic_load(&src.refreshes),
           atomic_load(&src.frees), pulsarc_result_name(first_error));
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: %s URL TOPIC TOKEN_FILE COUNT [--client-conf k=v ...]\n", argv[0]);
        return 2;
    }
    const char *url = argv[1], *topic = argv[2];
    src.path = argv[3];
    int count = atoi(argv[4]);
    const char *primary = NULL;
    pulsarc_client_config_t *cconf = pulsarc_client_config_new();
    for (int i = 5; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--failover-from")) {
            primary = argv[i + 1];
        } else if (!drv_setting(argv[i], argv[i + 1], cconf, NULL)) {
            fprintf(stderr, "unknown option %s\n", argv[i]);
            return 2;
        }
    }
    pulsarc_result res;
    if (primary) {
        res = pulsarc_client_config_add_failover_cluster(cconf, url, NULL, NULL, NULL);
        if (res != PULSARC_OK)
            return drv_fail("failover cluster", res), 2;
        res = pulsarc_client_config_set_failover_cluster_auth_provider(cconf, url, &token_provider,
                                                                       sizeof token_provider, &src);
    } else {
        res = pulsarc_client_config_set_auth_provider(cconf, &token_provider, sizeof token_provider,
                                                      &src);
    }
    if (res != PULSARC_OK)
        return drv_fail("auth provider", res), 2;
    pulsarc_client_t *client;
    res = pulsarc_client_new(primary ? primary : url, cconf, &client);
    pulsarc_client_config_free(cconf);
    if (res != PULSARC_OK) {
        drv_fail("client", res);
        report(0, 0, res);
        return 1;
    }
    /* While the primary is down the creation waits for the client to move (its lookup is
     * tried again until operationTimeoutMs): one call. */
    pulsarc_producer_t *producer;
    res = drv_create_producer(client, topic, pulsarc_producer_config_new(), false, &producer);
    if (res != PULSARC_OK) {
        drv_fail("create producer", res);
        pulsarc_client_destroy(client);
        report(0, 0, res);
        return 1;
    }
    drv_tally_t t = { 0 };
    pulsarc_message_t *msg = pulsarc_message_new();
    for (long i = 0; i < count; i++)
        drv_send_numbered(producer, msg, "custom-auth-", i, &t);
    pulsarc_message_free(msg);
    pulsarc_producer_close(producer);
    pulsarc_producer_free(producer);
    pulsarc_client_destroy(client);
    report(t.sent, t.failed, t.first_error);
    return t.failed == 0 && t.sent == count ? 0 : 1;
}
