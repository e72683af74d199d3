/* Schemas: Java-compatible value encodings, KeyValue schema and payload layouts (byte for
 * byte as Java's KeyValueSchemaInfo / KeyValue.encode write them), payload checks,
 * hashing and equality. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "publish/send.h"
#include "schema/avro_names.h"
#include "schema/schema.h"
#include "pulsarc/pulsarc.h"

#define REC_DEF                                          \
    "{\"type\":\"record\",\"name\":\"Rec\",\"fields\":[" \
    "{\"name\":\"a\",\"type\":\"int\"},{\"name\":\"b\",\"type\":\"string\"}]}"

static void assert_bytes(const uint8_t *got, size_t got_len, const uint8_t *want, size_t want_len)
{
    cr_assert_eq(got_len, want_len, "length %zu, want %zu", got_len, want_len);
    for (size_t i = 0; i < want_len; i++)
        cr_assert_eq(got[i], want[i], "byte %zu: %02x, want %02x", i, got[i], want[i]);
}

/* ---- encoders (Java: ByteBuffer big-endian, Float.floatToIntBits, ...) ----------- */

Test(schema, encoders_match_java)
{
    uint8_t b[16];
    cr_assert_eq(pulsarc_schema_encode_bool(1, b), 1);
    cr_assert_eq(b[0], 1);
    pulsarc_schema_encode_bool(0, b);
    cr_assert_eq(b[0], 0);
    cr_assert_eq(pulsarc_schema_encode_int8(-2, b), 1);
    cr_assert_eq(b[0], 0xfe);
    cr_assert_eq(pulsarc_schema_encode_int16(-2, b), 2);
    assert_bytes(b, 2, (const uint8_t[]){ 0xff, 0xfe }, 2);
    cr_assert_eq(pulsarc_schema_encode_int32(0x01020304, b), 4);
    assert_bytes(b, 4, (const uint8_t[]){ 1, 2, 3, 4 }, 4);
    pulsarc_schema_encode_int32(-2, b);
    assert_bytes(b, 4, (const uint8_t[]){ 0xff, 0xff, 0xff, 0xfe }, 4);
    cr_assert_eq(pulsarc_schema_encode_int64(0x0102030405060708LL, b), 8);
    assert_bytes(b, 8, (const uint8_t[]){ 1, 2, 3, 4, 5, 6, 7, 8 }, 8);
    cr_assert_eq(pulsarc_schema_encode_float(1.5f, b), 4);
    assert_bytes(b, 4, (const uint8_t[]){ 0x3f, 0xc0, 0, 0 }, 4);
    cr_assert_eq(pulsarc_schema_encode_double(-2.5, b), 8);
    assert_bytes(b, 8, (const uint8_t[]){ 0xc0, 0x04, 0, 0, 0, 0, 0, 0 }, 8);
    /* InstantSchema: putLong(epochSecond), putInt(nano). */
    cr_assert_eq(pulsarc_schema_encode_instant(1, 2, b), 12);
    assert_bytes(b, 12, (const uint8_t[]){ 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 2 }, 12);
    /* LocalDateTimeSchema: putLong(epochDay), putLong(nanoOfDay). */
    cr_assert_eq(pulsarc_schema_encode_local_date_time(19000, 1000000000LL, b), 16);
    assert_bytes(b, 16,
                 (const uint8_t[]){ 0, 0, 0, 0, 0, 0, 0x4a, 0x38, 0, 0, 0, 0, 0x3b, 0x9a, 0xca,
                                    0x00 },
                 16);
}

/* ---- descriptions -------------------------------------------------------------- */

