#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/small_file.h"
#include "producer/encryption.h"

static char *temp_file_with(const char *bytes, size_t n)
{
    static char path[64];
    snprintf(path, sizeof path, "/tmp/pulsarc-small-file-XXXXXX");
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    cr_assert_eq(write(fd, bytes, n), (ssize_t)n);
    close(fd);
    return path;
}

Test(small_file, reads_up_to_the_cap_and_terminates)
{
    const char content[] = "abc\0def"; /* embedded NUL: the length, not strlen, counts */
    char *path = temp_file_with(content, 7);
    char *text;
    size_t len;
    int err;
    cr_assert_eq(pc_read_small_file(path, 7, &text, &len, &err), PC_SMALL_FILE_OK);
    cr_assert_eq(len, 7);
    cr_assert(memcmp(text, content, 7) == 0);
    cr_assert_eq(text[7], '\0');
    free(text);
    cr_assert_eq(pc_read_small_file(path, 6, &text, &len, &err), PC_SMALL_FILE_TOO_LARGE);
    cr_assert_null(text);
    cr_assert_eq(len, 0);
    unlink(path);
}

Test(small_file, empty_file_is_an_empty_string)
{
    char *path = temp_file_with("", 0);
    char *text;
    size_t len;
    int err;
    cr_assert_eq(pc_read_small_file(path, 16, &text, &len, &err), PC_SMALL_FILE_OK);
    cr_assert_eq(len, 0);
    cr_assert_str_eq(text, "");
    free(text);
    unlink(path);
}

Test(small_file, missing_file_and_directory)
{
    char *text;
    size_t len;
    int err;
    cr_assert_eq(pc_read_small_file("/nonexistent/pulsarc", 16, &text, &len, &err),
                 PC_SMALL_FILE_CANNOT_OPEN);
    cr_assert_eq(err, ENOENT);
    cr_assert_null(text);
    /* A directory opens but cannot be read. */
    cr_assert_eq(pc_read_small_file("/tmp", 16, &text, &len, &err), PC_SMALL_FILE_READ_ERROR);
    cr_assert_null(text);
}

static void expect_names(const char *list, const char *const *want, size_t n_want)
{
    const char *cursor = list, *name;
    size_t len, i = 0;
    while (pc_key_names_next(&cursor, &name, &len)) {
        cr_assert_lt(i, n_want, "'%s': more names than %zu", list, n_want);
        cr_expect(len == strlen(want[i]) && memcmp(name, want[i], len) == 0,
                  "'%s': name %zu is '%.*s', not '%s'", list, i, (int)len, name, want[i]);
        i++;
    }
    cr_expect_eq(i, n_want, "'%s': %zu names, not %zu", list, i, n_want);
}

Test(key_names, trimmed_and_empty_ones_skipped)
{
    expect_names("", NULL, 0);
    expect_names(" , ,\t", NULL, 0);
    expect_names("a", (const char *const[]){ "a" }, 1);
    expect_names(" a ,b,\tc d\t,,", (const char *const[]){ "a", "b", "c d" }, 3);
    expect_names(",x", (const char *const[]){ "x" }, 1);
}
