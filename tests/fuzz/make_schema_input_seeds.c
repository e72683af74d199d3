/* Writes the seed corpus of fuzz_schema_input: GET_SCHEMA_RESPONSEs for the schemas a
 * registry holds (built with the library's own constructors, so properties and KeyValue
 * layouts are the Java client's), each with a payload that passes and one that does not,
 * plus the broker's error answers and malformed schemas. Input format: the comment at the
 * top of fuzz_schema_input.c.
 *
 * Usage: make_schema_input_seeds DIR   (the checked-in corpus is
 * tests/fuzz/corpus/fuzz_schema_input; rerun it when the input format changes). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "PulsarApi.pb-c.h"
#include "pulsarc/pulsarc.h"
#include "schema/schema.h"

static const char *dir;

static void die(const char *what)
{
    fprintf(stderr, "make_schema_input_seeds: %s\n", what);
    exit(1);
}

/* [len][response][payload] into DIR/name. */
static void save(const char *name, const Pulsar__Proto__CommandGetSchemaResponse *r,
                 const void *payload, size_t payload_len)
{
    size_t len = pulsar__proto__command_get_schema_response__get_packed_size(r);
    uint8_t *b = malloc(2 + len + payload_len);
    if (!b || len > 0xffff)
        die("cannot encode a response");
    b[0] = (uint8_t)(len >> 8);
    b[1] = (uint8_t)len;
    pulsar__proto__command_get_schema_response__pack(r, b + 2);
    if (payload_len)
        memcpy(b + 2 + len, payload, payload_len);
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(b, 1, 2 + len + payload_len, f) != 2 + len + payload_len || fclose(f) != 0) {
        fprintf(stderr, "%s: %s\n", path, strerror(errno));
        exit(1);
    }
    free(b);
}

/* A successful answer carrying s (the protocol's numbering; BYTES is None). */
static void save_schema(const char *name, const pulsarc_schema_t *s, const void *payload,
                        size_t payload_len)
{
    static uint8_t version[8] = { 0, 0, 0, 0, 0, 0, 0, 3 };
    Pulsar__Proto__KeyValue kvs[16], *ptrs[16];
    Pulsar__Proto__Schema ps = PULSAR__PROTO__SCHEMA__INIT;
    Pulsar__Proto__CommandGetSchemaResponse r = PULSAR__PROTO__COMMAND_GET_SCHEMA_RESPONSE__INIT;
    size_t n = pulsarc_schema_property_count(s), len;
    if (n > 16)
        die("too many properties");
    for (size_t i = 0; i < n; i++) {
        pulsar__proto__key_value__init(&kvs[i]);
        const char *k, *v;
        if (pulsarc_schema_property_at(s, i, &k, &v) != PULSARC_OK)
            die("no property");
        kvs[i].key = (char *)k;
        kvs[i].value = (char *)v;
        ptrs[i] = &kvs[i];
    }
    ps.name = (char *)pulsarc_schema_name(s);
    ps.schema_data.data = (uint8_t *)pulsarc_schema_data(s, &len);
    ps.schema_data.len = len;
    ps.type = (Pulsar__Proto__Schema__Type)pulsarc_schema_get_type(s);
    ps.n_properties = n;
    ps.properties = ptrs;
    r.request_id = 3;
    r.schema = &ps;
    r.has_schema_version = 1;
    r.schema_version.data = version;
    r.schema_version.len = sizeof version;
    save(name, &r, payload, payload_len);
}

static pulsarc_schema_t *avro(const char *definition, bool json)
{
    pulsarc_schema_t *s = NULL;
    if ((json ? pulsarc_schema_new_json : pulsarc_schema_new_avro)(definition, &s) != PULSARC_OK)
        die(pulsarc_last_error_detail());
    return s;
}

static pulsarc_schema_t *primitive(pulsarc_schema_type type)
{
    pulsarc_schema_t *s = NULL;
    if (pulsarc_schema_new_primitive(type, &s) != PULSARC_OK)
        die(pulsarc_last_error_detail());
    return s;
}

