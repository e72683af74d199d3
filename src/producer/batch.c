#include "producer/batch.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wire/pb_encode.h"

int pc_batcher_init(pc_batcher_t *b, bool key_based, int max_messages, size_t max_bytes)
{
    memset(b, 0, sizeof *b);
    b->key_based = key_based;
    b->max_messages = max_messages > 0 ? max_messages : 1;
    b->max_bytes = max_bytes > 0 ? max_bytes : 1;
    b->frame_limit = SIZE_MAX;
    b->cap_batches = 4;
    b->batches = calloc((size_t)b->cap_batches, sizeof *b->batches);
    return b->batches ? 0 : -1;
}

void pc_batcher_free(pc_batcher_t *b)
{
    for (int i = 0; i < b->n_batches; i++)
        pc_batch_forget_order(&b->batches[i]);
    free(b->batches);
    b->batches = NULL;
}

void pc_batcher_set_frame_limit(pc_batcher_t *b, size_t max_message_size)
{
    b->frame_limit = max_message_size;
}

bool pc_batcher_empty(const pc_batcher_t *b)
{
    return b->total_messages == 0;
}

/* Protobuf field costs: a one-byte tag plus a varint, at most 5 bytes for a length and
 * 10 for a 64-bit value. */
#define LEN_FIELD 6
#define U64_FIELD 11

size_t pc_batch_entry_size(const pc_msg_t *m)
{
    size_t n = 4 + m->payload_len + U64_FIELD /* payload_size */ + U64_FIELD /* sequence_id */;
    if (m->key)
        n += LEN_FIELD + strlen(m->key);
    if (m->ordering_key)
        n += LEN_FIELD + m->ordering_key_len;
    if (m->event_time)
        n += U64_FIELD;
    n += 2 * ((int)m->key_b64 + (int)m->null_key + (int)m->null_value); /* flags */
    for (size_t i = 0; i < m->n_props; i++)
        n += 3 * LEN_FIELD + strlen(m->props[i].key) + strlen(m->props[i].value);
    return n;
}

/* The entry size send_now measured once (pc_msg_t.entry_size), or measured here. */
static size_t entry_of(const pc_msg_t *m)
{
    return m->entry_size ? m->entry_size : pc_batch_entry_size(m);
}

/* The batch's MessageMetadata repeats its first message's keys. */
static size_t head_keys_size(const pc_msg_t *m)
{
    return 2 * LEN_FIELD + (m->key ? strlen(m->key) : 0) + m->ordering_key_len;
}

static pc_batch_t *find_batch(const pc_batcher_t *b, const pc_msg_t *msg);

/* Encoded bytes msg adds to the container: its entry, plus the keys of a batch it opens. */
static size_t encoded_growth(const pc_batcher_t *b, const pc_msg_t *msg)
{
    size_t n = entry_of(msg);
    if (!find_batch(b, msg))
        n += head_keys_size(msg);
    return n;
}

bool pc_batcher_entry_fits(const pc_batcher_t *b, const pc_msg_t *msg)
{
    return entry_of(msg) + head_keys_size(msg) <= b->frame_limit;
}

/* The limits apply to everything the container holds, as in the official clients; the
 * encoded bound keeps every batch's frame within what the broker accepts. */
bool pc_batcher_fits(const pc_batcher_t *b, const pc_msg_t *msg)
{
    if (b->total_messages == 0)
        return true;
    return b->total_messages + 1 <= b->max_messages &&
           b->total_bytes + msg->payload_len <= b->max_bytes &&
           b->total_encoded + encoded_growth(b, msg) <= b->frame_limit;
}

bool pc_batcher_full(const pc_batcher_t *b)
{
    return b->total_messages >= b->max_messages || b->total_bytes >= b->max_bytes;
}

static void batch_key(const pc_msg_t *m, const uint8_t **key, size_t *len)
{
    if (m->ordering_key) {
        *key = m->ordering_key;
        *len = m->ordering_key_len;
    } else if (m->key) {
        *key = (const uint8_t *)m->key;
        *len = strlen(m->key);
    } else {
        *key = NULL;
        *len = 0;
    }
}

static pc_batch_t *find_batch(const pc_batcher_t *b, const pc_msg_t *msg)
{
    const uint8_t *key = NULL;
    size_t len = 0;
    if (b->key_based)
        batch_key(msg, &key, &len);
    for (int i = 0; i < b->n_batches; i++) {
        pc_batch_t *x = &b->batches[i];
        if (!b->key_based || (x->key_len == len && (len == 0 || !memcmp(x->key, key, len))))
            return x;
    }
    return NULL;
}

