/* The spool (src/spool/): its segment format read back field for field, torn and corrupt
 * segments cut once with one log line and never read twice, the size limit (fail, wait,
 * room after a release), segments deleted once released, the owner check and the lock,
 * and ids, file order and hand-over order being one order under the group commit. */
#include <criterion/criterion.h>

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../support/test_spool_dir.h"
#include "spool/spool.h"
#include "spool/spool_format.h"

/* ---- fixtures ------------------------------------------------------------------------ */

static char dir[64];
static char log_text[16384];
static int log_lines;

static void on_log(pulsarc_log_level level, const char *file, int line, const char *msg,
                   void *ctx)
{
    size_t used = strlen(log_text);
    snprintf(log_text + used, sizeof log_text - used, "%s\n", msg);
    log_lines++;
}

static const pc_logger_t logger = { on_log, NULL, PULSARC_LOG_INFO };

static int count_in_log(const char *needle)
{
    int n = 0;
    for (const char *p = log_text; (p = strstr(p, needle)) != NULL; p += strlen(needle))
        n++;
    return n;
}

/* Hand-overs, in the order the spool made them (it runs `accepted` under its lock). */
static int64_t handed[8192];
static int n_handed;

static void on_accepted(pc_spool_ticket_t *t)
{
    handed[n_handed++] = t->sequence_id;
}

static void make_dir(void)
{
    cr_assert_eq(test_spool_dir_make(dir, sizeof dir), 0);
}

static void remove_dir(void)
{
    test_spool_dir_remove(dir);
}

TestSuite(spool, .init = make_dir, .fini = remove_dir, .timeout = 60);

static pc_spool_settings_t settings(pc_spool_fsync_t policy)
{
    return (pc_spool_settings_t){ .dir = dir, .producer_name = "app-1",
                                  .topic = "persistent://public/default/t",
                                  .fsync = policy, .fsync_interval_ms = 5,
                                  .max_bytes = 1 << 20, .log = &logger,
                                  .accepted = on_accepted };
}

static pc_spool_t *open_with(const pc_spool_settings_t *s)
{
    pc_spool_t *sp = NULL;
    pulsarc_result r = pc_spool_open(s, &sp);
    cr_assert_eq(r, PULSARC_OK, "open: %s", pulsarc_last_error_detail());
    return sp;
}

static const char *const props[][2] = { { "a", "1" }, { "name", "value two" } };

static void prop_at(const void *p, size_t i, const char **name, const char **value)
{
    const char *const(*table)[2] = p;
    *name = table[i][0];
    *value = table[i][1];
}

/* Message i: its fields derived from i, so a read-back can check every one. */
static pc_spool_msg_t message(int i, int64_t id, char *key, char *payload)
{
    snprintf(key, 32, "key-%d", i);
    snprintf(payload, 64, "payload of message %d", i);
    return (pc_spool_msg_t){ .sequence_id = id, .partition = i % 3,
                             .flags = i % 2 ? PC_SPOOL_KEY_B64 : PC_SPOOL_NULL_VALUE,
                             .event_time = 1000u + (uint64_t)i, .deliver_at = 2000u + (uint64_t)i,
                             .key = i % 4 == 3 ? NULL : key,
                             .ordering_key = (const uint8_t *)"ok\0k", .ordering_key_len = i % 2 ? 4 : 0,
                             .n_props = (size_t)(i % 3), .prop_at = prop_at, .props = props,
                             .payload = (const uint8_t *)payload, .payload_len = strlen(payload) };
}

/* Where a message is in the spool, for pc_spool_release. */
typedef struct place {
    pc_spool_segment_t *seg;
    uint64_t offset;
} place;

static place append_ok(pc_spool_t *sp, int i, int64_t id)
{
    char key[32], payload[64];
    pc_spool_msg_t m = message(i, id, key, payload);
    pc_spool_ticket_t t = { 0 };
    pulsarc_result r = pc_spool_append(sp, &m, &t, false);
    cr_assert_eq(r, PULSARC_OK, "append %d: %s (%s)", i, pulsarc_result_name(r),
                 pulsarc_last_error_detail());
    return (place){ t.segment, t.offset };
}

static void release(place p)
{
    pc_spool_release(p.seg, p.offset);
}

