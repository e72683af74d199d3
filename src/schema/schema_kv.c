/* KeyValue schemas, as Java's KeyValueSchemaInfo builds and reads them, and the INLINE
 * payload layout of Java's KeyValue.encode. */
#include "schema/schema.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "common/buf.h"
#include "common/error.h"

/* Gson's HTML-safe string escaping (its default): quotes, backslash, control characters,
 * U+2028/U+2029 and < > & = '. */
static int gson_string(pc_buf_t *b, const char *s)
{
    if (pc_buf_append(b, "\"", 1) != 0)
        return -1;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        char esc[8];
        const char *out = NULL;
        switch (*p) {
        case '"':
            out = "\\\"";
            break;
        case '\\':
            out = "\\\\";
            break;
        case '\t':
            out = "\\t";
            break;
        case '\b':
            out = "\\b";
            break;
        case '\n':
            out = "\\n";
            break;
        case '\r':
            out = "\\r";
            break;
        case '\f':
            out = "\\f";
            break;
        case '<':
        case '>':
        case '&':
        case '=':
        case '\'':
            snprintf(esc, sizeof esc, "\\u%04x", *p);
            out = esc;
            break;
        default:
            if (*p < 0x20) {
                snprintf(esc, sizeof esc, "\\u%04x", *p);
                out = esc;
            } else if (p[0] == 0xe2 && p[1] == 0x80 && (p[2] == 0xa8 || p[2] == 0xa9)) {
                out = p[2] == 0xa8 ? "\\u2028" : "\\u2029";
                p += 2;
            }
        }
        int rc = out ? pc_buf_append(b, out, strlen(out)) : pc_buf_append(b, p, 1);
        if (rc != 0)
            return -1;
    }
    return pc_buf_append(b, "\"", 1);
}

static int cmp_props(const void *a, const void *b)
{
    return strcmp((*(const pc_schema_prop_t *const *)a)->key,
                  (*(const pc_schema_prop_t *const *)b)->key);
}

char *pc_schema_props_json(const pc_schema_t *s)
{
    const pc_schema_prop_t **sorted = malloc((s->n_props + 1) * sizeof *sorted);
    if (!sorted)
        return NULL;
    for (size_t i = 0; i < s->n_props; i++)
        sorted[i] = &s->props[i];
    qsort(sorted, s->n_props, sizeof *sorted, cmp_props);
    pc_buf_t b;
    pc_buf_init(&b);
    int rc = pc_buf_append(&b, "{", 1);
    for (size_t i = 0; rc == 0 && i < s->n_props; i++) {
        if (i)
            rc = pc_buf_append(&b, ",", 1);
        rc |= gson_string(&b, sorted[i]->key);
        rc |= pc_buf_append(&b, ":", 1);
        rc |= gson_string(&b, sorted[i]->value);
    }
    rc |= pc_buf_append(&b, "}", 2); /* with the terminating NUL */
    free(sorted);
    if (rc != 0) {
        pc_buf_free(&b);
        return NULL;
    }
    return (char *)pc_buf_detach(&b, NULL);
}

static int put_part_props(pc_schema_t *kv, const char *prefix, const pc_schema_t *part)
{
    char key[64];
    char *props = pc_schema_props_json(part);
    if (!props)
        return -1;
    int rc = 0;
    snprintf(key, sizeof key, "%s.schema.name", prefix);
    rc |= pc_schema_put_property(kv, key, part->name);
    snprintf(key, sizeof key, "%s.schema.type", prefix);
    rc |= pc_schema_put_property(kv, key, pulsarc_schema_type_name(part->type));
    snprintf(key, sizeof key, "%s.schema.properties", prefix);
    rc |= pc_schema_put_property(kv, key, props);
    free(props);
    return rc;
}

static bool kv_part_ok(const pc_schema_t *p)
{
    return p && p->type != PULSARC_SCHEMA_KEY_VALUE && p->type != PULSARC_SCHEMA_AUTO_PRODUCE;
}

pulsarc_result pulsarc_schema_new_key_value(const pulsarc_schema_t *key,
                                            const pulsarc_schema_t *value,
                                            pulsarc_key_value_encoding encoding,
                                            pulsarc_schema_t **out)
{
    if (!out)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT, "out must not be NULL");
    *out = NULL;
    if (!kv_part_ok(key) || !kv_part_ok(value))
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT,
                       "a KeyValue schema needs a key and a value schema, neither KEY_VALUE "
                       "nor AUTO_PRODUCE");
    if (encoding != PULSARC_KV_INLINE && encoding != PULSARC_KV_SEPARATED)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT, "unknown KeyValue encoding %d", (int)encoding);
    if (key->len > INT32_MAX || value->len > INT32_MAX - 8 - key->len)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT, "the schema definitions are too long");
    size_t len = 8 + key->len + value->len;
    pc_schema_t *kv = pc_schema_alloc(PULSARC_SCHEMA_KEY_VALUE, NULL, NULL, 0);
    uint8_t *data = kv ? malloc(len + 1) : NULL;
    if (!data) {
        pc_schema_unref(kv);
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    }
    pc_write_u32be(data, (uint32_t)key->len);
    memcpy(data + 4, key->data, key->len);
    pc_write_u32be(data + 4 + key->len, (uint32_t)value->len);
    memcpy(data + 8 + key->len, value->data, value->len);
    data[len] = 0;
    free(kv->data);
    kv->data = data;
    kv->len = len;
    kv->kv_encoding = encoding;
    kv->kv_key = pc_schema_ref(key);
    kv->kv_value = pc_schema_ref(value);
    if (put_part_props(kv, "key", key) != 0 || put_part_props(kv, "value", value) != 0 ||
        pc_schema_put_property(kv, "kv.encoding.type",
                               encoding == PULSARC_KV_INLINE ? "INLINE" : "SEPARATED") != 0) {
        pc_schema_unref(kv);
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    }
    *out = kv;
    return PULSARC_OK;
}

