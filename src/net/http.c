/* HTTP(S) on the loop: libcurl's multi interface in its "socket action" form. curl says
 * which sockets to watch (the socket callback: one uv_poll_t each) and when to wake it
 * (the timer callback: one uv_timer_t); libuv reports readiness and we hand it back with
 * curl_multi_socket_action. Nothing here waits: names are resolved in curl's resolver
 * thread, connects and TLS handshakes are non-blocking.
 *
 * Headers, form bodies and answers may carry credentials: they are never logged nor put
 * into a detail message, and they are wiped before they are freed. curl's verbose output
 * stays off for the same reason. */
#include "net/http.h"

#include <curl/curl.h>
#include <openssl/crypto.h>
#include <openssl/x509_vfy.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/error.h"

/* No lookup or token answer is this big: refuse it rather than buffer whatever a broken
 * or hostile server streams at us. */
#define MAX_BODY (4u * 1024u * 1024u)
/* A lookup may be redirected from broker to broker until it reaches the bundle's owner. */
#define MAX_REDIRECTS 20L

#define SETOPT(rc, e, opt, val)                                                                \
    do {                                                                                       \
        if ((rc) == CURLE_OK)                                                                  \
            (rc) = curl_easy_setopt((e), (opt), (val));                                        \
    } while (0)

typedef struct request {
    struct request *prev, *next;
    pc_http_t *h;
    CURL *easy;
    struct curl_slist *headers; /* may hold credentials: wiped */
    char *form;                 /* POST body, a secret: wiped */
    const char *verb;           /* "GET" or "POST", for log lines and details */
    char *body;                 /* the answer, NUL-terminated; may hold a token: wiped */
    size_t len, cap;
    bool too_big;
    pc_http_done_cb cb;
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
    /* The TLS settings, copied. */
    char *trust_file, *trust_pem, *cert_file, *key_file, *cert_pem, *key_pem;
    bool allow_insecure, verify_hostname;
};

static uv_once_t global_once = UV_ONCE_INIT;
static CURLcode global_rc = CURLE_OK;

/* curl_global_init may not race with itself (curl before 7.84 is not thread-safe there),
 * and several clients may start at once. */