static void assert_is_message(const pc_spool_record_t *r, int i, int64_t id)
{
    char key[32], payload[64];
    pc_spool_msg_t m = message(i, id, key, payload);
    cr_assert_eq(r->sequence_id, id, "message %d: id %lld", i, (long long)r->sequence_id);
    cr_assert_eq(r->partition, m.partition);
    cr_assert_eq(r->event_time, m.event_time);
    cr_assert_eq(r->deliver_at, m.deliver_at);
    cr_assert_eq(r->flags & ~PC_SPOOL_HAS_KEY, m.flags);
    if (m.key)
        cr_assert_str_eq(r->key, m.key);
    else
        cr_assert_null(r->key);
    cr_assert_eq(r->ordering_key_len, m.ordering_key_len);
    if (m.ordering_key_len)
        cr_assert(memcmp(r->ordering_key, m.ordering_key, m.ordering_key_len) == 0);
    cr_assert_eq(r->n_props, m.n_props);
    size_t pos = 0;
    const char *k, *v;
    for (size_t j = 0; j < m.n_props; j++) {
        cr_assert(pc_spool_record_prop(r, &pos, &k, &v));
        cr_assert_str_eq(k, props[j][0]);
        cr_assert_str_eq(v, props[j][1]);
    }
    cr_assert_not(pc_spool_record_prop(r, &pos, &k, &v));
    cr_assert_eq(r->payload_len, m.payload_len);
    cr_assert(memcmp(r->payload, m.payload, m.payload_len) == 0);
}

/* The segment files in the directory, sorted by name; returns how many. */
static int segment_files(char names[][64], int max)
{
    DIR *d = opendir(dir);
    cr_assert_not_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len > 4 && len < 64 && strcmp(e->d_name + len - 4, ".seg") == 0 && n < max)
            memcpy(names[n++], e->d_name, len + 1);
    }
    closedir(d);
    qsort(names, (size_t)n, 64, (int (*)(const void *, const void *))strcmp);
    return n;
}

static off_t file_size(const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    struct stat st;
    cr_assert_eq(stat(path, &st), 0);
    return st.st_size;
}

static void rewrite(const char *name, off_t at, uint8_t byte)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int fd = open(path, O_WRONLY);
    cr_assert_geq(fd, 0);
    cr_assert_eq(pwrite(fd, &byte, 1, at), 1);
    close(fd);
}

static void truncate_to(const char *name, off_t size)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    cr_assert_eq(truncate(path, size), 0);
}

/* Replay everything: the records' ids (and, with places, where each is) in order. */
static int replay_all(pc_spool_t *sp, int64_t *ids, place *places, int max)
{
    pc_spool_record_t rec;
    place p;
    int n = 0;
    while (pc_spool_replay_next(sp, &rec, &p.seg, &p.offset)) {
        cr_assert_lt(n, max);
        ids[n] = rec.sequence_id;
        if (places)
            places[n] = p;
        n++;
    }
    return n;
}

/* ---- the format ----------------------------------------------------------------------- */

Test(spool, messages_come_back_field_for_field_with_their_ids)
{
    pc_spool_settings_t s = settings(PC_SPOOL_FSYNC_NEVER);
    pc_spool_t *sp = open_with(&s);
    pc_spool_note_id(sp, 41);
    for (int i = 0; i < 8; i++)
        append_ok(sp, i, i == 5 ? 100 : -1); /* 5 brings its own id */
    int64_t want[8] = { 42, 43, 44, 45, 46, 100, 101, 102 };
    cr_assert_eq(n_handed, 8);
    for (int i = 0; i < 8; i++)
        cr_assert_eq(handed[i], want[i], "hand-over %d: id %lld", i, (long long)handed[i]);
    pc_spool_close(sp); /* nothing released: everything stays */

    sp = open_with(&s);
    pc_spool_record_t rec;
    place p;
    for (int i = 0; i < 8; i++) {
        cr_assert(pc_spool_replay_next(sp, &rec, &p.seg, &p.offset), "record %d missing", i);
        assert_is_message(&rec, i, want[i]);
    }
    cr_assert_not(pc_spool_replay_next(sp, &rec, &p.seg, &p.offset));
    cr_assert_eq(pc_spool_replayed(sp), 8);
    /* Automatic ids go on above what was replayed. */
    n_handed = 0;
    append_ok(sp, 8, -1);
    cr_assert_eq(handed[0], 103);
    cr_assert_eq(count_in_log("cut"), 0, "%s", log_text);
    pc_spool_close(sp);
}