/* ---- reading a KeyValue schema from the registry -------------------------------- */

/* One part from its definition bytes and the parent's <prefix>.schema.* properties. */
static pulsarc_result split_part(const pc_schema_t *kv, const char *prefix, const uint8_t *data,
                                 size_t len, pc_schema_t **out)
{
    char key[64];
    snprintf(key, sizeof key, "%s.schema.type", prefix);
    const char *type_name = pulsarc_schema_property(kv, key);
    pulsarc_schema_type type = PULSARC_SCHEMA_BYTES;
    if (type_name && pulsarc_schema_type_from_name(type_name, &type) != PULSARC_OK)
        return pc_fail(PULSARC_ERR_PROTOCOL, "KeyValue schema: unknown %s type \"%.40s\"", prefix,
                       type_name);
    if (type == PULSARC_SCHEMA_KEY_VALUE || type == PULSARC_SCHEMA_AUTO_PRODUCE)
        return pc_fail(PULSARC_ERR_PROTOCOL, "KeyValue schema: %s type %s is not allowed", prefix,
                       pulsarc_schema_type_name(type));
    snprintf(key, sizeof key, "%s.schema.name", prefix);
    const char *name = pulsarc_schema_property(kv, key);
    pc_schema_t *part = pc_schema_alloc(type, name ? name : "", data, len);
    if (!part)
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    snprintf(key, sizeof key, "%s.schema.properties", prefix);
    const char *props = pulsarc_schema_property(kv, key);
    if (props && *props) {
        json_t *obj = json_loads(props, 0, NULL);
        const char *k;
        json_t *v;
        bool ok = json_is_object(obj);
        if (ok) {
            json_object_foreach(obj, k, v)
            {
                if (!json_is_string(v) ||
                    pc_schema_put_property(part, k, json_string_value(v)) != 0) {
                    ok = false;
                    break;
                }
            }
        }
        json_decref(obj);
        if (!ok) {
            pc_schema_unref(part);
            return pc_fail(PULSARC_ERR_PROTOCOL,
                           "KeyValue schema: %s.schema.properties is not a map of strings", prefix);
        }
    }
    /* A definition avro-c cannot read leaves that part unchecked, as without avro-c. */
    if ((type == PULSARC_SCHEMA_AVRO || type == PULSARC_SCHEMA_JSON) &&
        pc_avro_check_new((const char *)part->data, part->len, &part->avro) != PULSARC_OK)
        part->avro = NULL;
    *out = part;
    return PULSARC_OK;
}

/* A length field: -1 (Java's null) reads as empty. */
static bool read_len(const uint8_t *p, size_t avail, size_t *len)
{
    uint32_t raw = pc_read_u32be(p);
    if (raw == UINT32_MAX) {
        *len = 0;
        return true;
    }
    if (raw > INT32_MAX || raw > avail)
        return false;
    *len = raw;
    return true;
}

pulsarc_result pc_schema_kv_split(pc_schema_t *kv)
{
    const uint8_t *p = kv->data;
    size_t n = kv->len, klen, vlen;
    if (n < 8 || !read_len(p, n - 8, &klen) || !read_len(p + 4 + klen, n - 8 - klen, &vlen) ||
        8 + klen + vlen != n)
        return pc_fail(PULSARC_ERR_PROTOCOL,
                       "KeyValue schema: schema_data is not [len][key][len][value]");
    const char *enc = pulsarc_schema_property(kv, "kv.encoding.type");
    if (!enc || !*enc || !strcmp(enc, "INLINE"))
        kv->kv_encoding = PULSARC_KV_INLINE;
    else if (!strcmp(enc, "SEPARATED"))
        kv->kv_encoding = PULSARC_KV_SEPARATED;
    else
        return pc_fail(PULSARC_ERR_PROTOCOL, "KeyValue schema: unknown kv.encoding.type \"%.40s\"",
                       enc);
    pc_schema_t *k = NULL, *v = NULL;
    pulsarc_result res = split_part(kv, "key", p + 4, klen, &k);
    if (res == PULSARC_OK)
        res = split_part(kv, "value", p + 8 + klen, vlen, &v);
    if (res != PULSARC_OK) {
        pc_schema_unref(k);
        return res;
    }
    kv->kv_key = k;
    kv->kv_value = v;
    return PULSARC_OK;
}

pulsarc_result pc_schema_kv_inline(const void *key, size_t key_len, const void *value,
                                   size_t value_len, uint8_t **out, size_t *out_len)
{
    if (key_len > INT32_MAX || value_len > INT32_MAX - 8 - key_len)
        return pc_fail(PULSARC_ERR_MESSAGE_TOO_BIG, "key and value are too long");
    size_t n = 8 + key_len + value_len;
    uint8_t *b = malloc(n);
    if (!b)
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    pc_write_u32be(b, key ? (uint32_t)key_len : UINT32_MAX);
    if (key_len)
        memcpy(b + 4, key, key_len);
    pc_write_u32be(b + 4 + key_len, value ? (uint32_t)value_len : UINT32_MAX);
    if (value_len)
        memcpy(b + 8 + key_len, value, value_len);
    *out = b;
    *out_len = n;
    return PULSARC_OK;
}
