/* pulsar_message_id_t: a pulsarc message id, printed and serialised as libpulsar does. */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compat/compat.h"

pulsar_message_id_t *pc_compat_message_id(const pulsarc_message_id_t *id)
{
    pulsar_message_id_t *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    if (!(m->id = pulsarc_message_id_copy(id))) {
        free(m);
        return NULL;
    }
    return m;
}

static pulsar_message_id_t earliest = { .is_static = 1 }, latest = { .is_static = 1 };
static pthread_once_t statics_once = PTHREAD_ONCE_INIT;

/* MessageIdData bytes: field 1 (ledgerId) and 2 (entryId) as varints of the 64-bit values. */
static size_t put_varint(uint8_t *p, uint64_t v)
{
    size_t n = 0;
    do {
        p[n] = (uint8_t)(v & 0x7f);
        v >>= 7;
        if (v)
            p[n] |= 0x80;
        n++;
    } while (v);
    return n;
}

static void make_static(pulsar_message_id_t *out, int64_t ledger, int64_t entry)
{
    uint8_t b[32];
    size_t n = 0;
    b[n++] = 0x08;
    n += put_varint(b + n, (uint64_t)ledger);
    b[n++] = 0x10;
    n += put_varint(b + n, (uint64_t)entry);
    pulsarc_message_id_deserialize(b, n, &out->id);
}

static void make_statics(void)
{
    make_static(&earliest, -1, -1);
    make_static(&latest, INT64_MAX, INT64_MAX);
}

const pulsar_message_id_t *pulsar_message_id_earliest(void)
{
    pthread_once(&statics_once, make_statics);
    return earliest.id ? &earliest : NULL;
}

const pulsar_message_id_t *pulsar_message_id_latest(void)
{
    pthread_once(&statics_once, make_statics);
    return latest.id ? &latest : NULL;
}

void *pulsar_message_id_serialize(pulsar_message_id_t *messageId, int *len)
{
    uint8_t *bytes = NULL;
    size_t n = 0;
    if (!messageId || !len || pulsarc_message_id_serialize(messageId->id, &bytes, &n) != PULSARC_OK)
        return NULL;
    /* The caller releases it with free(), as libpulsar's malloc'ed buffer. */
    void *copy = malloc(n ? n : 1);
    if (copy) {
        memcpy(copy, bytes, n);
        *len = (int)n;
    }
    pulsarc_free(bytes);
    return copy;
}

pulsar_message_id_t *pulsar_message_id_deserialize(const void *buffer, uint32_t len)
{
    pulsarc_message_id_t *id = NULL;
    if (!buffer || pulsarc_message_id_deserialize(buffer, len, &id) != PULSARC_OK)
        return NULL;
    pulsar_message_id_t *m = calloc(1, sizeof *m);
    if (!m) {
        pulsarc_message_id_free(id);
        return NULL;
    }
    m->id = id;
    return m;
}

char *pulsar_message_id_str(pulsar_message_id_t *messageId)
{
    if (!messageId)
        return NULL;
    const pulsarc_message_id_t *id = messageId->id;
    int32_t partition = pulsarc_message_id_partition(id);
    char first[96] = "";
    int64_t fl, fe;
    if (pulsarc_message_id_first_chunk(id, &fl, &fe))
        snprintf(first, sizeof first, "(%" PRId64 ",%" PRId64 ",%" PRId32 ",-1);", fl, fe,
                 partition);
    char buf[192];
    int n = snprintf(buf, sizeof buf, "%s(%" PRId64 ",%" PRId64 ",%" PRId32 ",%" PRId32 ")", first,
                     pulsarc_message_id_ledger(id), pulsarc_message_id_entry(id), partition,
                     pulsarc_message_id_batch_index(id));
    return n < 0 ? NULL : pc_compat_strdup(buf);
}

void pulsar_message_id_free(pulsar_message_id_t *messageId)
{
    if (!messageId || messageId->is_static)
        return;
    pulsarc_message_id_free(messageId->id);
    free(messageId);
}
