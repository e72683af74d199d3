/* pulsarc-produce's command line, parsed and checked into struct args (args.h). */
#include "args.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pulsarc/pulsarc.h>

#include "../cli_common/security_flags.h"
#include "util.h"

/* Flags that are plain producer settings: the flag's id, its config key, the value for
 * flags without an argument (NULL: the argument is the value), and for a flag that takes
 * one of a setting's names, what the names are of (an error lists the valid ones). */
static const struct {
    int id;
    const char *key;
    const char *fixed;
    const char *what;
} setting_flags[] = {
    { 'z', "compressionType", NULL, "compression" },
    { OPT_BATCHING, "batchingEnabled", "true", NULL },
    { OPT_NO_BATCHING, "batchingEnabled", "false", NULL },
    { OPT_BATCH_MAX_MESSAGES, "batchingMaxMessages", NULL, NULL },
    { OPT_BATCH_MAX_BYTES, "batchingMaxBytes", NULL, NULL },
    { OPT_BATCH_DELAY_MS, "batchingMaxPublishDelayMs", NULL, NULL },
    { OPT_KEY_BASED_BATCHING, "batcherType", "key_based", NULL },
    { OPT_ROUTING, "messageRoutingMode", NULL, "routing mode" },
    { OPT_HASHING, "hashingScheme", NULL, "hashing scheme" },
    { OPT_MAX_PENDING, "maxPendingMessages", NULL, NULL },
    { 'c', "chunkingEnabled", "true", NULL },
    { OPT_CHUNK_SIZE, "chunkMaxMessageSize", NULL, NULL },
    { OPT_SEND_TIMEOUT, "sendTimeoutMs", NULL, NULL },
    { OPT_CRYPTO_FAILURE_ACTION, "cryptoFailureAction", NULL, "crypto failure action" },
    { OPT_ACCESS_MODE, "accessMode", NULL, "access mode" },
    { OPT_SPOOL_FSYNC, "spoolFsync", NULL, "spool fsync policy" },
};

/* The highest --sequence-id-start: it leaves 2^62 ids after it, so the messages' ids
 * (N, N+1, ...) stay within the int64 a sequence id is, however long the run. */
#define SEQUENCE_ID_START_MAX (INT64_MAX / 2)

/* Digits only: strtoull alone would accept "-1" (as a huge number), " 5" and "+5". */
static bool parse_u64(const char *s, uint64_t *out)
{
    if (*s < '0' || *s > '9')
        return false;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0 || *end != '\0')
        return false;
    *out = v;
    return true;
}

static bool parse_rate(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    /* The range test also rejects NaN; the cap keeps the pacer's arithmetic sane. */
    if (end == s || *end != '\0' || errno != 0 || !(v >= 0.0 && v <= 1e9))
        return false;
    *out = v;
    return true;
}

void add_payload(struct args *a, char *data, size_t len, char *key)
{
    a->payloads = grow(a->payloads, &a->cap_payloads, a->n_payloads, sizeof *a->payloads);
    a->payloads[a->n_payloads++] = (struct payload){ data, len, key, false, false, 0 };
}

/* Appends the setting key=value of the flag spelt flag (typed: its argument, if any). */
static struct flag_setting *push_flag_setting(struct flag_setting_list *list, const char *flag,
                                              const char *key, const char *value, const char *typed)
{
    list->items = grow(list->items, &list->cap, list->count, sizeof *list->items);
    struct flag_setting *fs = &list->items[list->count++];
    *fs = (struct flag_setting){ key, xmemdup(value, strlen(value)), typed, NULL, "" };
    snprintf(fs->flag, sizeof fs->flag, "%s", flag);
    return fs;
}

