/*
 * client_conf — Pulsar's client.conf read into pulsarc client settings (see the header
 * for the format). Two steps: the properties syntax gives (key, value) pairs, then each
 * pair is mapped to a pulsarc setting, a service URL, or a warning.
 */
#include "client_conf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- mapping of client.conf keys ----------------------------------------------------- */

/* Keys whose meaning pulsarc has under the same name. authPluginClassName is the field
 * name Java's ClientConfigurationData uses, so files written for it work too. */
static const struct {
    const char *name;
    const char *key;
} mapped_keys[] = {
    { "authPlugin", "authPlugin" },
    { "authPluginClassName", "authPlugin" },
    { "authParams", "authParams" },
    { "tlsTrustCertsFilePath", "tlsTrustCertsFilePath" },
    { "tlsAllowInsecureConnection", "tlsAllowInsecureConnection" },
    { "tlsEnableHostnameVerification", "tlsEnableHostnameVerification" },
    { "tlsCertificateFilePath", "tlsCertificateFilePath" },
    { "tlsKeyFilePath", "tlsKeyFilePath" },
    { "tlsProtocols", "tlsProtocols" },
    { "tlsCiphers", "tlsCiphers" },
};

/* Keys of Pulsar's stock client.conf that have no pulsarc meaning. Set to their stock
 * value they change nothing, so they pass silently; otherwise they get a warning. */
static const struct {
    const char *name;
    const char *stock; /* the value that passes silently besides "" */
    const char *why;
} ignored_keys[] = {
    { "useTls", "false", "TLS follows the service URL's scheme (pulsar+ssl://); ignored" },
    { "tlsTrustStoreType", "JKS", "KeyStore TLS is not supported; ignored" },
    { "tlsTrustStorePath", "", "KeyStore TLS is not supported; ignored" },
    { "tlsTrustStorePassword", "", "KeyStore TLS is not supported; ignored" },
    { "tlsKeyStoreType", "JKS", "KeyStore TLS is not supported; ignored" },
    { "tlsKeyStorePath", "", "KeyStore TLS is not supported; ignored" },
    { "tlsKeyStorePassword", "", "KeyStore TLS is not supported; ignored" },
    { "webserviceTlsProvider", "", "not used by pulsarc; ignored" },
    { "proxyServiceUrl", "", "connecting through a Pulsar proxy by SNI is not supported; ignored" },
    { "proxyProtocol", "", "connecting through a Pulsar proxy by SNI is not supported; ignored" },
};

static void set_err(char *err, size_t err_len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, err_len, fmt, ap);
    va_end(ap);
}

/* Replaces *slot with a copy of value (NULL for an empty one: "not set"). */
static int set_string(char **slot, const char *value)
{
    free(*slot);
    *slot = NULL;
    if (!*value)
        return 0;
    *slot = strdup(value);
    return *slot ? 0 : -1;
}

static int add_setting(struct client_conf *out, const char *key, const char *value, int line)
{
    struct client_conf_setting *grown = realloc(out->settings,
                                                (out->n_settings + 1) * sizeof *out->settings);
    if (!grown)
        return -1;
    out->settings = grown;
    char *k = strdup(key), *v = strdup(value);
    if (!k || !v) {
        free(k);
        free(v);
        return -1;
    }
    out->settings[out->n_settings++] = (struct client_conf_setting){ k, v, line };
    return 0;
}

