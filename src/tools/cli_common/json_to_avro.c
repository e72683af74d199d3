/*
 * json_to_avro — see json_to_avro.h. The JSON is walked together with the Avro schema,
 * filling an avro-c generic value, which avro-c then writes in binary.
 */
#include "json_to_avro.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef PULSARC_TOOLS_HAVE_AVRO

#include <avro.h>
#include <jansson.h>

struct json_to_avro {
    avro_schema_t schema;
    avro_value_iface_t *iface;
    avro_value_t value; /* reset and refilled for each document */
};

/* Where in the document the conversion is, for error messages ("order.items[2].sku"). */
struct walk {
    char path[256];
    size_t path_len;
    char *err;
    size_t err_len;
};

static int walk_fail(struct walk *w, const char *fmt, ...)
{
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(w->err, w->err_len, "%s%s%s", w->path_len ? w->path : "", w->path_len ? ": " : "",
             what);
    return -1;
}

/* Appends ".name" or "[index]" to the path; returns the length to restore afterwards. */
static size_t path_push(struct walk *w, const char *name, size_t index)
{
    size_t saved = w->path_len;
    int n = name ? snprintf(w->path + saved, sizeof w->path - saved, "%s%s", saved ? "." : "", name)
                 : snprintf(w->path + saved, sizeof w->path - saved, "[%zu]", index);
    if (n > 0)
        w->path_len = saved + (size_t)n < sizeof w->path ? saved + (size_t)n : sizeof w->path - 1;
    return saved;
}

static void path_pop(struct walk *w, size_t saved)
{
    w->path_len = saved;
    w->path[saved] = '\0';
}

static avro_schema_t resolved(avro_schema_t schema)
{
    while (schema && avro_typeof(schema) == AVRO_LINK)
        schema = avro_schema_link_target(schema);
    return schema;
}

/* bytes and fixed in Avro's JSON encoding: one byte per code point 0-255 of the string
 * (jansson hands over valid UTF-8). Returns the byte count, or -1. */
static long latin1_bytes(const char *s, size_t len, uint8_t *out)
{
    size_t n = 0;
    for (size_t i = 0; i < len; n++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x80) {
            out[n] = c;
            i++;
        } else if ((c & 0xE0) == 0xC0 && i + 1 < len && c <= 0xC3) {
            out[n] = (uint8_t)(((c & 0x1F) << 6) | ((unsigned char)s[i + 1] & 0x3F));
            i += 2;
        } else {
            return -1;
        }
    }
    return (long)n;
}

/* Whether a bare JSON value can be a value of this (resolved) Avro type. */
static bool json_fits(const json_t *j, avro_schema_t schema)
{
    switch (avro_typeof(schema)) {
    case AVRO_NULL:
        return json_is_null(j);
    case AVRO_BOOLEAN:
        return json_is_boolean(j);
    case AVRO_INT32:
        return json_is_integer(j) && json_integer_value(j) >= INT32_MIN &&
               json_integer_value(j) <= INT32_MAX;
    case AVRO_INT64:
        return json_is_integer(j);
    case AVRO_FLOAT:
    case AVRO_DOUBLE:
        return json_is_number(j);
    case AVRO_STRING:
    case AVRO_BYTES:
        return json_is_string(j);
    case AVRO_ENUM:
        return json_is_string(j) && avro_schema_enum_get_by_name(schema, json_string_value(j)) >= 0;
    case AVRO_FIXED:
        return json_is_string(j);
    case AVRO_RECORD:
    case AVRO_MAP:
        return json_is_object(j);
    case AVRO_ARRAY:
        return json_is_array(j);
    default:
        return false;
    }
}

static int fill(struct walk *w, avro_value_t *dst, const json_t *j);

/* Whether tag names this branch: its type name ("string", "Item"), or for a named type
 * in a namespace its full name ("shop.Item"), as Avro's JSON encoding writes it. */
static bool names_branch(const char *tag, avro_schema_t branch)
{
    const char *name = avro_schema_type_name(branch);
    if (strcmp(tag, name) == 0)
        return true;
    const char *ns = avro_schema_namespace(branch);
    size_t ns_len = ns ? strlen(ns) : 0;
    return ns_len && strncmp(tag, ns, ns_len) == 0 && tag[ns_len] == '.' &&
           strcmp(tag + ns_len + 1, name) == 0;
}

/* A union: {"type-name": value} names the branch; a bare value takes the first branch
 * it fits. */
static int fill_union(struct walk *w, avro_value_t *dst, avro_schema_t schema, const json_t *j)
{
    size_t n = avro_schema_union_size(schema);
    const json_t *inner = j;
    int chosen = -1;
    if (json_is_object(j) && json_object_size(j) == 1) {
        const char *tag = json_object_iter_key(json_object_iter((json_t *)j));
        for (size_t i = 0; i < n && chosen < 0; i++) {
            avro_schema_t b = resolved(avro_schema_union_branch(schema, (int)i));
            if (names_branch(tag, b)) {
                chosen = (int)i;
                inner = json_object_get(j, tag);
            }
        }
    }
    for (size_t i = 0; i < n && chosen < 0; i++)
        if (json_fits(j, resolved(avro_schema_union_branch(schema, (int)i))))
            chosen = (int)i;
    if (chosen < 0)
        return walk_fail(w, "the value fits no branch of the union");
    avro_value_t branch;
    if (avro_value_set_branch(dst, chosen, &branch) != 0)
        return walk_fail(w, "%s", avro_strerror());
    return fill(w, &branch, inner);
}

