/* Schema descriptions: constructors, properties, accessors, references, hashing. */
#include "schema/schema.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "common/error.h"

/* Type names as Java's SchemaType spells them, and the names Java's schemas carry. */
static const struct {
    pulsarc_schema_type type;
    const char *type_name;
    const char *default_name;
    size_t width;
} types[] = {
    { PULSARC_SCHEMA_AUTO_PRODUCE, "AUTO_PRODUCE", "", 0 },
    { PULSARC_SCHEMA_BYTES, "BYTES", "Bytes", 0 },
    { PULSARC_SCHEMA_STRING, "STRING", "String", 0 },
    { PULSARC_SCHEMA_JSON, "JSON", "", 0 },
    { PULSARC_SCHEMA_PROTOBUF, "PROTOBUF", "", 0 },
    { PULSARC_SCHEMA_AVRO, "AVRO", "", 0 },
    { PULSARC_SCHEMA_BOOLEAN, "BOOLEAN", "Boolean", 1 },
    { PULSARC_SCHEMA_INT8, "INT8", "INT8", 1 },
    { PULSARC_SCHEMA_INT16, "INT16", "INT16", 2 },
    { PULSARC_SCHEMA_INT32, "INT32", "INT32", 4 },
    { PULSARC_SCHEMA_INT64, "INT64", "INT64", 8 },
    { PULSARC_SCHEMA_FLOAT, "FLOAT", "Float", 4 },
    { PULSARC_SCHEMA_DOUBLE, "DOUBLE", "Double", 8 },
    { PULSARC_SCHEMA_DATE, "DATE", "Date", 8 },
    { PULSARC_SCHEMA_TIME, "TIME", "Time", 8 },
    { PULSARC_SCHEMA_TIMESTAMP, "TIMESTAMP", "Timestamp", 8 },
    { PULSARC_SCHEMA_KEY_VALUE, "KEY_VALUE", "KeyValue", 0 },
    { PULSARC_SCHEMA_INSTANT, "INSTANT", "Instant", 12 },
    { PULSARC_SCHEMA_LOCAL_DATE, "LOCAL_DATE", "LocalDate", 8 },
    { PULSARC_SCHEMA_LOCAL_TIME, "LOCAL_TIME", "LocalTime", 8 },
    { PULSARC_SCHEMA_LOCAL_DATE_TIME, "LOCAL_DATE_TIME", "LocalDateTime", 16 },
    { PULSARC_SCHEMA_PROTOBUF_NATIVE, "PROTOBUF_NATIVE", "", 0 },
};
#define NTYPES (sizeof types / sizeof types[0])

static int type_index(pulsarc_schema_type type)
{
    for (size_t i = 0; i < NTYPES; i++)
        if (types[i].type == type)
            return (int)i;
    return -1;
}

const char *pulsarc_schema_type_name(pulsarc_schema_type type)
{
    int i = type_index(type);
    return i < 0 ? "UNKNOWN" : types[i].type_name;
}

pulsarc_result pulsarc_schema_type_from_name(const char *name, pulsarc_schema_type *out)
{
    if (!name || !out)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT, "name and out must not be NULL");
    if (!strcasecmp(name, "NONE")) {
        *out = PULSARC_SCHEMA_BYTES;
        return PULSARC_OK;
    }
    for (size_t i = 0; i < NTYPES; i++) {
        if (!strcasecmp(name, types[i].type_name)) {
            *out = types[i].type;
            return PULSARC_OK;
        }
    }
    return pc_fail(PULSARC_ERR_INVALID_ARGUMENT, "unknown schema type \"%s\"", name);
}

const char *pc_schema_default_name(pulsarc_schema_type type)
{
    int i = type_index(type);
    return i < 0 ? "" : types[i].default_name;
}

size_t pc_schema_fixed_width(pulsarc_schema_type type)
{
    int i = type_index(type);
    return i < 0 ? 0 : types[i].width;
}

bool pc_schema_is_registered(const pc_schema_t *s)
{
    return s && s->type != PULSARC_SCHEMA_BYTES && s->type != PULSARC_SCHEMA_AUTO_PRODUCE;
}

/* ---- life cycle ---------------------------------------------------------------- */

pc_schema_t *pc_schema_alloc(pulsarc_schema_type type, const char *name, const void *data,
                             size_t len)
{
    pc_schema_t *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    atomic_init(&s->refs, 1);
    atomic_init(&s->frozen, false);
    s->type = type;
    s->name = strdup(name ? name : pc_schema_default_name(type));
    s->data = malloc(len + 1);
    if (!s->name || !s->data) {
        pc_schema_unref(s);
        return NULL;
    }
    if (len)
        memcpy(s->data, data, len);
    s->data[len] = 0;
    s->len = len;
    return s;
}

