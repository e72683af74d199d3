/* The spool's directory is trusted only when it is the process's own: an existing one
 * owned by another user or writable by its group or others is refused, as is a symbolic
 * link in its place; nothing in it is opened through a link (a planted spool.id.tmp, lock,
 * identity or segment), and missing parents are made, private. (The tests run as root:
 * ownership is tested with a chown to another uid, which root may do.) */
#include <errno.h>
#include <sys/stat.h>

#include "../support/test_spool_fixture.h"

TestSuite(spool_open, .init = make_dir, .fini = remove_dir, .timeout = 60);

/* A second directory of the test's (removed at the end of each test that makes it). */
static char other[64];

static void make_other(void)
{
    cr_assert_eq(test_spool_dir_make(other, sizeof other), 0);
}

static pulsarc_result try_open(const pc_spool_settings_t *s)
{
    pc_spool_t *sp = NULL;
    pulsarc_result r = pc_spool_open(s, &sp);
    pc_spool_close(sp);
    return r;
}

/* How many entries d holds ("." and ".." aside). */
static int entries(const char *d)
{
    DIR *h = opendir(d);
    cr_assert_not_null(h);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(h)) != NULL)
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(h);
    return n;
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
}

static void assert_file_holds(const char *path, const char *text)
{
    char buf[256] = { 0 };
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    cr_assert(n == strlen(text) && memcmp(buf, text, n) == 0, "%s now holds \"%.*s\"", path, (int)n,
              buf);
}

/* A file of "other" that must stay as it is: its path in victim (128 bytes). */
static void make_victim(char *victim)
{
    make_other();
    snprintf(victim, 128, "%s/victim", other);
    write_file(victim, "precious");
}

static void link_in_dir(const char *target, const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    cr_assert_eq(symlink(target, path), 0, "symlink %s: %s", path, strerror(errno));
}

Test(spool_open, a_directory_writable_by_its_group_or_others_is_refused_with_its_mode)
{
    pc_spool_settings_t s = settings(PC_SPOOL_FSYNC_NEVER);
    static const mode_t modes[] = { 0770, 0720, 0702, 01777 };
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
        cr_assert_eq(chmod(dir, modes[i]), 0);
        cr_assert_eq(try_open(&s), PULSARC_ERR_SPOOL, "mode %o was accepted", (unsigned)modes[i]);
        const char *d = pulsarc_last_error_detail();
        char mode[16];
        snprintf(mode, sizeof mode, "0%o", (unsigned)modes[i]);
        cr_assert(strstr(d, dir) && strstr(d, mode) && strstr(d, "writable"), "%s", d);
    }
    cr_assert_eq(entries(dir), 0, "nothing was written into it");
    cr_assert_eq(chmod(dir, 0750), 0); /* readable by the group: not a way in */
    cr_assert_eq(try_open(&s), PULSARC_OK, "%s", pulsarc_last_error_detail());
}

Test(spool_open, a_directory_of_another_user_is_refused)
{
    if (chown(dir, 12345, (gid_t)-1) != 0)
        cr_skip_test("cannot chown (%s): not root", strerror(errno));
    pc_spool_settings_t s = settings(PC_SPOOL_FSYNC_NEVER);
    pulsarc_result r = try_open(&s);
    cr_assert_eq(chown(dir, geteuid(), (gid_t)-1), 0);
    cr_assert_eq(r, PULSARC_ERR_SPOOL);
    const char *d = pulsarc_last_error_detail();
    cr_assert(strstr(d, dir) && strstr(d, "owned by uid 12345"), "%s", d);
    cr_assert_eq(try_open(&s), PULSARC_OK, "%s", pulsarc_last_error_detail());
}

Test(spool_open, a_symbolic_link_in_the_directory_s_place_is_refused)
{
    make_other();
    char link[128];
    snprintf(link, sizeof link, "%s/spool", other);
    cr_assert_eq(symlink(dir, link), 0);
    pc_spool_settings_t s = settings(PC_SPOOL_FSYNC_NEVER);
    s.dir = link;
    pulsarc_result r = try_open(&s);
    const char *d = pulsarc_last_error_detail();
    cr_assert_eq(r, PULSARC_ERR_SPOOL);
    cr_assert(strstr(d, link) && strstr(d, "symbolic link"), "%s", d);
    /* A trailing slash would make the kernel follow it: the same refusal. */
    char slashed[140];
    snprintf(slashed, sizeof slashed, "%s/", link);
    s.dir = slashed;
    cr_assert_eq(try_open(&s), PULSARC_ERR_SPOOL);
    cr_assert_eq(entries(dir), 0, "nothing was written through the link");
    test_spool_dir_remove(other);
}

Test(spool_open, a_link_planted_as_the_temporary_identity_writes_nothing_through_it)
{
    char victim[128];
    make_victim(victim);
    link_in_dir(victim, "spool.id.tmp");
    pc_spool_settings_t s = settings(PC_SPOOL_FSYNC_NEVER);
    cr_assert_eq(try_open(&s), PULSARC_OK, "%s", pulsarc_last_error_detail());
    assert_file_holds(victim, "precious");
    char path[512];
    snprintf(path, sizeof path, "%s/spool.id", dir);
    struct stat st;
    cr_assert_eq(lstat(path, &st), 0);
    cr_assert(S_ISREG(st.st_mode), "spool.id is not a file of its own");
    test_spool_dir_remove(other);
}