/* Whether a record field left out of the JSON may be null: a union with a null branch.
 * Returns the branch index, or -1. */
static int null_branch(avro_schema_t schema)
{
    if (avro_typeof(schema) != AVRO_UNION)
        return -1;
    for (size_t i = 0; i < avro_schema_union_size(schema); i++)
        if (avro_typeof(avro_schema_union_branch(schema, (int)i)) == AVRO_NULL)
            return (int)i;
    return -1;
}

static int fill_record(struct walk *w, avro_value_t *dst, avro_schema_t schema, const json_t *j)
{
    size_t n = avro_schema_record_size(schema);
    size_t matched = 0;
    for (size_t i = 0; i < n; i++) {
        const char *name = avro_schema_record_field_name(schema, (int)i);
        avro_value_t field;
        if (avro_value_get_by_index(dst, i, &field, NULL) != 0)
            return walk_fail(w, "%s", avro_strerror());
        size_t saved = path_push(w, name, 0);
        const json_t *v = json_object_get(j, name);
        int rc;
        if (v) {
            matched++;
            rc = fill(w, &field, v);
        } else {
            /* Left out: null, when the field's type allows it. */
            int nb = null_branch(resolved(avro_schema_record_field_get_by_index(schema, (int)i)));
            avro_value_t branch;
            if (nb < 0)
                rc = walk_fail(w, "missing (and not nullable)");
            else if (avro_value_set_branch(&field, nb, &branch) != 0 ||
                     avro_value_set_null(&branch) != 0)
                rc = walk_fail(w, "%s", avro_strerror());
            else
                rc = 0;
        }
        path_pop(w, saved);
        if (rc != 0)
            return -1;
    }
    if (matched != json_object_size(j)) {
        const char *key;
        const json_t *v;
        json_object_foreach((json_t *)j, key, v)
        {
            if (avro_schema_record_field_get_index(schema, key) < 0)
                return walk_fail(w, "field \"%s\" is not in the schema", key);
        }
    }
    return 0;
}

static int fill_array(struct walk *w, avro_value_t *dst, const json_t *j)
{
    size_t i;
    const json_t *item;
    json_array_foreach(j, i, item)
    {
        avro_value_t child;
        if (avro_value_append(dst, &child, NULL) != 0)
            return walk_fail(w, "%s", avro_strerror());
        size_t saved = path_push(w, NULL, i);
        int rc = fill(w, &child, item);
        path_pop(w, saved);
        if (rc != 0)
            return -1;
    }
    return 0;
}

static int fill_map(struct walk *w, avro_value_t *dst, const json_t *j)
{
    const char *key;
    const json_t *item;
    json_object_foreach((json_t *)j, key, item)
    {
        avro_value_t child;
        if (avro_value_add(dst, key, &child, NULL, NULL) != 0)
            return walk_fail(w, "%s", avro_strerror());
        size_t saved = path_push(w, key, 0);
        int rc = fill(w, &child, item);
        path_pop(w, saved);
        if (rc != 0)
            return -1;
    }
    return 0;
}

static int fill_bytes(struct walk *w, avro_value_t *dst, avro_schema_t schema, const json_t *j)
{
    size_t len = json_string_length(j);
    uint8_t *buf = malloc(len ? len : 1);
    if (!buf)
        return walk_fail(w, "out of memory");
    long n = latin1_bytes(json_string_value(j), len, buf);
    int rc;
    if (n < 0)
        rc = walk_fail(w, "bytes must be a string of code points 0-255");
    else if (avro_typeof(schema) == AVRO_BYTES)
        rc = avro_value_set_bytes(dst, buf, (size_t)n);
    else if (n != avro_schema_fixed_size(schema))
        rc = walk_fail(w, "fixed needs %lld bytes, got %ld",
                       (long long)avro_schema_fixed_size(schema), n);
    else
        rc = avro_value_set_fixed(dst, buf, (size_t)n);
    free(buf);
    return rc;
}

