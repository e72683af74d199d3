/* Lookups over the admin REST API, as the Java client's HttpLookupService does them:
 *   GET {service}/lookup/v2/topic/{domain}/{tenant}/{namespace}/{topic}
 *       -> {"brokerUrl": "pulsar://...", "brokerUrlTls": "pulsar+ssl://...", ...}
 *   GET {service}/admin/v2/{domain}/{tenant}/{namespace}/{topic}/partitions
 *       -> {"partitions": N}
 * The broker redirects a lookup to the bundle's owner by HTTP (pc_http follows, up to
 * maxLookupRedirects hops), so an answer is final.
 *
 * Credentials go in the Authorization header (token: Bearer, basic: Basic), fetched anew
 * for each request after the provider was prepared (an OAuth2 provider fetches or renews
 * its token then), and only to the hosts of the service URL: a redirect elsewhere goes
 * without them unless httpLookupAuthAllowRedirect says otherwise (as the C++ client's
 * setting of that name), and never from https to plain http. The tls method's identity
 * is the client certificate pc_http presents.
 *
 * A provider that authenticates in rounds (sasl: the broker's SASL exchange in headers,
 * auth.h "HTTP authentication in rounds") sees every answer first: while it says so, the
 * request goes again with the lines it gives (the next round, then the request itself
 * with the role token it got), and only then is the answer judged. Each lookup stops
 * after MAX_REQUESTS requests whatever the provider says. */
#include "net/lookup_http.h"

#include <jansson.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "auth/auth.h"
#include "common/error.h"
#include "common/topic_name.h"
#include "net/http.h"
#include "net/lookup_listener.h"

/* Requests one lookup may make (the rounds of an authentication exchange, run twice at
 * most, and the lookup itself): a bound that holds even if a provider's would not. */
#define MAX_REQUESTS 24

typedef struct http_lookup {
    pc_runtime_t *rt;
    pc_topic_name_t name;
    pc_host_port_t service; /* the service URL host asked now */
    int hosts_tried;
    uint64_t switches;        /* rt->cluster_switches when it started */
    pc_lookup_reply_t reply;  /* who hears the answer (and which kind of lookup) */
    pc_auth_wait_t auth_wait; /* the provider makes its credentials ready */
    /* An exchange in rounds (pc_auth_has_http_exchange): its state, the provider it
     * belongs to (the runtime's may change with a cluster switch), the requests made. */
    pc_auth_http_xchg_t *xchg;
    pc_auth_t *xchg_auth;
    int requests;
} http_lookup_t;

static void send_request(http_lookup_t *lk);
static void prepare_request(http_lookup_t *lk);

static void end_exchange(http_lookup_t *lk)
{
    pc_auth_http_end(lk->xchg_auth, &lk->xchg);
    lk->xchg_auth = NULL;
}

static void finish(http_lookup_t *lk, pulsarc_result res, const pc_host_port_t *broker,
                   int partitions)
{
    end_exchange(lk);
    pc_lookup_answer(&lk->reply, res, broker, broker, partitions);
    free(lk);
}

/* A web service host that cannot be reached is not the topic's fault: try the others of
 * the service URL once each, as the binary lookup does. */
static bool fail_over(http_lookup_t *lk, pulsarc_result res)
{
    pc_runtime_t *rt = lk->rt;
    if (res != PULSARC_ERR_CONNECT_FAILED || lk->hosts_tried >= rt->service->n_hosts ||
        rt->stopping)
        return false;
    PC_INFO(rt->log, "HTTP lookup of %s via %s:%d failed (%s); trying the next service host",
            lk->name.full, lk->service.host, lk->service.port, pulsarc_last_error_detail());
    lk->hosts_tried++;
    lk->service = pc_next_service_host(rt);
    end_exchange(lk); /* the next host authenticates afresh */
    prepare_request(lk);
    return true;
}

/* Percent-encode a path segment: the local name may hold any character a topic name
 * allows, and only the unreserved ones go through as they are. */