static pulsarc_schema_t *key_value(pulsarc_schema_t *k, pulsarc_schema_t *v,
                                   pulsarc_key_value_encoding enc)
{
    pulsarc_schema_t *s = NULL;
    if (pulsarc_schema_new_key_value(k, v, enc, &s) != PULSARC_OK)
        die(pulsarc_last_error_detail());
    pulsarc_schema_free(k);
    pulsarc_schema_free(v);
    return s;
}

#define PAYLOAD(s) (s), sizeof(s) - 1

/* Every kind of Avro value the payload walker knows. */
static const char record_def[] =
    "{\"type\":\"record\",\"name\":\"User\",\"namespace\":\"fuzz\",\"fields\":["
    "{\"name\":\"name\",\"type\":\"string\"},"
    "{\"name\":\"age\",\"type\":\"int\"},"
    "{\"name\":\"tags\",\"type\":{\"type\":\"array\",\"items\":\"string\"}},"
    "{\"name\":\"opt\",\"type\":[\"null\",\"long\"],\"default\":null},"
    "{\"name\":\"color\",\"type\":{\"type\":\"enum\",\"name\":\"Color\",\"symbols\":[\"R\",\"G\"]}}"
    ","
    "{\"name\":\"id\",\"type\":{\"type\":\"fixed\",\"name\":\"Id\",\"size\":4}},"
    "{\"name\":\"scores\",\"type\":{\"type\":\"map\",\"values\":\"double\"}},"
    "{\"name\":\"ok\",\"type\":\"boolean\"},"
    "{\"name\":\"ratio\",\"type\":\"float\"},"
    "{\"name\":\"blob\",\"type\":\"bytes\"}]}";
/* name "alice", age 30, tags ["x","yz"], opt 7, color G, id, scores {"k": 1.0}, ok true,
 * ratio, blob "\x01". */
static const char record_datum[] = "\x0a"
                                   "alice"
                                   "\x3c"
                                   "\x04\x02x\x04yz\x00"
                                   "\x02\x0e"
                                   "\x02"
                                   "ABCD"
                                   "\x02\x02k\x00\x00\x00\x00\x00\x00\xf0\x3f\x00"
                                   "\x01"
                                   "\x00\x00\x80\x3f"
                                   "\x02\x01";

/* A linked list: recursion through a named type. */
static const char list_def[] =
    "{\"type\":\"record\",\"name\":\"Node\",\"fields\":[{\"name\":\"v\",\"type\":\"int\"},"
    "{\"name\":\"next\",\"type\":[\"null\",\"Node\"]}]}";

static const char json_def[] =
    "{\"type\":\"record\",\"name\":\"Point\",\"fields\":[{\"name\":\"x\",\"type\":\"double\"},"
    "{\"name\":\"y\",\"type\":[\"null\",\"string\"],\"default\":null}]}";

static void seeds_avro(void)
{
    pulsarc_schema_t *s = avro(record_def, false);
    save_schema("avro_record_valid", s, PAYLOAD(record_datum));
    save_schema("avro_record_truncated", s, record_datum, sizeof record_datum - 6);
    save_schema("avro_record_trailing", s, record_datum, sizeof record_datum);
    pulsarc_schema_free(s);
    s = avro(list_def, false);
    save_schema("avro_list_valid", s, PAYLOAD("\x02\x02\x04\x02\x06\x00"));
    save_schema("avro_list_bad_branch", s, PAYLOAD("\x02\x02\x04\x04\x06\x00"));
    pulsarc_schema_free(s);
}

