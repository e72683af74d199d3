/* HTTP(S) on the loop: libcurl's multi interface in its "socket action" form. curl says
 * which sockets to watch (the socket callback: one uv_poll_t each) and when to wake it
 * (the timer callback: one uv_timer_t); libuv reports readiness and we hand it back with
 * curl_multi_socket_action. Nothing here waits: names are resolved in curl's resolver
 * thread, connects and TLS handshakes are non-blocking. TLS settings: http_tls.c.
 *
 * Redirects of a GET are followed here rather than by curl, so that the extra header
 * (credentials) goes only where the request's scope says (curl either drops a custom
 * Authorization header on any other host, port or scheme, or, with its unrestricted-auth
 * option, sends it everywhere).
 *
 * Headers, form bodies and answers (the answer headers kept for the caller too,
 * http_kept.c) may carry credentials: they are never logged nor put into a detail
 * message, and they are wiped before they are freed. curl's verbose output
 * stays off for the same reason.
 *
 * libcurl is loaded by the first pc_http_new (curl_lib.h) and called through its table,
 * pc_curl: every other function here runs for a pc_http_t, so after it was loaded. */
#include "net/http_internal.h"

#include <limits.h>
#include <openssl/crypto.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/error.h"
#include "net/curl_lib.h"
#include "net/http_tls.h"

/* No lookup or token answer is this big: refuse it rather than buffer whatever a broken
 * or hostile server streams at us. */
#define MAX_BODY (4u * 1024u * 1024u)
/* pc_http_get's limit: the issuer's discovery document may move. */
#define DEFAULT_REDIRECTS 20

static void wipe_free(char *s)
{
    if (s) {
        OPENSSL_cleanse(s, strlen(s));
        free(s);
    }
}

/* ---- the client's TLS settings, copied --------------------------------------------- */

static int copy_str(char **dst, const char *src)
{
    *dst = src ? strdup(src) : NULL;
    return src && !*dst ? -1 : 0;
}

/* The TLS settings, copied (NULL: verify peers and host names against the system's
 * store). 0, or -1 when out of memory. */
static int copy_tls(pc_http_tls_conf_t *dst, const pc_http_tls_t *src)
{
    if (!src) {
        dst->verify_hostname = true;
        return 0;
    }
    dst->allow_insecure = src->allow_insecure != 0;
    dst->verify_hostname = src->verify_hostname != 0;
    int rc = copy_str(&dst->trust_file, src->trust_certs_file);
    rc |= copy_str(&dst->trust_pem, src->trust_certs_pem);
    rc |= copy_str(&dst->cert_file, src->cert_file);
    rc |= copy_str(&dst->key_file, src->key_file);
    rc |= copy_str(&dst->cert_pem, src->cert_pem);
    rc |= copy_str(&dst->key_pem, src->key_pem);
    rc |= copy_str(&dst->protocols, src->protocols);
    rc |= copy_str(&dst->ciphers, src->ciphers);
    return rc;
}

/* ---- lifetime of the uv handles ---------------------------------------------------- */

static void destroy(pc_http_t *h)
{
    pc_http_tls_conf_t *t = &h->tls;
    free(t->trust_file);
    free(t->trust_pem);
    free(t->cert_file);
    free(t->key_file);
    free(t->cert_pem);
    wipe_free(t->key_pem);
    free(t->protocols);
    free(t->ciphers);
    free(h);
}

static void release_handle(pc_http_t *h)
{
    if (--h->open_handles == 0 && h->closing)
        destroy(h);
}

static void timer_closed(uv_handle_t *handle)
{
    release_handle(handle->data);
}

static void sock_closed(uv_handle_t *handle)
{
    sock_t *s = handle->data;
    pc_http_t *h = s->h;
    free(s);
    release_handle(h);
}

static void sock_close(sock_t *s)
{
    pc_http_t *h = s->h;
    if (s->prev)
        s->prev->next = s->next;
    else
        h->socks = s->next;
    if (s->next)
        s->next->prev = s->prev;
    if (h->multi)
        pc_curl.multi_assign(h->multi, s->fd, NULL);
    uv_poll_stop(&s->poll);
    uv_close((uv_handle_t *)&s->poll, sock_closed);
}

/* ---- requests ---------------------------------------------------------------------- */

