/* The OAuth2 client-credentials provider (method "token"), as the official clients run
 * it: discover the issuer's token endpoint ({issuer}/.well-known/openid-configuration,
 * kept once found), POST the client's id and secret to it, and send the access token it
 * answers. The token is cached and fetched again a little before it expires: a tenth of
 * its lifetime early, at most 30 s early (see renew_at). An answer without expires_in is
 * used for the connect that asked for it and fetched again for the next one.
 *
 * HTTP goes through the table the client hands over (auth/ cannot include net/); the
 * client builds it on an HTTPS client of its own, which always verifies the issuer's
 * certificate and host name, against trust_file or the system's store (CVE-2022-33684
 * was an OAuth2 client that did not): the broker's TLS settings, insecure ones included,
 * never apply to the issuer, which receives the client secret.
 *
 * Errors are PULSARC_ERR_AUTH_PROVIDER with a detail naming the issuer and what went
 * wrong (HTTP status, which JSON field); never the secret, the token or a body. */
#include "auth/auth.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth/secret_json.h"
#include "common/clock.h"
#include "common/error.h"

#define DISCOVERY_PATH "/.well-known/openid-configuration"
#define MAX_MARGIN_MS 30000u

typedef struct oauth2_auth {
    pc_auth_t base;
    char *issuer_url; /* without a trailing '/' */
    char *client_id, *client_secret, *audience, *scope;
    char *trust_file; /* the issuer's CAs; NULL: the system's store */
    pc_auth_http_t http;
    bool has_http;
    const pc_clock_t *clock;   /* NULL: the monotonic clock */
    char *token_endpoint;      /* from discovery; forgotten when it fails us */
    char *token;               /* the cached access token, or NULL */
    uint64_t renew_at_ms;      /* the cached token is fetched again from here on */
    uint64_t fetch_started_ms; /* lifetimes count from the request, not the answer */
    bool fetching;
    pc_auth_wait_t *waiters;   /* waiting for the fetch under way */
    pc_auth_wait_t *finishing; /* being told its outcome (see finish_all) */
} oauth2_auth_t;

/* ---- telling the waiters --------------------------------------------------------- */

/* One waiter at a time, off a list held in the struct: a callback may cancel a waiter
 * still to be told (its connection closed), or start a new wait, which joins `waiters`
 * and the next fetch rather than this outcome. */
static void finish_all(oauth2_auth_t *o, pulsarc_result res, const char *detail)
{
    pc_auth_wait_t **end = &o->finishing;
    while (*end)
        end = &(*end)->next;
    *end = o->waiters;
    o->waiters = NULL;
    while (o->finishing) {
        pc_auth_wait_t *w = o->finishing;
        o->finishing = w->next;
        if (res != PULSARC_OK)
            pc_set_detail(detail);
        pc_auth_wait_done(w, res);
    }
}

static void fail(oauth2_auth_t *o, pulsarc_result res, const char *fmt, ...)
{
    char detail[512];
    int n = snprintf(detail, sizeof detail, "OAuth2 issuer %s: ", o->issuer_url);
    va_list ap;
    va_start(ap, fmt);
    if (n > 0 && (size_t)n < sizeof detail)
        vsnprintf(detail + n, sizeof detail - (size_t)n, fmt, ap);
    va_end(ap);
    o->fetching = false;
    finish_all(o, res, detail);
}

/* The detail of an HTTP failure (net/'s, which names the URL and the cause), copied
 * before fail() overwrites the thread's detail. */
static void fail_http(oauth2_auth_t *o, pulsarc_result res, const char *what)
{
    char cause[300];
    snprintf(cause, sizeof cause, "%s", pulsarc_last_error_detail());
    fail(o, PULSARC_ERR_AUTH_PROVIDER, "%s failed: %s (%s)", what, pulsarc_result_name(res), cause);
}

/* ---- the token request ----------------------------------------------------------- */

/* application/x-www-form-urlencoded: everything but the unreserved characters as %XX. */
static char *form_escape(char *at, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
            *p == '-' || *p == '.' || *p == '_' || *p == '~') {
            *at++ = (char)*p;
        } else {
            *at++ = '%';
            *at++ = hex[*p >> 4];
            *at++ = hex[*p & 15];
        }
    }
    return at;
}

