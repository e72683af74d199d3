/* The spool (spoolDir) against a deduplicating mock: what a producer accepted and had no
 * receipt for when its client went away is resent by the next producer on the spool,
 * with its sequence ids, before any new message; flush waits for those resends; the
 * spool's files go once everything is stored; and the settings a spool cannot work with
 * are refused at creation. */
#include "client_harness.h"

#include <fcntl.h>
#include <jansson.h>

#include "../support/test_spool_dir.h"

TestSuite(client_spool, .init = h_setup, .fini = h_teardown, .timeout = H_SUITE_TIMEOUT(40));

static char spool_dir[64];

static void make_spool_dir(void)
{
    cr_assert_eq(test_spool_dir_make(spool_dir, sizeof spool_dir), 0);
}

/* How many segment files the spool holds. */
static int segments(void)
{
    return test_spool_dir_count(spool_dir, ".seg");
}

static void remove_spool_dir(void)
{
    test_spool_dir_remove(spool_dir);
}

static pulsarc_producer_t *spooled_producer(const char *name, const char *fsync)
{
    return h_producer(client, H_TOPIC, "producerName", name, "spoolDir", spool_dir, "spoolFsync",
                      fsync, "sendTimeoutMs", "0", NULL);
}

/* The process "dies" with messages 0..n-1 accepted and not stored: the broker is down
 * while they are sent, and the client goes away without them (each fails with
 * ALREADY_CLOSED, which leaves it in the spool). */
static void leave_unsent_in_spool(int n)
{
    client = h_client(NULL);
    producer = spooled_producer("app-1", "never");
    cr_assert_eq(mock_broker_set_down(mb, true), 0);
    h_send_range(producer, 0, n);
    pulsarc_client_destroy(client);
    client = NULL;
    cr_assert(h_wait_calls(n, 3000));
    for (int i = 0; i < n; i++)
        cr_assert_eq(T.res[i], PULSARC_ERR_ALREADY_CLOSED);
    pulsarc_producer_free(producer);
    producer = NULL;
    h_reset_tracker();
    cr_assert_eq(mock_broker_set_down(mb, false), 0);
}

Test(client_spool, unsent_messages_are_resent_first_with_their_ids_then_new_ones)
{
    make_spool_dir();
    mock_broker_set_deduplication(mb, true);
    mock_broker_set_last_sequence_id(mb, MOCK_LAST_SEQ_TRACKED);
    leave_unsent_in_spool(5);
    cr_assert_eq(h_count(mb, MOCK_SENDS), 0, "the broker was down: nothing reached it");
    cr_assert_eq(segments(), 1);

    client = h_client(NULL);
    producer = spooled_producer("app-1", "never");
    h_send_range(producer, 10, 13); /* three new messages */
    cr_assert_eq(pulsarc_producer_flush(producer), PULSARC_OK);
    for (int i = 10; i < 13; i++)
        cr_assert(T.calls[i] == 1 && T.res[i] == PULSARC_OK, "new message %d", i);
    /* The mock saw the five spooled messages first, with ids 0..4, then the new ones
     * with 5, 6, 7, each stored once. */
    cr_assert_eq(h_count(mb, MOCK_SENDS), 8);
    int want_index[8] = { 0, 1, 2, 3, 4, 10, 11, 12 };
    for (size_t i = 0; i < 8; i++) {
        mock_send_t s = h_get_send(mb, i);
        cr_assert_eq(h_send_index(&s), want_index[i], "SEND %zu carried message %d", i,
                     h_send_index(&s));
        cr_assert_eq(s.sequence_id, i, "SEND %zu had sequence id %llu", i,
                     (unsigned long long)s.sequence_id);
        cr_assert(s.persisted && !s.duplicate, "SEND %zu was not stored", i);
        mock_send_free(&s);
    }
    cr_assert(h_log_contains("resending 5 spooled message(s)"));
    cr_assert_eq(pulsarc_producer_close(producer), PULSARC_OK);
    cr_assert_eq(segments(), 0, "everything is stored: the spool holds nothing");
    h_finish();
    remove_spool_dir();
}