static void unlink_request(request_t *r)
{
    pc_http_t *h = r->h;
    if (r->prev)
        r->prev->next = r->next;
    else
        h->requests = r->next;
    if (r->next)
        r->next->prev = r->prev;
    r->prev = r->next = NULL;
    if (h->multi)
        pc_curl.multi_remove_handle(h->multi, r->easy);
}

static void free_request(request_t *r)
{
    if (r->easy)
        pc_curl.easy_cleanup(r->easy);
    pc_http_free_headers(r->headers);
    wipe_free(r->header);
    wipe_free(r->form);
    pc_http_wipe_body(r);
    pc_http_kept_clear(&r->kept);
    free(r);
}

static size_t on_body(char *data, size_t size, size_t n, void *ud)
{
    request_t *r = ud;
    size_t add = size * n;
    if (add > MAX_BODY - r->len) {
        r->too_big = true;
        return 0; /* curl fails the transfer with CURLE_WRITE_ERROR */
    }
    if (r->len + add + 1 > r->cap) {
        size_t cap = r->cap ? r->cap : 1024;
        while (cap < r->len + add + 1)
            cap *= 2;
        char *nb = malloc(cap);
        if (!nb)
            return 0;
        if (r->body) {
            /* Not realloc: the old buffer may hold a token and must be wiped. */
            memcpy(nb, r->body, r->len);
            OPENSSL_cleanse(r->body, r->cap);
            free(r->body);
        }
        r->body = nb;
        r->cap = cap;
    }
    memcpy(r->body + r->len, data, add);
    r->len += add;
    r->body[r->len] = '\0';
    return add;
}

/* The answer headers the caller keeps (pc_http_keep_line): every line of every answer
 * on this transfer passes, the status line of each starting afresh. */
static size_t on_header(char *data, size_t size, size_t n, void *ud)
{
    request_t *r = ud;
    size_t len = size * n;
    if (pc_http_keep_line(&r->kept, r->keep, data, len) != 0) {
        r->keep_failed = true;
        return 0; /* curl fails the transfer */
    }
    return len;
}

/* ---- the outcome ------------------------------------------------------------------- */

/* Fail r's transfer with a result and a detail that names the request (the URL holds no
 * secret) and curl's reason. */
static pulsarc_result transfer_failure(request_t *r, CURLcode rc, const char *url)
{
    if (r->too_big)
        return pc_fail(PULSARC_ERR_PROTOCOL, "HTTP %s %s: the answer is larger than %u bytes",
                       r->verb, url, MAX_BODY);
    if (r->keep_failed)
        return pc_fail(PULSARC_ERR_NO_MEMORY, "HTTP %s %s: out of memory", r->verb, url);
    if (r->tls.restrict_failed)
        return pc_fail(PULSARC_ERR_TLS_CONFIG, "HTTP %s %s: %s", r->verb, url, r->tls.detail);
    pulsarc_result res = pc_http_curl_result(r->easy, rc, r->errbuf);
    return pc_fail(res, "HTTP %s %s: %s", r->verb, url,
                   r->errbuf[0] ? r->errbuf : pc_curl.easy_strerror(rc));
}

/* Call whichever callback r has; without the body when it was cancelled. */
static void deliver(request_t *r, pulsarc_result res, long status, bool cancelled)
{
    if (!r->answer) {
        r->cb(res, status,
              cancelled ? NULL
              : r->body ? r->body
                        : "",
              cancelled ? 0 : r->len, r->ctx);
        return;
    }
    pc_http_answer_t a = { .status = status,
                           .body = r->body ? r->body : "",
                           .len = r->len,
                           .kept = &r->kept };
    r->answer(res, res == PULSARC_OK ? &a : NULL, r->ctx);
}

/* Hand the outcome to the callback and free r. res != PULSARC_OK: the detail is set. */
static void finish(request_t *r, pulsarc_result res, long status)
{
    unlink_request(r);
    deliver(r, res, status, false);
    free_request(r);
}

