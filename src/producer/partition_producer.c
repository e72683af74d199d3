#include "producer/partition_producer.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/error.h"
#include "net/backoff.h"
#include "net/connection.h"
#include "net/lookup.h"
#include "net/pool.h"
#include "producer/batch.h"
#include "producer/op.h"
#include "producer/op_build.h"
#include "wire/frame.h"

typedef enum pp_state {
    PP_IDLE,         /* created, not started */
    PP_CONNECTING,   /* looking up, connecting or registering */
    PP_READY,        /* registered: ops are written as they come */
    PP_CLOSING,      /* CLOSE_PRODUCER sent */
    PP_CLOSED,
    PP_FAILED,       /* terminal error: every send fails */
} pp_state;

#define WAITING_TARGET UINT64_MAX

typedef struct flush_waiter {
    struct flush_waiter *next;
    uint64_t target;          /* done when every op with index < target completed */
    pulsarc_result res;       /* first failure among those ops */
    pc_pp_done_fn cb;
    void *ctx;
} flush_waiter;

struct pc_pp {
    pulsarc_client_t *client;
    pulsarc_producer_config_t conf;
    char *topic;
    int partition;
    pc_pp_complete_fn complete;
    pc_pp_stopped_fn stopped;
    void *owner;

    pp_state state;
    pulsarc_result fail_res;  /* PP_FAILED: the error every send gets */
    char fail_detail[256];    /* ... and its detail */
    uint64_t producer_id;
    char *name;
    bool user_named;
    uint64_t epoch;
    pc_conn_t *conn;
    pc_conn_listener_t listener;
    uint32_t max_message_size;

    int64_t next_sequence_id;
    bool ids_exhausted;       /* INT64_MAX was used: no automatic id is left */
    _Atomic int64_t last_sequence_id; /* confirmed by the broker; read from any thread */
    bool sequence_known;      /* sequence ids were fixed by the first registration */
    /* Deduplication: the broker drops a whole entry whose first id is at or below the
     * highest it has seen from this producer name. `pushed` is that mark as far as we can
     * know it: the highest id that entered the op stream or the open batch, or the
     * broker's last id at registration. An id at or below it is a replay, and replays
     * never share a batch with new ids. */
    int64_t pushed;
    bool batch_replays;       /* the open batch holds replayed ids */
    uint64_t registration;    /* counts successful registrations (1 = the first) */

    pc_op_t *head, *tail;     /* pendingMessages: ops written or waiting to be */
    uint64_t next_op_index;
    flush_waiter *flushes;
    pc_msg_t *waiting_head, *waiting_tail; /* sent before the first registration */
    pc_batcher_t batcher;
    pc_batch_t *taken;        /* scratch for pc_batcher_take */
    int cap_taken;
    int64_t chunk_first_ledger, chunk_first_entry; /* first chunk of the message in flight */

    pc_backoff_t backoff;
    uv_timer_t reconnect_timer;
    uv_timer_t timeout_timer;
    uv_timer_t batch_timer;
    uv_timer_t close_timer;   /* bounds a close by operationTimeoutMs */
    int live_handles;
    int inflight;             /* lookups, connection waits and requests that will call back */
    uint64_t attempt;         /* numbers (re)connection attempts; answers to older ones are stale */
    bool freed;

    /* First registration (pc_pp_start). */
    pc_pp_done_fn start_cb;
    void *start_ctx;
    uint64_t start_deadline_ms;
    /* Close. */
    pc_pp_done_fn close_cb;
    void *close_ctx;
};

static void connect_now(pc_pp_t *pp);
static void connection_lost(pc_pp_t *pp, pulsarc_result why, const char *detail);
static void finish_close(pc_pp_t *pp, pulsarc_result res);
static void stop_with(pc_pp_t *pp, pulsarc_result res, const char *detail);

#define NOT_SENT_DETAIL "the message was never written to a connection: not sent"

/* ---- small helpers ----------------------------------------------------------- */

const char *pc_pp_name(const pc_pp_t *pp) { return pp->name ? pp->name : ""; }
int64_t pc_pp_last_sequence_id(const pc_pp_t *pp) { return atomic_load(&pp->last_sequence_id); }
uint32_t pc_pp_max_message_size(const pc_pp_t *pp) { return pp->max_message_size; }

static void maybe_free(pc_pp_t *pp)
{
    if (!pp->freed || pp->live_handles > 0 || pp->inflight > 0)
        return;
    pc_producer_config_clear(&pp->conf);
    pc_batcher_free(&pp->batcher);
    free(pp->taken);
    free(pp->topic);
    free(pp->name);
    free(pp);
}

/* Every asynchronous call made with pp as context holds it alive until it calls back. */
static bool callback_returned(pc_pp_t *pp)
{
    pp->inflight--;
    if (pp->freed) {
        maybe_free(pp);
        return false;
    }
    return true;
}

/* Context for the calls of one connection attempt, so that an answer arriving after the
 * attempt was abandoned (the broker closed us mid-registration) is recognised as stale. */
typedef struct attempt_ctx {
    pc_pp_t *pp;
    uint64_t attempt;
} attempt_ctx;

static attempt_ctx *attempt_ctx_new(pc_pp_t *pp)
{
    attempt_ctx *a = malloc(sizeof *a);
    if (a) {
        a->pp = pp;
        a->attempt = pp->attempt;
        pp->inflight++;
    }
    return a;
}