pc_schema_t *pc_schema_ref(const pc_schema_t *cs)
{
    pc_schema_t *s = (pc_schema_t *)cs;
    if (s) {
        atomic_store(&s->frozen, true);
        atomic_fetch_add(&s->refs, 1);
    }
    return s;
}

void pc_schema_unref(pc_schema_t *s)
{
    if (!s || atomic_fetch_sub(&s->refs, 1) != 1)
        return;
    free(s->name);
    free(s->data);
    for (size_t i = 0; i < s->n_props; i++) {
        free(s->props[i].key);
        free(s->props[i].value);
    }
    free(s->props);
    pc_schema_unref(s->kv_key);
    pc_schema_unref(s->kv_value);
    pc_avro_check_free(s->avro);
    free(s);
}

void pulsarc_schema_free(pulsarc_schema_t *schema)
{
    pc_schema_unref(schema);
}

int pc_schema_put_property(pc_schema_t *s, const char *key, const char *value)
{
    char *v = strdup(value);
    if (!v)
        return -1;
    for (size_t i = 0; i < s->n_props; i++) {
        if (!strcmp(s->props[i].key, key)) {
            free(s->props[i].value);
            s->props[i].value = v;
            return 0;
        }
    }
    if (s->n_props == s->cap_props) {
        size_t cap = s->cap_props ? s->cap_props * 2 : 4;
        pc_schema_prop_t *p = realloc(s->props, cap * sizeof *p);
        if (!p) {
            free(v);
            return -1;
        }
        s->props = p;
        s->cap_props = cap;
    }
    char *k = strdup(key);
    if (!k) {
        free(v);
        return -1;
    }
    s->props[s->n_props].key = k;
    s->props[s->n_props].value = v;
    s->n_props++;
    return 0;
}

/* ---- constructors ---------------------------------------------------------------- */

static bool is_struct_type(pulsarc_schema_type t)
{
    return t == PULSARC_SCHEMA_AVRO || t == PULSARC_SCHEMA_JSON;
}

/* An AVRO/JSON definition must be JSON and (with avro-c) an Avro schema. */
static pulsarc_result parse_definition(pc_schema_t *s)
{
    json_error_t err;
    json_t *j = json_loadb((const char *)s->data, s->len, 0, &err);
    if (!j)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT,
                       "the %s definition is not JSON: %s (line %d, column %d)",
                       pulsarc_schema_type_name(s->type), err.text, err.line, err.column);
    json_decref(j);
    return pc_avro_check_new((const char *)s->data, s->len, &s->avro);
}

pulsarc_result pulsarc_schema_new(pulsarc_schema_type type, const char *name, const void *data,
                                  size_t len, pulsarc_schema_t **out)
{
    if (!out || (!data && len))
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT, "out must not be NULL, nor data when len > 0");
    *out = NULL;
    if (type_index(type) < 0)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT, "unknown schema type %d", (int)type);
    if (type == PULSARC_SCHEMA_KEY_VALUE)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT,
                       "KEY_VALUE schemas are made with pulsarc_schema_new_key_value");
    if (is_struct_type(type) && len == 0)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT, "a %s schema needs a definition",
                       pulsarc_schema_type_name(type));
    pc_schema_t *s = pc_schema_alloc(type, name, data, len);
    if (!s)
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    if (is_struct_type(type)) {
        pulsarc_result res = parse_definition(s);
        if (res != PULSARC_OK) {
            pc_schema_unref(s);
            return res;
        }
    }
    *out = s;
    return PULSARC_OK;
}

/* AvroSchema / JSONSchema from a definition, with SchemaDefinition's default properties. */
static pulsarc_result new_struct(pulsarc_schema_type type, const char *definition,
                                 pulsarc_schema_t **out)
{
    if (!definition || !out)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT, "definition and out must not be NULL");
    pulsarc_result res = pulsarc_schema_new(type, "", definition, strlen(definition), out);
    if (res != PULSARC_OK)
        return res;
    if (pc_schema_put_property(*out, "__alwaysAllowNull", "true") != 0 ||
        pc_schema_put_property(*out, "__jsr310ConversionEnabled", "false") != 0) {
        pc_schema_unref(*out);
        *out = NULL;
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    }
    return PULSARC_OK;
}

pulsarc_result pulsarc_schema_new_avro(const char *definition, pulsarc_schema_t **out)
{
    return new_struct(PULSARC_SCHEMA_AVRO, definition, out);
}

pulsarc_result pulsarc_schema_new_json(const char *definition, pulsarc_schema_t **out)
{
    return new_struct(PULSARC_SCHEMA_JSON, definition, out);
}

