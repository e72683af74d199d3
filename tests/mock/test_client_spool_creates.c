/* Both creates open and replay the spool: pulsarc_client_create_producer_async (the only
 * create on the application's own loop, where this suite runs too) makes the spool's
 * directory, spools what it accepts, and resends what an earlier producer left before
 * its creator gets the handle, as the blocking create does. */
#include "client_harness.h"

#include <sys/stat.h>

#include "../support/test_spool_dir.h"

TestSuite(client_spool_creates, .init = h_setup, .fini = h_teardown,
          .timeout = H_SUITE_TIMEOUT(40));

static char base[64];
static char spool_dir[128];

static void make_spool_path(void)
{
    cr_assert_eq(test_spool_dir_make(base, sizeof base), 0);
    /* Not there yet: the create makes it. */
    snprintf(spool_dir, sizeof spool_dir, "%s/spool", base);
}

static void remove_spool_path(void)
{
    test_spool_dir_remove(spool_dir);
    rmdir(base);
}

typedef struct created {
    _Atomic int done; /* 0 until the callback, then res + 1000 */
    pulsarc_producer_t *producer;
    char detail[256];
} created;

static void on_created(pulsarc_client_t *c, pulsarc_result res, pulsarc_producer_t *p, void *ctx)
{
    created *cr = ctx;
    cr->producer = p;
    snprintf(cr->detail, sizeof cr->detail, "%s", res ? pulsarc_last_error_detail() : "");
    atomic_store(&cr->done, res + 1000);
}

/* A producer named name on spool_dir, made by the async create. */
static pulsarc_producer_t *spooled_async(const char *name)
{
    pulsarc_producer_config_t *pc = h_producer_conf(0, "producerName", name, "spoolDir", spool_dir,
                                                    "spoolFsync", "interval", "sendTimeoutMs", "0",
                                                    NULL);
    static created cr;
    memset(&cr, 0, sizeof cr);
    pulsarc_result r = pulsarc_client_create_producer_async(client, H_TOPIC, pc, on_created, &cr);
    pulsarc_producer_config_free(pc);
    cr_assert_eq(r, PULSARC_OK, "%s", pulsarc_last_error_detail());
    cr_assert(h_wait_changed(&cr.done, 0, 5000), "the async create never answered");
    cr_assert_eq(atomic_load(&cr.done) - 1000, PULSARC_OK, "%s", cr.detail);
    return cr.producer;
}

Test(client_spool_creates, async_create_spools_and_a_later_async_create_resends_first)
{
    make_spool_path();
    mock_broker_set_deduplication(mb, true);
    mock_broker_set_last_sequence_id(mb, MOCK_LAST_SEQ_TRACKED);
    client = h_client(NULL);
    producer = spooled_async("app-1");
    struct stat st;
    cr_assert_eq(stat(spool_dir, &st), 0, "the async create did not make the spool directory");
    /* Accepted while the broker is down, then the process "dies": only the spool has them. */
    cr_assert_eq(mock_broker_set_down(mb, true), 0);
    h_send_range(producer, 0, 4);
    pulsarc_client_destroy(client);
    client = NULL;
    cr_assert(h_wait_calls(4, 3000));
    pulsarc_producer_free(producer);
    producer = NULL;
    cr_assert_eq(test_spool_dir_count(spool_dir, ".seg"), 1, "the accepted sends left no record");
    h_reset_tracker();
    cr_assert_eq(mock_broker_set_down(mb, false), 0);

    client = h_client(NULL);
    producer = spooled_async("app-1");
    /* The handle came after the resends were handed over: a new send goes after them. */
    h_send_range(producer, 10, 12);
    cr_assert_eq(pulsarc_producer_flush(producer), PULSARC_OK);
    cr_assert_eq(h_count(mb, MOCK_SENDS), 6);
    int want[6] = { 0, 1, 2, 3, 10, 11 };
    for (size_t i = 0; i < 6; i++) {
        mock_send_t s = h_get_send(mb, i);
        cr_assert_eq(h_send_index(&s), want[i], "SEND %zu carried message %d", i, h_send_index(&s));
        cr_assert_eq(s.sequence_id, i);
        cr_assert(s.persisted && !s.duplicate, "SEND %zu was not stored", i);
        mock_send_free(&s);
    }
    cr_assert(T.res[10] == PULSARC_OK && T.res[11] == PULSARC_OK);
    cr_assert_eq(pulsarc_producer_close(producer), PULSARC_OK);
    cr_assert_eq(test_spool_dir_count(spool_dir, ".seg"), 0);
    h_finish();
    remove_spool_path();
}