Test(spool, header_checks)
{
    uint8_t h[PC_SPOOL_HEADER_MAX];
    size_t n = pc_spool_header_encode(h, 7, "name", "topic");
    pc_spool_header_t out;
    size_t size;
    cr_assert_eq(pc_spool_header_decode(h, n, &out, &size), PC_SPOOL_HEADER_OK);
    cr_assert_eq(size, n);
    cr_assert_eq(out.segment, 7);
    cr_assert(out.name_len == 4 && memcmp(out.name, "name", 4) == 0);
    cr_assert(out.topic_len == 5 && memcmp(out.topic, "topic", 5) == 0);
    for (size_t cut = 0; cut < n; cut++)
        cr_assert_eq(pc_spool_header_decode(h, cut, &out, &size), PC_SPOOL_HEADER_SHORT,
                     "cut at %zu", cut);
    for (size_t i = 0; i < n; i++) {
        h[i] ^= 0x40;
        cr_assert_neq(pc_spool_header_decode(h, n, &out, &size), PC_SPOOL_HEADER_OK,
                      "byte %zu flipped", i);
        h[i] ^= 0x40;
    }
}

/* A body as pc_spool_meta_encode writes it, with a payload after it. */
static size_t body_of(uint8_t *out, int i)
{
    char key[32], payload[64];
    pc_spool_msg_t m = message(i, 9, key, payload);
    size_t meta = pc_spool_meta_size(&m);
    pc_spool_meta_encode(out, &m);
    memcpy(out + meta, m.payload, m.payload_len);
    return meta + m.payload_len;
}

Test(spool, record_checks_refuse_what_does_not_add_up)
{
    uint8_t body[512];
    pc_spool_record_t r;
    size_t n = body_of(body, 2); /* a key, two properties, no ordering key */
    cr_assert_null(pc_spool_record_decode(body, n, &r));
    cr_assert_not_null(pc_spool_record_decode(body, n - 1, &r), "a byte short");
    cr_assert_not_null(pc_spool_record_decode(body, PC_SPOOL_BODY_FIXED - 1, &r));
    uint8_t bad[512];
    memcpy(bad, body, n);
    bad[PC_SPOOL_BODY_FIXED + 1] = 0; /* a NUL inside the key */
    cr_assert_not_null(pc_spool_record_decode(bad, n, &r));
    memcpy(bad, body, n);
    bad[12] |= 0x80; /* an unknown flag */
    cr_assert_not_null(pc_spool_record_decode(bad, n, &r));
    memcpy(bad, body, n);
    bad[40] = 3; /* three properties where there are two */
    cr_assert_not_null(pc_spool_record_decode(bad, n, &r));
    memcpy(bad, body, n);
    bad[7] = 0x80; /* a negative sequence id */
    cr_assert_not_null(pc_spool_record_decode(bad, n, &r));
    memcpy(bad, body, n);
    bad[11] = 0x80; /* a negative partition */
    cr_assert_not_null(pc_spool_record_decode(bad, n, &r));
}

Test(spool, a_scan_of_garbage_cuts_and_allocates_nothing_for_a_lying_length)
{
    uint8_t buf[64];
    memset(buf, 0, sizeof buf);
    buf[0] = 0xff; buf[1] = 0xff; buf[2] = 0xff; buf[3] = 0x7f; /* ~2 GiB "record" */
    pc_spool_mem_t mem = { buf, sizeof buf };
    pc_spool_source_t src = pc_spool_mem_source(&mem);
    pc_spool_scan_t sc;
    pc_spool_scan_init(&sc, 0);
    pc_spool_record_t rec;
    cr_assert_eq(pc_spool_scan_next(&sc, &src, &rec), PC_SPOOL_SCAN_CUT);
    cr_assert_eq(sc.offset, 0);
    cr_assert_null(sc.body);
    pc_spool_scan_free(&sc);
}

/* ---- torn and corrupt segments ---------------------------------------------------------- */