static int encode_segment(const char *s, char *out, size_t cap)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        bool plain = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                     (*p >= '0' && *p <= '9') || *p == '-' || *p == '.' || *p == '_' || *p == '~';
        if (n + (plain ? 1 : 3) >= cap)
            return -1;
        if (plain) {
            out[n++] = (char)*p;
        } else {
            out[n++] = '%';
            out[n++] = hex[*p >> 4];
            out[n++] = hex[*p & 15];
        }
    }
    out[n] = '\0';
    return 0;
}

/* The request's URL on the current service host; 0, or -1 when it does not fit. */
static int build_url(const http_lookup_t *lk, char *url, size_t cap)
{
    char local[3 * sizeof lk->name.local];
    if (encode_segment(lk->name.local, local, sizeof local) != 0)
        return -1;
    const pc_host_port_t *hp = &lk->service;
    bool v6 = strchr(hp->host, ':') != NULL;
    const pc_topic_name_t *t = &lk->name;
    int n;
    if (lk->reply.partitions)
        /* checkAllowAutoCreation: a topic that does not exist yet gets the broker's default
         * (as PARTITIONED_METADATA does on the binary protocol) instead of a 404. */
        n = snprintf(url, cap,
                     "%s://%s%s%s:%d/admin/v2/%s/%s/%s/%s/partitions"
                     "?checkAllowAutoCreation=true",
                     lk->rt->service->tls ? "https" : "http", v6 ? "[" : "", hp->host,
                     v6 ? "]" : "", hp->port, t->domain, t->tenant, t->ns, local);
    else
        n = snprintf(url, cap, "%s://%s%s%s:%d/lookup/v2/topic/%s/%s/%s/%s",
                     lk->rt->service->tls ? "https" : "http", v6 ? "[" : "", hp->host,
                     v6 ? "]" : "", hp->port, t->domain, t->tenant, t->ns, local);
    if (n <= 0 || (size_t)n >= cap)
        return -1;
    /* The broker answers with that listener's addresses (advertisedListeners). */
    const char *listener = lk->rt->net.listener_name;
    if (listener && !lk->reply.partitions) {
        static const char param[] = "?listenerName=";
        size_t used = (size_t)n;
        if (used + sizeof param > cap)
            return -1;
        memcpy(url + used, param, sizeof param);
        used += sizeof param - 1;
        return encode_segment(listener, url + used, cap - used);
    }
    return 0;
}

/* "Authorization: Basic base64(user:pass)" from the provider's "user:pass". */
static char *basic_header(const pc_auth_data_t *d)
{
    static const char prefix[] = "Authorization: Basic ";
    size_t enc = 4 * ((d->len + 2) / 3);
    char *h = malloc(sizeof prefix + enc);
    if (!h)
        return NULL;
    memcpy(h, prefix, sizeof prefix - 1);
    EVP_EncodeBlock((unsigned char *)h + sizeof prefix - 1, d->bytes, (int)d->len);
    return h;
}

static char *bearer_header(const pc_auth_data_t *d)
{
    static const char prefix[] = "Authorization: Bearer ";
    char *h = malloc(sizeof prefix + d->len);
    if (!h)
        return NULL;
    memcpy(h, prefix, sizeof prefix - 1);
    if (d->len)
        memcpy(h + sizeof prefix - 1, d->bytes, d->len);
    h[sizeof prefix - 1 + d->len] = '\0';
    return h;
}

/* The provider's own header lines, NUL-terminated (checked by the provider: "\r\n"
 * between lines, no other control character). */
static pulsarc_result provider_header(pc_auth_t *a, char **out)
{
    pc_auth_data_t d = { 0 };
    pulsarc_result r = pc_auth_http_header(a, &d);
    if (r != PULSARC_OK)
        return r;
    *out = malloc(d.len + 1);
    if (*out) {
        memcpy(*out, d.bytes, d.len);
        (*out)[d.len] = '\0';
    }
    pc_auth_data_free(&d);
    return *out ? PULSARC_OK : pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
}

/* The Authorization header for rt's provider: *out is NULL when none is sent (no provider,
 * or tls, whose identity is the certificate), else a secret the caller wipes. */