/* Addresses a batch's order holds at first; it doubles as the batch grows. */
#define ORDER_FIRST 64

void pc_batch_forget_order(pc_batch_t *batch)
{
    free(batch->order);
    batch->order = NULL;
    batch->order_cap = 0;
}

/* Note msg's address as the batch's next. Only a hint: out of memory, the batch goes
 * without its order. */
static void note_order(pc_batch_t *x, pc_msg_t *msg)
{
    if (x->count == x->order_cap) {
        pc_msg_t **grown = x->order_cap <= INT_MAX / 2
                               ? realloc(x->order, 2 * (size_t)x->order_cap * sizeof *grown)
                               : NULL;
        if (!grown) {
            pc_batch_forget_order(x);
            return;
        }
        x->order = grown;
        x->order_cap *= 2;
    }
    x->order[x->count] = msg;
}

static pc_batch_t *open_batch(pc_batcher_t *b, const pc_msg_t *msg)
{
    if (b->n_batches == b->cap_batches) {
        int cap = b->cap_batches * 2;
        pc_batch_t *a = realloc(b->batches, (size_t)cap * sizeof *a);
        if (!a)
            return NULL;
        b->batches = a;
        b->cap_batches = cap;
    }
    pc_batch_t *x = &b->batches[b->n_batches++];
    memset(x, 0, sizeof *x);
    if (b->key_based)
        batch_key(msg, &x->key, &x->key_len);
    x->opened = b->next_opened++;
    x->encoded = head_keys_size(msg);
    x->opened_taken = b->taken ? *b->taken : 0;
    if (b->keep_order && (x->order = malloc(ORDER_FIRST * sizeof *x->order)))
        x->order_cap = ORDER_FIRST;
    b->total_encoded += x->encoded;
    return x;
}

int pc_batcher_add(pc_batcher_t *b, pc_msg_t *msg)
{
    pc_batch_t *x = find_batch(b, msg);
    if (!x && !(x = open_batch(b, msg)))
        return -1;
    size_t entry = entry_of(msg);
    msg->next = NULL;
    if (x->tail)
        x->tail->next = msg;
    else
        x->head = msg;
    x->tail = msg;
    if (x->order)
        note_order(x, msg);
    x->count++;
    x->bytes += msg->payload_len;
    x->charged += msg->charged;
    x->encoded += entry;
    b->total_messages++;
    b->total_bytes += msg->payload_len;
    b->total_encoded += entry;
    return 0;
}

static int by_opening(const void *a, const void *b)
{
    uint64_t x = ((const pc_batch_t *)a)->opened;
    uint64_t y = ((const pc_batch_t *)b)->opened;
    return x < y ? -1 : x > y;
}

int pc_batcher_take(pc_batcher_t *b, pc_batch_t *out)
{
    int n = 0;
    for (int i = 0; i < b->n_batches; i++)
        if (b->batches[i].count > 0)
            out[n++] = b->batches[i];
    qsort(out, (size_t)n, sizeof *out, by_opening);
    b->n_batches = 0;
    b->total_messages = 0;
    b->total_bytes = 0;
    b->total_encoded = 0;
    return n;
}

int pc_batch_encode(const pc_batch_t *batch, const pc_records_t *ahead, pc_buf_t *out)
{
    /* One allocation for the whole payload: the batch's encoded size is a bound on what
     * each entry writes (pc_batch_entry_size), so the entries are written in place. */
    if (pc_buf_reserve(out, batch->encoded) != 0)
        return -1;
    pc_records_walk_t walk = pc_records_walk(ahead, ahead ? batch->order : NULL, batch->count);
    int i = 0;
    for (const pc_msg_t *m = batch->head; m; m = m->next, i++) {
        pc_records_walk_step(&walk, i);
        uint8_t *at = out->data + out->len;
        pc_pb_entry_t e = { .props = m->props,
                            .n_props = m->n_props,
                            .key = m->key,
                            .ordering_key = m->ordering_key,
                            .ordering_key_len = m->ordering_key_len,
                            .event_time = m->event_time,
                            .sequence_id = (uint64_t)m->sequence_id,
                            .payload_size = (int32_t)m->payload_len,
                            .key_b64 = m->key_b64,
                            .null_key = m->null_key,
                            .null_value = m->null_value };
        size_t size = pc_pb_entry_metadata_write(&e, at + 4);
        pc_write_u32be(at, (uint32_t)size);
        if (m->payload_len)
            memcpy(at + 4 + size, m->payload, m->payload_len);
        out->len += 4 + size + m->payload_len;
    }
    return 0;
}