Test(spool, a_torn_tail_is_cut_once_and_never_read_twice)
{
    pc_spool_settings_t s = settings(PC_SPOOL_FSYNC_NEVER);
    pc_spool_t *sp = open_with(&s);
    for (int i = 0; i < 3; i++)
        append_ok(sp, i, -1);
    pc_spool_close(sp);
    char names[8][64];
    cr_assert_eq(segment_files(names, 8), 1);
    off_t whole = file_size(names[0]);
    truncate_to(names[0], whole - 5); /* the third record's last bytes never made it */

    sp = open_with(&s);
    int64_t ids[8];
    cr_assert_eq(replay_all(sp, ids, NULL, 8), 2);
    cr_assert(ids[0] == 0 && ids[1] == 1);
    cr_assert_eq(count_in_log("cut at offset"), 1, "%s", log_text);
    cr_assert(strstr(log_text, "a record cut short"), "%s", log_text);
    off_t after = file_size(names[0]);
    cr_assert_lt(after, whole - 5, "the torn record was cut off the file");
    pc_spool_close(sp); /* the two are not released: they stay */

    /* Opened again: the same two, and nothing more to cut. */
    log_text[0] = '\0';
    sp = open_with(&s);
    cr_assert_eq(replay_all(sp, ids, NULL, 8), 2);
    cr_assert_eq(count_in_log("cut"), 0, "%s", log_text);
    cr_assert_eq(file_size(names[0]), after);
    /* A new message goes after them, whole. */
    n_handed = 0;
    append_ok(sp, 3, -1);
    cr_assert_eq(handed[0], 2, "the torn message's id is given again: it was never accepted "
                               "as far as the spool can tell");
    pc_spool_close(sp);
}

/* A child process appends and dies without closing anything (as kill -9 would leave it):
 * the segment keeps its room allocated ahead, zeros after the last record. */
static void appended_and_released_by_a_process_that_died(const pc_spool_settings_t *s, int n,
                                                         unsigned released_mask)
{
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        pc_spool_t *sp = NULL;
        if (pc_spool_open(s, &sp) != PULSARC_OK)
            _exit(1);
        char key[32], payload[64];
        for (int i = 0; i < n; i++) {
            pc_spool_msg_t m = message(i, -1, key, payload);
            pc_spool_ticket_t t = { 0 };
            if (pc_spool_append(sp, &m, &t, false) != PULSARC_OK)
                _exit(1);
            if (released_mask >> i & 1)
                pc_spool_release(t.segment, t.offset);
        }
        _exit(0);
    }
    int status;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child failed to append");
}

static void appended_by_a_process_that_died(const pc_spool_settings_t *s, int n)
{
    appended_and_released_by_a_process_that_died(s, n, 0);
}

Test(spool, messages_released_before_the_crash_are_not_resent)
{
    pc_spool_settings_t s = settings(PC_SPOOL_FSYNC_NEVER);
    appended_and_released_by_a_process_that_died(&s, 6, 0x2b); /* 0, 1, 3, 5 released */
    pc_spool_t *sp = open_with(&s);
    int64_t ids[8];
    cr_assert_eq(replay_all(sp, ids, NULL, 8), 2);
    cr_assert(ids[0] == 2 && ids[1] == 4, "got %lld, %lld", (long long)ids[0], (long long)ids[1]);
    cr_assert_eq(log_text[0], '\0', "%s", log_text);
    pc_spool_close(sp);
}

Test(spool, what_a_dead_process_appended_comes_back_and_its_unused_room_goes_quietly)
{
    pc_spool_settings_t s = settings(PC_SPOOL_FSYNC_NEVER);
    appended_by_a_process_that_died(&s, 3);
    char names[8][64];
    cr_assert_eq(segment_files(names, 8), 1);
    off_t allocated = file_size(names[0]);
    pc_spool_t *sp = open_with(&s); /* the dead process's lock went with it */
    pc_spool_record_t rec;
    place p;
    for (int i = 0; i < 3; i++) {
        cr_assert(pc_spool_replay_next(sp, &rec, &p.seg, &p.offset), "record %d missing", i);
        assert_is_message(&rec, i, i);
    }
    cr_assert_not(pc_spool_replay_next(sp, &rec, &p.seg, &p.offset));
    cr_assert_eq(log_text[0], '\0', "a clean end says nothing: %s", log_text);
    cr_assert_lt(file_size(names[0]), allocated, "the unused room was given back");
    pc_spool_close(sp);
}

