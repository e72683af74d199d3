#include "producer/message_id.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "PulsarApi.pb-c.h"
#include "common/error.h"

int64_t pulsarc_message_id_ledger(const pulsarc_message_id_t *id)
{
    return id ? id->ledger : -1;
}
int64_t pulsarc_message_id_entry(const pulsarc_message_id_t *id)
{
    return id ? id->entry : -1;
}
int32_t pulsarc_message_id_partition(const pulsarc_message_id_t *id)
{
    return id ? id->partition : -1;
}
int32_t pulsarc_message_id_batch_index(const pulsarc_message_id_t *id)
{
    return id ? id->batch_index : -1;
}
int32_t pulsarc_message_id_batch_size(const pulsarc_message_id_t *id)
{
    return id ? id->batch_size : 0;
}

int pulsarc_message_id_first_chunk(const pulsarc_message_id_t *id, int64_t *ledger, int64_t *entry)
{
    if (!id || !id->chunked)
        return 0;
    if (ledger)
        *ledger = id->first_ledger;
    if (entry)
        *entry = id->first_entry;
    return 1;
}

size_t pulsarc_message_id_str(const pulsarc_message_id_t *id, char *buf, size_t len)
{
    if (!id)
        return 0;
    int n = snprintf(buf, buf ? len : 0, "%" PRId64 ":%" PRId64 ":%" PRId32 ":%" PRId32, id->ledger,
                     id->entry, id->partition, id->batch_index);
    return n < 0 ? 0 : (size_t)n;
}

/* The official clients serialise a message id as MessageIdData; a chunked id carries the
 * first chunk's position in first_chunk_message_id. */
pulsarc_result pulsarc_message_id_serialize(const pulsarc_message_id_t *id, uint8_t **out,
                                            size_t *len)
{
    if (!id || !out || !len)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT, "id, out and len must not be NULL");
    Pulsar__Proto__MessageIdData d = PULSAR__PROTO__MESSAGE_ID_DATA__INIT;
    Pulsar__Proto__MessageIdData first = PULSAR__PROTO__MESSAGE_ID_DATA__INIT;
    d.ledgerid = (uint64_t)id->ledger;
    d.entryid = (uint64_t)id->entry;
    if (id->partition >= 0) {
        d.has_partition = 1;
        d.partition = id->partition;
    }
    if (id->batch_index >= 0) {
        d.has_batch_index = 1;
        d.batch_index = id->batch_index;
        d.has_batch_size = 1;
        d.batch_size = id->batch_size;
    }
    if (id->chunked) {
        first.ledgerid = (uint64_t)id->first_ledger;
        first.entryid = (uint64_t)id->first_entry;
        if (id->partition >= 0) {
            first.has_partition = 1;
            first.partition = id->partition;
        }
        d.first_chunk_message_id = &first;
    }
    size_t n = pulsar__proto__message_id_data__get_packed_size(&d);
    uint8_t *b = malloc(n ? n : 1);
    if (!b)
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    pulsar__proto__message_id_data__pack(&d, b);
    *out = b;
    *len = n;
    return PULSARC_OK;
}

pulsarc_result pulsarc_message_id_deserialize(const uint8_t *data, size_t len,
                                              pulsarc_message_id_t **out)
{
    if (!data || !out)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT, "data and out must not be NULL");
    Pulsar__Proto__MessageIdData *d = pulsar__proto__message_id_data__unpack(NULL, len, data);
    if (!d)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT, "bytes are not a serialised message id");
    pulsarc_message_id_t *id = malloc(sizeof *id);
    if (!id) {
        pulsar__proto__message_id_data__free_unpacked(d, NULL);
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    }
    pc_message_id_init(id, (int64_t)d->ledgerid, (int64_t)d->entryid,
                       d->has_partition ? d->partition : -1);
    if (d->has_batch_index) {
        id->batch_index = d->batch_index;
        id->batch_size = d->has_batch_size ? d->batch_size : 0;
    }
    if (d->first_chunk_message_id) {
        id->chunked = true;
        id->first_ledger = (int64_t)d->first_chunk_message_id->ledgerid;
        id->first_entry = (int64_t)d->first_chunk_message_id->entryid;
    }
    pulsar__proto__message_id_data__free_unpacked(d, NULL);
    *out = id;
    return PULSARC_OK;
}

pulsarc_message_id_t *pulsarc_message_id_copy(const pulsarc_message_id_t *id)
{
    if (!id)
        return NULL;
    pulsarc_message_id_t *c = malloc(sizeof *c);
    if (c)
        *c = *id;
    return c;
}

void pulsarc_message_id_free(pulsarc_message_id_t *id)
{
    free(id);
}
