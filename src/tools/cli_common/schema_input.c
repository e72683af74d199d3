/*
 * schema_input — see schema_input.h.
 */
#include "schema_input.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "json_to_avro.h"

struct schema_input {
    pulsarc_schema_t *schema;        /* what the producer registers */
    const pulsarc_schema_t *value;   /* the value part (schema itself unless KeyValue) */
    const pulsarc_schema_t *key;     /* the key part of a KeyValue schema, else NULL */
    struct json_to_avro *value_avro; /* JSON -> Avro for an AVRO part, when available */
    struct json_to_avro *key_avro;
};

/* "TYPE" or "TYPE:DEFINITION" (pulsar-client's -vs/-ks): the type is copied into
 * type_buf, the definition points into arg. */
static void split_type_definition(const char *arg, char *type_buf, size_t size, const char **type,
                                  const char **definition)
{
    const char *colon = strchr(arg, ':');
    if (!colon) {
        *type = arg;
        return;
    }
    size_t n = (size_t)(colon - arg) < size - 1 ? (size_t)(colon - arg) : size - 1;
    memcpy(type_buf, arg, n);
    type_buf[n] = '\0';
    *type = type_buf;
    *definition = colon + 1;
}

bool schema_flags_set(struct schema_flags *flags, const char *name, const char *arg)
{
    static char value_type[32], key_type[32]; /* one command line per process */
    if (strcmp(name, SCHEMA_FLAG_TYPE) == 0)
        flags->type = arg;
    else if (strcmp(name, SCHEMA_FLAG_FILE) == 0)
        flags->file = arg;
    else if (strcmp(name, SCHEMA_FLAG_NAME) == 0)
        flags->name = arg;
    else if (strcmp(name, SCHEMA_FLAG_KV_ENCODING) == 0 ||
             strcmp(name, SCHEMA_FLAG_KV_ENCODING_TYPE) == 0)
        flags->kv_encoding = arg;
    else if (strcmp(name, SCHEMA_FLAG_KEY_TYPE) == 0)
        flags->key_type = arg;
    else if (strcmp(name, SCHEMA_FLAG_KEY_FILE) == 0)
        flags->key_file = arg;
    else if (strcmp(name, SCHEMA_FLAG_VALUE_SCHEMA) == 0)
        split_type_definition(arg, value_type, sizeof value_type, &flags->type, &flags->definition);
    else if (strcmp(name, SCHEMA_FLAG_KEY_SCHEMA) == 0)
        split_type_definition(arg, key_type, sizeof key_type, &flags->key_type,
                              &flags->key_definition);
    else
        return false;
    return true;
}

static char *read_file(const char *path, size_t *len, char *err, size_t err_len)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, err_len, "cannot open '%s': %s", path, strerror(errno));
        return NULL;
    }
    char *data = NULL;
    size_t cap = 0, n = 0;
    for (;;) {
        if (n + 1 >= cap) {
            cap = cap ? cap * 2 : 4096;
            char *grown = realloc(data, cap);
            if (!grown) {
                free(data);
                fclose(f);
                snprintf(err, err_len, "out of memory reading '%s'", path);
                return NULL;
            }
            data = grown;
        }
        size_t got = fread(data + n, 1, cap - n - 1, f);
        n += got;
        if (got == 0)
            break;
    }
    bool failed = ferror(f);
    fclose(f);
    if (failed) {
        free(data);
        snprintf(err, err_len, "cannot read '%s'", path);
        return NULL;
    }
    data[n] = '\0';
    *len = n;
    return data;
}

static int library_error(const char *what, pulsarc_result res, char *err, size_t err_len)
{
    const char *detail = pulsarc_last_error_detail();
    snprintf(err, err_len, "%s: %s%s%s", what, pulsarc_strerror(res), detail[0] ? ": " : "",
             detail);
    return -1;
}