static void complete(request_t *r, CURLcode rc)
{
    pc_http_t *h = r->h;
    long status = 0;
    const char *effective = NULL;
    pc_curl.easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &status);
    pc_curl.easy_getinfo(r->easy, CURLINFO_EFFECTIVE_URL, &effective);
    char url[1024];
    snprintf(url, sizeof url, "%s", effective ? effective : "");
    if (rc != CURLE_OK) {
        pulsarc_result res = transfer_failure(r, rc, url);
        PC_DEBUG(h->log, "HTTP %s %s failed: %s", r->verb, url, pulsarc_last_error_detail());
        finish(r, res, status);
        return;
    }
    PC_DEBUG(h->log, "HTTP %s %s: status %ld, %zu bytes", r->verb, url, status, r->len);
    if (!r->form && pc_http_is_redirect(status)) {
        pulsarc_result res = PULSARC_OK;
        int f = pc_http_follow(r, url, &res);
        if (f > 0)
            return;
        if (f < 0) {
            finish(r, res, 0);
            return;
        }
    }
    finish(r, PULSARC_OK, status);
}

/* Hand finished transfers to their callbacks. A callback may start requests or even free
 * the client (then multi is gone and the loop stops). */
static void complete_finished(pc_http_t *h)
{
    CURLMsg *msg;
    int left;
    while (h->multi && (msg = pc_curl.multi_info_read(h->multi, &left))) {
        if (msg->msg != CURLMSG_DONE)
            continue;
        request_t *r = NULL;
        CURLcode rc = msg->data.result; /* msg dies with the easy handle's removal */
        pc_curl.easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&r);
        complete(r, rc);
    }
}

/* ---- curl's socket and timer callbacks, libuv's events ----------------------------- */

static void on_poll(uv_poll_t *p, int status, int events)
{
    sock_t *s = p->data;
    pc_http_t *h = s->h;
    int flags = 0;
    if (status < 0)
        flags = CURL_CSELECT_ERR;
    else
        flags = ((events & UV_READABLE) ? CURL_CSELECT_IN : 0) |
                ((events & UV_WRITABLE) ? CURL_CSELECT_OUT : 0);
    int running;
    pc_curl.multi_socket_action(h->multi, s->fd, flags, &running);
    complete_finished(h);
}

static void on_timer(uv_timer_t *t)
{
    pc_http_t *h = t->data;
    int running;
    pc_curl.multi_socket_action(h->multi, CURL_SOCKET_TIMEOUT, 0, &running);
    complete_finished(h);
}

static int on_socket(CURL *easy, curl_socket_t fd, int what, void *userp, void *socketp)
{
    (void)easy;
    pc_http_t *h = userp;
    sock_t *s = socketp;
    if (what == CURL_POLL_REMOVE) {
        if (s)
            sock_close(s);
        return 0;
    }
    if (!s) {
        if (h->closing)
            return 0;
        if (!(s = calloc(1, sizeof *s)))
            return -1;
        if (uv_poll_init_socket(h->loop, &s->poll, fd) != 0) {
            free(s);
            return -1;
        }
        s->h = h;
        s->fd = fd;
        s->poll.data = s;
        s->next = h->socks;
        if (h->socks)
            h->socks->prev = s;
        h->socks = s;
        h->open_handles++;
        pc_curl.multi_assign(h->multi, fd, s);
    }
    int events = ((what & CURL_POLL_IN) ? UV_READABLE : 0) |
                 ((what & CURL_POLL_OUT) ? UV_WRITABLE : 0);
    return uv_poll_start(&s->poll, events, on_poll) == 0 ? 0 : -1;
}

/* curl wants socket_action(CURL_SOCKET_TIMEOUT) after timeout_ms (-1: never). Even 0 goes
 * through the timer: curl must not be re-entered from its own callback. */
static int on_timer_set(CURLM *multi, long timeout_ms, void *userp)
{
    (void)multi;
    pc_http_t *h = userp;
    if (h->closing)
        return 0;
    if (timeout_ms < 0)
        return uv_timer_stop(&h->timer) == 0 ? 0 : -1;
    return uv_timer_start(&h->timer, on_timer, (uint64_t)timeout_ms, 0) == 0 ? 0 : -1;
}

/* ---- setting up a transfer --------------------------------------------------------- */