static void global_init(void)
{
    global_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

static void wipe_free(char *s)
{
    if (s) {
        OPENSSL_cleanse(s, strlen(s));
        free(s);
    }
}

/* ---- lifetime of the uv handles ---------------------------------------------------- */

static void destroy(pc_http_t *h)
{
    free(h->trust_file);
    free(h->trust_pem);
    free(h->cert_file);
    free(h->key_file);
    free(h->cert_pem);
    wipe_free(h->key_pem);
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
        curl_multi_assign(h->multi, s->fd, NULL);
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
        curl_multi_remove_handle(h->multi, r->easy);
}

static void free_request(request_t *r)
{
    if (r->easy)
        curl_easy_cleanup(r->easy);
    for (struct curl_slist *l = r->headers; l; l = l->next)
        OPENSSL_cleanse(l->data, strlen(l->data));
    curl_slist_free_all(r->headers);
    wipe_free(r->form);
    if (r->body) {
        OPENSSL_cleanse(r->body, r->cap);
        free(r->body);
    }
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

/* ---- curl errors to results -------------------------------------------------------- */

/* CURLE_PEER_FAILED_VERIFICATION covers both the chain and the host name. OpenSSL's
 * verify result tells them apart: curl checks the host name itself after a chain that
 * verified (result X509_V_OK); the error text is the fallback. */
static pulsarc_result verification_result(const request_t *r)
{
    long vr = X509_V_OK;
    curl_easy_getinfo(r->easy, CURLINFO_SSL_VERIFYRESULT, &vr);
    if (vr == X509_V_ERR_CERT_HAS_EXPIRED || vr == X509_V_ERR_CERT_NOT_YET_VALID)
        return PULSARC_ERR_TLS_EXPIRED;
    if (vr == X509_V_ERR_HOSTNAME_MISMATCH || vr == X509_V_ERR_IP_ADDRESS_MISMATCH ||
        strstr(r->errbuf, "host name") || strstr(r->errbuf, "subject name"))
        return PULSARC_ERR_TLS_HOSTNAME;
    if (vr == X509_V_OK && r->errbuf[0] == '\0')
        return PULSARC_ERR_TLS_HOSTNAME;
    if (strstr(r->errbuf, "expired"))
        return PULSARC_ERR_TLS_EXPIRED;
    return PULSARC_ERR_TLS_UNTRUSTED;
}

static pulsarc_result curl_result(const request_t *r, CURLcode rc)
{
    switch (rc) {
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_COULDNT_CONNECT:
        return PULSARC_ERR_CONNECT_FAILED;
    case CURLE_OPERATION_TIMEDOUT:
        return PULSARC_ERR_TIMEOUT;
    case CURLE_PEER_FAILED_VERIFICATION:
        return verification_result(r);
    case CURLE_SSL_CLIENTCERT:
        return PULSARC_ERR_TLS_CLIENT_CERT;
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_CRL_BADFILE:
        return PULSARC_ERR_TLS_CONFIG;
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_SSL_ENGINE_NOTFOUND:
    case CURLE_SSL_ENGINE_SETFAILED:
    case CURLE_SSL_ENGINE_INITFAILED:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_SHUTDOWN_FAILED:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    case CURLE_SSL_INVALIDCERTSTATUS:
    case CURLE_USE_SSL_FAILED:
        /* A TLS 1.3 server asks for the client certificate after the handshake, so its
         * refusal arrives as an alert. */
        return strstr(r->errbuf, "certificate required") ? PULSARC_ERR_TLS_CLIENT_CERT
                                                         : PULSARC_ERR_TLS_HANDSHAKE;
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
        return strstr(r->errbuf, "certificate required") ? PULSARC_ERR_TLS_CLIENT_CERT
                                                         : PULSARC_ERR_CONNECTION_CLOSED;
    case CURLE_TOO_MANY_REDIRECTS:
        return PULSARC_ERR_TOO_MANY_REDIRECTS;
    case CURLE_OUT_OF_MEMORY:
        return PULSARC_ERR_NO_MEMORY;
    case CURLE_URL_MALFORMAT:
        return PULSARC_ERR_INVALID_URL;
    default:
        return PULSARC_ERR_PROTOCOL;
    }
}

/* Fail r's transfer with a result and a detail that names the request (the URL holds no
 * secret) and curl's reason. */
static pulsarc_result transfer_failure(const request_t *r, CURLcode rc, const char *url)
{
    if (r->too_big)
        return pc_fail(PULSARC_ERR_PROTOCOL, "HTTP %s %s: the answer is larger than %u bytes",
                       r->verb, url, MAX_BODY);
    pulsarc_result res = curl_result(r, rc);
    return pc_fail(res, "HTTP %s %s: %s", r->verb, url,
                   r->errbuf[0] ? r->errbuf : curl_easy_strerror(rc));
}

static void complete(request_t *r, CURLcode rc)
{
    pc_http_t *h = r->h;
    long status = 0;
    const char *effective = NULL;
    curl_easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_getinfo(r->easy, CURLINFO_EFFECTIVE_URL, &effective);
    const char *url = effective ? effective : "";
    pulsarc_result res = PULSARC_OK;
    if (rc != CURLE_OK) {
        res = transfer_failure(r, rc, url);
        PC_DEBUG(h->log, "HTTP %s %s failed: %s", r->verb, url, pulsarc_last_error_detail());
    } else {
        PC_DEBUG(h->log, "HTTP %s %s: status %ld, %zu bytes", r->verb, url, status, r->len);
    }
    unlink_request(r);
    r->cb(res, status, r->body ? r->body : "", r->len, r->ctx);
    free_request(r);
}

/* Hand finished transfers to their callbacks. A callback may start requests or even free
 * the client (then multi is gone and the loop stops). */
static void complete_finished(pc_http_t *h)
{
    CURLMsg *msg;
    int left;
    while (h->multi && (msg = curl_multi_info_read(h->multi, &left))) {
        if (msg->msg != CURLMSG_DONE)
            continue;
        request_t *r = NULL;
        CURLcode rc = msg->data.result; /* msg dies with the easy handle's removal */
        curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&r);
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
    curl_multi_socket_action(h->multi, s->fd, flags, &running);
    complete_finished(h);
}

static void on_timer(uv_timer_t *t)
{
    pc_http_t *h = t->data;
    int running;
    curl_multi_socket_action(h->multi, CURL_SOCKET_TIMEOUT, 0, &running);
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
        curl_multi_assign(h->multi, fd, s);
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

static CURLcode set_blob(CURL *e, CURLoption opt, const char *pem)
{
    /* curl copies the blob, so the settings' copy may go before the transfer ends. */
    struct curl_blob b = { .data = (void *)pem, .len = strlen(pem), .flags = CURL_BLOB_COPY };
    return curl_easy_setopt(e, opt, &b);
}

/* Verification as on the binary protocol: the configured CAs only (curl's default CA
 * directory would otherwise widen the trust), TLS 1.2 at least, the host name checked. */
static CURLcode set_tls(const pc_http_t *h, CURL *e)
{
    CURLcode rc = CURLE_OK;
    SETOPT(rc, e, CURLOPT_SSLVERSION, (long)CURL_SSLVERSION_TLSv1_2);
    SETOPT(rc, e, CURLOPT_SSL_VERIFYPEER, h->allow_insecure ? 0L : 1L);
    SETOPT(rc, e, CURLOPT_SSL_VERIFYHOST, h->allow_insecure || !h->verify_hostname ? 0L : 2L);
    if (h->trust_pem || h->trust_file) {
        SETOPT(rc, e, CURLOPT_CAPATH, (char *)NULL);
        if (h->trust_pem) {
            SETOPT(rc, e, CURLOPT_CAINFO, (char *)NULL);
            if (rc == CURLE_OK)
                rc = set_blob(e, CURLOPT_CAINFO_BLOB, h->trust_pem);
        } else {
            SETOPT(rc, e, CURLOPT_CAINFO, h->trust_file);
        }
    }
    if (h->cert_pem) {
        SETOPT(rc, e, CURLOPT_SSLCERTTYPE, "PEM");
        if (rc == CURLE_OK)
            rc = set_blob(e, CURLOPT_SSLCERT_BLOB, h->cert_pem);
    } else if (h->cert_file) {
        SETOPT(rc, e, CURLOPT_SSLCERT, h->cert_file);
    }
    if (h->key_pem) {
        SETOPT(rc, e, CURLOPT_SSLKEYTYPE, "PEM");
        if (rc == CURLE_OK)
            rc = set_blob(e, CURLOPT_SSLKEY_BLOB, h->key_pem);
    } else if (h->key_file) {
        SETOPT(rc, e, CURLOPT_SSLKEY, h->key_file);
    }
    return rc;
}

static CURLcode set_common(request_t *r, const char *url, uint64_t timeout_ms)
{
    CURL *e = r->easy;
    CURLcode rc = CURLE_OK;
    SETOPT(rc, e, CURLOPT_URL, url);
    SETOPT(rc, e, CURLOPT_PROTOCOLS_STR, "http,https");
    SETOPT(rc, e, CURLOPT_NOSIGNAL, 1L); /* curl's alarm() would hit the application */
    SETOPT(rc, e, CURLOPT_TIMEOUT_MS, (long)(timeout_ms > LONG_MAX ? LONG_MAX : timeout_ms));
    SETOPT(rc, e, CURLOPT_ERRORBUFFER, r->errbuf);
    SETOPT(rc, e, CURLOPT_PRIVATE, (void *)r);
    SETOPT(rc, e, CURLOPT_WRITEFUNCTION, on_body);
    SETOPT(rc, e, CURLOPT_WRITEDATA, (void *)r);
    SETOPT(rc, e, CURLOPT_USERAGENT, "pulsarc");
    SETOPT(rc, e, CURLOPT_HTTPHEADER, r->headers);
    if (rc == CURLE_OK)
        rc = set_tls(r->h, e);
    return rc;
}

/* A GET follows redirects: the broker answering a lookup sends the client on to the
 * bundle's owner, which wants the same credentials (curl drops a custom Authorization
 * header on another host unless told otherwise). Redirects stay on http(s), and an https
 * request never goes on over plain http. */
static CURLcode set_get(request_t *r, const char *url)
{
    bool https = strncasecmp(url, "https:", 6) == 0;
    CURLcode rc = CURLE_OK;
    SETOPT(rc, r->easy, CURLOPT_HTTPGET, 1L);
    SETOPT(rc, r->easy, CURLOPT_FOLLOWLOCATION, 1L);
    SETOPT(rc, r->easy, CURLOPT_MAXREDIRS, MAX_REDIRECTS);
    SETOPT(rc, r->easy, CURLOPT_UNRESTRICTED_AUTH, 1L);
    SETOPT(rc, r->easy, CURLOPT_REDIR_PROTOCOLS_STR, https ? "https" : "http,https");
    return rc;
}

/* A form POST (OAuth2's token request) is not re-sent anywhere: no redirects. */
static CURLcode set_post(request_t *r)
{
    CURLcode rc = CURLE_OK;
    SETOPT(rc, r->easy, CURLOPT_POSTFIELDSIZE, (long)strlen(r->form));
    SETOPT(rc, r->easy, CURLOPT_POSTFIELDS, r->form);
    SETOPT(rc, r->easy, CURLOPT_FOLLOWLOCATION, 0L);
    return rc;
}

static int start_failed(request_t *r, pulsarc_result res, const char *what, const char *url)
{
    free_request(r);
    pc_fail(res, "HTTP request to %s: %s", url ? url : "(null)", what);
    return -1;
}

/* Build and add one transfer; the callback runs when it ends (never from this call). */
static int start(pc_http_t *h, const char *verb, const char *url, const char *header,
                 const char *form, uint64_t timeout_ms, pc_http_done_cb cb, void *ctx)
{
    if (!h || !url || !cb)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT, "HTTP client, URL and callback are "
                       "required"), -1;
    if (h->closing)
        return pc_fail(PULSARC_ERR_ALREADY_CLOSED, "the HTTP client is closed"), -1;
    /* A line break in the header would let its content forge more headers. */
    if (header && strpbrk(header, "\r\n"))
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT, "an HTTP header holds a line break"), -1;
    request_t *r = calloc(1, sizeof *r);
    if (!r)
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory"), -1;
    r->h = h;
    r->verb = verb;
    r->cb = cb;
    r->ctx = ctx;
    r->easy = curl_easy_init();
    r->headers = curl_slist_append(NULL, "Accept: application/json");
    if (r->headers && header) {
        struct curl_slist *l = curl_slist_append(r->headers, header);
        r->headers = l ? l : r->headers;
        if (!l)
            return start_failed(r, PULSARC_ERR_NO_MEMORY, "out of memory", url);
    }
    if (!r->easy || !r->headers || (form && !(r->form = strdup(form))))
        return start_failed(r, PULSARC_ERR_NO_MEMORY, "out of memory", url);
    CURLcode rc = set_common(r, url, timeout_ms);
    if (rc == CURLE_OK)
        rc = form ? set_post(r) : set_get(r, url);
    if (rc != CURLE_OK)
        return start_failed(r, rc == CURLE_OUT_OF_MEMORY ? PULSARC_ERR_NO_MEMORY
                                                         : PULSARC_ERR_UNSUPPORTED,
                            curl_easy_strerror(rc), url);
    if (curl_multi_add_handle(h->multi, r->easy) != CURLM_OK)
        return start_failed(r, PULSARC_ERR_NO_MEMORY, "curl refused the transfer", url);
    r->next = h->requests;
    if (h->requests)
        h->requests->prev = r;
    h->requests = r;
    return 0;
}

int pc_http_get(pc_http_t *h, const char *url, const char *header, uint64_t timeout_ms,
                pc_http_done_cb cb, void *ctx)
{
    return start(h, "GET", url, header, NULL, timeout_ms, cb, ctx);
}

int pc_http_post_form(pc_http_t *h, const char *url, const char *form, uint64_t timeout_ms,
                      pc_http_done_cb cb, void *ctx)
{
    if (!form)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT, "the form must not be NULL"), -1;
    return start(h, "POST", url, NULL, form, timeout_ms, cb, ctx);
}