/* The same schema under another name, with the same definition and properties. */
static int rename_schema(pulsarc_schema_t **schema, const char *name, char *err, size_t err_len)
{
    size_t len;
    const void *data = pulsarc_schema_data(*schema, &len);
    pulsarc_schema_t *renamed = NULL;
    pulsarc_result res = pulsarc_schema_new(pulsarc_schema_get_type(*schema), name, data, len,
                                            &renamed);
    for (size_t i = 0; res == PULSARC_OK && i < pulsarc_schema_property_count(*schema); i++) {
        const char *k, *v;
        res = pulsarc_schema_property_at(*schema, i, &k, &v);
        if (res == PULSARC_OK)
            res = pulsarc_schema_set_property(renamed, k, v);
    }
    if (res != PULSARC_OK) {
        int rc = library_error("--schema-name", res, err, err_len);
        pulsarc_schema_free(renamed); /* NULL when pulsarc_schema_new failed */
        return rc;
    }
    pulsarc_schema_free(*schema);
    *schema = renamed;
    return 0;
}

/* One schema (the value, or a KeyValue's key) from its type name and its definition
 * (text, or a file). */
static int build_part(const char *what, const char *type_name, const char *definition,
                      const char *file, const char *name, pulsarc_schema_t **out, char *err,
                      size_t err_len)
{
    *out = NULL;
    pulsarc_schema_type type;
    if (pulsarc_schema_type_from_name(type_name, &type) != PULSARC_OK ||
        type == PULSARC_SCHEMA_KEY_VALUE) {
        snprintf(err, err_len,
                 "%s: unknown schema type '%s' (bytes, string, json, avro, protobuf, "
                 "protobuf_native, boolean, int8, int16, int32, int64, float, double, date, "
                 "time, timestamp, instant, local_date, local_time, local_date_time, "
                 "auto_produce; KeyValue: --kv-encoding)",
                 what, type_name);
        return -1;
    }
    char *from_file = NULL;
    size_t len = definition ? strlen(definition) : 0;
    if (file) {
        from_file = read_file(file, &len, err, err_len);
        if (!from_file)
            return -1;
        definition = from_file;
    }
    bool wants_definition = type == PULSARC_SCHEMA_JSON || type == PULSARC_SCHEMA_AVRO ||
                            type == PULSARC_SCHEMA_PROTOBUF ||
                            type == PULSARC_SCHEMA_PROTOBUF_NATIVE;
    pulsarc_result res;
    if (wants_definition && !definition) {
        snprintf(err, err_len, "%s %s needs a definition (a schema file)", what, type_name);
        return -1;
    }
    if (!wants_definition && definition) {
        free(from_file);
        snprintf(err, err_len, "%s %s takes no definition", what, type_name);
        return -1;
    }
    /* Only a schema made by pulsarc_schema_new gets its name at once. */
    bool named = definition && type != PULSARC_SCHEMA_JSON && type != PULSARC_SCHEMA_AVRO;
    if (type == PULSARC_SCHEMA_JSON)
        res = pulsarc_schema_new_json(definition, out);
    else if (type == PULSARC_SCHEMA_AVRO)
        res = pulsarc_schema_new_avro(definition, out);
    else if (definition)
        res = pulsarc_schema_new(type, name, definition, len, out);
    else
        res = pulsarc_schema_new_primitive(type, out);
    free(from_file);
    if (res != PULSARC_OK)
        return library_error(what, res, err, err_len);
    if (name && !named)
        return rename_schema(out, name, err, err_len);
    return 0;
}

/* A JSON -> Avro converter for an AVRO part, when this build has one. */
static int avro_converter(const pulsarc_schema_t *part, struct json_to_avro **out, char *err,
                          size_t err_len)
{
    *out = NULL;
    if (pulsarc_schema_get_type(part) != PULSARC_SCHEMA_AVRO || !json_to_avro_available())
        return 0;
    size_t len;
    const char *definition = pulsarc_schema_data(part, &len);
    return json_to_avro_new(definition, len, out, err, err_len);
}