Test(spool, a_record_whose_length_was_never_written_is_the_clean_end)
{
    pc_spool_settings_t s = settings(PC_SPOOL_FSYNC_NEVER);
    appended_by_a_process_that_died(&s, 3);
    char names[8][64];
    cr_assert_eq(segment_files(names, 8), 1);
    /* Find the third record's frame and blank it: the process died between writing the
     * record's body and its length. */
    pc_spool_t *sp = open_with(&s);
    int64_t ids[4];
    cr_assert_eq(replay_all(sp, ids, NULL, 4), 3);
    pc_spool_close(sp);
    off_t end = file_size(names[0]);
    char key[32], payload[64];
    pc_spool_msg_t m = message(2, 2, key, payload);
    off_t third = end - (off_t)(PC_SPOOL_FRAME + pc_spool_meta_size(&m) + m.payload_len);
    for (int i = 0; i < PC_SPOOL_FRAME; i++)
        rewrite(names[0], third + i, 0);
    log_text[0] = '\0';
    sp = open_with(&s);
    cr_assert_eq(replay_all(sp, ids, NULL, 4), 2);
    cr_assert_eq(log_text[0], '\0', "%s", log_text);
    cr_assert_eq(file_size(names[0]), third);
    pc_spool_close(sp);
}

Test(spool, a_corrupt_record_ends_its_segment_and_the_next_segments_still_come)
{
    pc_spool_settings_t s = settings(PC_SPOOL_FSYNC_NEVER);
    s.segment_bytes = 1; /* one message per segment */
    pc_spool_t *sp = open_with(&s);
    for (int i = 0; i < 3; i++)
        append_ok(sp, i, -1);
    pc_spool_close(sp);
    char names[8][64];
    cr_assert_eq(segment_files(names, 8), 3);
    rewrite(names[1], file_size(names[1]) - 3, 'X'); /* a payload byte of message 1 */

    sp = open_with(&s);
    int64_t ids[8];
    cr_assert_eq(replay_all(sp, ids, NULL, 8), 2);
    cr_assert(ids[0] == 0 && ids[1] == 2, "got %lld, %lld", (long long)ids[0], (long long)ids[1]);
    cr_assert_eq(count_in_log("cut at offset"), 1, "%s", log_text);
    cr_assert(strstr(log_text, "CRC does not match"), "%s", log_text);
    pc_spool_close(sp);
}

Test(spool, a_segment_cut_in_its_header_is_deleted_and_a_foreign_file_set_aside)
{
    pc_spool_settings_t s = settings(PC_SPOOL_FSYNC_NEVER);
    pc_spool_t *sp = open_with(&s);
    append_ok(sp, 0, -1);
    pc_spool_close(sp);
    char path[512];
    snprintf(path, sizeof path, "%s/%020d.seg", dir, 7); /* creation cut after 5 bytes */
    FILE *f = fopen(path, "w");
    fwrite("pcspo", 1, 5, f);
    fclose(f);
    snprintf(path, sizeof path, "%s/%020d.seg", dir, 8); /* not ours */
    f = fopen(path, "w");
    fputs("something else entirely, long enough to hold a header", f);
    fclose(f);

    sp = open_with(&s);
    int64_t ids[8];
    cr_assert_eq(replay_all(sp, ids, NULL, 8), 1);
    char names[8][64];
    cr_assert_eq(segment_files(names, 8), 1, "the cut segment is gone, the foreign one aside");
    snprintf(path, sizeof path, "%s/%020d.seg.bad", dir, 8);
    cr_assert_eq(access(path, F_OK), 0);
    cr_assert(strstr(log_text, "creation was cut short"), "%s", log_text);
    pc_spool_close(sp);
}

/* ---- size, release, owner ---------------------------------------------------------------- */

Test(spool, a_segment_goes_once_every_message_in_it_is_released)
{
    pc_spool_settings_t s = settings(PC_SPOOL_FSYNC_NEVER);
    s.segment_bytes = 1;
    pc_spool_t *sp = open_with(&s);
    place at[3];
    for (int i = 0; i < 3; i++)
        at[i] = append_ok(sp, i, -1);
    char names[8][64];
    cr_assert_eq(segment_files(names, 8), 3);
    release(at[1]);
    cr_assert_eq(segment_files(names, 8), 2);
    release(at[2]); /* where appends go: it stays until the close */
    cr_assert_eq(segment_files(names, 8), 2);
    pc_spool_close(sp);
    cr_assert_eq(segment_files(names, 8), 1, "message 0 was never released: its segment stays");

    sp = open_with(&s);
    int64_t ids[4];
    place places[4];
    cr_assert_eq(replay_all(sp, ids, places, 4), 1);
    cr_assert_eq(ids[0], 0);
    release(places[0]);
    cr_assert_eq(segment_files(names, 8), 0);
    pc_spool_close(sp);
}

