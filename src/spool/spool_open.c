/* Opening a spool's directory: create it (and its parents) if missing, check that it is
 * the process's own, lock it for this producer, check (or write, the first time) whose
 * spool it is, and list the segments it holds.
 *
 * Trust: whoever can write into the directory decides what the producer replays and
 * where its writes land, so the directory must be owned by the process's user and not
 * writable by its group or others, and must not be a symbolic link. It is checked on the
 * descriptor that every later call goes through (openat and friends), never again by
 * path, and no file in it is opened through a link or, for files found there, anything
 * but a regular file (a FIFO would block the open). */
#include "spool/spool_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/error.h"

#define LOCK_FILE "spool.lock"
#define ID_FILE "spool.id"
#define ID_TMP "spool.id.tmp"

void pc_spool_segment_name(uint64_t n, char out[SEGMENT_NAME_LEN + 1])
{
    snprintf(out, SEGMENT_NAME_LEN + 1, "%020llu.seg", (unsigned long long)n);
}

/* What a file name of the directory is: a segment's (20 digits and ".seg", nothing
 * else), one set aside (a segment's name and a suffix: ".bad", ".damaged"), or neither;
 * *n its number. */
typedef enum name_kind { NOT_OURS, SEGMENT, SET_ASIDE } name_kind;

static name_kind parse_name(const char *name, uint64_t *n)
{
    size_t len = strlen(name);
    if (len < SEGMENT_NAME_LEN || strncmp(name + 20, ".seg", 4) != 0)
        return NOT_OURS;
    if (len > SEGMENT_NAME_LEN && name[SEGMENT_NAME_LEN] != '.')
        return NOT_OURS;
    uint64_t v = 0;
    for (int i = 0; i < 20; i++) {
        if (name[i] < '0' || name[i] > '9')
            return NOT_OURS;
        uint64_t d = (uint64_t)(name[i] - '0');
        if (v > (UINT64_MAX - d) / 10)
            return NOT_OURS;
        v = v * 10 + d;
    }
    *n = v;
    return len == SEGMENT_NAME_LEN ? SEGMENT : SET_ASIDE;
}

/* New segments are numbered above n (a segment found, or one set aside: a number is
 * never used twice while its file is there). */
static void number_above(pc_spool_t *sp, uint64_t n)
{
    if (n < UINT64_MAX && n + 1 > sp->next_number)
        sp->next_number = n + 1;
}

int pc_spool_open_file(const pc_spool_t *sp, const char *name, int flags, mode_t mode)
{
    int fd = openat(sp->dir_fd, name, flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, mode);
    if (fd < 0)
        return -1;
    struct stat st;
    int err = fstat(fd, &st) != 0 ? errno : !S_ISREG(st.st_mode) ? EINVAL : 0;
    if (err) {
        close(fd);
        errno = err;
        return -1;
    }
    return fd;
}

const char *pc_spool_open_error(int err)
{
    if (err == ELOOP)
        return "a symbolic link (never followed in a spool)";
    if (err == EINVAL)
        return "not a regular file";
    return strerror(err);
}

static bool same_text(const char *s, size_t len, const char *want)
{
    return strlen(want) == len && memcmp(s, want, len) == 0;
}

/* Refuse a header written for another producer name or topic. */
static pulsarc_result check_owner(const pc_spool_t *sp, const pc_spool_header_t *h,
                                  const char *file)
{
    if (same_text(h->name, h->name_len, sp->name) && same_text(h->topic, h->topic_len, sp->topic))
        return PULSARC_OK;
    return pc_fail(PULSARC_ERR_SPOOL,
                   "spool %s (%s) belongs to producer \"%.*s\" on %.*s, not to \"%s\" on %s: a "
                   "spool is resent only by the producer that wrote it (same producerName "
                   "and topic)",
                   sp->dir, file, (int)h->name_len, h->name, (int)h->topic_len, h->topic, sp->name,
                   sp->topic);
}

