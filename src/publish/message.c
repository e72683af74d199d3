/* The message builder's public calls (pulsarc_message_*). */
#include "publish/message.h"

#include <stdlib.h>
#include <string.h>

#include "config/properties.h"
#include "common/error.h"
#include "schema/schema.h"

pulsarc_message_t *pulsarc_message_new(void)
{
    pulsarc_message_t *m = calloc(1, sizeof *m);
    if (m)
        m->sequence_id = -1;
    return m;
}

static void release_payload(pulsarc_message_t *m)
{
    if (m->free_cb)
        m->free_cb((void *)m->payload, m->payload_len, m->free_ctx);
    free(m->owned_payload);
    m->owned_payload = NULL;
    m->null_value = false;
    m->payload = NULL;
    m->payload_len = 0;
    m->free_cb = NULL;
    m->free_ctx = NULL;
}

static void clear_replicate_to(pulsarc_message_t *m)
{
    for (size_t i = 0; i < m->n_replicate_to; i++)
        free(m->replicate_to[i]);
    free(m->replicate_to);
    m->replicate_to = NULL;
    m->n_replicate_to = 0;
}

void pulsarc_message_clear(pulsarc_message_t *m)
{
    if (!m)
        return;
    release_payload(m);
    free(m->key);
    free(m->ordering_key);
    pc_props_clear(&m->props, &m->n_props, &m->cap_props);
    clear_replicate_to(m);
    pc_schema_unref(m->schema);
    memset(m, 0, sizeof *m);
    m->sequence_id = -1;
}

void pulsarc_message_free(pulsarc_message_t *m)
{
    if (!m)
        return;
    pulsarc_message_clear(m);
    free(m);
}

pulsarc_result pulsarc_message_set_payload(pulsarc_message_t *m, const void *data, size_t len)
{
    if (!m || (!data && len))
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT, "message and data must not be NULL");
    release_payload(m);
    m->payload = data;
    m->payload_len = len;
    return PULSARC_OK;
}

pulsarc_result pulsarc_message_set_payload_borrowed(pulsarc_message_t *m, const void *data,
                                                    size_t len, pulsarc_payload_free_cb free_cb,
                                                    void *ctx)
{
    if (!m || (!data && len) || !free_cb)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT,
                       "message, data and free callback must not be NULL");
    release_payload(m);
    m->payload = data;
    m->payload_len = len;
    m->free_cb = free_cb;
    m->free_ctx = ctx;
    return PULSARC_OK;
}

/* Standard base64 with padding, as java.util.Base64.getEncoder() writes it. */
static char *base64(const uint8_t *p, size_t len)
{
    static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char *out = malloc((len + 2) / 3 * 4 + 1), *o = out;
    if (!out)
        return NULL;
    for (size_t i = 0; i < len; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16;
        if (i + 1 < len)
            v |= (uint32_t)p[i + 1] << 8;
        if (i + 2 < len)
            v |= p[i + 2];
        *o++ = abc[v >> 18 & 63];
        *o++ = abc[v >> 12 & 63];
        *o++ = i + 1 < len ? abc[v >> 6 & 63] : '=';
        *o++ = i + 2 < len ? abc[v & 63] : '=';
    }
    *o = 0;
    return out;
}

/* A tombstone: the payload goes, and a later payload makes the value non-null again (as
 * the C++ client's setNullValue and setContent). */
pulsarc_result pulsarc_message_set_null_value(pulsarc_message_t *m)
{
    if (!m)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT, "message must not be NULL");
    release_payload(m);
    m->null_value = true;
    return PULSARC_OK;
}

pulsarc_result pulsarc_message_set_key(pulsarc_message_t *m, const char *key)
{
    if (!m || !key)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT, "message and key must not be NULL");
    char *copy = strdup(key);
    if (!copy)
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    free(m->key);
    m->key = copy;
    m->key_b64 = false;
    m->null_key = false;
    return PULSARC_OK;
}

/* A binary key travels base64-encoded, flagged partition_key_b64_encoded, as the Java
 * client's keyBytes sends it; routing and Key_Shared use the encoded text, as in Java. */
pulsarc_result pulsarc_message_set_key_bytes(pulsarc_message_t *m, const void *key, size_t len)
{
    if (!m || (!key && len))
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT, "message and key must be given");
    char *b64 = base64(key, len);
    if (!b64)
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    free(m->key);
    m->key = b64;
    m->key_b64 = true;
    m->null_key = false;
    return PULSARC_OK;
}

pulsarc_result pulsarc_message_set_ordering_key(pulsarc_message_t *m, const void *key, size_t len)
{
    if (!m || !key || !len)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT, "message and ordering key must be given");
    uint8_t *copy = malloc(len);
    if (!copy)
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    memcpy(copy, key, len);
    free(m->ordering_key);
    m->ordering_key = copy;
    m->ordering_key_len = len;
    return PULSARC_OK;
}

pulsarc_result pulsarc_message_set_property(pulsarc_message_t *m, const char *name,
                                            const char *value)
{
    if (!m)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT, "message must not be NULL");
    return pc_props_set(&m->props, &m->n_props, &m->cap_props, name, value);
}

