#include "common/safe_text.h"

#include <stddef.h>

/* The length of the well-formed UTF-8 sequence at p (2..4), or 0 (RFC 3629: no overlong
 * forms, no surrogates, nothing above U+10FFFF). C1 controls count as not well-formed. */
static size_t utf8_len(const unsigned char *p)
{
    unsigned char c = p[0];
    size_t n;
    unsigned char lo = 0x80, hi = 0xBF; /* the range of the second byte */
    if (c >= 0xC2 && c <= 0xDF) {
        n = 2;
        if (c == 0xC2)
            lo = 0xA0; /* C2 80..9F: the C1 controls */
    } else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        if (c == 0xE0)
            lo = 0xA0;
        else if (c == 0xED)
            hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        if (c == 0xF0)
            lo = 0x90;
        else if (c == 0xF4)
            hi = 0x8F;
    } else {
        return 0;
    }
    if (p[1] < lo || p[1] > hi)
        return 0;
    for (size_t i = 2; i < n; i++) /* stops at the NUL, which is no continuation byte */
        if (p[i] < 0x80 || p[i] > 0xBF)
            return 0;
    return n;
}

void pc_safe_text(char *s)
{
    if (!s)
        return;
    unsigned char *in = (unsigned char *)s, *out = in;
    while (*in) {
        if (*in >= 0x20 && *in < 0x7F) {
            *out++ = *in++;
            continue;
        }
        size_t n = *in >= 0x80 ? utf8_len(in) : 0;
        if (n == 0) {
            *out++ = '?';
            in++;
            continue;
        }
        while (n--)
            *out++ = *in++;
    }
    *out = '\0';
}