typedef struct blocked_append {
    pc_spool_t *sp;
    int index;       /* the message it appends */
    _Atomic int res; /* 1 until done */
} blocked_append;

static void *append_waiting(void *arg)
{
    blocked_append *b = arg;
    char key[32], payload[64];
    pc_spool_msg_t m = message(b->index, -1, key, payload);
    pc_spool_ticket_t t = { 0 };
    atomic_store(&b->res, pc_spool_append(b->sp, &m, &t, true));
    return NULL;
}

static void pause_ms(long ms)
{
    struct timespec ts = { 0, ms * 1000000L };
    nanosleep(&ts, NULL);
}

Test(spool, a_full_spool_fails_or_waits_until_a_release_makes_room)
{
    pc_spool_settings_t s = settings(PC_SPOOL_FSYNC_NEVER);
    s.segment_bytes = 1;
    s.max_bytes = 1024; /* room for a few messages of ~150 bytes, each in its segment */
    pc_spool_t *sp = open_with(&s);
    place at[16];
    int n = 0;
    char key[32], payload[64];
    for (;; n++) {
        cr_assert_lt(n, 16);
        pc_spool_msg_t m = message(n, -1, key, payload);
        pc_spool_ticket_t t = { 0 };
        pulsarc_result r = pc_spool_append(sp, &m, &t, false);
        if (r != PULSARC_OK) {
            cr_assert_eq(r, PULSARC_ERR_QUEUE_FULL, "%s", pulsarc_result_name(r));
            cr_assert(strstr(pulsarc_last_error_detail(), "spoolMaxBytes"));
            break;
        }
        at[n] = (place){ t.segment, t.offset };
    }
    cr_assert_geq(n, 2);
    cr_assert_leq(pc_spool_bytes(sp), 1024);

    blocked_append b = { sp, n, 1 }; /* the message that found no room */
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, append_waiting, &b), 0);
    pause_ms(100); /* the chance to return too early */
    cr_assert_eq(atomic_load(&b.res), 1, "a send waited for room returned while still full");
    release(at[0]);
    pthread_join(th, NULL);
    cr_assert_eq(atomic_load(&b.res), PULSARC_OK);

    /* Closing wakes a waiting appender with ALREADY_CLOSED. */
    b.res = 1;
    cr_assert_eq(pthread_create(&th, NULL, append_waiting, &b), 0);
    pause_ms(50);
    pc_spool_stop_waiting(sp);
    pthread_join(th, NULL);
    cr_assert_eq(atomic_load(&b.res), PULSARC_ERR_ALREADY_CLOSED);
    pc_spool_close(sp);
}

Test(spool, a_message_larger_than_the_whole_spool_fails_at_once)
{
    pc_spool_settings_t s = settings(PC_SPOOL_FSYNC_NEVER);
    s.max_bytes = 4096;
    pc_spool_t *sp = open_with(&s);
    static uint8_t big[8192];
    pc_spool_msg_t m = { .sequence_id = -1, .payload = big, .payload_len = sizeof big };
    pc_spool_ticket_t t = { 0 };
    cr_assert_eq(pc_spool_append(sp, &m, &t, true), PULSARC_ERR_MESSAGE_TOO_BIG);
    pc_spool_close(sp);
}

/* A record smaller than spoolMaxBytes can still not fit: its segment needs a header too.
 * The refusal says so, with each part's size, instead of "N bytes do not fit in M" with
 * N < M. */
Test(spool, a_refusal_for_size_names_the_record_framing_and_the_segment_header)
{
    pc_spool_settings_t s = settings(PC_SPOOL_FSYNC_NEVER);
    s.max_bytes = 65536;
    pc_spool_t *sp = open_with(&s);
    static uint8_t big[65536];
    size_t header = 28 + strlen(s.producer_name) + strlen(s.topic) + 4;
    /* A record 10 bytes below the limit: with the header, over it. */
    size_t payload = 65536 - 10 - PC_SPOOL_FRAME - PC_SPOOL_BODY_FIXED;
    pc_spool_msg_t m = { .sequence_id = -1, .payload = big, .payload_len = payload };
    pc_spool_ticket_t t = { 0 };
    cr_assert_eq(pc_spool_append(sp, &m, &t, false), PULSARC_ERR_MESSAGE_TOO_BIG);
    const char *d = pulsarc_last_error_detail();
    char want[256];
    snprintf(want, sizeof want, "a message of %zu payload bytes", payload);
    cr_assert(strstr(d, want), "%s", d);
    snprintf(want, sizeof want, "its record takes %zu bytes", payload + PC_SPOOL_FRAME +
             PC_SPOOL_BODY_FIXED);
    cr_assert(strstr(d, want), "%s", d);
    snprintf(want, sizeof want, "a %zu-byte segment header", header);
    cr_assert(strstr(d, want), "%s", d);
    snprintf(want, sizeof want, "%zu bytes in all", header + 65536 - 10);
    cr_assert(strstr(d, want), "%s", d);
    cr_assert(strstr(d, "spoolMaxBytes (65536)"), "%s", d);
    cr_assert_eq(n_handed, 0);
    pc_spool_close(sp);
}

