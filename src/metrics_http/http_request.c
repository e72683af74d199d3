/* The request of a /metrics scrape (http_request.h). */
#include "metrics_http/http_request.h"

#include <stdbool.h>
#include <string.h>

/* A visible ASCII byte or a space or tab: what a request line or header may hold. */
static bool text_byte(unsigned char c)
{
    return (c >= 0x20 && c < 0x7f) || c == '\t';
}

/* The request line "METHOD SP TARGET SP HTTP/1.x" of n bytes. */
static pc_http_verdict request_line(const char *s, size_t n)
{
    const char *sp1 = memchr(s, ' ', n);
    if (!sp1 || sp1 == s)
        return PC_HTTP_BAD_REQUEST;
    const char *target = sp1 + 1;
    const char *sp2 = memchr(target, ' ', n - (size_t)(target - s));
    if (!sp2 || sp2 == target)
        return PC_HTTP_BAD_REQUEST;
    const char *version = sp2 + 1;
    size_t vlen = n - (size_t)(version - s);
    if (vlen != 8 || memcmp(version, "HTTP/1.", 7) != 0 || version[7] < '0' || version[7] > '9')
        return PC_HTTP_BAD_REQUEST;
    for (const char *p = s; p < sp1; p++)
        if (*p < 'A' || *p > 'Z')
            return PC_HTTP_BAD_REQUEST;
    size_t mlen = (size_t)(sp1 - s), tlen = (size_t)(sp2 - target);
    if (*target != '/' || memchr(target, ' ', tlen) || memchr(target, '\t', tlen))
        return PC_HTTP_BAD_REQUEST;
    if (mlen != 3 || memcmp(s, "GET", 3) != 0)
        return PC_HTTP_BAD_METHOD;
    bool metrics = tlen >= 8 && memcmp(target, "/metrics", 8) == 0 &&
                   (tlen == 8 || target[8] == '?');
    return metrics ? PC_HTTP_GET_METRICS : PC_HTTP_NOT_FOUND;
}

pc_http_verdict pc_http_request_check(const char *buf, size_t len)
{
    size_t limit = len < PC_METRICS_HTTP_MAX_REQUEST ? len : PC_METRICS_HTTP_MAX_REQUEST;
    pc_http_verdict verdict = PC_HTTP_INCOMPLETE;
    size_t start = 0;
    for (size_t i = 0; i < limit; i++) {
        unsigned char c = (unsigned char)buf[i];
        if (c == '\r') {
            if (i + 1 == limit)
                break; /* the line feed may come next */
            if (buf[i + 1] != '\n')
                return PC_HTTP_BAD_REQUEST;
            size_t n = i - start;
            if (start == 0) {
                verdict = request_line(buf, n);
                if (verdict == PC_HTTP_BAD_REQUEST)
                    return verdict;
            } else if (n == 0) {
                return verdict; /* the empty line: the head is complete */
            } else if (!memchr(buf + start, ':', n) || buf[start] == ':' || buf[start] == ' ' ||
                       buf[start] == '\t') {
                return PC_HTTP_BAD_REQUEST; /* not "Name: value" (nor an obsolete fold) */
            }
            start = ++i + 1;
        } else if (!text_byte(c)) {
            return PC_HTTP_BAD_REQUEST;
        }
    }
    return len >= PC_METRICS_HTTP_MAX_REQUEST ? PC_HTTP_BAD_REQUEST : PC_HTTP_INCOMPLETE;
}