Test(schema, primitives_carry_java_names_and_no_definition)
{
    static const struct {
        pulsarc_schema_type t;
        const char *name;
    } cases[] = {
        { PULSARC_SCHEMA_STRING, "String" }, { PULSARC_SCHEMA_BOOLEAN, "Boolean" },
        { PULSARC_SCHEMA_INT8, "INT8" },     { PULSARC_SCHEMA_INT32, "INT32" },
        { PULSARC_SCHEMA_INT64, "INT64" },   { PULSARC_SCHEMA_DOUBLE, "Double" },
        { PULSARC_SCHEMA_BYTES, "Bytes" },   { PULSARC_SCHEMA_LOCAL_DATE_TIME, "LocalDateTime" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        pulsarc_schema_t *s;
        cr_assert_eq(pulsarc_schema_new_primitive(cases[i].t, &s), PULSARC_OK);
        cr_assert_str_eq(pulsarc_schema_name(s), cases[i].name);
        size_t len = 99;
        pulsarc_schema_data(s, &len);
        cr_assert_eq(len, 0);
        cr_assert_eq(pulsarc_schema_property_count(s), 0);
        pulsarc_schema_free(s);
    }
    pulsarc_schema_t *s = (pulsarc_schema_t *)1;
    cr_assert_eq(pulsarc_schema_new_primitive(PULSARC_SCHEMA_AVRO, &s),
                 PULSARC_ERR_INVALID_ARGUMENT);
    cr_assert_null(s);
}

/* A field of record R named n, of the named type `type_json`. */
#define FIELD(n, type_json) "{\"name\":\"" n "\",\"type\":" type_json "}"
#define FIXED(name, extra) "{\"type\":\"fixed\",\"name\":\"" name "\"," extra "\"size\":4}"
#define RECORD(ns_attr, f1, f2) \
    "{\"type\":\"record\",\"name\":\"R\"," ns_attr "\"fields\":[" f1 "," f2 "]}"

static void assert_twice(const char *def, const char *want)
{
    char dup[64] = "";
    bool twice = pc_avro_declares_a_name_twice(def, strlen(def), dup, sizeof dup);
    if (want) {
        cr_assert(twice, "not seen twice: %s", def);
        cr_assert_str_eq(dup, want, "for %s", def);
    } else {
        cr_assert_not(twice, "\"%s\" seen twice in %s", dup, def);
    }
}

/* Full names follow the Avro rules, so only real duplicates are refused (avro-c leaks the
 * schema it was building when it refuses one). */
Test(schema, avro_names_declared_twice)
{
    assert_twice(RECORD("", FIELD("a", FIXED("Id", "")), FIELD("b", FIXED("Id", ""))), "Id");
    /* A dotted name against the same name in its namespace attribute. */
    assert_twice(RECORD("", FIELD("a", FIXED("x.Id", "")),
                        FIELD("b", FIXED("Id", "\"namespace\":\"x\","))),
                 "x.Id");
    /* The enclosing record's namespace is inherited. */
    assert_twice(RECORD("\"namespace\":\"n\",", FIELD("a", FIXED("Id", "")),
                        FIELD("b", FIXED("n.Id", ""))),
                 "n.Id");
    assert_twice(RECORD("", FIELD("a", "{\"type\":\"record\",\"name\":\"R\",\"fields\":[]}"),
                        FIELD("b", "\"int\"")),
                 "R");
    assert_twice("[" FIXED("F", "") "," FIXED("F", "") "]", "F");
    assert_twice(RECORD("", FIELD("a", "{\"type\":\"array\",\"items\":" FIXED("Id", "") "}"),
                        FIELD("b", "{\"type\":\"map\",\"values\":" FIXED("Id", "") "}")),
                 "Id");
    /* Not duplicates: other namespaces, a reference by name, invalid JSON. */
    assert_twice(RECORD("", FIELD("a", FIXED("Id", "\"namespace\":\"x\",")),
                        FIELD("b", FIXED("Id", "\"namespace\":\"y\","))),
                 NULL);
    assert_twice(RECORD("", FIELD("a", FIXED("Id", "")), FIELD("b", "\"Id\"")), NULL);
    assert_twice(RECORD("", FIELD("a", "\"R\""), FIELD("b", "[\"null\",\"R\"]")), NULL);
    assert_twice("{\"type\":", NULL);
    if (pulsarc_schema_avro_validation_available()) {
        pulsarc_schema_t *s;
        cr_assert_eq(pulsarc_schema_new_avro(RECORD("", FIELD("a", FIXED("Id", "")),
                                                    FIELD("b", FIXED("Id", ""))),
                                             &s),
                     PULSARC_ERR_INVALID_ARGUMENT);
        cr_assert(strstr(pulsarc_last_error_detail(), "\"Id\" is declared twice"), "detail: %s",
                  pulsarc_last_error_detail());
        cr_assert_eq(pulsarc_schema_new_avro(RECORD("", FIELD("a", FIXED("Id", "")),
                                                    FIELD("b", "\"Id\"")),
                                             &s),
                     PULSARC_OK, "%s", pulsarc_last_error_detail());
        pulsarc_schema_free(s);
    }
}

Test(schema, avro_and_json_from_a_definition)
{
    pulsarc_schema_t *s;
    cr_assert_eq(pulsarc_schema_new_json(REC_DEF, &s), PULSARC_OK);
    cr_assert_eq(pulsarc_schema_get_type(s), PULSARC_SCHEMA_JSON);
    cr_assert_str_eq(pulsarc_schema_name(s), "");
    size_t len;
    cr_assert_str_eq(pulsarc_schema_data(s, &len), REC_DEF);
    cr_assert_eq(len, strlen(REC_DEF));
    cr_assert_str_eq(pulsarc_schema_property(s, "__alwaysAllowNull"), "true");
    cr_assert_str_eq(pulsarc_schema_property(s, "__jsr310ConversionEnabled"), "false");
    pulsarc_schema_free(s);
    cr_assert_eq(pulsarc_schema_new_avro("{\"type\":", &s), PULSARC_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pulsarc_last_error_detail(), "not JSON"));
    if (pulsarc_schema_avro_validation_available()) {
        cr_assert_eq(pulsarc_schema_new_avro("{\"type\":\"no-such-type\"}", &s),
                     PULSARC_ERR_INVALID_ARGUMENT);
        cr_assert(strstr(pulsarc_last_error_detail(), "Avro"));
    }
}