/* A flag from setting_flags becomes a setting in a->flag_settings. */
static bool add_setting_flag(struct args *a, int id, const char *optarg_value, const char *flag)
{
    for (size_t i = 0; i < sizeof setting_flags / sizeof setting_flags[0]; i++) {
        if (setting_flags[i].id != id)
            continue;
        const char *fixed = setting_flags[i].fixed;
        struct flag_setting *fs = push_flag_setting(&a->flag_settings, flag, setting_flags[i].key,
                                                    fixed ? fixed : optarg_value,
                                                    fixed ? NULL : optarg_value);
        fs->what = setting_flags[i].what;
        /* Accept "round-robin" for "round_robin", as the official tools spell it. */
        for (char *p = fs->value; *p; p++)
            if (*p == '-')
                *p = '_';
        return true;
    }
    return false;
}

static void add_kv(struct kv_list *list, const char *option, const char *arg)
{
    /* The argument is not repeated: it may be a secret typed with another separator
     * (--client-conf authParams:token:...). */
    const char *eq = strchr(arg, '=');
    if (!eq)
        usage_error("%s expects KEY=VALUE: the argument has no '='", option);
    if (eq == arg)
        usage_error("%s expects KEY=VALUE: the key before '=' is empty", option);
    size_t klen = (size_t)(eq - arg);
    char *key = xrealloc(NULL, klen + 1);
    memcpy(key, arg, klen);
    key[klen] = '\0';
    list->items = grow(list->items, &list->cap, list->count, sizeof *list->items);
    list->items[list->count++] = (struct kv){ key, eq + 1 };
}

static void free_kv_list(struct kv_list *list)
{
    for (size_t i = 0; i < list->count; i++)
        free(list->items[i].key);
    free(list->items);
}

static void free_flag_settings(struct flag_setting_list *list)
{
    for (size_t i = 0; i < list->count; i++)
        free(list->items[i].value);
    free(list->items);
}

/* Reads the whole file: its bytes are one message, exactly as stored. */
static void add_file(struct args *a, const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        usage_error("cannot open '%s': %s", path, strerror(errno));
    char *data = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len == cap) {
            cap = cap ? cap * 2 : 64 * 1024;
            data = xrealloc(data, cap);
        }
        size_t n = fread(data + len, 1, cap - len, f);
        len += n;
        if (n == 0)
            break;
    }
    if (ferror(f)) {
        int err = errno;
        fclose(f);
        usage_error("cannot read '%s': %s", path, strerror(err));
    }
    fclose(f);
    add_payload(a, data, len, NULL);
    a->payloads[a->n_payloads - 1].raw = true;
}

static void push_kv(struct kv_list *list, const char *key, const char *value)
{
    list->items = grow(list->items, &list->cap, list->count, sizeof *list->items);
    list->items[list->count++] = (struct kv){ xmemdup(key, strlen(key)), value };
}

/* The options of pulsar-client produce that pulsarc cannot honour: refused rather than
 * silently ignored, since each changes what is stored or who can read it. */
static _Noreturn void refuse_unsupported(const struct cli_option *o)
{
    usage_error("--%s (pulsar-client's -%s) is not supported by pulsarc yet: it needs %s", o->name,
                o->dash_alias, o->help);
}

/* Flags that only record a value in a. Returns false for other ids. */
static bool handle_value_option(struct args *a, int c, const char *arg)
{
    switch (c) {
    case 'u':
        a->service_url = arg;
        return true;
    case 'm':
        add_payload(a, xmemdup(arg, strlen(arg)), strlen(arg), NULL);
        a->payloads[a->n_payloads - 1].from_messages = true;
        return true;
    case 's':
        if (!*arg)
            usage_error("--separator must not be empty");
        a->separator = arg;
        return true;
    case 'f':
        add_file(a, arg);
        return true;
    case 'k':
        a->key = arg;
        return true;
    case 'p':
        add_kv(&a->properties, "--property", arg);
        return true;
    case OPT_PRODUCER_PROPERTY:
        add_kv(&a->producer_properties, "--producer-property", arg);
        return true;
    case OPT_DISABLE_REPLICATION:
        a->disable_replication = true;
        return true;
    case OPT_REPLICATION_CLUSTERS:
        a->replication_clusters = arg;
        return true;
    case OPT_NULL_VALUE:
        a->null_value = true;
        return true;
    case OPT_CONF_FILE:
        a->conf_file = arg;
        return true;
    case OPT_PRODUCER_NAME:
        a->producer_name = arg;
        return true;
    case OPT_CONF:
        add_kv(&a->conf, "--conf", arg);
        return true;
    case OPT_CLIENT_CONF:
        add_kv(&a->client_conf, "--client-conf", arg);
        return true;
    case OPT_MEMORY_LIMIT:
        a->memory_limit = arg;
        return true;
    case OPT_LISTENER_NAME:
        a->listener_name = arg;
        return true;
    case OPT_STDIN:
        a->use_stdin = true;
        return true;
    case OPT_VERBOSE:
        a->verbose = true;
        return true;
    case OPT_KEEP_GOING:
        a->keep_going = true;
        return true;
    case OPT_TXN_ABORT:
        a->txn_abort = true;
        return true;
    case OPT_STATS_JSON:
        a->stats_json = arg;
        return true;
    case OPT_METRICS_LISTEN:
        a->metrics_listen = arg;
        return true;
    }
    return false;
}

