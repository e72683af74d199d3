/* HTTP(S) requests on the client's loop: libcurl's multi interface driven by libuv
 * (uv_poll on curl's sockets, a uv_timer for its timeouts), never a blocking call. Used
 * for lookups over the admin REST API (http:// and https:// service URLs) and by the
 * OAuth2 provider to reach its issuer. TLS is verified like the binary protocol's:
 * certificates and host names, unless the user turned that off.
 * @locality loop thread. */
#ifndef PC_HTTP_H
#define PC_HTTP_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "common/log.h"
#include "pulsarc/pulsarc.h"

typedef struct pc_http pc_http_t;

/* How HTTPS peers are verified, and the client certificate to present. Strings are
 * borrowed for the call to pc_http_new (copied). */
typedef struct pc_http_tls {
    const char *trust_certs_file; /* NULL: the system's store */
    const char *trust_certs_pem;  /* in memory; wins over the file */
    const char *cert_file, *key_file;
    const char *cert_pem, *key_pem;
    int allow_insecure;           /* accept any certificate */
    int verify_hostname;
} pc_http_tls_t;

/* The outcome of a request: res is PULSARC_OK when an HTTP answer came (whatever its
 * status), else why not (CONNECT_FAILED, TIMEOUT, a TLS_* result) with the detail set.
 * body is valid during the call only. */
typedef void (*pc_http_done_cb)(pulsarc_result res, long status, const char *body, size_t len,
                                void *ctx);

pc_http_t *pc_http_new(uv_loop_t *loop, const pc_logger_t *log, const pc_http_tls_t *tls);
/* Cancel what is in flight (their callbacks run with ALREADY_CLOSED) and free. */
void pc_http_free(pc_http_t *h);

/* GET url. header may be NULL or one extra header line ("Authorization: Bearer ...": a
 * secret, never logged). Returns 0, or -1 when the request could not start (cb not
 * called, detail set). */
int pc_http_get(pc_http_t *h, const char *url, const char *header, uint64_t timeout_ms,
                pc_http_done_cb cb, void *ctx);
/* POST an application/x-www-form-urlencoded body (a secret: never logged). */
int pc_http_post_form(pc_http_t *h, const char *url, const char *form, uint64_t timeout_ms,
                      pc_http_done_cb cb, void *ctx);

#endif