Test(schema, frozen_once_given_away)
{
    pulsarc_schema_t *s;
    cr_assert_eq(pulsarc_schema_new_primitive(PULSARC_SCHEMA_STRING, &s), PULSARC_OK);
    cr_assert_eq(pulsarc_schema_set_property(s, "k", "v"), PULSARC_OK);
    pulsarc_producer_config_t *conf = pulsarc_producer_config_new();
    cr_assert_eq(pulsarc_producer_config_set_schema(conf, s), PULSARC_OK);
    cr_assert_eq(pulsarc_schema_set_property(s, "k", "w"), PULSARC_ERR_INVALID_ARGUMENT);
    pulsarc_schema_free(s); /* the configuration keeps its reference */
    pulsarc_producer_config_free(conf);
}

Test(schema, type_names_round_trip)
{
    pulsarc_schema_type t;
    for (int i = -1; i <= 20; i++) {
        const char *name = pulsarc_schema_type_name((pulsarc_schema_type)i);
        cr_assert_eq(pulsarc_schema_type_from_name(name, &t), PULSARC_OK, "%s", name);
        cr_assert_eq((int)t, i);
    }
    cr_assert_eq(pulsarc_schema_type_from_name("none", &t), PULSARC_OK);
    cr_assert_eq(t, PULSARC_SCHEMA_BYTES);
    cr_assert_eq(pulsarc_schema_type_from_name("INT33", &t), PULSARC_ERR_INVALID_ARGUMENT);
}

/* ---- KeyValue --------------------------------------------------------------------- */

/* KeyValueSchemaInfo.encodeKeyValueSchemaInfo(Schema.STRING, Schema.INT32, INLINE):
 * both definitions are empty, so schema_data is two zero lengths. */
Test(schema, key_value_of_primitives_as_java)
{
    pulsarc_schema_t *k, *v, *kv;
    pulsarc_schema_new_primitive(PULSARC_SCHEMA_STRING, &k);
    pulsarc_schema_new_primitive(PULSARC_SCHEMA_INT32, &v);
    cr_assert_eq(pulsarc_schema_new_key_value(k, v, PULSARC_KV_INLINE, &kv), PULSARC_OK);
    cr_assert_eq(pulsarc_schema_get_type(kv), PULSARC_SCHEMA_KEY_VALUE);
    cr_assert_str_eq(pulsarc_schema_name(kv), "KeyValue");
    size_t len;
    const uint8_t *d = pulsarc_schema_data(kv, &len);
    assert_bytes(d, len, (const uint8_t[]){ 0, 0, 0, 0, 0, 0, 0, 0 }, 8);
    cr_assert_str_eq(pulsarc_schema_property(kv, "key.schema.name"), "String");
    cr_assert_str_eq(pulsarc_schema_property(kv, "key.schema.type"), "STRING");
    cr_assert_str_eq(pulsarc_schema_property(kv, "key.schema.properties"), "{}");
    cr_assert_str_eq(pulsarc_schema_property(kv, "value.schema.name"), "INT32");
    cr_assert_str_eq(pulsarc_schema_property(kv, "value.schema.type"), "INT32");
    cr_assert_str_eq(pulsarc_schema_property(kv, "value.schema.properties"), "{}");
    cr_assert_str_eq(pulsarc_schema_property(kv, "kv.encoding.type"), "INLINE");
    cr_assert_eq(pulsarc_schema_property_count(kv), 7);
    cr_assert_eq(pulsarc_schema_kv_key(kv), k);
    pulsarc_schema_free(k);
    pulsarc_schema_free(v);
    pulsarc_schema_free(kv);
}

/* A JSON value part: [0][len][definition]; its properties as Gson writes a sorted map,
 * with Gson's HTML-safe escapes. */
Test(schema, key_value_with_struct_part_and_escaped_properties)
{
    pulsarc_schema_t *k, *v, *kv;
    pulsarc_schema_new_primitive(PULSARC_SCHEMA_BYTES, &k);
    pulsarc_schema_new_json(REC_DEF, &v);
    cr_assert_eq(pulsarc_schema_set_property(v, "z<", "a='b'&\"\n"), PULSARC_OK);
    cr_assert_eq(pulsarc_schema_new_key_value(k, v, PULSARC_KV_SEPARATED, &kv), PULSARC_OK);
    size_t len, dl = strlen(REC_DEF);
    const uint8_t *d = pulsarc_schema_data(kv, &len);
    cr_assert_eq(len, 8 + dl);
    assert_bytes(d, 8, (const uint8_t[]){ 0, 0, 0, 0, 0, 0, (uint8_t)(dl >> 8), (uint8_t)dl }, 8);
    cr_assert_eq(memcmp(d + 8, REC_DEF, dl), 0);
    cr_assert_str_eq(pulsarc_schema_property(kv, "key.schema.type"), "BYTES");
    cr_assert_str_eq(pulsarc_schema_property(kv, "value.schema.name"), "");
    cr_assert_str_eq(pulsarc_schema_property(kv, "value.schema.properties"),
                     "{\"__alwaysAllowNull\":\"true\",\"__jsr310ConversionEnabled\":\"false\","
                     "\"z\\u003c\":\"a\\u003d\\u0027b\\u0027\\u0026\\\"\\n\"}");
    cr_assert_str_eq(pulsarc_schema_property(kv, "kv.encoding.type"), "SEPARATED");
    pulsarc_schema_free(k);
    pulsarc_schema_free(v);
    pulsarc_schema_free(kv);
}

