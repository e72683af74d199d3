/* Client and producer configurations and message builders from the arguments (config.h). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

static _Noreturn void config_error(const char *option, const char *key, const char *value,
                                   pulsarc_result res)
{
    char detail[DETAIL_MAX];
    copy_error_detail(detail);
    /* A secret (authParams) stays off the terminal and out of CI logs. */
    usage_error("%s %s=%s: %s%s%s", option, key, client_conf_is_secret(key) ? "(hidden)" : value,
                pulsarc_strerror(res), detail[0] ? ": " : "", detail);
}

static void apply_client_settings(pulsarc_client_config_t *conf, const struct kv_list *list,
                                  const char *option)
{
    for (size_t i = 0; i < list->count; i++) {
        const struct kv *kv = &list->items[i];
        pulsarc_result res = pulsarc_client_config_set(conf, kv->key, kv->value);
        if (res != PULSARC_OK)
            config_error(option, kv->key, kv->value, res);
    }
}

/* --conf-file's settings; an error names the file and line. */
static void apply_file_settings(pulsarc_client_config_t *conf, const struct args *a)
{
    for (size_t i = 0; i < a->file.n_settings; i++) {
        const struct client_conf_setting *cs = &a->file.settings[i];
        pulsarc_result res = pulsarc_client_config_set(conf, cs->key, cs->value);
        if (res != PULSARC_OK) {
            char where[512];
            snprintf(where, sizeof where, "--conf-file %s:%d:", a->conf_file, cs->line);
            config_error(where, cs->key, cs->value, res);
        }
    }
}

/* --verbose shows the effective settings, one per line, so a run can be reproduced exactly. */
static void print_config_dump(const char *what, const char *dump)
{
    while (*dump) {
        size_t n = strcspn(dump, "\n");
        fprintf(stderr, PROG ": %s config: %.*s\n", what, (int)n, dump);
        dump += n + (dump[n] == '\n');
    }
}

pulsarc_client_config_t *make_client_config(const struct args *a)
{
    pulsarc_client_config_t *conf = pulsarc_client_config_new();
    if (!conf)
        out_of_memory();
    /* --verbose, --memory-limit, the file, then the TLS and auth flags: each overrides
     * what came before, and --client-conf overrides them all. */
    if (a->verbose) {
        pulsarc_result res = pulsarc_client_config_set(conf, "logLevel", "debug");
        if (res != PULSARC_OK)
            config_error("--verbose", "logLevel", "debug", res);
    }
    if (a->memory_limit) {
        pulsarc_result res = pulsarc_client_config_set(conf, "memoryLimitBytes", a->memory_limit);
        if (res != PULSARC_OK)
            config_error("--memory-limit", "memoryLimitBytes", a->memory_limit, res);
    }
    apply_file_settings(conf, a);
    apply_client_settings(conf, &a->security, "flag");
    apply_client_settings(conf, &a->client_conf, "--client-conf");
    if (a->verbose) {
        size_t n = pulsarc_client_config_dump(conf, NULL, 0);
        char *buf = xrealloc(NULL, n + 1);
        pulsarc_client_config_dump(conf, buf, n + 1);
        print_config_dump("client", buf);
        free(buf);
    }
    return conf;
}

static void apply_producer_settings(pulsarc_producer_config_t *conf, const struct kv_list *list,
                                    const char *option)
{
    for (size_t i = 0; i < list->count; i++) {
        const struct kv *kv = &list->items[i];
        pulsarc_result res = pulsarc_producer_config_set(conf, kv->key, kv->value);
        if (res != PULSARC_OK)
            config_error(option, kv->key, kv->value, res);
    }
}

pulsarc_producer_config_t *make_producer_config(const struct args *a)
{
    pulsarc_producer_config_t *conf = pulsarc_producer_config_new();
    if (!conf)
        out_of_memory();
    /* CLI defaults first, then the dedicated flags, then --conf: the escape hatch wins.
     * New dedicated flags (--compression, --chunking, ...) become rows here. */
    const struct {
        const char *option, *key, *value;
    } settings[] = {
        {"default", "blockIfQueueFull", "true"},
        {"--producer-name", "producerName", a->producer_name},
    };
    for (size_t i = 0; i < sizeof settings / sizeof settings[0]; i++) {
        if (!settings[i].value)
            continue; /* flag not given: keep the library default */
        pulsarc_result res = pulsarc_producer_config_set(conf, settings[i].key, settings[i].value);
        if (res != PULSARC_OK)
            config_error(settings[i].option, settings[i].key, settings[i].value, res);
    }
    if (a->schema_in) {
        pulsarc_result res =
            pulsarc_producer_config_set_schema(conf, schema_input_schema(a->schema_in));
        if (res != PULSARC_OK)
            config_error("--schema-type", "schema", a->schema.type ? a->schema.type : "", res);
    }
    apply_producer_settings(conf, &a->flag_settings, "flag");
    for (size_t i = 0; i < a->enc_names.count; i++) {
        const char *name = a->enc_names.items[i].key, *file = a->enc_keys.items[i].key;
        pulsarc_result res = pulsarc_producer_config_add_encryption_key_file(conf, name, file);
        if (res != PULSARC_OK)
            config_error("--encryption-public-key", name, file, res);
    }
    apply_producer_settings(conf, &a->conf, "--conf");
    if (a->verbose) {
        size_t n = pulsarc_producer_config_dump(conf, NULL, 0);
        char *buf = xrealloc(NULL, n + 1);
        pulsarc_producer_config_dump(conf, buf, n + 1);
        print_config_dump("producer", buf);
        free(buf);
    }
    return conf;
}

/* The message builder carries key and properties; only the payload changes per send. */
pulsarc_message_t *make_message(const struct args *a)
{
    pulsarc_message_t *msg = pulsarc_message_new();
    if (!msg)
        out_of_memory();
    pulsarc_result res = PULSARC_OK;
    if (a->key && !schema_input_is_key_value(a->schema_in)) /* else: a KeyValue key */
        res = pulsarc_message_set_key(msg, a->key);
    if (res != PULSARC_OK)
        usage_error("--key '%s': %s", a->key, pulsarc_strerror(res));
    for (size_t i = 0; i < a->properties.count; i++) {
        const struct kv *kv = &a->properties.items[i];
        res = pulsarc_message_set_property(msg, kv->key, kv->value);
        if (res != PULSARC_OK)
            usage_error("--property %s=%s: %s", kv->key, kv->value, pulsarc_strerror(res));
    }
    return msg;
}
