/* One bounded reader for the three places that load a small file (a public key, a
 * token, OAuth2 credentials), so that cap, wiping and error handling agree. */
#include "common/small_file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

pc_small_file_status pc_read_small_file(const char *path, size_t max, char **text, size_t *len,
                                        int *err)
{
    *text = NULL;
    *len = 0;
    *err = 0;
    FILE *f = fopen(path, "rb");
    if (!f) {
        *err = errno;
        return PC_SMALL_FILE_CANNOT_OPEN;
    }
    /* One byte more than allowed tells a file at the cap from a larger one. */
    char *buf = malloc(max + 2);
    if (!buf) {
        fclose(f);
        return PC_SMALL_FILE_NO_MEMORY;
    }
    size_t n = fread(buf, 1, max + 1, f);
    int failed = ferror(f);
    fclose(f);
    pc_small_file_status st = failed    ? PC_SMALL_FILE_READ_ERROR
                              : n > max ? PC_SMALL_FILE_TOO_LARGE
                                        : PC_SMALL_FILE_OK;
    if (st != PC_SMALL_FILE_OK) {
        explicit_bzero(buf, n);
        free(buf);
        return st;
    }
    buf[n] = '\0';
    *text = buf;
    *len = n;
    return PC_SMALL_FILE_OK;
}
