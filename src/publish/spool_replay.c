/* The spool's replay at creation: before anyone else has the handle, every message the
 * spool holds from before (a crash, say) is resent, oldest first, with its sequence id,
 * admitted like a blocking send; a sealed one goes as it was sealed. Then the spool's
 * automatic ids continue above the broker's last one. @locality the creating thread (the
 * async create: a thread of its own). */
#include <stdio.h>
#include <stdlib.h>

#include "common/error.h"
#include "producer/sealed.h"
#include "publish/admit.h"
#include "publish/producer.h"

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

/* Admit and hand over one spooled message, as a send without a callback: it waits for
 * room like a blocking send. */
static pulsarc_result resend(pulsarc_producer_t *p, pulsarc_message_t *b,
                             const pc_spool_record_t *rec, pc_spool_segment_t *seg, uint64_t offset)
{
    /* A sealed record is an entry of its own (encrypted apart). */
    pc_plan_t plan = pc_plan(&p->rules, b->payload_len, pc_message_alone(b) || rec->seal);
    int64_t max_pending = pc_admission_pending_limit(p->conf.max_pending_messages,
                                                     p->conf.max_pending_across_partitions, 1);
    pulsarc_result res;
    pc_send_t *s = pc_producer_admit(p, b, plan, max_pending, true, NULL, &res);
    if (!s)
        return res;
    if (!unseal_record(p, rec, s)) {
        /* Intact (its CRC held) but not a seal this producer can send: dropped. */
        pc_producer_unadmit(p, s, b);
        pc_spool_release(seg, offset);
        return PULSARC_OK;
    }
    s->partition = rec->partition;
    s->spooled = seg;
    s->spooled_at = offset;
    pc_client_post_in_order(p->client, &s->task);
    return PULSARC_OK;
}

pulsarc_result pc_producer_spool_replay(pulsarc_producer_t *p)
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
                     "the topic no longer has: dropped",
                     p->topic.full, (long long)rec.sequence_id, (int)rec.partition);
            pc_spool_release(seg, offset);
            continue;
        }
        res = resend(p, &b, &rec, seg, offset);
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
    pc_spool_note_id(p->spool,
                     last > p->conf.initial_sequence_id ? last : p->conf.initial_sequence_id);
    return res;
}