/* Applies one key of the file. Returns -1 with err set when the file cannot be used. */
static int map_entry(struct client_conf *out, const char *name, const char *value, int line,
                     client_conf_warn_fn warn, void *warn_ctx, char *err, size_t err_len)
{
    int rc = 0;
    if (strcmp(name, "brokerServiceUrl") == 0 || strcmp(name, "serviceUrl") == 0)
        rc = set_string(&out->broker_service_url, value);
    else if (strcmp(name, "webServiceUrl") == 0)
        rc = set_string(&out->web_service_url, value);
    else if (strcmp(name, "useKeyStoreTls") == 0 && strcmp(value, "true") == 0) {
        /* Ignoring it would leave the user's trust and identity behind: refuse. */
        set_err(err, err_len,
                "line %d: useKeyStoreTls=true: KeyStore TLS is not supported; give PEM files "
                "with tlsTrustCertsFilePath, tlsCertificateFilePath and tlsKeyFilePath",
                line);
        return -1;
    } else if (strcmp(name, "useKeyStoreTls") == 0) {
        /* false or empty: the stock file's value, nothing to do */
    } else {
        for (size_t i = 0; i < sizeof mapped_keys / sizeof mapped_keys[0]; i++)
            if (strcmp(name, mapped_keys[i].name) == 0) {
                rc = *value ? add_setting(out, mapped_keys[i].key, value, line) : 0;
                goto done;
            }
        for (size_t i = 0; i < sizeof ignored_keys / sizeof ignored_keys[0]; i++)
            if (strcmp(name, ignored_keys[i].name) == 0) {
                if (*value && strcmp(value, ignored_keys[i].stock) != 0 && warn)
                    warn(warn_ctx, line, name, ignored_keys[i].why);
                goto done;
            }
        if (warn)
            warn(warn_ctx, line, name, "unknown key; ignored");
    }
done:
    if (rc != 0)
        set_err(err, err_len, "out of memory");
    return rc;
}

/* ---- properties syntax --------------------------------------------------------------- */

static bool is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\f';
}

/* The natural line at *pos (without its terminator: \n, \r or \r\n). */
static bool natural_line(const char *text, size_t len, size_t *pos, const char **start, size_t *n)
{
    if (*pos >= len)
        return false;
    size_t i = *pos;
    while (i < len && text[i] != '\n' && text[i] != '\r')
        i++;
    *start = text + *pos;
    *n = i - *pos;
    if (i < len && text[i] == '\r' && i + 1 < len && text[i + 1] == '\n')
        i++;
    *pos = i < len ? i + 1 : i;
    return true;
}

static void skip_blanks(const char **s, size_t *n)
{
    while (*n > 0 && is_blank(**s)) {
        (*s)++;
        (*n)--;
    }
}

/* An odd number of trailing backslashes: the last one joins the next line. */
static bool continues(const char *s, size_t n)
{
    size_t k = 0;
    while (k < n && s[n - 1 - k] == '\\')
        k++;
    return k % 2 == 1;
}

struct text_buf {
    char *data;
    size_t len, cap;
};

static int buf_append(struct text_buf *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *grown = realloc(b->data, cap);
        if (!grown)
            return -1;
        b->data = grown;
        b->cap = cap;
    }
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
    return 0;
}

/* One code point as UTF-8 (\uXXXX gives at most 0xFFFF: three bytes). */
static char *put_utf8(char *out, unsigned cp)
{
    if (cp < 0x80) {
        *out++ = (char)cp;
    } else if (cp < 0x800) {
        *out++ = (char)(0xC0 | (cp >> 6));
        *out++ = (char)(0x80 | (cp & 0x3F));
    } else {
        *out++ = (char)(0xE0 | (cp >> 12));
        *out++ = (char)(0x80 | ((cp >> 6) & 0x3F));
        *out++ = (char)(0x80 | (cp & 0x3F));
    }
    return out;
}

/* Decodes the escapes of s[0, n) in place (the result is never longer) and terminates
 * it. Returns -1 for a malformed \uXXXX, which Java rejects too. */
static int unescape(char *s, size_t n)
{
    char *out = s;
    for (size_t i = 0; i < n; i++) {
        if (s[i] != '\\' || i + 1 == n) {
            *out++ = s[i];
            continue;
        }
        char c = s[++i];
        if (c == 'u') {
            if (i + 4 >= n) /* fewer than four characters left */
                return -1;
            char hex[5] = { 0 };
            memcpy(hex, s + i + 1, 4);
            char *end;
            unsigned long cp = strtoul(hex, &end, 16);
            if (end != hex + 4 || hex[0] == '+' || hex[0] == '-' || is_blank(hex[0]))
                return -1;
            out = put_utf8(out, (unsigned)cp);
            i += 4;
            continue;
        }
        *out++ = c == 't' ? '\t' : c == 'n' ? '\n' : c == 'r' ? '\r' : c == 'f' ? '\f' : c;
    }
    *out = '\0';
    return 0;
}

/* Splits a logical line into key and value, in place, at the first unescaped '=', ':'
 * or blank (blanks around the separator belong to neither). */
