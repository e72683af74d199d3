/* Avro payload checks with avro-c, when the build found it (PULSARC_HAVE_AVRO); without
 * it AVRO definitions are only checked to be JSON and AVRO payloads are not checked. */
#include "schema/schema.h"

#include <stdlib.h>

#include "common/error.h"
#include "schema/avro_names.h"

#ifdef PULSARC_HAVE_AVRO
#include <avro.h>

/* avro-c parses the definition; the payload is walked here, against the parsed schema,
 * without decoding into values: avro-c's reader allocates what a length field claims
 * (and leaks it when the data then runs short), which a check of arbitrary bytes must
 * not do. */
struct pc_avro_check {
    avro_schema_t schema;
};

pulsarc_result pc_avro_check_new(const char *definition, size_t len, struct pc_avro_check **out)
{
    *out = NULL;
    char dup[128];
    if (pc_avro_declares_a_name_twice(definition, len, dup, sizeof dup))
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT,
                       "not an Avro schema: the named type \"%s\" is declared twice", dup);
    struct pc_avro_check *c = calloc(1, sizeof *c);
    if (!c)
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    if (avro_schema_from_json_length(definition, len, &c->schema) != 0) {
        free(c);
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT, "not an Avro schema: %s", avro_strerror());
    }
    *out = c;
    return PULSARC_OK;
}

void pc_avro_check_free(struct pc_avro_check *c)
{
    if (!c)
        return;
    avro_schema_decref(c->schema);
    free(c);
}

/* Data of a recursive schema (a named type that refers to itself: a linked list, a tree)
 * nests as deep as the data says; deeper than this many self-references it is refused
 * rather than recursed into, to bound the stack. Nesting without self-reference is
 * bounded by the definition itself (which avro-c parses to a bounded depth). */
#define MAX_RECURSION 512

typedef struct cursor {
    const uint8_t *p;
    size_t left;
    const char *why; /* set on the first failure */
} cursor;

static bool fail(cursor *c, const char *why)
{
    if (!c->why)
        c->why = why;
    return false;
}

/* A zigzag varint of at most max_bytes bytes (5 for int, 10 for long). */
static bool read_long(cursor *c, int max_bytes, int64_t *out)
{
    uint64_t v = 0;
    for (int i = 0; i < max_bytes; i++) {
        if (!c->left)
            return fail(c, "the data ends inside a number");
        uint8_t b = *c->p++;
        c->left--;
        v |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
            *out = (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
            return true;
        }
    }
    return fail(c, "a number is longer than its type allows");
}

static bool skip(cursor *c, uint64_t n, const char *why)
{
    if (n > c->left)
        return fail(c, why);
    c->p += n;
    c->left -= n;
    return true;
}

static bool walk(avro_schema_t s, cursor *c, int depth);

/* Arrays and maps: blocks of items until a zero count; a negative count is followed by
 * the block's size in bytes. */
static bool walk_blocks(avro_schema_t items, bool map, cursor *c, int depth)
{
    for (;;) {
        int64_t count, size;
        if (!read_long(c, 10, &count))
            return false;
        if (count == 0)
            return true;
        if (count < 0) {
            if (count == INT64_MIN || !read_long(c, 10, &size) || size < 0)
                return fail(c, "a bad block size");
            count = -count;
        }
        for (int64_t i = 0; i < count; i++) {
            size_t before = c->left;
            int64_t klen;
            if (map && (!read_long(c, 10, &klen) || klen < 0 ||
                        !skip(c, (uint64_t)klen, "a map key runs past the end")))
                return fail(c, "a bad map key");
            if (!walk(items, c, depth))
                return false;
            if (c->left == before)
                break; /* items of no width: the rest of the block reads nothing either */
        }
    }
}

static bool walk(avro_schema_t s, cursor *c, int depth)
{
    int64_t n;
    if (depth > MAX_RECURSION)
        return fail(c, "the data of a recursive type nests more than 512 levels deep");
    switch (avro_typeof(s)) {
    case AVRO_NULL:
        return true;
    case AVRO_BOOLEAN:
        if (!c->left || *c->p > 1)
            return fail(c, "a boolean is not 0 or 1");
        return skip(c, 1, "");
    case AVRO_INT32:
        return read_long(c, 5, &n) && (n == (int32_t)n || fail(c, "an int out of range"));
    case AVRO_INT64:
        return read_long(c, 10, &n);
    case AVRO_FLOAT:
        return skip(c, 4, "the data ends inside a float");
    case AVRO_DOUBLE:
        return skip(c, 8, "the data ends inside a double");
    case AVRO_STRING:
    case AVRO_BYTES:
        if (!read_long(c, 10, &n) || n < 0)
            return fail(c, "a bad string or bytes length");
        return skip(c, (uint64_t)n, "a string or bytes value runs past the end");
    case AVRO_FIXED:
        return skip(c, (uint64_t)avro_schema_fixed_size(s), "a fixed value runs past the end");
    case AVRO_ENUM:
        if (!read_long(c, 10, &n) || n < 0 || n >= avro_schema_enum_number_of_symbols(s))
            return fail(c, "an enum index out of range");
        return true;
    case AVRO_UNION:
        if (!read_long(c, 10, &n) || n < 0 || (uint64_t)n >= avro_schema_union_size(s))
            return fail(c, "a union branch out of range");
        return walk(avro_schema_union_branch(s, (int)n), c, depth);
    case AVRO_RECORD:
        for (size_t i = 0; i < avro_schema_record_size(s); i++)
            if (!walk(avro_schema_record_field_get_by_index(s, (int)i), c, depth))
                return false;
        return true;
    case AVRO_ARRAY:
        return walk_blocks(avro_schema_array_items(s), false, c, depth);
    case AVRO_MAP:
        return walk_blocks(avro_schema_map_values(s), true, c, depth);
    case AVRO_LINK:
        return walk(avro_schema_link_target(s), c, depth + 1);
    default:
        return fail(c, "a type this check does not know");
    }
}

pulsarc_result pc_avro_check_payload(const struct pc_avro_check *c, const void *payload, size_t len)
{
    cursor cur = { .p = payload, .left = len, .why = NULL };
    if (!walk(c->schema, &cur, 0))
        return pc_fail(PULSARC_ERR_INVALID_PAYLOAD,
                       "the payload does not decode against the Avro schema: %s", cur.why);
    if (cur.left)
        return pc_fail(PULSARC_ERR_INVALID_PAYLOAD, "%zu bytes are left over after the Avro datum",
                       cur.left);
    return PULSARC_OK;
}

#else

struct pc_avro_check;

pulsarc_result pc_avro_check_new(const char *definition, size_t len, struct pc_avro_check **out)
{
    *out = NULL;
    return PULSARC_OK;
}

void pc_avro_check_free(struct pc_avro_check *c)
{
}

pulsarc_result pc_avro_check_payload(const struct pc_avro_check *c, const void *payload, size_t len)
{
    return PULSARC_OK;
}

#endif