/* Damage one byte of message idx's payload ("msg-<idx>") in the spool's only segment. */
static void damage_spooled_message(int idx)
{
    DIR *d = opendir(spool_dir);
    cr_assert_not_null(d);
    char path[512] = "";
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len > 4 && strcmp(e->d_name + len - 4, ".seg") == 0)
            snprintf(path, sizeof path, "%s/%s", spool_dir, e->d_name);
    }
    closedir(d);
    static uint8_t buf[1 << 20];
    int fd = open(path, O_RDWR);
    cr_assert_geq(fd, 0, "%s", path);
    ssize_t n = pread(fd, buf, sizeof buf, 0);
    cr_assert_gt(n, 0);
    char text[16];
    int tl = snprintf(text, sizeof text, "msg-%d", idx);
    const uint8_t *at = memmem(buf, (size_t)n, text, (size_t)tl);
    cr_assert_not_null(at);
    cr_assert_eq(pwrite(fd, "X", 1, at - buf + tl - 1), 1);
    close(fd);
}

/* A damaged record in the middle of the spool: the messages before and after it are
 * resent, the producer's statistics count what was skipped, and the log says so. */
Test(client_spool, damage_in_the_spool_skips_one_message_and_the_statistics_count_it)
{
    make_spool_dir();
    mock_broker_set_deduplication(mb, true);
    mock_broker_set_last_sequence_id(mb, MOCK_LAST_SEQ_TRACKED);
    leave_unsent_in_spool(5);
    damage_spooled_message(2);

    client = h_client(NULL);
    producer = spooled_producer("app-1", "never");
    cr_assert_eq(pulsarc_producer_flush(producer), PULSARC_OK);
    int want[] = { 0, 1, 3, 4 };
    cr_assert_eq(h_count(mb, MOCK_SENDS), 4);
    for (size_t i = 0; i < 4; i++) {
        mock_send_t s = h_get_send(mb, i);
        cr_assert_eq(h_send_index(&s), want[i], "SEND %zu carried message %d", i, h_send_index(&s));
        mock_send_free(&s);
    }
    cr_assert(h_log_contains("bytes skipped"));
    pulsarc_stats_t *st;
    cr_assert_eq(pulsarc_producer_stats(producer, &st), PULSARC_OK);
    json_error_t err;
    json_t *j = json_loads(pulsarc_stats_json(st), 0, &err);
    cr_assert_not_null(j, "%s", err.text);
    json_t *spool = json_object_get(j, "spool");
    cr_assert(json_is_object(spool), "%s", pulsarc_stats_json(st));
    cr_assert_eq(json_integer_value(json_object_get(spool, "skipped_records")), 1);
    cr_assert_gt(json_integer_value(json_object_get(spool, "skipped_bytes")), 5);
    json_decref(j);
    pulsarc_stats_free(st);
    h_finish();
    remove_spool_dir();
}

/* Stored, but the receipts never came back before the client went away: the resends are
 * duplicates the broker drops ("stored earlier", ledger -1), and new ids go on after
 * them. */