/* The end-to-end encryption flags: names and public keys, in pairs. Returns false for
 * other ids. */
static bool handle_encryption_option(struct args *a, int c, const char *arg)
{
    switch (c) {
    case OPT_ENC_KEY_NAME:
        if (!*arg || strchr(arg, ','))
            usage_error("--encryption-key-name must be a non-empty name without ',', got '%s'",
                        arg);
        push_kv(&a->enc_names, arg, NULL);
        return true;
    case OPT_ENC_PUBLIC_KEY:
        push_kv(&a->enc_keys, arg, NULL);
        return true;
    case OPT_ENC_KEY_VALUE:
        /* pulsar-client takes a URI; a file:// one (or a plain path) is what we read. */
        if (strncmp(arg, "file://", 7) == 0)
            arg += 7;
        else if (strstr(arg, "://") || strncmp(arg, "data:", 5) == 0)
            usage_error("--encryption-key-value %s: only file:///path URIs are supported", arg);
        push_kv(&a->enc_keys, arg, NULL);
        return true;
    }
    return false;
}

/* Flags whose value is checked here. Returns false for other ids. */
static bool handle_checked_option(struct args *a, int c, const char *arg)
{
    uint64_t v;
    switch (c) {
    case OPT_SIZE:
        if (!parse_u64(arg, &a->size) || a->size > SIZE_MAX / 2)
            usage_error("--size expects a number of bytes, got '%s'", arg);
        a->use_size = true;
        return true;
    case OPT_TXN_BATCH:
        if (!parse_u64(arg, &a->txn_batch) || a->txn_batch == 0)
            usage_error("--txn-batch expects a count of at least 1, got '%s'", arg);
        return true;
    case 'n':
        if (!parse_u64(arg, &a->num_produce) || a->num_produce == 0)
            usage_error("--num-produce expects a count of at least 1, got '%s'", arg);
        return true;
    case 'r':
        if (!parse_rate(arg, &a->rate))
            usage_error("--rate expects messages per second (0 = unlimited), got '%s'", arg);
        return true;
    case OPT_KEY_SEPARATOR:
        if (!*arg)
            usage_error("--key-separator must not be empty");
        a->key_separator = arg;
        return true;
    case OPT_DELIVER_AFTER:
        /* The library bounds a delay at 2^62 ms; any count of days fits well below. */
        if (!parse_u64(arg, &a->deliver_after_ms) || a->deliver_after_ms > UINT64_C(1) << 62)
            usage_error("--deliver-after expects milliseconds, got '%s'", arg);
        return true;
    case OPT_SEQUENCE_ID_START:
        if (!parse_u64(arg, &v) || v > SEQUENCE_ID_START_MAX)
            usage_error("--sequence-id-start expects a number from 0 to %" PRIu64 ", got '%s'",
                        (uint64_t)SEQUENCE_ID_START_MAX, arg);
        a->sequence_id_start = (int64_t)v;
        return true;
    }
    return false;
}

