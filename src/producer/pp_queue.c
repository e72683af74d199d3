/* pendingMessages: ops in flight, their receipts and send errors, the send timeout
 * and flush waiters. @locality loop thread. */
#include "producer/pp_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include "common/clock.h"
#include "common/error.h"
#include "common/log.h"
#include "producer/message_id.h"
#include "wire/frame.h"

void pc_pp_check_flushes(pc_pp_t *pp)
{
    uint64_t first_pending = pp->head ? pp->head->index : pp->next_op_index;
    for (flush_waiter **pp_w = &pp->flushes; *pp_w;) {
        flush_waiter *w = *pp_w;
        if (w->target != WAITING_TARGET && w->target <= first_pending) {
            *pp_w = w->next;
            w->cb(pp, w->res, w->ctx);
            free(w);
        } else {
            pp_w = &w->next;
        }
    }
}

static void note_failure_for_flushes(pc_pp_t *pp, uint64_t op_index, pulsarc_result res)
{
    for (flush_waiter *w = pp->flushes; w; w = w->next)
        if (w->target > op_index && w->res == PULSARC_OK)
            w->res = res;
}

/* Latencies: messages taken over in one loop turn share their stamp, so a batch's messages
 * come in runs of equal stamps, each recorded once with its length. */
typedef struct stamp_run {
    uint64_t stamp;
    uint64_t n;
} stamp_run;

static inline void latency_flush(pc_pp_t *pp, stamp_run *r)
{
    if (r->n && r->stamp && pp->set.sink) {
        uint64_t now = pc_turn_clock_now(pp->set.sink->clock);
        uint64_t us = now > r->stamp ? (now - r->stamp) / 1000u : 0;
        pc_histogram_record_n(&pp->set.sink->latency_us, us, r->n);
    }
    r->n = 0;
}

static inline void latency_note(pc_pp_t *pp, stamp_run *r, uint64_t stamp)
{
    if (stamp != r->stamp) {
        if (r->n) /* not at an op's first message: nothing to flush yet */
            latency_flush(pp, r);
        r->stamp = stamp;
    }
    r->n++;
}

/* A message has ended: counted as acknowledged or failed, in messages and payload bytes. */
static void count_end(pc_pp_t *pp, pulsarc_result res, uint64_t msgs, uint64_t bytes)
{
    if (res == PULSARC_OK) {
        pp->counters.acked_msgs += msgs;
        pp->counters.acked_bytes += bytes;
    } else {
        pp->counters.failed_msgs += msgs;
        pp->counters.failed_bytes += bytes;
    }
}

/* Take the op after prev (the head when prev is NULL) out of pendingMessages. */
static pc_op_t *pop_after(pc_pp_t *pp, pc_op_t *prev)
{
    pc_op_t **link = prev ? &prev->next : &pp->head;
    pc_op_t *op = *link;
    *link = op->next;
    if (pp->tail == op)
        pp->tail = prev;
    op->next = NULL;
    return op;
}

/* The messages of a batch op, in order: every one has the entry's id (mid, when the op
 * succeeded) with its place in the batch. What admission charged for them goes back first,
 * at once. A batch spread over many producers' messages has its records fetched ahead of
 * the walk (records.h). */
static void complete_batch(pc_pp_t *pp, pc_op_t *op, pulsarc_result res, pulsarc_message_id_t *mid,
                           const char *detail, stamp_run *run)
{
    pc_records_walk_t walk, *ahead = NULL;
    if (op->order && pc_records_spread(&pp->records, op->opened_taken, 1)) {
        walk = pc_records_walk(&pp->records, op->order, op->num_messages);
        ahead = &walk;
    }
    bool released = pp->released != NULL;
    if (released)
        pp->released(pp->owner, op->msgs, op->num_messages, op->charged);
    mid->batch_size = op->num_messages;
    int i = 0;
    for (pc_msg_t *m = op->msgs; m; m = m->next, i++) {
        if (ahead)
            pc_records_walk_step(ahead, i);
        m->released = released;
        if (res == PULSARC_OK) {
            latency_note(pp, run, m->handover_ns);
            mid->batch_index = i;
        }
        pc_set_detail(detail);
        pp->complete(pp->owner, m, res, res == PULSARC_OK ? mid : NULL);
    }
}

