#include "perf_admin.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "net/curl_lib.h"

/* An answer is read up to this size: error messages and the metadata are small. */
#define MAX_BODY (64 * 1024)
#define CONNECT_TIMEOUT_MS 10000L
#define REQUEST_TIMEOUT_MS 30000L

int perf_admin_init(char *err, size_t err_len)
{
    if (pc_curl_lib())
        return 0;
    snprintf(err, err_len, "%s", pulsarc_last_error_detail());
    return -1;
}

typedef struct body {
    char data[MAX_BODY + 1];
    size_t len;
} body_t;

static size_t on_body(char *ptr, size_t size, size_t n, void *ctx)
{
    body_t *b = ctx;
    size_t len = size * n, room = MAX_BODY - b->len;
    memcpy(b->data + b->len, ptr, len < room ? len : room);
    b->len += len < room ? len : room;
    b->data[b->len] = '\0';
    return len; /* the rest is dropped, not an error */
}

/* Up to 200 printable characters of an answer, for an error message. */
static void excerpt(const body_t *b, char *out, size_t out_len)
{
    size_t n = 0;
    for (size_t i = 0; i < b->len && n + 1 < out_len && n < 200; i++)
        out[n++] = isprint((unsigned char)b->data[i]) ? b->data[i] : ' ';
    out[n] = '\0';
}

/* "{admin}/admin/v2/{domain}/{tenant}/{ns}/{name}/partitions", each part escaped. */
static int topic_path(CURL *c, const char *admin_url, const char *topic, char *out, size_t out_len,
                      char *err, size_t err_len)
{
    const char *domain = "persistent", *rest = topic;
    size_t domain_len = strlen(domain);
    const char *sep = strstr(topic, "://");
    if (sep) {
        domain = topic;
        domain_len = (size_t)(sep - topic);
        rest = sep + 3;
    }
    char tenant[256] = "public", ns[256] = "default";
    const char *name = rest;
    const char *s1 = strchr(rest, '/');
    if (sep || s1) {
        const char *s2 = s1 ? strchr(s1 + 1, '/') : NULL;
        if (!s1 || !s2 || (size_t)(s1 - rest) >= sizeof tenant ||
            (size_t)(s2 - s1 - 1) >= sizeof ns || !s2[1]) {
            snprintf(err, err_len, "topic \"%s\" is not domain://tenant/namespace/name", topic);
            return -1;
        }
        snprintf(tenant, sizeof tenant, "%.*s", (int)(s1 - rest), rest);
        snprintf(ns, sizeof ns, "%.*s", (int)(s2 - s1 - 1), s1 + 1);
        name = s2 + 1;
    }
    char *e_tenant = pc_curl.easy_escape(c, tenant, 0), *e_ns = pc_curl.easy_escape(c, ns, 0);
    char *e_name = pc_curl.easy_escape(c, name, 0);
    int n = -1;
    if (e_tenant && e_ns && e_name) {
        size_t base = strlen(admin_url);
        while (base && admin_url[base - 1] == '/')
            base--;
        n = snprintf(out, out_len, "%.*s/admin/v2/%.*s/%s/%s/%s/partitions", (int)base, admin_url,
                     (int)domain_len, domain, e_tenant, e_ns, e_name);
    }
    pc_curl.free(e_tenant);
    pc_curl.free(e_ns);
    pc_curl.free(e_name);
    if (n < 0 || (size_t)n >= out_len) {
        snprintf(err, err_len, "topic name too long for the admin URL");
        return -1;
    }
    return 0;
}

/* One request; body_in NULL means GET. Returns the HTTP status, or -1 with err set. */
static long request(CURL *c, const char *url, const char *body_in, body_t *answer, char *err,
                    size_t err_len)
{
    pc_curl.easy_reset(c);
    struct curl_slist *headers = pc_curl.slist_append(NULL, "Content-Type: application/json");
    answer->len = 0;
    answer->data[0] = '\0';
    pc_curl.easy_setopt(c, CURLOPT_URL, url);
    pc_curl.easy_setopt(c, CURLOPT_HTTPHEADER, headers);
    pc_curl.easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    pc_curl.easy_setopt(c, CURLOPT_WRITEDATA, answer);
    pc_curl.easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, CONNECT_TIMEOUT_MS);
    pc_curl.easy_setopt(c, CURLOPT_TIMEOUT_MS, REQUEST_TIMEOUT_MS);
    pc_curl.easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    pc_curl.easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    if (body_in) {
        pc_curl.easy_setopt(c, CURLOPT_CUSTOMREQUEST, "PUT");
        pc_curl.easy_setopt(c, CURLOPT_POSTFIELDS, body_in);
    }
    CURLcode rc = pc_curl.easy_perform(c);
    pc_curl.slist_free_all(headers);
    long status = -1;
    if (rc != CURLE_OK)
        snprintf(err, err_len, "%s: %s%s", url, pc_curl.easy_strerror(rc),
                 rc == CURLE_COULDNT_CONNECT
                     ? " (pulsarc-null-broker has no admin API: give it --partitions N instead)"
                     : "");
    else
        pc_curl.easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    return status;
}

/* The partition count of an existing topic (GET .../partitions), or -1 with err set. */
static long existing_partitions(CURL *c, const char *url, body_t *answer, char *err, size_t err_len)
{
    long status = request(c, url, NULL, answer, err, err_len);
    if (status < 0)
        return -1;
    json_t *doc = status == 200 ? json_loadb(answer->data, answer->len, 0, NULL) : NULL;
    json_t *n = doc ? json_object_get(doc, "partitions") : NULL;
    long partitions = json_is_integer(n) ? (long)json_integer_value(n) : -1;
    json_decref(doc);
    if (partitions < 0) {
        char text[256];
        excerpt(answer, text, sizeof text);
        snprintf(err, err_len, "GET %s: HTTP %ld: %s", url, status, text);
    }
    return partitions;
}

perf_admin_outcome_t perf_admin_create_partitioned(const char *admin_url, const char *topic,
                                                   int partitions, char *err, size_t err_len)
{
    CURL *c = pc_curl.easy_init();
    body_t *answer = malloc(sizeof *answer);
    char url[2048];
    perf_admin_outcome_t out = PERF_ADMIN_FAILED;
    if (!c || !answer) {
        snprintf(err, err_len, "out of memory");
        goto done;
    }
    if (topic_path(c, admin_url, topic, url, sizeof url, err, err_len) != 0)
        goto done;
    char count[16];
    snprintf(count, sizeof count, "%d", partitions);
    long status = request(c, url, count, answer, err, err_len);
    if (status < 0)
        goto done;
    if (status == 200 || status == 204) {
        out = PERF_ADMIN_CREATED;
    } else if (status == 409) {
        long have = existing_partitions(c, url, answer, err, err_len);
        if (have == partitions)
            out = PERF_ADMIN_EXISTED;
        else if (have >= 0)
            snprintf(err, err_len, "%s exists with %ld partitions, not %d", topic, have,
                     partitions);
    } else {
        char text[256];
        excerpt(answer, text, sizeof text);
        snprintf(err, err_len, "PUT %s: HTTP %ld: %s", url, status, text);
    }
done:
    free(answer);
    if (c)
        pc_curl.easy_cleanup(c);
    return out;
}
