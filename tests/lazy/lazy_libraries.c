/* A producer on pulsar:// maps neither libcurl nor the GSSAPI library (nor krb5): they
 * are loaded only when HTTP or Kerberos is first needed (net/curl_lib.h,
 * auth/gss_lib.h). A program of its own, without Criterion, whose libgit2 would map
 * GSSAPI before the test starts; ctest runs it as "lazy-libraries" and it exits 0 when
 * the check holds, 1 (saying what it found) when not.
 *
 * The client creates a producer against the mock broker and sends a message; then
 * /proc/self/maps must name none of the libraries. To show that the check can see them,
 * it then loads both as the library would, and the maps must name them. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "auth/gss_lib.h"
#include "mock_broker.h"
#include "net/curl_lib.h"
#include "pulsarc/pulsarc.h"

static const char *const watched[] = { "libcurl", "libgssapi_krb5", "libkrb5.so", NULL };

/* The first mapped file whose name holds one of watched (copied to found), or false. */
static bool mapped(char *found, size_t cap, const char *only)
{
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f) {
        perror("/proc/self/maps");
        return true; /* fails either check */
    }
    char line[4096];
    bool hit = false;
    while (!hit && fgets(line, sizeof line, f)) {
        for (int i = 0; watched[i] && !hit; i++) {
            const char *w = only ? only : watched[i];
            if (strstr(line, w)) {
                snprintf(found, cap, "%s", line);
                hit = true;
            }
        }
    }
    fclose(f);
    return hit;
}

static int fail(const char *what, pulsarc_result r)
{
    fprintf(stderr, "lazy-libraries: %s: %s: %s\n", what, pulsarc_result_name(r),
            pulsarc_last_error_detail());
    return 1;
}

int main(void)
{
    char found[4096];
    if (mapped(found, sizeof found, NULL)) {
        fprintf(stderr, "lazy-libraries: mapped before the client started: %s", found);
        return 1;
    }
    mock_broker_t *mb = mock_broker_start();
    if (!mb) {
        fprintf(stderr, "lazy-libraries: the mock broker did not start\n");
        return 1;
    }
    pulsarc_client_t *client = NULL;
    pulsarc_producer_t *producer = NULL;
    pulsarc_result r = pulsarc_client_new(mock_broker_url(mb), NULL, &client);
    if (r != PULSARC_OK)
        return fail("client", r);
    r = pulsarc_client_create_producer(client, "persistent://public/default/lazy", NULL, &producer);
    if (r != PULSARC_OK)
        return fail("producer", r);
    pulsarc_message_t *m = pulsarc_message_new();
    r = pulsarc_message_set_payload(m, "m", 1);
    if (r == PULSARC_OK)
        r = pulsarc_producer_send(producer, m, NULL);
    pulsarc_message_free(m);
    if (r != PULSARC_OK)
        return fail("send", r);
    int rc = 0;
    if (mapped(found, sizeof found, NULL)) {
        fprintf(stderr, "lazy-libraries: a pulsar:// producer mapped %s", found);
        rc = 1;
    }
    pulsarc_producer_close(producer);
    pulsarc_producer_free(producer);
    pulsarc_client_destroy(client);
    mock_broker_stop(mb);
    if (rc)
        return rc;
    /* The check sees them once they are loaded: the sonames are the ones the maps name. */
    if (!pc_curl_lib())
        return fail("loading libcurl", pc_curl_lib_result());
    if (!pc_gss_lib())
        return fail("loading GSSAPI", PULSARC_ERR_AUTH_PROVIDER);
    const char *want[] = { PC_CURL_SONAME, PC_GSS_SONAME, "libkrb5.so" };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        if (!mapped(found, sizeof found, want[i])) {
            fprintf(stderr, "lazy-libraries: %s loaded, yet not in /proc/self/maps\n", want[i]);
            return 1;
        }
    }
    printf("lazy-libraries: neither libcurl nor GSSAPI mapped by a pulsar:// producer\n");
    return 0;
}
