/* Sequence ids and the batching driver: messages become ops, batched or alone,
 * and replayed ids never share a batch with new ones. @locality loop thread. */
#include "producer/pp_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include "common/clock.h"
#include "common/error.h"
#include "producer/op_build.h"

#define IDS_EXHAUSTED "sequence ids are exhausted (INT64_MAX was used)"

static void on_batch_timer(uv_timer_t *t);

/* Entries built from msgs messages of bytes payload bytes (ops first..last). */
static void count_sent(pc_pp_t *pp, pc_op_t *first, uint64_t msgs, uint64_t bytes)
{
    pc_pp_counters_t *k = &pp->counters;
    first->msg_bytes = bytes; /* what its receipt counts (chunks count their message's) */
    k->sent_msgs += msgs;
    k->sent_bytes += bytes;
    for (const pc_op_t *op = first; op; op = op->next) {
        k->entries++;
        k->entry_raw_bytes += op->raw_len;
        k->entry_bytes += op->payload_len;
    }
}

static void count_batch(pc_pp_t *pp, uint64_t msgs)
{
    pc_pp_counters_t *k = &pp->counters;
    k->batches++;
    k->batched_msgs += msgs;
    if (msgs > k->batch_max_msgs)
        k->batch_max_msgs = msgs;
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

void pc_pp_fail_unsent(pc_pp_t *pp, pulsarc_result res, const char *detail)
{
    while (pp->waiting_head) {
        pc_msg_t *m = pp->waiting_head;
        pp->waiting_head = m->next;
        pc_pp_fail_message(pp, m, res, detail);
    }
    pp->waiting_tail = NULL;
    int n = take_batches(pp);
    for (int i = 0; i < n; i++)
        pc_pp_fail_batch(pp, &pp->taken[i], res, detail);
}

/* The version a message's (or batch's) schema has; NULL when it has none. */
static void stamp_version(pc_op_params_t *p, const pp_schema_slot *slot)
{
    p->schema_version = slot && slot->has_version ? slot->version : NULL;
    p->schema_version_len = slot && slot->has_version ? slot->version_len : 0;
}

static void op_params(pc_pp_t *pp, pc_op_params_t *p)
{
    p->producer_id = pp->producer_id;
    p->producer_name = pp->name;
    p->producer_name_len = pp->name_len;
    p->codec = pp->set.compression;
    p->level = pp->set.compression_level;
    p->compressor = &pp->compressor;
    p->max_message_size = pp->max_message_size;
    p->chunking = pp->set.chunking_enabled;
    p->chunk_size = pp->set.chunk_max_size;
    p->enc = NULL;
    p->txn = (pc_txn_ids_t){ 0 };
    p->chunk_attempt = pp->chunk_attempts++;
    p->op_cache = &pp->rt->op_blocks;
    p->ahead = NULL;
}

/* The data key the next entry is encrypted with (p->enc; NULL: unencrypted). Fails with
 * PULSARC_ERR_CRYPTO (cryptoFailureAction=fail) when the keys cannot be loaded. A sealed
 * message (msg, when not NULL) is encrypted already. */
static pulsarc_result entry_key(pc_pp_t *pp, pc_op_params_t *p, const pc_msg_t *msg)
{
    p->enc = NULL;
    if (!pp->enc || (msg && msg->sealed))
        return PULSARC_OK;
    return pc_encryptor_next(pp->enc, pc_clock_now_ms(pp->rt->clock), &p->enc);
}

/* A message's ops: a sealed one's pieces as they are, any other built here. */
static pulsarc_result build_message(const pc_op_params_t *p, pc_msg_t *msg, pc_op_t **first,
                                    pc_op_t **last)
{
    return msg->sealed ? pc_op_build_sealed(p, msg, first, last)
                       : pc_op_build_message(p, msg, first, last);
}

/* Automatic ids continue after the highest id used so far, without overflowing. */
void pc_pp_note_id_used(pc_pp_t *pp, int64_t id)
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
    pc_pp_note_id_used(pp, msg->sequence_id);
    return true;
}

/* Key-based batching interleaves keys, so its automatic ids are given when a batch is
 * flushed, in flush order: every batch's ids are then above the previous batch's, and
 * above anything the broker may hold, which a deduplicating broker requires. Other
 * batches got every id as their messages came, and are not walked: their records have
 * often left the caches by now (many producers, each with its batch open). */