static CURLcode set_common(request_t *r, const char *url, uint64_t timeout_ms)
{
    CURL *e = r->easy;
    CURLcode rc = CURLE_OK;
    SETOPT(rc, e, CURLOPT_URL, url);
    SETOPT(rc, e, CURLOPT_PROTOCOLS_STR, "http,https");
    SETOPT(rc, e, CURLOPT_NOSIGNAL, 1L); /* curl's alarm() would hit the application */
    SETOPT(rc, e, CURLOPT_TIMEOUT_MS, (long)timeout_ms);
    SETOPT(rc, e, CURLOPT_ERRORBUFFER, r->errbuf);
    SETOPT(rc, e, CURLOPT_PRIVATE, (void *)r);
    SETOPT(rc, e, CURLOPT_WRITEFUNCTION, on_body);
    SETOPT(rc, e, CURLOPT_WRITEDATA, (void *)r);
    SETOPT(rc, e, CURLOPT_USERAGENT, "pulsarc");
    SETOPT(rc, e, CURLOPT_HTTPHEADER, r->headers);
    if (r->keep) {
        SETOPT(rc, e, CURLOPT_HEADERFUNCTION, on_header);
        SETOPT(rc, e, CURLOPT_HEADERDATA, (void *)r);
    }
    /* Never curl's: follow() decides where a redirect goes and with which headers. */
    SETOPT(rc, e, CURLOPT_FOLLOWLOCATION, 0L);
    if (rc == CURLE_OK)
        rc = pc_http_tls_setopt(e, &r->tls);
    return rc;
}

static CURLcode set_post(request_t *r)
{
    CURLcode rc = CURLE_OK;
    SETOPT(rc, r->easy, CURLOPT_POSTFIELDSIZE, (long)strlen(r->form));
    SETOPT(rc, r->easy, CURLOPT_POSTFIELDS, r->form);
    return rc;
}

static int start_failed(request_t *r, pulsarc_result res, const char *what, const char *url)
{
    free_request(r);
    pc_fail(res, "HTTP request to %s: %s", url ? url : "(null)", what);
    return -1;
}

/* Build and add one transfer; the callback runs when it ends (never from this call). */
static int start(pc_http_t *h, const char *url, const pc_http_get_opts_t *get, const char *form,
                 uint64_t timeout_ms, pc_http_done_cb cb, pc_http_answer_cb answer, void *ctx)
{
    if (!h || !url || (!cb && !answer))
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT, "HTTP client, URL and callback are "
                                                     "required"),
               -1;
    if (h->closing)
        return pc_fail(PULSARC_ERR_ALREADY_CLOSED, "the HTTP client is closed"), -1;
    const char *header = get ? get->header : NULL;
    /* A line break in the header would let its content forge more headers: none, or
     * "\r\n" between the lines of a header meant as several. */
    bool lines = get && get->header_lines;
    if (header && (lines ? !pc_http_header_lines_ok(header) : strpbrk(header, "\r\n") != NULL))
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT, "an HTTP header holds a line break"), -1;
    request_t *r = calloc(1, sizeof *r);
    if (!r)
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory"), -1;
    r->h = h;
    r->verb = form ? "POST" : "GET";
    r->cb = cb;
    r->answer = answer;
    r->ctx = ctx;
    r->tls.conf = &h->tls;
    if (timeout_ms > LONG_MAX) /* curl takes a long */
        timeout_ms = LONG_MAX;
    r->deadline = uv_now(h->loop) + timeout_ms;
    if (get) {
        r->scope = get->header_scope;
        r->scope_ctx = get->scope_ctx;
        r->redirects_left = get->max_redirects;
        r->keep = get->keep;
        int n = 0;
        while (r->keep && r->keep[n])
            n++;
        if (n > PC_HTTP_KEEP_MAX)
            return start_failed(r, PULSARC_ERR_INVALID_ARGUMENT, "too many answer headers to keep",
                                url);
        if (pc_http_parse_origin(url, &r->first) != 0)
            return start_failed(r, PULSARC_ERR_INVALID_URL, "not an http(s) URL", url);
    }
    r->easy = pc_curl.easy_init();
    if ((header && !(r->header = strdup(header))) || (form && !(r->form = strdup(form))))
        return start_failed(r, PULSARC_ERR_NO_MEMORY, "out of memory", url);
    r->headers = get ? pc_http_headers_for(r, &r->first)
                     : pc_curl.slist_append(NULL, "Accept: application/json");
    if (!r->easy || !r->headers)
        return start_failed(r, PULSARC_ERR_NO_MEMORY, "out of memory", url);
    CURLcode rc = set_common(r, url, timeout_ms);
    if (rc == CURLE_OK)
        rc = form ? set_post(r) : pc_curl.easy_setopt(r->easy, CURLOPT_HTTPGET, 1L);
    if (rc != CURLE_OK)
        return start_failed(r,
                            rc == CURLE_OUT_OF_MEMORY ? PULSARC_ERR_NO_MEMORY
                                                      : PULSARC_ERR_UNSUPPORTED,
                            pc_curl.easy_strerror(rc), url);
    if (pc_curl.multi_add_handle(h->multi, r->easy) != CURLM_OK)
        return start_failed(r, PULSARC_ERR_NO_MEMORY, "curl refused the transfer", url);
    r->next = h->requests;
    if (h->requests)
        h->requests->prev = r;
    h->requests = r;
    return 0;
}