/* One option from getopt_long; long_name is the option's name when it was spelled long. */
static void handle_option(struct args *a, int c, const char *arg, const char *long_name,
                          char **argv)
{
    if (handle_value_option(a, c, arg) || handle_encryption_option(a, c, arg) ||
        handle_checked_option(a, c, arg))
        return;
    const struct cli_option *o = long_name ? find_option(long_name) : NULL;
    char flag[40]; /* as typed, for errors: "-z" or "--compression" */
    if (long_name)
        snprintf(flag, sizeof flag, "--%s", long_name);
    else
        snprintf(flag, sizeof flag, "-%c", c > 0 && c < 256 ? c : '?');
    switch (c) {
    case OPT_SECURITY: {
        const struct security_flag *f = security_flag_find(long_name);
        push_flag_setting(&a->security, flag, f->key, f->fixed ? f->fixed : arg,
                          f->fixed ? NULL : arg);
        return;
    }
    case OPT_SPOOL_DIR: /* a path: not a setting flag, whose values get '-' -> '_' */
        push_flag_setting(&a->flag_settings, flag, "spoolDir", arg, arg);
        return;
    case OPT_SCHEMA_FLAG:
        schema_flags_set(&a->schema, long_name, arg);
        return;
    case OPT_UNSUPPORTED:
        refuse_unsupported(o);
    case 'v':
        printf(PROG " %s\n", PULSARC_VERSION_STRING); /* built with the library */
        exit(EXIT_ALL_SENT);
    case 'h':
        print_help(stdout);
        exit(EXIT_ALL_SENT);
    case ':':
        /* For a long option optopt holds its id (maybe a short letter), so name it from
         * argv instead. */
        if (strncmp(argv[optind - 1], "--", 2) == 0)
            usage_error("option '%s' needs an argument", argv[optind - 1]);
        usage_error("option -%c needs an argument", optopt);
    default:
        if (add_setting_flag(a, c, arg, flag))
            return;
        if (optopt && optopt < 256)
            usage_error("unknown option -%c", optopt);
        usage_error("unknown option '%s'", argv[optind - 1]);
    }
}

/* --separator splits each -m value at every SEP, as pulsar-client does (empty pieces
 * included): the set is rebuilt with the pieces in place of the value. */
static void split_messages(struct args *a)
{
    struct payload *old = a->payloads;
    size_t n_old = a->n_payloads, sep_len = strlen(a->separator);
    a->payloads = NULL;
    a->n_payloads = a->cap_payloads = 0;
    for (size_t i = 0; i < n_old; i++) {
        if (!old[i].from_messages) {
            add_payload(a, old[i].data, old[i].len, old[i].key);
            continue;
        }
        const char *piece = old[i].data, *end = old[i].data + old[i].len;
        for (;;) {
            const char *at = memmem(piece, (size_t)(end - piece), a->separator, sep_len);
            const char *stop = at ? at : end;
            add_payload(a, xmemdup(piece, (size_t)(stop - piece)), (size_t)(stop - piece), NULL);
            if (!at)
                break;
            piece = at + sep_len;
        }
        free(old[i].data);
    }
    free(old);
}

static void warn_conf_file_key(void *path, int line, const char *key, const char *why)
{
    fprintf(stderr, PROG ": warning: %s:%d: %s: %s\n", (const char *)path, line, key, why);
}

/* --conf-file: its settings, and its service URL unless -u gave one. */
static void load_conf_file(struct args *a)
{
    char err[512];
    if (client_conf_load(a->conf_file, &a->file, warn_conf_file_key, (void *)a->conf_file, err,
                         sizeof err) != 0)
        usage_error("--conf-file %s: %s", a->conf_file, err);
    if (!a->service_url) {
        a->service_url = client_conf_service_url(&a->file, err, sizeof err);
        if (!a->service_url && a->file.web_service_url)
            usage_error("--conf-file %s: %s", a->conf_file, err);
    }
}

/* The option that gives the producer a spool, or NULL. */
static const char *spool_option(const struct args *a)
{
    for (size_t i = 0; i < a->flag_settings.count; i++)
        if (strcmp(a->flag_settings.items[i].key, "spoolDir") == 0)
            return "--spool-dir";
    for (size_t i = 0; i < a->conf.count; i++)
        if (strcmp(a->conf.items[i].key, "spoolDir") == 0)
            return "--conf spoolDir";
    return NULL;
}

