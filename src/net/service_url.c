/* Service URLs as the official clients accept them:
 * "pulsar://host[:port][,host[:port]...][/path]" and the same with "pulsar+ssl://",
 * "http://" or "https://" (the web service, where lookups go over the admin REST API).
 * The scheme is matched case-insensitively; default ports are 6650, 6651, 8080 and 8443
 * (the broker's defaults); an IPv6 address goes in brackets and is stored without them
 * (ready for getaddrinfo). A path, even "/", is ignored, as the C++ and Java clients ignore
 * it for the binary protocol. */
#include "net/service_url.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define PORT_PLAIN 6650
#define PORT_TLS 6651
#define PORT_HTTP 8080
#define PORT_HTTPS 8443

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

static char ascii_lower(char c)
{
    return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

static int scheme_is(const char *s, size_t len, const char *want)
{
    if (len != strlen(want))
        return 0;
    for (size_t i = 0; i < len; i++) {
        if (ascii_lower(s[i]) != want[i])
            return 0;
    }
    return 1;
}

static int is_alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

static int is_hex(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* Parse a decimal port s[0..len): 1..65535, digits only. */
static int parse_port(const char *s, size_t len, int *port)
{
    if (len == 0 || len > 5)
        return -1;
    int v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    if (v < 1 || v > 65535)
        return -1;
    *port = v;
    return 0;
}

/* One "host[:port]" or "[v6][:port]" entry s[0..len). */
static int parse_host(const char *s, size_t len, int default_port, pc_host_port_t *hp, char *err,
                      size_t errlen)
{
    const char *host;
    size_t hlen;
    const char *after; /* what follows the host: "" or ":port" */

    if (len == 0)
        return fail(err, errlen, "empty host in service URL");
    if (s[0] == '[') {
        const char *close = memchr(s, ']', len);
        if (!close)
            return fail(err, errlen, "unterminated '[' in host '%.*s'", (int)len, s);
        host = s + 1;
        hlen = (size_t)(close - host);
        int colons = 0, zone = 0;
        for (size_t i = 0; i < hlen; i++) {
            char c = host[i];
            if (zone) {
                /* Interface scope (fe80::1%eth0): an interface name. */
                if (!is_alnum(c) && c != '_' && c != '-' && c != '.')
                    return fail(err, errlen, "invalid IPv6 zone in host '%.*s'", (int)len, s);
            } else if (c == '%') {
                if (i + 1 == hlen)
                    return fail(err, errlen, "empty IPv6 zone in host '%.*s'", (int)len, s);
                zone = 1;
            } else if (c == ':') {
                colons++;
            } else if (!is_hex(c) && c != '.') {
                return fail(err, errlen, "invalid IPv6 address in host '%.*s'", (int)len, s);
            }
        }
        if (hlen == 0 || colons < 2)
            return fail(err, errlen, "invalid IPv6 address in host '%.*s'", (int)len, s);
        after = close + 1;
    } else {
        const char *colon = memchr(s, ':', len);
        hlen = colon ? (size_t)(colon - s) : len;
        host = s;
        if (colon && memchr(colon + 1, ':', len - hlen - 1))
            return fail(err, errlen, "too many ':' in host '%.*s' (put IPv6 addresses in [])",
                        (int)len, s);
        if (hlen == 0)
            return fail(err, errlen, "empty host in '%.*s'", (int)len, s);
        for (size_t i = 0; i < hlen; i++) {
            char c = host[i];
            if (!is_alnum(c) && c != '-' && c != '.' && c != '_')
                return fail(err, errlen, "invalid character '%c' in host '%.*s'", c, (int)len, s);
        }
        after = s + hlen;
    }

    if (hlen >= sizeof hp->host)
        return fail(err, errlen, "host name longer than %zu bytes", sizeof hp->host - 1);
    size_t alen = len - (size_t)(after - s);
    int port = default_port;
    if (alen > 0) {
        if (after[0] != ':')
            return fail(err, errlen, "unexpected text after host in '%.*s'", (int)len, s);
        if (parse_port(after + 1, alen - 1, &port) != 0)
            return fail(err, errlen, "invalid port in '%.*s' (expected 1..65535)", (int)len, s);
    }
    memcpy(hp->host, host, hlen);
    hp->host[hlen] = '\0';
    hp->port = port;
    return 0;
}

int pc_service_url_parse(const char *url, pc_service_url_t *out, char *err, size_t errlen)
{
    if (err && errlen > 0)
        err[0] = '\0';
    if (!out)
        return fail(err, errlen, "no output");
    memset(out, 0, sizeof *out);
    if (!url || url[0] == '\0')
        return fail(err, errlen, "service URL is empty");

    const char *sep = strstr(url, "://");
    if (!sep)
        return fail(err, errlen,
                    "service URL '%.200s' has no scheme (expected pulsar://, "
                    "pulsar+ssl://, http:// or https://)",
                    url);
    size_t slen = (size_t)(sep - url);
    int default_port;
    if (scheme_is(url, slen, "pulsar")) {
        default_port = PORT_PLAIN;
    } else if (scheme_is(url, slen, "pulsar+ssl")) {
        out->tls = true;
        default_port = PORT_TLS;
    } else if (scheme_is(url, slen, "http")) {
        out->http = true;
        default_port = PORT_HTTP;
    } else if (scheme_is(url, slen, "https")) {
        out->http = out->tls = true;
        default_port = PORT_HTTPS;
    } else {
        return fail(err, errlen,
                    "unknown scheme '%.*s' (expected pulsar://, pulsar+ssl://, http:// or "
                    "https://)",
                    (int)(slen > 32 ? 32 : slen), url);
    }

    const char *auth = sep + 3;
    const char *slash = strchr(auth, '/');
    size_t alen = slash ? (size_t)(slash - auth) : strlen(auth);
    if (alen == 0)
        return fail(err, errlen, "service URL '%.200s' names no host", url);

    const char *p = auth;
    const char *end = auth + alen;
    while (p <= end) {
        const char *comma = memchr(p, ',', (size_t)(end - p));
        const char *stop = comma ? comma : end;
        if (out->n_hosts == PC_SERVICE_URL_MAX_HOSTS)
            return fail(err, errlen, "too many hosts in service URL (at most %d)",
                        PC_SERVICE_URL_MAX_HOSTS);
        if (parse_host(p, (size_t)(stop - p), default_port, &out->hosts[out->n_hosts], err,
                       errlen) != 0) {
            out->n_hosts = 0;
            return -1;
        }
        out->n_hosts++;
        if (!comma)
            break;
        p = comma + 1;
    }
    return 0;
}

int pc_broker_url_parse(const char *url, pc_host_port_t *out, bool *tls)
{
    pc_service_url_t su;
    /* A broker's binary address: an http(s):// URL here would be a web service URL. */
    if (!out || pc_service_url_parse(url, &su, NULL, 0) != 0 || su.n_hosts != 1 || su.http)
        return -1;
    *out = su.hosts[0];
    if (tls)
        *tls = su.tls;
    return 0;
}

int pc_migration_url_parse(const char *url_plain, const char *url_tls, bool want_tls,
                           pc_service_url_t *out, char *err, size_t errlen)
{
    const char *field = want_tls ? "brokerServiceUrlTls" : "brokerServiceUrl";
    const char *url = want_tls ? url_tls : url_plain;
    if (!url || !*url)
        return fail(err, errlen, "it names no %s", field);
    char why[128];
    /* Said in a warning: a URL with user information may hold a password. */
    const char *shown = strchr(url, '@') ? "(not shown: it has an '@')" : url;
    if (pc_service_url_parse(url, out, why, sizeof why) != 0)
        return fail(err, errlen, "its %s \"%s\" is not a service URL (%s)", field, shown,
                    shown == url ? why : "user information");
    if (out->http)
        return fail(err, errlen, "its %s \"%s\" is a web service URL, not a broker's", field,
                    shown);
    if (out->tls != want_tls)
        return fail(err, errlen, "its %s \"%s\" is not a %s URL as this connection needs", field,
                    shown, want_tls ? "pulsar+ssl://" : "pulsar://");
    return 0;
}
