/* The producer handle's spool (spoolDir; the files are spool/'s): opened before the
 * producer registers, replayed before the creator gets the handle, written by every send
 * before it is accepted, let go message by message as they complete.
 *
 * Sequence ids: with a spool the id is part of what is written, so it is given at send,
 * by the spool (one counter per producer, across its partitions: each partition still
 * sees its ids increase), under the lock that also orders the append and the hand-over.
 * The loop thread then finds every message with an explicit id, in id order.
 * @locality any thread, as the functions say. */
#include <stdio.h>
#include <stdlib.h>

#include "client/message.h"
#include "client/producer_impl.h"
#include "common/error.h"
#include "producer/sealed.h"

/* The spool has written (and with `always` synced) the message: it goes to the loop
 * thread now, under the spool's lock, so in id order from every thread. */
static void hand_over(pc_spool_ticket_t *t)
{
    pc_send_t *s = t->owner;
    s->msg.sequence_id = t->sequence_id;
    s->spooled = t->segment;
    s->spooled_at = t->offset;
    pc_client_post_in_order(s->producer->client, &s->task);
}

pulsarc_result pc_producer_spool_open(pulsarc_producer_t *p)
{
    pc_spool_settings_t set;
    pc_producer_config_spool(&p->conf, &set);
    if (!set.dir)
        return PULSARC_OK;
    if (!p->conf.producer_name)
        return pc_fail(PULSARC_ERR_INVALID_CONFIG,
                       "spoolDir needs a fixed producerName: spooled messages are resent "
                       "under the name they were written with, so that the broker's "
                       "deduplication recognises those it already has");
    if (p->conf.batching_enabled && p->conf.batcher == PC_BATCHER_KEY_BASED)
        return pc_fail(PULSARC_ERR_INVALID_CONFIG,
                       "spoolDir cannot be used with batcherType=key_based: a spooled "
                       "message has its sequence id at send, key-based batches get theirs "
                       "when they are flushed");
    if (p->conf.lazy_start)
        return pc_fail(PULSARC_ERR_INVALID_CONFIG,
                       "spoolDir cannot be used with lazyStartPartitionedProducers: the "
                       "spool's sequence ids continue above every partition's last one, "
                       "learnt when the partitions register at creation");
    set.topic = p->topic.full;
    set.log = &p->client->log;
    set.accepted = hand_over;
    return pc_spool_open(&set, &p->spool);
}

pulsarc_result pc_producer_spool_check(const pulsarc_producer_t *p, const pulsarc_message_t *msg)
{
    if (msg->schema)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT,
                       "a message with its own schema cannot be spooled (the spool keeps "
                       "the producer's schema only)");
    /* A replay would send them without these (the record keeps deliverAt, not a delay
     * relative to the send, nor the clusters): refused rather than changed on resend. */
    if (msg->deliver_after || msg->n_replicate_to)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT,
                       "a message with deliverAfter or replication clusters cannot be "
                       "spooled: use deliverAt (kept in the spool); replication is the "
                       "namespace's");
    if (pc_spool_policy(p->spool) == PC_SPOOL_FSYNC_ALWAYS && pc_client_on_loop(p->client))
        return pc_fail(PULSARC_ERR_WOULD_BLOCK,
                       "spoolFsync=always makes a send wait for the disk, which the loop "
                       "thread (a callback) must not: send from another thread, or use "
                       "spoolFsync=interval");
    return PULSARC_OK;
}

static void prop_at(const void *props, size_t i, const char **name, const char **value)
{
    const pc_property_t *table = props;
    *name = table[i].key;
    *value = table[i].value;
}

/* A send that was not accepted: nothing of it stays, and a borrowed payload goes back to
 * the builder (a send takes it over only when accepted). */
static void undo_send(pulsarc_producer_t *p, pc_send_t *s, pulsarc_message_t *msg)
{
    pc_admission_release(&p->client->admission, &p->permits, 1, s->reserved_bytes);
    if (s->msg.free_cb) {
        msg->payload = s->msg.payload;
        msg->payload_len = s->msg.payload_len;
        msg->free_cb = s->msg.free_cb;
        msg->free_ctx = s->msg.free_ctx;
        s->msg.free_cb = NULL;
    }
    pc_msg_free(&s->msg);
}