/* The first open: write the identity to a temporary file, sync it and rename it into
 * place, so that a crash leaves either no identity or a whole one. Synced whatever the
 * policy: it is written once. The temporary file is made new (what a crash left of an
 * earlier one goes first), never opened as found. */
static pulsarc_result write_identity(pc_spool_t *sp)
{
    uint8_t h[PC_SPOOL_HEADER_MAX];
    size_t len = pc_spool_header_encode(h, 0, sp->name, sp->topic);
    int err = unlinkat(sp->dir_fd, ID_TMP, 0) == 0 || errno == ENOENT ? 0 : errno;
    int fd = err ? -1 : pc_spool_open_file(sp, ID_TMP, O_WRONLY | O_CREAT | O_EXCL, 0600);
    if (!err && fd < 0)
        return pc_fail(PULSARC_ERR_SPOOL, "spool %s: cannot make %s: %s", sp->dir, ID_TMP,
                       pc_spool_open_error(errno));
    if (!err && pwrite(fd, h, len, 0) != (ssize_t)len)
        err = errno ? errno : EIO;
    if (!err)
        err = pc_spool_sync(sp, fd);
    if (fd >= 0)
        close(fd);
    if (!err && renameat(sp->dir_fd, ID_TMP, sp->dir_fd, ID_FILE) != 0)
        err = errno;
    if (!err)
        err = pc_spool_sync(sp, sp->dir_fd);
    if (err)
        return pc_fail(PULSARC_ERR_SPOOL, "spool %s: cannot write %s: %s", sp->dir, ID_FILE,
                       strerror(err));
    return PULSARC_OK;
}

static pulsarc_result check_identity(pc_spool_t *sp)
{
    int fd = pc_spool_open_file(sp, ID_FILE, O_RDONLY, 0);
    if (fd < 0 && errno == ENOENT)
        return write_identity(sp);
    if (fd < 0)
        return pc_fail(PULSARC_ERR_SPOOL, "spool %s: cannot use %s: %s", sp->dir, ID_FILE,
                       pc_spool_open_error(errno));
    uint8_t buf[PC_SPOOL_HEADER_MAX];
    ssize_t n = pread(fd, buf, sizeof buf, 0);
    close(fd);
    pc_spool_header_t h;
    size_t size;
    if (n < 0 || pc_spool_header_decode(buf, (size_t)n, &h, &size) != PC_SPOOL_HEADER_OK)
        return pc_fail(PULSARC_ERR_SPOOL,
                       "spool %s: %s is damaged or not a spool's: which producer the spool "
                       "belongs to is unknown, so it is not used",
                       sp->dir, ID_FILE);
    return check_owner(sp, &h, ID_FILE);
}

static int compare_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The numbers of the segment files in the directory, sorted. */
static pulsarc_result list_numbers(pc_spool_t *sp, uint64_t **out, size_t *count)
{
    *out = NULL;
    *count = 0;
    int fd = dup(sp->dir_fd);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        int err = errno;
        if (fd >= 0)
            close(fd);
        return pc_fail(PULSARC_ERR_SPOOL, "spool %s: cannot list it: %s", sp->dir, strerror(err));
    }
    rewinddir(d);
    uint64_t *nums = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        uint64_t num;
        name_kind kind = parse_name(e->d_name, &num);
        if (kind == SET_ASIDE)
            number_above(sp, num);
        if (kind != SEGMENT)
            continue;
        if (n == cap) {
            size_t c = cap ? cap * 2 : 16;
            uint64_t *grown = realloc(nums, c * sizeof *grown);
            if (!grown) {
                free(nums);
                closedir(d);
                return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
            }
            nums = grown;
            cap = c;
        }
        nums[n++] = num;
    }
    closedir(d);
    if (n)
        qsort(nums, n, sizeof *nums, compare_u64);
    *out = nums;
    *count = n;
    return PULSARC_OK;
}

