/*
 * pulsarc-produce — publish messages to a Pulsar topic from the command line.
 *
 * In the spirit of the official `pulsar-client produce`: the messages come from the
 * command line (-m), from files (-f), from standard input (--stdin, one per line) or are
 * synthesised (--size). The set is sent -n times, optionally paced (-r), with send_async; the
 * tool then flushes, closes and prints two lines to stdout that scripts and tests parse:
 *
 *   sent=N failed=M elapsed=S.SSSs rate=R msg/s throughput=T MB/s
 *   last-sequence-id=<n> producer-name=<name>
 *   transactions committed=C aborted=A failed=F        (only with --txn-batch)
 *
 * Everything else (failures, --verbose traces, the library's log) goes to stderr.
 * Exit status: 0 every message was persisted, 1 anything failed, 2 usage or configuration
 * error. The first failed message stops the run at once, even while it waits for
 * standard input or for room (as pulsar-client stops at its first failed send);
 * --keep-going sends on unless every later message would fail the same way.
 * docs/cli.md is the user documentation; options.c holds the option table.
 *
 * This file runs the steps: parse the arguments (args.c), complete the message set,
 * make the configurations (config.c), create the client and producer, send (send.c),
 * flush, close and print the result lines.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <pulsarc/pulsarc.h>

#include "../cli_common/schema_input.h"
#include "args.h"
#include "config.h"
#include "line_reader.h"
#include "metrics_listen.h"
#include "outcome.h"
#include "room.h"
#include "send.h"
#include "stop.h"
#include "util.h"

static bool keep_line(const struct payload *p, void *args)
{
    add_payload(args, xmemdup(p->data, p->len), p->len,
                p->key ? xmemdup(p->key, strlen(p->key)) : NULL);
    return true;
}

/* Reads all of standard input into the set; used when -n repeats it. */
static void read_stdin_lines(struct args *a)
{
    for_each_stdin_line(a->key_separator, keep_line, a);
}

/* Random-ish bytes (xorshift64): enough to defeat compression and look like data. */
static char *synthetic_payload(size_t size)
{
    char *buf = xrealloc(NULL, size);
    uint64_t x = (uint64_t)time(NULL) ^ 0x9E3779B97F4A7C15u;
    for (size_t i = 0; i < size; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        buf[i] = (char)(x >> 56);
    }
    return buf;
}

/* Errors in what the user typed are usage errors, and so are TLS settings the library
 * cannot use (a protocol list it refuses, a trust file it cannot load): it finds those
 * when the client is created, not when they are set. The rest are run-time failures. */
static int setup_exit_status(pulsarc_result res)
{
    return res == PULSARC_ERR_INVALID_URL || res == PULSARC_ERR_INVALID_TOPIC ||
                   res == PULSARC_ERR_INVALID_CONFIG || res == PULSARC_ERR_INVALID_ARGUMENT ||
                   res == PULSARC_ERR_TLS_CONFIG
               ? EXIT_USAGE
               : EXIT_SOME_FAILED;
}

/* "PROG: <prefix>: <description> [<NAME>]: <detail>" on stderr. */
static void print_failure(const char *prefix, pulsarc_result res, const char *detail)
{
    fprintf(stderr, PROG ": %s: %s [%s]%s%s\n", prefix, pulsarc_strerror(res),
            pulsarc_result_name(res), detail[0] ? ": " : "", detail);
}

static void print_setup_error(const char *what, const char *arg, pulsarc_result res)
{
    char detail[DETAIL_MAX], prefix[1024];
    copy_error_detail(detail);
    snprintf(prefix, sizeof prefix, "%s '%s'", what, arg);
    print_failure(prefix, res, detail);
}

/* --stats-json: the client's statistics, taken once every message has had its callback,
 * written to path. False (with a message) when they cannot be taken or written. */
static bool write_stats(pulsarc_client_t *client, const char *path)
{
    pulsarc_stats_t *stats = NULL;
    pulsarc_result res = pulsarc_client_stats(client, &stats);
    if (res != PULSARC_OK) {
        print_setup_error("cannot take the statistics for", path, res);
        return false;
    }
    errno = 0;
    FILE *f = fopen(path, "w");
    bool ok = f && fputs(pulsarc_stats_json(stats), f) >= 0 && fputc('\n', f) != EOF;
    int err = errno;
    if (f && fclose(f) != 0 && ok) {
        ok = false;
        err = errno;
    }
    if (!ok)
        fprintf(stderr, PROG ": cannot write the statistics to '%s': %s\n", path,
                strerror(err ? err : EIO));
    pulsarc_stats_free(stats);
    return ok;
}

/* After the flush, when every message has completed: a failed flush that no callback
 * explained, and the messages resent from the spool at the producer's creation that
 * failed (they have no callback of ours), which count as failed messages. */
static void report_flush(pulsarc_producer_t *producer, const char *topic, pulsarc_result res)
{
    char detail[DETAIL_MAX], prefix[1024];
    copy_error_detail(detail);
    bool unexplained = res != PULSARC_OK && outcome_totals().failed == 0;
    uint64_t resent_failed = count_failures_without_callback(producer);
    if (resent_failed == 0 && unexplained) {
        snprintf(prefix, sizeof prefix, "flush of '%s'", topic);
        print_failure(prefix, res, detail);
    } else if (resent_failed && unexplained) { /* then the flush names the first of them */
        snprintf(prefix, sizeof prefix,
                 "%" PRIu64 " message(s) resent from the spool failed; the first", resent_failed);
        print_failure(prefix, res, detail);
    } else if (resent_failed) {
        fprintf(stderr, PROG ": %" PRIu64 " message(s) resent from the spool failed\n",
                resent_failed);
    }
}