int pc_http_get_with(pc_http_t *h, const char *url, const pc_http_get_opts_t *opts,
                     uint64_t timeout_ms, pc_http_answer_cb cb, void *ctx)
{
    pc_http_get_opts_t none = { 0 };
    return start(h, url, opts ? opts : &none, NULL, timeout_ms, NULL, cb, ctx);
}

int pc_http_get(pc_http_t *h, const char *url, const char *header, uint64_t timeout_ms,
                pc_http_done_cb cb, void *ctx)
{
    pc_http_get_opts_t o = { .header = header, .max_redirects = DEFAULT_REDIRECTS };
    return start(h, url, &o, NULL, timeout_ms, cb, NULL, ctx);
}

int pc_http_post_form(pc_http_t *h, const char *url, const char *form, uint64_t timeout_ms,
                      pc_http_done_cb cb, void *ctx)
{
    if (!form)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT, "the form must not be NULL"), -1;
    return start(h, url, NULL, form, timeout_ms, cb, NULL, ctx);
}

/* ---- the client -------------------------------------------------------------------- */

pc_http_t *pc_http_new(uv_loop_t *loop, const pc_logger_t *log, const pc_http_tls_t *tls)
{
    /* libcurl is loaded (and initialised) by the first HTTP client of the process: a
     * process that never needs HTTP never maps it (curl_lib.h). */
    if (!pc_curl_lib())
        return NULL; /* the detail names the library and why */
    pc_http_t *h = calloc(1, sizeof *h);
    if (!h || copy_tls(&h->tls, tls) != 0 || !(h->multi = pc_curl.multi_init())) {
        if (h)
            destroy(h);
        pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
        return NULL;
    }
    h->loop = loop;
    h->log = log;
    uv_timer_init(loop, &h->timer);
    h->timer.data = h;
    h->open_handles = 1;
    pc_curl.multi_setopt(h->multi, CURLMOPT_SOCKETFUNCTION, on_socket);
    pc_curl.multi_setopt(h->multi, CURLMOPT_SOCKETDATA, (void *)h);
    pc_curl.multi_setopt(h->multi, CURLMOPT_TIMERFUNCTION, on_timer_set);
    pc_curl.multi_setopt(h->multi, CURLMOPT_TIMERDATA, (void *)h);
    return h;
}

pulsarc_result pc_http_unavailable(void)
{
    return pc_curl_lib() ? PULSARC_OK : pc_curl_lib_result();
}

/* Runs on the loop thread; the memory goes once libuv has closed every handle, so the
 * loop must run afterwards (as it does while the client shuts down). */
void pc_http_free(pc_http_t *h)
{
    if (!h || h->closing)
        return;
    h->closing = true;
    while (h->requests) {
        request_t *r = h->requests;
        unlink_request(r);
        pc_set_detail("the HTTP client was closed");
        deliver(r, PULSARC_ERR_ALREADY_CLOSED, 0, true);
        free_request(r);
    }
    /* Stop watching before curl closes the sockets of its connection cache. */
    while (h->socks)
        sock_close(h->socks);
    pc_curl.multi_cleanup(h->multi);
    h->multi = NULL;
    uv_timer_stop(&h->timer);
    uv_close((uv_handle_t *)&h->timer, timer_closed);
}