bool pc_spool_set_aside(const pc_spool_t *sp, const char *name, const char *suffix, const char *why)
{
    char aside[SEGMENT_NAME_LEN + 16];
    snprintf(aside, sizeof aside, "%s%s", name, suffix);
    int err = faccessat(sp->dir_fd, aside, F_OK, AT_SYMLINK_NOFOLLOW) == 0 ? EEXIST : 0;
    if (!err && renameat(sp->dir_fd, name, sp->dir_fd, aside) != 0)
        err = errno;
    if (!err)
        PC_WARN(sp->log, "spool %s: %s %s: renamed to %s and left alone", sp->dir, name, why,
                aside);
    else
        PC_WARN(sp->log, "spool %s: %s %s, and cannot be renamed to %s: %s", sp->dir, name, why,
                aside, strerror(err));
    return !err;
}

static void set_aside(pc_spool_t *sp, const char *name, const char *why)
{
    pc_spool_set_aside(sp, name, ".bad", why);
}

/* Look at segment number num: add it to the list (pinned, for the replay), delete it when
 * its creation was cut short, set it aside when it is not one of ours. */
static pulsarc_result add_segment(pc_spool_t *sp, uint64_t num)
{
    char name[SEGMENT_NAME_LEN + 1];
    pc_spool_segment_name(num, name);
    int fd = pc_spool_open_file(sp, name, O_RDONLY, 0);
    struct stat st;
    if (fd < 0 && (errno == ELOOP || errno == EINVAL)) {
        set_aside(sp, name,
                  errno == ELOOP ? "is not a regular file but a symbolic link"
                                 : "is not a regular file");
        return PULSARC_OK;
    }
    if (fd < 0 || fstat(fd, &st) != 0) {
        int err = errno;
        if (fd >= 0)
            close(fd);
        return pc_fail(PULSARC_ERR_SPOOL, "spool %s: cannot open %s: %s", sp->dir, name,
                       strerror(err));
    }
    uint8_t buf[PC_SPOOL_HEADER_MAX];
    ssize_t n = pread(fd, buf, sizeof buf, 0);
    close(fd);
    if (n < 0)
        return pc_fail(PULSARC_ERR_SPOOL, "spool %s: cannot read %s: %s", sp->dir, name,
                       strerror(errno));
    pc_spool_header_t h;
    size_t hsize = 0;
    pc_spool_header_status_t hs = pc_spool_header_decode(buf, (size_t)n, &h, &hsize);
    if (hs == PC_SPOOL_HEADER_SHORT) {
        /* Cut while being created: it holds no message. */
        PC_WARN(sp->log,
                "spool %s: %s holds no whole header (its creation was cut short): "
                "deleted",
                sp->dir, name);
        unlinkat(sp->dir_fd, name, 0);
        return PULSARC_OK;
    }
    if (hs != PC_SPOOL_HEADER_OK || h.segment != num) {
        set_aside(sp, name, "has no header of this format, or a damaged one");
        return PULSARC_OK;
    }
    pulsarc_result res = check_owner(sp, &h, name);
    if (res != PULSARC_OK)
        return res;
    pc_spool_segment_t *seg = calloc(1, sizeof *seg);
    if (!seg)
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    seg->number = num;
    seg->header = hsize;
    seg->size = seg->disk = (uint64_t)st.st_size;
    seg->pinned = true;
    pc_spool_add_segment(sp, seg);
    sp->replay[sp->replay_n++] = seg;
    number_above(sp, num);
    return PULSARC_OK;
}

/* Read the segments in the directory into the list (pinned, for the replay); refuses
 * segments of another producer. */
static pulsarc_result find_segments(pc_spool_t *sp)
{
    uint64_t *nums;
    size_t n;
    pulsarc_result res = list_numbers(sp, &nums, &n);
    if (res != PULSARC_OK)
        return res;
    sp->replay = calloc(n ? n : 1, sizeof *sp->replay);
    if (!sp->replay) {
        free(nums);
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    }
    for (size_t i = 0; i < n && res == PULSARC_OK; i++)
        res = add_segment(sp, nums[i]);
    free(nums);
    return res;
}