Test(schema, key_value_parts_must_be_plain)
{
    pulsarc_schema_t *k, *kv, *auto_s, *out;
    pulsarc_schema_new_primitive(PULSARC_SCHEMA_STRING, &k);
    pulsarc_schema_new_primitive(PULSARC_SCHEMA_AUTO_PRODUCE, &auto_s);
    pulsarc_schema_new_key_value(k, k, PULSARC_KV_INLINE, &kv);
    cr_assert_eq(pulsarc_schema_new_key_value(k, kv, PULSARC_KV_INLINE, &out),
                 PULSARC_ERR_INVALID_ARGUMENT);
    cr_assert_eq(pulsarc_schema_new_key_value(auto_s, k, PULSARC_KV_INLINE, &out),
                 PULSARC_ERR_INVALID_ARGUMENT);
    cr_assert_eq(pulsarc_schema_new_key_value(NULL, k, PULSARC_KV_INLINE, &out),
                 PULSARC_ERR_INVALID_ARGUMENT);
    pulsarc_schema_free(k);
    pulsarc_schema_free(kv);
    pulsarc_schema_free(auto_s);
}

/* What the registry returns for a KeyValue schema reads back into its parts. */
Test(schema, key_value_split_reads_back_the_parts)
{
    pulsarc_schema_t *k, *v, *kv;
    pulsarc_schema_new_primitive(PULSARC_SCHEMA_INT64, &k);
    pulsarc_schema_new_avro(REC_DEF, &v);
    pulsarc_schema_new_key_value(k, v, PULSARC_KV_SEPARATED, &kv);
    pc_schema_t *copy = pc_schema_alloc(PULSARC_SCHEMA_KEY_VALUE, "KeyValue", kv->data, kv->len);
    for (size_t i = 0; i < kv->n_props; i++)
        pc_schema_put_property(copy, kv->props[i].key, kv->props[i].value);
    cr_assert_eq(pc_schema_kv_split(copy), PULSARC_OK, "%s", pulsarc_last_error_detail());
    cr_assert_eq(copy->kv_encoding, PULSARC_KV_SEPARATED);
    cr_assert(pc_schema_equal(copy->kv_key, k));
    cr_assert(pc_schema_equal(copy->kv_value, v));
    /* Truncated schema_data is refused. */
    copy->len = 7;
    pc_schema_unref(copy->kv_key);
    pc_schema_unref(copy->kv_value);
    copy->kv_key = copy->kv_value = NULL;
    cr_assert_eq(pc_schema_kv_split(copy), PULSARC_ERR_PROTOCOL);
    pc_schema_unref(copy);
    pulsarc_schema_free(k);
    pulsarc_schema_free(v);
    pulsarc_schema_free(kv);
}

/* KeyValue.encode: [4-byte BE key length][key][4-byte BE value length][value], -1 for a
 * null part. */
Test(schema, key_value_inline_payload)
{
    pulsarc_schema_t *s, *kv;
    pulsarc_schema_new_primitive(PULSARC_SCHEMA_STRING, &s);
    pulsarc_schema_new_key_value(s, s, PULSARC_KV_INLINE, &kv);
    pulsarc_message_t *m = pulsarc_message_new();
    cr_assert_eq(pulsarc_message_set_key_value(m, kv, "k", 1, "vv", 2), PULSARC_OK);
    size_t len;
    const uint8_t *p = pulsarc_message_payload(m, &len);
    assert_bytes(p, len, (const uint8_t[]){ 0, 0, 0, 1, 'k', 0, 0, 0, 2, 'v', 'v' }, 11);
    cr_assert_null(pulsarc_message_key(m), "INLINE leaves the message key alone");
    cr_assert_eq(pulsarc_message_set_key_value(m, kv, NULL, 0, "", 0), PULSARC_OK);
    p = pulsarc_message_payload(m, &len);
    assert_bytes(p, len, (const uint8_t[]){ 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0 }, 8);
    cr_assert_eq(pulsarc_message_set_key_value(m, kv, NULL, 3, "", 0),
                 PULSARC_ERR_INVALID_ARGUMENT);
    cr_assert_eq(pulsarc_message_set_key_value(m, s, "k", 1, "v", 1), PULSARC_ERR_INVALID_ARGUMENT);
    cr_assert_eq(pulsarc_schema_validate(kv, p, len), PULSARC_OK);
    pulsarc_message_free(m);
    pulsarc_schema_free(s);
    pulsarc_schema_free(kv);
}

