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

/* --verbose: print every failure and every persisted message's id. Set before the
 * client starts (so the loop thread sees it), read-only afterwards. */
void set_verbose_outcome(bool verbose);

/* What a send callback needs to know about its message (malloc'ed; on_send_done frees
 * it). */
struct send_ctx {
    uint64_t index; /* 1-based, in send order */
    size_t len;
};

/* The send callback: runs on the loop thread, exactly once per accepted message. */
void on_send_done(pulsarc_producer_t *producer, pulsarc_result res,
                  const pulsarc_message_id_t *id, void *ctx);

/* Counts and reports a message that failed before the library took it; what says how
 * ("could not be converted"), detail why. */
void count_failure(uint64_t index, pulsarc_result res, const char *what, const char *detail);

/* Counts and reports a message that failed, with the last pulsarc call's error detail,
 * and stops the run if the producer has stopped. On either thread, right after the
 * failing pulsarc call. */
void message_failed(uint64_t index, pulsarc_result res, const char *what);

struct outcome_totals {
    uint64_t sent;       /* persisted */
    uint64_t failed;
    uint64_t sent_bytes; /* payload bytes persisted */
};

struct outcome_totals outcome_totals(void);

#endif