Test(client_spool, what_the_broker_had_stored_is_resent_as_duplicates_and_not_stored_again)
{
    make_spool_dir();
    mock_broker_set_deduplication(mb, true);
    mock_broker_set_last_sequence_id(mb, MOCK_LAST_SEQ_TRACKED);
    client = h_client(NULL);
    producer = spooled_producer("app-1", "interval");
    mock_broker_set_receipt_mode(mb, MOCK_RECEIPTS_SUPPRESS);
    h_send_range(producer, 0, 4);
    cr_assert(h_wait_sends(mb, 4, 3000));
    pulsarc_client_destroy(client);
    client = NULL;
    pulsarc_producer_free(producer);
    producer = NULL;
    h_reset_tracker();
    mock_broker_set_receipt_mode(mb, MOCK_RECEIPTS_NORMAL);

    client = h_client(NULL);
    producer = spooled_producer("app-1", "interval");
    cr_assert_eq(pulsarc_producer_last_sequence_id(producer), 3);
    h_send_range(producer, 4, 6);
    cr_assert_eq(pulsarc_producer_flush(producer), PULSARC_OK);
    int stored = 0, dups = 0;
    for (size_t i = 4; i < h_count(mb, MOCK_SENDS); i++) {
        mock_send_t s = h_get_send(mb, i);
        stored += s.persisted;
        dups += s.duplicate;
        if (s.duplicate)
            cr_assert_leq(s.sequence_id, 3);
        else
            cr_assert(s.sequence_id == 4 || s.sequence_id == 5, "new id %llu",
                      (unsigned long long)s.sequence_id);
        mock_send_free(&s);
    }
    cr_assert_eq(dups, 4, "the four resends are dropped as duplicates");
    cr_assert_eq(stored, 2, "only the two new messages are stored");
    cr_assert(T.ledger[4] >= 0 && T.ledger[5] >= 0);
    cr_assert_eq(pulsarc_producer_close(producer), PULSARC_OK);
    cr_assert_eq(segments(), 0);
    h_finish();
    remove_spool_dir();
}

static _Atomic int flushed = 1;

static void on_flushed(pulsarc_producer_t *p, pulsarc_result res, void *ctx)
{
    atomic_store(&flushed, res);
}

Test(client_spool, flush_waits_for_the_resent_messages)
{
    make_spool_dir();
    mock_broker_set_deduplication(mb, true);
    mock_broker_set_last_sequence_id(mb, MOCK_LAST_SEQ_TRACKED);
    leave_unsent_in_spool(3);

    mock_broker_set_receipt_mode(mb, MOCK_RECEIPTS_HOLD);
    client = h_client(NULL);
    producer = spooled_producer("app-1", "always");
    cr_assert_eq(pulsarc_producer_pending_count(producer), 3, "the resends count as pending");
    cr_assert_eq(pulsarc_producer_flush_async(producer, on_flushed, NULL), PULSARC_OK);
    cr_assert(h_wait_count(mb, MOCK_HELD_RECEIPTS, 3, 3000));
    h_let_time_pass(100); /* a flush that did not wait for them would be done now */
    cr_assert_eq(atomic_load(&flushed), 1, "flush finished before the resends were stored");
    mock_broker_release_receipts(mb);
    cr_assert(h_wait_changed(&flushed, 1, 3000));
    cr_assert_eq(atomic_load(&flushed), PULSARC_OK);
    cr_assert_eq(pulsarc_producer_pending_count(producer), 0);
    mock_broker_set_receipt_mode(mb, MOCK_RECEIPTS_NORMAL);
    h_finish();
    cr_assert_eq(segments(), 0);
    remove_spool_dir();
}

Test(client_spool, a_spool_of_another_producer_name_is_refused_before_anything_connects)
{
    make_spool_dir();
    client = h_client(NULL);
    producer = spooled_producer("app-1", "never");
    cr_assert_eq(pulsarc_producer_close(producer), PULSARC_OK); /* the spool is free then */
    pulsarc_producer_free(producer);
    producer = NULL;
    uint64_t registrations = h_count(mb, MOCK_PRODUCERS);
    char detail[512];
    pulsarc_result r = h_producer_fails(client, H_TOPIC,
                                        h_producer_conf(0, "producerName", "app-2", "spoolDir",
                                                        spool_dir, NULL),
                                        detail, sizeof detail, NULL);
    cr_assert_eq(r, PULSARC_ERR_SPOOL, "%s", pulsarc_result_name(r));
    cr_assert(strstr(detail, "\"app-1\"") && strstr(detail, "\"app-2\""), "%s", detail);
    cr_assert_eq(h_count(mb, MOCK_PRODUCERS), registrations);
    h_finish();
    remove_spool_dir();
}

