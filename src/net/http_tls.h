/* Private to net/http*.c: one HTTP client's TLS settings as curl options, and curl's
 * failures as named results.
 * @locality loop thread. */
#ifndef PC_HTTP_TLS_H
#define PC_HTTP_TLS_H

#include <curl/curl.h>
#include <stdbool.h>

#include "pulsarc/pulsarc.h"

/* One client's settings (its own copies: http.c copies and frees them, the key wiped).
 * The PEM blobs point into the strings and go to curl without a copy (CURL_BLOB_NOCOPY):
 * curl would otherwise keep a copy of the key per transfer and free it unwiped. They live
 * as long as the client, which outlives every transfer. */
typedef struct pc_http_tls_conf {
    char *trust_file, *trust_pem, *cert_file, *key_file, *cert_pem, *key_pem;
    char *protocols, *ciphers;
    bool allow_insecure, verify_hostname;
    struct curl_blob trust_blob, cert_blob, key_blob; /* filled by pc_http_tls_setopt */
} pc_http_tls_conf_t;

/* What a transfer's TLS set-up reads while curl connects, and what went wrong there. */
typedef struct pc_http_tls_use {
    pc_http_tls_conf_t *conf;
    bool restrict_failed; /* tlsProtocols / tlsCiphers could not be applied */
    char detail[200];     /* why, when restrict_failed */
} pc_http_tls_use_t;

/* Set e's TLS options from use->conf (use must live as long as the transfer). */
CURLcode pc_http_tls_setopt(CURL *e, pc_http_tls_use_t *use);

/* The named result of a transfer that failed with rc (errbuf: curl's error buffer). */
pulsarc_result pc_http_curl_result(CURL *e, CURLcode rc, const char *errbuf);

#endif
