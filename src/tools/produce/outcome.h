/*
 * What became of each message pulsarc-produce sends: counted, and reported on stderr
 * when it failed (outcome.c). The counters are updated from send callbacks on the
 * client's loop thread and from the main thread, and read by main at the end.
 */
#ifndef PULSARC_PRODUCE_OUTCOME_H
#define PULSARC_PRODUCE_OUTCOME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <pulsarc/pulsarc.h>

/* verbose (--verbose): print every failure and every persisted message's id.
 * keep_going (--keep-going): a failed message stops the run only when the producer has
 * stopped, so that every later one would fail the same way. Set before the client starts
 * (so the loop thread sees them), read-only afterwards. */
void set_outcome_options(bool verbose, bool keep_going);

/* What a send callback needs to know about its message (malloc'ed; on_send_done frees
 * it). */
struct send_ctx {
    uint64_t index; /* 1-based, in send order */
    size_t len;
};

/* The send callback: runs on the loop thread, exactly once per accepted message. */
void on_send_done(pulsarc_producer_t *producer, pulsarc_result res, const pulsarc_message_id_t *id,
                  void *ctx);

/* Counts and reports a failed message of producer, and stops the run (stop.h) unless
 * --keep-going lets it go on; what says how it failed ("could not be converted"), detail
 * why. */
void count_failure(pulsarc_producer_t *producer, uint64_t index, pulsarc_result res,
                   const char *what, const char *detail);

/* count_failure with the last pulsarc call's error detail. On either thread, right after
 * the failing pulsarc call. */
void message_failed(pulsarc_producer_t *producer, uint64_t index, pulsarc_result res,
                    const char *what);

/* Counts the messages of producer that failed without a send callback of ours: those it
 * resent from its spool when it was created (the library sends them with none). Call
 * once every message has completed (after a flush): the producer's statistics count
 * every failed message, our callbacks ours. Returns how many (0 also when the
 * statistics cannot be taken). */
uint64_t count_failures_without_callback(pulsarc_producer_t *producer);

struct outcome_totals {
    uint64_t sent; /* persisted */
    uint64_t failed;
    uint64_t sent_bytes; /* payload bytes persisted */
};

struct outcome_totals outcome_totals(void);

#endif