/* SEPARATED: the value is the payload, the key goes base64 into the partition key. */
Test(schema, key_value_separated_payload_and_key)
{
    pulsarc_schema_t *s, *kv;
    pulsarc_schema_new_primitive(PULSARC_SCHEMA_BYTES, &s);
    pulsarc_schema_new_key_value(s, s, PULSARC_KV_SEPARATED, &kv);
    pulsarc_message_t *m = pulsarc_message_new();
    cr_assert_eq(pulsarc_message_set_key_value(m, kv, (const uint8_t[]){ 0xfb, 0xff }, 2, "val", 3),
                 PULSARC_OK);
    size_t len;
    const uint8_t *p = pulsarc_message_payload(m, &len);
    assert_bytes(p, len, (const uint8_t *)"val", 3);
    cr_assert_str_eq(pulsarc_message_key(m), "+/8=");
    cr_assert(m->key_b64);
    pc_send_t *send = pc_send_from_builder(NULL, m);
    cr_assert(send->msg.key_b64);
    cr_assert_str_eq(send->msg.key, "+/8=");
    pc_msg_free(&send->msg);
    cr_assert_eq(pulsarc_message_set_key_value(m, kv, "abc", 3, NULL, 0), PULSARC_OK);
    cr_assert_str_eq(pulsarc_message_key(m), "YWJj");
    cr_assert(m->null_value);
    cr_assert_not(m->null_key);
    cr_assert_eq(pulsarc_message_set_key_value(m, kv, NULL, 0, "x", 1), PULSARC_OK);
    cr_assert_null(pulsarc_message_key(m));
    cr_assert(m->null_key);
    cr_assert_not(m->null_value);
    /* A plain key afterwards is not base64 any more. */
    pulsarc_message_set_key(m, "plain");
    cr_assert_not(m->key_b64);
    pulsarc_message_free(m);
    pulsarc_schema_free(s);
    pulsarc_schema_free(kv);
}

/* ---- payload checks ----------------------------------------------------------------- */

static pulsarc_result check(pulsarc_schema_type t, const void *p, size_t len)
{
    pulsarc_schema_t *s;
    cr_assert_eq(pulsarc_schema_new_primitive(t, &s), PULSARC_OK);
    pulsarc_result res = pulsarc_schema_validate(s, p, len);
    pulsarc_schema_free(s);
    return res;
}

#define BYTES(...) (const uint8_t[]){ __VA_ARGS__ }, sizeof((const uint8_t[]){ __VA_ARGS__ })

Test(schema, string_must_be_strict_utf8)
{
    cr_assert_eq(check(PULSARC_SCHEMA_STRING, "", 0), PULSARC_OK);
    cr_assert_eq(check(PULSARC_SCHEMA_STRING, "h\xc3\xa9llo", 6), PULSARC_OK);
    cr_assert_eq(check(PULSARC_SCHEMA_STRING, BYTES(0xf0, 0x9f, 0x98, 0x80)), PULSARC_OK);
    cr_assert_eq(check(PULSARC_SCHEMA_STRING, BYTES(0xef, 0xbf, 0xbf)), PULSARC_OK); /* U+FFFF */
    cr_assert_eq(check(PULSARC_SCHEMA_STRING, BYTES(0xf4, 0x8f, 0xbf, 0xbf)), PULSARC_OK);
    cr_assert_eq(check(PULSARC_SCHEMA_STRING, BYTES('a', 0, 'b')), PULSARC_OK); /* NUL is UTF-8 */
    static const struct {
        const uint8_t b[5];
        size_t n;
    } bad[] = {
        { { 0x80 }, 1 },                         /* lone continuation byte */
        { { 0xc0, 0x80 }, 2 },                   /* overlong NUL */
        { { 0xc1, 0xbf }, 2 },                   /* overlong */
        { { 0xe0, 0x80, 0x80 }, 3 },             /* overlong 3-byte */
        { { 0xf0, 0x80, 0x80, 0x80 }, 4 },       /* overlong 4-byte */
        { { 0xed, 0xa0, 0x80 }, 3 },             /* surrogate U+D800 */
        { { 0xed, 0xbf, 0xbf }, 3 },             /* surrogate U+DFFF */
        { { 0xf4, 0x90, 0x80, 0x80 }, 4 },       /* above U+10FFFF */
        { { 0xe2, 0x82 }, 2 },                   /* truncated */
        { { 0xf8, 0x88, 0x80, 0x80, 0x80 }, 5 }, /* 5-byte form */
        { { 0xff }, 1 },
        { { 'o', 'k', 0xc3 }, 3 }, /* truncated at the end */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cr_assert_eq(check(PULSARC_SCHEMA_STRING, bad[i].b, bad[i].n), PULSARC_ERR_INVALID_PAYLOAD,
                     "case %zu", i);
        cr_assert(strstr(pulsarc_last_error_detail(), "UTF-8"), "case %zu", i);
    }
    size_t at;
    cr_assert_not(pc_utf8_valid((const uint8_t *)"ok\xc3", 3, &at));
    cr_assert_eq(at, 2);
}