static char *add_field(char *at, const char *key, const char *value)
{
    if (!value)
        return at;
    *at++ = '&';
    memcpy(at, key, strlen(key));
    at += strlen(key);
    *at++ = '=';
    return form_escape(at, value);
}

/* The form carries the secret: the caller wipes it (pc_auth_secret_free). */
static char *token_form(const oauth2_auth_t *o)
{
    static const char grant[] = "grant_type=client_credentials";
    size_t n = sizeof grant + 64 +
               3 * (strlen(o->client_id) + strlen(o->client_secret) +
                    (o->audience ? strlen(o->audience) : 0) + (o->scope ? strlen(o->scope) : 0));
    char *form = malloc(n);
    if (!form)
        return NULL;
    char *at = form;
    memcpy(at, grant, sizeof grant - 1);
    at += sizeof grant - 1;
    at = add_field(at, "client_id", o->client_id);
    at = add_field(at, "client_secret", o->client_secret);
    at = add_field(at, "audience", o->audience);
    at = add_field(at, "scope", o->scope);
    *at = '\0';
    return form;
}

/* An OAuth error code ("invalid_client") helps; anything else the issuer says might echo
 * what we sent, so only a short code of plain letters is quoted. */
static void oauth_error_code(json_t *root, char *out, size_t len)
{
    const char *e = json_string_value(json_object_get(root, "error"));
    out[0] = '\0';
    if (!e || strlen(e) > 40 || strspn(e, "abcdefghijklmnopqrstuvwxyz_") != strlen(e))
        return;
    snprintf(out, len, " (error \"%s\")", e);
}

/* When to fetch again: a tenth of the lifetime early, at most MAX_MARGIN_MS early. */
static uint64_t renew_at(const oauth2_auth_t *o, json_t *expires_in)
{
    if (!json_is_number(expires_in) || json_number_value(expires_in) <= 0)
        return o->fetch_started_ms; /* no lifetime given: not cached */
    double life = json_number_value(expires_in) * 1000.0;
    if (life > 1e15)
        life = 1e15;
    uint64_t ms = (uint64_t)life;
    uint64_t margin = ms / 10 < MAX_MARGIN_MS ? ms / 10 : MAX_MARGIN_MS;
    return o->fetch_started_ms + ms - margin;
}

static void take_token(oauth2_auth_t *o, long status, json_t *root)
{
    if (status != 200) {
        char code[64];
        oauth_error_code(root, code, sizeof code);
        free(o->token_endpoint); /* it may have moved: discover again next time */
        o->token_endpoint = NULL;
        fail(o, PULSARC_ERR_AUTH_PROVIDER, "the token endpoint answered HTTP %ld%s", status, code);
        return;
    }
    const char *token = json_string_value(json_object_get(root, "access_token"));
    if (!token || !*token) {
        fail(o, PULSARC_ERR_AUTH_PROVIDER,
             "the token endpoint's answer has no access_token string");
        return;
    }
    char *copy = strdup(token);
    if (!copy) {
        fail(o, PULSARC_ERR_NO_MEMORY, "out of memory");
        return;
    }
    pc_auth_secret_free(o->token);
    o->token = copy;
    o->renew_at_ms = renew_at(o, json_object_get(root, "expires_in"));
    o->fetching = false;
    finish_all(o, PULSARC_OK, NULL);
}

static void on_token(pulsarc_result res, long status, const char *body, size_t len, void *ctx)
{
    oauth2_auth_t *o = ctx;
    if (res != PULSARC_OK) {
        fail_http(o, res, "the token request");
        return;
    }
    pc_secret_json_init(); /* jansson's copies of the token are wiped */
    json_t *root = json_loadb(body ? body : "", len, 0, NULL);
    if (!json_is_object(root) && status == 200)
        fail(o, PULSARC_ERR_AUTH_PROVIDER, "the token endpoint's answer is not a JSON object");
    else
        take_token(o, status, root);
    json_decref(root);
}

