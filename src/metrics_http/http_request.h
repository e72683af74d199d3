/* The request of a /metrics scrape: an HTTP/1.x request head read from a client that
 * controls every byte of it. Only consumes bytes (no I/O), so tests and the fuzzer feed
 * it bytes: whole, cut anywhere, oversized, garbage. */
#ifndef PC_METRICS_HTTP_REQUEST_H
#define PC_METRICS_HTTP_REQUEST_H

#include <stddef.h>

/* The most a request head may take (request line and headers, up to the empty line). */
#define PC_METRICS_HTTP_MAX_REQUEST 8192

typedef enum pc_http_verdict {
    PC_HTTP_INCOMPLETE = 0, /* well-formed so far: read more */
    PC_HTTP_GET_METRICS,    /* GET /metrics (a query string is allowed and ignored) */
    PC_HTTP_NOT_FOUND,      /* GET of another path: 404 */
    PC_HTTP_BAD_METHOD,     /* another method: 405 */
    PC_HTTP_BAD_REQUEST,    /* not HTTP/1.x, a control byte, a header line without a colon,
                               or more than PC_METRICS_HTTP_MAX_REQUEST bytes: 400, close */
} pc_http_verdict;

/* What the len bytes at buf (everything read so far) say. Lines end in CRLF; the head
 * ends at the first empty line, and bytes after it are ignored (the connection is closed
 * after one answer). */
pc_http_verdict pc_http_request_check(const char *buf, size_t len);

#endif
