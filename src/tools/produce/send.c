/* The send loop: pacing, building each message, send_async (send.h). */
#include "send.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "line_reader.h"
#include "outcome.h"
#include "room.h"
#include "stop.h"
#include "util.h"

/* How far the pacer may fall behind and still catch up. Scheduling each message one
 * interval after the previous one's *due* time (not its actual send) makes sleep
 * overshoot and slow sends average out, so the rate comes out at R, not a bit under.
 * Capping the catch-up keeps a pause (say --stdin waiting for input) from turning into
 * a burst above R when the input resumes. */
#define PACER_MAX_LAG 0.01

/* Sleep until the next message is due. */
static void pace(struct produce_run *run)
{
    if (run->rate <= 0.0)
        return;
    double now = now_seconds();
    double wait = run->next_due - now;
    if (wait > 0.0) {
        struct timespec ts = { (time_t)wait, (long)((wait - (double)(time_t)wait) * 1e9) };
        /* A signal or a stop cuts the sleep short; the caller then sees it. */
        wait_for(-1, &ts);
    } else if (wait < -PACER_MAX_LAG) {
        run->next_due = now - PACER_MAX_LAG;
    }
    run->next_due += 1.0 / run->rate;
}

/* Puts payload p, its key and its sequence id into the builder that suits it. */
static pulsarc_result build_message(struct produce_run *run, const struct payload *p,
                                    uint64_t index, pulsarc_message_t **out)
{
    pulsarc_message_t *msg = p->key ? run->keyed_msg : run->msg;
    pulsarc_result res;
    if (schema_input_is_key_value(run->schema_in)) {
        /* The key is part of the pair: one builder, which never holds a plain key. */
        msg = run->msg;
        res = pulsarc_message_set_key_value(msg, schema_input_schema(run->schema_in), p->key,
                                            p->key ? p->key_len : 0, p->data, p->len);
    } else {
        res = p->key ? pulsarc_message_set_key(msg, p->key) : PULSARC_OK;
        if (res == PULSARC_OK)
            res = pulsarc_message_set_payload(msg, p->data, p->len);
    }
    if (res == PULSARC_OK && run->null_value)
        res = pulsarc_message_set_null_value(msg); /* after the payload, which it drops */
    if (res == PULSARC_OK && run->sequence_id_start >= 0)
        res = pulsarc_message_set_sequence_id(msg, run->sequence_id_start + (int64_t)index - 1);
    *out = msg;
    return res;
}

/* send_async (in txn unless NULL); when the queue is full and the run waits for room
 * (room.h), waits and tries again. Returns false when the run stopped during the wait: the message was not sent. */
static bool send_when_room(struct produce_run *run, pulsarc_txn_t *txn, pulsarc_message_t *msg,
                           struct send_ctx *sc, pulsarc_result *res)
{
    bool wanted = false;
    for (;;) {
        *res = txn ? pulsarc_producer_send_txn_async(run->producer, txn, msg, on_send_done, sc)
                   : pulsarc_producer_send_async(run->producer, msg, on_send_done, sc);
        if (!run->wait_for_room ||
            (*res != PULSARC_ERR_QUEUE_FULL && *res != PULSARC_ERR_MEMORY_LIMIT))
            return true;
        if (!wanted) {
            /* Ask to be woken, then try once more: room given back before the ask is
             * seen by that try, room given back after it by the wait. */
            room_wanted();
            wanted = true;
        } else if (!room_wait()) {
            return false;
        } else {
            wanted = false;
        }
    }
}

/* Returns false when the loop should stop (interrupted, or the run stopped). */
static bool send_one(struct produce_run *run, const struct payload *p)
{
    pace(run);
    if (sending_stopped())
        return false;

    uint64_t index = ++run->attempted;
    /* With a schema, text becomes the bytes it wants (schema_input.h). */
    struct schema_message enc = { .data = p->data, .len = p->len, .key = p->key };
    char err[DETAIL_MAX];
    if (run->schema_in &&
        schema_input_message(run->schema_in, p->data, p->len, p->raw, p->key ? p->key : run->kv_key,
                             &enc, err, sizeof err) != 0) {
        count_failure(run->producer, index, PULSARC_ERR_INVALID_PAYLOAD, "could not be converted",
                      err);
        return !sending_stopped();
    }
    struct payload converted = { (char *)enc.data, enc.len, (char *)enc.key, false, true,
                                 enc.key_len };
    pulsarc_message_t *msg;
    pulsarc_txn_t *txn = NULL;
    bool txn_ok = true;
    pulsarc_result res = build_message(run, &converted, index, &msg);
    if (res != PULSARC_OK) {
        message_failed(run->producer, index, res, "could not be built");
    } else if (run->txn.size && !(txn = txn_batch_current(&run->txn, index))) {
        txn_ok = false; /* reported there: the run stops */
    } else {
        struct send_ctx *sc = xrealloc(NULL, sizeof *sc);
        *sc = (struct send_ctx){ index, enc.len };
        if (!send_when_room(run, txn, msg, sc, &res)) {
            free(sc); /* stopped while waiting for room: not sent, not failed */
        } else if (res != PULSARC_OK) {
            /* Not accepted: no callback will come, so count and free here. */
            free(sc);
            message_failed(run->producer, index, res, "was rejected");
        } else if (txn) {
            txn_ok = txn_batch_accepted(&run->txn);
        }
    }
    schema_message_free(&enc); /* the send has copied the payload (copy mode) */
    return txn_ok && !sending_stopped();
}

static bool send_line(const struct payload *p, void *run)
{
    return send_one(run, p);
}

/* Streams standard input, one message per line, so `tail -f log | pulsarc-produce`
 * publishes as lines arrive instead of after end of input. */
static void send_stdin_lines(struct produce_run *run)
{
    for_each_stdin_line(run->key_separator, send_line, run);
}

bool send_all(struct args *a, struct produce_run *run, bool stream_stdin)
{
    for (uint64_t round = 0; round < a->num_produce; round++) {
        for (size_t i = 0; i < a->n_payloads; i++) {
            if (a->use_size && a->size >= 8)
                /* Stamp the message number so synthetic messages differ from each other. */
                memcpy(a->payloads[i].data, &run->attempted, 8);
            if (!send_one(run, &a->payloads[i]))
                return false;
        }
    }
    if (stream_stdin)
        send_stdin_lines(run);
    return !sending_stopped();
}
