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