/* Returns the producer if the answer is still wanted, else NULL; frees the context. */
static pc_pp_t *attempt_ctx_take(void *ctx)
{
    attempt_ctx *a = ctx;
    pc_pp_t *pp = a->pp;
    bool current = a->attempt == pp->attempt;
    free(a);
    if (!callback_returned(pp) || !current || pp->state != PP_CONNECTING)
        return NULL;
    return pp;
}

static void on_timer_closed(uv_handle_t *h)
{
    pc_pp_t *pp = h->data;
    pp->live_handles--;
    maybe_free(pp);
}

/* ---- completing ops ---------------------------------------------------------- */

static void check_flushes(pc_pp_t *pp)
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

static pc_op_t *pop_head(pc_pp_t *pp)
{
    pc_op_t *op = pp->head;
    pp->head = op->next;
    if (!pp->head)
        pp->tail = NULL;
    op->next = NULL;
    return op;
}

/* Remove the head op and complete what it carries: every message of a batch (each with
 * its own id), a single message, or — for chunks — the message once its last chunk is
 * stored, or at the first failed chunk (the rest of its chunks are dropped with it). */
static void complete_head(pc_pp_t *pp, pulsarc_result res, const pulsarc_message_id_t *id,
                          const char *detail)
{
    pc_op_t *op = pop_head(pp);
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
            while (pp->head && pp->head->shared == op->shared)
                pc_op_release(pop_head(pp));
            last = true;
        }
        if (last) {
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
        check_flushes(pp);
        return;
    }
    int i = 0;
    for (pc_msg_t *m = op->msgs; m; m = m->next, i++) {
        pulsarc_message_id_t mid;
        if (res == PULSARC_OK) {
            mid = *id;
            if (op->batch) {
                mid.batch_index = i;
                mid.batch_size = op->num_messages;
            }
        }
        pc_set_detail(detail);
        pp->complete(pp->owner, m, res, res == PULSARC_OK ? &mid : NULL);
    }
    pc_op_release(op);
    check_flushes(pp);
}

/* A message that never became an op ends here. */
static void fail_message(pc_pp_t *pp, pc_msg_t *msg, pulsarc_result res, const char *detail)
{
    pc_set_detail(detail);
    pp->complete(pp->owner, msg, res, NULL);
    pc_msg_free(msg);
}

static void fail_batch(pc_pp_t *pp, pc_batch_t *b, pulsarc_result res, const char *detail)
{
    for (pc_msg_t *m = b->head, *next; m; m = next) {
        next = m->next;
        fail_message(pp, m, res, detail);
    }
    b->head = b->tail = NULL;
}

/* Move the open batches into pp->taken; returns how many (-1 when out of memory). */
static int take_batches(pc_pp_t *pp)
{
    if (pp->batcher.n_batches > pp->cap_taken) {
        pc_batch_t *t = realloc(pp->taken, (size_t)pp->batcher.cap_batches * sizeof *t);
        if (!t)
            return -1;
        pp->taken = t;
        pp->cap_taken = pp->batcher.cap_batches;
    }
    return pc_batcher_take(&pp->batcher, pp->taken);
}

static void fail_unsent(pc_pp_t *pp, pulsarc_result res, const char *detail)
{
    while (pp->waiting_head) {
        pc_msg_t *m = pp->waiting_head;
        pp->waiting_head = m->next;
        fail_message(pp, m, res, detail);
    }
    pp->waiting_tail = NULL;
    int n = take_batches(pp);
    for (int i = 0; i < n; i++)
        fail_batch(pp, &pp->taken[i], res, detail);
}