Test(spool_open, a_link_planted_as_the_lock_or_the_identity_is_refused)
{
    char victim[128];
    make_victim(victim);
    link_in_dir(victim, "spool.lock");
    pc_spool_settings_t s = settings(PC_SPOOL_FSYNC_NEVER);
    cr_assert_eq(try_open(&s), PULSARC_ERR_SPOOL);
    cr_assert(strstr(pulsarc_last_error_detail(), "spool.lock"), "%s", pulsarc_last_error_detail());
    assert_file_holds(victim, "precious");
    test_spool_dir_remove(dir);
    make_dir();

    /* The identity of a real spool of this producer, elsewhere: not taken as this one's. */
    pc_spool_settings_t elsewhere = s;
    elsewhere.dir = other;
    cr_assert_eq(try_open(&elsewhere), PULSARC_OK);
    char id[128];
    snprintf(id, sizeof id, "%s/spool.id", other);
    link_in_dir(id, "spool.id");
    cr_assert_eq(try_open(&s), PULSARC_ERR_SPOOL);
    cr_assert(strstr(pulsarc_last_error_detail(), "spool.id"), "%s", pulsarc_last_error_detail());
    test_spool_dir_remove(other);
}

/* A segment of this producer's, written in another directory, linked into this one: it is
 * not replayed, and the file it points to is left exactly as it was (a replay cuts the
 * unused room off the files it reads). */
Test(spool_open, a_link_planted_as_a_segment_is_set_aside_unread)
{
    make_other();
    pc_spool_settings_t s = settings(PC_SPOOL_FSYNC_NEVER);
    pc_spool_settings_t elsewhere = s;
    elsewhere.dir = other;
    pc_spool_t *sp = open_with(&elsewhere);
    append_ok(sp, 0, -1);
    /* Not closed: the segment keeps its room allocated ahead, as after a crash. */
    char target[128];
    snprintf(target, sizeof target, "%s/%020d.seg", other, 1);
    struct stat before;
    cr_assert_eq(stat(target, &before), 0);

    cr_assert_eq(try_open(&s), PULSARC_OK); /* this spool's identity */
    link_in_dir(target, "00000000000000000001.seg");
    pc_spool_t *mine = open_with(&s);
    int64_t ids[4];
    cr_assert_eq(replay_all(mine, ids, NULL, 4), 0, "a linked segment was replayed");
    pc_spool_close(mine);
    struct stat after;
    cr_assert_eq(stat(target, &after), 0);
    cr_assert_eq(after.st_size, before.st_size, "the linked file was changed");
    char aside[512];
    snprintf(aside, sizeof aside, "%s/00000000000000000001.seg.bad", dir);
    cr_assert_eq(access(aside, F_OK), 0, "the link was not set aside");
    cr_assert(strstr(log_text, "not a regular file"), "%s", log_text);
    pc_spool_close(sp);
    test_spool_dir_remove(other);
}

/* A FIFO where a segment should be would block the open for good. */
Test(spool_open, a_fifo_named_as_a_segment_is_set_aside_without_blocking)
{
    pc_spool_settings_t s = settings(PC_SPOOL_FSYNC_NEVER);
    cr_assert_eq(try_open(&s), PULSARC_OK);
    char path[512];
    snprintf(path, sizeof path, "%s/%020d.seg", dir, 3);
    cr_assert_eq(mkfifo(path, 0600), 0);
    pc_spool_t *sp = open_with(&s);
    int64_t ids[4];
    cr_assert_eq(replay_all(sp, ids, NULL, 4), 0);
    pc_spool_close(sp);
    snprintf(path, sizeof path, "%s/%020d.seg.bad", dir, 3);
    cr_assert_eq(access(path, F_OK), 0);
}

Test(spool_open, missing_parents_are_made_private_like_the_directory)
{
    char deep[128];
    snprintf(deep, sizeof deep, "%s/a/b/spool", dir);
    pc_spool_settings_t s = settings(PC_SPOOL_FSYNC_NEVER);
    s.dir = deep;
    pc_spool_t *sp = open_with(&s);
    append_ok(sp, 0, -1);
    pc_spool_close(sp);
    static const char *const made[] = { "a", "a/b", "a/b/spool" };
    for (size_t i = 0; i < 3; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir, made[i]);
        struct stat st;
        cr_assert_eq(stat(path, &st), 0);
        cr_assert(S_ISDIR(st.st_mode));
        cr_assert_eq(st.st_mode & 07777, 0700, "%s has mode %o", made[i],
                     (unsigned)(st.st_mode & 07777));
    }
    test_spool_dir_remove(deep);
    char path[512];
    snprintf(path, sizeof path, "%s/a/b", dir);
    rmdir(path);
    snprintf(path, sizeof path, "%s/a", dir);
    rmdir(path);
}
