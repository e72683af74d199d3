/* What http.c (the transfers on the loop) and http_redirect.c (where a redirect may go,
 * and with which headers) share: a request, a watched socket, the client. Nothing outside
 * src/net/http*.c includes this. @locality loop thread. */
#ifndef PC_HTTP_INTERNAL_H
#define PC_HTTP_INTERNAL_H

#include <curl/curl.h>
#include <openssl/crypto.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "net/http.h"
#include "net/curl_lib.h"
#include "net/http_tls.h"

#define SETOPT(rc, e, opt, val)                            \
    do {                                                   \
        if ((rc) == CURLE_OK)                              \
            (rc) = pc_curl.easy_setopt((e), (opt), (val)); \
    } while (0)

/* Scheme, host and port of a URL: whom a request goes to. */
typedef struct origin {
    bool https;
    char host[256]; /* without the brackets of an IPv6 literal */
    int port;
} origin_t;

typedef struct request {
    struct request *prev, *next;
    pc_http_t *h;
    CURL *easy;
    struct curl_slist *headers; /* may hold credentials: wiped */
    char *header;               /* the caller's extra header, a secret: wiped */
    char *form;                 /* POST body, a secret: wiped */
    const char *verb;           /* "GET" or "POST", for log lines and details */
    char *body;                 /* the answer, NUL-terminated; may hold a token: wiped */
    size_t len, cap;
    bool too_big;
    /* Redirects (GET only): where the header may go, and how many hops are left. */
    origin_t first; /* the URL asked: it always gets the header */
    pc_http_scope_fn scope;
    void *scope_ctx;
    int redirects_left;
    uint64_t deadline; /* uv_now() when the whole request times out */
    pc_http_tls_use_t tls;
    pc_http_done_cb cb;       /* pc_http_get, pc_http_post_form */
    pc_http_answer_cb answer; /* pc_http_get_with (then cb is NULL) */
    const char *const *keep;  /* answer headers to keep (the caller's, borrowed); NULL */
    pc_http_kept_t kept;      /* ... as the current hop's answer has them */
    bool keep_failed;         /* out of memory while keeping one */
    void *ctx;
    char errbuf[CURL_ERROR_SIZE];
} request_t;

/* One socket curl asked us to watch. */
typedef struct sock {
    struct sock *prev, *next;
    pc_http_t *h;
    curl_socket_t fd;
    uv_poll_t poll;
} sock_t;

struct pc_http {
    uv_loop_t *loop;
    const pc_logger_t *log;
    CURLM *multi;
    uv_timer_t timer;
    request_t *requests;
    sock_t *socks;
    bool closing;
    int open_handles; /* uv handles whose close callback has not run yet */
    pc_http_tls_conf_t tls;
};

/* Wipe and free a header list (headers may hold credentials). */
static inline void pc_http_free_headers(struct curl_slist *l)
{
    for (struct curl_slist *i = l; i; i = i->next)
        OPENSSL_cleanse(i->data, strlen(i->data));
    pc_curl.slist_free_all(l);
}

static inline void pc_http_wipe_body(request_t *r)
{
    if (r->body) {
        OPENSSL_cleanse(r->body, r->cap);
        free(r->body);
    }
    r->body = NULL;
    r->len = r->cap = 0;
    r->too_big = false;
}

/* http_redirect.c */
bool pc_http_is_redirect(long status);
/* url's origin; 0, or -1 when it is not an absolute http(s) URL. */
int pc_http_parse_origin(const char *url, origin_t *o);
/* The extra header: one line, or several with "\r\n" between them (a custom
 * authentication provider's), none empty, no other line break. */
bool pc_http_header_lines_ok(const char *header);
/* The headers for a hop to `to`: the extra header (each of its lines) only where it may
 * go. A line with an empty value goes as an empty header (curl's "Name;" form: curl would
 * drop "Name:"). */
struct curl_slist *pc_http_headers_for(const request_t *r, const origin_t *to);
/* Send r on to where its 3xx answer points, on the same easy handle. 1: on its way; 0:
 * the answer has no Location and goes to the caller as it is; -1: refused (*res and the
 * detail set). from: the URL that answered. */
int pc_http_follow(request_t *r, const char *from, pulsarc_result *res);

#endif
