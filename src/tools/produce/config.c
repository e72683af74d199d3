/* Client and producer configurations and message builders from the arguments (config.h). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../cli_common/config_hint.h"
#include "util.h"

/* The option that takes kind's settings. */
static const char *conf_option(enum conf_kind kind)
{
    return kind == CONF_CLIENT ? "--client-conf" : "--conf";
}

/* What follows the library's refusal of key in out: the values an enumerated key takes,
 * or the key a misspelt one most likely meant (and whose setting it is). */
static void setting_hint(enum conf_kind kind, const char *key, char *out, size_t size)
{
    char values[256];
    enum conf_kind near_kind;
    const char *near;
    out[0] = '\0';
    if (conf_key_values(kind, key, values, sizeof values))
        snprintf(out, size, " (valid: %s)", values);
    else if (conf_has_key(kind, key) || !(near = conf_nearest_key(key, &near_kind)))
        return;
    else if (near_kind == kind)
        snprintf(out, size, "; did you mean %s?", near);
    else
        snprintf(out, size, "; did you mean %s (a %s setting: %s)?", near,
                 conf_kind_name(near_kind), conf_option(near_kind));
}

/* The library refused what option gave for name: its description and detail, then hint.
 * The value is never repeated: a misspelt key cannot tell whether it held a secret
 * (authparams=token:...), and for a known key the library's detail quotes what it could
 * not use, unless that is a secret. detail: copied right after the refusal. */
static _Noreturn void refused(const char *option, const char *name, pulsarc_result res,
                              const char *detail, const char *hint)
{
    usage_error("%s %s: %s%s%s%s", option, name, pulsarc_strerror(res), detail[0] ? ": " : "",
                detail, hint);
}

/* The same, right after the refusing call, for what is not a configuration key. */
static _Noreturn void refused_now(const char *option, const char *name, pulsarc_result res)
{
    char detail[DETAIL_MAX];
    copy_error_detail(detail);
    refused(option, name, res, detail, "");
}

/* A configuration key of kind refused: with a hint, and a key of the other configuration
 * is sent where it belongs. */
static _Noreturn void config_error(const char *option, enum conf_kind kind, const char *key,
                                   pulsarc_result res)
{
    char detail[DETAIL_MAX], hint[320];
    copy_error_detail(detail);
    enum conf_kind other = kind == CONF_CLIENT ? CONF_PRODUCER : CONF_CLIENT;
    if (!conf_has_key(kind, key) && conf_has_key(other, key))
        usage_error("%s %s: a %s setting, not a %s setting: give it with %s", option, key,
                    conf_kind_name(other), conf_kind_name(kind), conf_option(other));
    setting_hint(kind, key, hint, sizeof hint);
    refused(option, key, res, detail, hint);
}

/* A configuration and which one it is. */
struct target {
    pulsarc_client_config_t *client; /* NULL: the producer's */
    pulsarc_producer_config_t *producer;
};

static enum conf_kind kind_of(struct target t)
{
    return t.client ? CONF_CLIENT : CONF_PRODUCER;
}

static pulsarc_result set_setting(struct target t, const char *key, const char *value)
{
    return t.client ? pulsarc_client_config_set(t.client, key, value)
                    : pulsarc_producer_config_set(t.producer, key, value);
}

/* One setting, from option (a flag, "--conf", ...). */
static void apply_setting(struct target t, const char *option, const char *key, const char *value)
{
    pulsarc_result res = set_setting(t, key, value);
    if (res != PULSARC_OK)
        config_error(option, kind_of(t), key, res);
}

static void apply_settings(struct target t, const struct kv_list *list, const char *option)
{
    for (size_t i = 0; i < list->count; i++)
        apply_setting(t, option, list->items[i].key, list->items[i].value);
}

/* Flags that are settings: an error names the flag and the value typed, not the key, and
 * lists the names an enumerated setting takes. */
