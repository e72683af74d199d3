/* Client and producer configurations and message builders from the arguments (config.h). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* The value is never repeated: a misspelt key cannot tell whether it held a secret
 * (authparams=token:...), and for a known key the library's detail quotes what it could
 * not use, unless that is a secret. */
static _Noreturn void config_error(const char *option, const char *key, pulsarc_result res)
{
    char detail[DETAIL_MAX];
    copy_error_detail(detail);
    usage_error("%s %s: %s%s%s", option, key, pulsarc_strerror(res), detail[0] ? ": " : "",
                detail);
}

static void apply_client_settings(pulsarc_client_config_t *conf, const struct kv_list *list,
                                  const char *option)
{
    for (size_t i = 0; i < list->count; i++) {
        const struct kv *kv = &list->items[i];
        pulsarc_result res = pulsarc_client_config_set(conf, kv->key, kv->value);
        if (res != PULSARC_OK)
            config_error(option, kv->key, res);
    }
}

/* A dedicated flag that is one client setting. */
static void apply_flag(pulsarc_client_config_t *conf, const char *option, const char *key,
                       const char *value)
{
    pulsarc_result res = pulsarc_client_config_set(conf, key, value);
    if (res != PULSARC_OK)
        config_error(option, key, res);
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
            config_error(where, cs->key, res);
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
    /* --verbose, --memory-limit, --listener-name, the file, then the TLS and auth flags:
     * each overrides what came before, and --client-conf overrides them all. */
    if (a->verbose)
        apply_flag(conf, "--verbose", "logLevel", "debug");
    if (a->memory_limit)
        apply_flag(conf, "--memory-limit", "memoryLimitBytes", a->memory_limit);
    if (a->listener_name)
        apply_flag(conf, "--listener-name", "listenerName", a->listener_name);
    if (a->txn_batch)
        apply_flag(conf, "--txn-batch", "enableTransaction", "true");
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
            config_error(option, kv->key, res);
    }
}

/* The producer's settings as "key=value" lines (malloc'ed). */
static char *producer_dump(const pulsarc_producer_config_t *conf)
{
    size_t n = pulsarc_producer_config_dump(conf, NULL, 0);
    char *dump = xrealloc(NULL, n + 1);
    pulsarc_producer_config_dump(conf, dump, n + 1);
    return dump;
}

/* The effective blockIfQueueFull (the tool's default, or what --conf made of it), read
 * back from the library, so that its spellings ("yes", "1") mean what they mean there. */
static bool blocks_if_queue_full(const char *dump)
{
    static const char key[] = "blockIfQueueFull=";
    const char *line = dump;
    if (strncmp(line, key, sizeof key - 1) != 0 && (line = strstr(dump, "\nblockIfQueueFull=")))
        line++;
    return line && strncmp(line + sizeof key - 1, "true", 4) == 0;
}

pulsarc_producer_config_t *make_producer_config(const struct args *a, bool *wait_for_room)
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
            config_error(settings[i].option, settings[i].key, res);
    }
    if (a->schema_in) {
        pulsarc_result res =
            pulsarc_producer_config_set_schema(conf, schema_input_schema(a->schema_in));
        if (res != PULSARC_OK)
            config_error("--schema-type", a->schema.type ? a->schema.type : "bytes", res);
    }
    apply_producer_settings(conf, &a->flag_settings, "flag");
    for (size_t i = 0; i < a->producer_properties.count; i++) {
        const struct kv *kv = &a->producer_properties.items[i];
        pulsarc_result res = pulsarc_producer_config_set_property(conf, kv->key, kv->value);
        if (res != PULSARC_OK)
            config_error("--producer-property", kv->key, res);
    }
    for (size_t i = 0; i < a->enc_names.count; i++) {
        const char *name = a->enc_names.items[i].key, *file = a->enc_keys.items[i].key;
        pulsarc_result res = pulsarc_producer_config_add_encryption_key_file(conf, name, file);
        if (res != PULSARC_OK)
            config_error("--encryption-public-key", file, res);
    }
    apply_producer_settings(conf, &a->conf, "--conf");
    char *dump = producer_dump(conf);
    if (a->verbose)
        print_config_dump("producer", dump);
    *wait_for_room = blocks_if_queue_full(dump);
    free(dump);
    pulsarc_result res = pulsarc_producer_config_set(conf, "blockIfQueueFull", "false");
    if (res != PULSARC_OK)
        config_error("default", "blockIfQueueFull", res);
    return conf;
}

/* --replication-clusters C1,C2: comma-separated names, none empty. */
static void set_replication_clusters(pulsarc_message_t *msg, const char *list)
{
    char *copy = xmemdup(list, strlen(list));
    const char **names = NULL;
    size_t n = 0, cap = 0;
    for (char *save = NULL, *name = strtok_r(copy, ",", &save); name;
         name = strtok_r(NULL, ",", &save)) {
        names = grow(names, &cap, n, sizeof *names);
        names[n++] = name;
    }
    if (n == 0 || strstr(list, ",,") || list[0] == ',' || list[strlen(list) - 1] == ',')
        usage_error("--replication-clusters expects names separated by ',', got '%s'", list);
    pulsarc_result res = pulsarc_message_set_replication_clusters(msg, names, n);
    if (res != PULSARC_OK)
        usage_error("--replication-clusters %s: %s", list, pulsarc_strerror(res));
    free(names);
    free(copy);
}

/* The message builder carries key, properties, replication and delivery delay; only the
 * payload changes per send. */
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
    if (a->disable_replication && (res = pulsarc_message_disable_replication(msg, 1)) != PULSARC_OK)
        usage_error("--disable-replication: %s", pulsarc_strerror(res));
    if (a->replication_clusters)
        set_replication_clusters(msg, a->replication_clusters);
    if (a->deliver_after_ms &&
        (res = pulsarc_message_set_deliver_after(msg, a->deliver_after_ms)) != PULSARC_OK)
        usage_error("--deliver-after: %s", pulsarc_strerror(res));
    return msg;
}
