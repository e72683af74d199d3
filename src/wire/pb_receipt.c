#include "wire/pb_receipt.h"

/* Tags as they are written on the wire: field number << 3 | wire type. */
/* The helpers below are inlined whole wherever they are used (always_inline): GCC would
 * otherwise split off their longer paths as functions that take the decoder's values by
 * address, out of registers. */
#define TAG_VARINT(field) ((uint8_t)((field) << 3 | 0))
#define TAG_LEN(field) ((uint8_t)((field) << 3 | 2))

/* The varint at p (before end) of at most 10 bytes whose value fits 64 bits: returns the
 * byte after it, or NULL. Pointers are passed and returned by value so that the decoder's
 * position stays in a register. */
static inline __attribute__((always_inline)) const uint8_t *
varint_long(const uint8_t *p, const uint8_t *end, uint64_t *v)
{
    size_t avail = (size_t)(end - p);
    if (avail < 2)
        return NULL;
    /* Two and three bytes (sequence and entry ids up to 2^21) unrolled, the rest a loop. */
    uint64_t x = (p[0] & 0x7fu) | (uint64_t)(p[1] & 0x7fu) << 7;
    if (p[1] < 0x80) {
        *v = x;
        return p + 2;
    }
    if (avail < 3)
        return NULL;
    x |= (uint64_t)(p[2] & 0x7fu) << 14;
    if (p[2] < 0x80) {
        *v = x;
        return p + 3;
    }
    size_t n = avail < 10 ? avail : 10;
    for (size_t i = 3; i < n; i++) {
        uint64_t b = p[i];
        x |= (b & 0x7f) << (7 * i);
        if (b < 0x80) {
            if (i == 9 && b > 1) /* bits above the 64th */
                return NULL;
            *v = x;
            return p + i + 1;
        }
    }
    return NULL;
}

static inline __attribute__((always_inline)) const uint8_t *
get_varint(const uint8_t *p, const uint8_t *end, uint64_t *v)
{
    if (p < end && *p < 0x80) { /* one byte: most fields of a receipt */
        *v = *p;
        return p + 1;
    }
    return varint_long(p, end, v);
}

/* The varint field whose one-byte tag is tag, next at p (before end): the byte after it,
 * or NULL. */
static inline __attribute__((always_inline)) const uint8_t *
get_field(const uint8_t *p, const uint8_t *end, uint8_t tag, uint64_t *v)
{
    return p < end && *p == tag ? get_varint(p + 1, end, v) : NULL;
}

/* The length-delimited field whose one-byte tag is tag, next at p (before end): its first
 * byte, with *sub_end just past its last; or NULL. */
static inline __attribute__((always_inline)) const uint8_t *
get_sub(const uint8_t *p, const uint8_t *end, uint8_t tag, const uint8_t **sub_end)
{
    uint64_t len;
    p = get_field(p, end, tag, &len);
    if (!p || len > (uint64_t)(end - p))
        return NULL;
    *sub_end = p + len;
    return p;
}

/* The fields are read in the order protobuf encoders write them (field numbers
 * ascending), each at most once, as straight-line code: no loop over tags, no table of
 * fields seen. Whatever departs from that form is declined (see the header). */
bool pc_pb_decode_send_receipt(const uint8_t *data, size_t len,
                               Pulsar__Proto__CommandSendReceipt *r,
                               Pulsar__Proto__MessageIdData *id)
{
    const uint8_t *p = data, *end = data + len, *receipt_end, *id_end;
    /* The values go to locals first, which stay in registers, and to r and id at the end. */
    uint64_t type, producer_id, sequence_id, ledger = 0, entry = 0, highest = 0;
    bool has_id = false, has_highest = false;
    /* BaseCommand: type (1) = SEND_RECEIPT, then send_receipt (7) reaching to the end. */
    if (!(p = get_field(p, end, TAG_VARINT(1), &type)) ||
        type != PULSAR__PROTO__BASE_COMMAND__TYPE__SEND_RECEIPT ||
        !(p = get_sub(p, end, TAG_LEN(7), &receipt_end)) || receipt_end != end)
        return false;
    if (!(p = get_field(p, end, TAG_VARINT(1), &producer_id)) ||
        !(p = get_field(p, end, TAG_VARINT(2), &sequence_id)))
        return false;
    if (p < end && *p == TAG_LEN(3)) { /* message_id: ledgerId (1), entryId (2), nothing else */
        if (!(p = get_sub(p, end, TAG_LEN(3), &id_end)) ||
            !(p = get_field(p, id_end, TAG_VARINT(1), &ledger)) ||
            !(p = get_field(p, id_end, TAG_VARINT(2), &entry)) || p != id_end)
            return false;
        has_id = true;
    }
    if (p < end && *p == TAG_VARINT(4)) {
        if (!(p = get_field(p, end, TAG_VARINT(4), &highest)))
            return false;
        has_highest = true;
    }
    if (p != end)
        return false;
    /* Only the fields a plain receipt has: the rest keep their initial values (see the
     * header). */
    r->producer_id = producer_id;
    r->sequence_id = sequence_id;
    r->message_id = NULL;
    if (has_id) {
        id->ledgerid = ledger;
        id->entryid = entry;
        r->message_id = id;
    }
    r->has_highest_sequence_id = has_highest;
    r->highest_sequence_id = highest;
    return true;
}
