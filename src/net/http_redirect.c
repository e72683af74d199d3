/* Redirects of a GET, followed here rather than by curl, so that the request's extra
 * header (credentials) goes only where its scope says (http_internal.h). @locality loop
 * thread. */
#include "net/http_internal.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/error.h"

bool pc_http_is_redirect(long status)
{
    return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

int pc_http_parse_origin(const char *url, origin_t *o)
{
    CURLU *u = pc_curl.url();
    char *scheme = NULL, *host = NULL, *port = NULL;
    int rc = -1;
    if (u && pc_curl.url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
        pc_curl.url_get(u, CURLUPART_SCHEME, &scheme, 0) == CURLUE_OK &&
        pc_curl.url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK &&
        pc_curl.url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) == CURLUE_OK &&
        (!strcasecmp(scheme, "http") || !strcasecmp(scheme, "https"))) {
        const char *hs = host;
        size_t n = strlen(hs);
        if (n >= 2 && hs[0] == '[' && hs[n - 1] == ']') {
            hs++;
            n -= 2;
        }
        if (n > 0 && n < sizeof o->host) {
            o->https = !strcasecmp(scheme, "https");
            memcpy(o->host, hs, n);
            o->host[n] = '\0';
            o->port = atoi(port);
            rc = 0;
        }
    }
    pc_curl.free(scheme);
    pc_curl.free(host);
    pc_curl.free(port);
    pc_curl.url_cleanup(u);
    return rc;
}

static bool same_origin(const origin_t *a, const origin_t *b)
{
    return a->https == b->https && a->port == b->port && !strcasecmp(a->host, b->host);
}

/* "Name:" (nothing but spaces after the colon) becomes "Name;", which curl sends as an
 * empty header. */
static void empty_as_curl_wants(char *line)
{
    char *colon = strchr(line, ':');
    if (!colon)
        return;
    for (const char *v = colon + 1; *v; v++)
        if (*v != ' ' && *v != '\t')
            return;
    colon[0] = ';';
    colon[1] = '\0';
}

struct curl_slist *pc_http_headers_for(const request_t *r, const origin_t *to)
{
    struct curl_slist *l = pc_curl.slist_append(NULL, "Accept: application/json");
    bool allowed = same_origin(to, &r->first) ||
                   (r->scope && r->scope(r->scope_ctx, to->https, to->host, to->port));
    for (const char *p = r->header; l && p && allowed;) {
        const char *end = strstr(p, "\r\n");
        size_t n = end ? (size_t)(end - p) : strlen(p);
        char *line = strndup(p, n);
        if (line)
            empty_as_curl_wants(line);
        struct curl_slist *more = line ? pc_curl.slist_append(l, line) : NULL;
        if (line) {
            OPENSSL_cleanse(line, n);
            free(line);
        }
        if (!more) {
            pc_http_free_headers(l);
            return NULL;
        }
        l = more;
        p = end ? end + 2 : NULL;
    }
    return l;
}

bool pc_http_header_lines_ok(const char *header)
{
    for (const char *p = header;;) {
        const char *end = strstr(p, "\r\n");
        size_t n = end ? (size_t)(end - p) : strlen(p);
        if (n == 0 || memchr(p, '\r', n) || memchr(p, '\n', n))
            return false;
        if (!end)
            return true;
        p = end + 2;
    }
}

int pc_http_follow(request_t *r, const char *from, pulsarc_result *res)
{
    const char *loc = NULL;
    pc_curl.easy_getinfo(r->easy, CURLINFO_REDIRECT_URL, &loc);
    if (!loc)
        return 0;
    origin_t here, to;
    if (r->redirects_left <= 0) {
        *res = pc_fail(PULSARC_ERR_TOO_MANY_REDIRECTS,
                       "HTTP GET %s: redirected once more "
                       "than the limit allows",
                       from);
        return -1;
    }
    if (pc_http_parse_origin(loc, &to) != 0) {
        *res = pc_fail(PULSARC_ERR_PROTOCOL,
                       "HTTP GET %s: redirected to \"%.200s\", which is "
                       "not an http(s) URL",
                       from, loc);
        return -1;
    }
    if ((pc_http_parse_origin(from, &here) == 0 ? here.https : r->first.https) && !to.https) {
        *res = pc_fail(PULSARC_ERR_PROTOCOL,
                       "HTTP GET %s: redirected to plain http (%.200s); "
                       "refused",
                       from, loc);
        return -1;
    }
    /* loc belongs to the transfer being replaced. */
    char *url = strdup(loc);
    struct curl_slist *headers = url ? pc_http_headers_for(r, &to) : NULL;
    if (!headers) {
        free(url);
        *res = pc_fail(PULSARC_ERR_NO_MEMORY, "HTTP GET %s: out of memory", from);
        return -1;
    }
    bool carried = r->header && headers->next;
    uint64_t now_ms = uv_now(r->h->loop);
    long left = r->deadline > now_ms ? (long)(r->deadline - now_ms) : 1; /* < LONG_MAX */
    pc_curl.multi_remove_handle(r->h->multi, r->easy);
    CURLcode rc = CURLE_OK;
    SETOPT(rc, r->easy, CURLOPT_URL, url);
    SETOPT(rc, r->easy, CURLOPT_HTTPHEADER, headers);
    SETOPT(rc, r->easy, CURLOPT_TIMEOUT_MS, left);
    if (rc == CURLE_OK) { /* curl reads the new list from now on */
        pc_http_free_headers(r->headers);
        r->headers = headers;
    } else {
        pc_http_free_headers(headers);
    }
    if (rc != CURLE_OK || pc_curl.multi_add_handle(r->h->multi, r->easy) != CURLM_OK) {
        free(url);
        *res = pc_fail(PULSARC_ERR_NO_MEMORY, "HTTP GET %s: cannot follow the redirect", from);
        return -1;
    }
    r->redirects_left--;
    pc_http_wipe_body(r);
    r->errbuf[0] = '\0';
    PC_DEBUG(r->h->log, "HTTP GET %s: redirected to %s%s", from, url,
             !r->header ? ""
             : carried  ? " (with the header)"
                        : " (without the header)");
    free(url);
    return 1;
}
