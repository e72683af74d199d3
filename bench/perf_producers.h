/*
 * pulsarc-perf's topics and producers: the partitioned topics created beforehand (admin
 * REST), and the producers, created by a few threads at once, flushed and closed together.
 */
#ifndef PULSARC_PERF_PRODUCERS_H
#define PULSARC_PERF_PRODUCERS_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include <pulsarc/pulsarc.h>

/* Told about a failed call, on the thread that made it (pulsarc_last_error_detail() is
 * that call's); calls are never concurrent. */
typedef void (*perf_error_fn)(const char *what, pulsarc_result res);

/* Every producer of the run: topic t's producers are v[t * per_topic .. + per_topic). */
typedef struct producer_set {
    pulsarc_producer_t **v;
    size_t n;
} producer_set_t;

/* Create the n topics as partitioned topics of `partitions` partitions through the admin
 * API, one after the other; one that exists with that count is kept. Prints what it did.
 * Returns 0, or -1 after printing why. */
int perf_create_partitioned_topics(const char *admin_url, char *const *topics, uint32_t n,
                                   int partitions);

/* The configuration of producer `index` (a new one, which the caller frees), or NULL after
 * reporting why; for producers that differ (their names). Called from several threads. */
typedef pulsarc_producer_config_t *(*perf_conf_fn)(size_t index, void *ctx);

/* Create per_topic producers on each of the n topics with up to `threads` threads, with
 * conf, or with per_producer's configuration when that is not NULL. Stops early at the
 * first failure (reported through err) or when *stop is set. Returns 0 with every
 * producer in out, else -1 with none left open. */
int perf_create_producers(pulsarc_client_t *client, const pulsarc_producer_config_t *conf,
                          perf_conf_fn per_producer, void *per_producer_ctx, char *const *topics,
                          uint32_t n, uint32_t per_topic, int threads,
                          const volatile sig_atomic_t *stop, perf_error_fn err,
                          producer_set_t *out);

/* Messages accepted and not yet completed, over all producers. */
uint64_t perf_pending(const producer_set_t *ps);

/* Flush every producer (each covers what was accepted before it). Returns PULSARC_OK or
 * the first failure, reported through err. */
pulsarc_result perf_flush_all(const producer_set_t *ps, perf_error_fn err);

/* Close every producer at once and wait for all, then free them and the set. A failed
 * close is reported through err. */
void perf_close_all(producer_set_t *ps, perf_error_fn err);

#endif
