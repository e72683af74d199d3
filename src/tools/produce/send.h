/*
 * pulsarc-produce's send loop (send.c): the message set -n times, then the streamed
 * standard input lines, each paced, converted by the schema, built and sent with
 * send_async.
 */
#ifndef PULSARC_PRODUCE_SEND_H
#define PULSARC_PRODUCE_SEND_H

#include <stdbool.h>
#include <stdint.h>

#include <pulsarc/pulsarc.h>

#include "../cli_common/schema_input.h"
#include "args.h"
#include "txn_batch.h"

struct produce_run {
    pulsarc_producer_t *producer;
    pulsarc_message_t *msg;       /* builder with the -k key (if any) and the properties */
    pulsarc_message_t *keyed_msg; /* the same for lines with their own key (NULL without
                                     --key-separator): the library cannot remove a key
                                     from a builder, so lines without one use msg */
    const char *key_separator;
    double rate;                          /* messages per second; 0 = unpaced */
    double start;                         /* now_seconds() when sending began */
    double next_due;                      /* now_seconds() at which the next message may go */
    uint64_t attempted;                   /* send_async calls made */
    int64_t sequence_id_start;            /* -1: automatic ids */
    const struct schema_input *schema_in; /* NULL: no schema */
    const char *kv_key;                   /* -k: the KeyValue key of messages without their own */
    bool wait_for_room;   /* blockIfQueueFull, done by the tool (room.h): the library's
                           producer never blocks */
    bool null_value;      /* --null-value: every message a tombstone */
    struct txn_batch txn; /* --txn-batch; txn.size 0: none */
};

/* Sends everything the arguments ask for on run's open producer; stream_stdin adds the
 * lines of standard input as they arrive. Returns true when the sending ran to its end
 * (not interrupted, not stopped by a failure). */
bool send_all(struct args *a, struct produce_run *run, bool stream_stdin);

#endif
