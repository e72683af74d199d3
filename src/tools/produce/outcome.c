/* Counting and reporting what became of each message (outcome.h). */
#include "outcome.h"

#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "room.h"
#include "stop.h"
#include "util.h"

/* Failures are printed one per line; past this many only --verbose keeps printing them, so a
 * dead broker under -n 1000000 does not bury the summary in a million identical lines. */
#define MAX_REPORTED_FAILURES 100

/* "ledger:entry:partition:batch_index": 2 x int64 + 2 x int32 + separators < 96. */
#define MESSAGE_ID_STR_MAX 96

static struct {
    atomic_uint_fast64_t sent;
    atomic_uint_fast64_t failed;
    atomic_uint_fast64_t sent_bytes;
    atomic_uint_fast64_t reported;        /* failure lines printed so far */
    atomic_uint_fast64_t callback_failed; /* failures our send callbacks saw */
} stats;

/* Set before the client starts (so the loop thread sees them), read-only afterwards. */
static bool g_verbose;
static bool g_keep_going;

void set_outcome_options(bool verbose, bool keep_going)
{
    g_verbose = verbose;
    g_keep_going = keep_going;
}

static void report_failure(uint64_t index, pulsarc_result res, const char *what, const char *detail)
{
    uint_fast64_t n = atomic_fetch_add(&stats.reported, 1);
    if (n < MAX_REPORTED_FAILURES || g_verbose) {
        fprintf(stderr, PROG ": message %" PRIu64 " %s: %s [%s]%s%s\n", index, what,
                pulsarc_strerror(res), pulsarc_result_name(res), detail[0] ? ": " : "", detail);
    } else if (n == MAX_REPORTED_FAILURES) {
        fprintf(stderr,
                PROG ": further failures are counted but not printed (--verbose prints all)\n");
    }
}

/* Whether a failure says the producer has stopped, so that every later message would
 * only fail the same way: a closed producer, or a terminal error (topic terminated,
 * producer fenced, not authorised, ...) that stopped it. A terminal result may also
 * concern one message alone: the broker refuses a message it will not store (too big for
 * the topic's policy, say) with NotAllowed, and the producer stays registered. A stopped
 * producer is no longer connected, and the library stops it before it fails its pending
 * messages, so that is what tells the two apart (a producer reconnecting at that very
 * moment reads as stopped too: the old, cautious answer). */
static bool stops_producer(pulsarc_producer_t *producer, pulsarc_result res)
{
    return res == PULSARC_ERR_ALREADY_CLOSED ||
           (pulsarc_result_is_terminal(res) && !pulsarc_producer_is_connected(producer));
}

void count_failure(pulsarc_producer_t *producer, uint64_t index, pulsarc_result res,
                   const char *what, const char *detail)
{
    atomic_fetch_add(&stats.failed, 1);
    report_failure(index, res, what, detail);
    /* As pulsar-client, the run ends at the first failure: a send timeout may mean that
     * the topic stores nothing at all (fenced for ever), and an endless input would
     * otherwise be read, and fail, for ever. --keep-going sends on after failures that
     * concern one message, never after one every later message would share. */
    if (stops_producer(producer, res))
        stop_sending(res, detail, true);
    else if (!g_keep_going)
        stop_sending(res, detail, false);
}

void message_failed(pulsarc_producer_t *producer, uint64_t index, pulsarc_result res,
                    const char *what)
{
    char detail[DETAIL_MAX];
    copy_error_detail(detail);
    count_failure(producer, index, res, what, detail);
}

uint64_t count_failures_without_callback(pulsarc_producer_t *producer)
{
    pulsarc_stats_t *snapshot = NULL;
    if (pulsarc_producer_stats(producer, &snapshot) != PULSARC_OK)
        return 0;
    uint64_t all = pulsarc_stats_get(snapshot, PULSARC_STAT_MSGS_FAILED);
    pulsarc_stats_free(snapshot);
    uint64_t ours = atomic_load(&stats.callback_failed);
    uint64_t n = all > ours ? all - ours : 0;
    atomic_fetch_add(&stats.failed, n);
    return n;
}

void on_send_done(pulsarc_producer_t *producer, pulsarc_result res, const pulsarc_message_id_t *id,
                  void *ctx)
{
    struct send_ctx *sc = ctx;
    if (res == PULSARC_OK) {
        atomic_fetch_add(&stats.sent, 1);
        atomic_fetch_add(&stats.sent_bytes, sc->len);
        if (g_verbose) {
            char buf[MESSAGE_ID_STR_MAX];
            pulsarc_message_id_str(id, buf, sizeof buf);
            fprintf(stderr, PROG ": message %" PRIu64 " persisted as %s\n", sc->index, buf);
        }
    } else {
        atomic_fetch_add(&stats.callback_failed, 1);
        message_failed(producer, sc->index, res, "failed");
    }
    free(sc);
    /* The library released the message's room before this call. Said after a failure
     * has stopped the run, so that a sender waiting for room sees the stop, not room. */
    room_given_back();
}

struct outcome_totals outcome_totals(void)
{
    return (struct outcome_totals){ atomic_load(&stats.sent), atomic_load(&stats.failed),
                                    atomic_load(&stats.sent_bytes) };
}
