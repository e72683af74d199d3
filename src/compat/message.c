/* pulsar_message_t: what the setters set, kept here for the getters and copies, and put
 * into a pulsarc message at each send. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "compat/compat.h"

pulsar_message_t *pulsar_message_create(void)
{
    pulsar_message_t *msg = calloc(1, sizeof *msg);
    if (!msg)
        return NULL;
    msg->sequence_id = -1;
    atomic_init(&msg->sent, 0);
    return msg;
}

static void clear_payload(pulsar_message_t *msg)
{
    if (!msg->borrowed)
        free(msg->data);
    msg->data = NULL;
    msg->len = 0;
    msg->borrowed = 0;
}

static void clear_clusters(pulsar_message_t *msg)
{
    for (size_t i = 0; i < msg->n_clusters; i++)
        free(msg->clusters[i]);
    free(msg->clusters);
    msg->clusters = NULL;
    msg->n_clusters = 0;
}

void pulsar_message_free(pulsar_message_t *message)
{
    if (!message)
        return;
    clear_payload(message);
    clear_clusters(message);
    free(message->key);
    free(message->ordering_key);
    free(message->schema_version);
    pulsar_string_map_free(message->properties);
    pulsarc_message_free(message->built);
    free(message);
}

void pulsar_message_copy(const pulsar_message_t *from, pulsar_message_t *to)
{
    if (!from || !to || from == to)
        return;
    pulsar_message_t *fresh = pulsar_message_create();
    if (!fresh)
        return;
    int ok = 1;
    fresh->borrowed = from->borrowed;
    fresh->len = from->len;
    if (from->borrowed) {
        fresh->data = from->data;
    } else if (from->data) {
        ok = (fresh->data = malloc(from->len ? from->len : 1)) != NULL;
        if (ok)
            memcpy(fresh->data, from->data, from->len);
    }
    ok = ok && pc_compat_set_str(&fresh->key, from->key) == 0 &&
         pc_compat_set_str(&fresh->ordering_key, from->ordering_key) == 0 &&
         pc_compat_set_str(&fresh->schema_version, from->schema_version) == 0;
    if (ok && from->properties)
        ok = (fresh->properties = pc_compat_map_copy(from->properties)) != NULL;
    if (ok && from->n_clusters) {
        ok = (fresh->clusters = calloc(from->n_clusters, sizeof *fresh->clusters)) != NULL;
        for (size_t i = 0; ok && i < from->n_clusters; i++, fresh->n_clusters++)
            ok = (fresh->clusters[i] = pc_compat_strdup(from->clusters[i])) != NULL;
    }
    if (!ok) {
        pulsar_message_free(fresh);
        return;
    }
    fresh->event_time = from->event_time;
    fresh->deliver_at = from->deliver_at;
    fresh->sequence_id = from->sequence_id;
    fresh->disable_replication = from->disable_replication;
    fresh->null_value = from->null_value;
    atomic_store(&fresh->sent, atomic_load(&from->sent));
    /* Swap the contents in: to keeps its address, its old contents go with fresh. */
    pulsar_message_t old = *to;
    *to = *fresh;
    *fresh = old;
    pulsar_message_free(fresh);
}

void pulsar_message_set_content(pulsar_message_t *message, const void *data, size_t size)
{
    if (!message)
        return;
    void *copy = malloc(size ? size : 1);
    if (!copy)
        return;
    if (size && data)
        memcpy(copy, data, size);
    clear_payload(message);
    message->data = copy;
    message->len = data ? size : 0;
    message->null_value = 0;
}

void pulsar_message_set_allocated_content(pulsar_message_t *message, void *data, size_t size)
{
    if (!message)
        return;
    clear_payload(message);
    message->data = data;
    message->len = data ? size : 0;
    message->borrowed = 1;
    message->null_value = 0;
}

void pulsar_message_set_property(pulsar_message_t *message, const char *name, const char *value)
{
    if (!message || !name || !value)
        return;
    if (!message->properties && !(message->properties = pulsar_string_map_create()))
        return;
    pulsar_string_map_put(message->properties, name, value);
}

void pulsar_message_set_partition_key(pulsar_message_t *message, const char *partitionKey)
{
    if (message)
        pc_compat_set_str(&message->key, partitionKey);
}

void pulsar_message_set_ordering_key(pulsar_message_t *message, const char *orderingKey)
{
    if (message)
        pc_compat_set_str(&message->ordering_key, orderingKey);
}

void pulsar_message_set_event_timestamp(pulsar_message_t *message, uint64_t eventTimestamp)
{
    if (message)
        message->event_time = eventTimestamp;
}

void pulsar_message_set_sequence_id(pulsar_message_t *message, int64_t sequenceId)
{
    if (message && sequenceId >= 0)
        message->sequence_id = sequenceId;
}

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

void pulsar_message_set_deliver_after(pulsar_message_t *message, uint64_t delayMillis)
{
    if (message)
        message->deliver_at = now_ms() + delayMillis;
}

void pulsar_message_set_deliver_at(pulsar_message_t *message, uint64_t deliveryTimestampMillis)
{
    if (message)
        message->deliver_at = deliveryTimestampMillis;
}

void pulsar_message_set_replication_clusters(pulsar_message_t *message, const char **clusters,
                                             size_t size)
{
    if (!message || (size && !clusters))
        return;
    char **list = size ? calloc(size, sizeof *list) : NULL;
    if (size && !list)
        return;
    for (size_t i = 0; i < size; i++) {
        if (!clusters[i] || !(list[i] = pc_compat_strdup(clusters[i]))) {
            while (i--)
                free(list[i]);
            free(list);
            return;
        }
    }
    clear_clusters(message);
    message->clusters = list;
    message->n_clusters = size;
    message->disable_replication = 0;
}

