/* What the spool's unit suites share (tests/unit/test_spool*.c): a fresh directory per
 * test, a logger that keeps what it was told, the hand-overs in the order the spool made
 * them, messages whose every field derives from their index, and the files looked at and
 * damaged from outside. Each suite file includes it once and declares its suite with
 * make_dir and remove_dir. */
#ifndef PC_TEST_SPOOL_FIXTURE_H
#define PC_TEST_SPOOL_FIXTURE_H

#include <criterion/criterion.h>

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "spool/spool.h"
#include "spool/spool_format.h"
#include "test_spool_dir.h"

#define SF_UNUSED __attribute__((unused))

static SF_UNUSED char dir[64];
static SF_UNUSED char log_text[16384];
static SF_UNUSED int log_lines;

static SF_UNUSED void on_log(pulsarc_log_level level, const char *file, int line, const char *msg,
                             void *ctx)
{
    size_t used = strlen(log_text);
    snprintf(log_text + used, sizeof log_text - used, "%s\n", msg);
    log_lines++;
}

static SF_UNUSED const pc_logger_t logger = { on_log, NULL, PULSARC_LOG_INFO };

static SF_UNUSED int count_in_log(const char *needle)
{
    int n = 0;
    for (const char *p = log_text; (p = strstr(p, needle)) != NULL; p += strlen(needle))
        n++;
    return n;
}

/* Hand-overs, in the order the spool made them (it runs `accepted` under its lock). */
static SF_UNUSED int64_t handed[8192];
static SF_UNUSED int n_handed;

static SF_UNUSED void on_accepted(pc_spool_ticket_t *t)
{
    handed[n_handed++] = t->sequence_id;
}

static SF_UNUSED void make_dir(void)
{
    cr_assert_eq(test_spool_dir_make(dir, sizeof dir), 0);
}

static SF_UNUSED void remove_dir(void)
{
    test_spool_dir_remove(dir);
}

static SF_UNUSED pc_spool_settings_t settings(pc_spool_fsync_t policy)
{
    return (pc_spool_settings_t){ .dir = dir,
                                  .producer_name = "app-1",
                                  .topic = "persistent://public/default/t",
                                  .fsync = policy,
                                  .fsync_interval_ms = 5,
                                  .max_bytes = 1 << 20,
                                  .log = &logger,
                                  .accepted = on_accepted };
}

static SF_UNUSED pc_spool_t *open_with(const pc_spool_settings_t *s)
{
    pc_spool_t *sp = NULL;
    pulsarc_result r = pc_spool_open(s, &sp);
    cr_assert_eq(r, PULSARC_OK, "open: %s", pulsarc_last_error_detail());
    return sp;
}

static SF_UNUSED const char *const props[][2] = { { "a", "1" }, { "name", "value two" } };

static SF_UNUSED void prop_at(const void *p, size_t i, const char **name, const char **value)
{
    const char *const(*table)[2] = p;
    *name = table[i][0];
    *value = table[i][1];
}

/* Message i: its fields derived from i, so a read-back can check every one. */
static SF_UNUSED pc_spool_msg_t message(int i, int64_t id, char *key, char *payload)
{
    snprintf(key, 32, "key-%d", i);
    snprintf(payload, 64, "payload of message %d", i);
    return (pc_spool_msg_t){ .sequence_id = id,
                             .partition = i % 3,
                             .flags = i % 2 ? PC_SPOOL_KEY_B64 : PC_SPOOL_NULL_VALUE,
                             .event_time = 1000u + (uint64_t)i,
                             .deliver_at = 2000u + (uint64_t)i,
                             .key = i % 4 == 3 ? NULL : key,
                             .ordering_key = (const uint8_t *)"ok\0k",
                             .ordering_key_len = i % 2 ? 4 : 0,
                             .n_props = (size_t)(i % 3),
                             .prop_at = prop_at,
                             .props = props,
                             .payload = (const uint8_t *)payload,
                             .payload_len = strlen(payload) };
}

/* Where a message is in the spool, for pc_spool_release. */
typedef struct place {
    pc_spool_segment_t *seg;
    uint64_t offset;
} place;

static SF_UNUSED place append_ok(pc_spool_t *sp, int i, int64_t id)
{
    char key[32], payload[64];
    pc_spool_msg_t m = message(i, id, key, payload);
    pc_spool_ticket_t t = { 0 };
    pulsarc_result r = pc_spool_append(sp, &m, &t, false);
    cr_assert_eq(r, PULSARC_OK, "append %d: %s (%s)", i, pulsarc_result_name(r),
                 pulsarc_last_error_detail());
    return (place){ t.segment, t.offset };
}

static SF_UNUSED void release(place p)
{
    pc_spool_release(p.seg, p.offset);
}

static SF_UNUSED void assert_is_message(const pc_spool_record_t *r, int i, int64_t id)
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
static SF_UNUSED int segment_files(char names[][64], int max)
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

static SF_UNUSED off_t file_size(const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    struct stat st;
    cr_assert_eq(stat(path, &st), 0);
    return st.st_size;
}

static SF_UNUSED void rewrite(const char *name, off_t at, uint8_t byte)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int fd = open(path, O_WRONLY);
    cr_assert_geq(fd, 0);
    cr_assert_eq(pwrite(fd, &byte, 1, at), 1);
    close(fd);
}

static SF_UNUSED void truncate_to(const char *name, off_t size)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    cr_assert_eq(truncate(path, size), 0);
}

/* Replay everything: the records' ids (and, with places, where each is) in order. */
static SF_UNUSED int replay_all(pc_spool_t *sp, int64_t *ids, place *places, int max)
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

/* One append of message `index` (automatic id, waiting for room) on a thread of its own. */
typedef struct sender {
    pc_spool_t *sp;
    int index;
    pthread_t th;
    _Atomic int res; /* 1 until its append returned */
} sender;

static SF_UNUSED void *send_one(void *arg)
{
    sender *s = arg;
    char key[32], payload[64];
    pc_spool_msg_t m = message(s->index, -1, key, payload);
    pc_spool_ticket_t t = { 0 };
    atomic_store(&s->res, pc_spool_append(s->sp, &m, &t, true));
    return NULL;
}

static SF_UNUSED void start(sender *s, pc_spool_t *sp, int index)
{
    s->sp = sp;
    s->index = index;
    atomic_store(&s->res, 1);
    cr_assert_eq(pthread_create(&s->th, NULL, send_one, s), 0);
}

/* A scan over len bytes of memory from offset `from` (pc_spool_scan_free(&m->sc) after). */
typedef struct mem_scan {
    pc_spool_mem_t mem;
    pc_spool_source_t src;
    pc_spool_scan_t sc;
} mem_scan;

static SF_UNUSED void mem_scan_init(mem_scan *m, const uint8_t *buf, size_t len, uint64_t from)
{
    m->mem = (pc_spool_mem_t){ buf, len };
    m->src = pc_spool_mem_source(&m->mem);
    pc_spool_scan_init(&m->sc, from);
}

#endif