int schema_input_new(const struct schema_flags *flags, struct schema_input **out, char *err,
                     size_t err_len)
{
    *out = NULL;
    bool key_value = flags->kv_encoding != NULL;
    if (!key_value && (flags->key_type || flags->key_file || flags->key_definition)) {
        snprintf(err, err_len, "a key schema needs --kv-encoding inline|separated");
        return -1;
    }
    if (!flags->type && !key_value) {
        if (flags->file || flags->name || flags->definition) {
            snprintf(err, err_len, "--schema-file and --schema-name need --schema-type");
            return -1;
        }
        return 0;
    }
    if (key_value && flags->name) {
        snprintf(err, err_len,
                 "--schema-name does not apply to KeyValue schemas (named "
                 "\"KeyValue\", as the Java client names them)");
        return -1;
    }
    pulsarc_key_value_encoding encoding = PULSARC_KV_INLINE;
    if (key_value && strcasecmp(flags->kv_encoding, "separated") == 0) {
        encoding = PULSARC_KV_SEPARATED;
    } else if (key_value && strcasecmp(flags->kv_encoding, "inline") != 0) {
        snprintf(err, err_len, "--kv-encoding expects inline or separated, got '%s'",
                 flags->kv_encoding);
        return -1;
    }
    const char *value_type = flags->type ? flags->type : "bytes";
    if (!key_value && strcasecmp(value_type, "bytes") == 0 && !flags->file && !flags->name &&
        !flags->definition)
        return 0; /* bytes: no schema at all, as without the flag */

    struct schema_input *in = calloc(1, sizeof *in);
    if (!in) {
        snprintf(err, err_len, "out of memory");
        return -1;
    }
    pulsarc_schema_t *value = NULL, *key = NULL;
    int rc = build_part("--schema-type", value_type, flags->definition, flags->file,
                        key_value ? NULL : flags->name, &value, err, err_len);
    if (rc == 0 && key_value)
        rc = build_part("--key-schema-type", flags->key_type ? flags->key_type : "string",
                        flags->key_definition, flags->key_file, NULL, &key, err, err_len);
    if (rc == 0 && key_value) {
        pulsarc_result res = pulsarc_schema_new_key_value(key, value, encoding, &in->schema);
        if (res != PULSARC_OK)
            rc = library_error("KeyValue schema", res, err, err_len);
        pulsarc_schema_free(key);
        pulsarc_schema_free(value);
        if (rc == 0) {
            in->key = pulsarc_schema_kv_key(in->schema);
            in->value = pulsarc_schema_kv_value(in->schema);
        }
    } else if (rc == 0) {
        in->schema = value;
        in->value = value;
    } else {
        pulsarc_schema_free(value);
    }
    if (rc == 0)
        rc = avro_converter(in->value, &in->value_avro, err, err_len);
    if (rc == 0 && in->key)
        rc = avro_converter(in->key, &in->key_avro, err, err_len);
    if (rc != 0) {
        schema_input_free(in);
        return -1;
    }
    *out = in;
    return 0;
}

void schema_input_free(struct schema_input *in)
{
    if (!in)
        return;
    json_to_avro_free(in->value_avro);
    json_to_avro_free(in->key_avro);
    pulsarc_schema_free(in->schema);
    free(in);
}

const pulsarc_schema_t *schema_input_schema(const struct schema_input *in)
{
    return in ? in->schema : NULL;
}

bool schema_input_is_key_value(const struct schema_input *in)
{
    return in && in->key;
}

static int copy_out(const void *data, size_t len, char **out, size_t *out_len, char *err,
                    size_t err_len)
{
    *out = malloc(len ? len : 1);
    if (!*out) {
        snprintf(err, err_len, "out of memory");
        return -1;
    }
    memcpy(*out, data, len);
    *out_len = len;
    return 0;
}

/* A decimal integer within [min, max], the whole text. */
static bool parse_int(const char *text, int64_t min, int64_t max, int64_t *v)
{
    char *end;
    errno = 0;
    long long n = strtoll(text, &end, 10);
    if (end == text || *end || errno || n < min || n > max)
        return false;
    *v = n;
    return true;
}

