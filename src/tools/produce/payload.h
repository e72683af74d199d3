/* One message of pulsarc-produce's set: from the command line, a file, a line of
 * standard input or --size. */
#ifndef PULSARC_PRODUCE_PAYLOAD_H
#define PULSARC_PRODUCE_PAYLOAD_H

#include <stdbool.h>
#include <stddef.h>

struct payload {
    char *data;
    size_t len;
    char *key;          /* from a --key-separator line; NULL: the -k key, or none */
    bool from_messages; /* a -m value: --separator may split it */
    bool raw;           /* a file or --size: bytes as they are, never converted */
    size_t key_len;     /* a KeyValue key (converted, may hold NULs) */
};

#endif