/* A spool that cannot be used fails the async create at the call, before anything
 * connects, as it fails the blocking create. */
Test(client_spool_creates, async_create_refuses_a_spool_of_another_producer)
{
    make_spool_path();
    client = h_client(NULL);
    producer = spooled_async("app-1");
    cr_assert_eq(pulsarc_producer_close(producer), PULSARC_OK);
    pulsarc_producer_free(producer);
    producer = NULL;
    uint64_t connects = h_count(mb, MOCK_PRODUCERS);
    pulsarc_producer_config_t *pc = h_producer_conf(0, "producerName", "app-2", "spoolDir",
                                                    spool_dir, NULL);
    created cr = { 0 };
    pulsarc_result r = pulsarc_client_create_producer_async(client, H_TOPIC, pc, on_created, &cr);
    pulsarc_producer_config_free(pc);
    cr_assert_eq(r, PULSARC_ERR_SPOOL, "got %s", pulsarc_result_name(r));
    cr_assert(strstr(pulsarc_last_error_detail(), "app-1"), "%s", pulsarc_last_error_detail());
    h_let_time_pass(100);
    cr_assert_eq(atomic_load(&cr.done), 0, "a refused create called back");
    cr_assert_eq(h_count(mb, MOCK_PRODUCERS), connects, "a refused create registered");
    h_finish();
    remove_spool_path();
}

/* The client goes away while an async create's replay waits for room (more spooled
 * messages than maxPendingMessages, their receipts held): the creator hears of it once,
 * with an error, and nothing hangs or leaks; the spool keeps what was not stored. */
Test(client_spool_creates, client_destroyed_during_an_async_replay)
{
    make_spool_path();
    mock_broker_set_deduplication(mb, true);
    mock_broker_set_last_sequence_id(mb, MOCK_LAST_SEQ_TRACKED);
    client = h_client(NULL);
    producer = spooled_async("app-1");
    cr_assert_eq(mock_broker_set_down(mb, true), 0);
    h_send_range(producer, 0, 20);
    pulsarc_client_destroy(client);
    client = NULL;
    cr_assert(h_wait_calls(20, 3000));
    pulsarc_producer_free(producer);
    producer = NULL;
    h_reset_tracker();
    cr_assert_eq(mock_broker_set_down(mb, false), 0);

    mock_broker_set_receipt_mode(mb, MOCK_RECEIPTS_HOLD);
    client = h_client(NULL);
    pulsarc_producer_config_t *pc = h_producer_conf(0, "producerName", "app-1", "spoolDir",
                                                    spool_dir, "maxPendingMessages", "5",
                                                    "sendTimeoutMs", "0", NULL);
    static created cr;
    memset(&cr, 0, sizeof cr);
    cr_assert_eq(pulsarc_client_create_producer_async(client, H_TOPIC, pc, on_created, &cr),
                 PULSARC_OK);
    pulsarc_producer_config_free(pc);
    cr_assert(h_wait_count(mb, MOCK_HELD_RECEIPTS, 5, 5000), "the replay did not start");
    cr_assert_eq(atomic_load(&cr.done), 0, "the creator had the handle before the replay ended");
    pulsarc_client_destroy(client);
    client = NULL;
    cr_assert(h_wait_changed(&cr.done, 0, 5000), "the async create never answered");
    cr_assert_eq(atomic_load(&cr.done) - 1000, PULSARC_ERR_ALREADY_CLOSED, "got %s",
                 pulsarc_result_name(atomic_load(&cr.done) - 1000));
    cr_assert_null(cr.producer);
    cr_assert_eq(test_spool_dir_count(spool_dir, ".seg"), 1, "the spool lost its messages");
    mock_broker_set_receipt_mode(mb, MOCK_RECEIPTS_NORMAL);
    h_finish();
    remove_spool_path();
}