pulsarc_result pulsarc_schema_new_primitive(pulsarc_schema_type type, pulsarc_schema_t **out)
{
    if (!out)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT, "out must not be NULL");
    *out = NULL;
    bool primitive = type == PULSARC_SCHEMA_AUTO_PRODUCE || type == PULSARC_SCHEMA_BYTES ||
                     type == PULSARC_SCHEMA_STRING || pc_schema_fixed_width(type) > 0;
    if (!primitive)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT, "%s is not a type without definition",
                       pulsarc_schema_type_name(type));
    return pulsarc_schema_new(type, NULL, NULL, 0, out);
}

pulsarc_result pulsarc_schema_set_property(pulsarc_schema_t *s, const char *key, const char *value)
{
    if (!s || !key || !value)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT, "schema, key and value must not be NULL");
    if (atomic_load(&s->frozen))
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT,
                       "the schema is in use by a configuration or message: it cannot change");
    if (pc_schema_put_property(s, key, value) != 0)
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    return PULSARC_OK;
}

/* ---- accessors ------------------------------------------------------------------ */

pulsarc_schema_type pulsarc_schema_get_type(const pulsarc_schema_t *s)
{
    return s ? s->type : PULSARC_SCHEMA_BYTES;
}

const char *pulsarc_schema_name(const pulsarc_schema_t *s)
{
    return s ? s->name : "";
}

const void *pulsarc_schema_data(const pulsarc_schema_t *s, size_t *len)
{
    if (len)
        *len = s ? s->len : 0;
    return s ? (const void *)s->data : "";
}

const char *pulsarc_schema_property(const pulsarc_schema_t *s, const char *key)
{
    if (!s || !key)
        return NULL;
    for (size_t i = 0; i < s->n_props; i++)
        if (!strcmp(s->props[i].key, key))
            return s->props[i].value;
    return NULL;
}

size_t pulsarc_schema_property_count(const pulsarc_schema_t *s)
{
    return s ? s->n_props : 0;
}

pulsarc_result pulsarc_schema_property_at(const pulsarc_schema_t *s, size_t index, const char **key,
                                          const char **value)
{
    if (!s || !key || !value || index >= s->n_props)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT, "no property %zu", index);
    *key = s->props[index].key;
    *value = s->props[index].value;
    return PULSARC_OK;
}

pulsarc_key_value_encoding pulsarc_schema_kv_encoding(const pulsarc_schema_t *s)
{
    return s ? s->kv_encoding : PULSARC_KV_INLINE;
}

const pulsarc_schema_t *pulsarc_schema_kv_key(const pulsarc_schema_t *s)
{
    return s ? s->kv_key : NULL;
}

const pulsarc_schema_t *pulsarc_schema_kv_value(const pulsarc_schema_t *s)
{
    return s ? s->kv_value : NULL;
}

int pulsarc_schema_avro_validation_available(void)
{
#ifdef PULSARC_HAVE_AVRO
    return 1;
#else
    return 0;
#endif
}

pulsarc_result pulsarc_schema_validate(const pulsarc_schema_t *s, const void *payload, size_t len)
{
    if (!s || (!payload && len))
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT, "schema must not be NULL, nor payload when "
                                                     "len > 0");
    return pc_schema_check(s, payload, len);
}

/* ---- equality and hashing -------------------------------------------------------- */

static const char *prop_of(const pc_schema_t *s, const char *key)
{
    return pulsarc_schema_property(s, key);
}

bool pc_schema_equal(const pc_schema_t *a, const pc_schema_t *b)
{
    if (a == b)
        return true;
    if (!a || !b || a->type != b->type || a->len != b->len || a->n_props != b->n_props ||
        strcmp(a->name, b->name) != 0 || memcmp(a->data, b->data, a->len) != 0)
        return false;
    for (size_t i = 0; i < a->n_props; i++) {
        const char *v = prop_of(b, a->props[i].key);
        if (!v || strcmp(v, a->props[i].value) != 0)
            return false;
    }
    return true;
}

static uint64_t fnv1a(uint64_t h, const void *p, size_t len)
{
    const uint8_t *b = p;
    for (size_t i = 0; i < len; i++) {
        h ^= b[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

uint64_t pc_schema_hash(const pc_schema_t *s)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    int32_t type = (int32_t)s->type;
    h = fnv1a(h, &type, sizeof type);
    h = fnv1a(h, s->name, strlen(s->name) + 1);
    h = fnv1a(h, s->data, s->len);
    /* Properties in any order: combine their own hashes commutatively. */
    uint64_t props = 0;
    for (size_t i = 0; i < s->n_props; i++) {
        uint64_t ph = fnv1a(0xcbf29ce484222325ULL, s->props[i].key, strlen(s->props[i].key) + 1);
        props += fnv1a(ph, s->props[i].value, strlen(s->props[i].value));
    }
    return fnv1a(h, &props, sizeof props);
}
