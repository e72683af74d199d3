/* Standard input, split into lines as it arrives (line_reader.h). */
#include "line_reader.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stop.h"
#include "util.h"

/* Standard input, read with read(2): stdio could hold complete lines in its buffer,
 * where polling the descriptor cannot see them. */
struct line_reader {
    char *buf;
    size_t cap;
    size_t start; /* the unread bytes are buf[start, start + len) */
    size_t len;
    size_t scanned; /* leading unread bytes known to hold no '\n' */
    bool eof;
};

#define LINE_READER_CHUNK (64 * 1024)

static void line_reader_init(struct line_reader *r)
{
    *r = (struct line_reader){ .buf = xrealloc(NULL, LINE_READER_CHUNK), .cap = LINE_READER_CHUNK };
}

/* Appends what standard input has to the unread bytes, after moving them to the start of
 * the buffer, and doubling it when they fill it (a long line). */
static void line_reader_fill(struct line_reader *r)
{
    if (r->start > 0) {
        memmove(r->buf, r->buf + r->start, r->len);
        r->start = 0;
    }
    if (r->len == r->cap) {
        r->cap *= 2;
        r->buf = xrealloc(r->buf, r->cap);
    }
    ssize_t n = read(STDIN_FILENO, r->buf + r->len, r->cap - r->len);
    if (n > 0) {
        r->len += (size_t)n;
    } else if (n == 0) {
        r->eof = true;
    } else if (errno != EINTR && errno != EAGAIN) {
        fprintf(stderr, PROG ": cannot read standard input: %s\n", strerror(errno));
        r->eof = true;
    }
}

/* The next line without its '\n' (a last line without one counts too), valid until the
 * next call. Returns false at the end of input, or when sending stops while it waits. */
static bool next_line(struct line_reader *r, char **line, size_t *len)
{
    for (;;) {
        char *unread = r->buf + r->start;
        char *nl = memchr(unread + r->scanned, '\n', r->len - r->scanned);
        if (nl || (r->eof && r->len > 0)) {
            *line = unread;
            *len = nl ? (size_t)(nl - unread) : r->len;
            size_t used = *len + (nl != NULL);
            r->start += used;
            r->len -= used;
            r->scanned = 0;
            return true;
        }
        r->scanned = r->len;
        if (r->eof || !wait_for(STDIN_FILENO, NULL))
            return false;
        line_reader_fill(r);
    }
}

/* With --key-separator, a line "KEY<SEP>PAYLOAD" split at the first SEP, in place: the
 * separator's first byte becomes the key's terminator. Other lines are all payload. */
static struct payload split_line(char *line, size_t len, const char *sep)
{
    struct payload p = { line, len, NULL, false, false, 0 };
    if (!sep)
        return p;
    size_t sep_len = strlen(sep);
    char *at = memmem(line, len, sep, sep_len);
    if (!at)
        return p;
    *at = '\0';
    p.key = line;
    p.data = at + sep_len;
    p.len = len - (size_t)(p.data - line);
    return p;
}

void for_each_stdin_line(const char *key_separator,
                         bool (*handle)(const struct payload *p, void *ctx), void *ctx)
{
    struct line_reader r;
    line_reader_init(&r);
    char *line;
    size_t len;
    while (next_line(&r, &line, &len)) {
        struct payload p = split_line(line, len, key_separator);
        if (!handle(&p, ctx))
            break;
    }
    free(r.buf);
}
