/* A spool directory of a test's own: made fresh under /tmp, counted, and removed with
 * what is in it (the spool's files are flat: no subdirectories). */
#ifndef PC_TEST_SPOOL_DIR_H
#define PC_TEST_SPOOL_DIR_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Make dir (at least 64 bytes) a new empty directory; 0 or -1. */
static inline int test_spool_dir_make(char *dir, size_t len)
{
    snprintf(dir, len, "/tmp/pulsarc-spool-XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

/* How many files in dir end with suffix (".seg": the segments). */
static inline int test_spool_dir_count(const char *dir, const char *suffix)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    size_t sl = strlen(suffix);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        n += len > sl && strcmp(e->d_name + len - sl, suffix) == 0;
    }
    closedir(d);
    return n;
}

static inline void test_spool_dir_remove(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    char path[512];
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        unlink(path);
    }
    closedir(d);
    rmdir(dir);
}

#endif