/* Remove the op after prev (the head when NULL) and complete what it carries: every
 * message of a batch (each with its own id), a single message, or — for chunks — the
 * message once its last chunk is stored, or at the first failed chunk (the rest of its
 * chunks are dropped with it). */
void pc_pp_complete_op(pc_pp_t *pp, pc_op_t *prev, pulsarc_result res,
                       const pulsarc_message_id_t *id, const char *detail)
{
    pc_op_t *op = pop_after(pp, prev);
    if (res != PULSARC_OK)
        note_failure_for_flushes(pp, op->index, res);
    if (op->shared) {
        pc_msg_t *msg = op->shared->msg;
        bool last = op->chunk_id == op->num_chunks - 1;
        if (res == PULSARC_OK && op->chunk_id == 0) {
            pp->chunk_first_ledger = id->ledger;
            pp->chunk_first_entry = id->entry;
        }
        if (res != PULSARC_OK) {
            pc_op_t *next;
            while ((next = prev ? prev->next : pp->head) && next->shared == op->shared)
                pc_op_release(pop_after(pp, prev));
            last = true;
        }
        if (last) {
            count_end(pp, res, 1, msg->payload_len);
            if (res == PULSARC_OK) {
                stamp_run run = { 0, 0 };
                latency_note(pp, &run, msg->handover_ns);
                latency_flush(pp, &run);
            }
            pulsarc_message_id_t cid;
            if (res == PULSARC_OK) {
                cid = *id;
                cid.chunked = op->num_chunks > 1;
                cid.first_ledger = pp->chunk_first_ledger;
                cid.first_entry = pp->chunk_first_entry;
            }
            pc_set_detail(detail);
            pp->complete(pp->owner, msg, res, res == PULSARC_OK ? &cid : NULL);
        }
        pc_op_release(op);
        pc_pp_check_flushes(pp);
        return;
    }
    /* Counted before the callbacks, so that a snapshot taken in one includes its message
     * (its latency is recorded as the op completes). */
    count_end(pp, res, (uint64_t)op->num_messages, op->msg_bytes);
    stamp_run run = { 0, 0 };
    pulsarc_message_id_t mid = { 0 };
    const pulsarc_message_id_t *stored = NULL;
    if (res == PULSARC_OK) {
        mid = *id;
        stored = &mid;
    }
    if (op->batch) {
        complete_batch(pp, op, res, &mid, detail, &run);
    } else { /* one message */
        if (res == PULSARC_OK)
            latency_note(pp, &run, op->msgs->handover_ns);
        pc_set_detail(detail);
        pp->complete(pp->owner, op->msgs, res, stored);
    }
    latency_flush(pp, &run);
    pc_op_release(op);
    pc_pp_check_flushes(pp);
}

void pc_pp_complete_head(pc_pp_t *pp, pulsarc_result res, const pulsarc_message_id_t *id,
                         const char *detail)
{
    pc_pp_complete_op(pp, NULL, res, id, detail);
    /* Duplicates the broker answered ahead of it follow, in their turn. */
    while (pp->head && pp->head->stored_earlier) {
        pulsarc_message_id_t earlier;
        pc_message_id_init(&earlier, -1, -1, pp->partition);
        pc_pp_complete_op(pp, NULL, PULSARC_OK, &earlier, NULL);
    }
}

/* A message that never became an op ends here. */
void pc_pp_fail_message(pc_pp_t *pp, pc_msg_t *msg, pulsarc_result res, const char *detail)
{
    count_end(pp, res, 1, msg->payload_len);
    pc_set_detail(detail);
    pp->complete(pp->owner, msg, res, NULL);
    pc_msg_free(msg);
}

void pc_pp_fail_batch(pc_pp_t *pp, pc_batch_t *b, pulsarc_result res, const char *detail)
{
    for (pc_msg_t *m = b->head, *next; m; m = next) {
        next = m->next;
        pc_pp_fail_message(pp, m, res, detail);
    }
    b->head = b->tail = NULL;
    pc_batch_forget_order(b);
}

