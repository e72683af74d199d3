/* Topic names, following the Java client's TopicName rules where they are defined and
 * stricter where Java would let a name through that the broker or other clients choke on:
 *
 *  - short forms "<topic>" and "<tenant>/<namespace>/<topic>" become persistent:// names
 *    in public/default or in the given namespace; other short forms are errors;
 *  - the domain is persistent or non-persistent (matched case-insensitively, as Java does,
 *    and written back in lower case);
 *  - tenant and namespace are non-empty and use only [A-Za-z0-9_=:.-], Java's NamedEntity
 *    alphabet;
 *  - the local name is anything non-empty without '/': a further '/' would make Java read
 *    the name as a legacy v1 name tenant/cluster/namespace/topic, which we refuse since
 *    brokers have long stopped creating cluster-qualified namespaces;
 *  - unlike Java we also refuse invalid UTF-8 and control characters anywhere (the name
 *    travels as a protobuf string) and a local name made only of whitespace;
 *  - "-partition-N" is read exactly as Java's getPartitionIndex: N is a canonical
 *    non-negative int (no sign, no leading zero, no overflow), otherwise the name is simply
 *    not a partition. */
#include "common/topic_name.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define PARTITION_SUFFIX "-partition-"

static int fail(char *err, size_t errlen, const char *topic, const char *fmt, ...)
{
    if (err && errlen > 0) {
        char why[192];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, sizeof why, fmt, ap);
        va_end(ap);
        if (topic)
            snprintf(err, errlen, "invalid topic name '%.200s': %s", topic, why);
        else
            snprintf(err, errlen, "invalid topic name: %s", why);
    }
    return -1;
}

/* Well-formed UTF-8 (shortest form, no surrogates, at most U+10FFFF) and no ASCII control
 * characters. Returns NULL or what is wrong. */
static const char *check_text(const char *s)
{
    const uint8_t *p = (const uint8_t *)s;
    while (*p) {
        uint8_t b = *p;
        if (b < 0x80) {
            if (b < 0x20 || b == 0x7F)
                return "contains a control character";
            p++;
            continue;
        }
        size_t n;
        uint32_t cp, min;
        if (b >= 0xC2 && b <= 0xDF) {
            n = 2, cp = b & 0x1F, min = 0x80;
        } else if (b >= 0xE0 && b <= 0xEF) {
            n = 3, cp = b & 0x0F, min = 0x800;
        } else if (b >= 0xF0 && b <= 0xF4) {
            n = 4, cp = b & 0x07, min = 0x10000;
        } else {
            return "is not valid UTF-8";
        }
        for (size_t i = 1; i < n; i++) {
            if ((p[i] & 0xC0) != 0x80) /* also stops at the terminating NUL */
                return "is not valid UTF-8";
            cp = (cp << 6) | (p[i] & 0x3F);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return "is not valid UTF-8";
        p += n;
    }
    return NULL;
}

static int is_named_entity_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-' || c == '=' || c == ':' || c == '.';
}

/* Copy a tenant or namespace s[0..len) into dst after checking it. */
static int take_entity(const char *topic, const char *what, const char *s, size_t len, char *dst,
                       size_t dstlen, char *err, size_t errlen)
{
    if (len == 0)
        return fail(err, errlen, topic, "empty %s", what);
    if (len >= dstlen)
        return fail(err, errlen, topic, "%s longer than %zu bytes", what, dstlen - 1);
    for (size_t i = 0; i < len; i++) {
        if (is_named_entity_char(s[i]))
            continue;
        unsigned char c = (unsigned char)s[i];
        if (c > 0x20 && c < 0x7F)
            return fail(err, errlen, topic,
                        "%s may only contain letters, digits and _ - = : . (found '%c')", what, c);
        return fail(err, errlen, topic,
                    "%s may only contain letters, digits and _ - = : . (found byte 0x%02X)", what,
                    c);
    }
    memcpy(dst, s, len);
    dst[len] = '\0';
    return 0;
}