void pulsar_message_disable_replication(pulsar_message_t *message, int flag)
{
    if (!message)
        return;
    message->disable_replication = flag != 0;
    if (flag)
        clear_clusters(message);
}

void pulsar_message_set_null_value(pulsar_message_t *message)
{
    if (!message)
        return;
    clear_payload(message);
    message->null_value = 1;
}

pulsar_string_map_t *pulsar_message_get_properties(pulsar_message_t *message)
{
    if (message && message->properties)
        return pc_compat_map_copy(message->properties);
    return pulsar_string_map_create();
}

int pulsar_message_has_property(pulsar_message_t *message, const char *name)
{
    return message && pulsar_string_map_get(message->properties, name) != NULL;
}

const char *pulsar_message_get_property(pulsar_message_t *message, const char *name)
{
    const char *v = message ? pulsar_string_map_get(message->properties, name) : NULL;
    return v ? v : "";
}

const void *pulsar_message_get_data(pulsar_message_t *message)
{
    return message ? message->data : NULL;
}

uint32_t pulsar_message_get_length(pulsar_message_t *message)
{
    return message ? (uint32_t)message->len : 0;
}

pulsar_message_id_t *pulsar_message_get_message_id(pulsar_message_t *message)
{
    (void)message; /* only received messages have ids; this one was built to be sent */
    const pulsar_message_id_t *none = pulsar_message_id_earliest();
    return none ? pc_compat_message_id(none->id) : NULL;
}

const char *pulsar_message_get_partitionKey(pulsar_message_t *message)
{
    return message && message->key ? message->key : "";
}

int pulsar_message_has_partition_key(pulsar_message_t *message)
{
    return message && message->key != NULL;
}

const char *pulsar_message_get_orderingKey(pulsar_message_t *message)
{
    return message && message->ordering_key ? message->ordering_key : "";
}

int pulsar_message_has_ordering_key(pulsar_message_t *message)
{
    return message && message->ordering_key != NULL;
}

uint64_t pulsar_message_get_publish_timestamp(pulsar_message_t *message)
{
    (void)message;
    return 0;
}

uint64_t pulsar_message_get_event_timestamp(pulsar_message_t *message)
{
    return message ? message->event_time : 0;
}

const char *pulsar_message_get_topic_name(pulsar_message_t *message)
{
    (void)message;
    return "";
}

int pulsar_message_get_redelivery_count(pulsar_message_t *message)
{
    (void)message;
    return 0;
}

int pulsar_message_has_schema_version(pulsar_message_t *message)
{
    return message && message->schema_version != NULL;
}

const char *pulsar_message_get_schemaVersion(pulsar_message_t *message)
{
    return message && message->schema_version ? message->schema_version : "";
}

void pulsar_message_set_schema_version(pulsar_message_t *message, const char *schemaVersion)
{
    if (message)
        pc_compat_set_str(&message->schema_version, schemaVersion);
}

const char *pulsar_message_get_producer_name(pulsar_message_t *message)
{
    (void)message;
    return "";
}

const char *pulsar_message_get_replicated_from(pulsar_message_t *message)
{
    (void)message;
    return NULL;
}

int pulsar_message_has_null_value(pulsar_message_t *message)
{
    return message ? message->null_value : 0;
}

static void keep_borrowed(void *payload, size_t len, void *ctx)
{
    (void)payload, (void)len, (void)ctx; /* the caller's buffer: nothing to release */
}

pulsarc_result pc_compat_message_build(pulsar_message_t *msg)
{
    if (!msg->built && !(msg->built = pulsarc_message_new()))
        return PULSARC_ERR_NO_MEMORY;
    pulsarc_message_t *m = msg->built;
    pulsarc_message_clear(m);
    pulsarc_result res = PULSARC_OK;
    if (msg->null_value)
        res = pulsarc_message_set_null_value(m);
    else if (msg->borrowed)
        res = pulsarc_message_set_payload_borrowed(m, msg->data, msg->len, keep_borrowed, NULL);
    else
        res = pulsarc_message_set_payload(m, msg->data, msg->len);
    if (res == PULSARC_OK && msg->key)
        res = pulsarc_message_set_key(m, msg->key);
    if (res == PULSARC_OK && msg->ordering_key)
        res = pulsarc_message_set_ordering_key(m, msg->ordering_key, strlen(msg->ordering_key));
    for (size_t i = 0; res == PULSARC_OK && msg->properties && i < msg->properties->n; i++)
        res = pulsarc_message_set_property(m, msg->properties->keys[i], msg->properties->values[i]);
    if (res == PULSARC_OK && msg->event_time)
        res = pulsarc_message_set_event_time(m, msg->event_time);
    if (res == PULSARC_OK && msg->sequence_id >= 0)
        res = pulsarc_message_set_sequence_id(m, msg->sequence_id);
    if (res == PULSARC_OK && msg->deliver_at)
        res = pulsarc_message_set_deliver_at(m, msg->deliver_at);
    if (res == PULSARC_OK && msg->disable_replication)
        res = pulsarc_message_disable_replication(m, 1);
    else if (res == PULSARC_OK && msg->n_clusters)
        res = pulsarc_message_set_replication_clusters(m, (const char *const *)msg->clusters,
                                                       msg->n_clusters);
    return res;
}

static _Thread_local pulsar_message_t *sending;

pulsar_message_t *pc_compat_sending(void)
{
    return sending;
}

void pc_compat_set_sending(pulsar_message_t *msg)
{
    sending = msg;
}