static void seeds_json_and_string(void)
{
    pulsarc_schema_t *s = avro(json_def, true);
    save_schema("json_valid", s, PAYLOAD("{\"x\":1.5,\"y\":\"a\"}"));
    save_schema("json_not_json", s, PAYLOAD("{\"x\":1.5,"));
    pulsarc_schema_free(s);
    s = primitive(PULSARC_SCHEMA_STRING);
    save_schema("string_valid", s, PAYLOAD("h\xc3\xa9llo \xf0\x9f\x98\x80"));
    save_schema("string_surrogate", s, PAYLOAD("a\xed\xa0\x80z"));
    save_schema("string_overlong", s, PAYLOAD("\xc0\xaf"));
    pulsarc_schema_free(s);
}

static void seeds_primitives(void)
{
    static const struct {
        pulsarc_schema_type type;
        const char *name;
    } types[] = {
        { PULSARC_SCHEMA_BOOLEAN, "boolean" },
        { PULSARC_SCHEMA_INT8, "int8" },
        { PULSARC_SCHEMA_INT16, "int16" },
        { PULSARC_SCHEMA_INT32, "int32" },
        { PULSARC_SCHEMA_INT64, "int64" },
        { PULSARC_SCHEMA_FLOAT, "float" },
        { PULSARC_SCHEMA_DOUBLE, "double" },
        { PULSARC_SCHEMA_TIMESTAMP, "timestamp" },
        { PULSARC_SCHEMA_INSTANT, "instant" },
        { PULSARC_SCHEMA_LOCAL_DATE_TIME, "local_date_time" },
    };
    static const uint8_t value[17] = { 0, 0, 0, 0, 0, 0, 0, 42, 0, 0, 0, 7, 1, 2, 3, 4, 5 };
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        pulsarc_schema_t *s = primitive(types[i].type);
        size_t width = pc_schema_fixed_width(types[i].type);
        char name[64];
        snprintf(name, sizeof name, "%s_valid", types[i].name);
        save_schema(name, s, value, width);
        snprintf(name, sizeof name, "%s_wrong_width", types[i].name);
        save_schema(name, s, value, width + 1);
        pulsarc_schema_free(s);
    }
    pulsarc_schema_t *s = NULL;
    if (pulsarc_schema_new(PULSARC_SCHEMA_PROTOBUF, "pb", "{}", 2, &s) != PULSARC_OK)
        die(pulsarc_last_error_detail());
    save_schema("protobuf_unchecked", s, PAYLOAD("\x08\x01"));
    pulsarc_schema_free(s);
    /* None: the topic takes raw bytes. */
    if (pulsarc_schema_new(PULSARC_SCHEMA_BYTES, NULL, NULL, 0, &s) != PULSARC_OK)
        die(pulsarc_last_error_detail());
    save_schema("none", s, PAYLOAD("raw"));
    pulsarc_schema_free(s);
}

static void seeds_key_value(void)
{
    uint8_t *b;
    size_t n;
    /* INLINE: a STRING key and an AVRO value. */
    pulsarc_schema_t *s = key_value(primitive(PULSARC_SCHEMA_STRING), avro(list_def, false),
                                    PULSARC_KV_INLINE);
    if (pc_schema_kv_inline("key", 3, "\x02\x00", 2, &b, &n) != PULSARC_OK)
        die("inline");
    save_schema("kv_inline_valid", s, b, n);
    b[n - 1] = 0x02; /* the list goes on past the end */
    save_schema("kv_inline_bad_value", s, b, n);
    free(b);
    save_schema("kv_inline_short", s, PAYLOAD("\x00\x00\x00\x05k"));
    pulsarc_schema_free(s);
    /* INLINE with a null key (length -1). */
    s = key_value(primitive(PULSARC_SCHEMA_INT32), primitive(PULSARC_SCHEMA_INT64),
                  PULSARC_KV_INLINE);
    save_schema("kv_inline_null_key", s,
                PAYLOAD("\xff\xff\xff\xff\x00\x00\x00\x08\x00\x00\x00\x00\x00\x00\x00\x01"));
    pulsarc_schema_free(s);
    /* SEPARATED: an INT32 key (in the partition key) and a JSON value. */
    s = key_value(primitive(PULSARC_SCHEMA_INT32), avro(json_def, true), PULSARC_KV_SEPARATED);
    save_schema("kv_separated_valid", s, PAYLOAD("{\"x\":2}"));
    save_schema("kv_separated_bad", s, PAYLOAD("[1,"));
    pulsarc_schema_free(s);
    /* Parts with properties of their own, escaped as Gson does. */
    pulsarc_schema_t *k = primitive(PULSARC_SCHEMA_STRING), *v = avro(json_def, false);
    if (pulsarc_schema_set_property(k, "a<b", "x=\"y\"\n") != PULSARC_OK ||
        pulsarc_schema_set_property(v, "\xe2\x80\xa8", "'&'") != PULSARC_OK)
        die(pulsarc_last_error_detail());
    s = key_value(k, v, PULSARC_KV_INLINE);
    if (pc_schema_kv_inline("\xc3\xa9", 2, "\x00\x00\x00\x00\x00\x00\x00\x00\x00", 9, &b, &n) !=
        PULSARC_OK)
        die("inline");
    save_schema("kv_part_properties", s, b, n);
    free(b);
    pulsarc_schema_free(s);
}

