/* HTTP(S) requests on the client's loop: libcurl's multi interface driven by libuv
 * (uv_poll on curl's sockets, a uv_timer for its timeouts), never a blocking call. Used
 * for lookups over the admin REST API (http:// and https:// service URLs) and by the
 * OAuth2 provider to reach its issuer, each with a client of its own: the TLS settings
 * belong to the client (pc_http_new), so the issuer's verification never depends on the
 * broker's (client/config_tls.c builds both).
 *
 * A GET follows redirects itself (curl does not): the extra header (credentials) goes
 * only to the URL asked and to what the request's scope allows, a redirect from https to
 * plain http is refused, and each hop counts against the request's limit. It hands its
 * caller the answer headers the caller names (pc_http_kept_t: plain text, bounded, each
 * once), for an authentication that reads them (SASL).
 * @locality loop thread. */
#ifndef PC_HTTP_H
#define PC_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "common/log.h"
#include "pulsarc/pulsarc.h"

typedef struct pc_http pc_http_t;

/* How HTTPS peers are verified, the client certificate to present, and the protocol and
 * cipher restrictions (tlsProtocols / tlsCiphers, as net/tls.h reads them). Strings are
 * borrowed for the call to pc_http_new (copied). */
typedef struct pc_http_tls {
    const char *trust_certs_file; /* NULL: the system's store */
    const char *trust_certs_pem;  /* in memory; wins over the file */
    const char *cert_file, *key_file;
    const char *cert_pem, *key_pem;
    const char *protocols; /* NULL: TLS 1.2 and newer */
    const char *ciphers;   /* NULL: OpenSSL's defaults */
    int allow_insecure;    /* accept any certificate */
    int verify_hostname;
} pc_http_tls_t;

/* The outcome of a request: res is PULSARC_OK when an HTTP answer came (whatever its
 * status), else why not (CONNECT_FAILED, TIMEOUT, TOO_MANY_REDIRECTS, a TLS_* result)
 * with the detail set. body is valid during the call only. */
typedef void (*pc_http_done_cb)(pulsarc_result res, long status, const char *body, size_t len,
                                void *ctx);

/* NULL (detail set) when out of memory, or when libcurl cannot be loaded (the first
 * pc_http_new of the process loads it: net/curl_lib.h; pc_http_unavailable says which).
 * TLS settings are applied, and a bad protocol or cipher list reported
 * (PULSARC_ERR_TLS_CONFIG), per HTTPS request. */
pc_http_t *pc_http_new(uv_loop_t *loop, const pc_logger_t *log, const pc_http_tls_t *tls);
/* PULSARC_OK when libcurl is loaded (loading it if it was not yet), else why not:
 * PULSARC_ERR_UNSUPPORTED when the system has no usable libcurl.so.4, with the detail
 * naming the library and the dynamic loader's reason. */
pulsarc_result pc_http_unavailable(void);
/* Cancel what is in flight (their callbacks run with ALREADY_CLOSED) and free. */
void pc_http_free(pc_http_t *h);

/* ---- answer headers a caller reads ------------------------------------------------- */

/* A GET keeps the answer headers its caller names (pc_http_get_opts_t.keep): at most
 * PC_HTTP_KEEP_MAX names, each value at most PC_HTTP_KEPT_VALUE_MAX bytes. */
#define PC_HTTP_KEEP_MAX 8
#define PC_HTTP_KEPT_VALUE_MAX 8192

/* The kept headers of one answer. values[i] is the value of keep[i] (without the spaces
 * around it), NUL-terminated, or NULL when the answer has no such header or its header
 * was refused: then bit i of bad is set. A header is refused when it comes twice, when
 * it is folded over several lines, or when its value is longer than the maximum or holds
 * a byte outside printable ASCII (a NUL, a control character, anything above 0x7e): the
 * server's bytes are untrusted, and what a caller reads here is plain text. The values
 * may be credentials: they are wiped when cleared. */
typedef struct pc_http_kept {
    char *values[PC_HTTP_KEEP_MAX];
    unsigned bad;
    int last; /* 1 + the index the previous line set, for a folded line; 0: none */
} pc_http_kept_t;

/* Take one header line of an answer as the server sent it ("Name: value\r\n", the status
 * line, the empty line at the end), keep[] being the names kept (case-insensitive,
 * NULL-terminated). A status line starts a new answer (an interim 1xx, the next hop of a
 * redirect): what was kept of the one before is dropped. Pure: the fuzz target
 * fuzz_http_answers feeds it. 0, or -1 when out of memory (nothing kept for that line). */
int pc_http_keep_line(pc_http_kept_t *k, const char *const *keep, const char *line, size_t len);
/* Wipe and free the values; k is empty again (as a zeroed pc_http_kept_t is). */
void pc_http_kept_clear(pc_http_kept_t *k);

/* The answer to a pc_http_get_with: status and body as pc_http_done_cb has them, and the
 * headers the request kept (all NULL when it kept none). Valid during the callback. */
typedef struct pc_http_answer {
    long status;
    const char *body;
    size_t len;
    const pc_http_kept_t *kept;
} pc_http_answer_t;

/* a is NULL when res is not PULSARC_OK. */
typedef void (*pc_http_answer_cb)(pulsarc_result res, const pc_http_answer_t *a, void *ctx);

/* May a redirect take the request's header to this origin (host without brackets)? */
typedef bool (*pc_http_scope_fn)(void *ctx, bool https, const char *host, int port);

typedef struct pc_http_get_opts {
    /* NULL or one extra header line ("Authorization: Bearer ..."), or several with
     * "\r\n" between them when header_lines is set: a secret, never logged; sent to the
     * URL asked, and after a redirect only where it may go. */
    const char *header;
    /* The header is several lines by design (a custom authentication provider's); unset,
     * any line break in it refuses the request (a token must not forge headers). */
    bool header_lines;
    /* Where else the header may go; NULL: only the origin of the URL asked. */
    pc_http_scope_fn header_scope;
    void *scope_ctx;
    int max_redirects; /* hops followed before TOO_MANY_REDIRECTS; 0: none */
    /* NULL, or the answer headers to keep (NULL-terminated, at most PC_HTTP_KEEP_MAX):
     * the answer's (the last hop's, after redirects) reach the callback. */
    const char *const *keep;
} pc_http_get_opts_t;

/* GET url. Returns 0, or -1 when the request could not start (cb not called, detail set).
 * A header line whose value is empty ("Name:") is sent as an empty header, not dropped. */
int pc_http_get_with(pc_http_t *h, const char *url, const pc_http_get_opts_t *opts,
                     uint64_t timeout_ms, pc_http_answer_cb cb, void *ctx);
/* The same with the header for the URL's own origin only and up to 20 redirects. */
int pc_http_get(pc_http_t *h, const char *url, const char *header, uint64_t timeout_ms,
                pc_http_done_cb cb, void *ctx);
/* POST an application/x-www-form-urlencoded body (a secret: never logged). Redirects are
 * not followed: the answer is the 3xx. */
int pc_http_post_form(pc_http_t *h, const char *url, const char *form, uint64_t timeout_ms,
                      pc_http_done_cb cb, void *ctx);

#endif
