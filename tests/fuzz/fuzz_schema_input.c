/* libFuzzer target for the schemas a broker hands out and the payload checks made with
 * them: what an AUTO_PRODUCE producer does with a GET_SCHEMA_RESPONSE and then with
 * every payload it sends.
 *
 * Input (make_schema_input_seeds.c writes the seeds):
 *   bytes 0-1   L, big-endian: the length of the next part (cut to what is left)
 *   L bytes     a packed CommandGetSchemaResponse, as the broker's frame carries it
 *   the rest    a payload
 * The response goes through the library's own answer handler (producer/topic_schema.c:
 * error code, schema fields, properties, the KeyValue split with its parts' properties
 * JSON, Avro definitions through avro-c), with the result the connection gives it. The
 * schema that comes out, if any, then checks the payload as a send does.
 *
 * Checked, beyond no crash, leak or undefined behaviour:
 *   - the answer is called back exactly once, with a schema only on success, a detail on
 *     failure, and a schema that says what the response said (type, name, definition,
 *     the last value of each property); None gives no schema;
 *   - a check ends in PULSARC_OK or PULSARC_ERR_INVALID_PAYLOAD with a detail; a
 *     fixed-width type accepts exactly its width, STRING exactly valid UTF-8;
 *   - a KeyValue schema has both parts; an INLINE payload built from two pieces of the
 *     payload passes exactly when both pieces pass their part's check (SEPARATED: when
 *     the payload passes the value part's check); and rebuilding the KeyValue schema
 *     from its parts (pulsarc_schema_new_key_value) and splitting that again gives the
 *     same parts back (when their properties are UTF-8, as JSON needs).
 *
 * FUZZ_SCHEMA_INPUT_LOG=1 in the environment prints the answer and the payload check's
 * verdict to stderr, to follow what a reproducer does. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The answer handler and the conversion are private to topic_schema.c: compile them in
 * here (the fetch entry point renamed, so the library's copy is not duplicated). */
#define pc_topic_schema_fetch fuzz_topic_schema_fetch_unused
#include "producer/topic_schema.c"
#undef pc_topic_schema_fetch

#include "common/buf.h"
#include "fuzz_check.h"

#define CHECK(cond, ...) FUZZ_CHECK("fuzz_schema_input", cond, __VA_ARGS__)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct answer {
    int calls;
    pulsarc_result res;
    pc_schema_t *schema;
} answer_t;

static void on_schema(pulsarc_result res, pulsarc_schema_t *schema, void *ctx)
{
    answer_t *a = ctx;
    a->calls++;
    a->res = res;
    a->schema = schema;
}

/* What conn_requests.c hands the requester for this response. */
static pulsarc_result routed_result(const Pulsar__Proto__CommandGetSchemaResponse *r)
{
    if (!r->has_error_code)
        return PULSARC_OK;
    pulsarc_result res = pc_result_from_server_error(r->error_code);
    pc_set_detail(r->error_message ? r->error_message : "");
    return res;
}

static void check_detail(void)
{
    const char *d = pulsarc_last_error_detail();
    CHECK(d && *d, "a failure without a detail");
}

/* The schema says what the response's Schema message said. */
static void check_conversion(const pc_schema_t *s, const Pulsar__Proto__Schema *in)
{
    CHECK((int)s->type == (int)in->type, "type %d from %d", (int)s->type, (int)in->type);
    CHECK(!strcmp(s->name, in->name), "the name changed");
    CHECK(s->len == in->schema_data.len &&
              (s->len == 0 || !memcmp(s->data, in->schema_data.data, s->len)),
          "the definition changed");
    CHECK(s->data[s->len] == 0, "the definition is not NUL-terminated");
    CHECK(s->n_props <= in->n_properties, "more properties than sent");
    for (size_t i = 0; i < in->n_properties; i++) {
        const char *last = NULL;
        for (size_t j = i; j < in->n_properties; j++)
            if (!strcmp(in->properties[j]->key, in->properties[i]->key))
                last = in->properties[j]->value;
        const char *v = pulsarc_schema_property(s, in->properties[i]->key);
        CHECK(v && !strcmp(v, last), "property \"%s\" lost or changed", in->properties[i]->key);
    }
    CHECK(pc_schema_equal(s, s) && pc_schema_hash(s) == pc_schema_hash(s), "equal or hash");
}

static pulsarc_result check_payload(const pc_schema_t *s, const uint8_t *p, size_t len)
{
    pulsarc_result res = pc_schema_check(s, p, len);
    CHECK(res == PULSARC_OK || res == PULSARC_ERR_INVALID_PAYLOAD, "check result %s",
          pulsarc_result_name(res));
    if (res != PULSARC_OK)
        check_detail();
    size_t width = pc_schema_fixed_width(s->type);
    if (width)
        CHECK((res == PULSARC_OK) == (len == width), "a %zu-byte %s value judged wrongly", len,
              pulsarc_schema_type_name(s->type));
    if (s->type == PULSARC_SCHEMA_STRING)
        CHECK((res == PULSARC_OK) == pc_utf8_valid(p, len, NULL), "STRING judged wrongly");
    return res;
}

static bool props_utf8(const pc_schema_t *s)
{
    for (size_t i = 0; i < s->n_props; i++)
        if (!pc_utf8_valid((const uint8_t *)s->props[i].key, strlen(s->props[i].key), NULL) ||
            !pc_utf8_valid((const uint8_t *)s->props[i].value, strlen(s->props[i].value), NULL))
            return false;
    return true;
}

