/* An accepted send laid out in one block (send.h). @locality any thread. */
#include "publish/send.h"

#include <stdlib.h>
#include <string.h>

#include "accept/block_pool.h"
#include "common/clock.h"
#include "common/zero_record.h"
#include "schema/schema.h"
#include "wire/crc32c_blocks.h"

_Static_assert(PC_SEND_RECORD_CHARGE >= PC_BLOCK_SMALL,
               "memoryLimitBytes counts at least a small pooled block per message");

static void free_send(pc_msg_t *m)
{
    pc_send_t *s = pc_send_of(m);
    if (s->block_class)
        pc_block_pool_put(s->block_class, s);
    else if (s->large_block)
        pc_block_pool_put_large(s->pool, s);
    else
        free(s);
}

/* The sizes of what a send of b holds beside itself. */
typedef struct layout {
    size_t strings;  /* properties' and clusters' strings, with their NULs */
    size_t key_len;  /* with its NUL; 0: no key */
    size_t copy_len; /* the payload, in copy mode */
    size_t n_crcs;   /* block CRCs kept with it */
    size_t size;     /* the whole block */
} layout;

static layout measure(const pulsarc_message_t *b, bool with_crcs)
{
    layout l = { 0 };
    for (size_t i = 0; i < b->n_props; i++)
        l.strings += strlen(b->props[i].key) + strlen(b->props[i].value) + 2;
    for (size_t i = 0; i < b->n_replicate_to; i++)
        l.strings += strlen(b->replicate_to[i]) + 1;
    l.key_len = b->key ? strlen(b->key) + 1 : 0;
    l.copy_len = b->free_cb ? 0 : b->payload_len;
    l.n_crcs = with_crcs ? pc_crc32c_block_count(b->payload_len) : 0;
    l.size = sizeof(pc_send_t) + b->n_props * sizeof(pc_property_t) +
             b->n_replicate_to * sizeof(char *) + l.n_crcs * sizeof(uint32_t) + l.strings +
             l.key_len + b->ordering_key_len + l.copy_len;
    return l;
}

/* Copy the properties, clusters, key and ordering key of b to p on; returns the end. */
static char *copy_strings(pc_msg_t *m, const pulsarc_message_t *b, pc_property_t *props,
                          const char **clusters, char *p, size_t key_len)
{
    for (size_t i = 0; i < b->n_props; i++) {
        size_t kl = strlen(b->props[i].key) + 1, vl = strlen(b->props[i].value) + 1;
        props[i].key = memcpy(p, b->props[i].key, kl);
        p += kl;
        props[i].value = memcpy(p, b->props[i].value, vl);
        p += vl;
    }
    m->props = props;
    m->n_props = b->n_props;
    for (size_t i = 0; i < b->n_replicate_to; i++) {
        size_t len = strlen(b->replicate_to[i]) + 1;
        clusters[i] = memcpy(p, b->replicate_to[i], len);
        p += len;
    }
    m->replicate_to = b->n_replicate_to ? clusters : NULL;
    m->n_replicate_to = b->n_replicate_to;
    if (b->key) {
        m->key = memcpy(p, b->key, key_len);
        p += key_len;
    }
    if (b->ordering_key) {
        m->ordering_key = memcpy(p, b->ordering_key, b->ordering_key_len);
        m->ordering_key_len = b->ordering_key_len;
        p += b->ordering_key_len;
    }
    return p;
}

/* The payload: taken over (borrow mode: the builder is left without it), or copied to p;
 * with its block CRCs in crcs when n_crcs. */
static void take_payload(pc_msg_t *m, pulsarc_message_t *b, char *p, const layout *l,
                         uint32_t *crcs, const uint32_t *known_crcs)
{
    m->payload_len = b->payload_len;
    if (b->free_cb) {
        m->payload = b->payload;
        m->free_cb = b->free_cb;
        m->free_ctx = b->free_ctx;
        b->payload = NULL;
        b->payload_len = 0;
        b->free_cb = NULL;
        b->free_ctx = NULL;
        if (l->n_crcs && known_crcs)
            memcpy(crcs, known_crcs, l->n_crcs * sizeof *crcs);
        else if (l->n_crcs)
            pc_crc32c_blocks(m->payload, m->payload_len, crcs);
    } else {
        if (l->n_crcs)
            pc_crc32c_copy_blocks(p, b->payload, l->copy_len, crcs);
        else if (l->copy_len)
            memcpy(p, b->payload, l->copy_len);
        m->payload = (const uint8_t *)p;
    }
    m->block_crcs = l->n_crcs ? crcs : NULL;
}

/* Lay out the send, property table, block CRCs (when with_crcs), strings and (copy mode)
 * payload in one block. */
static pc_send_t *send_from_builder(pc_block_pool_t *pool, pulsarc_message_t *b, bool with_crcs,
                                    const uint32_t *known_crcs)
{
    layout l = measure(b, with_crcs);
    bool large = pool && l.size >= PC_BLOCK_LARGE_MIN;
    /* The class pc_send_charge charged for (send.h); NULL: malloc'ed. */
    pc_block_class_t *k = !pool                                   ? NULL
                          : l.size <= PC_BLOCK_SMALL              ? &pool->classes[0]
                          : pc_send_in_larger_block(b, with_crcs) ? &pool->classes[1]
                                                                  : NULL;
    pc_send_t *s = large ? pc_block_pool_get_large(pool, l.size)
                         : pc_block_pool_get(pool, k, l.size);
    if (!s)
        return NULL;
    pc_zero_record(s, sizeof *s);
    s->pool = pool;
    s->large_block = large;
    s->block_class = large ? NULL : k;
    pc_msg_t *m = &s->msg;
    m->release = free_send;
    char *p = (char *)(s + 1);
    pc_property_t *props = (pc_property_t *)p;
    p += b->n_props * sizeof(pc_property_t);
    const char **clusters = (const char **)p;
    p += b->n_replicate_to * sizeof(char *);
    uint32_t *crcs = (uint32_t *)p; /* aligned: it follows the send and the pointer tables */
    p += l.n_crcs * sizeof(uint32_t);
    p = copy_strings(m, b, props, clusters, p, l.key_len);
    take_payload(m, b, p, &l, crcs, known_crcs);
    m->event_time = b->event_time;
    /* A delay counts from the send, as in the Go client (the Java and C++ builders add it
     * to the time deliverAfter is called, which a reused builder would make stale). */
    m->deliver_at = b->deliver_after ? pc_wall_ms() + b->deliver_after : b->deliver_at;
    m->sequence_id = b->sequence_id;
    m->key_b64 = b->key_b64;
    m->null_key = b->null_key;
    m->null_value = b->null_value;
    m->schema = pc_schema_ref(b->schema);
    return s;
}

pc_send_t *pc_send_from_builder(pc_block_pool_t *pool, pulsarc_message_t *b)
{
    return send_from_builder(pool, b, false, NULL);
}

pc_send_t *pc_send_from_builder_crcs(pc_block_pool_t *pool, pulsarc_message_t *b,
                                     const uint32_t *known_crcs)
{
    return send_from_builder(pool, b, true, known_crcs);
}
