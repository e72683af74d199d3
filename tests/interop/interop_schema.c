/* Publishes with schemas, for the schema interop tests (test_schema.py): what the
 * command-line tool cannot express (KeyValue pairs with null parts, per-message schemas,
 * AUTO_PRODUCE, exact payload bytes).
 *
 *   interop_schema URL TOPIC [SETUP]... [MESSAGE]...
 *
 * SETUP (before the producer is created, in any order):
 *   --conf KEY=VALUE         producer setting (repeatable)
 *   --schema SPEC            the producer's schema
 *   --kv ENC KEYSPEC VALSPEC the producer's schema: KeyValue, ENC inline | separated
 *   --alt SPEC               a second schema, for --msg-alt
 *   SPEC is TYPE (string, int32, auto_produce, ...) or TYPE:FILE (json, avro: the
 *   definition is in FILE).
 * MESSAGE (sent in order with send_async, then one flush):
 *   --msg HEX                payload in hex, with the producer's schema
 *   --msg-file FILE          payload from FILE, with the producer's schema
 *   --msg-alt HEX            payload with the --alt schema (pulsarc_message_set_schema)
 *   --msg-own HEX            payload with the producer's schema set on the message too
 *   --kv-msg KEYHEX VALHEX   a KeyValue pair; "-" is a null part
 *
 * Prints, in message order, "INDEX ok LEDGER ENTRY BATCH_INDEX" or
 * "INDEX rejected|failed RESULT_NAME DETAIL", then "schema-version=V" and
 * "sent=N failed=M". Exit status: 0 when the producer was created (whatever happened to
 * the messages), 3 when creating it failed ("create-failed RESULT_NAME DETAIL"), 2 on a
 * usage error. */
#include <inttypes.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver.h"
#include "pulsarc/pulsarc.h"

#define MAX_MESSAGES 4096
#define LINE_MAX_LEN 1200

static char lines[MAX_MESSAGES][LINE_MAX_LEN];
static atomic_int ok_count, failed_count;

static _Noreturn void usage(const char *why, const char *arg)
{
    fprintf(stderr, "interop_schema: %s%s%s\n", why, arg ? ": " : "", arg ? arg : "");
    exit(2);
}

static void *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        usage("cannot open", path);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)size + 1);
    if (!buf || fread(buf, 1, (size_t)size, f) != (size_t)size)
        usage("cannot read", path);
    fclose(f);
    buf[size] = '\0';
    *len = (size_t)size;
    return buf;
}

/* "-" is NULL (a null KeyValue part); otherwise hex digits. */
static uint8_t *from_hex(const char *hex, size_t *len)
{
    *len = 0;
    if (strcmp(hex, "-") == 0)
        return NULL;
    size_t n = strlen(hex);
    if (n % 2)
        usage("odd hex length", hex);
    uint8_t *out = malloc(n / 2 + 1);
    for (size_t i = 0; i < n / 2; i++) {
        unsigned v;
        if (sscanf(hex + 2 * i, "%2x", &v) != 1)
            usage("bad hex", hex);
        out[i] = (uint8_t)v;
    }
    *len = n / 2;
    return out;
}

static pulsarc_schema_t *make_schema(const char *spec)
{
    char type_name[64];
    const char *colon = strchr(spec, ':');
    size_t n = colon ? (size_t)(colon - spec) : strlen(spec);
    if (n >= sizeof type_name)
        usage("bad schema spec", spec);
    memcpy(type_name, spec, n);
    type_name[n] = '\0';
    pulsarc_schema_type type;
    if (pulsarc_schema_type_from_name(type_name, &type) != PULSARC_OK)
        usage("unknown schema type", type_name);
    pulsarc_schema_t *schema = NULL;
    pulsarc_result res;
    if (colon) {
        size_t len;
        char *definition = read_file(colon + 1, &len);
        if (type == PULSARC_SCHEMA_JSON)
            res = pulsarc_schema_new_json(definition, &schema);
        else if (type == PULSARC_SCHEMA_AVRO)
            res = pulsarc_schema_new_avro(definition, &schema);
        else
            res = pulsarc_schema_new(type, NULL, definition, len, &schema);
        free(definition);
    } else {
        res = pulsarc_schema_new_primitive(type, &schema);
    }
    if (res != PULSARC_OK) {
        fprintf(stderr, "schema %s: %s (%s)\n", spec, pulsarc_result_name(res),
                pulsarc_last_error_detail());
        exit(2);
    }
    return schema;
}

/* A failed message's line; the detail (a broker's text may span lines) on one line. */
static void record(int index, const char *what, pulsarc_result res)
{
    if (index < MAX_MESSAGES) {
        snprintf(lines[index], LINE_MAX_LEN, "%d %s %s %s", index, what, pulsarc_result_name(res),
                 pulsarc_last_error_detail());
        for (char *c = lines[index]; *c; c++)
            if (*c == '\n' || *c == '\r')
                *c = ' ';
    }
    atomic_fetch_add(&failed_count, 1);
}

static void on_sent(pulsarc_producer_t *p, pulsarc_result res, const pulsarc_message_id_t *id,
                    void *ctx)
{
    int index = (int)(intptr_t)ctx;
    if (res != PULSARC_OK) {
        record(index, "failed", res);
        return;
    }
    if (index < MAX_MESSAGES)
        snprintf(lines[index], LINE_MAX_LEN, "%d ok %" PRId64 " %" PRId64 " %" PRId32, index,
                 pulsarc_message_id_ledger(id), pulsarc_message_id_entry(id),
                 pulsarc_message_id_batch_index(id));
    atomic_fetch_add(&ok_count, 1);
}