/* Rebuild a KeyValue schema from its parts, split it as if a broker had sent it, and get
 * the same parts back. */
static void check_kv_roundtrip(const pc_schema_t *kv)
{
    const pc_schema_t *k = kv->kv_key, *v = kv->kv_value;
    if (!props_utf8(k) || !props_utf8(v))
        return;
    pc_schema_t *built = NULL;
    pulsarc_result res = pulsarc_schema_new_key_value(k, v, kv->kv_encoding, &built);
    if (res == PULSARC_ERR_NO_MEMORY)
        return;
    CHECK(res == PULSARC_OK, "cannot rebuild a KeyValue schema: %s", pulsarc_last_error_detail());
    pc_schema_t *again = pc_schema_alloc(PULSARC_SCHEMA_KEY_VALUE, built->name, built->data,
                                         built->len);
    CHECK(again, "out of memory");
    for (size_t i = 0; i < built->n_props; i++)
        CHECK(pc_schema_put_property(again, built->props[i].key, built->props[i].value) == 0,
              "out of memory");
    res = pc_schema_kv_split(again);
    CHECK(res == PULSARC_OK, "a rebuilt KeyValue schema does not split: %s",
          pulsarc_last_error_detail());
    CHECK(again->kv_encoding == kv->kv_encoding, "the encoding changed");
    CHECK(pc_schema_equal(again->kv_key, k), "the key part changed");
    CHECK(pc_schema_equal(again->kv_value, v), "the value part changed");
    pc_schema_unref(again);
    pc_schema_unref(built);
}

/* INLINE: [len][key][len][value] passes exactly when both pieces pass. */
static void check_kv_inline(const pc_schema_t *kv, const uint8_t *p, size_t len)
{
    size_t cut = len ? p[0] % len : 0;
    const uint8_t *key = len ? p + 1 : p, *value = key + (cut ? cut - 1 : 0);
    size_t key_len = cut ? cut - 1 : 0, value_len = len - (len ? 1 : 0) - key_len;
    uint8_t *both;
    size_t both_len;
    if (pc_schema_kv_inline(key, key_len, value, value_len, &both, &both_len) != PULSARC_OK)
        return;
    bool parts_ok = check_payload(kv->kv_key, key, key_len) == PULSARC_OK &&
                    check_payload(kv->kv_value, value, value_len) == PULSARC_OK;
    pulsarc_result res = check_payload(kv, both, both_len);
    CHECK((res == PULSARC_OK) == parts_ok, "an INLINE pair judged unlike its parts");
    free(both);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    size_t len = (size_t)data[0] << 8 | data[1];
    data += 2;
    size -= 2;
    if (len > size)
        len = size;
    Pulsar__Proto__CommandGetSchemaResponse
        *r = pulsar__proto__command_get_schema_response__unpack(NULL, len, data);
    if (!r)
        return 0;
    const uint8_t *payload = data + len;
    size_t payload_len = size - len;

    Pulsar__Proto__BaseCommand cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__GET_SCHEMA_RESPONSE;
    cmd.getschemaresponse = r;
    answer_t a = { 0 };
    fetch_t *f = calloc(1, sizeof *f);
    CHECK(f && (f->topic = strdup("persistent://public/default/fuzz")), "out of memory");
    f->cb = on_schema;
    f->ctx = &a;
    pc_set_detail("");
    on_answer(NULL, routed_result(r), &cmd, f);

    CHECK(a.calls == 1, "called back %d times", a.calls);
    if (getenv("FUZZ_SCHEMA_INPUT_LOG"))
        fprintf(stderr, "answer: %s %s\n", pulsarc_result_name(a.res),
                a.res == PULSARC_OK ? "" : pulsarc_last_error_detail());
    CHECK(a.res == PULSARC_OK || !a.schema, "a schema with a failure");
    if (a.res != PULSARC_OK)
        check_detail();
    if (a.res == PULSARC_OK && r->schema && !r->has_error_code)
        CHECK(a.schema || r->schema->type == PULSAR__PROTO__SCHEMA__TYPE__None,
              "success without a schema");
    pc_schema_t *s = a.schema;
    if (s) {
        check_conversion(s, r->schema);
        pulsarc_result res = check_payload(s, payload, payload_len);
        if (getenv("FUZZ_SCHEMA_INPUT_LOG"))
            fprintf(stderr, "%s schema \"%s\" (avro %s), %zu-byte payload: %s %s\n",
                    pulsarc_schema_type_name(s->type), s->name, s->avro ? "parsed" : "none",
                    payload_len, pulsarc_result_name(res),
                    res == PULSARC_OK ? "" : pulsarc_last_error_detail());
        if (s->type == PULSARC_SCHEMA_KEY_VALUE) {
            CHECK(s->kv_key && s->kv_value, "a KeyValue schema without its parts");
            CHECK(s->kv_key->len + s->kv_value->len + 8 == s->len, "parts of the wrong size");
            if (s->kv_encoding == PULSARC_KV_INLINE)
                check_kv_inline(s, payload, payload_len);
            else
                CHECK((check_payload(s, payload, payload_len) == PULSARC_OK) ==
                          (check_payload(s->kv_value, payload, payload_len) == PULSARC_OK),
                      "a SEPARATED payload judged unlike its value");
            check_kv_roundtrip(s);
        }
        pc_schema_unref(s);
    }
    pulsar__proto__command_get_schema_response__free_unpacked(r, NULL);
    return 0;
}
