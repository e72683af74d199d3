/* Helpers shared by the files of pulsarc-produce (util.h). */
#include "util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <pulsarc/pulsarc.h>

_Noreturn void out_of_memory(void)
{
    fprintf(stderr, PROG ": out of memory\n");
    exit(EXIT_SOME_FAILED);
}

void *xrealloc(void *p, size_t size)
{
    void *q = realloc(p, size ? size : 1);
    if (!q)
        out_of_memory();
    return q;
}

char *xmemdup(const void *data, size_t len)
{
    char *copy = xrealloc(NULL, len + 1);
    memcpy(copy, data, len);
    copy[len] = '\0';
    return copy;
}

void *grow(void *items, size_t *cap, size_t count, size_t elem_size)
{
    if (count < *cap)
        return items;
    *cap = *cap ? *cap * 2 : 8;
    return xrealloc(items, *cap * elem_size);
}

_Noreturn void usage_error(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, PROG ": ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry '" PROG " --help' for more information.\n");
    exit(EXIT_USAGE);
}

void copy_error_detail(char detail[DETAIL_MAX])
{
    snprintf(detail, DETAIL_MAX, "%s", pulsarc_last_error_detail());
}

double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}
