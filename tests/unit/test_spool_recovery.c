/* The spool's replay of what a crash or a disk left: torn tails cut once with one log
 * line and never read twice, what a dead process appended and released, a record whose
 * length was never written, segments cut in their header or not of this format. */
#include <sys/wait.h>

#include "../support/test_spool_fixture.h"

TestSuite(spool_recovery, .init = make_dir, .fini = remove_dir, .timeout = 60);

Test(spool_recovery, a_torn_tail_is_cut_once_and_never_read_twice)
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
    cr_assert_eq(handed[0], 2,
                 "the torn message's id is given again: it was never accepted "
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

Test(spool_recovery, messages_released_before_the_crash_are_not_resent)
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

Test(spool_recovery, what_a_dead_process_appended_comes_back_and_its_unused_room_goes_quietly)
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

Test(spool_recovery, a_record_whose_length_was_never_written_is_the_clean_end)
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

Test(spool_recovery, a_corrupt_record_ends_its_segment_and_the_next_segments_still_come)
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

Test(spool_recovery, a_segment_cut_in_its_header_is_deleted_and_a_foreign_file_set_aside)
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

/* ---- damage in the middle of a segment --------------------------------------------------- */

/* Where record i starts in a segment that holds messages 0, 1, ... in order (ids given
 * automatically from 0), and how long it is. */
static off_t record_at(int i)
{
    pc_spool_settings_t s = settings(PC_SPOOL_FSYNC_NEVER);
    off_t at = (off_t)pc_spool_header_size(strlen(s.producer_name), strlen(s.topic));
    char key[32], payload[64];
    for (int k = 0; k < i; k++) {
        pc_spool_msg_t m = message(k, k, key, payload);
        at += (off_t)(PC_SPOOL_FRAME + pc_spool_meta_size(&m) + m.payload_len);
    }
    return at;
}

static off_t record_len(int i)
{
    return record_at(i + 1) - record_at(i);
}

static void put32_at(const char *name, off_t at, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        rewrite(name, at + i, (uint8_t)(v >> (8 * i)));
}

/* Five messages in one segment, left by a producer that closed before any receipt. */
static void five_in_one_segment(char names[][64])
{
    pc_spool_settings_t s = settings(PC_SPOOL_FSYNC_NEVER);
    pc_spool_t *sp = open_with(&s);
    for (int i = 0; i < 5; i++)
        append_ok(sp, i, -1);
    pc_spool_close(sp);
    cr_assert_eq(segment_files(names, 8), 1);
    cr_assert_eq(file_size(names[0]), record_at(5));
}

static void assert_ids(const int64_t *ids, int n, const int64_t *want, int n_want)
{
    cr_assert_eq(n, n_want, "%d records replayed, want %d", n, n_want);
    for (int i = 0; i < n; i++)
        cr_assert_eq(ids[i], want[i], "record %d: id %lld, want %lld", i, (long long)ids[i],
                     (long long)want[i]);
}

/* A payload byte of message 2 flipped: 0, 1, 3 and 4 come back, the file keeps every
 * byte (intact data is never deleted), and once they are all released the segment is set
 * aside as .damaged: kept, never replayed again, not counted in the spool's size. */
Test(spool_recovery, damage_in_the_middle_skips_only_the_damaged_record)
{
    char names[8][64];
    five_in_one_segment(names);
    off_t size = file_size(names[0]);
    rewrite(names[0], record_at(3) - 2, 'X');

    pc_spool_settings_t s = settings(PC_SPOOL_FSYNC_NEVER);
    pc_spool_t *sp = open_with(&s);
    int64_t ids[8];
    place at[8];
    const int64_t want[] = { 0, 1, 3, 4 };
    assert_ids(ids, replay_all(sp, ids, at, 8), want, 4);
    cr_assert_eq(pc_spool_skipped_records(sp), 1);
    cr_assert_eq(pc_spool_skipped_bytes(sp), (uint64_t)record_len(2));
    cr_assert_eq(file_size(names[0]), size, "bytes were cut off the damaged segment");
    char line[160];
    snprintf(line, sizeof line, "%lld bytes skipped at offset %lld", (long long)record_len(2),
             (long long)record_at(2));
    cr_assert(strstr(log_text, line) && strstr(log_text, "CRC does not match"), "%s", log_text);
    pc_spool_close(sp); /* not released: a crash now loses nothing */

    log_text[0] = '\0';
    sp = open_with(&s);
    assert_ids(ids, replay_all(sp, ids, at, 8), want, 4);
    cr_assert(strstr(log_text, line), "%s", log_text);
    for (int i = 0; i < 4; i++)
        release(at[i]);
    cr_assert_eq(segment_files(names, 8), 0);
    cr_assert_eq(pc_spool_bytes(sp), 0, "the damaged segment still counts in the size");
    char path[512];
    snprintf(path, sizeof path, "%s/%020d.seg.damaged", dir, 1);
    struct stat st;
    cr_assert_eq(stat(path, &st), 0, "the damaged segment was not kept");
    cr_assert_eq(st.st_size, size);
    append_ok(sp, 5, -1); /* a new segment never takes the number of one set aside */
    pc_spool_close(sp);
    cr_assert_eq(segment_files(names, 8), 1);
    cr_assert_str_eq(names[0], "00000000000000000002.seg");

    sp = open_with(&s);
    cr_assert_eq(replay_all(sp, ids, NULL, 8), 1, "the set-aside segment was read again");
    pc_spool_close(sp);
    cr_assert_eq(stat(path, &st), 0);
}

/* A length that runs past the end, or points into the next record, is damage too when
 * whole records follow: the next one is found by trying every offset after the damage. */
Test(spool_recovery, a_damaged_length_in_the_middle_is_skipped_to_the_next_whole_record)
{
    char names[8][64];
    five_in_one_segment(names);
    put32_at(names[0], record_at(1), 0x7fffff00u); /* far past the end of the file */
    put32_at(names[0], record_at(3), (uint32_t)(record_len(3) - PC_SPOOL_FRAME + 1));

    pc_spool_settings_t s = settings(PC_SPOOL_FSYNC_NEVER);
    pc_spool_t *sp = open_with(&s);
    int64_t ids[8];
    const int64_t want[] = { 0, 2, 4 };
    assert_ids(ids, replay_all(sp, ids, NULL, 8), want, 3);
    cr_assert_eq(count_in_log("bytes skipped"), 2, "%s", log_text);
    cr_assert_eq(pc_spool_skipped_records(sp), 2);
    cr_assert_eq(pc_spool_skipped_bytes(sp), (uint64_t)(record_len(1) + record_len(3)));
    pc_spool_close(sp);
}

/* Damage in the middle and a torn tail after it: the tail is not cut either, a damaged
 * segment keeps every byte. */
Test(spool_recovery, a_damaged_segment_keeps_its_torn_tail)
{
    char names[8][64];
    five_in_one_segment(names);
    rewrite(names[0], record_at(2) + PC_SPOOL_FRAME, 0xee);
    truncate_to(names[0], record_at(5) - 3);
    pc_spool_settings_t s = settings(PC_SPOOL_FSYNC_NEVER);
    pc_spool_t *sp = open_with(&s);
    int64_t ids[8];
    const int64_t want[] = { 0, 1, 3 };
    assert_ids(ids, replay_all(sp, ids, NULL, 8), want, 3);
    cr_assert_eq(file_size(names[0]), record_at(5) - 3);
    cr_assert(strstr(log_text, "left in the damaged segment"), "%s", log_text);
    cr_assert_eq(pc_spool_skipped_records(sp), 1, "a torn tail is not counted");
    pc_spool_close(sp);
}

/* A damaged last record with nothing whole after it is a torn tail, even with unused
 * room after it (a process that died while writing the record's frame): cut, as before,
 * and the segment is not set aside. */
Test(spool_recovery, a_damaged_record_with_nothing_whole_after_it_is_a_torn_tail)
{
    pc_spool_settings_t s = settings(PC_SPOOL_FSYNC_NEVER);
    appended_by_a_process_that_died(&s, 3);
    char names[8][64];
    cr_assert_eq(segment_files(names, 8), 1);
    cr_assert_gt(file_size(names[0]), record_at(3), "the room allocated ahead is there");
    rewrite(names[0], record_at(2) + 5, 0x5a); /* its CRC, half written */
    pc_spool_t *sp = open_with(&s);
    int64_t ids[8];
    const int64_t want[] = { 0, 1 };
    assert_ids(ids, replay_all(sp, ids, NULL, 8), want, 2);
    cr_assert_eq(file_size(names[0]), record_at(2), "the torn tail was not cut");
    cr_assert(strstr(log_text, "cut at offset"), "%s", log_text);
    cr_assert_eq(count_in_log("skipped"), 0, "%s", log_text);
    cr_assert_eq(pc_spool_skipped_records(sp), 0);
    pc_spool_close(sp);
    cr_assert_eq(test_spool_dir_count(dir, ".damaged"), 0);
}

/* Record of message i (id i) with the given payload, encoded at out: its length. */
static size_t encode_record(uint8_t *out, int i, const void *payload, size_t len)
{
    char key[32], text[64];
    pc_spool_msg_t m = message(i, i, key, text);
    m.payload = payload;
    m.payload_len = len;
    size_t meta = pc_spool_meta_size(&m);
    pc_spool_meta_encode(out + PC_SPOOL_FRAME, &m);
    memcpy(out + PC_SPOOL_FRAME + meta, payload, len);
    pc_spool_frame_encode(out, out + PC_SPOOL_FRAME, meta, payload, len, NULL);
    return PC_SPOOL_FRAME + meta + len;
}

/* A message whose payload is itself a whole spool record, with a damaged byte in its
 * metadata: the scan goes on at the next record (where the damaged one's length says it
 * ends), never at the record inside its payload. */
Test(spool_recovery, a_resync_takes_no_record_from_inside_the_damaged_one)
{
    static uint8_t inner[256], buf[1024];
    size_t inner_len = encode_record(inner, 7, "inner", 5);
    size_t a = encode_record(buf, 0, "a", 1);
    size_t b = encode_record(buf + a, 1, inner, inner_len);
    size_t c = encode_record(buf + a + b, 2, "c", 1);
    buf[a + PC_SPOOL_FRAME + 16] ^= 1; /* B's event time */
    mem_scan m;
    mem_scan_init(&m, buf, a + b + c, 0);
    pc_spool_record_t rec;
    int64_t ids[2];
    for (int i = 0; i < 2; i++) {
        cr_assert_eq(pc_spool_scan_next(&m.sc, &m.src, &rec), PC_SPOOL_SCAN_RECORD);
        ids[i] = rec.sequence_id;
        if (i == 0) {
            cr_assert_eq(pc_spool_scan_next(&m.sc, &m.src, &rec), PC_SPOOL_SCAN_CUT);
            cr_assert_eq(m.sc.offset, a);
            cr_assert_eq(pc_spool_scan_resync(&m.sc, &m.src), PC_SPOOL_RESYNC_FOUND);
            cr_assert_eq(m.sc.offset, a + b, "resynced at %llu", (unsigned long long)m.sc.offset);
        }
    }
    cr_assert(ids[0] == 0 && ids[1] == 2);
    cr_assert_eq(pc_spool_scan_next(&m.sc, &m.src, &rec), PC_SPOOL_SCAN_END);
    pc_spool_scan_free(&m.sc);
}