pulsarc_result pulsarc_message_set_event_time(pulsarc_message_t *m, uint64_t ms)
{
    if (!m)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT, "message must not be NULL");
    m->event_time = ms;
    return PULSARC_OK;
}

/* deliver_at_time is an int64 of milliseconds; a delay is added to the time of the send,
 * so it stays far below that (about 146 million years). */
#define DELIVER_MS_MAX ((uint64_t)INT64_MAX / 2)

pulsarc_result pulsarc_message_set_deliver_at(pulsarc_message_t *m, uint64_t ms)
{
    if (!m || ms > DELIVER_MS_MAX)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT,
                       "message must not be NULL, and the time at most 2^62 ms");
    m->deliver_at = ms;
    m->deliver_after = 0; /* the last of the two set wins, as in the Java client */
    return PULSARC_OK;
}

pulsarc_result pulsarc_message_set_deliver_after(pulsarc_message_t *m, uint64_t ms)
{
    if (!m || ms > DELIVER_MS_MAX)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT,
                       "message must not be NULL, and the delay at most 2^62 ms");
    m->deliver_after = ms;
    m->deliver_at = 0;
    return PULSARC_OK;
}

pulsarc_result pulsarc_message_set_replication_clusters(pulsarc_message_t *m,
                                                        const char *const *clusters, size_t n)
{
    if (!m || (n && !clusters))
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT, "message and clusters must be given");
    for (size_t i = 0; i < n; i++)
        if (!clusters[i] || !*clusters[i])
            return pc_fail(PULSARC_ERR_INVALID_ARGUMENT, "replication cluster %zu is NULL or empty",
                           i);
    char **copy = n ? calloc(n, sizeof *copy) : NULL;
    if (n && !copy)
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    for (size_t i = 0; i < n; i++) {
        if (!(copy[i] = strdup(clusters[i]))) {
            for (size_t k = 0; k < i; k++)
                free(copy[k]);
            free(copy);
            return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
        }
    }
    clear_replicate_to(m);
    m->replicate_to = copy;
    m->n_replicate_to = n;
    return PULSARC_OK;
}

/* The broker replicates a message to no other cluster when its only replication cluster
 * is this name (the Java client's disableReplication writes it). */
#define LOCAL_CLUSTER_ONLY "__local__"

pulsarc_result pulsarc_message_disable_replication(pulsarc_message_t *m, int disable)
{
    static const char *const local[] = { LOCAL_CLUSTER_ONLY };
    return pulsarc_message_set_replication_clusters(m, local, disable ? 1 : 0);
}

const char *pulsarc_message_key(const pulsarc_message_t *m)
{
    return m ? m->key : NULL;
}

const void *pulsarc_message_payload(const pulsarc_message_t *m, size_t *len)
{
    if (len)
        *len = m ? m->payload_len : 0;
    return m ? m->payload : NULL;
}

const char *pulsarc_message_property(const pulsarc_message_t *m, const char *name)
{
    return m ? pc_props_get(m->props, m->n_props, name) : NULL;
}

pulsarc_result pulsarc_message_set_sequence_id(pulsarc_message_t *m, int64_t id)
{
    if (!m || id < 0)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT, "sequence id must be >= 0");
    m->sequence_id = id;
    return PULSARC_OK;
}

pulsarc_result pulsarc_message_set_schema(pulsarc_message_t *m, const pulsarc_schema_t *schema)
{
    if (!m)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT, "message must not be NULL");
    if (schema && schema->type == PULSARC_SCHEMA_AUTO_PRODUCE)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT,
                       "a message's own schema cannot be AUTO_PRODUCE");
    pc_schema_t *ref = pc_schema_ref(schema);
    pc_schema_unref(m->schema);
    m->schema = ref;
    return PULSARC_OK;
}

pulsarc_result pulsarc_message_set_key_value(pulsarc_message_t *m, const pulsarc_schema_t *kv,
                                             const void *key, size_t key_len, const void *value,
                                             size_t value_len)
{
    if (!m || !kv || kv->type != PULSARC_SCHEMA_KEY_VALUE)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT,
                       "message and a KEY_VALUE schema must be given");
    if ((!key && key_len) || (!value && value_len))
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT, "a NULL part must have length 0");
    uint8_t *payload = NULL;
    size_t payload_len = 0;
    if (kv->kv_encoding == PULSARC_KV_INLINE) {
        pulsarc_result res = pc_schema_kv_inline(key, key_len, value, value_len, &payload,
                                                 &payload_len);
        if (res != PULSARC_OK)
            return res;
    } else if (value_len) {
        payload = malloc(value_len);
        if (!payload)
            return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
        memcpy(payload, value, value_len);
        payload_len = value_len;
    }
    char *b64 = NULL;
    if (kv->kv_encoding == PULSARC_KV_SEPARATED && key && !(b64 = base64(key, key_len))) {
        free(payload);
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    }
    release_payload(m);
    m->owned_payload = payload;
    m->payload = payload;
    m->payload_len = payload_len;
    if (kv->kv_encoding == PULSARC_KV_SEPARATED) {
        /* Java: the key travels base64-encoded in the partition key; nulls are flags. */
        free(m->key);
        m->key = b64;
        m->key_b64 = b64 != NULL;
        m->null_key = key == NULL;
        m->null_value = value == NULL;
    }
    return PULSARC_OK;
}