pulsarc_result pc_producer_spool_accept(pulsarc_producer_t *p, pc_send_t *s,
                                        pulsarc_message_t *msg)
{
    const pc_msg_t *m = &s->msg;
    /* Encrypted before it is stored: the spool never holds an encrypted producer's
     * payload in clear. */
    if (p->sealer) {
        pulsarc_result res = pc_producer_seal(p, s);
        if (res != PULSARC_OK) {
            char detail[512];
            snprintf(detail, sizeof detail, "%s", pulsarc_last_error_detail());
            undo_send(p, s, msg);
            return pc_fail(res, "%s", detail);
        }
    }
    const pc_sealed_t *sealed = m->sealed;
    pc_spool_msg_t sm = {
        .sequence_id = m->sequence_id,
        .partition = s->partition,
        .flags = (m->key_b64 ? PC_SPOOL_KEY_B64 : 0) | (m->null_key ? PC_SPOOL_NULL_KEY : 0) |
                 (m->null_value ? PC_SPOOL_NULL_VALUE : 0) | (sealed ? PC_SPOOL_SEALED : 0),
        .event_time = m->event_time,
        .deliver_at = m->deliver_at,
        .key = m->key,
        .ordering_key = m->ordering_key,
        .ordering_key_len = m->ordering_key_len,
        .n_props = m->n_props,
        .prop_at = prop_at,
        .props = m->props,
        .seal = sealed ? sealed->block : NULL,
        .seal_len = sealed ? sealed->block_len : 0,
        .payload = sealed ? sealed->cipher : m->payload,
        .payload_len = sealed ? sealed->cipher_len : m->payload_len,
    };
    pc_spool_ticket_t t = { .owner = s };
    bool wait = p->conf.block_if_queue_full && !pc_client_on_loop(p->client);
    pulsarc_result res = pc_spool_append(p->spool, &sm, &t, wait);
    if (res != PULSARC_OK)
        undo_send(p, s, msg);
    return res;
}

void pc_producer_spool_done(pc_send_t *s, pulsarc_result res)
{
    if (res != PULSARC_ERR_ALREADY_CLOSED)
        pc_spool_release(s->spooled, s->spooled_at);
    s->spooled = NULL;
}

/* ---- the replay ----------------------------------------------------------------------- */

/* A builder over a spooled record (its strings point into the record; props is the
 * caller's table, at least rec->n_props long). */
static void builder_of(const pc_spool_record_t *rec, pc_property_t *props, pulsarc_message_t *b)
{
    *b = (pulsarc_message_t){
        .payload = rec->payload,
        .payload_len = rec->payload_len,
        .key = (char *)rec->key,
        .ordering_key = (uint8_t *)rec->ordering_key,
        .ordering_key_len = rec->ordering_key_len,
        .props = props,
        .n_props = rec->n_props,
        .event_time = rec->event_time,
        .deliver_at = rec->deliver_at,
        .sequence_id = rec->sequence_id,
        .key_b64 = rec->flags & PC_SPOOL_KEY_B64,
        .null_key = rec->flags & PC_SPOOL_NULL_KEY,
        .null_value = rec->flags & PC_SPOOL_NULL_VALUE,
    };
    size_t pos = 0;
    for (size_t i = 0; i < rec->n_props; i++) {
        const char *k, *v;
        pc_spool_record_prop(rec, &pos, &k, &v); /* checked when the record was read */
        props[i].key = (char *)k;
        props[i].value = (char *)v;
    }
}

/* A sealed record's message goes as it was sealed: its seal, over the ciphertext s now
 * holds. False (logged) when the seal does not read. */