Test(schema, fixed_width_types_need_their_width)
{
    uint8_t b[16] = { 0 };
    cr_assert_eq(check(PULSARC_SCHEMA_INT32, b, 4), PULSARC_OK);
    cr_assert_eq(check(PULSARC_SCHEMA_INT32, b, 3), PULSARC_ERR_INVALID_PAYLOAD);
    cr_assert(strstr(pulsarc_last_error_detail(), "INT32"));
    cr_assert_eq(check(PULSARC_SCHEMA_INT64, b, 8), PULSARC_OK);
    cr_assert_eq(check(PULSARC_SCHEMA_INT64, b, 4), PULSARC_ERR_INVALID_PAYLOAD);
    cr_assert_eq(check(PULSARC_SCHEMA_BOOLEAN, b, 1), PULSARC_OK);
    cr_assert_eq(check(PULSARC_SCHEMA_BOOLEAN, b, 0), PULSARC_ERR_INVALID_PAYLOAD);
    cr_assert_eq(check(PULSARC_SCHEMA_DOUBLE, b, 8), PULSARC_OK);
    cr_assert_eq(check(PULSARC_SCHEMA_FLOAT, b, 8), PULSARC_ERR_INVALID_PAYLOAD);
    cr_assert_eq(check(PULSARC_SCHEMA_TIMESTAMP, b, 8), PULSARC_OK);
    cr_assert_eq(check(PULSARC_SCHEMA_INSTANT, b, 12), PULSARC_OK);
    cr_assert_eq(check(PULSARC_SCHEMA_INSTANT, b, 8), PULSARC_ERR_INVALID_PAYLOAD);
    cr_assert_eq(check(PULSARC_SCHEMA_LOCAL_DATE_TIME, b, 16), PULSARC_OK);
    cr_assert_eq(check(PULSARC_SCHEMA_BYTES, b, 3), PULSARC_OK, "BYTES takes anything");
}

Test(schema, json_payload_must_parse)
{
    pulsarc_schema_t *s;
    pulsarc_schema_new_json(REC_DEF, &s);
    cr_assert_eq(pulsarc_schema_validate(s, "{\"a\":1,\"b\":\"x\"}", 15), PULSARC_OK);
    cr_assert_eq(pulsarc_schema_validate(s, " {\"a\":1} \n", 10), PULSARC_OK);
    cr_assert_eq(pulsarc_schema_validate(s, "\"text\"", 6), PULSARC_OK);
    cr_assert_eq(pulsarc_schema_validate(s, "{\"a\":", 5), PULSARC_ERR_INVALID_PAYLOAD);
    cr_assert(strstr(pulsarc_last_error_detail(), "not JSON"));
    cr_assert_eq(pulsarc_schema_validate(s, "{} x", 4), PULSARC_ERR_INVALID_PAYLOAD);
    cr_assert_eq(pulsarc_schema_validate(s, "", 0), PULSARC_ERR_INVALID_PAYLOAD);
    cr_assert_eq(pulsarc_schema_validate(s, "\"\xc3\"", 3), PULSARC_ERR_INVALID_PAYLOAD);
    pulsarc_schema_free(s);
}

/* Avro binary of Rec{a:int, b:string}: zigzag varint a, then length-prefixed b. */
Test(schema, avro_payload_decodes_when_avro_c_is_built_in)
{
    pulsarc_schema_t *s;
    cr_assert_eq(pulsarc_schema_new_avro(REC_DEF, &s), PULSARC_OK);
    const uint8_t good[] = { 0x02, 0x04, 'h', 'i' };     /* a=1, b="hi" */
    const uint8_t short_b[] = { 0x02, 0x06, 'h', 'i' };  /* b claims 3 bytes */
    const uint8_t extra[] = { 0x02, 0x04, 'h', 'i', 0 }; /* a byte left over */
    cr_assert_eq(pulsarc_schema_validate(s, good, sizeof good), PULSARC_OK);
    pulsarc_result want = pulsarc_schema_avro_validation_available() ? PULSARC_ERR_INVALID_PAYLOAD
                                                                     : PULSARC_OK;
    cr_assert_eq(pulsarc_schema_validate(s, short_b, sizeof short_b), want);
    cr_assert_eq(pulsarc_schema_validate(s, extra, sizeof extra), want);
    cr_assert_eq(pulsarc_schema_validate(s, "", 0), want);
    pulsarc_schema_free(s);
}

/* The Avro walk over every type: unions, enums, arrays and maps in blocks, fixed, nested
 * records; malformed lengths are refused without being allocated, and a block of a
 * billion items of no width ends at once. */