/* What open made so far goes again (its segments' files stay). */
static void discard(pc_spool_t *sp)
{
    for (pc_spool_segment_t *seg = sp->oldest, *next; seg; seg = next) {
        next = seg->next;
        free(seg);
    }
    free(sp->replay);
    if (sp->dir_fd >= 0)
        close(sp->dir_fd);
    if (sp->lock_fd >= 0)
        close(sp->lock_fd);
    uv_cond_destroy(&sp->cond);
    uv_mutex_destroy(&sp->mu);
    free(sp->dir);
    free(sp->name);
    free(sp->topic);
    free(sp);
}

static uint64_t default_segment_bytes(uint64_t max_bytes)
{
    uint64_t s = max_bytes / 8;
    if (s < 64 * 1024)
        s = 64 * 1024;
    if (s > 16 * 1024 * 1024)
        s = 16 * 1024 * 1024;
    return s;
}

/* Settings, strings copied, the lock and condition: no file touched yet. */
static pulsarc_result make_spool(const pc_spool_settings_t *set, pc_spool_t **out)
{
    size_t nl = set->producer_name ? strlen(set->producer_name) : 0;
    size_t tl = set->topic ? strlen(set->topic) : 0;
    if (!set->dir || !*set->dir || nl == 0 || nl > PC_SPOOL_NAME_MAX || tl == 0 ||
        tl > PC_SPOOL_TOPIC_MAX || !set->accepted || !set->log || set->max_bytes == 0 ||
        (set->fsync == PC_SPOOL_FSYNC_INTERVAL && set->fsync_interval_ms == 0))
        return pc_fail(PULSARC_ERR_INVALID_CONFIG,
                       "a spool needs a directory, a producer name (1..%d bytes), a topic, "
                       "a size limit and, with the interval policy, an interval",
                       PC_SPOOL_NAME_MAX);
    pc_spool_t *sp = calloc(1, sizeof *sp);
    if (!sp)
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    sp->dir = strdup(set->dir);
    sp->name = strdup(set->producer_name);
    sp->topic = strdup(set->topic);
    /* "dir/" would have the kernel follow a link named dir: the name without its slashes. */
    for (size_t n = sp->dir ? strlen(sp->dir) : 0; n > 1 && sp->dir[n - 1] == '/'; n--)
        sp->dir[n - 1] = '\0';
    if (!sp->dir || !sp->name || !sp->topic || uv_mutex_init(&sp->mu) != 0) {
        free(sp->dir);
        free(sp->name);
        free(sp->topic);
        free(sp);
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    }
    if (uv_cond_init(&sp->cond) != 0) {
        uv_mutex_destroy(&sp->mu);
        free(sp->dir);
        free(sp->name);
        free(sp->topic);
        free(sp);
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    }
    sp->fsync = set->fsync;
    sp->interval_ms = set->fsync_interval_ms;
    sp->max_bytes = set->max_bytes;
    sp->segment_bytes = set->segment_bytes ? set->segment_bytes
                                           : default_segment_bytes(set->max_bytes);
    sp->log = set->log;
    sp->accepted = set->accepted;
    sp->sync_seam = set->sync_seam;
    sp->dir_fd = sp->lock_fd = sp->cur_fd = sp->replay_fd = -1;
    sp->next_number = 1; /* 0 is the identity's */
    *out = sp;
    return PULSARC_OK;
}

/* mkdir -p, each directory made private (0700, like the spool's own): 0 or an errno. */
static int make_dirs(const char *path)
{
    char *p = strdup(path);
    if (!p)
        return ENOMEM;
    int err = 0;
    for (char *at = p + 1; !err; at++) {
        bool last = *at == '\0';
        if (!last && *at != '/')
            continue;
        *at = '\0';
        if (mkdir(p, 0700) != 0 && errno != EEXIST)
            err = errno;
        if (last)
            break;
        *at = '/';
    }
    free(p);
    return err;
}