static pulsarc_result auth_header(pc_runtime_t *rt, char **out)
{
    *out = NULL;
    if (!rt->auth)
        return PULSARC_OK;
    if (pc_auth_has_http_header(rt->auth))
        return provider_header(rt->auth, out);
    const char *method = pc_auth_method(rt->auth);
    bool basic = strcmp(method, "basic") == 0;
    if (strcmp(method, "tls") == 0)
        return PULSARC_OK;
    if (!basic && strcmp(method, "token") != 0)
        return pc_fail(PULSARC_ERR_UNSUPPORTED,
                       "authentication method \"%s\" cannot be used for HTTP lookups", method);
    pc_auth_data_t d = { 0 };
    pulsarc_result r = pc_auth_initial_data(rt->auth, &d);
    if (r != PULSARC_OK)
        return r;
    *out = basic ? basic_header(&d) : bearer_header(&d);
    pc_auth_data_free(&d);
    return *out ? PULSARC_OK : pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
}

/* Credentials go to the service URL's hosts (the scheme checked by pc_http, which never
 * follows https to plain http), elsewhere only when the user allowed it. */
static bool may_carry_credentials(void *ctx, bool https, const char *host, int port)
{
    const pc_runtime_t *rt = ctx;
    (void)https;
    for (int i = 0; i < rt->service->n_hosts; i++) {
        const pc_host_port_t *hp = &rt->service->hosts[i];
        if (hp->port == port && strcasecmp(hp->host, host) == 0)
            return true;
    }
    return rt->limits.http_auth_any_redirect;
}

static void on_answer(pulsarc_result res, const pc_http_answer_t *a, void *ctx);

static const char *what_of_lookup(const http_lookup_t *lk)
{
    return lk->reply.partitions ? "partition metadata" : "lookup";
}

static void wipe_free(char *s)
{
    if (s) {
        OPENSSL_cleanse(s, strlen(s));
        free(s);
    }
}

/* Fail the lookup with res, its detail (set by whoever failed) prefixed with the lookup
 * and the host asked. */
static void fail_lookup(http_lookup_t *lk, pulsarc_result res)
{
    char why[600];
    snprintf(why, sizeof why, "%s", pulsarc_last_error_detail());
    pc_fail(res, "HTTP %s of %s via %s:%d: %s", what_of_lookup(lk), lk->name.full, lk->service.host,
            lk->service.port, why);
    finish(lk, res, NULL, 0);
}

/* GET the lookup's URL with header (a secret, NULL for none, wiped and freed here;
 * several lines when lines is set). */
static void get(http_lookup_t *lk, char *header, bool lines)
{
    pc_runtime_t *rt = lk->rt;
    char url[2048];
    if (!rt->http) { /* gone with the shutdown, or never made: no libcurl (or a bug) */
        wipe_free(header);
        pulsarc_result why = PULSARC_ERR_ALREADY_CLOSED;
        char detail[600];
        if (rt->stopping) {
            snprintf(detail, sizeof detail, "the client is closing");
        } else if ((why = pc_http_unavailable()) != PULSARC_OK) {
            /* the library and the loader's reason */
            snprintf(detail, sizeof detail, "%s", pulsarc_last_error_detail());
        } else {
            why = PULSARC_ERR_UNSUPPORTED;
            snprintf(detail, sizeof detail, "the client has no HTTP client");
        }
        pc_fail(why, "HTTP lookup of %s: %s", lk->name.full, detail);
        finish(lk, why, NULL, 0);
        return;
    }
    if (build_url(lk, url, sizeof url) != 0) { /* checked before the first request */
        wipe_free(header);
        pc_fail(PULSARC_ERR_INVALID_TOPIC, "the lookup URL for %s is too long", lk->name.full);
        finish(lk, PULSARC_ERR_INVALID_TOPIC, NULL, 0);
        return;
    }
    lk->requests++;
    PC_DEBUG(rt->log, "HTTP %s of %s: GET %s%s", what_of_lookup(lk), lk->name.full, url,
             lk->requests > 1 ? " (again, authenticating)" : "");
    pc_http_get_opts_t opts = {
        .header = header,
        .header_lines = lines,
        .header_scope = may_carry_credentials,
        .scope_ctx = rt,
        .max_redirects = rt->limits.max_lookup_redirects,
        .keep = lk->xchg ? pc_auth_http_reads(lk->xchg_auth) : NULL,
    };
    uint64_t timeout_ms = rt->limits.lookup_timeout_ms ? rt->limits.lookup_timeout_ms
                                                       : rt->limits.operation_timeout_ms;
    int rc = pc_http_get_with(rt->http, url, &opts, timeout_ms, on_answer, lk);
    wipe_free(header);
    /* pc_http_get has set the detail: the HTTP client is closed (the client is shutting
     * down) or out of memory. */
    if (rc != 0)
        finish(lk, rt->stopping ? PULSARC_ERR_ALREADY_CLOSED : PULSARC_ERR_NO_MEMORY, NULL, 0);
}

