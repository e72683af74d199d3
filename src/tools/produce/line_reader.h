/*
 * Standard input, one message a line (line_reader.c), read as it arrives so that
 * `tail -f log | pulsarc-produce --stdin` publishes lines as they come.
 */
#ifndef PULSARC_PRODUCE_LINE_READER_H
#define PULSARC_PRODUCE_LINE_READER_H

#include <stdbool.h>

#include "payload.h"

/* Calls handle for each line of standard input, without its '\n' (a last line without
 * one counts too), until handle returns false, the input ends or sending stops. With a
 * key_separator (NULL: none), a line "KEY<SEP>PAYLOAD" has the key KEY. The payload
 * lives in the reader's buffer until handle returns. */
void for_each_stdin_line(const char *key_separator,
                         bool (*handle)(const struct payload *p, void *ctx), void *ctx);

#endif