Test(schema, avro_walk_covers_every_type)
{
    if (!pulsarc_schema_avro_validation_available())
        return; /* without avro-c nothing is checked (avro_payload_decodes_... covers it) */
    static const char def[] =
        "{\"type\":\"record\",\"name\":\"T\",\"fields\":["
        "{\"name\":\"u\",\"type\":[\"null\",\"long\"]},"
        "{\"name\":\"e\",\"type\":{\"type\":\"enum\",\"name\":\"E\",\"symbols\":[\"A\",\"B\"]}},"
        "{\"name\":\"a\",\"type\":{\"type\":\"array\",\"items\":\"int\"}},"
        "{\"name\":\"m\",\"type\":{\"type\":\"map\",\"values\":\"boolean\"}},"
        "{\"name\":\"f\",\"type\":{\"type\":\"fixed\",\"name\":\"F\",\"size\":2}},"
        "{\"name\":\"d\",\"type\":\"double\"},"
        "{\"name\":\"n\",\"type\":{\"type\":\"array\",\"items\":\"null\"}}]}";
    pulsarc_schema_t *s;
    cr_assert_eq(pulsarc_schema_new_avro(def, &s), PULSARC_OK, "%s", pulsarc_last_error_detail());
    /* u=5 (branch 1), e=B, a=[1,2] in one block, m={"k":true} in a sized block, f, d=0,
     * n=[] */
    uint8_t good[] = { 0x02, 0x0a, 0x02, 0x04, 0x02, 0x04, 0x00, 0x01, 0x04, 0x02, 'k', 0x01,
                       0x00, 'x',  'y',  0,    0,    0,    0,    0,    0,    0,    0,   0x00 };
    cr_assert_eq(pulsarc_schema_validate(s, good, sizeof good), PULSARC_OK, "%s",
                 pulsarc_last_error_detail());
    uint8_t bad[sizeof good];
    memcpy(bad, good, sizeof good);
    bad[0] = 0x04; /* union branch 2 of 2 */
    cr_assert_eq(pulsarc_schema_validate(s, bad, sizeof bad), PULSARC_ERR_INVALID_PAYLOAD);
    cr_assert(strstr(pulsarc_last_error_detail(), "union"));
    memcpy(bad, good, sizeof good);
    bad[2] = 0x04; /* enum index 2 of 2 */
    cr_assert_eq(pulsarc_schema_validate(s, bad, sizeof bad), PULSARC_ERR_INVALID_PAYLOAD);
    memcpy(bad, good, sizeof good);
    bad[11] = 0x02; /* boolean 2 */
    cr_assert_eq(pulsarc_schema_validate(s, bad, sizeof bad), PULSARC_ERR_INVALID_PAYLOAD);
    /* A string claiming 2^62 bytes. */
    static const char sdef[] = "{\"type\":\"string\"}";
    pulsarc_schema_t *str;
    pulsarc_schema_new_avro(sdef, &str);
    cr_assert_eq(pulsarc_schema_validate(str, BYTES(0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
                                                    0x80, 0x01)),
                 PULSARC_ERR_INVALID_PAYLOAD);
    cr_assert_eq(pulsarc_schema_validate(str, BYTES(0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
                                                    0x80, 0x80, 0x01)),
                 PULSARC_ERR_INVALID_PAYLOAD, "an 11-byte varint");
    /* An int that overflows 32 bits. */
    pulsarc_schema_t *i;
    pulsarc_schema_new_avro("{\"type\":\"int\"}", &i);
    cr_assert_eq(pulsarc_schema_validate(i, BYTES(0xfe, 0xff, 0xff, 0xff, 0x0f)), PULSARC_OK);
    cr_assert_eq(pulsarc_schema_validate(i, BYTES(0x80, 0x80, 0x80, 0x80, 0x10)),
                 PULSARC_ERR_INVALID_PAYLOAD);
    /* A block of 2^62 nulls: no width, so it ends at once. */
    pulsarc_schema_t *nulls;
    pulsarc_schema_new_avro("{\"type\":\"array\",\"items\":\"null\"}", &nulls);
    cr_assert_eq(pulsarc_schema_validate(nulls, BYTES(0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
                                                      0x80, 0x40, 0x00)),
                 PULSARC_OK);
    pulsarc_schema_free(nulls);
    pulsarc_schema_free(i);
    pulsarc_schema_free(str);
    pulsarc_schema_free(s);
}

/* A linked list: every node is one self-reference. Java reads any length; the walk takes
 * lists up to its recursion bound and refuses deeper data instead of exhausting the stack. */
static pulsarc_result validate_list(pulsarc_schema_t *s, size_t nodes)
{
    uint8_t *p = malloc(2 * nodes);
    for (size_t i = 0; i < nodes; i++) {
        p[2 * i] = 0x02;                            /* v = 1 */
        p[2 * i + 1] = i + 1 < nodes ? 0x02 : 0x00; /* next: a node, or null */
    }
    pulsarc_result r = pulsarc_schema_validate(s, p, 2 * nodes);
    free(p);
    return r;
}

Test(schema, avro_recursive_data_up_to_the_bound)
{
    if (!pulsarc_schema_avro_validation_available())
        return;
    pulsarc_schema_t *s;
    cr_assert_eq(pulsarc_schema_new_avro("{\"type\":\"record\",\"name\":\"Node\",\"fields\":["
                                         "{\"name\":\"v\",\"type\":\"int\"},"
                                         "{\"name\":\"next\",\"type\":[\"null\",\"Node\"]}]}",
                                         &s),
                 PULSARC_OK, "%s", pulsarc_last_error_detail());
    cr_assert_eq(validate_list(s, 1), PULSARC_OK, "%s", pulsarc_last_error_detail());
    cr_assert_eq(validate_list(s, 500), PULSARC_OK, "%s", pulsarc_last_error_detail());
    cr_assert_eq(validate_list(s, 600), PULSARC_ERR_INVALID_PAYLOAD);
    cr_assert(strstr(pulsarc_last_error_detail(), "recursive"), "%s", pulsarc_last_error_detail());
    pulsarc_schema_free(s);
}

