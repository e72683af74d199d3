/* The fuzz targets' check of an invariant: when it does not hold, print why and abort,
 * which libFuzzer reports as a crash together with the input that caused it. */
#ifndef PC_FUZZ_CHECK_H
#define PC_FUZZ_CHECK_H

#include <stdio.h>
#include <stdlib.h>

/* who names the part that checks (it starts the message); then printf's arguments. */
#define FUZZ_CHECK(who, cond, ...)                 \
    do {                                           \
        if (!(cond)) {                             \
            fprintf(stderr, who ": " __VA_ARGS__); \
            fputc('\n', stderr);                   \
            abort();                               \
        }                                          \
    } while (0)

#endif