/* What a spool cannot take along: it resends a message after a restart from what it
 * wrote, which holds neither a delivery delay relative to the send nor replication
 * clusters (the library refuses such a message at each send), nor a transaction. */
static void check_spool_combinations(const struct args *a)
{
    const char *spool = spool_option(a);
    const char *other = a->txn_batch              ? "--txn-batch"
                        : a->disable_replication  ? "--disable-replication"
                        : a->replication_clusters ? "--replication-clusters"
                        : a->deliver_after_ms     ? "--deliver-after"
                                                  : NULL;
    if (!spool || !other)
        return;
    if (a->txn_batch)
        usage_error("--txn-batch cannot be combined with %s: a spool resends after a restart, "
                    "outside any transaction",
                    spool);
    usage_error("%s cannot be combined with %s: a spool resends a message after a restart "
                "without its replication clusters or delivery delay",
                other, spool);
}

/* What no single option can check: the topic and how the options combine. */
static void check_args(int argc, char **argv, struct args *a)
{
    if (optind >= argc)
        usage_error("missing TOPIC");
    if (argc - optind > 1)
        usage_error("one TOPIC expected, got extra argument '%s'", argv[optind + 1]);
    a->topic = argv[optind];

    bool have_set = a->n_payloads > 0 || a->use_stdin;
    if (a->use_size && have_set)
        usage_error("--size cannot be combined with --messages, --files or --stdin");
    if (!a->use_size && !have_set)
        usage_error("nothing to send: give --messages, --files, --stdin or --size");
    if (a->key_separator && !a->use_stdin)
        usage_error("--key-separator splits the lines of --stdin, which was not given");
    if (a->key_separator && a->key)
        usage_error("--key and --key-separator cannot be combined: the lines give the keys");
    if (a->txn_abort && !a->txn_batch)
        usage_error("--txn-abort aborts the transactions of --txn-batch, which was not given");
    check_spool_combinations(a);
    for (size_t i = 0; i < a->enc_keys.count; i++)
        if (access(a->enc_keys.items[i].key, R_OK) != 0)
            usage_error("encryption public key '%s': %s", a->enc_keys.items[i].key,
                        strerror(errno));
    if (a->disable_replication && a->replication_clusters)
        usage_error("--disable-replication and --replication-clusters cannot be combined");
    if (a->enc_names.count != a->enc_keys.count)
        usage_error("%zu --encryption-key-name but %zu --encryption-public-key: give them in "
                    "pairs",
                    a->enc_names.count, a->enc_keys.count);
}

void parse_args(int argc, char **argv, struct args *a)
{
    *a = (struct args){ .num_produce = 1, .sequence_id_start = -1 };
    expand_dash_aliases(argc, argv, &a->expanded);
    argv = a->expanded.argv;
    int c;
    const char *long_name;
    while ((c = next_option(argc, argv, &long_name)) != -1)
        handle_option(a, c, optarg, long_name, argv);
    check_args(argc, argv, a);
    if (a->separator)
        split_messages(a);
    if (a->conf_file)
        load_conf_file(a);
    if (!a->service_url)
        a->service_url = "pulsar://localhost:6650";
    char err[512];
    if (schema_input_new(&a->schema, &a->schema_in, err, sizeof err) != 0)
        usage_error("%s", err);
}

void free_args(struct args *a)
{
    for (size_t i = 0; i < a->n_payloads; i++) {
        free(a->payloads[i].data);
        free(a->payloads[i].key);
    }
    free(a->payloads);
    free_kv_list(&a->properties);
    free_kv_list(&a->producer_properties);
    free_kv_list(&a->conf);
    free_kv_list(&a->client_conf);
    free_flag_settings(&a->flag_settings);
    free_flag_settings(&a->security);
    free_kv_list(&a->enc_names);
    free_kv_list(&a->enc_keys);
    client_conf_free(&a->file);
    schema_input_free(a->schema_in);
    expanded_argv_free(&a->expanded);
}