/* Text to a value of a type without a definition, encoded as the Java client does. */
static int encode_primitive(pulsarc_schema_type type, const char *text, char **out, size_t *out_len,
                            char *err, size_t err_len)
{
    uint8_t buf[16];
    size_t n = 0;
    int64_t v = 0;
    char *end;
    const char *type_name = pulsarc_schema_type_name(type);
    switch (type) {
    case PULSARC_SCHEMA_BOOLEAN:
        if (strcmp(text, "true") && strcmp(text, "false"))
            break;
        n = pulsarc_schema_encode_bool(text[0] == 't', buf);
        break;
    case PULSARC_SCHEMA_INT8:
        if (parse_int(text, INT8_MIN, INT8_MAX, &v))
            n = pulsarc_schema_encode_int8((int8_t)v, buf);
        break;
    case PULSARC_SCHEMA_INT16:
        if (parse_int(text, INT16_MIN, INT16_MAX, &v))
            n = pulsarc_schema_encode_int16((int16_t)v, buf);
        break;
    case PULSARC_SCHEMA_INT32:
        if (parse_int(text, INT32_MIN, INT32_MAX, &v))
            n = pulsarc_schema_encode_int32((int32_t)v, buf);
        break;
    case PULSARC_SCHEMA_INT64:
    case PULSARC_SCHEMA_DATE:
    case PULSARC_SCHEMA_TIME:
    case PULSARC_SCHEMA_TIMESTAMP:
    case PULSARC_SCHEMA_LOCAL_DATE:
    case PULSARC_SCHEMA_LOCAL_TIME:
        if (parse_int(text, INT64_MIN, INT64_MAX, &v))
            n = pulsarc_schema_encode_int64(v, buf);
        break;
    case PULSARC_SCHEMA_FLOAT:
    case PULSARC_SCHEMA_DOUBLE: {
        errno = 0;
        double d = strtod(text, &end);
        if (end == text || *end || errno == ERANGE)
            break;
        n = type == PULSARC_SCHEMA_FLOAT ? pulsarc_schema_encode_float((float)d, buf)
                                         : pulsarc_schema_encode_double(d, buf);
        break;
    }
    default:
        snprintf(err, err_len,
                 "%s values cannot be typed as text: give the encoded bytes "
                 "with -f",
                 type_name);
        return -1;
    }
    if (n == 0) {
        snprintf(err, err_len, "'%s' is not a %s value%s", text, type_name,
                 type == PULSARC_SCHEMA_BOOLEAN ? " (true or false)" : "");
        return -1;
    }
    return copy_out(buf, n, out, out_len, err, err_len);
}

/* Converts text for the value part (key_part false) or the key part of a KeyValue
 * schema into *out (malloc'ed, *out_len bytes). Returns 0, or -1 with the reason in err. */
static int encode_text(const struct schema_input *in, bool key_part, const char *text, size_t len,
                       char **out, size_t *out_len, char *err, size_t err_len)
{
    const pulsarc_schema_t *part = key_part ? in->key : in->value;
    pulsarc_schema_type type = pulsarc_schema_get_type(part);
    switch (type) {
    case PULSARC_SCHEMA_BYTES:
    case PULSARC_SCHEMA_STRING:
    case PULSARC_SCHEMA_JSON:
    case PULSARC_SCHEMA_PROTOBUF:
    case PULSARC_SCHEMA_PROTOBUF_NATIVE:
    case PULSARC_SCHEMA_AUTO_PRODUCE:
        return copy_out(text, len, out, out_len, err, err_len);
    case PULSARC_SCHEMA_AVRO: {
        struct json_to_avro *conv = key_part ? in->key_avro : in->value_avro;
        if (!conv) {
            snprintf(err, err_len,
                     "this build cannot convert JSON to Avro (built without "
                     "avro-c, libavro-dev): give Avro binary with -f");
            return -1;
        }
        return json_to_avro_convert(conv, text, len, out, out_len, err, err_len);
    }
    default: {
        char number[64];
        if (len >= sizeof number || memchr(text, '\0', len)) {
            snprintf(err, err_len, "not a %s value", pulsarc_schema_type_name(type));
            return -1;
        }
        memcpy(number, text, len);
        number[len] = '\0';
        return encode_primitive(type, number, out, out_len, err, err_len);
    }
    }
}

int schema_input_message(const struct schema_input *in, const char *text, size_t len, bool raw,
                         const char *key, struct schema_message *out, char *err, size_t err_len)
{
    *out = (struct schema_message){ .data = text,
                                    .len = len,
                                    .key = in->key ? NULL : key,
                                    .key_len = key && !in->key ? strlen(key) : 0 };
    if (!raw) {
        if (encode_text(in, false, text, len, &out->own_data, &out->len, err, err_len) != 0)
            return -1;
        out->data = out->own_data;
    }
    if (in->key && key) {
        if (encode_text(in, true, key, strlen(key), &out->own_key, &out->key_len, err, err_len) !=
            0) {
            schema_message_free(out);
            return -1;
        }
        out->key = out->own_key;
    }
    return 0;
}

void schema_message_free(struct schema_message *msg)
{
    free(msg->own_data);
    free(msg->own_key);
    msg->own_data = msg->own_key = NULL;
}
