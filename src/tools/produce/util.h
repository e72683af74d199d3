/*
 * What every file of pulsarc-produce uses: the program's name and exit statuses,
 * allocation that cannot fail (running out of memory ends the run), usage errors, the
 * error detail of the last pulsarc call, and the clock.
 */
#ifndef PULSARC_PRODUCE_UTIL_H
#define PULSARC_PRODUCE_UTIL_H

#include <stddef.h>

#define PROG "pulsarc-produce"

enum exit_status {
    EXIT_ALL_SENT = 0,
    EXIT_SOME_FAILED = 1,
    EXIT_USAGE = 2,
};

/* The tool cannot do anything useful after running out of memory: say so and stop. */
_Noreturn void out_of_memory(void);

void *xrealloc(void *p, size_t size);

/* A NUL-terminated copy of len bytes: usable as a payload and, without inner NULs, as a
 * string. */
char *xmemdup(const void *data, size_t len);

/* Make room for one more element in a growing array. */
void *grow(void *items, size_t *cap, size_t count, size_t elem_size);

/* Prints the message and a pointer to --help, then exits with EXIT_USAGE. */
_Noreturn void usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* pulsarc_last_error_detail() is valid only until the next pulsarc call on the thread,
 * and describing the result is one: callers copy the detail first. */
#define DETAIL_MAX 512

void copy_error_detail(char detail[DETAIL_MAX]);

/* Monotonic seconds. */
double now_seconds(void);

#endif