/* The directory is trusted only as the process's own: checked on the open descriptor, so
 * that what was checked is what is used. */
static pulsarc_result check_dir(const pc_spool_t *sp)
{
    struct stat st;
    if (fstat(sp->dir_fd, &st) != 0)
        return pc_fail(PULSARC_ERR_SPOOL, "cannot inspect spool directory %s: %s", sp->dir,
                       strerror(errno));
    if (st.st_uid != geteuid())
        return pc_fail(PULSARC_ERR_SPOOL,
                       "spool directory %s is owned by uid %u, not by this process's user "
                       "(uid %u): whoever owns it decides what the producer resends, so a "
                       "spool must be a directory of the producer's own",
                       sp->dir, (unsigned)st.st_uid, (unsigned)geteuid());
    if (st.st_mode & (S_IWGRP | S_IWOTH))
        return pc_fail(PULSARC_ERR_SPOOL,
                       "spool directory %s is writable by its group or others (mode 0%o): "
                       "they could plant segments the producer resends or links it writes "
                       "through; make it the producer's own (chmod go-w) or use another",
                       sp->dir, (unsigned)(st.st_mode & 07777));
    return PULSARC_OK;
}

/* The directory (made if missing, parents too), checked, and its lock: one producer at a
 * time, in this process or any other (flock belongs to the open file, so two producers of
 * one process exclude each other too). */
static pulsarc_result lock_dir(pc_spool_t *sp)
{
    int err = make_dirs(sp->dir);
    if (err)
        return pc_fail(PULSARC_ERR_SPOOL, "cannot create spool directory %s: %s", sp->dir,
                       strerror(err));
    sp->dir_fd = open(sp->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (sp->dir_fd < 0) {
        err = errno;
        struct stat st;
        bool link = err == ELOOP || (lstat(sp->dir, &st) == 0 && S_ISLNK(st.st_mode));
        return pc_fail(PULSARC_ERR_SPOOL, "cannot open spool directory %s: %s", sp->dir,
                       link ? "it is a symbolic link, which a spool never follows (name the "
                              "directory itself)"
                            : strerror(err));
    }
    pulsarc_result res = check_dir(sp);
    if (res != PULSARC_OK)
        return res;
    sp->lock_fd = pc_spool_open_file(sp, LOCK_FILE, O_RDWR | O_CREAT, 0600);
    if (sp->lock_fd < 0)
        return pc_fail(PULSARC_ERR_SPOOL, "spool %s: cannot use %s: %s", sp->dir, LOCK_FILE,
                       pc_spool_open_error(errno));
    if (flock(sp->lock_fd, LOCK_EX | LOCK_NB) != 0)
        return errno == EWOULDBLOCK
                   ? pc_fail(PULSARC_ERR_SPOOL,
                             "spool %s is in use by another producer (of this process or "
                             "another): one spool, one producer",
                             sp->dir)
                   : pc_fail(PULSARC_ERR_SPOOL, "spool %s: cannot lock it: %s", sp->dir,
                             strerror(errno));
    return PULSARC_OK;
}

pulsarc_result pc_spool_open(const pc_spool_settings_t *set, pc_spool_t **out)
{
    *out = NULL;
    pc_spool_t *sp = NULL;
    pulsarc_result res = make_spool(set, &sp);
    if (res != PULSARC_OK)
        return res;
    res = lock_dir(sp);
    if (res == PULSARC_OK)
        res = check_identity(sp);
    if (res == PULSARC_OK)
        res = find_segments(sp);
    if (res == PULSARC_OK && pc_spool_start_flusher(sp) != 0)
        res = pc_fail(PULSARC_ERR_NO_MEMORY, "spool %s: cannot start its flusher thread", sp->dir);
    if (res != PULSARC_OK) {
        discard(sp);
        return res;
    }
    *out = sp;
    return PULSARC_OK;
}
