/* A producer's interceptors: each hook run over the chain (config/interceptor_list.h), in
 * order. */
#include "publish/interceptors.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "publish/message.h"
#include "common/error.h"
#include "schema/schema.h"

/* ---- before_send ------------------------------------------------------------------- */

static void *dup_bytes(const void *p, size_t len)
{
    void *d = malloc(len ? len : 1);
    if (d && len)
        memcpy(d, p, len);
    return d;
}

/* A copy of msg that owns everything it points to, except a borrowed payload: that stays
 * the caller's, and the copy reads it in place (as a copy-mode payload, which the send
 * would copy) until pc_interceptors_borrow_begin. Every field of pulsarc_message_t comes
 * along: scalars with the struct, each owned pointer duplicated below. NULL when out of
 * memory. */
static pulsarc_message_t *copy_message(pulsarc_message_t *src)
{
    pulsarc_message_t *c = malloc(sizeof *c);
    if (!c)
        return NULL;
    *c = *src;
    c->free_cb = NULL;
    c->free_ctx = NULL;
    c->key = NULL;
    c->ordering_key = NULL;
    c->props = NULL;
    c->n_props = c->cap_props = 0;
    c->owned_payload = NULL;
    c->schema = pc_schema_ref(src->schema);
    c->copy_of = src;
    bool ok = true;
    if (src->key)
        ok = (c->key = strdup(src->key)) != NULL;
    if (ok && src->ordering_key)
        ok = (c->ordering_key = dup_bytes(src->ordering_key, src->ordering_key_len)) != NULL;
    if (ok && src->owned_payload) {
        /* pulsarc_message_set_key_value's layout, which the message owns. */
        ok = (c->owned_payload = dup_bytes(src->owned_payload, src->payload_len)) != NULL;
        c->payload = c->owned_payload;
    }
    if (ok && src->n_props) {
        ok = (c->props = calloc(src->n_props, sizeof *c->props)) != NULL;
        c->cap_props = ok ? src->n_props : 0;
        for (size_t i = 0; ok && i < src->n_props; i++) {
            c->props[i].key = strdup(src->props[i].key);
            c->props[i].value = strdup(src->props[i].value);
            c->n_props++;
            ok = c->props[i].key && c->props[i].value;
        }
    }
    if (!ok) {
        pulsarc_message_free(c);
        return NULL;
    }
    return c;
}

pulsarc_result pc_interceptors_before_send(const pc_interceptors_t *c, pulsarc_producer_t *producer,
                                           pulsarc_message_t *msg, pulsarc_message_t **out)
{
    pulsarc_message_t *copy = copy_message(msg);
    if (!copy)
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory copying the message for the "
                                              "interceptors");
    for (size_t i = 0; i < c->n; i++) {
        const pc_interceptor_t *ic = &c->list[i];
        if (!ic->ops.before_send)
            continue;
        pulsarc_result res = ic->ops.before_send(producer, copy, ic->ctx);
        if (res != PULSARC_OK) {
            pulsarc_message_free(copy);
            return pc_fail(res, "interceptor %zu of %zu rejected the message: %s", i + 1, c->n,
                           pulsarc_strerror(res));
        }
    }
    *out = copy;
    return PULSARC_OK;
}

bool pc_interceptors_borrow_begin(pulsarc_message_t *copy, pulsarc_message_t *caller)
{
    if (!caller->free_cb || copy->free_cb || copy->owned_payload ||
        copy->payload != caller->payload || copy->payload_len != caller->payload_len)
        return false;
    copy->free_cb = caller->free_cb;
    copy->free_ctx = caller->free_ctx;
    return true;
}

void pc_interceptors_borrow_end(pulsarc_message_t *copy, pulsarc_message_t *caller, bool sent)
{
    if (sent) {
        caller->payload = NULL;
        caller->payload_len = 0;
        caller->free_cb = NULL;
        caller->free_ctx = NULL;
        return;
    }
    copy->free_cb = NULL; /* the caller's still: freeing the copy must not release it */
    copy->free_ctx = NULL;
}

/* ---- after the hand-over ---------------------------------------------------------------- */

void pc_interceptors_on_ack(const pc_interceptors_t *c, pulsarc_producer_t *producer,
                            const pc_msg_t *m, pulsarc_result res, const pulsarc_message_id_t *id)
{
    /* What the accessors read of a message, pointing into the accepted one. */
    pulsarc_message_t view = {
        .payload = m->payload,
        .payload_len = m->payload_len,
        .key = (char *)m->key,
        .ordering_key = (uint8_t *)m->ordering_key,
        .ordering_key_len = m->ordering_key_len,
        .props = (pc_property_t *)m->props,
        .n_props = m->n_props,
        .event_time = m->event_time,
        .deliver_at = m->deliver_at,
        .sequence_id = m->sequence_id,
        .key_b64 = m->key_b64,
        .null_key = m->null_key,
        .null_value = m->null_value,
        .schema = m->schema,
    };
    /* An interceptor's own pulsarc calls may set the thread's detail: the send callback
     * after them must still read the failure's. */
    char detail[512] = "";
    if (res != PULSARC_OK)
        snprintf(detail, sizeof detail, "%s", pulsarc_last_error_detail());
    for (size_t i = 0; i < c->n; i++) {
        const pc_interceptor_t *ic = &c->list[i];
        if (!ic->ops.on_ack)
            continue;
        if (res != PULSARC_OK)
            pc_set_detail(detail);
        ic->ops.on_ack(producer, &view, res, id, ic->ctx);
    }
    if (res != PULSARC_OK)
        pc_set_detail(detail);
}

void pc_interceptors_partitions_change(const pc_interceptors_t *c, pulsarc_producer_t *producer,
                                       const char *topic, int partitions)
{
    for (size_t i = 0; i < c->n; i++) {
        const pc_interceptor_t *ic = &c->list[i];
        if (ic->ops.on_partitions_change)
            ic->ops.on_partitions_change(producer, topic, partitions, ic->ctx);
    }
}