static bool is_setup(const char *arg)
{
    return !strcmp(arg, "--conf") || !strcmp(arg, "--schema") || !strcmp(arg, "--kv") ||
           !strcmp(arg, "--alt") || !strcmp(arg, "--encrypt");
}

int main(int argc, char **argv)
{
    if (argc < 3)
        usage("usage: interop_schema URL TOPIC [SETUP]... [MESSAGE]...", NULL);
    pulsarc_producer_config_t *conf = pulsarc_producer_config_new();
    pulsarc_producer_config_set(conf, "blockIfQueueFull", "true");
    pulsarc_schema_t *schema = NULL, *alt = NULL;
    int i = 3;
    for (; i < argc && is_setup(argv[i]); i += 2) {
        if (i + 1 >= argc)
            usage("missing value for", argv[i]);
        const char *v = argv[i + 1];
        if (!strcmp(argv[i], "--schema")) {
            schema = make_schema(v);
        } else if (!strcmp(argv[i], "--alt")) {
            alt = make_schema(v);
        } else if (strcmp(argv[i], "--kv")) {
            drv_setting(argv[i], v, NULL, conf); /* --conf, --encrypt */
        } else {                                 /* --kv ENC KEYSPEC VALSPEC */
            if (i + 3 >= argc)
                usage("--kv needs ENC KEYSPEC VALSPEC", NULL);
            pulsarc_schema_t *key = make_schema(argv[i + 2]), *value = make_schema(argv[i + 3]);
            pulsarc_key_value_encoding enc = !strcmp(v, "separated") ? PULSARC_KV_SEPARATED
                                                                     : PULSARC_KV_INLINE;
            if (pulsarc_schema_new_key_value(key, value, enc, &schema) != PULSARC_OK)
                usage("KeyValue schema refused", pulsarc_last_error_detail());
            pulsarc_schema_free(key);
            pulsarc_schema_free(value);
            i += 2;
        }
    }
    if (schema && pulsarc_producer_config_set_schema(conf, schema) != PULSARC_OK)
        usage("producer schema refused", pulsarc_last_error_detail());

    pulsarc_client_t *client = NULL;
    pulsarc_producer_t *producer = NULL;
    pulsarc_result res = pulsarc_client_new(argv[1], NULL, &client);
    if (res == PULSARC_OK)
        res = drv_create_producer(client, argv[2], conf, false, &producer);
    else
        pulsarc_producer_config_free(conf);
    if (res != PULSARC_OK) {
        printf("create-failed %s %s\n", pulsarc_result_name(res), pulsarc_last_error_detail());
        if (client)
            pulsarc_client_destroy(client);
        pulsarc_schema_free(schema);
        pulsarc_schema_free(alt);
        return 3;
    }

    pulsarc_message_t *msg = pulsarc_message_new();
    int index = 0;
    for (; i < argc; i += 2, index++) {
        if (index >= MAX_MESSAGES || i + 1 >= argc)
            usage("too many messages, or a message option without value", argv[i]);
        const char *opt = argv[i];
        size_t len, key_len = 0;
        uint8_t *key = NULL, *payload;
        pulsarc_message_clear(msg);
        if (!strcmp(opt, "--msg-file"))
            payload = read_file(argv[i + 1], &len);
        else if (!strcmp(opt, "--kv-msg") && i + 2 < argc)
            key = from_hex(argv[i + 1], &key_len), payload = from_hex(argv[i + 2], &len), i++;
        else if (!strcmp(opt, "--msg") || !strcmp(opt, "--msg-alt") || !strcmp(opt, "--msg-own"))
            payload = from_hex(argv[i + 1], &len);
        else
            usage("unknown option", opt);

        if (!strcmp(opt, "--kv-msg"))
            res = pulsarc_message_set_key_value(msg, schema, key, key_len, payload, len);
        else
            res = pulsarc_message_set_payload(msg, payload, len);
        if (res == PULSARC_OK && !strcmp(opt, "--msg-alt"))
            res = pulsarc_message_set_schema(msg, alt);
        if (res == PULSARC_OK && !strcmp(opt, "--msg-own"))
            res = pulsarc_message_set_schema(msg, schema);
        if (res == PULSARC_OK)
            res = pulsarc_producer_send_async(producer, msg, on_sent, (void *)(intptr_t)index);
        if (res != PULSARC_OK)
            record(index, "rejected", res);
        free(key); /* copied by the send (or by set_key_value) */
        free(payload);
    }
    pulsarc_producer_flush(producer);
    int64_t version = pulsarc_producer_schema_version(producer);
    pulsarc_producer_close(producer);
    pulsarc_producer_free(producer);
    pulsarc_client_destroy(client);
    pulsarc_message_free(msg);
    pulsarc_schema_free(schema);
    pulsarc_schema_free(alt);
    for (int k = 0; k < index; k++)
        printf("%s\n", lines[k]);
    printf("schema-version=%" PRId64 "\n", version);
    printf("sent=%d failed=%d\n", atomic_load(&ok_count), atomic_load(&failed_count));
    return 0;
}