static int split_entry(char *line, size_t n, char **key, char **value)
{
    size_t k = 0;
    while (k < n && line[k] != '=' && line[k] != ':' && !is_blank(line[k]))
        k += line[k] == '\\' && k + 1 < n ? 2 : 1;
    size_t v = k;
    while (v < n && is_blank(line[v]))
        v++;
    if (v < n && (line[v] == '=' || line[v] == ':'))
        v++;
    while (v < n && is_blank(line[v]))
        v++;
    size_t end = n;
    while (end > v && is_blank(line[end - 1]) && !(end >= 2 && line[end - 2] == '\\'))
        end--;
    *key = line;
    *value = line + v;
    if (unescape(line + v, end - v) != 0)
        return -1;
    return unescape(line, k);
}

/* Reads the logical line that starts with first (already past its leading blanks) into
 * b, joining continuation lines. */
static int logical_line(struct text_buf *b, const char *first, size_t n, const char *text,
                        size_t len, size_t *pos, int *line_no)
{
    b->len = 0;
    if (buf_append(b, first, n) != 0)
        return -1;
    while (continues(b->data, b->len)) {
        b->data[--b->len] = '\0';
        const char *next;
        size_t m;
        if (!natural_line(text, len, pos, &next, &m))
            break;
        (*line_no)++;
        skip_blanks(&next, &m);
        if (buf_append(b, next, m) != 0)
            return -1;
    }
    return 0;
}

int client_conf_parse(const char *text, size_t len, struct client_conf *out,
                      client_conf_warn_fn warn, void *warn_ctx, char *err, size_t err_len)
{
    memset(out, 0, sizeof *out);
    struct text_buf b = { 0 };
    size_t pos = 0;
    int line_no = 0, rc = 0;
    const char *s;
    size_t n;
    while (rc == 0 && natural_line(text, len, &pos, &s, &n)) {
        int first = ++line_no;
        skip_blanks(&s, &n);
        if (n == 0 || *s == '#' || *s == '!')
            continue;
        if (logical_line(&b, s, n, text, len, &pos, &line_no) != 0) {
            set_err(err, err_len, "out of memory");
            rc = -1;
            break;
        }
        char *key, *value;
        if (split_entry(b.data, b.len, &key, &value) != 0) {
            set_err(err, err_len, "line %d: malformed \\uXXXX escape", first);
            rc = -1;
        } else {
            rc = map_entry(out, key, value, first, warn, warn_ctx, err, err_len);
        }
    }
    free(b.data);
    return rc;
}

static char *read_file(const char *path, size_t *len, char *err, size_t err_len)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        set_err(err, err_len, "cannot open: %s", strerror(errno));
        return NULL;
    }
    struct text_buf b = { 0 };
    char chunk[4096];
    size_t got;
    while ((got = fread(chunk, 1, sizeof chunk, f)) > 0)
        if (buf_append(&b, chunk, got) != 0) {
            set_err(err, err_len, "out of memory");
            break;
        }
    bool failed = ferror(f) || got > 0;
    if (ferror(f))
        set_err(err, err_len, "cannot read: %s", strerror(errno));
    fclose(f);
    if (failed) {
        free(b.data);
        return NULL;
    }
    *len = b.len;
    return b.data ? b.data : strdup("");
}

int client_conf_load(const char *path, struct client_conf *out, client_conf_warn_fn warn,
                     void *warn_ctx, char *err, size_t err_len)
{
    memset(out, 0, sizeof *out);
    size_t len = 0;
    char *text = read_file(path, &len, err, err_len);
    if (!text)
        return -1;
    int rc = client_conf_parse(text, len, out, warn, warn_ctx, err, err_len);
    free(text);
    return rc;
}

const char *client_conf_service_url(const struct client_conf *conf, char *err, size_t err_len)
{
    /* The binary URL when there is one; else the web service's, looked up over HTTP. */
    if (conf->broker_service_url)
        return conf->broker_service_url;
    if (conf->web_service_url)
        return conf->web_service_url;
    set_err(err, err_len, "the file gives neither brokerServiceUrl nor webServiceUrl");
    return NULL;
}

void client_conf_free(struct client_conf *conf)
{
    for (size_t i = 0; i < conf->n_settings; i++) {
        free(conf->settings[i].key);
        free(conf->settings[i].value);
    }
    free(conf->settings);
    free(conf->broker_service_url);
    free(conf->web_service_url);
    memset(conf, 0, sizeof *conf);
}
