/* The spool stage (spoolDir; the files are spool/'s): opened before the producer
 * registers, written by every send before it is accepted (after the seal stage, so an
 * encrypted producer's records hold ciphertext only), let go message by message as they
 * complete. The replay at creation is spool_replay.c's.
 *
 * Sequence ids: with a spool the id is part of what is written, so it is given at send,
 * by the spool (one counter per producer, across its partitions: each partition still
 * sees its ids increase), under the lock that also orders the append and the hand-over.
 * The loop thread then finds every message with an explicit id, in id order.
 * @locality any thread, as the functions say. */
#include <stdio.h>
#include <stdlib.h>

#include "publish/spool_stage.h"

#include "common/error.h"
#include "producer/sealed.h"
#include "publish/producer.h"

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

pulsarc_result pc_spool_stage_open(pulsarc_producer_t *p)
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

pulsarc_result pc_spool_stage_check(const pulsarc_producer_t *p, const pulsarc_message_t *msg)
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

pulsarc_result pc_spool_stage_append(pulsarc_producer_t *p, pc_send_t *s)
{
    const pc_msg_t *m = &s->msg;
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
    return pc_spool_append(p->spool, &sm, &t, wait);
}

void pc_spool_stage_release(pc_send_t *s, pulsarc_result res)
{
    if (res != PULSARC_ERR_ALREADY_CLOSED)
        pc_spool_release(s->spooled, s->spooled_at);
    s->spooled = NULL;
}