Test(client_spool, settings_a_spool_cannot_work_with_are_refused)
{
    make_spool_dir();
    client = h_client(NULL);
    char detail[512];
    cr_assert_eq(h_producer_fails(client, H_TOPIC, h_producer_conf(0, "spoolDir", spool_dir, NULL),
                                  detail, sizeof detail, NULL),
                 PULSARC_ERR_INVALID_CONFIG);
    cr_assert(strstr(detail, "producerName"), "%s", detail);
    cr_assert_eq(h_producer_fails(client, H_TOPIC,
                                  h_producer_conf(0, "producerName", "a", "spoolDir", spool_dir,
                                                  "batchingEnabled", "true", "batcherType",
                                                  "key_based", NULL),
                                  detail, sizeof detail, NULL),
                 PULSARC_ERR_INVALID_CONFIG);
    cr_assert(strstr(detail, "key_based"), "%s", detail);
    h_finish();
    remove_spool_dir();
}

/* A resend from the spool would lose them: refused at the send, nothing spooled. */
Test(client_spool, messages_the_spool_cannot_keep_are_refused_at_the_send)
{
    make_spool_dir();
    client = h_client(NULL);
    producer = spooled_producer("app-1", "never");
    pulsarc_message_t *m = h_message(0, 0);
    cr_assert_eq(pulsarc_message_set_deliver_after(m, 1000), PULSARC_OK);
    cr_assert_eq(pulsarc_producer_send_async(producer, m, NULL, NULL),
                 PULSARC_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pulsarc_last_error_detail(), "deliverAfter"), "%s",
              pulsarc_last_error_detail());
    pulsarc_message_free(m);
    m = h_message(1, 0);
    const char *clusters[] = { "east" };
    cr_assert_eq(pulsarc_message_set_replication_clusters(m, clusters, 1), PULSARC_OK);
    cr_assert_eq(pulsarc_producer_send_async(producer, m, NULL, NULL),
                 PULSARC_ERR_INVALID_ARGUMENT);
    pulsarc_message_free(m);
    cr_assert_eq(h_send_sync(producer, 2), PULSARC_OK, "%s", pulsarc_last_error_detail());
    h_finish();
    remove_spool_dir();
}

static _Atomic int loop_send = 1;

static void send_from_callback(pulsarc_producer_t *p, int idx, pulsarc_result res)
{
    if (idx != 0)
        return;
    pulsarc_message_t *m = h_message(1, 0);
    atomic_store(&loop_send, pulsarc_producer_send_async(p, m, NULL, NULL));
    pulsarc_message_free(m);
}

Test(client_spool, always_refuses_a_send_on_the_loop_thread)
{
    make_spool_dir();
    client = h_client(NULL);
    producer = spooled_producer("app-1", "always");
    T.hook = send_from_callback;
    cr_assert_eq(h_send(producer, 0), PULSARC_OK);
    cr_assert(h_wait_changed(&loop_send, 1, 3000));
    cr_assert_eq(atomic_load(&loop_send), PULSARC_ERR_WOULD_BLOCK);
    h_finish();
    remove_spool_dir();
}

Test(client_spool, a_full_spool_fails_with_queue_full_until_receipts_free_it)
{
    make_spool_dir();
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, "producerName", "app-1", "spoolDir", spool_dir,
                          "spoolFsync", "never", "spoolMaxBytes", "65536", "maxPendingMessages",
                          "0", NULL);
    mock_broker_set_receipt_mode(mb, MOCK_RECEIPTS_HOLD);
    int n = 0;
    pulsarc_result r;
    while ((r = h_send_len(producer, n, 2000)) == PULSARC_OK) {
        n++;
        cr_assert_lt(n, 64, "a 64 KiB spool took 64 messages of 2000 bytes");
    }
    cr_assert_eq(r, PULSARC_ERR_QUEUE_FULL, "%s", pulsarc_result_name(r));
    cr_assert(strstr(pulsarc_last_error_detail(), "spoolMaxBytes"));
    cr_assert_geq(n, 20);
    h_release_held_expect_freed(mb, client, n);
    cr_assert_eq(h_send_len(producer, n, 2000), PULSARC_OK, "room again once stored");
    mock_broker_set_receipt_mode(mb, MOCK_RECEIPTS_NORMAL);
    mock_broker_release_receipts(mb);
    cr_assert(h_wait_calls(n + 1, 3000));
    h_finish();
    remove_spool_dir();
}