void pc_pp_fail_all(pc_pp_t *pp, pulsarc_result res, const char *detail)
{
    /* Oldest first: ops in flight, then what is still batched or waiting. */
    while (pp->head)
        pc_pp_complete_head(pp, res, NULL, detail);
    pc_pp_fail_unsent(pp, res, detail);
    /* Nothing is pending any more, so every flush is answered. */
    flush_waiter *w = pp->flushes;
    pp->flushes = NULL;
    while (w) {
        flush_waiter *next = w->next;
        w->cb(pp, w->target == WAITING_TARGET && w->res == PULSARC_OK ? res : w->res, w->ctx);
        free(w);
        w = next;
    }
}

void pc_pp_fail_all_in_doubt(pc_pp_t *pp, pulsarc_result res, const char *why)
{
    char maybe[256], never[256];
    snprintf(maybe, sizeof maybe, "%s: no receipt yet; the message may have been persisted", why);
    snprintf(never, sizeof never, "%s: " NOT_SENT_DETAIL, why);
    while (pp->head)
        pc_pp_complete_head(pp, res, NULL, pp->head->first_registration ? maybe : never);
    pc_pp_fail_all(pp, res, never);
}

static void on_op_written(void *ctx, int status)
{
    pc_op_write_finished(ctx);
}

static void write_op(pc_pp_t *pp, pc_op_t *op)
{
    if (!op->first_registration)
        op->first_registration = pp->registration;
    op->written_on = pp->registration;
    /* Filled here rather than by uv_buf_init, a call into libuv for each. */
    uv_buf_t bufs[2] = {
        { .base = (char *)op->head.data, .len = op->head.len },
        { .base = (char *)op->payload, .len = op->payload_len },
    };
    if (pc_conn_write(pp->conn, bufs, op->payload_len ? 2 : 1, on_op_written, op) == 0)
        op->writes_in_flight++;
}

/* After (re)registration every op still pending goes out again, in order, before any
 * new one: the broker sees the same sequence ids and deduplicates what it already has. */
void pc_pp_resend_pending(pc_pp_t *pp)
{
    pc_op_t *prev = NULL, *op = pp->head;
    while (op && pp->state == PP_READY) {
        /* A chunked message written on an earlier connection starts over, whole, under a
         * new uuid (its new chunks were never written). */
        if (op->shared && op->written_on && op->written_on != pp->registration &&
            !(op = pc_pp_restart_chunks(pp, prev))) {
            op = prev ? prev->next : pp->head; /* it failed and left the queue */
            continue;
        }
        if (op->first_registration)
            pp->counters.entries_resent++;
        write_op(pp, op);
        prev = op;
        op = op->next;
    }
}

void pc_pp_enqueue(pc_pp_t *pp, pc_op_t *first, pc_op_t *last)
{
    /* The loop's cached time (the same monotonic clock, read once per loop turn) is
     * precise enough for a send timeout, and costs no clock read per op. */
    uint64_t now = uv_now(pp->rt->loop);
    for (pc_op_t *op = first; op; op = op->next) {
        op->created_ms = now;
        op->index = pp->next_op_index++;
    }
    if (pp->tail)
        pp->tail->next = first;
    else
        pp->head = first;
    pp->tail = last;
    if (pp->state == PP_READY)
        for (pc_op_t *op = first; op && pp->state == PP_READY; op = op->next)
            write_op(pp, op);
}

/* The op with this sequence id pending behind the head, or NULL. A receipt for one means
 * the broker answered it before the head. (Replayed explicit ids need not increase, so
 * the order of ids says nothing by itself.) */
static pc_op_t *pending_behind_head(const pc_pp_t *pp, uint64_t sequence_id)
{
    for (pc_op_t *op = pp->head->next; op; op = op->next)
        if (op->sequence_id == sequence_id)
            return op;
    return NULL;
}

/* A receipt without a position: the broker dropped the entry as a duplicate. */
static bool is_duplicate_receipt(const Pulsar__Proto__CommandSendReceipt *r)
{
    return r->message_id && r->message_id->ledgerid == UINT64_MAX &&
           r->message_id->entryid == UINT64_MAX;
}

