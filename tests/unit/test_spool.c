/* The spool (src/spool/): its segment format read back field for field, the size limit
 * (fail, wait, room after a release), segments deleted once released, the owner check and
 * the lock, and ids, file order and hand-over order being one order under the group
 * commit. Damaged segments: test_spool_recovery.c. */
#include <time.h>

#include "../support/test_spool_fixture.h"

TestSuite(spool, .init = make_dir, .fini = remove_dir, .timeout = 60);

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
    buf[0] = 0xff;
    buf[1] = 0xff;
    buf[2] = 0xff;
    buf[3] = 0x7f; /* ~2 GiB "record" */
    mem_scan m;
    mem_scan_init(&m, buf, sizeof buf, 0);
    pc_spool_record_t rec;
    cr_assert_eq(pc_spool_scan_next(&m.sc, &m.src, &rec), PC_SPOOL_SCAN_CUT);
    cr_assert_eq(m.sc.offset, 0);
    cr_assert_null(m.sc.body);
    pc_spool_scan_free(&m.sc);
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

    sender b;
    start(&b, sp, n); /* the message that found no room */
    pause_ms(100);    /* the chance to return too early */
    cr_assert_eq(atomic_load(&b.res), 1, "a send waited for room returned while still full");
    release(at[0]);
    pthread_join(b.th, NULL);
    cr_assert_eq(atomic_load(&b.res), PULSARC_OK);

    /* Closing wakes a waiting appender with ALREADY_CLOSED. */
    start(&b, sp, n);
    pause_ms(50);
    pc_spool_stop_waiting(sp);
    pthread_join(b.th, NULL);
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
    snprintf(want, sizeof want, "its record takes %zu bytes",
             payload + PC_SPOOL_FRAME + PC_SPOOL_BODY_FIXED);
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
