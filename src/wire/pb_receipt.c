#include "wire/pb_receipt.h"

enum { WT_VARINT = 0, WT_LEN = 2 };

typedef struct reader {
    const uint8_t *p, *end;
} reader;

/* A varint of at most 10 bytes whose value fits 64 bits; false otherwise. */
static bool get_varint(reader *r, uint64_t *v)
{
    if (r->p < r->end && *r->p < 0x80) { /* one byte: most fields of a receipt */
        *v = *r->p++;
        return true;
    }
    uint64_t x = 0;
    for (int shift = 0; shift < 70 && r->p < r->end; shift += 7) {
        uint8_t b = *r->p++;
        if (shift == 63 && b > 1)
            return false;
        x |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *v = x;
            return true;
        }
    }
    return false;
}

/* The next field's number and wire type. Tags above 15 fields are declined. */
static bool get_tag(reader *r, unsigned *field, unsigned *wire_type)
{
    if (r->p >= r->end || (*r->p & 0x80))
        return false;
    uint8_t t = *r->p++;
    *field = t >> 3;
    *wire_type = t & 7;
    return *field != 0;
}

/* A length-delimited field's bytes as a reader of their own. */
static bool get_sub(reader *r, reader *sub)
{
    uint64_t len;
    if (!get_varint(r, &len) || len > (uint64_t)(r->end - r->p))
        return false;
    sub->p = r->p;
    sub->end = r->p + len;
    r->p += len;
    return true;
}

static bool decode_message_id(reader *r, Pulsar__Proto__MessageIdData *id)
{
    pulsar__proto__message_id_data__init(id);
    unsigned seen = 0, field, wt;
    while (r->p < r->end) {
        if (!get_tag(r, &field, &wt) || wt != WT_VARINT || field > 2 || (seen & 1u << field))
            return false;
        seen |= 1u << field;
        if (!get_varint(r, field == 1 ? &id->ledgerid : &id->entryid))
            return false;
    }
    return seen == (1u << 1 | 1u << 2);
}

static bool decode_receipt(reader *r, Pulsar__Proto__CommandSendReceipt *rc,
                           Pulsar__Proto__MessageIdData *id)
{
    pulsar__proto__command_send_receipt__init(rc);
    unsigned seen = 0, field, wt;
    while (r->p < r->end) {
        if (!get_tag(r, &field, &wt) || field > 4 || (seen & 1u << field))
            return false;
        seen |= 1u << field;
        if (field == 3) {
            reader sub;
            if (wt != WT_LEN || !get_sub(r, &sub) || !decode_message_id(&sub, id))
                return false;
            rc->message_id = id;
            continue;
        }
        uint64_t v;
        if (wt != WT_VARINT || !get_varint(r, &v))
            return false;
        if (field == 1)
            rc->producer_id = v;
        else if (field == 2)
            rc->sequence_id = v;
        else {
            rc->has_highest_sequence_id = 1;
            rc->highest_sequence_id = v;
        }
    }
    return (seen & (1u << 1 | 1u << 2)) == (1u << 1 | 1u << 2);
}

bool pc_pb_decode_send_receipt(const uint8_t *data, size_t len,
                               Pulsar__Proto__CommandSendReceipt *r,
                               Pulsar__Proto__MessageIdData *id)
{
    reader in = { data, data + len };
    bool have_type = false, have_receipt = false;
    unsigned field, wt;
    while (in.p < in.end) {
        if (!get_tag(&in, &field, &wt))
            return false;
        if (field == 1 && wt == WT_VARINT && !have_type) {
            uint64_t type;
            if (!get_varint(&in, &type) || type != PULSAR__PROTO__BASE_COMMAND__TYPE__SEND_RECEIPT)
                return false;
            have_type = true;
        } else if (field == 7 && wt == WT_LEN && !have_receipt) {
            reader sub;
            if (!get_sub(&in, &sub) || !decode_receipt(&sub, r, id))
                return false;
            have_receipt = true;
        } else {
            return false;
        }
    }
    return have_type && have_receipt;
}
