#include "common/safe_text.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The length of the well-formed UTF-8 sequence at p (2..4) and its code point, or 0 (RFC
 * 3629: no overlong forms, no surrogates, nothing above U+10FFFF). */
static size_t utf8_decode(const unsigned char *p, uint32_t *cp)
{
    unsigned char c = p[0];
    size_t n;
    unsigned char lo = 0x80, hi = 0xBF; /* the range of the second byte */
    if (c >= 0xC2 && c <= 0xDF) {
        n = 2;
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
    uint32_t v = c & (0xFFu >> (n + 1));
    for (size_t i = 1; i < n; i++) { /* stops at the NUL, which is no continuation byte */
        if (p[i] < 0x80 || p[i] > 0xBF)
            return 0;
        v = v << 6 | (p[i] & 0x3Fu);
    }
    *cp = v;
    return n;
}

/* Characters shown as '?': the C1 controls, the line and paragraph separators (a line
 * break to some viewers), and every format character (Unicode's Cf: bidi embeddings,
 * overrides and isolates, zero-width and invisible characters, the byte order mark, tags,
 * ...), which reorder or hide what a reader sees. Unicode 15.1's Cf, sorted. */
static const struct {
    uint32_t from, to;
} hidden[] = {
    { 0x0080, 0x009F },   { 0x00AD, 0x00AD },   { 0x0600, 0x0605 },   { 0x061C, 0x061C },
    { 0x06DD, 0x06DD },   { 0x070F, 0x070F },   { 0x0890, 0x0891 },   { 0x08E2, 0x08E2 },
    { 0x180E, 0x180E },   { 0x200B, 0x200F },   { 0x2028, 0x202E },   { 0x2060, 0x2064 },
    { 0x2066, 0x206F },   { 0xFEFF, 0xFEFF },   { 0xFFF9, 0xFFFB },   { 0x110BD, 0x110BD },
    { 0x110CD, 0x110CD }, { 0x13430, 0x1343F }, { 0x1BCA0, 0x1BCA3 }, { 0x1D173, 0x1D17A },
    { 0xE0001, 0xE0001 }, { 0xE0020, 0xE007F },
};

static int is_hidden(uint32_t cp)
{
    for (size_t i = 0; i < sizeof hidden / sizeof hidden[0] && cp >= hidden[i].from; i++)
        if (cp <= hidden[i].to)
            return 1;
    return 0;
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
        uint32_t cp = 0;
        size_t n = *in >= 0x80 ? utf8_decode(in, &cp) : 0;
        if (n == 0) {
            *out++ = '?';
            in++;
            continue;
        }
        /* Shown or not, a character keeps its length: one '?' per byte. */
        int show = !is_hidden(cp);
        while (n--) {
            *out++ = show ? *in : '?';
            in++;
        }
    }
    *out = '\0';
}

char *pc_utf8_repaired(const char *s)
{
    const unsigned char *in = (const unsigned char *)(s ? s : "");
    /* At worst every byte becomes three. */
    size_t len = strlen((const char *)in);
    unsigned char *out = malloc(len * 3 + 1), *o = out;
    if (!out)
        return NULL;
    while (*in) {
        uint32_t cp;
        size_t n = *in < 0x80 ? 1 : utf8_decode(in, &cp);
        if (n == 0) {
            memcpy(o, "\xEF\xBF\xBD", 3); /* U+FFFD */
            o += 3;
            in++;
            continue;
        }
        memcpy(o, in, n);
        o += n;
        in += n;
    }
    *o = '\0';
    return (char *)out;
}