static bool unseal_record(pulsarc_producer_t *p, const pc_spool_record_t *rec, pc_send_t *s)
{
    if (!rec->seal)
        return true;
    pulsarc_result r = pc_sealed_decode(rec->seal, rec->seal_len, s->msg.payload,
                                        s->msg.payload_len, &s->msg.sealed);
    if (r == PULSARC_OK)
        return true;
    PC_ERROR(&p->client->log, "%s: a spooled message (sequence id %lld) cannot be sent: %s",
             p->topic.full, (long long)rec->sequence_id, pulsarc_last_error_detail());
    return false;
}

/* Admit and hand over one spooled message, as a send without a callback. */
static pulsarc_result resend(pulsarc_producer_t *p, pulsarc_message_t *b,
                             const pc_spool_record_t *rec, pc_spool_segment_t *seg,
                             uint64_t offset, bool may_wait)
{
    pulsarc_client_t *c = p->client;
    pc_send_plan_t plan = pc_send_plan(&p->rules, b->payload_len, pc_message_alone(b));
    /* Blocking, they wait for room like any send; on the loop thread they cannot, and go
     * in whatever the limits say (the spool's size bounds them). */
    int64_t max_pending = may_wait ? pc_admission_pending_limit(p->conf.max_pending_messages,
                                                                p->conf.max_pending_across_partitions, 1)
                                   : 0;
    size_t charge = may_wait ? pc_send_charge(plan.memory_charge) : 0;
    pulsarc_result res = pc_admit(&c->admission, &p->permits, max_pending, charge, may_wait);
    if (res != PULSARC_OK)
        return res;
    pc_send_t *s = plan.sender_crcs ? pc_send_from_builder_crcs(&c->send_pool, b, NULL)
                                    : pc_send_from_builder(&c->send_pool, b);
    if (!s) {
        pc_admission_release(&c->admission, &p->permits, 1, charge);
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    }
    if (!unseal_record(p, rec, s)) {
        /* Intact (its CRC held) but not a seal this producer can send: dropped. */
        pc_admission_release(&c->admission, &p->permits, 1, charge);
        pc_msg_free(&s->msg);
        pc_spool_release(seg, offset);
        return PULSARC_OK;
    }
    s->reserved_bytes = charge;
    s->producer = p;
    s->partition = rec->partition;
    s->spooled = seg;
    s->spooled_at = offset;
    s->task.run = pc_producer_run_send;
    pc_client_post_in_order(c, &s->task);
    return PULSARC_OK;
}

pulsarc_result pc_producer_spool_replay(pulsarc_producer_t *p, bool may_wait)
{
    pc_spool_record_t rec;
    pc_spool_segment_t *seg;
    uint64_t offset;
    pc_property_t *props = NULL;
    size_t cap = 0;
    pulsarc_result res = PULSARC_OK;
    while (pc_spool_replay_next(p->spool, &rec, &seg, &offset)) {
        if (rec.n_props > cap) {
            pc_property_t *grown = realloc(props, rec.n_props * sizeof *grown);
            if (!grown) {
                res = pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
                break;
            }
            props = grown;
            cap = rec.n_props;
        }
        pulsarc_message_t b;
        builder_of(&rec, props, &b);
        /* A topic deleted and made again with fewer partitions: nowhere to send it. */
        if (rec.partition >= pc_partitioned_routable(p->pt)) {
            PC_ERROR(&p->client->log,
                     "%s: a spooled message (sequence id %lld) was for partition %d, which "
                     "the topic no longer has: dropped", p->topic.full,
                     (long long)rec.sequence_id, (int)rec.partition);
            pc_spool_release(seg, offset);
            continue;
        }
        res = resend(p, &b, &rec, seg, offset, may_wait);
        if (res != PULSARC_OK)
            break;
    }
    free(props);
    /* What was not handed over (the client is closing) stays on disk. */
    pc_spool_replay_end(p->spool);
    uint64_t n = pc_spool_replayed(p->spool);
    if (n)
        PC_INFO(&p->client->log, "%s: resending %llu spooled message(s) before any new one",
                p->topic.full, (unsigned long long)n);
    int64_t last = atomic_load(&p->last_sequence_id);
    pc_spool_note_id(p->spool, last > p->conf.initial_sequence_id ? last
                                                                  : p->conf.initial_sequence_id);
    return res;
}