static void apply_flag_settings(struct target t, const struct flag_setting_list *list)
{
    for (size_t i = 0; i < list->count; i++) {
        const struct flag_setting *fs = &list->items[i];
        pulsarc_result res = set_setting(t, fs->key, fs->value);
        if (res == PULSARC_OK)
            continue;
        char detail[DETAIL_MAX], values[256];
        copy_error_detail(detail);
        if (fs->what && fs->typed && conf_key_values(kind_of(t), fs->key, values, sizeof values))
            usage_error("%s: unknown %s '%s' (valid: %s)", fs->flag, fs->what, fs->typed, values);
        usage_error("%s: %s%s%s", fs->flag, pulsarc_strerror(res), detail[0] ? ": " : "", detail);
    }
}

/* --conf-file's settings; an error names the file and line. */
static void apply_file_settings(struct target t, const struct args *a)
{
    for (size_t i = 0; i < a->file.n_settings; i++) {
        const struct client_conf_setting *cs = &a->file.settings[i];
        char where[512];
        snprintf(where, sizeof where, "--conf-file %s:%d:", a->conf_file, cs->line);
        apply_setting(t, where, cs->key, cs->value);
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
    struct target t = { conf, NULL };
    /* --verbose, --memory-limit, --listener-name, the file, then the TLS and auth flags:
     * each overrides what came before, and --client-conf overrides them all. */
    if (a->verbose)
        apply_setting(t, "--verbose", "logLevel", "debug");
    if (a->memory_limit)
        apply_setting(t, "--memory-limit", "memoryLimitBytes", a->memory_limit);
    if (a->listener_name)
        apply_setting(t, "--listener-name", "listenerName", a->listener_name);
    if (a->txn_batch)
        apply_setting(t, "--txn-batch", "enableTransaction", "true");
    apply_file_settings(t, a);
    apply_flag_settings(t, &a->security);
    apply_settings(t, &a->client_conf, "--client-conf");
    if (a->verbose) {
        size_t n = pulsarc_client_config_dump(conf, NULL, 0);
        char *buf = xrealloc(NULL, n + 1);
        pulsarc_client_config_dump(conf, buf, n + 1);
        print_config_dump("client", buf);
        free(buf);
    }
    return conf;
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
    struct target t = { NULL, conf };
    /* CLI defaults first, then the dedicated flags, then --conf: the escape hatch wins.
     * New dedicated flags (--compression, --chunking, ...) become rows here. */
    const struct {
        const char *option, *key, *value;
    } settings[] = {
        { "default", "blockIfQueueFull", "true" },
        { "--producer-name", "producerName", a->producer_name },
        /* Line i goes where it went in any earlier run (deduplication is per partition):
         * what makes a rerun of the same input safe on a partitioned topic. */
        { "--sequence-id-start", "messageRoutingMode",
          a->sequence_id_start >= 0 ? "sequence_id" : NULL },
    };
    for (size_t i = 0; i < sizeof settings / sizeof settings[0]; i++)
        if (settings[i].value) /* else: flag not given, keep the library default */
            apply_setting(t, settings[i].option, settings[i].key, settings[i].value);
    if (a->schema_in) {
        pulsarc_result res = pulsarc_producer_config_set_schema(conf,
                                                                schema_input_schema(a->schema_in));
        if (res != PULSARC_OK)
            refused_now("--schema-type", a->schema.type ? a->schema.type : "bytes", res);
    }
    apply_flag_settings(t, &a->flag_settings);
    for (size_t i = 0; i < a->producer_properties.count; i++) {
        const struct kv *kv = &a->producer_properties.items[i];
        pulsarc_result res = pulsarc_producer_config_set_property(conf, kv->key, kv->value);
        if (res != PULSARC_OK)
            refused_now("--producer-property", kv->key, res);
    }
    for (size_t i = 0; i < a->enc_names.count; i++) {
        const char *name = a->enc_names.items[i].key, *file = a->enc_keys.items[i].key;
        pulsarc_result res = pulsarc_producer_config_add_encryption_key_file(conf, name, file);
        if (res != PULSARC_OK)
            refused_now("--encryption-public-key", file, res);
    }
    apply_settings(t, &a->conf, "--conf");
    char *dump = producer_dump(conf);
    if (a->verbose)
        print_config_dump("producer", dump);
    *wait_for_room = blocks_if_queue_full(dump);
    free(dump);
    apply_setting(t, "default", "blockIfQueueFull", "false");
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