/* The provider's header lines as one NUL-terminated string (a secret); d is freed. */
static pulsarc_result lines_of(pc_auth_data_t *d, char **out)
{
    *out = malloc(d->len + 1);
    if (*out) {
        if (d->len)
            memcpy(*out, d->bytes, d->len);
        (*out)[d->len] = '\0';
    }
    pc_auth_data_free(d);
    return *out ? PULSARC_OK : pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
}

static void send_request(http_lookup_t *lk)
{
    pc_runtime_t *rt = lk->rt;
    char url[2048];
    char *header = NULL;
    if (build_url(lk, url, sizeof url) != 0) {
        pc_fail(PULSARC_ERR_INVALID_TOPIC, "the lookup URL for %s is too long", lk->name.full);
        finish(lk, PULSARC_ERR_INVALID_TOPIC, NULL, 0);
        return;
    }
    if (rt->http && pc_auth_has_http_exchange(rt->auth)) {
        pc_auth_data_t d;
        lk->xchg_auth = rt->auth;
        pulsarc_result r = pc_auth_http_begin(rt->auth, lk->service.host, lk->service.port,
                                              pc_clock_now_ms(rt->clock), &lk->xchg, &d);
        if (r == PULSARC_OK)
            r = lines_of(&d, &header);
        if (r != PULSARC_OK) {
            fail_lookup(lk, r);
            return;
        }
        get(lk, header, true);
        return;
    }
    pulsarc_result r = rt->http ? auth_header(rt, &header) : PULSARC_OK;
    if (r != PULSARC_OK) {
        finish(lk, r, NULL, 0);
        return;
    }
    get(lk, header, rt->auth && pc_auth_has_http_header(rt->auth));
}

/* The exchange's provider reads the answer first. True when it took the answer: the
 * request went again (another round, or the lookup itself with what the exchange got),
 * or the lookup failed; false when the answer is the lookup's own. */
static bool exchange_took(http_lookup_t *lk, const pc_http_answer_t *a)
{
    _Static_assert(PC_AUTH_HTTP_READS_MAX == PC_HTTP_KEEP_MAX, "one limit for both sides");
    pc_auth_http_reply_t reply = { .status = a->status,
                                   .values = (const char *const *)a->kept->values,
                                   .refused = a->kept->bad };
    pc_auth_data_t d;
    int again = 0;
    pulsarc_result r = pc_auth_http_step(lk->xchg_auth, lk->xchg, &reply,
                                         pc_clock_now_ms(lk->rt->clock), &again, &d);
    if (r == PULSARC_OK && !again)
        return false;
    char *header = NULL;
    if (r == PULSARC_OK && lk->requests >= MAX_REQUESTS) {
        pc_auth_data_free(&d);
        r = pc_fail(PULSARC_ERR_AUTH_PROVIDER,
                    "still authenticating after %d requests (HTTP %ld to the last)", lk->requests,
                    a->status);
    }
    if (r == PULSARC_OK)
        r = lines_of(&d, &header);
    if (r != PULSARC_OK) {
        fail_lookup(lk, r);
        return true;
    }
    PC_DEBUG(lk->rt->log, "HTTP %s of %s via %s:%d: status %ld, the request goes again",
             what_of_lookup(lk), lk->name.full, lk->service.host, lk->service.port, a->status);
    get(lk, header, true);
    return true;
}

/* Started on a cluster the client has left since (net/service_provider.h): its answer
 * names that cluster's brokers, which must not get the new one's credentials, and the new
 * cluster's provider is not prepared for it. Like a dropped connection: the producer
 * looks up again, on the new cluster. True when it finished the lookup so. */