static void request_token(oauth2_auth_t *o)
{
    char *form = token_form(o);
    if (!form) {
        fail(o, PULSARC_ERR_NO_MEMORY, "out of memory");
        return;
    }
    int rc = o->http.post_form(o->http.h, o->token_endpoint, form, o->http.timeout_ms, on_token, o);
    pc_auth_secret_free(form);
    if (rc != 0)
        fail_http(o, PULSARC_ERR_CONNECT_FAILED, "the token request");
}

/* ---- discovery ------------------------------------------------------------------- */

/* A token endpoint over plain HTTP behind an HTTPS issuer would send the secret in the
 * clear: refused. */
static bool endpoint_acceptable(const oauth2_auth_t *o, const char *url)
{
    if (!strncmp(url, "https://", 8))
        return true;
    return !strncmp(url, "http://", 7) && strncmp(o->issuer_url, "https://", 8) != 0;
}

static void on_discovery(pulsarc_result res, long status, const char *body, size_t len, void *ctx)
{
    oauth2_auth_t *o = ctx;
    if (res != PULSARC_OK) {
        fail_http(o, res, "GET " DISCOVERY_PATH);
        return;
    }
    if (status != 200) {
        fail(o, PULSARC_ERR_AUTH_PROVIDER, "GET " DISCOVERY_PATH " answered HTTP %ld", status);
        return;
    }
    json_t *root = json_loadb(body ? body : "", len, 0, NULL);
    const char *endpoint = json_string_value(json_object_get(root, "token_endpoint"));
    if (!json_is_object(root))
        fail(o, PULSARC_ERR_AUTH_PROVIDER, DISCOVERY_PATH " is not a JSON object");
    else if (!endpoint || !*endpoint)
        fail(o, PULSARC_ERR_AUTH_PROVIDER, DISCOVERY_PATH " has no token_endpoint string");
    else if (!endpoint_acceptable(o, endpoint))
        fail(o, PULSARC_ERR_AUTH_PROVIDER,
             "the token endpoint is not an https:// URL (the issuer is)");
    else if (!(o->token_endpoint = strdup(endpoint)))
        fail(o, PULSARC_ERR_NO_MEMORY, "out of memory");
    else
        request_token(o);
    json_decref(root);
}

static void discover(oauth2_auth_t *o)
{
    size_t n = strlen(o->issuer_url) + sizeof DISCOVERY_PATH;
    char *url = malloc(n);
    if (!url) {
        fail(o, PULSARC_ERR_NO_MEMORY, "out of memory");
        return;
    }
    snprintf(url, n, "%s%s", o->issuer_url, DISCOVERY_PATH);
    int rc = o->http.get(o->http.h, url, o->http.timeout_ms, on_discovery, o);
    free(url);
    if (rc != 0)
        fail_http(o, PULSARC_ERR_CONNECT_FAILED, "GET " DISCOVERY_PATH);
}

/* ---- the provider interface ------------------------------------------------------ */

static void start_fetch(oauth2_auth_t *o)
{
    if (!o->has_http) {
        fail(o, PULSARC_ERR_AUTH_PROVIDER, "no HTTP client (the client is shutting down)");
        return;
    }
    o->fetching = true;
    o->fetch_started_ms = pc_clock_now_ms(o->clock);
    if (o->token_endpoint)
        request_token(o);
    else
        discover(o);
}

static void oauth2_prepare(pc_auth_t *a, pc_auth_wait_t *w)
{
    oauth2_auth_t *o = (oauth2_auth_t *)a;
    if (o->token && pc_clock_now_ms(o->clock) < o->renew_at_ms) {
        pc_auth_wait_done(w, PULSARC_OK);
        return;
    }
    pc_auth_wait_t **end = &o->waiters; /* arrival order */
    while (*end)
        end = &(*end)->next;
    *end = w;
    if (!o->fetching)
        start_fetch(o);
}

static void unlink_wait(pc_auth_wait_t **list, pc_auth_wait_t *w)
{
    for (; *list; list = &(*list)->next) {
        if (*list == w) {
            *list = w->next;
            return;
        }
    }
}

static void oauth2_cancel(pc_auth_t *a, pc_auth_wait_t *w)
{
    oauth2_auth_t *o = (oauth2_auth_t *)a;
    unlink_wait(&o->waiters, w);
    unlink_wait(&o->finishing, w);
}