Test(schema, key_value_inline_checks_both_parts)
{
    pulsarc_schema_t *k, *v, *kv;
    pulsarc_schema_new_primitive(PULSARC_SCHEMA_STRING, &k);
    pulsarc_schema_new_primitive(PULSARC_SCHEMA_INT32, &v);
    pulsarc_schema_new_key_value(k, v, PULSARC_KV_INLINE, &kv);
    cr_assert_eq(pulsarc_schema_validate(kv, BYTES(0, 0, 0, 1, 'k', 0, 0, 0, 4, 0, 0, 0, 7)),
                 PULSARC_OK);
    cr_assert_eq(pulsarc_schema_validate(kv, BYTES(0, 0, 0, 1, 'k', 0, 0, 0, 2, 0, 7)),
                 PULSARC_ERR_INVALID_PAYLOAD);
    cr_assert_str_eq(pulsarc_last_error_detail(),
                     "KeyValue value: a INT32 value is 4 bytes, the payload has 2");
    /* Java's null parts (length -1) pass whatever the schema. */
    cr_assert_eq(pulsarc_schema_validate(kv, BYTES(0, 0, 0, 1, 'k', 0xff, 0xff, 0xff, 0xff)),
                 PULSARC_OK);
    cr_assert_eq(pulsarc_schema_validate(kv, BYTES(0xff, 0xff, 0xff, 0xff, 0, 0, 0, 4, 0, 0, 0, 1)),
                 PULSARC_OK);
    cr_assert_eq(pulsarc_schema_validate(kv, BYTES(0, 0, 0, 1, 0xff, 0, 0, 0, 4, 0, 0, 0, 7)),
                 PULSARC_ERR_INVALID_PAYLOAD);
    cr_assert(strstr(pulsarc_last_error_detail(), "key"));
    cr_assert_eq(pulsarc_schema_validate(kv, BYTES(0, 0, 0, 9, 'k')), PULSARC_ERR_INVALID_PAYLOAD);
    cr_assert_eq(pulsarc_schema_validate(kv, BYTES(0, 0, 0)), PULSARC_ERR_INVALID_PAYLOAD);
    cr_assert_eq(pulsarc_schema_validate(kv, BYTES(0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 7, 1)),
                 PULSARC_ERR_INVALID_PAYLOAD, "trailing byte");
    pulsarc_schema_free(k);
    pulsarc_schema_free(v);
    pulsarc_schema_free(kv);
}

/* ---- equality and hashing (the multi-schema cache) ---------------------------------- */

Test(schema, equal_schemas_hash_alike_whatever_the_property_order)
{
    pulsarc_schema_t *a, *b, *c;
    pulsarc_schema_new(PULSARC_SCHEMA_PROTOBUF, "p", "def", 3, &a);
    pulsarc_schema_new(PULSARC_SCHEMA_PROTOBUF, "p", "def", 3, &b);
    pulsarc_schema_new(PULSARC_SCHEMA_PROTOBUF, "p", "deg", 3, &c);
    pulsarc_schema_set_property(a, "x", "1");
    pulsarc_schema_set_property(a, "y", "2");
    pulsarc_schema_set_property(b, "y", "2");
    pulsarc_schema_set_property(b, "x", "1");
    cr_assert(pc_schema_equal(a, b));
    cr_assert_eq(pc_schema_hash(a), pc_schema_hash(b));
    cr_assert_not(pc_schema_equal(a, c));
    cr_assert_neq(pc_schema_hash(a), pc_schema_hash(c));
    pulsarc_schema_set_property(b, "x", "3");
    cr_assert_not(pc_schema_equal(a, b));
    cr_assert_neq(pc_schema_hash(a), pc_schema_hash(b));
    pulsarc_schema_free(a);
    pulsarc_schema_free(b);
    pulsarc_schema_free(c);
}

Test(schema, invalid_payload_has_a_name_and_text)
{
    cr_assert_str_eq(pulsarc_result_name(PULSARC_ERR_INVALID_PAYLOAD), "INVALID_PAYLOAD");
    cr_assert_eq((int)PULSARC_ERR_INVALID_PAYLOAD, -27);
    cr_assert(strstr(pulsarc_strerror(PULSARC_ERR_INVALID_PAYLOAD), "schema"));
}

/* SEPARATED: the payload is the value alone, checked against the value schema. */
Test(schema, key_value_separated_checks_the_value)
{
    pulsarc_schema_t *k, *v, *kv;
    pulsarc_schema_new_primitive(PULSARC_SCHEMA_STRING, &k);
    pulsarc_schema_new_primitive(PULSARC_SCHEMA_INT64, &v);
    pulsarc_schema_new_key_value(k, v, PULSARC_KV_SEPARATED, &kv);
    uint8_t b[8];
    pulsarc_schema_encode_int64(42, b);
    cr_assert_eq(pulsarc_schema_validate(kv, b, 8), PULSARC_OK);
    cr_assert_eq(pulsarc_schema_validate(kv, b, 4), PULSARC_ERR_INVALID_PAYLOAD);
    pulsarc_schema_free(k);
    pulsarc_schema_free(v);
    pulsarc_schema_free(kv);
}