static bool left_behind(http_lookup_t *lk)
{
    if (lk->switches == lk->rt->cluster_switches)
        return false;
    pc_set_detail("the client switched to another cluster during the lookup");
    finish(lk, PULSARC_ERR_CONNECTION_CLOSED, NULL, 0);
    return true;
}

static void on_auth_ready(pc_auth_wait_t *w, pulsarc_result res)
{
    http_lookup_t *lk = w->ctx;
    if (left_behind(lk))
        return;
    if (res != PULSARC_OK) /* the detail names the provider's trouble */
        finish(lk, res, NULL, 0);
    else
        send_request(lk);
}

/* Before each request, as before each CONNECT: the provider makes its credentials ready
 * (at once, or once an OAuth2 token has been fetched or renewed). */
static void prepare_request(http_lookup_t *lk)
{
    if (lk->rt->auth)
        pc_auth_prepare(lk->rt->auth, &lk->auth_wait, on_auth_ready, lk);
    else
        send_request(lk);
}

/* The broker's own words, for the detail: Pulsar's REST errors are {"reason": "..."}. */
static void server_reason(const char *body, size_t len, char *out, size_t cap)
{
    out[0] = '\0';
    json_t *root = json_loadb(body, len, 0, NULL);
    const char *reason = json_string_value(json_object_get(root, "reason"));
    if (reason)
        snprintf(out, cap, ": %.300s", reason);
    else if (len > 0 && !root)
        snprintf(out, cap, ": %.*s", (int)(len > 200 ? 200 : len), body);
    json_decref(root);
}

/* An HTTP error status as a named result: authentication and authorization are terminal,
 * a missing topic or namespace fails creation, a server error is retried. */
static pulsarc_result status_result(long status)
{
    switch (status) {
    case 401:
        return PULSARC_ERR_BROKER_AUTHENTICATION;
    case 403:
        return PULSARC_ERR_BROKER_AUTHORIZATION;
    case 404:
        return PULSARC_ERR_BROKER_TOPIC_NOT_FOUND;
    case 429:
        return PULSARC_ERR_BROKER_TOO_MANY_REQUESTS;
    default:
        return status >= 500 ? PULSARC_ERR_BROKER_SERVICE_NOT_READY : PULSARC_ERR_BROKER_UNKNOWN;
    }
}

static const char *what_of(const pc_http_lookup_query_t *q)
{
    return q->partitions ? "partition metadata" : "lookup";
}

static pulsarc_result parse_partitions(const pc_http_lookup_query_t *q, json_t *root, int *out)
{
    json_t *v = json_object_get(root, "partitions");
    if (!json_is_integer(v))
        return pc_fail(PULSARC_ERR_PROTOCOL, "partition metadata of %s has no \"partitions\"",
                       q->topic);
    json_int_t n = json_integer_value(v);
    /* Each partition costs a producer: no real topic has more than this. */
    if (n < 0 || n > PC_MAX_PARTITIONS)
        return pc_fail(PULSARC_ERR_PROTOCOL,
                       "partition metadata of %s claims %lld partitions "
                       "(at most %d)",
                       q->topic, (long long)n, PC_MAX_PARTITIONS);
    *out = (int)n;
    return PULSARC_OK;
}

/* The broker to connect to: brokerUrlTls (pulsar+ssl://) when the service URL is https,
 * which never falls back to plain text; brokerUrl (pulsar://) otherwise. */
static pulsarc_result parse_broker(const pc_http_lookup_query_t *q, json_t *root,
                                   pc_host_port_t *out)
{
    bool want_tls = q->tls;
    const char *url = json_string_value(
        json_object_get(root, want_tls ? "brokerUrlTls" : "brokerUrl"));
    /* Brokers also write the TLS address as "brokerUrlSsl" (a getter of the same field),
     * and some leave brokerUrlTls out. */
    if (want_tls && (!url || !*url))
        url = json_string_value(json_object_get(root, "brokerUrlSsl"));
    if (want_tls && (!url || !*url))
        return pc_fail(PULSARC_ERR_PROTOCOL,
                       "the lookup answer for %s gives no TLS address "
                       "(brokerUrlTls) though the service URL is https://: is "
                       "brokerServicePortTls set on the broker?",
                       q->topic);
    bool tls = false;
    if (!url || pc_broker_url_parse(url, out, &tls) != 0 || tls != want_tls)
        return pc_fail(PULSARC_ERR_PROTOCOL,
                       "HTTP lookup of %s answered with a bad broker URL "
                       "\"%.200s\"%s",
                       q->topic, url ? url : "",
                       want_tls && !tls ? " (expected pulsar+ssl://)" : "");
    return PULSARC_OK;
}