static int fill(struct walk *w, avro_value_t *dst, const json_t *j)
{
    avro_schema_t schema = resolved(avro_value_get_schema(dst));
    avro_type_t type = avro_typeof(schema);
    if (type == AVRO_UNION)
        return fill_union(w, dst, schema, j);
    if (!json_fits(j, schema)) {
        if (type == AVRO_ENUM && json_is_string(j))
            return walk_fail(w, "\"%s\" is not a symbol of enum %s", json_string_value(j),
                             avro_schema_name(schema));
        return walk_fail(w, "expected %s", avro_schema_type_name(schema));
    }
    int rc;
    switch (type) {
    case AVRO_NULL:
        rc = avro_value_set_null(dst);
        break;
    case AVRO_BOOLEAN:
        rc = avro_value_set_boolean(dst, json_is_true(j));
        break;
    case AVRO_INT32:
        rc = avro_value_set_int(dst, (int32_t)json_integer_value(j));
        break;
    case AVRO_INT64:
        rc = avro_value_set_long(dst, (int64_t)json_integer_value(j));
        break;
    case AVRO_FLOAT:
        rc = avro_value_set_float(dst, (float)json_number_value(j));
        break;
    case AVRO_DOUBLE:
        rc = avro_value_set_double(dst, json_number_value(j));
        break;
    case AVRO_STRING:
        /* avro-c counts the terminating NUL in a string's size. */
        rc = avro_value_set_string_len(dst, json_string_value(j), json_string_length(j) + 1);
        break;
    case AVRO_BYTES:
    case AVRO_FIXED:
        return fill_bytes(w, dst, schema, j);
    case AVRO_ENUM:
        rc = avro_value_set_enum(dst, avro_schema_enum_get_by_name(schema, json_string_value(j)));
        break;
    case AVRO_RECORD:
        return fill_record(w, dst, schema, j);
    case AVRO_ARRAY:
        return fill_array(w, dst, j);
    case AVRO_MAP:
        return fill_map(w, dst, j);
    default:
        return walk_fail(w, "unsupported Avro type %s", avro_schema_type_name(schema));
    }
    return rc == 0 ? 0 : walk_fail(w, "%s", avro_strerror());
}

int json_to_avro_new(const char *definition, size_t len, struct json_to_avro **out, char *err,
                     size_t err_len)
{
    *out = NULL;
    struct json_to_avro *conv = calloc(1, sizeof *conv);
    if (!conv) {
        snprintf(err, err_len, "out of memory");
        return -1;
    }
    if (avro_schema_from_json_length(definition, len, &conv->schema) != 0) {
        snprintf(err, err_len, "not an Avro schema: %s", avro_strerror());
        free(conv);
        return -1;
    }
    conv->iface = avro_generic_class_from_schema(conv->schema);
    if (!conv->iface || avro_generic_value_new(conv->iface, &conv->value) != 0) {
        snprintf(err, err_len, "cannot use the Avro schema: %s", avro_strerror());
        if (conv->iface)
            avro_value_iface_decref(conv->iface);
        avro_schema_decref(conv->schema);
        free(conv);
        return -1;
    }
    *out = conv;
    return 0;
}

int json_to_avro_convert(struct json_to_avro *conv, const char *json, size_t len, char **out,
                         size_t *out_len, char *err, size_t err_len)
{
    json_error_t jerr;
    json_t *doc = json_loadb(json, len, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL,
                             &jerr);
    if (!doc) {
        snprintf(err, err_len, "not JSON: %s (column %d)", jerr.text, jerr.column);
        return -1;
    }
    struct walk w = { .err = err, .err_len = err_len };
    avro_value_reset(&conv->value);
    int rc = fill(&w, &conv->value, doc);
    json_decref(doc);
    if (rc != 0)
        return -1;

    size_t size = 0;
    if (avro_value_sizeof(&conv->value, &size) != 0) {
        snprintf(err, err_len, "cannot size the Avro value: %s", avro_strerror());
        return -1;
    }
    char *buf = malloc(size ? size : 1);
    avro_writer_t writer = buf ? avro_writer_memory(buf, (int64_t)size) : NULL;
    if (!writer || avro_value_write(writer, &conv->value) != 0) {
        snprintf(err, err_len, "cannot write the Avro value: %s",
                 writer ? avro_strerror() : "out of memory");
        if (writer)
            avro_writer_free(writer);
        free(buf);
        return -1;
    }
    avro_writer_free(writer);
    *out = buf;
    *out_len = size;
    return 0;
}

void json_to_avro_free(struct json_to_avro *conv)
{
    if (!conv)
        return;
    avro_value_decref(&conv->value);
    avro_value_iface_decref(conv->iface);
    avro_schema_decref(conv->schema);
    free(conv);
}

bool json_to_avro_available(void)
{
    return true;
}

#else /* built without avro-c */

int json_to_avro_new(const char *definition, size_t len, struct json_to_avro **out, char *err,
                     size_t err_len)
{
    (void)definition;
    (void)len;
    *out = NULL;
    snprintf(err, err_len,
             "this build cannot convert JSON to Avro (built without avro-c, libavro-dev); "
             "give Avro binary with -f instead");
    return -1;
}

int json_to_avro_convert(struct json_to_avro *conv, const char *json, size_t len, char **out,
                         size_t *out_len, char *err, size_t err_len)
{
    (void)conv;
    (void)json;
    (void)len;
    (void)out;
    (void)out_len;
    snprintf(err, err_len, "built without avro-c");
    return -1;
}

void json_to_avro_free(struct json_to_avro *conv)
{
    (void)conv;
}

bool json_to_avro_available(void)
{
    return false;
}

#endif