/* A receipt for an op behind the head. The broker acknowledges a duplicate at once, ahead
 * of entries it is still storing: a replay (its ids at or below what the broker may hold)
 * answered so completes in its turn, as "stored earlier". Anything else means the broker
 * skipped the head: the stream is out of step, and a reconnect resends it. */
static void early_receipt(pc_pp_t *pp, pc_op_t *op, const Pulsar__Proto__CommandSendReceipt *r)
{
    if (is_duplicate_receipt(r) && op->replay && !op->shared) {
        op->stored_earlier = true;
        return;
    }
    PC_WARN(pp->rt->log,
            "%s: receipt for %llu while %llu is the oldest pending: reconnecting to resend",
            pp->topic, (unsigned long long)r->sequence_id,
            (unsigned long long)pp->head->sequence_id);
    pc_conn_close(pp->conn, PULSARC_ERR_PROTOCOL, "receipts out of order");
}

void pc_pp_on_receipt(void *ctx, const Pulsar__Proto__CommandSendReceipt *r)
{
    pc_pp_t *pp = ctx;
    pc_op_t *op = pp->head, *behind;
    if (op && r->sequence_id != op->sequence_id &&
        (behind = pending_behind_head(pp, r->sequence_id))) {
        early_receipt(pp, behind, r);
        return;
    }
    if (!op || r->sequence_id != op->sequence_id) {
        /* A late receipt for an op that already completed (timed out or resent). */
        PC_DEBUG(pp->rt->log, "%s: late receipt for %llu ignored", pp->topic,
                 (unsigned long long)r->sequence_id);
        return;
    }
    pc_backoff_reset(&pp->backoff); /* the broker stores what we send: progress */
    if (is_duplicate_receipt(r) && !op->replay && op->first_registration == pp->registration) {
        /* New ids, sent for the first time, cannot be duplicates of anything this producer
         * sent: the broker holds a higher id from elsewhere, and did not store these. */
        PC_WARN(pp->rt->log, "%s: the broker dropped new sequence id %llu as a duplicate",
                pp->topic, (unsigned long long)op->sequence_id);
        char detail[256];
        snprintf(detail, sizeof detail,
                 "the broker dropped this as a duplicate: sequence id %llu was above every id "
                 "this producer had sent, and it was not stored",
                 (unsigned long long)op->sequence_id);
        pc_pp_complete_head(pp, PULSARC_ERR_DUPLICATE_DROPPED, NULL, detail);
        return;
    }
    /* A duplicate of what the broker already holds completes with ledger and entry -1. */
    pulsarc_message_id_t id;
    int64_t ledger = r->message_id ? (int64_t)r->message_id->ledgerid : -1;
    int64_t entry = r->message_id ? (int64_t)r->message_id->entryid : -1;
    pc_message_id_init(&id, ledger, entry, pp->partition);
    /* Brokers send highest_sequence_id = -1 for ops that are not batches. */
    int64_t highest = (int64_t)op->highest_sequence_id;
    if (r->has_highest_sequence_id && (int64_t)r->highest_sequence_id > highest)
        highest = (int64_t)r->highest_sequence_id;
    if (highest > atomic_load(&pp->last_sequence_id))
        atomic_store(&pp->last_sequence_id, highest);
    pc_pp_complete_head(pp, PULSARC_OK, &id, NULL);
}

/* Tell the broker we are gone without waiting for its answer, so that the name is free
 * for a successor at once. */
void pc_pp_send_close_producer(pc_pp_t *pp)
{
    Pulsar__Proto__CommandCloseProducer close = PULSAR__PROTO__COMMAND_CLOSE_PRODUCER__INIT;
    Pulsar__Proto__BaseCommand cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    close.producer_id = pp->producer_id;
    close.request_id = pc_conn_new_request_id(pp->conn);
    cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__CLOSE_PRODUCER;
    cmd.close_producer = &close;
    pc_conn_send_command(pp->conn, &cmd);
}