pulsarc_result pc_http_lookup_judge(const pc_http_lookup_query_t *q, long status, const char *body,
                                    size_t len, pc_host_port_t *broker, int *partitions)
{
    *partitions = 0;
    if (status != 200) {
        char reason[400];
        server_reason(body, len, reason, sizeof reason);
        return pc_fail(status_result(status), "HTTP %s of %s via %s:%d: status %ld%s", what_of(q),
                       q->topic, q->via_host, q->via_port, status, reason);
    }
    json_error_t jerr;
    json_t *root = json_loadb(body, len, 0, &jerr);
    pulsarc_result res;
    if (!json_is_object(root))
        res = pc_fail(PULSARC_ERR_PROTOCOL,
                      "HTTP %s of %s: the answer is not a JSON object "
                      "(%s)",
                      what_of(q), q->topic, root ? "another JSON value" : jerr.text);
    else if (q->partitions)
        res = parse_partitions(q, root, partitions);
    else
        res = parse_broker(q, root, broker);
    json_decref(root);
    return res;
}

static void on_answer(pulsarc_result res, const pc_http_answer_t *a, void *ctx)
{
    http_lookup_t *lk = ctx;
    if (left_behind(lk))
        return;
    if (res != PULSARC_OK) {
        if (!fail_over(lk, res))
            finish(lk, res, NULL, 0);
        return;
    }
    if (lk->xchg && exchange_took(lk, a))
        return;
    long status = a->status;
    const char *body = a->body;
    size_t len = a->len;
    pc_http_lookup_query_t q = { .topic = lk->name.full,
                                 .via_host = lk->service.host,
                                 .via_port = lk->service.port,
                                 .partitions = lk->reply.partitions,
                                 .tls = lk->rt->service->tls };
    pc_host_port_t broker;
    int partitions;
    res = pc_http_lookup_judge(&q, status, body, len, &broker, &partitions);
    if (res != PULSARC_OK && pc_lookup_no_such_listener(lk->rt, body, len))
        res = pc_lookup_listener_missing(lk->rt, &lk->service);
    finish(lk, res, res == PULSARC_OK ? &broker : NULL, partitions);
}

static void start(pc_runtime_t *rt, const char *topic, const pc_lookup_reply_t *reply)
{
    http_lookup_t *lk = calloc(1, sizeof *lk);
    if (!lk) {
        pc_set_detail("out of memory");
        pc_lookup_answer(reply, PULSARC_ERR_NO_MEMORY, NULL, NULL, 0);
        return;
    }
    lk->rt = rt;
    lk->reply = *reply;
    char err[256];
    if (pc_topic_name_parse(topic, &lk->name, err, sizeof err) != 0) {
        pc_fail(PULSARC_ERR_INVALID_TOPIC, "topic \"%.200s\": %s", topic, err);
        finish(lk, PULSARC_ERR_INVALID_TOPIC, NULL, 0);
        return;
    }
    lk->service = pc_next_service_host(rt);
    lk->hosts_tried = 1;
    lk->switches = rt->cluster_switches;
    prepare_request(lk);
}

void pc_http_lookup_topic(pc_runtime_t *rt, const char *topic, pc_lookup_cb cb, void *ctx)
{
    start(rt, topic, &(pc_lookup_reply_t){ .lookup_cb = cb, .ctx = ctx });
}

void pc_http_lookup_partitions(pc_runtime_t *rt, const char *topic, pc_partitions_cb cb, void *ctx)
{
    start(rt, topic, &(pc_lookup_reply_t){ .partitions = true, .partitions_cb = cb, .ctx = ctx });
}