/* The token fetched for this connect (or challenge): prepare has just said it is here. */
static pulsarc_result oauth2_initial(pc_auth_t *a, pc_auth_data_t *out)
{
    oauth2_auth_t *o = (oauth2_auth_t *)a;
    if (!o->token)
        return pc_fail(PULSARC_ERR_AUTH_PROVIDER, "OAuth2 issuer %s: no access token yet",
                       o->issuer_url);
    if (pc_auth_data_set(out, o->token) != 0)
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    return PULSARC_OK;
}

static void release_http(oauth2_auth_t *o)
{
    pc_auth_http_t http = o->http;
    o->has_http = false;
    memset(&o->http, 0, sizeof o->http);
    if (http.release)
        http.release(http.h); /* in-flight requests end now, with a failure */
}

static void oauth2_use_http(pc_auth_t *a, const pc_auth_http_t *http)
{
    oauth2_auth_t *o = (oauth2_auth_t *)a;
    if (o->has_http)
        release_http(o);
    if (http) {
        o->http = *http;
        o->has_http = true;
        return;
    }
    /* A shared client's requests may still answer later: they then fill the cache for
     * nobody, which is harmless. */
    if (o->waiters || o->finishing)
        fail(o, PULSARC_ERR_ALREADY_CLOSED, "the client is shutting down");
}

static void oauth2_destroy(pc_auth_t *a)
{
    oauth2_auth_t *o = (oauth2_auth_t *)a;
    if (o->has_http)
        release_http(o);
    free(o->issuer_url);
    free(o->client_id);
    pc_auth_secret_free(o->client_secret);
    free(o->audience);
    free(o->scope);
    free(o->trust_file);
    free(o->token_endpoint);
    pc_auth_secret_free(o->token);
    free(o);
}

static const char *oauth2_trust_file(const pc_auth_t *a)
{
    return ((const oauth2_auth_t *)a)->trust_file;
}

static const char *oauth2_cleartext_risk(const pc_auth_t *a)
{
    const oauth2_auth_t *o = (const oauth2_auth_t *)a;
    if (strncmp(o->issuer_url, "http://", 7) != 0)
        return NULL;
    return "the OAuth2 issuer is http://: the client secret and the tokens it answers travel "
           "unencrypted";
}

static const pc_auth_ops_t oauth2_ops = {
    .method = "token",
    .initial = oauth2_initial,
    .challenge = NULL, /* a refresh challenge wants the current token */
    .destroy = oauth2_destroy,
    .prepare = oauth2_prepare,
    .cancel = oauth2_cancel,
    .use_http = oauth2_use_http,
    .http_trust_file = oauth2_trust_file,
    .cleartext_risk = oauth2_cleartext_risk,
};

static int dup_opt(char **dst, const char *src)
{
    *dst = src ? strdup(src) : NULL;
    return src && !*dst ? -1 : 0;
}

pulsarc_result pc_auth_oauth2(const pc_auth_oauth2_params_t *p, pc_auth_t **out)
{
    *out = NULL;
    if (!p->issuer_url || !*p->issuer_url || !p->client_id || !p->client_secret)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT,
                       "OAuth2 needs an issuer URL, a client id and a client secret");
    oauth2_auth_t *o = calloc(1, sizeof *o);
    if (!o)
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    o->base.ops = &oauth2_ops;
    int rc = dup_opt(&o->issuer_url, p->issuer_url) | dup_opt(&o->client_id, p->client_id) |
             dup_opt(&o->client_secret, p->client_secret) | dup_opt(&o->audience, p->audience) |
             dup_opt(&o->scope, p->scope) | dup_opt(&o->trust_file, p->trust_file);
    if (rc != 0) {
        oauth2_destroy(&o->base);
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    }
    size_t n = strlen(o->issuer_url);
    while (n > 0 && o->issuer_url[n - 1] == '/')
        o->issuer_url[--n] = '\0';
    *out = &o->base;
    return PULSARC_OK;
}

void pc_auth_oauth2_set_clock(pc_auth_t *a, const pc_clock_t *clock)
{
    ((oauth2_auth_t *)a)->clock = clock;
}