/* Does op answer to a SEND_ERROR for sequence_id? The broker names an entry by its
 * highest id (Producer.publishMessage checks and fails a batch under highestSequenceId),
 * a single message or a chunk by its only one: any id of the entry's range matches. */
static bool op_has_id(const pc_op_t *op, uint64_t sequence_id)
{
    uint64_t lo = op->sequence_id, hi = op->highest_sequence_id;
    if (hi < lo) {
        uint64_t t = lo;
        lo = hi;
        hi = t;
    }
    return sequence_id >= lo && sequence_id <= hi;
}

/* The oldest pending op a SEND_ERROR for sequence_id is about (for a chunked message, its
 * oldest chunk still pending), with its predecessor in *prev (NULL: the head). */
static bool find_refused(pc_pp_t *pp, uint64_t sequence_id, pc_op_t **prev)
{
    *prev = NULL;
    for (pc_op_t *op = pp->head; op; *prev = op, op = op->next)
        if (op->first_registration && op_has_id(op, sequence_id))
            return true;
    return false;
}

void pc_pp_on_send_error(void *ctx, const Pulsar__Proto__CommandSendError *e)
{
    pc_pp_t *pp = ctx;
    pulsarc_result res = pc_result_from_server_error(e->error);
    char detail[512];
    snprintf(detail, sizeof detail, "the broker refused to store sequence id %llu: %s",
             (unsigned long long)e->sequence_id, e->message ? e->message : "");
    PC_WARN(pp->rt->log, "%s: %s (%s)", pp->topic, detail, pulsarc_result_name(res));
    if (res == PULSARC_ERR_BROKER_NOT_ALLOWED) {
        /* About this entry (too big for the topic's policy, say): it fails alone; the
         * connection and the other producers on it are fine. The broker refuses before
         * it stores, so the answer may overtake the receipts of entries sent earlier:
         * the refused entry need not be the oldest pending. */
        pc_op_t *prev;
        if (find_refused(pp, e->sequence_id, &prev))
            pc_pp_complete_op(pp, prev, res, NULL, detail);
        return;
    }
    if (pulsarc_result_is_terminal(res)) {
        /* About the topic or this producer: retrying cannot help, but the connection is
         * shared and stays. */
        pc_pp_send_close_producer(pp);
        pc_conn_remove_listener(pp->conn, &pp->listener);
        pp->conn = NULL;
        pc_pp_stop_with(pp, res, detail);
        return;
    }
    /* Checksum, persistence and other transient failures: resending on a fresh
     * connection is what the official clients do; the send timeout bounds it. */
    pc_conn_close(pp->conn, res, detail);
}

void pc_pp_on_timeout_tick(uv_timer_t *t)
{
    pc_pp_t *pp = t->data;
    uint64_t now = pc_mono_ms();
    uint64_t limit = pp->set.send_timeout_ms;
    /* Only ops that waited longer than the limit fail; ops queue in age order. */
    while (pp->head && now - pp->head->created_ms >= limit)
        pc_pp_complete_head(
            pp, PULSARC_ERR_SEND_TIMEOUT, NULL,
            pp->head->first_registration
                ? "no receipt within sendTimeoutMs; the message may have been persisted"
                : "no receipt within sendTimeoutMs; " NOT_SENT_DETAIL);
}

void pc_pp_flush(pc_pp_t *pp, pc_pp_done_fn cb, void *ctx)
{
    pc_pp_flush_batches(pp);
    if (!pp->head && !pp->waiting_head) {
        cb(pp, PULSARC_OK, ctx);
        return;
    }
    flush_waiter *w = malloc(sizeof *w);
    if (!w) {
        cb(pp, PULSARC_ERR_NO_MEMORY, ctx);
        return;
    }
    /* Messages still waiting for the first registration have no op yet: the target is
     * fixed once they are queued (pc_pp_send_waiting). */
    w->target = pp->waiting_head ? WAITING_TARGET : pp->next_op_index;
    w->res = PULSARC_OK;
    w->cb = cb;
    w->ctx = ctx;
    w->next = pp->flushes;
    pp->flushes = w;
}
