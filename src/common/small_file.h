/* Reading a small file whole (a key, a token, a credentials file), with a size cap. */
#ifndef PC_SMALL_FILE_H
#define PC_SMALL_FILE_H

#include <stddef.h>

typedef enum pc_small_file_status {
    PC_SMALL_FILE_OK = 0,
    PC_SMALL_FILE_CANNOT_OPEN, /* *err holds fopen's errno */
    PC_SMALL_FILE_READ_ERROR,
    PC_SMALL_FILE_TOO_LARGE,
    PC_SMALL_FILE_NO_MEMORY,
} pc_small_file_status;

/* Read all of `path` when it holds at most `max` bytes: *text gets a malloc'd copy with a
 * NUL after the last byte, *len its length. The content may be a secret, so the caller
 * wipes it before freeing; on failure nothing is returned and what was read is wiped
 * here. Callers turn the status into their own error code and message. */
pc_small_file_status pc_read_small_file(const char *path, size_t max, char **text, size_t *len,
                                        int *err);

#endif