/* ---- the client -------------------------------------------------------------------- */

static int copy_str(char **dst, const char *src)
{
    *dst = src ? strdup(src) : NULL;
    return src && !*dst ? -1 : 0;
}

static int copy_tls(pc_http_t *h, const pc_http_tls_t *tls)
{
    if (!tls) {
        h->verify_hostname = true;
        return 0;
    }
    h->allow_insecure = tls->allow_insecure != 0;
    h->verify_hostname = tls->verify_hostname != 0;
    int rc = copy_str(&h->trust_file, tls->trust_certs_file);
    rc |= copy_str(&h->trust_pem, tls->trust_certs_pem);
    rc |= copy_str(&h->cert_file, tls->cert_file);
    rc |= copy_str(&h->key_file, tls->key_file);
    rc |= copy_str(&h->cert_pem, tls->cert_pem);
    rc |= copy_str(&h->key_pem, tls->key_pem);
    return rc;
}

pc_http_t *pc_http_new(uv_loop_t *loop, const pc_logger_t *log, const pc_http_tls_t *tls)
{
    uv_once(&global_once, global_init);
    if (global_rc != CURLE_OK) {
        pc_fail(PULSARC_ERR_NO_MEMORY, "libcurl did not initialise: %s",
                curl_easy_strerror(global_rc));
        return NULL;
    }
    pc_http_t *h = calloc(1, sizeof *h);
    if (!h || copy_tls(h, tls) != 0 || !(h->multi = curl_multi_init())) {
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
    curl_multi_setopt(h->multi, CURLMOPT_SOCKETFUNCTION, on_socket);
    curl_multi_setopt(h->multi, CURLMOPT_SOCKETDATA, (void *)h);
    curl_multi_setopt(h->multi, CURLMOPT_TIMERFUNCTION, on_timer_set);
    curl_multi_setopt(h->multi, CURLMOPT_TIMERDATA, (void *)h);
    return h;
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
        r->cb(PULSARC_ERR_ALREADY_CLOSED, 0, NULL, 0, r->ctx);
        free_request(r);
    }
    /* Stop watching before curl closes the sockets of its connection cache. */
    while (h->socks)
        sock_close(h->socks);
    curl_multi_cleanup(h->multi);
    h->multi = NULL;
    uv_timer_stop(&h->timer);
    uv_close((uv_handle_t *)&h->timer, timer_closed);
}