static bool assign_ids_at_flush(pc_pp_t *pp, pc_batch_t *b)
{
    if (pp->next_sequence_id <= pp->pushed)
        pc_pp_note_id_used(pp, pp->pushed);
    if (!pp->batcher.key_based)
        return true;
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
void pc_pp_flush_batches(pc_pp_t *pp)
{
    /* Nothing open, nothing to stop: the timer starts with a batch's first message (one
     * left running by a failure that took the batches only finds them empty). */
    if (pc_batcher_empty(&pp->batcher))
        return;
    uv_timer_stop(&pp->batch_timer);
    pc_op_params_t p;
    op_params(pp, &p);
    int n = take_batches(pp);
    if (n < 0) {
        /* Leave the batches where they are; the timer tries again. */
        uv_timer_start(&pp->batch_timer, on_batch_timer, 10, 0);
        return;
    }
    /* Whether the next batches keep their order: as the oldest of these would have. */
    pp->batcher.keep_order = pc_records_spread(&pp->records, pp->taken[0].opened_taken, 2);
    bool replays = pp->batch_replays;
    pp->batch_replays = false;
    /* A batch never mixes schemas or transactions: the open batches all have
     * pp->batch_schema's and pp->batch_txn's. */
    stamp_version(&p, pp->batch_schema);
    pp->batch_schema = NULL;
    p.txn = pp->batch_txn;
    for (int i = 0; i < n; i++) {
        p.ahead = pp->taken[i].order &&
                          pc_records_spread(&pp->records, pp->taken[i].opened_taken, 1)
                      ? &pp->records
                      : NULL;
        if (!assign_ids_at_flush(pp, &pp->taken[i])) {
            pc_pp_fail_batch(pp, &pp->taken[i], PULSARC_ERR_INVALID_ARGUMENT, IDS_EXHAUSTED);
            continue;
        }
        pc_op_t *op;
        pulsarc_result res = entry_key(pp, &p, NULL);
        uint64_t msgs = (uint64_t)pp->taken[i].count, bytes = pp->taken[i].bytes;
        if (res == PULSARC_OK)
            res = pc_op_build_batch(&p, &pp->taken[i], &op);
        if (res == PULSARC_OK) {
            count_sent(pp, op, msgs, bytes);
            count_batch(pp, msgs);
            op->replay = replays;
            pc_pp_enqueue(pp, op, op);
            continue;
        }
        char detail[256];
        snprintf(detail, sizeof detail, "%s", pulsarc_last_error_detail());
        pc_pp_fail_batch(pp, &pp->taken[i], res, detail);
    }
}

static void on_batch_timer(uv_timer_t *t)
{
    pc_pp_flush_batches(t->data);
}

/* The plan the sending thread made at admission (msg->batched), and a frame that can hold
 * the message's entry. */
static bool batchable(const pc_pp_t *pp, const pc_msg_t *msg)
{
    return msg->batched && pc_batcher_entry_fits(&pp->batcher, msg);
}

/* Batch msg. A replayed id closes a batch of new ids and the other way round, so the
 * broker never drops new messages together with a replay. */
static void add_to_batch(pc_pp_t *pp, pc_msg_t *msg)
{
    bool deferred = msg->sequence_id < 0; /* key-based: the id comes at flush */
    bool replay = !deferred && msg->sequence_id <= pp->pushed;
    if (!pc_batcher_empty(&pp->batcher) &&
        (replay != pp->batch_replays || msg->schema_slot != pp->batch_schema ||
         !pc_txn_ids_equal(msg->txn, pp->batch_txn) || !pc_batcher_fits(&pp->batcher, msg)))
        pc_pp_flush_batches(pp);
    bool first = pc_batcher_empty(&pp->batcher);
    if (pc_batcher_add(&pp->batcher, msg) != 0) {
        pc_pp_fail_message(pp, msg, PULSARC_ERR_NO_MEMORY, "out of memory");
        return;
    }
    if (first) {
        pp->batch_replays = replay;
        pp->batch_schema = msg->schema_slot;
        pp->batch_txn = msg->txn;
    }
    if (!deferred && !replay)
        pp->pushed = msg->sequence_id;
    if (pc_batcher_full(&pp->batcher))
        pc_pp_flush_batches(pp);
    else if (first)
        uv_timer_start(&pp->batch_timer, on_batch_timer, pp->set.batching_max_delay_ms, 0);
}

static void send_now(pc_pp_t *pp, pc_msg_t *msg)
{
    if (msg->batched)
        msg->entry_size = pc_batch_entry_size(msg); /* once: the batcher reads it thrice */
    bool batch = batchable(pp, msg);
    /* Explicit ids come from the application (deduplication across restarts); automatic
     * ids continue after the highest id seen so far. */
    bool deferred = batch && pp->batcher.key_based && msg->sequence_id < 0;
    if (!deferred && !assign_id(pp, msg)) {
        pc_pp_fail_message(pp, msg, PULSARC_ERR_INVALID_ARGUMENT, IDS_EXHAUSTED);
        return;
    }
    if (batch) {
        add_to_batch(pp, msg);
        return;
    }
    /* Keep order: whatever is batched goes before this message. */
    pc_pp_flush_batches(pp);
    pc_op_params_t p;
    op_params(pp, &p);
    stamp_version(&p, msg->schema_slot);
    p.txn = msg->txn;
    pc_op_t *first, *last;
    int64_t id = msg->sequence_id;
    pulsarc_result res = entry_key(pp, &p, msg);
    if (res == PULSARC_OK)
        res = build_message(&p, msg, &first, &last);
    if (res != PULSARC_OK) {
        char detail[512];
        snprintf(detail, sizeof detail, "%s", pulsarc_last_error_detail());
        pc_pp_fail_message(pp, msg, res, detail);
        return;
    }
    bool replay = id <= pp->pushed;
    if (!replay)
        pp->pushed = id;
    for (pc_op_t *op = first; op; op = op->next)
        op->replay = replay;
    count_sent(pp, first, 1, msg->payload_len);
    pc_pp_enqueue(pp, first, last);
}

/* The new chunk ops first..last take the place in pendingMessages of the message's old
 * ones (the op after prev and the rest of its chunks): the same place in the op stream
 * (flush targets), the same age (the send timeout) and history (what a receipt or a
 * timeout means); never written yet. */
static void replace_chunks(pc_pp_t *pp, pc_op_t *prev, pc_op_t *first, pc_op_t *last)
{
    pc_op_t **link = prev ? &prev->next : &pp->head;
    pc_op_t *old = *link;
    pc_shared_payload_t *sh = old->shared;
    for (pc_op_t *op = first; op; op = op->next) {
        op->index = old->index;
        op->created_ms = old->created_ms;
        op->first_registration = old->first_registration;
        op->replay = old->replay;
    }
    first->msg_bytes = old->msg_bytes;
    sh->msg = NULL; /* the new ops have the message now */
    while (old && old->shared == sh) {
        pc_op_t *next = old->next;
        pc_op_release(old);
        old = next;
    }
    *link = first;
    last->next = old;
    if (!old)
        pp->tail = last;
}

pc_op_t *pc_pp_restart_chunks(pc_pp_t *pp, pc_op_t *prev)
{
    pc_op_t *old = prev ? prev->next : pp->head;
    pc_msg_t *msg = old->shared->msg;
    pc_op_params_t p;
    op_params(pp, &p);
    stamp_version(&p, msg->schema_slot);
    p.txn = msg->txn;
    pc_op_t *first, *last;
    pulsarc_result res = entry_key(pp, &p, msg);
    if (res == PULSARC_OK)
        res = build_message(&p, msg, &first, &last);
    if (res != PULSARC_OK) {
        char detail[512];
        snprintf(detail, sizeof detail,
                 "building the chunked message again after a "
                 "reconnect: %s",
                 pulsarc_last_error_detail());
        pc_pp_complete_op(pp, prev, res, NULL, detail);
        return NULL;
    }
    PC_DEBUG(pp->rt->log, "%s: chunked message %lld starts over after the reconnect", pp->topic,
             (long long)msg->sequence_id);
    replace_chunks(pp, prev, first, last);
    return first;
}

void pc_pp_send(pc_pp_t *pp, pc_msg_t *msg)
{
    if (pp->state == PP_FAILED) {
        pc_pp_fail_message(pp, msg, pp->fail_res, pp->fail_detail);
        return;
    }
    if (pp->state == PP_CLOSING || pp->state == PP_CLOSED) {
        pc_pp_fail_message(pp, msg, PULSARC_ERR_ALREADY_CLOSED, "producer is closed");
        return;
    }
    /* A message without a schema of its own has the producer's: no lookup. */
    if (!msg->schema)
        msg->schema_slot = &pp->own_schema;
    else if (!pc_pp_schema_slot_of(pp, msg)) {
        pc_pp_fail_message(pp, msg, PULSARC_ERR_NO_MEMORY, "out of memory");
        return;
    }
    const pp_schema_slot *slot = msg->schema_slot;
    if (!pp->sequence_known || pp->waiting_head || slot->state != SLOT_READY) {
        /* Not registered yet (lazy start): sequence ids and the producer name come from
         * the broker, so the message waits for them. Or its schema's version is being
         * fetched, or an earlier message's is: it waits in order. */
        if (pp->state == PP_IDLE && pp->set.lazy_start)
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

void pc_pp_send_waiting(pc_pp_t *pp)
{
    /* In order, up to the first message whose schema has no version yet (asking for it
     * if nobody does). */
    while (pp->waiting_head) {
        pc_msg_t *m = pp->waiting_head;
        pp_schema_slot *slot = pc_pp_schema_slot_of(pp, m);
        if (slot && slot->state != SLOT_READY)
            return;
        pp->waiting_head = m->next;
        if (!pp->waiting_head)
            pp->waiting_tail = NULL;
        if (slot)
            send_now(pp, m);
        else
            pc_pp_fail_message(pp, m, PULSARC_ERR_NO_MEMORY, "out of memory");
    }
    bool waited = false;
    for (flush_waiter *w = pp->flushes; w; w = w->next)
        waited |= w->target == WAITING_TARGET;
    if (!waited)
        return;
    pc_pp_flush_batches(pp);
    for (flush_waiter *w = pp->flushes; w; w = w->next)
        if (w->target == WAITING_TARGET)
            w->target = pp->next_op_index; /* every op queued so far, maybe none */
    pc_pp_check_flushes(pp);
}
