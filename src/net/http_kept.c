/* The answer headers a GET keeps for its caller (http.h, pc_http_kept_t): curl hands each
 * header line to http.c as the server sent it, and only the names the caller asked for
 * are kept, each at most once, as printable ASCII of bounded length. Everything here comes
 * from the network: a line may be cut short, hold a NUL, be folded, or repeat a name. Pure
 * (no curl, no loop), so the fuzz target feeds it directly. */
#include <openssl/crypto.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "net/http.h"

void pc_http_kept_clear(pc_http_kept_t *k)
{
    for (int i = 0; i < PC_HTTP_KEEP_MAX; i++) {
        if (k->values[i]) {
            OPENSSL_cleanse(k->values[i], strlen(k->values[i]));
            free(k->values[i]);
        }
        k->values[i] = NULL;
    }
    k->bad = 0;
    k->last = 0;
}

static bool is_space(char c)
{
    return c == ' ' || c == '\t';
}

/* Printable ASCII only (and the tab inside a value): no NUL, no control character, no
 * byte above 0x7e. */
static bool printable(const char *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)v[i];
        if ((c < 0x20 && c != '\t') || c > 0x7e)
            return false;
    }
    return true;
}

static int index_of(const char *const *keep, const char *name, size_t n)
{
    for (int i = 0; keep && keep[i] && i < PC_HTTP_KEEP_MAX; i++)
        if (strlen(keep[i]) == n && strncasecmp(keep[i], name, n) == 0)
            return i;
    return -1;
}

static void refuse(pc_http_kept_t *k, int i)
{
    if (k->values[i]) {
        OPENSSL_cleanse(k->values[i], strlen(k->values[i]));
        free(k->values[i]);
        k->values[i] = NULL;
    }
    k->bad |= 1u << i;
}

int pc_http_keep_line(pc_http_kept_t *k, const char *const *keep, const char *line, size_t len)
{
    int prev = k->last - 1;
    k->last = 0;
    /* The line without its end (curl passes "\r\n", a server may send "\n" alone). */
    while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
        len--;
    if (len >= 5 && memcmp(line, "HTTP/", 5) == 0) { /* a new answer begins */
        pc_http_kept_clear(k);
        return 0;
    }
    if (len == 0)
        return 0;
    if (is_space(line[0])) { /* obsolete folding: the line continues the one before */
        if (prev >= 0)
            refuse(k, prev);
        return 0;
    }
    const char *colon = memchr(line, ':', len);
    if (!colon)
        return 0; /* not a header line (nothing a caller reads) */
    size_t name_len = (size_t)(colon - line);
    int i = index_of(keep, line, name_len);
    if (i < 0)
        return 0;
    k->last = i + 1;
    const char *v = colon + 1;
    size_t n = len - name_len - 1;
    while (n > 0 && is_space(*v)) {
        v++;
        n--;
    }
    while (n > 0 && is_space(v[n - 1]))
        n--;
    if ((k->bad & (1u << i)) || k->values[i] || n > PC_HTTP_KEPT_VALUE_MAX || !printable(v, n)) {
        refuse(k, i); /* twice, too long or not plain text: neither copy counts */
        return 0;
    }
    char *copy = malloc(n + 1);
    if (!copy)
        return -1;
    memcpy(copy, v, n);
    copy[n] = '\0';
    k->values[i] = copy;
    return 0;
}