/* Creates client and producer, sends with run's message builders, flushes, closes and
 * prints the result lines. Takes ownership of both configs. Returns the exit status. */
static int produce(struct args *a, struct produce_run *run, pulsarc_client_config_t *client_conf,
                   pulsarc_producer_config_t *producer_conf, bool stream_stdin)
{
    pulsarc_client_t *client = NULL;
    pulsarc_result res = pulsarc_client_new(a->service_url, client_conf, &client);
    pulsarc_client_config_free(client_conf);
    if (res != PULSARC_OK) {
        pulsarc_producer_config_free(producer_conf);
        print_setup_error("cannot create client for", a->service_url, res);
        return setup_exit_status(res);
    }
    struct metrics_listen *metrics = NULL;
    if (a->metrics_listen && !(metrics = metrics_listen_start(client, a->metrics_listen))) {
        pulsarc_producer_config_free(producer_conf);
        pulsarc_client_destroy(client);
        return EXIT_USAGE;
    }

    pulsarc_producer_t *producer = NULL;
    res = pulsarc_client_create_producer(client, a->topic, producer_conf, &producer);
    pulsarc_producer_config_free(producer_conf);
    if (res != PULSARC_OK) {
        print_setup_error("cannot create producer on", a->topic, res);
        metrics_listen_stop(metrics);
        pulsarc_client_destroy(client);
        return setup_exit_status(res);
    }

    run->producer = producer;
    run->txn.client = client;
    run->txn.producer = producer;
    run->start = run->next_due = now_seconds();
    bool completed = send_all(a, run, stream_stdin);
    if (was_interrupted())
        fprintf(stderr, PROG ": interrupted; flushing what was sent\n");
    /* The last transaction ends with the run, interrupted or not: what it holds is
     * committed (or aborted with --txn-abort), never left for the broker to time out. */
    if (!txn_batch_finish(&run->txn))
        completed = false;

    /* flush returns the first failure among the pending messages, which the callbacks
     * have already counted and printed; only a failure of flush itself is news, or one
     * of the messages resent from the spool, which have no callback of ours. */
    res = pulsarc_producer_flush(producer);
    double elapsed = now_seconds() - run->start;
    report_flush(producer, a->topic, res);

    res = pulsarc_producer_close(producer);
    if (res != PULSARC_OK)
        print_setup_error("close of producer on", a->topic, res);
    /* After the close, every accepted message has had its callback. */
    bool stats_written = !a->stats_json || write_stats(client, a->stats_json);

    /* Copy what the second result line needs: both belong to the producer handle. */
    int64_t last_seq = pulsarc_producer_last_sequence_id(producer);
    const char *name = pulsarc_producer_name(producer);
    if (!name)
        name = "";
    char *producer_name = xmemdup(name, strlen(name));
    metrics_listen_stop(metrics);
    pulsarc_producer_free(producer);
    /* Destroy before reading the counters: it completes anything still pending, so
     * every accepted message has had its callback by now. */
    pulsarc_client_destroy(client);

    struct outcome_totals totals = outcome_totals();
    uint64_t sent = totals.sent;
    uint64_t failed = totals.failed;
    double mb = (double)totals.sent_bytes / (1024.0 * 1024.0);
    printf("sent=%" PRIu64 " failed=%" PRIu64 " elapsed=%.3fs rate=%.1f msg/s "
           "throughput=%.3f MB/s\n",
           sent, failed, elapsed, elapsed > 0 ? (double)sent / elapsed : 0.0,
           elapsed > 0 ? mb / elapsed : 0.0);
    printf("last-sequence-id=%" PRId64 " producer-name=%s\n", last_seq, producer_name);
    if (run->txn.size)
        printf("transactions committed=%" PRIu64 " aborted=%" PRIu64 " failed=%" PRIu64 "\n",
               run->txn.committed, run->txn.aborted, run->txn.failed);
    fflush(stdout);
    free(producer_name);

    bool all_sent = completed && failed == 0 && sent == run->attempted && run->txn.failed == 0;
    return all_sent && stats_written ? EXIT_ALL_SENT : EXIT_SOME_FAILED;
}

int main(int argc, char **argv)
{
    struct args a;
    parse_args(argc, argv, &a);
    set_outcome_options(a.verbose, a.keep_going);

    open_wake_pipe();
    room_open();
    /* With -n > 1 stdin must be read whole to be repeated; otherwise it is streamed. */
    bool stream_stdin = a.use_stdin && a.num_produce == 1;
    if (a.use_stdin && !stream_stdin)
        read_stdin_lines(&a);
    if (a.use_size) {
        add_payload(&a, synthetic_payload((size_t)a.size), (size_t)a.size, NULL);
        a.payloads[a.n_payloads - 1].raw = true;
    }

    /* Configuration problems are reported (exit 2) before anything connects. */
    pulsarc_client_config_t *client_conf = make_client_config(&a);
    bool wait_for_room;
    pulsarc_producer_config_t *producer_conf = make_producer_config(&a, &wait_for_room);
    struct produce_run run = {
        .msg = make_message(&a),
        .keyed_msg = a.key_separator ? make_message(&a) : NULL,
        .key_separator = a.key_separator,
        .rate = a.rate,
        .sequence_id_start = a.sequence_id_start,
        .schema_in = a.schema_in,
        .kv_key = schema_input_is_key_value(a.schema_in) ? a.key : NULL,
        .wait_for_room = wait_for_room,
        .null_value = a.null_value,
        .txn = { .size = a.txn_batch, .abort = a.txn_abort },
    };

    install_signal_handlers();
    int status = produce(&a, &run, client_conf, producer_conf, stream_stdin);

    pulsarc_message_free(run.msg);
    pulsarc_message_free(run.keyed_msg);
    free_args(&a);
    return status;
}