static void seeds_broken(void)
{
    Pulsar__Proto__CommandGetSchemaResponse r = PULSAR__PROTO__COMMAND_GET_SCHEMA_RESPONSE__INIT;
    r.request_id = 3;
    r.has_error_code = 1;
    r.error_code = PULSAR__PROTO__SERVER_ERROR__TopicNotFound;
    r.error_message = (char *)"Topic not found or no-schema";
    save("error_no_schema", &r, PAYLOAD("raw"));
    r.error_code = PULSAR__PROTO__SERVER_ERROR__IncompatibleSchema;
    r.error_message = (char *)"fuzz: refused";
    save("error_other", &r, NULL, 0);
    r.has_error_code = 0;
    r.error_message = NULL;
    save("success_without_schema", &r, NULL, 0);

    Pulsar__Proto__Schema ps = PULSAR__PROTO__SCHEMA__INIT;
    Pulsar__Proto__KeyValue kv = PULSAR__PROTO__KEY_VALUE__INIT, *kvp = &kv;
    ps.name = (char *)"kv";
    ps.type = PULSAR__PROTO__SCHEMA__TYPE__KeyValue;
    ps.schema_data.data = (uint8_t *)"\x00\x00\x00\x09{}";
    ps.schema_data.len = 6;
    r.schema = &ps;
    save("kv_data_short", &r, NULL, 0);
    ps.schema_data.data = (uint8_t *)"\x00\x00\x00\x00\xff\xff\xff\xff";
    ps.schema_data.len = 8;
    kv.key = (char *)"kv.encoding.type";
    kv.value = (char *)"SIDEWAYS";
    ps.n_properties = 1;
    ps.properties = &kvp;
    save("kv_encoding_unknown", &r, NULL, 0);
    kv.key = (char *)"value.schema.properties";
    kv.value = (char *)"{\"a\":1}";
    save("kv_part_properties_not_strings", &r, NULL, 0);
    kv.key = (char *)"key.schema.type";
    kv.value = (char *)"KEY_VALUE";
    save("kv_nested", &r, NULL, 0);
    /* A definition avro-c refuses: its payloads go unchecked. */
    ps.type = PULSAR__PROTO__SCHEMA__TYPE__Avro;
    ps.n_properties = 0;
    ps.schema_data.data = (uint8_t *)"{\"type\":\"record\"}";
    ps.schema_data.len = strlen((const char *)ps.schema_data.data);
    save("avro_definition_unreadable", &r, PAYLOAD("\x01\x02"));
    ps.type = PULSAR__PROTO__SCHEMA__TYPE__AutoConsume;
    ps.n_properties = 0;
    save("type_auto_consume", &r, NULL, 0);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    dir = argv[1];
    seeds_avro();
    seeds_json_and_string();
    seeds_primitives();
    seeds_key_value();
    seeds_broken();
    return 0;
}