static void fail_all(pc_pp_t *pp, pulsarc_result res, const char *detail)
{
    /* Oldest first: ops in flight, then what is still batched or waiting. */
    while (pp->head)
        complete_head(pp, res, NULL, detail);
    fail_unsent(pp, res, detail);
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

/* ---- writing ----------------------------------------------------------------- */

static void on_op_written(void *ctx, int status)
{
    pc_op_write_finished(ctx);
}

static void write_op(pc_pp_t *pp, pc_op_t *op)
{
    if (!op->first_registration)
        op->first_registration = pp->registration;
    uv_buf_t bufs[2] = {
        uv_buf_init((char *)op->head.data, (unsigned)op->head.len),
        uv_buf_init((char *)op->payload, (unsigned)op->payload_len),
    };
    if (pc_conn_write(pp->conn, bufs, op->payload_len ? 2 : 1, on_op_written, op) == 0)
        op->writes_in_flight++;
}

/* After (re)registration every op still pending goes out again, in order, before any
 * new one: the broker sees the same sequence ids and deduplicates what it already has. */
static void resend_pending(pc_pp_t *pp)
{
    for (pc_op_t *op = pp->head; op && pp->state == PP_READY; op = op->next)
        write_op(pp, op);
}

/* ---- building ops ------------------------------------------------------------ */

static void enqueue(pc_pp_t *pp, pc_op_t *first, pc_op_t *last)
{
    uint64_t now = pc_mono_ms();
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

static void op_params(const pc_pp_t *pp, pc_op_params_t *p)
{
    p->producer_id = pp->producer_id;
    p->producer_name = pp->name;
    p->codec = (int)pp->conf.compression;
    p->max_message_size = pp->max_message_size;
    p->chunking = pp->conf.chunking_enabled;
    p->chunk_size = (size_t)pp->conf.chunk_max_size;
}

static void on_batch_timer(uv_timer_t *t);

/* ---- sequence ids ------------------------------------------------------------ */

/* Automatic ids continue after the highest id used so far, without overflowing. */
static void note_id_used(pc_pp_t *pp, int64_t id)
{
    if (pp->ids_exhausted || id < pp->next_sequence_id)
        return;
    if (id == INT64_MAX)
        pp->ids_exhausted = true;
    else
        pp->next_sequence_id = id + 1;
}

/* Give msg the next automatic id unless it brought its own. False when none is left. */
static bool assign_id(pc_pp_t *pp, pc_msg_t *msg)
{
    if (msg->sequence_id < 0) {
        if (pp->ids_exhausted)
            return false;
        msg->sequence_id = pp->next_sequence_id;
    }
    note_id_used(pp, msg->sequence_id);
    return true;
}

#define IDS_EXHAUSTED "sequence ids are exhausted (INT64_MAX was used)"

/* Key-based batching interleaves keys, so its automatic ids are given when a batch is
 * flushed, in flush order: every batch's ids are then above the previous batch's, and
 * above anything the broker may hold, which a deduplicating broker requires. */
static bool assign_ids_at_flush(pc_pp_t *pp, pc_batch_t *b)
{
    if (pp->next_sequence_id <= pp->pushed)
        note_id_used(pp, pp->pushed);
    for (pc_msg_t *m = b->head; m; m = m->next) {
        if (m->sequence_id >= 0)
            continue;
        if (!assign_id(pp, m))
            return false;
        if (m->sequence_id > pp->pushed)
            pp->pushed = m->sequence_id;
    }
    return true;
}

/* Send the open batches, oldest first. */
static void flush_batches(pc_pp_t *pp)
{
    uv_timer_stop(&pp->batch_timer);
    if (pc_batcher_empty(&pp->batcher))
        return;
    pc_op_params_t p;
    op_params(pp, &p);
    int n = take_batches(pp);
    if (n < 0) {
        /* Leave the batches where they are; the timer tries again. */
        uv_timer_start(&pp->batch_timer, on_batch_timer, 10, 0);
        return;
    }
    bool replays = pp->batch_replays;
    pp->batch_replays = false;
    for (int i = 0; i < n; i++) {
        if (!assign_ids_at_flush(pp, &pp->taken[i])) {
            fail_batch(pp, &pp->taken[i], PULSARC_ERR_INVALID_ARGUMENT, IDS_EXHAUSTED);
            continue;
        }
        pc_op_t *op;
        pulsarc_result res = pc_op_build_batch(&p, &pp->taken[i], &op);
        if (res == PULSARC_OK) {
            op->replay = replays;
            enqueue(pp, op, op);
            continue;
        }
        char detail[256];
        snprintf(detail, sizeof detail, "%s", pulsarc_last_error_detail());
        fail_batch(pp, &pp->taken[i], res, detail);
    }
}

static void on_batch_timer(uv_timer_t *t)
{
    flush_batches(t->data);
}

static bool batchable(const pc_pp_t *pp, const pc_msg_t *msg)
{
    /* Delayed delivery is per entry on the broker, so such messages travel alone; so do
     * messages that would fill a batch by themselves. */
    return pp->conf.batching_enabled && msg->deliver_at == 0 &&
           pc_batcher_takes_alone(&pp->batcher, msg);
}

/* Batch msg. A replayed id closes a batch of new ids and the other way round, so the
 * broker never drops new messages together with a replay. */
static void add_to_batch(pc_pp_t *pp, pc_msg_t *msg)
{
    bool deferred = msg->sequence_id < 0; /* key-based: the id comes at flush */
    bool replay = !deferred && msg->sequence_id <= pp->pushed;
    if (!pc_batcher_empty(&pp->batcher) &&
        (replay != pp->batch_replays || !pc_batcher_fits(&pp->batcher, msg)))
        flush_batches(pp);
    bool first = pc_batcher_empty(&pp->batcher);
    if (pc_batcher_add(&pp->batcher, msg) != 0) {
        fail_message(pp, msg, PULSARC_ERR_NO_MEMORY, "out of memory");
        return;
    }
    if (first)
        pp->batch_replays = replay;
    if (!deferred && !replay)
        pp->pushed = msg->sequence_id;
    if (pc_batcher_full(&pp->batcher))
        flush_batches(pp);
    else if (first)
        uv_timer_start(&pp->batch_timer, on_batch_timer,
                       (uint64_t)pp->conf.batching_max_delay_ms, 0);
}

static void send_now(pc_pp_t *pp, pc_msg_t *msg)
{
    bool batch = batchable(pp, msg);
    /* Explicit ids come from the application (deduplication across restarts); automatic
     * ids continue after the highest id seen so far. */
    bool deferred = batch && pp->batcher.key_based && msg->sequence_id < 0;
    if (!deferred && !assign_id(pp, msg)) {
        fail_message(pp, msg, PULSARC_ERR_INVALID_ARGUMENT, IDS_EXHAUSTED);
        return;
    }
    if (batch) {
        add_to_batch(pp, msg);
        return;
    }
    /* Keep order: whatever is batched goes before this message. */
    flush_batches(pp);
    pc_op_params_t p;
    op_params(pp, &p);
    pc_op_t *first, *last;
    int64_t id = msg->sequence_id;
    pulsarc_result res = pc_op_build_message(&p, msg, &first, &last);
    if (res != PULSARC_OK) {
        char detail[512];
        snprintf(detail, sizeof detail, "%s", pulsarc_last_error_detail());
        fail_message(pp, msg, res, detail);
        return;
    }
    bool replay = id <= pp->pushed;
    if (!replay)
        pp->pushed = id;
    for (pc_op_t *op = first; op; op = op->next)
        op->replay = replay;
    enqueue(pp, first, last);
}

void pc_pp_send(pc_pp_t *pp, pc_msg_t *msg)
{
    if (pp->state == PP_FAILED) {
        fail_message(pp, msg, pp->fail_res, pp->fail_detail);
        return;
    }
    if (pp->state == PP_CLOSING || pp->state == PP_CLOSED) {
        fail_message(pp, msg, PULSARC_ERR_ALREADY_CLOSED, "producer is closed");
        return;
    }
    if (!pp->sequence_known) {
        /* Not registered yet (lazy start): sequence ids and the producer name come from
         * the broker, so the message waits for them. */
        if (pp->state == PP_IDLE && pp->conf.lazy_start)
            pc_pp_start(pp, NULL, NULL);
        msg->next = NULL;
        if (pp->waiting_tail)
            pp->waiting_tail->next = msg;
        else
            pp->waiting_head = msg;
        pp->waiting_tail = msg;
        return;
    }
    send_now(pp, msg);
}

static void send_waiting(pc_pp_t *pp)
{
    pc_msg_t *m = pp->waiting_head;
    pp->waiting_head = pp->waiting_tail = NULL;
    while (m) {
        pc_msg_t *next = m->next;
        send_now(pp, m);
        m = next;
    }
    bool waited = false;
    for (flush_waiter *w = pp->flushes; w; w = w->next)
        waited |= w->target == WAITING_TARGET;
    if (!waited)
        return;
    flush_batches(pp);
    for (flush_waiter *w = pp->flushes; w; w = w->next)
        if (w->target == WAITING_TARGET)
            w->target = pp->next_op_index; /* every op queued so far, maybe none */
    check_flushes(pp);
}

/* ---- receipts ---------------------------------------------------------------- */

/* Is an op with this sequence id pending behind the head? Then a receipt for it means the
 * broker skipped the head: the stream is out of step. (Replayed explicit ids need not
 * increase, so the order of ids says nothing by itself.) */
static bool pending_behind_head(const pc_pp_t *pp, uint64_t sequence_id)
{
    for (const pc_op_t *op = pp->head->next; op; op = op->next)
        if (op->sequence_id == sequence_id)
            return true;
    return false;
}

/* A receipt without a position: the broker dropped the entry as a duplicate. */
static bool is_duplicate_receipt(const Pulsar__Proto__CommandSendReceipt *r)
{
    return r->message_id && r->message_id->ledgerid == UINT64_MAX &&
           r->message_id->entryid == UINT64_MAX;
}

static void on_receipt(void *ctx, const Pulsar__Proto__CommandSendReceipt *r)
{
    pc_pp_t *pp = ctx;
    pc_op_t *op = pp->head;
    if (op && r->sequence_id != op->sequence_id && pending_behind_head(pp, r->sequence_id)) {
        PC_WARN(&pp->client->log,
                "%s: receipt for %llu while %llu is the oldest pending: reconnecting to resend",
                pp->topic, (unsigned long long)r->sequence_id,
                (unsigned long long)op->sequence_id);
        pc_conn_close(pp->conn, PULSARC_ERR_PROTOCOL, "receipts out of order");
        return;
    }
    if (!op || r->sequence_id != op->sequence_id) {
        /* A late receipt for an op that already completed (timed out or resent). */
        PC_DEBUG(&pp->client->log, "%s: late receipt for %llu ignored", pp->topic,
                 (unsigned long long)r->sequence_id);
        return;
    }
    pc_backoff_reset(&pp->backoff); /* the broker stores what we send: progress */
    if (is_duplicate_receipt(r) && !op->replay && op->first_registration == pp->registration) {
        /* New ids, sent for the first time, cannot be duplicates of anything this producer
         * sent: the broker holds a higher id from elsewhere, and did not store these. */
        PC_WARN(&pp->client->log, "%s: the broker dropped new sequence id %llu as a duplicate",
                pp->topic, (unsigned long long)op->sequence_id);
        char detail[256];
        snprintf(detail, sizeof detail,
                 "the broker dropped this as a duplicate: sequence id %llu was above every id "
                 "this producer had sent, and it was not stored",
                 (unsigned long long)op->sequence_id);
        complete_head(pp, PULSARC_ERR_DUPLICATE_DROPPED, NULL, detail);
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
    complete_head(pp, PULSARC_OK, &id, NULL);
}

/* Tell the broker we are gone without waiting for its answer, so that the name is free
 * for a successor at once. */
static void send_close_producer(pc_pp_t *pp)
{
    Pulsar__Proto__CommandCloseProducer close = PULSAR__PROTO__COMMAND_CLOSE_PRODUCER__INIT;
    Pulsar__Proto__BaseCommand cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    close.producer_id = pp->producer_id;
    close.request_id = pc_conn_new_request_id(pp->conn);
    cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__CLOSE_PRODUCER;
    cmd.close_producer = &close;
    pc_conn_send_command(pp->conn, &cmd);
}

static void on_send_error(void *ctx, const Pulsar__Proto__CommandSendError *e)
{
    pc_pp_t *pp = ctx;
    pulsarc_result res = pc_result_from_server_error(e->error);
    char detail[512];
    snprintf(detail, sizeof detail, "the broker refused to store sequence id %llu: %s",
             (unsigned long long)e->sequence_id, e->message ? e->message : "");
    PC_WARN(&pp->client->log, "%s: %s (%s)", pp->topic, detail, pulsarc_result_name(res));
    if (res == PULSARC_ERR_BROKER_NOT_ALLOWED) {
        /* About this message (too big for the topic's policy, say): it fails alone; the
         * connection and the other producers on it are fine. */
        if (pp->head && pp->head->sequence_id == e->sequence_id)
            complete_head(pp, res, NULL, detail);
        return;
    }
    if (pulsarc_result_is_terminal(res)) {
        /* About the topic or this producer: retrying cannot help, but the connection is
         * shared and stays. */
        send_close_producer(pp);
        pc_conn_remove_listener(pp->conn, &pp->listener);
        pp->conn = NULL;
        stop_with(pp, res, detail);
        return;
    }
    /* Checksum, persistence and other transient failures: resending on a fresh
     * connection is what the official clients do; the send timeout bounds it. */
    pc_conn_close(pp->conn, res, detail);
}

static void on_broker_close(void *ctx)
{
    pc_pp_t *pp = ctx;
    PC_INFO(&pp->client->log, "%s: broker closed the producer; reconnecting", pp->topic);
    connection_lost(pp, PULSARC_ERR_CONNECTION_CLOSED, "closed by the broker");
}

static void on_disconnect(void *ctx, pulsarc_result why)
{
    pc_pp_t *pp = ctx;
    connection_lost(pp, why, pulsarc_last_error_detail());
}

/* ---- send timeout ------------------------------------------------------------ */

static void on_timeout_tick(uv_timer_t *t)
{
    pc_pp_t *pp = t->data;
    uint64_t now = pc_mono_ms();
    uint64_t limit = (uint64_t)pp->conf.send_timeout_ms;
    /* Only ops that waited longer than the limit fail; ops queue in age order. */
    while (pp->head && now - pp->head->created_ms >= limit)
        complete_head(pp, PULSARC_ERR_SEND_TIMEOUT, NULL,
                      pp->head->first_registration
                          ? "no receipt within sendTimeoutMs; the message may have been persisted"
                          : "no receipt within sendTimeoutMs; " NOT_SENT_DETAIL);
}

/* ---- connecting and registering --------------------------------------------- */

static void on_reconnect_timer(uv_timer_t *t)
{
    connect_now(t->data);
}

static void schedule_reconnect(pc_pp_t *pp)
{
    uint64_t delay = pc_backoff_next(&pp->backoff);
    PC_INFO(&pp->client->log, "%s: reconnecting in %llu ms", pp->topic, (unsigned long long)delay);
    uv_timer_start(&pp->reconnect_timer, on_reconnect_timer, delay, 0);
}

static void stop_with(pc_pp_t *pp, pulsarc_result res, const char *detail)
{
    pp->state = PP_FAILED;
    pp->fail_res = res;
    snprintf(pp->fail_detail, sizeof pp->fail_detail, "the producer stopped: %s",
             detail && *detail ? detail : pulsarc_strerror(res));
    if (pulsarc_result_is_terminal(res))
        pp->stopped(pp->owner, res, pp->fail_detail);
    PC_ERROR(&pp->client->log, "%s: %s", pp->topic, pp->fail_detail);
    fail_all(pp, res, pp->fail_detail);
}

/* An attempt to (re)register failed. */
static void attempt_failed(pc_pp_t *pp, pulsarc_result res, const char *detail)
{
    if (pp->state != PP_CONNECTING)
        return;
    pp->conn = NULL;
    PC_INFO(&pp->client->log, "%s: attempt to register failed: %s (%s)", pp->topic,
            pulsarc_result_name(res), detail ? detail : "");
    if (!pp->sequence_known) {
        /* The first registration retries until operationTimeoutMs. */
        uint64_t now = pc_mono_ms();
        if (pc_result_fails_creation(res) || now + pp->backoff.next_ms >= pp->start_deadline_ms) {
            pc_pp_done_fn cb = pp->start_cb;
            pp->start_cb = NULL;
            if (!cb && pp->conf.lazy_start && !pulsarc_result_is_terminal(res)) {
                /* A lazy partition (started by a send, nobody waits on its creation):
                 * its waiting messages fail, but the next send tries to register again,
                 * since the error may well be gone by then. */
                fail_all(pp, res, detail);
                pp->state = PP_IDLE;
                pc_backoff_reset(&pp->backoff);
                return;
            }
            stop_with(pp, res, detail);
            pc_set_detail(detail);
            if (cb)
                cb(pp, res, pp->start_ctx);
            return;
        }
        schedule_reconnect(pp);
        return;
    }
    if (pulsarc_result_is_terminal(res)) {
        stop_with(pp, res, detail);
        return;
    }
    schedule_reconnect(pp);
}

static void on_registered(pc_conn_t *conn, pulsarc_result res,
                          const Pulsar__Proto__BaseCommand *resp, void *ctx)
{
    pc_pp_t *pp = attempt_ctx_take(ctx);
    if (!pp || pp->conn != conn)
        return;
    if (res != PULSARC_OK || !resp->producer_success) {
        if (res == PULSARC_OK)
            res = pc_fail(PULSARC_ERR_PROTOCOL, "PRODUCER answered with the wrong command");
        char detail[512];
        snprintf(detail, sizeof detail, "%s", pulsarc_last_error_detail());
        if (pc_conn_state(conn) != PC_CONN_CLOSED)
            pc_conn_remove_listener(conn, &pp->listener);
        attempt_failed(pp, res, detail);
        return;
    }
    const Pulsar__Proto__CommandProducerSuccess *ok = resp->producer_success;
    if (!pp->name && ok->producer_name) {
        pp->name = strdup(ok->producer_name);
        if (!pp->name) {
            pc_conn_remove_listener(conn, &pp->listener);
            attempt_failed(pp, PULSARC_ERR_NO_MEMORY, "out of memory");
            return;
        }
    }
    int64_t broker_last = ok->has_last_sequence_id && ok->last_sequence_id >= 0
                              ? ok->last_sequence_id : -1;
    if (!pp->sequence_known) {
        /* Only the first registration fixes the ids: later ones must not rewind them. */
        pp->sequence_known = true;
        int64_t last = pp->conf.initial_sequence_id >= 0 ? pp->conf.initial_sequence_id : broker_last;
        note_id_used(pp, last);
        atomic_store(&pp->last_sequence_id, last);
    }
    /* What the broker holds is a replay for every later message with an id up to it. */
    if (broker_last > pp->pushed)
        pp->pushed = broker_last;
    pp->registration++;
    pp->max_message_size = pc_conn_max_message_size(conn);
    pc_batcher_set_frame_limit(&pp->batcher, pp->max_message_size);
    pp->state = PP_READY;
    /* The backoff starts over once the broker stores something (on_receipt): a frame it
     * refuses, closing the connection each time, must not make us spin. */
    if (!pp->head)
        pc_backoff_reset(&pp->backoff);
    PC_INFO(&pp->client->log, "%s: producer %s ready (id %llu, epoch %llu, last sequence id %lld)",
            pp->topic, pp->name, (unsigned long long)pp->producer_id,
            (unsigned long long)pp->epoch, (long long)broker_last);
    pp->epoch++;
    if (pp->start_cb || pp->waiting_head) {
        pc_pp_done_fn cb = pp->start_cb;
        pp->start_cb = NULL;
        if (cb)
            cb(pp, PULSARC_OK, pp->start_ctx);
    }
    resend_pending(pp);
    if (pp->state == PP_READY)
        send_waiting(pp);
}

static void on_conn_ready(pc_conn_t *conn, pulsarc_result res, void *ctx)
{
    pc_pp_t *pp = attempt_ctx_take(ctx);
    if (!pp || pp->conn != conn)
        return;
    if (res != PULSARC_OK) {
        char detail[512];
        snprintf(detail, sizeof detail, "%s", pulsarc_last_error_detail());
        attempt_failed(pp, res, detail);
        return;
    }
    pc_conn_add_listener(conn, &pp->listener);
    Pulsar__Proto__CommandProducer reg = PULSAR__PROTO__COMMAND_PRODUCER__INIT;
    Pulsar__Proto__BaseCommand cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    uint64_t rid = pc_conn_new_request_id(conn);
    reg.topic = pp->topic;
    reg.producer_id = pp->producer_id;
    reg.request_id = rid;
    reg.producer_name = pp->name;
    reg.has_epoch = 1;
    reg.epoch = pp->epoch;
    reg.has_user_provided_producer_name = 1;
    reg.user_provided_producer_name = pp->user_named;
    cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__PRODUCER;
    cmd.producer = &reg;
    attempt_ctx *a = attempt_ctx_new(pp);
    if (!a) {
        pc_conn_remove_listener(conn, &pp->listener);
        attempt_failed(pp, PULSARC_ERR_NO_MEMORY, "out of memory");
        return;
    }
    pc_conn_request(conn, &cmd, rid, on_registered, a);
}

static void on_lookup(pulsarc_result res, const pc_host_port_t *logical,
                      const pc_host_port_t *physical, void *ctx)
{
    pc_pp_t *pp = attempt_ctx_take(ctx);
    if (!pp)
        return;
    if (res != PULSARC_OK) {
        char detail[512];
        snprintf(detail, sizeof detail, "lookup of %s: %s", pp->topic, pulsarc_last_error_detail());
        attempt_failed(pp, res, detail);
        return;
    }
    pc_conn_t *conn = pc_pool_get(pp->client->pool, logical, physical);
    if (!conn) {
        attempt_failed(pp, PULSARC_ERR_NO_MEMORY, "out of memory");
        return;
    }
    attempt_ctx *a = attempt_ctx_new(pp);
    if (!a) {
        attempt_failed(pp, PULSARC_ERR_NO_MEMORY, "out of memory");
        return;
    }
    pp->conn = conn;
    pc_conn_when_ready(conn, on_conn_ready, a);
}

static void connect_now(pc_pp_t *pp)
{
    if (pp->state != PP_CONNECTING)
        return;
    pp->attempt++;
    attempt_ctx *a = attempt_ctx_new(pp);
    if (!a) {
        schedule_reconnect(pp);
        return;
    }
    pc_lookup_topic(pp->client, pp->topic, on_lookup, a);
}

/* The connection went away (or the broker closed us): queue everything and retry. */
static void connection_lost(pc_pp_t *pp, pulsarc_result why, const char *detail)
{
    if (pp->state == PP_CONNECTING) {
        if (!pp->conn)
            return; /* between attempts: the next one is scheduled already */
        /* The broker closed us while registering (the topic is moving): its answer to the
         * PRODUCER command may never come, so give up on this attempt and start anew. */
        PC_INFO(&pp->client->log, "%s: closed during registration; retrying", pp->topic);
        pp->attempt++;
        pp->conn = NULL;
        schedule_reconnect(pp);
        return;
    }
    if (pp->state == PP_CLOSING) {
        /* Closing anyway: the broker forgets the producer with the connection. */
        finish_close(pp, PULSARC_OK);
        return;
    }
    if (pp->state != PP_READY)
        return;
    PC_WARN(&pp->client->log, "%s: connection lost (%s%s%s); %zu message(s) will be resent",
            pp->topic, pulsarc_strerror(why), detail && *detail ? ": " : "", detail ? detail : "",
            (size_t)(pp->head ? pp->next_op_index - pp->head->index : 0));
    pp->conn = NULL;
    pp->state = PP_CONNECTING;
    schedule_reconnect(pp);
}

/* ---- lifecycle --------------------------------------------------------------- */

/* The producer is closed: whatever is still pending fails, then the closer hears. */
static void finish_close(pc_pp_t *pp, pulsarc_result res)
{
    uv_timer_stop(&pp->close_timer);
    uv_timer_stop(&pp->reconnect_timer);
    /* A close may come while a registration is in flight: the connection must not keep
     * our listener, and the answers to that attempt are stale from now on. */
    if (pp->conn && pc_conn_state(pp->conn) != PC_CONN_CLOSED)
        pc_conn_remove_listener(pp->conn, &pp->listener);
    pp->conn = NULL;
    pp->attempt++;
    pp->state = PP_CLOSED;
    if (res == PULSARC_ERR_TIMEOUT) {
        /* Messages already written may have been stored; the rest were never sent. */
        while (pp->head)
            complete_head(pp, PULSARC_ERR_ALREADY_CLOSED, NULL,
                          pp->head->first_registration
                              ? "producer closed before the receipt arrived; the message may "
                                "have been persisted"
                              : "producer closed before " NOT_SENT_DETAIL);
    }
    fail_all(pp, PULSARC_ERR_ALREADY_CLOSED, "producer closed");
    pc_pp_done_fn cb = pp->close_cb;
    pp->close_cb = NULL;
    if (cb)
        cb(pp, res, pp->close_ctx);
}

pc_pp_t *pc_pp_new(pulsarc_client_t *client, const char *topic, int partition,
                   const pulsarc_producer_config_t *conf, pc_pp_complete_fn complete,
                   pc_pp_stopped_fn stopped, void *owner)
{
    pc_pp_t *pp = calloc(1, sizeof *pp);
    if (!pp)
        return NULL;
    if (pc_producer_config_copy(&pp->conf, conf) != 0 || !(pp->topic = strdup(topic))) {
        pc_producer_config_clear(&pp->conf);
        free(pp);
        return NULL;
    }
    if (conf->producer_name) {
        pp->name = strdup(conf->producer_name);
        pp->user_named = true;
        if (!pp->name) {
            pc_producer_config_clear(&pp->conf);
            free(pp->topic);
            free(pp);
            return NULL;
        }
    }
    pp->client = client;
    pp->partition = partition;
    pp->complete = complete;
    pp->stopped = stopped;
    pp->owner = owner;
    pp->state = PP_IDLE;
    pp->producer_id = client->next_producer_id++;
    pp->max_message_size = PC_FRAME_DEFAULT_MAX_MESSAGE_SIZE;
    pp->pushed = -1;
    atomic_init(&pp->last_sequence_id, -1);
    pp->listener.producer_id = pp->producer_id;
    pp->listener.ctx = pp;
    pp->listener.on_receipt = on_receipt;
    pp->listener.on_send_error = on_send_error;
    pp->listener.on_broker_close = on_broker_close;
    pp->listener.on_disconnect = on_disconnect;
    pc_backoff_init(&pp->backoff, (uint64_t)client->conf.initial_backoff_ms,
                    (uint64_t)client->conf.max_backoff_ms);
    if (pc_batcher_init(&pp->batcher, pp->conf.batcher == 1, (int)pp->conf.batching_max_messages,
                        (size_t)pp->conf.batching_max_bytes) != 0 ||
        !(pp->taken = calloc(4, sizeof *pp->taken))) {
        pc_batcher_free(&pp->batcher);
        pc_producer_config_clear(&pp->conf);
        free(pp->topic);
        free(pp->name);
        free(pp);
        return NULL;
    }
    pc_batcher_set_frame_limit(&pp->batcher, pp->max_message_size);
    uv_timer_init(&client->loop, &pp->reconnect_timer);
    uv_timer_init(&client->loop, &pp->timeout_timer);
    uv_timer_init(&client->loop, &pp->batch_timer);
    uv_timer_init(&client->loop, &pp->close_timer);
    pp->reconnect_timer.data = pp;
    pp->timeout_timer.data = pp;
    pp->batch_timer.data = pp;
    pp->close_timer.data = pp;
    pp->cap_taken = 4;
    pp->live_handles = 4;
    if (pp->conf.send_timeout_ms > 0) {
        /* Check often enough that a message fails close to its deadline. */
        uint64_t every = (uint64_t)pp->conf.send_timeout_ms / 10;
        every = every < 10 ? 10 : every > 1000 ? 1000 : every;
        uv_timer_start(&pp->timeout_timer, on_timeout_tick, every, every);
    }
    return pp;
}

void pc_pp_start(pc_pp_t *pp, pc_pp_done_fn cb, void *ctx)
{
    pp->start_cb = cb;
    pp->start_ctx = ctx;
    pp->start_deadline_ms = pc_mono_ms() + (uint64_t)pp->client->conf.operation_timeout_ms;
    pp->state = PP_CONNECTING;
    connect_now(pp);
}

void pc_pp_flush(pc_pp_t *pp, pc_pp_done_fn cb, void *ctx)
{
    flush_batches(pp);
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
     * fixed once they are queued (send_waiting). */
    w->target = pp->waiting_head ? WAITING_TARGET : pp->next_op_index;
    w->res = PULSARC_OK;
    w->cb = cb;
    w->ctx = ctx;
    w->next = pp->flushes;
    pp->flushes = w;
}

static void on_closed_by_broker_answer(pc_conn_t *conn, pulsarc_result res,
                                       const Pulsar__Proto__BaseCommand *resp, void *ctx)
{
    pc_pp_t *pp = ctx;
    if (!callback_returned(pp) || pp->state != PP_CLOSING)
        return;
    if (pp->conn && pc_conn_state(pp->conn) != PC_CONN_CLOSED)
        pc_conn_remove_listener(pp->conn, &pp->listener);
    /* A dropped connection closes the producer on the broker just as well. */
    finish_close(pp, res == PULSARC_ERR_CONNECTION_CLOSED ? PULSARC_OK : res);
}

static void close_after_flush(pc_pp_t *pp, pulsarc_result res, void *ctx)
{
    if (pp->state == PP_CLOSED || pp->state == PP_CLOSING)
        return;
    uv_timer_stop(&pp->reconnect_timer);
    if (pp->state != PP_READY) {
        /* Not registered anywhere: nothing to tell the broker. */
        finish_close(pp, PULSARC_OK);
        return;
    }
    pp->state = PP_CLOSING;
    Pulsar__Proto__CommandCloseProducer close = PULSAR__PROTO__COMMAND_CLOSE_PRODUCER__INIT;
    Pulsar__Proto__BaseCommand cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    uint64_t rid = pc_conn_new_request_id(pp->conn);
    close.producer_id = pp->producer_id;
    close.request_id = rid;
    cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__CLOSE_PRODUCER;
    cmd.close_producer = &close;
    pp->inflight++;
    pc_conn_request(pp->conn, &cmd, rid, on_closed_by_broker_answer, pp);
}

/* The close took longer than operationTimeoutMs (no receipts, a dead broker): stop
 * waiting. Messages still pending fail; a frame already written may have been stored. */
static void on_close_deadline(uv_timer_t *t)
{
    pc_pp_t *pp = t->data;
    if (pp->state == PP_CLOSED)
        return;
    PC_WARN(&pp->client->log, "%s: close did not finish within operationTimeoutMs", pp->topic);
    if (pp->conn && pc_conn_state(pp->conn) == PC_CONN_READY && pp->state == PP_READY) {
        send_close_producer(pp);
    }
    if (pp->conn && pc_conn_state(pp->conn) != PC_CONN_CLOSED)
        pc_conn_remove_listener(pp->conn, &pp->listener);
    uv_timer_stop(&pp->reconnect_timer);
    finish_close(pp, PULSARC_ERR_TIMEOUT);
}

void pc_pp_close(pc_pp_t *pp, pc_pp_done_fn cb, void *ctx)
{
    if (pp->state == PP_CLOSED || pp->state == PP_FAILED || pp->state == PP_IDLE) {
        pp->state = PP_CLOSED;
        cb(pp, PULSARC_OK, ctx);
        return;
    }
    pp->close_cb = cb;
    pp->close_ctx = ctx;
    uv_timer_start(&pp->close_timer, on_close_deadline,
                   (uint64_t)pp->client->conf.operation_timeout_ms, 0);
    pc_pp_flush(pp, close_after_flush, NULL);
}

void pc_pp_abort(pc_pp_t *pp, pulsarc_result why, const char *detail)
{
    if (pp->conn && pc_conn_state(pp->conn) != PC_CONN_CLOSED)
        pc_conn_remove_listener(pp->conn, &pp->listener);
    pp->conn = NULL;
    uv_timer_stop(&pp->reconnect_timer);
    uv_timer_stop(&pp->timeout_timer);
    uv_timer_stop(&pp->batch_timer);
    uv_timer_stop(&pp->close_timer);
    pp_state before = pp->state;
    pp->state = PP_CLOSED;
    fail_all(pp, why, detail);
    if (pp->start_cb && before == PP_CONNECTING) {
        pc_pp_done_fn cb = pp->start_cb;
        pp->start_cb = NULL;
        pc_set_detail(detail);
        cb(pp, why, pp->start_ctx);
    }
    if (pp->close_cb) {
        pc_pp_done_fn cb = pp->close_cb;
        pp->close_cb = NULL;
        cb(pp, PULSARC_OK, pp->close_ctx);
    }
    /* Flush waiters whose ops all failed above have run; none can be left. */
}

void pc_pp_free(pc_pp_t *pp)
{
    if (!pp)
        return;
    if (pp->state != PP_CLOSED)
        pc_pp_abort(pp, PULSARC_ERR_ALREADY_CLOSED, "producer freed");
    pp->freed = true;
    uv_close((uv_handle_t *)&pp->reconnect_timer, on_timer_closed);
    uv_close((uv_handle_t *)&pp->timeout_timer, on_timer_closed);
    uv_close((uv_handle_t *)&pp->batch_timer, on_timer_closed);
    uv_close((uv_handle_t *)&pp->close_timer, on_timer_closed);
    maybe_free(pp);
}