static char ascii_lower(char c)
{
    return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

/* Java's rule: the text after the last "-partition-" must be a canonical int >= 0. */
static int partition_of(const char *local)
{
    const char *found = NULL;
    for (const char *p = strstr(local, PARTITION_SUFFIX); p; p = strstr(p + 1, PARTITION_SUFFIX))
        found = p;
    if (!found)
        return -1;
    const char *d = found + strlen(PARTITION_SUFFIX);
    if (*d == '\0' || (d[0] == '0' && d[1] != '\0'))
        return -1;
    long v = 0;
    for (; *d; d++) {
        if (*d < '0' || *d > '9')
            return -1;
        v = v * 10 + (*d - '0');
        if (v > INT32_MAX)
            return -1;
    }
    return (int)v;
}

/* The domain ("persistent://..." or a short name, which implies persistent and, without
 * any '/', the public/default namespace). Returns where the rest of the name starts, or
 * NULL after recording why not. */
static const char *parse_domain(const char *topic, pc_topic_name_t *out, char *err, size_t errlen)
{
    const char *sep = strstr(topic, "://");
    if (!sep) {
        size_t slashes = 0;
        for (const char *p = topic; *p; p++)
            slashes += *p == '/';
        if (slashes != 0 && slashes != 2) {
            fail(err, errlen, topic,
                 "a short name must be '<topic>' or '<tenant>/<namespace>/<topic>'");
            return NULL;
        }
        strcpy(out->domain, "persistent");
        if (slashes == 0) {
            strcpy(out->tenant, "public");
            strcpy(out->ns, "default");
        }
        return topic;
    }
    size_t dlen = (size_t)(sep - topic);
    static const char *const domains[] = { "persistent", "non-persistent" };
    for (size_t i = 0; i < 2; i++) {
        if (dlen != strlen(domains[i]))
            continue;
        size_t k = 0;
        while (k < dlen && ascii_lower(topic[k]) == domains[i][k])
            k++;
        if (k == dlen) {
            strcpy(out->domain, domains[i]);
            return sep + 3;
        }
    }
    fail(err, errlen, topic, "unknown domain '%.*s' (expected persistent:// or non-persistent://)",
         (int)(dlen > 32 ? 32 : dlen), topic);
    return NULL;
}

int pc_topic_name_parse(const char *topic, pc_topic_name_t *out, char *err, size_t errlen)
{
    if (err && errlen > 0)
        err[0] = '\0';
    if (!out)
        return fail(err, errlen, NULL, "no output");
    memset(out, 0, sizeof *out);
    out->partition = -1;
    if (!topic)
        return fail(err, errlen, NULL, "NULL");
    if (topic[0] == '\0')
        return fail(err, errlen, NULL, "empty");
    if (strlen(topic) >= sizeof out->full)
        return fail(err, errlen, NULL, "longer than %zu bytes", sizeof out->full - 1);
    const char *why = check_text(topic);
    if (why)
        return fail(err, errlen, topic, "%s", why);

    const char *rest = parse_domain(topic, out, err, errlen);
    if (!rest)
        return -1;

    const char *local = rest;
    if (out->tenant[0] == '\0') {
        const char *s1 = strchr(rest, '/');
        const char *s2 = s1 ? strchr(s1 + 1, '/') : NULL;
        if (!s2)
            return fail(err, errlen, topic, "expected <domain>://<tenant>/<namespace>/<topic>");
        if (take_entity(topic, "tenant", rest, (size_t)(s1 - rest), out->tenant, sizeof out->tenant,
                        err, errlen) != 0 ||
            take_entity(topic, "namespace", s1 + 1, (size_t)(s2 - s1 - 1), out->ns, sizeof out->ns,
                        err, errlen) != 0)
            return -1;
        local = s2 + 1;
    }

    if (local[0] == '\0')
        return fail(err, errlen, topic, "empty topic");
    if (strchr(local, '/'))
        return fail(err, errlen, topic,
                    "too many '/': legacy names <tenant>/<cluster>/<namespace>/<topic> are "
                    "not supported and a topic may not contain '/'");
    size_t llen = strlen(local);
    if (llen >= sizeof out->local)
        return fail(err, errlen, topic, "topic longer than %zu bytes", sizeof out->local - 1);
    size_t blank = 0;
    while (blank < llen && is_space(local[blank]))
        blank++;
    if (blank == llen)
        return fail(err, errlen, topic, "topic is only whitespace");
    memcpy(out->local, local, llen + 1);

    int n = snprintf(out->full, sizeof out->full, "%s://%s/%s/%s", out->domain, out->tenant,
                     out->ns, out->local);
    if (n < 0 || (size_t)n >= sizeof out->full)
        return fail(err, errlen, topic, "full name longer than %zu bytes", sizeof out->full - 1);
    out->partition = partition_of(out->local);
    return 0;
}

int pc_topic_name_partition(const pc_topic_name_t *base, int i, char *out, size_t outlen)
{
    if (!base || !out || outlen == 0 || i < 0 || base->partition != -1 || base->full[0] == '\0')
        return -1;
    /* The partition's own name must still parse: its local part has to fit as well. */
    char suffix[32];
    int sl = snprintf(suffix, sizeof suffix, PARTITION_SUFFIX "%d", i);
    if (sl < 0 || strlen(base->local) + (size_t)sl >= sizeof base->local)
        return -1;
    int n = snprintf(out, outlen, "%s%s", base->full, suffix);
    if (n < 0 || (size_t)n >= outlen)
        return -1;
    return 0;
}
