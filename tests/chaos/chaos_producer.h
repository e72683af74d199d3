/* What the chaos driver's two files share: chaos_producer.c (the options, the event log,
 * the payloads and every workload on the client's own thread) and chaos_own_loop.c (the
 * own-loop workload). What the program does for the chaos run (its options, payloads
 * and event log) is described at the top of chaos_producer.c. */
#ifndef PC_CHAOS_PRODUCER_H
#define PC_CHAOS_PRODUCER_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pulsarc/pulsarc.h"

typedef struct chaos_opts {
    const char *workload; /* its name, which also starts every payload */
    const char *url;
    const char *topics[2];
    int n_topics;
    long from;  /* the first counter */
    long count; /* messages to send; -1: until SIGTERM or SIGINT */
    double rate;
    uint64_t seed;
} chaos_opts;

/* Set by the SIGTERM and SIGINT handler; the sending loops poll it. */
extern volatile sig_atomic_t chaos_stop;

/* Appends one line (a newline is added) to the event log in a single write(2), so lines
 * written from the sending thread and the loop thread at once never interleave, and a
 * kill -9 loses none that was written. */
void chaos_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The payload of counter c at its size (chaos_payload_size), built into buf (at least
 * that many bytes). */
size_t chaos_payload_size(const chaos_opts *o, long c);
void chaos_fill_payload(const chaos_opts *o, long c, unsigned char *buf, size_t size);
/* The builder's content for counter c: its payload and, for the keyed workload, its
 * key. Returns what a setter returned when it failed. */
pulsarc_result chaos_build(const chaos_opts *o, pulsarc_message_t *msg, long c, unsigned char *buf);
/* The largest payload a workload sends, for its buffer. */
size_t chaos_max_payload(const chaos_opts *o);

/* Every send's callback: logs "ok" or "failed", counts. ctx is the counter. */
void chaos_on_sent(pulsarc_producer_t *p, pulsarc_result res, const pulsarc_message_id_t *id,
                   void *ctx);
/* What a send call returned: logs "accepted" or "refused", counts. */
void chaos_send_returned(long c, pulsarc_result r);
/* Callbacks so far (ok and failed). */
long chaos_completed(void);

/* Whether a failed producer creation is worth another try: the broker or the network
 * may come back (a fault of the run), a bad setting or a terminal refusal will not. */
bool chaos_create_retryable(pulsarc_result r);

/* SIGTERM and SIGINT reach the main thread only: they are blocked until the producer
 * exists (so the library's threads, made meanwhile, inherit the mask), then unblocked
 * here; one that came meanwhile is delivered then. */
void chaos_unblock_signals(void);
/* A stop was asked for, or is waiting to be delivered (before chaos_unblock_signals). */
bool chaos_stop_pending(void);

/* The last flush's result: logs "flush ...". */
void chaos_flushed(pulsarc_result r);
/* Logs "end <accepted> <ok> <failed>" and returns the exit status: 0 when the flush was
 * ok, the close clean, no send failed or was refused and every log line was written;
 * else 1. */
int chaos_end(bool closed_cleanly);

/* The own-loop workload (chaos_own_loop.c), from the "created" line on; frees cc and pc.
 * Returns the exit status. */
int chaos_run_own_loop(const chaos_opts *o, pulsarc_client_config_t *cc,
                       pulsarc_producer_config_t *pc);

#endif