Test(spool, another_producer_name_or_topic_is_refused_and_one_producer_at_a_time)
{
    pc_spool_settings_t s = settings(PC_SPOOL_FSYNC_NEVER);
    pc_spool_t *sp = open_with(&s);
    pc_spool_t *second = NULL;
    cr_assert_eq(pc_spool_open(&s, &second), PULSARC_ERR_SPOOL);
    cr_assert(strstr(pulsarc_last_error_detail(), "in use"), "%s", pulsarc_last_error_detail());
    append_ok(sp, 0, -1);
    pc_spool_close(sp);

    pc_spool_settings_t other = s;
    other.producer_name = "app-2";
    cr_assert_eq(pc_spool_open(&other, &second), PULSARC_ERR_SPOOL);
    const char *d = pulsarc_last_error_detail();
    cr_assert(strstr(d, "\"app-1\"") && strstr(d, "\"app-2\""), "%s", d);
    other = s;
    other.topic = "persistent://public/default/elsewhere";
    cr_assert_eq(pc_spool_open(&other, &second), PULSARC_ERR_SPOOL);
    cr_assert(strstr(pulsarc_last_error_detail(), "elsewhere"));
    /* The right one still opens, and finds its message. */
    sp = open_with(&s);
    int64_t ids[2];
    cr_assert_eq(replay_all(sp, ids, NULL, 2), 1);
    pc_spool_close(sp);
}

/* ---- the group commit -------------------------------------------------------------------- */

#define THREADS 4
#define PER_THREAD 150

static void *append_many(void *arg)
{
    pc_spool_t *sp = arg;
    char key[32], payload[64];
    for (int i = 0; i < PER_THREAD; i++) {
        pc_spool_msg_t m = message(i, -1, key, payload);
        pc_spool_ticket_t t = { 0 };
        if (pc_spool_append(sp, &m, &t, true) != PULSARC_OK)
            return (void *)1;
    }
    return NULL;
}

static void concurrent_appends_are_in_one_order(pc_spool_fsync_t policy)
{
    pc_spool_settings_t s = settings(policy);
    s.segment_bytes = 8192; /* several rolls while groups are in flight */
    pc_spool_t *sp = open_with(&s);
    pthread_t th[THREADS];
    for (int i = 0; i < THREADS; i++)
        cr_assert_eq(pthread_create(&th[i], NULL, append_many, sp), 0);
    for (int i = 0; i < THREADS; i++) {
        void *ret;
        pthread_join(th[i], &ret);
        cr_assert_null(ret, "an append failed");
    }
    cr_assert_eq(n_handed, THREADS * PER_THREAD);
    for (int i = 0; i < n_handed; i++)
        cr_assert_eq(handed[i], i, "hand-over %d had id %lld", i, (long long)handed[i]);
    pc_spool_close(sp);
    /* The files hold them in the same order. */
    sp = open_with(&s);
    static int64_t ids[THREADS * PER_THREAD];
    cr_assert_eq(replay_all(sp, ids, NULL, THREADS * PER_THREAD), THREADS * PER_THREAD);
    for (int i = 0; i < THREADS * PER_THREAD; i++)
        cr_assert_eq(ids[i], i);
    pc_spool_close(sp);
}

Test(spool, always_hands_over_in_id_and_file_order_under_concurrent_senders)
{
    concurrent_appends_are_in_one_order(PC_SPOOL_FSYNC_ALWAYS);
}

Test(spool, interval_hands_over_in_id_and_file_order_under_concurrent_senders)
{
    concurrent_appends_are_in_one_order(PC_SPOOL_FSYNC_INTERVAL);
}
