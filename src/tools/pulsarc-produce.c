/*
 * pulsarc-produce — publish messages to a Pulsar topic from the command line.
 *
 * In the spirit of the official `pulsar-client produce`: the messages come from the
 * command line (-m), from files (-f), from standard input (--stdin, one per line) or are
 * synthesised (--size). The set is sent -n times, optionally paced (-r), with send_async; the
 * tool then flushes, closes and prints two lines to stdout that scripts and tests parse:
 *
 *   sent=N failed=M elapsed=S.SSSs rate=R msg/s throughput=T MB/s
 *   last-sequence-id=<n> producer-name=<name>
 *
 * Everything else (failures, --verbose traces, the library's log) goes to stderr.
 * Exit status: 0 every message was persisted, 1 anything failed, 2 usage error.
 * A failure that every later message would share (topic terminated, not authorised, ...)
 * stops the run at once, even while it waits for standard input.
 * docs/cli.md is the user documentation; keep it in step with the option table below.
 */
#define _GNU_SOURCE /* ppoll, memmem */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <pulsarc/pulsarc.h>

#include "cli_common/client_conf.h"
#include "cli_common/schema_input.h"
#include "cli_common/security_flags.h"

#define PROG "pulsarc-produce"

enum exit_status {
    EXIT_ALL_SENT = 0,
    EXIT_SOME_FAILED = 1,
    EXIT_USAGE = 2,
};

/* Failures are printed one per line; past this many only --verbose keeps printing them, so a
 * dead broker under -n 1000000 does not bury the summary in a million identical lines. */
#define MAX_REPORTED_FAILURES 100

/* "ledger:entry:partition:batch_index": 2 x int64 + 2 x int32 + separators < 96. */
#define MESSAGE_ID_STR_MAX 96

/* ---------------------------------------------------------------------------------
 * The option table. One row per option drives getopt_long's table, the short-option
 * string and --help, so adding a flag is one row here plus one case in handle_option().
 * Rows with a NULL name are section headings for --help; rows with a NULL help are
 * accepted spellings that --help does not list.
 *
 * Pulsar's `bin/pulsar-client produce` users should find its flags here with the same
 * meaning, so none of its letters means anything else: -c is chunking, -s the separator
 * of -m values, -v the version (compression is -z, the synthetic size --size, verbose
 * --verbose). Its multi-letter single-dash flags (-db, -dr, -ekn, ...) are rows with a
 * dash_alias; expand_dash_aliases() turns them into the long form before getopt_long.
 * ------------------------------------------------------------------------------- */

/* Long-only options get ids above the char range so they never collide with a short
 * letter. */
enum long_only_id {
    OPT_PRODUCER_NAME = 256,
    OPT_STDIN,
    OPT_CONF,
    OPT_CLIENT_CONF,
    OPT_BATCHING,
    OPT_NO_BATCHING,
    OPT_BATCH_MAX_MESSAGES,
    OPT_BATCH_MAX_BYTES,
    OPT_BATCH_DELAY_MS,
    OPT_KEY_BASED_BATCHING,
    OPT_ROUTING,
    OPT_HASHING,
    OPT_MAX_PENDING,
    OPT_MEMORY_LIMIT,
    OPT_CHUNK_SIZE,
    OPT_SEND_TIMEOUT,
    OPT_SEQUENCE_ID_START,
    OPT_KEY_SEPARATOR,
    OPT_SIZE,
    OPT_VERBOSE,
    OPT_CONF_FILE,
    OPT_SECURITY,    /* a row of security_flags: the long name tells which */
    OPT_SCHEMA_FLAG, /* a row of schema_input.h: the long name tells which */
    OPT_ENC_KEY_NAME,
    OPT_ENC_PUBLIC_KEY,
    OPT_ENC_KEY_VALUE, /* pulsar-client's -ekv: a file:// URI or a path */
    OPT_CRYPTO_FAILURE_ACTION,
    OPT_UNSUPPORTED, /* a pulsar-client flag for a feature pulsarc lacks: refused */
};

/* Flags that are plain producer settings: the flag's id, its config key, and the value
 * for flags without an argument (NULL: the argument is the value). */
static const struct {
    int id;
    const char *key;
    const char *fixed;
} setting_flags[] = {
    {'z', "compressionType", NULL},
    {OPT_BATCHING, "batchingEnabled", "true"},
    {OPT_NO_BATCHING, "batchingEnabled", "false"},
    {OPT_BATCH_MAX_MESSAGES, "batchingMaxMessages", NULL},
    {OPT_BATCH_MAX_BYTES, "batchingMaxBytes", NULL},
    {OPT_BATCH_DELAY_MS, "batchingMaxPublishDelayMs", NULL},
    {OPT_KEY_BASED_BATCHING, "batcherType", "key_based"},
    {OPT_ROUTING, "messageRoutingMode", NULL},
    {OPT_HASHING, "hashingScheme", NULL},
    {OPT_MAX_PENDING, "maxPendingMessages", NULL},
    {'c', "chunkingEnabled", "true"},
    {OPT_CHUNK_SIZE, "chunkMaxMessageSize", NULL},
    {OPT_SEND_TIMEOUT, "sendTimeoutMs", NULL},
    {OPT_CRYPTO_FAILURE_ACTION, "cryptoFailureAction", NULL},
};

struct cli_option {
    const char *name; /* long name without "--"; NULL = section heading */
    int id;           /* the short letter, or a long_only_id */
    int has_arg;      /* no_argument | required_argument */
    const char *arg;  /* argument name shown in --help */
    const char *help; /* may contain '\n' for continuation lines; NULL: not listed */
    const char *dash_alias; /* pulsar-client's multi-letter single-dash spelling */
};

static const struct cli_option cli_options[] = {
    {NULL, 0, 0, NULL, "Connection:", NULL},
    {"service-url", 'u', required_argument, "URL",
     "broker service URL (default: brokerServiceUrl of\n--conf-file, else pulsar://localhost:6650)", NULL},
    {"url", 'u', required_argument, "URL", NULL, NULL},
    {"conf-file", OPT_CONF_FILE, required_argument, "FILE",
     "Pulsar's client.conf: service URL, TLS and auth settings\n(the flags override it)", NULL},
    {"client-conf", OPT_CLIENT_CONF, required_argument, "KEY=VALUE",
     "client setting, passed to pulsarc_client_config_set\n(repeatable)", NULL},

    {NULL, 0, 0, NULL, "What to send (-m, -f and --stdin combine, in that order; --size stands alone):", NULL},
    {"messages", 'm', required_argument, "MSG", "one message with this text (repeatable)", NULL},
    {"separator", 's', required_argument, "SEP",
     "split every -m value at each SEP into several messages\n(default: no splitting)", NULL},
    {"files", 'f', required_argument, "FILE", "one message with the bytes of FILE (repeatable)", NULL},
    {"stdin", OPT_STDIN, no_argument, NULL,
     "one message per line of standard input, without the\nnewline (empty lines are empty messages)", NULL},
    {"size", OPT_SIZE, required_argument, "BYTES", "one synthetic message of BYTES random-ish bytes", NULL},
    {"num-produce", 'n', required_argument, "N", "send the message set N times (default 1)", NULL},
    {"rate", 'r', required_argument, "R", "at most R messages per second (default 0 = no limit)", NULL},

    {NULL, 0, 0, NULL, "Message metadata:", NULL},
    {"key", 'k', required_argument, "KEY", "message key (routes to a partition)", NULL},
    {"key-separator", OPT_KEY_SEPARATOR, required_argument, "SEP",
     "--stdin lines are KEY<SEP>PAYLOAD: split at the first SEP;\n"
     "lines without SEP have no key", NULL},
    {"property", 'p', required_argument, "K=V", "message property (repeatable)", NULL},
    {"properties", 'p', required_argument, "K=V", NULL, NULL},

    {NULL, 0, 0, NULL, "Schema (default: bytes, no schema; see docs/cli.md):", NULL},
    {SCHEMA_FLAG_TYPE, OPT_SCHEMA_FLAG, required_argument, "TYPE",
     "string | json | avro | int32 | ... | auto_produce; -m and\n"
     "--stdin text is converted (numbers; JSON to Avro)", NULL},
    {SCHEMA_FLAG_FILE, OPT_SCHEMA_FLAG, required_argument, "FILE",
     "the definition: an Avro schema (JSON) for json and avro", NULL},
    {SCHEMA_FLAG_NAME, OPT_SCHEMA_FLAG, required_argument, "NAME",
     "the schema's name (default: the Java client's)", NULL},
    {SCHEMA_FLAG_KV_ENCODING, OPT_SCHEMA_FLAG, required_argument, "ENC",
     "inline | separated: a KeyValue schema of the key schema\n"
     "and --schema-type; the message key (-k) is its key", NULL},
    {SCHEMA_FLAG_KEY_TYPE, OPT_SCHEMA_FLAG, required_argument, "TYPE",
     "the KeyValue key's schema (default string)", NULL},
    {SCHEMA_FLAG_KEY_FILE, OPT_SCHEMA_FLAG, required_argument, "FILE",
     "the KeyValue key's definition", NULL},
    {SCHEMA_FLAG_VALUE_SCHEMA, OPT_SCHEMA_FLAG, required_argument, "TYPE[:DEF]",
     "--schema-type with the definition inline", "vs"},
    {SCHEMA_FLAG_KEY_SCHEMA, OPT_SCHEMA_FLAG, required_argument, "TYPE[:DEF]",
     "--key-schema-type with the definition inline", "ks"},
    {SCHEMA_FLAG_KV_ENCODING_TYPE, OPT_SCHEMA_FLAG, required_argument, "ENC",
     "the same as --kv-encoding", "kvet"},
    {"key-value-key", 'k', required_argument, "KEY", "the same as -k", "kvk"},

    {NULL, 0, 0, NULL, "Producer:", NULL},
    {"producer-name", OPT_PRODUCER_NAME, required_argument, "NAME",
     "fixed producer name (default: assigned by the broker)", NULL},
    {"conf", OPT_CONF, required_argument, "KEY=VALUE",
     "producer setting, passed to pulsarc_producer_config_set\n"
     "(repeatable; applied after the other flags, so it wins)", NULL},

    {"compression", 'z', required_argument, "CODEC", "none | lz4 | zlib | zstd | snappy", NULL},
    {"batching", OPT_BATCHING, no_argument, NULL, "batch messages (the default)", NULL},
    {"no-batching", OPT_NO_BATCHING, no_argument, NULL, "one message per frame", NULL},
    {"disable-batching", OPT_NO_BATCHING, no_argument, NULL, "the same (pulsar-client's -db)", "db"},
    {"batch-max-messages", OPT_BATCH_MAX_MESSAGES, required_argument, "N",
     "messages per batch (default 1000)", NULL},
    {"batch-max-bytes", OPT_BATCH_MAX_BYTES, required_argument, "BYTES",
     "payload bytes per batch (default 131072)", NULL},
    {"batch-delay-ms", OPT_BATCH_DELAY_MS, required_argument, "MS",
     "send a batch this long after its first message (default 10)", NULL},
    {"key-based-batching", OPT_KEY_BASED_BATCHING, no_argument, NULL,
     "one batch per key (for Key_Shared consumers)", NULL},
    {"routing", OPT_ROUTING, required_argument, "MODE",
     "round_robin | single (partitioned topics; '-' may be used for '_')", NULL},
    {"hashing", OPT_HASHING, required_argument, "SCHEME", "java | murmur3 (key hash)", NULL},
    {"max-pending", OPT_MAX_PENDING, required_argument, "N",
     "messages waiting for a receipt (default 1000)", NULL},
    {"memory-limit", OPT_MEMORY_LIMIT, required_argument, "BYTES",
     "client-wide pending payload bytes (default 64 MiB)", NULL},
    {"chunking", 'c', no_argument, NULL,
     "split messages above the broker's limit into chunks", NULL},
    {"chunk-size", OPT_CHUNK_SIZE, required_argument, "BYTES",
     "chunk size (default: the broker's max message size)", NULL},
    {"send-timeout-ms", OPT_SEND_TIMEOUT, required_argument, "MS",
     "fail a message without a receipt after MS (default 30000;\n0 = never)", NULL},
    {"sequence-id-start", OPT_SEQUENCE_ID_START, required_argument, "N",
     "explicit sequence ids N, N+1, ... (resume deduplication\nwith --producer-name)", NULL},

    {NULL, 0, 0, NULL, "End-to-end encryption (RSA public keys; the i-th name goes with the i-th key):", NULL},
    {"encryption-key-name", OPT_ENC_KEY_NAME, required_argument, "NAME",
     "encrypt for this key name (repeatable; pulsar-client's -ekn)", "ekn"},
    {"encryption-public-key", OPT_ENC_PUBLIC_KEY, required_argument, "FILE",
     "the PEM public key of that name (repeatable)", NULL},
    {"encryption-key-value", OPT_ENC_KEY_VALUE, required_argument, "URI",
     "the same as file:///path (pulsar-client's -ekv)", "ekv"},
    {"crypto-failure-action", OPT_CRYPTO_FAILURE_ACTION, required_argument, "ACTION",
     "fail (default: a message that cannot be encrypted\nfails) | send (send it unencrypted)", NULL},

    {NULL, 0, 0, NULL, "pulsar-client produce flags for features pulsarc does not have yet (refused):", NULL},
    {"disable-replication", OPT_UNSUPPORTED, no_argument, NULL,
     "geo-replication control", "dr"},
    {"key-value-key-file", OPT_UNSUPPORTED, required_argument, "FILE",
     "a KeyValue key from a file", "kvkf"},

    {NULL, 0, 0, NULL, "Other:", NULL},
    {"verbose", OPT_VERBOSE, no_argument, NULL,
     "debug logging, effective settings and one line per\nmessage id (all on stderr)", NULL},
    {"version", 'v', no_argument, NULL, "print the version and exit", NULL},
    {"help", 'h', no_argument, NULL, "show this help and exit", NULL},
};

#define N_CLI_OPTIONS (sizeof cli_options / sizeof cli_options[0])

/* Room for the shared TLS and authentication flags in the full table. */
#define MAX_SECURITY_ROWS 16

/* cli_options with the shared TLS and authentication flags (security_flags.c) as a
 * section of their own before "Other:", built on first use. */
static const struct cli_option *all_options(size_t *count)
{
    static struct cli_option table[N_CLI_OPTIONS + 1 + MAX_SECURITY_ROWS];
    static size_t n;
    if (n > 0) {
        *count = n;
        return table;
    }
    for (size_t i = 0; i < N_CLI_OPTIONS; i++) {
        const struct cli_option *o = &cli_options[i];
        if (!o->name && strcmp(o->help, "Other:") == 0) {
            table[n++] = (struct cli_option){NULL, 0, 0, NULL,
                                             "TLS and authentication (override --conf-file):", NULL};
            for (size_t j = 0; j < n_security_flags && j < MAX_SECURITY_ROWS; j++) {
                const struct security_flag *f = &security_flags[j];
                table[n++] = (struct cli_option){f->name, OPT_SECURITY,
                                                 f->arg ? required_argument : no_argument,
                                                 f->arg, f->help, NULL};
            }
        }
        table[n++] = *o;
    }
    *count = n;
    return table;
}

static const struct cli_option *find_option(const char *name)
{
    size_t n;
    const struct cli_option *opts = all_options(&n);
    for (size_t i = 0; i < n; i++)
        if (opts[i].name && strcmp(opts[i].name, name) == 0)
            return &opts[i];
    return NULL;
}

/* ---------------------------------------------------------------------------------
 * Small helpers
 * ------------------------------------------------------------------------------- */

/* The tool cannot do anything useful after running out of memory: say so and stop. */
static _Noreturn void out_of_memory(void)
{
    fprintf(stderr, PROG ": out of memory\n");
    exit(EXIT_SOME_FAILED);
}

static void *xrealloc(void *p, size_t size)
{
    void *q = realloc(p, size ? size : 1);
    if (!q)
        out_of_memory();
    return q;
}

/* A NUL-terminated copy of len bytes: usable as a payload and, without inner NULs, as a
 * string. */
static char *xmemdup(const void *data, size_t len)
{
    char *copy = xrealloc(NULL, len + 1);
    memcpy(copy, data, len);
    copy[len] = '\0';
    return copy;
}

/* Make room for one more element in a growing array. */
static void *grow(void *items, size_t *cap, size_t count, size_t elem_size)
{
    if (count < *cap)
        return items;
    *cap = *cap ? *cap * 2 : 8;
    return xrealloc(items, *cap * elem_size);
}

static _Noreturn void usage_error(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, PROG ": ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry '" PROG " --help' for more information.\n");
    exit(EXIT_USAGE);
}

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

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---------------------------------------------------------------------------------
 * Parsed command line
 * ------------------------------------------------------------------------------- */

/* One message of the set. */
struct payload {
    char *data;
    size_t len;
    char *key; /* from a --key-separator line; NULL: the -k key, or none */
    bool from_messages; /* a -m value: --separator may split it */
    bool raw;           /* a file or --size: bytes as they are, never converted */
    size_t key_len;     /* a KeyValue key (converted, may hold NULs) */
};

/* KEY=VALUE split at the first '='; key is malloc'ed, value points into argv. */
struct kv {
    char *key;
    const char *value;
};

struct kv_list {
    struct kv *items;
    size_t count, cap;
};

struct args {
    /* argv with pulsar-client's -db style flags spelled long (expand_dash_aliases): option
     * values point into it, so it lives as long as the args, with the strings made for it
     * (getopt_long reorders the array, so those are listed apart). */
    char **expanded;
    char **made;
    int n_made;
    const char *topic;
    const char *service_url; /* NULL until -u or --conf-file gives one */
    const char *key;
    const char *key_separator; /* NULL: --stdin lines are whole payloads */
    const char *producer_name;
    const char *separator; /* --separator: splits -m values; NULL: no splitting */
    const char *conf_file;
    struct client_conf file; /* what --conf-file gave */
    struct payload *payloads; /* from -m and -f, in command-line order */
    size_t n_payloads, cap_payloads;
    bool use_stdin;
    bool use_size;
    uint64_t size;
    uint64_t num_produce;
    double rate;
    struct kv_list properties;
    struct kv_list conf;
    struct kv_list client_conf;
    struct kv_list flag_settings; /* dedicated flags that are producer settings */
    struct kv_list security;      /* TLS and authentication flags: client settings */
    struct schema_flags schema;
    struct schema_input *schema_in; /* NULL: no schema (bytes) */
    struct kv_list enc_names;     /* --encryption-key-name, in order (key only) */
    struct kv_list enc_keys;      /* --encryption-public-key files, in order (key only) */
    const char *memory_limit;
    int64_t sequence_id_start;    /* -1: automatic ids */
    bool verbose;
};

/* Takes ownership of data and key (which may be NULL). */
static void add_payload(struct args *a, char *data, size_t len, char *key)
{
    a->payloads = grow(a->payloads, &a->cap_payloads, a->n_payloads, sizeof *a->payloads);
    a->payloads[a->n_payloads++] = (struct payload){data, len, key, false, false, 0};
}

/* A flag from setting_flags becomes "key=value" in a->flag_settings. */
static bool add_setting_flag(struct args *a, int id, const char *optarg_value)
{
    for (size_t i = 0; i < sizeof setting_flags / sizeof setting_flags[0]; i++) {
        if (setting_flags[i].id != id)
            continue;
        const char *value = setting_flags[i].fixed ? setting_flags[i].fixed : optarg_value;
        /* One block "key\0value": the list frees it through the key. */
        size_t klen = strlen(setting_flags[i].key), vlen = strlen(value);
        char *block = xrealloc(NULL, klen + vlen + 2);
        memcpy(block, setting_flags[i].key, klen + 1);
        char *v = memcpy(block + klen + 1, value, vlen + 1);
        /* Accept "round-robin" for "round_robin", as the official tools spell it. */
        for (char *p = v; *p; p++)
            if (*p == '-')
                *p = '_';
        struct kv_list *list = &a->flag_settings;
        list->items = grow(list->items, &list->cap, list->count, sizeof *list->items);
        list->items[list->count++] = (struct kv){block, v};
        return true;
    }
    return false;
}

static void add_kv(struct kv_list *list, const char *option, const char *arg)
{
    const char *eq = strchr(arg, '=');
    if (!eq || eq == arg)
        usage_error("%s expects KEY=VALUE, got '%s'", option, arg);
    size_t klen = (size_t)(eq - arg);
    char *key = xrealloc(NULL, klen + 1);
    memcpy(key, arg, klen);
    key[klen] = '\0';
    list->items = grow(list->items, &list->cap, list->count, sizeof *list->items);
    list->items[list->count++] = (struct kv){key, eq + 1};
}

static void free_kv_list(struct kv_list *list)
{
    for (size_t i = 0; i < list->count; i++)
        free(list->items[i].key);
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

/* One option's "-x, --name ARG" column of --help. */
static int option_label(char *buf, size_t size, const struct cli_option *o)
{
    const char *sp = o->arg ? " " : "", *arg = o->arg ? o->arg : "";
    if (o->dash_alias)
        return snprintf(buf, size, "  -%s, --%s%s%s", o->dash_alias, o->name, sp, arg);
    if (o->id < 256)
        return snprintf(buf, size, "  -%c, --%s%s%s", o->id, o->name, sp, arg);
    return snprintf(buf, size, "      --%s%s%s", o->name, sp, arg);
}

static void print_option_help(FILE *out, const struct cli_option *o)
{
    char left[64];
    int n = option_label(left, sizeof left, o);
    const int width = 28;
    if (n < width)
        fprintf(out, "%-*s", width, left);
    else
        fprintf(out, "%s\n%*s", left, width, "");
    for (const char *c = o->help; *c; c++) {
        if (*c == '\n')
            fprintf(out, "\n%*s", width, "");
        else
            fputc(*c, out);
    }
    fputc('\n', out);
}

static void print_help(FILE *out)
{
    fprintf(out,
            "Usage: " PROG " [OPTIONS] TOPIC\n"
            "\n"
            "Publish messages to a Pulsar topic with pulsarc, then print\n"
            "  sent=N failed=M elapsed=S.SSSs rate=R msg/s throughput=T MB/s\n"
            "  last-sequence-id=<n> producer-name=<name>\n"
            "to standard output. The flags of `pulsar-client produce` mean the same here.\n");
    size_t n;
    const struct cli_option *opts = all_options(&n);
    for (size_t i = 0; i < n; i++) {
        if (!opts[i].name)
            fprintf(out, "\n%s\n", opts[i].help);
        else if (opts[i].help)
            print_option_help(out, &opts[i]);
    }
    fprintf(out,
            "\n"
            "Defaults that differ from the library's:\n"
            "  blockIfQueueFull=true   a fast loop waits for room instead of failing with\n"
            "                          QUEUE_FULL; --conf blockIfQueueFull=false restores\n"
            "                          the library default (rejected sends count as failed)\n"
            "\n"
            "Exit status: 0 every message was persisted; 1 a message failed, could not be\n"
            "sent or the run was interrupted; 2 usage or configuration error.\n");
}

/* The row whose dash_alias is arg (after its '-'), alone or as "alias=value". */
static const struct cli_option *find_dash_alias(const char *arg, const char **value)
{
    size_t n;
    const struct cli_option *opts = all_options(&n);
    for (size_t i = 0; i < n; i++) {
        const char *alias = opts[i].dash_alias;
        size_t len = alias ? strlen(alias) : 0;
        if (!alias || strncmp(arg, alias, len) != 0 || (arg[len] && arg[len] != '='))
            continue;
        *value = arg[len] == '=' ? arg + len + 1 : NULL;
        return &opts[i];
    }
    return NULL;
}

/* Whether "--name" (possibly abbreviated, as getopt_long allows) takes the next
 * argument as its value. */
static bool long_option_takes_next(const char *name)
{
    if (strchr(name, '='))
        return false;
    size_t n, len = strlen(name);
    const struct cli_option *opts = all_options(&n);
    const struct cli_option *exact = find_option(name);
    if (exact)
        return exact->has_arg == required_argument;
    for (size_t i = 0; i < n; i++)
        if (opts[i].name && strncmp(opts[i].name, name, len) == 0 &&
            opts[i].has_arg == required_argument)
            return true;
    return false;
}

/* Whether a cluster of short letters ("kn", "m" ...) ends with one that takes the next
 * argument as its value. */
static bool short_cluster_takes_next(const char *letters)
{
    size_t n;
    const struct cli_option *opts = all_options(&n);
    for (const char *c = letters; *c; c++) {
        const struct cli_option *o = NULL;
        for (size_t i = 0; i < n && !o; i++)
            if (opts[i].name && opts[i].id == (unsigned char)*c)
                o = &opts[i];
        if (!o)
            return false; /* getopt reports the unknown letter */
        if (o->has_arg == required_argument)
            return c[1] == '\0'; /* otherwise the rest of the cluster is the value */
    }
    return false;
}

/* A copy of argv in which pulsar-client's multi-letter single-dash flags ("-db",
 * "-ekn=K") are spelled long ("--disable-batching", "--encryption-key-name=K"), which
 * getopt_long understands. Option values are skipped, so `-m -db` still sends "-db".
 * The copy and the strings made for it go with the args (free_args). */
static char **expand_dash_aliases(int argc, char **argv, struct args *a)
{
    char **out = xrealloc(NULL, ((size_t)argc + 1) * sizeof *out);
    a->made = xrealloc(NULL, ((size_t)argc + 1) * sizeof *a->made);
    bool value_next = false, options_ended = false;
    for (int i = 0; i < argc; i++) {
        char *arg = out[i] = argv[i];
        if (i == 0 || options_ended || value_next || arg[0] != '-' || arg[1] == '\0') {
            value_next = false;
            continue;
        }
        if (strcmp(arg, "--") == 0) {
            options_ended = true;
        } else if (arg[1] == '-') {
            value_next = long_option_takes_next(arg + 2);
        } else {
            const char *value;
            const struct cli_option *o = find_dash_alias(arg + 1, &value);
            if (!o) {
                value_next = short_cluster_takes_next(arg + 1);
                continue;
            }
            size_t size = strlen(o->name) + (value ? strlen(value) : 0) + 4;
            out[i] = a->made[a->n_made++] = xrealloc(NULL, size);
            snprintf(out[i], size, "--%s%s%s", o->name, value ? "=" : "", value ? value : "");
            value_next = o->has_arg == required_argument && !value;
        }
    }
    out[argc] = NULL;
    return out;
}

/* getopt_long's tables from the option rows. short_opts has room for 2 * n + 2. */
static void build_getopt_tables(struct option *long_opts, char *short_opts)
{
    size_t n, nl = 0, ns = 0;
    const struct cli_option *opts = all_options(&n);
    /* Leading ':' makes getopt report a missing argument as ':' (not '?'), so the two
     * mistakes get different messages; we print them ourselves (opterr = 0). */
    short_opts[ns++] = ':';
    for (size_t i = 0; i < n; i++) {
        const struct cli_option *o = &opts[i];
        if (!o->name)
            continue;
        long_opts[nl++] = (struct option){o->name, o->has_arg, NULL, o->id};
        if (o->id < 256 && !strchr(short_opts, o->id)) {
            short_opts[ns++] = (char)o->id;
            if (o->has_arg == required_argument)
                short_opts[ns++] = ':';
        }
        short_opts[ns] = '\0';
    }
    long_opts[nl] = (struct option){NULL, 0, NULL, 0};
}

static void push_kv(struct kv_list *list, const char *key, const char *value)
{
    list->items = grow(list->items, &list->cap, list->count, sizeof *list->items);
    list->items[list->count++] = (struct kv){xmemdup(key, strlen(key)), value};
}

/* The options of pulsar-client produce that pulsarc cannot honour: refused rather than
 * silently ignored, since each changes what is stored or who can read it. */
static _Noreturn void refuse_unsupported(const struct cli_option *o)
{
    usage_error("--%s (pulsar-client's -%s) is not supported by pulsarc yet: it needs %s",
                o->name, o->dash_alias, o->help);
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
    case OPT_STDIN:
        a->use_stdin = true;
        return true;
    case OPT_VERBOSE:
        a->verbose = true;
        return true;
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
    case OPT_SEQUENCE_ID_START:
        if (!parse_u64(arg, &v) || v > INT64_MAX / 2)
            usage_error("--sequence-id-start expects a number, got '%s'", arg);
        a->sequence_id_start = (int64_t)v;
        return true;
    }
    return false;
}

/* One option from getopt_long; long_name is the option's name when it was spelled long. */
static void handle_option(struct args *a, int c, const char *arg, const char *long_name,
                          char **argv)
{
    if (handle_value_option(a, c, arg) || handle_checked_option(a, c, arg))
        return;
    const struct cli_option *o = long_name ? find_option(long_name) : NULL;
    switch (c) {
    case OPT_SECURITY: {
        const struct security_flag *f = security_flag_find(long_name);
        push_kv(&a->security, f->key, f->fixed ? f->fixed : arg);
        return;
    }
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
        if (add_setting_flag(a, c, arg))
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
    for (size_t i = 0; i < a->enc_keys.count; i++)
        if (access(a->enc_keys.items[i].key, R_OK) != 0)
            usage_error("encryption public key '%s': %s", a->enc_keys.items[i].key,
                        strerror(errno));
    if (a->enc_names.count != a->enc_keys.count)
        usage_error("%zu --encryption-key-name but %zu --encryption-public-key: give them in "
                    "pairs", a->enc_names.count, a->enc_keys.count);
}

static void parse_args(int argc, char **argv, struct args *a)
{
    struct option long_opts[N_CLI_OPTIONS + MAX_SECURITY_ROWS + 2];
    char short_opts[2 * (N_CLI_OPTIONS + MAX_SECURITY_ROWS) + 4];
    build_getopt_tables(long_opts, short_opts);
    *a = (struct args){.num_produce = 1, .sequence_id_start = -1};

    argv = a->expanded = expand_dash_aliases(argc, argv, a);
    opterr = 0;
    int c, idx;
    while ((idx = -1, c = getopt_long(argc, argv, short_opts, long_opts, &idx)) != -1)
        handle_option(a, c, optarg, idx >= 0 ? long_opts[idx].name : NULL, argv);
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

/* ---------------------------------------------------------------------------------
 * Results, updated from send callbacks on the client's loop thread and read by main.
 * ------------------------------------------------------------------------------- */

static struct {
    atomic_uint_fast64_t sent;
    atomic_uint_fast64_t failed;
    atomic_uint_fast64_t sent_bytes;
    atomic_uint_fast64_t reported; /* failure lines printed so far */
} stats;

/* Set before the client starts (so the loop thread sees it), read-only afterwards. */
static bool g_verbose;

/* Set by SIGINT/SIGTERM: stop sending, then flush and report what did get through. */
static volatile sig_atomic_t g_interrupted;

/* The failure that ended the sending (PULSARC_OK: none yet), set by whichever thread saw
 * it first. */
static atomic_int g_stop_result;

/* Written once sending must end (a signal, a stopped producer) and never drained, so
 * every later wait on its read end returns at once. The main thread waits on it together
 * with standard input or the pacer's deadline: it cannot miss the event, even one that
 * happened just before the wait began. */
static int g_wake_pipe[2];

/* What a send callback needs to know about its message. */
struct send_ctx {
    uint64_t index; /* 1-based, in send order */
    size_t len;
};

/* pulsarc_last_error_detail() is valid only until the next pulsarc call on the thread,
 * and describing the result is one: callers copy the detail first. */
#define DETAIL_MAX 512

static void copy_error_detail(char detail[DETAIL_MAX])
{
    snprintf(detail, DETAIL_MAX, "%s", pulsarc_last_error_detail());
}

static void report_failure(uint64_t index, pulsarc_result res, const char *what,
                           const char *detail)
{
    uint_fast64_t n = atomic_fetch_add(&stats.reported, 1);
    if (n < MAX_REPORTED_FAILURES || g_verbose) {
        fprintf(stderr, PROG ": message %" PRIu64 " %s: %s [%s]%s%s\n", index, what,
                pulsarc_strerror(res), pulsarc_result_name(res), detail[0] ? ": " : "",
                detail);
    } else if (n == MAX_REPORTED_FAILURES) {
        fprintf(stderr, PROG ": further failures are counted but not printed (--verbose prints all)\n");
    }
}

/* Whether a failure says the producer has stopped, so that every later message would
 * only fail the same way: a terminal error (topic terminated, producer fenced, not
 * authorised, ...) or a closed producer. Other failures (a send timeout, a full queue, a
 * message too big) concern their own message, and sending goes on. */
static bool stops_producer(pulsarc_result res)
{
    return pulsarc_result_is_terminal(res) || res == PULSARC_ERR_ALREADY_CLOSED;
}

/* Async-signal-safe, for on_signal. */
static void wake_main_thread(void)
{
    /* The result needs no check: the pipe gets at most two bytes, so it cannot fill. */
    ssize_t n = write(g_wake_pipe[1], "", 1);
    (void)n;
}

/* Ends the sending after a failure the rest of the run would share: says so once, with
 * the detail (the per-message lines stop after MAX_REPORTED_FAILURES), and wakes the main
 * thread wherever it waits. */
static void stop_sending(pulsarc_result res, const char *detail)
{
    int none = PULSARC_OK;
    if (!atomic_compare_exchange_strong(&g_stop_result, &none, (int)res))
        return;
    fprintf(stderr, PROG ": producer stopped: %s [%s]%s%s; sending no more messages\n",
            pulsarc_strerror(res), pulsarc_result_name(res), detail[0] ? ": " : "", detail);
    wake_main_thread();
}

static bool sending_stopped(void)
{
    return g_interrupted || atomic_load(&g_stop_result) != PULSARC_OK;
}

/* Counts and reports a message that failed, and stops the run if the producer has
 * stopped. On either thread, right after the failing pulsarc call. */
static void message_failed(uint64_t index, pulsarc_result res, const char *what)
{
    char detail[DETAIL_MAX];
    copy_error_detail(detail);
    atomic_fetch_add(&stats.failed, 1);
    report_failure(index, res, what, detail);
    if (stops_producer(res))
        stop_sending(res, detail);
}

/* Runs on the loop thread, exactly once per accepted message. */
static void on_send_done(pulsarc_producer_t *producer, pulsarc_result res,
                         const pulsarc_message_id_t *id, void *ctx)
{
    (void)producer;
    struct send_ctx *sc = ctx;
    if (res == PULSARC_OK) {
        atomic_fetch_add(&stats.sent, 1);
        atomic_fetch_add(&stats.sent_bytes, sc->len);
        if (g_verbose) {
            char buf[MESSAGE_ID_STR_MAX];
            pulsarc_message_id_str(id, buf, sizeof buf);
            fprintf(stderr, PROG ": message %" PRIu64 " persisted as %s\n", sc->index, buf);
        }
    } else {
        message_failed(sc->index, res, "failed");
    }
    free(sc);
}

/* ---------------------------------------------------------------------------------
 * Waiting and reading standard input
 * ------------------------------------------------------------------------------- */

/* Waits until fd (-1: none) has input or the timeout (NULL: none) has passed. Returns
 * false, at once, when sending has to stop instead. */
static bool wait_for(int fd, const struct timespec *timeout)
{
    struct pollfd fds[2] = {{.fd = g_wake_pipe[0], .events = POLLIN},
                            {.fd = fd, .events = POLLIN}};
    for (;;) {
        int n = ppoll(fds, 2, timeout, NULL);
        if (sending_stopped())
            return false;
        /* The wake pipe is written only after the stop is recorded, so a ready fd here
         * is fd. Only a signal (EINTR) that stopped nothing means waiting on. */
        if (n >= 0 || errno != EINTR)
            return true;
    }
}

/* Standard input, read with read(2): stdio could hold complete lines in its buffer,
 * where polling the descriptor cannot see them. */
struct line_reader {
    char *buf;
    size_t cap;
    size_t start;   /* the unread bytes are buf[start, start + len) */
    size_t len;
    size_t scanned; /* leading unread bytes known to hold no '\n' */
    bool eof;
};

#define LINE_READER_CHUNK (64 * 1024)

static void line_reader_init(struct line_reader *r)
{
    *r = (struct line_reader){.buf = xrealloc(NULL, LINE_READER_CHUNK), .cap = LINE_READER_CHUNK};
}

/* Appends what standard input has to the unread bytes, after moving them to the start of
 * the buffer, and doubling it when they fill it (a long line). */
static void line_reader_fill(struct line_reader *r)
{
    if (r->start > 0) {
        memmove(r->buf, r->buf + r->start, r->len);
        r->start = 0;
    }
    if (r->len == r->cap) {
        r->cap *= 2;
        r->buf = xrealloc(r->buf, r->cap);
    }
    ssize_t n = read(STDIN_FILENO, r->buf + r->len, r->cap - r->len);
    if (n > 0) {
        r->len += (size_t)n;
    } else if (n == 0) {
        r->eof = true;
    } else if (errno != EINTR && errno != EAGAIN) {
        fprintf(stderr, PROG ": cannot read standard input: %s\n", strerror(errno));
        r->eof = true;
    }
}

/* The next line without its '\n' (a last line without one counts too), valid until the
 * next call. Returns false at the end of input, or when sending stops while it waits. */
static bool next_line(struct line_reader *r, char **line, size_t *len)
{
    for (;;) {
        char *unread = r->buf + r->start;
        char *nl = memchr(unread + r->scanned, '\n', r->len - r->scanned);
        if (nl || (r->eof && r->len > 0)) {
            *line = unread;
            *len = nl ? (size_t)(nl - unread) : r->len;
            size_t used = *len + (nl != NULL);
            r->start += used;
            r->len -= used;
            r->scanned = 0;
            return true;
        }
        r->scanned = r->len;
        if (r->eof || !wait_for(STDIN_FILENO, NULL))
            return false;
        line_reader_fill(r);
    }
}

/* With --key-separator, a line "KEY<SEP>PAYLOAD" split at the first SEP, in place: the
 * separator's first byte becomes the key's terminator. Other lines are all payload. */
static struct payload split_line(char *line, size_t len, const char *sep)
{
    struct payload p = {line, len, NULL, false, false, 0};
    if (!sep)
        return p;
    size_t sep_len = strlen(sep);
    char *at = memmem(line, len, sep, sep_len);
    if (!at)
        return p;
    *at = '\0';
    p.key = line;
    p.data = at + sep_len;
    p.len = len - (size_t)(p.data - line);
    return p;
}

/* Calls handle for each line of standard input, until it returns false, the input ends
 * or sending stops. The payload lives in the reader's buffer until handle returns. */
static void for_each_stdin_line(const char *key_separator,
                                bool (*handle)(const struct payload *p, void *ctx), void *ctx)
{
    struct line_reader r;
    line_reader_init(&r);
    char *line;
    size_t len;
    while (next_line(&r, &line, &len)) {
        struct payload p = split_line(line, len, key_separator);
        if (!handle(&p, ctx))
            break;
    }
    free(r.buf);
}

/* ---------------------------------------------------------------------------------
 * The send loop
 * ------------------------------------------------------------------------------- */

struct run {
    pulsarc_producer_t *producer;
    pulsarc_message_t *msg;       /* builder with the -k key (if any) and the properties */
    pulsarc_message_t *keyed_msg; /* the same for lines with their own key (NULL without
                                     --key-separator): the library cannot remove a key
                                     from a builder, so lines without one use msg */
    const char *key_separator;
    double rate;        /* messages per second; 0 = unpaced */
    double start;       /* now_seconds() when sending began */
    double next_due;    /* now_seconds() at which the next message may go */
    uint64_t attempted; /* send_async calls made */
    int64_t sequence_id_start; /* -1: automatic ids */
    const struct schema_input *schema_in; /* NULL: no schema */
    const char *kv_key; /* -k: the KeyValue key of messages without their own */
};

/* How far the pacer may fall behind and still catch up. Scheduling each message one
 * interval after the previous one's *due* time (not its actual send) makes sleep
 * overshoot and slow sends average out, so the rate comes out at R, not a bit under.
 * Capping the catch-up keeps a pause (say --stdin waiting for input) from turning into
 * a burst above R when the input resumes. */
#define PACER_MAX_LAG 0.01

/* Sleep until the next message is due. */
static void pace(struct run *run)
{
    if (run->rate <= 0.0)
        return;
    double now = now_seconds();
    double wait = run->next_due - now;
    if (wait > 0.0) {
        struct timespec ts = {(time_t)wait, (long)((wait - (double)(time_t)wait) * 1e9)};
        /* A signal or a stop cuts the sleep short; the caller then sees it. */
        wait_for(-1, &ts);
    } else if (wait < -PACER_MAX_LAG) {
        run->next_due = now - PACER_MAX_LAG;
    }
    run->next_due += 1.0 / run->rate;
}

/* Puts payload p, its key and its sequence id into the builder that suits it. */
static pulsarc_result build_message(struct run *run, const struct payload *p, uint64_t index,
                                    pulsarc_message_t **out)
{
    pulsarc_message_t *msg = p->key ? run->keyed_msg : run->msg;
    pulsarc_result res;
    if (schema_input_is_key_value(run->schema_in)) {
        /* The key is part of the pair: one builder, which never holds a plain key. */
        msg = run->msg;
        res = pulsarc_message_set_key_value(msg, schema_input_schema(run->schema_in), p->key,
                                            p->key ? p->key_len : 0, p->data, p->len);
    } else {
        res = p->key ? pulsarc_message_set_key(msg, p->key) : PULSARC_OK;
        if (res == PULSARC_OK)
            res = pulsarc_message_set_payload(msg, p->data, p->len);
    }
    if (res == PULSARC_OK && run->sequence_id_start >= 0)
        res = pulsarc_message_set_sequence_id(msg, run->sequence_id_start + (int64_t)index - 1);
    *out = msg;
    return res;
}

/* Returns false when the loop should stop (interrupted, or the run stopped). */
static bool send_one(struct run *run, const struct payload *p)
{
    pace(run);
    if (sending_stopped())
        return false;

    uint64_t index = ++run->attempted;
    /* With a schema, text becomes the bytes it wants (schema_input.h). */
    struct schema_message enc = {.data = p->data, .len = p->len, .key = p->key};
    char err[DETAIL_MAX];
    if (run->schema_in && schema_input_message(run->schema_in, p->data, p->len, p->raw,
                                               p->key ? p->key : run->kv_key, &enc, err,
                                               sizeof err) != 0) {
        atomic_fetch_add(&stats.failed, 1);
        report_failure(index, PULSARC_ERR_INVALID_PAYLOAD, "could not be converted", err);
        return !sending_stopped();
    }
    struct payload converted = {(char *)enc.data, enc.len, (char *)enc.key, false, true,
                                enc.key_len};
    pulsarc_message_t *msg;
    pulsarc_result res = build_message(run, &converted, index, &msg);
    if (res != PULSARC_OK) {
        message_failed(index, res, "could not be built");
    } else {
        struct send_ctx *sc = xrealloc(NULL, sizeof *sc);
        *sc = (struct send_ctx){index, enc.len};
        res = pulsarc_producer_send_async(run->producer, msg, on_send_done, sc);
        if (res != PULSARC_OK) {
            /* Not accepted: no callback will come, so count and free here. */
            free(sc);
            message_failed(index, res, "was rejected");
        }
    }
    schema_message_free(&enc); /* the send has copied the payload (copy mode) */
    return !sending_stopped();
}

static bool send_line(const struct payload *p, void *run)
{
    return send_one(run, p);
}

static bool keep_line(const struct payload *p, void *args)
{
    add_payload(args, xmemdup(p->data, p->len), p->len,
                p->key ? xmemdup(p->key, strlen(p->key)) : NULL);
    return true;
}

/* Streams standard input, one message per line, so `tail -f log | pulsarc-produce`
 * publishes as lines arrive instead of after end of input. */
static void send_stdin_lines(struct run *run)
{
    for_each_stdin_line(run->key_separator, send_line, run);
}

/* Reads all of standard input into the set; used when -n repeats it. */
static void read_stdin_lines(struct args *a)
{
    for_each_stdin_line(a->key_separator, keep_line, a);
}

/* Random-ish bytes (xorshift64): enough to defeat compression and look like data. */
static char *synthetic_payload(size_t size)
{
    char *buf = xrealloc(NULL, size);
    uint64_t x = (uint64_t)time(NULL) ^ 0x9E3779B97F4A7C15u;
    for (size_t i = 0; i < size; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        buf[i] = (char)(x >> 56);
    }
    return buf;
}

/* Before anything waits on it (see g_wake_pipe). */
static void open_wake_pipe(void)
{
    if (pipe(g_wake_pipe) != 0) {
        fprintf(stderr, PROG ": cannot create a pipe: %s\n", strerror(errno));
        exit(EXIT_SOME_FAILED);
    }
}

static void on_signal(int sig)
{
    (void)sig;
    int saved_errno = errno; /* the interrupted code may be about to read it */
    g_interrupted = 1;
    wake_main_thread();
    errno = saved_errno;
}

/* First SIGINT/SIGTERM: stop sending, flush, report. SA_RESETHAND makes a second one
 * kill the process, in case the broker is unreachable and the flush hangs. The handler
 * wakes the main thread's waits for input or for the pacer, on whichever thread it runs. */
static void install_signal_handlers(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    /* A broker that drops the connection must show up as a send error, not kill us. */
    signal(SIGPIPE, SIG_IGN);
}

/* ---------------------------------------------------------------------------------
 * Setup
 * ------------------------------------------------------------------------------- */

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

static pulsarc_client_config_t *make_client_config(const struct args *a)
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

static pulsarc_producer_config_t *make_producer_config(const struct args *a)
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
static pulsarc_message_t *make_message(const struct args *a)
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

/* Errors in what the user typed are usage errors; the rest are run-time failures. */
static int setup_exit_status(pulsarc_result res)
{
    return res == PULSARC_ERR_INVALID_URL || res == PULSARC_ERR_INVALID_TOPIC ||
                   res == PULSARC_ERR_INVALID_CONFIG || res == PULSARC_ERR_INVALID_ARGUMENT
               ? EXIT_USAGE
               : EXIT_SOME_FAILED;
}

static void print_setup_error(const char *what, const char *arg, pulsarc_result res)
{
    char detail[DETAIL_MAX];
    copy_error_detail(detail);
    fprintf(stderr, PROG ": %s '%s': %s [%s]%s%s\n", what, arg, pulsarc_strerror(res),
            pulsarc_result_name(res), detail[0] ? ": " : "", detail);
}

static void free_args(struct args *a)
{
    for (size_t i = 0; i < a->n_payloads; i++) {
        free(a->payloads[i].data);
        free(a->payloads[i].key);
    }
    free(a->payloads);
    free_kv_list(&a->properties);
    free_kv_list(&a->conf);
    free_kv_list(&a->client_conf);
    free_kv_list(&a->flag_settings);
    free_kv_list(&a->security);
    free_kv_list(&a->enc_names);
    free_kv_list(&a->enc_keys);
    client_conf_free(&a->file);
    schema_input_free(a->schema_in);
    for (int i = 0; i < a->n_made; i++)
        free(a->made[i]);
    free(a->made);
    free(a->expanded);
}

/* Sends everything the arguments ask for on an open producer. Returns true when the
 * sending ran to its end (not interrupted, not stopped by a failure). */
static bool send_all(struct args *a, struct run *run, bool stream_stdin)
{
    for (uint64_t round = 0; round < a->num_produce; round++) {
        for (size_t i = 0; i < a->n_payloads; i++) {
            if (a->use_size && a->size >= 8)
                /* Stamp the message number so synthetic messages differ from each other. */
                memcpy(a->payloads[i].data, &run->attempted, 8);
            if (!send_one(run, &a->payloads[i]))
                return false;
        }
    }
    if (stream_stdin)
        send_stdin_lines(run);
    return !sending_stopped();
}

/* Creates client and producer, sends with run's message builders, flushes, closes and
 * prints the result lines. Takes ownership of both configs. Returns the exit status. */
static int produce(struct args *a, struct run *run, pulsarc_client_config_t *client_conf,
                   pulsarc_producer_config_t *producer_conf, bool stream_stdin)
{
    pulsarc_client_t *client = NULL;
    pulsarc_result res = pulsarc_client_new(a->service_url, client_conf, &client);
    pulsarc_client_config_free(client_conf);
    if (res != PULSARC_OK) {
        pulsarc_producer_config_free(producer_conf);
        print_setup_error("cannot create client for", a->service_url, res);
        return setup_exit_status(res);
    }

    pulsarc_producer_t *producer = NULL;
    res = pulsarc_client_create_producer(client, a->topic, producer_conf, &producer);
    pulsarc_producer_config_free(producer_conf);
    if (res != PULSARC_OK) {
        print_setup_error("cannot create producer on", a->topic, res);
        pulsarc_client_destroy(client);
        return setup_exit_status(res);
    }

    run->producer = producer;
    run->start = run->next_due = now_seconds();
    bool completed = send_all(a, run, stream_stdin);
    if (g_interrupted)
        fprintf(stderr, PROG ": interrupted; flushing what was sent\n");

    /* flush returns the first failure among the pending messages, which the callbacks
     * have already counted and printed; only a failure of flush itself is news. */
    res = pulsarc_producer_flush(producer);
    double elapsed = now_seconds() - run->start;
    if (res != PULSARC_OK && atomic_load(&stats.failed) == 0)
        print_setup_error("flush of", a->topic, res);

    res = pulsarc_producer_close(producer);
    if (res != PULSARC_OK)
        print_setup_error("close of producer on", a->topic, res);

    /* Copy what the second result line needs: both belong to the producer handle. */
    int64_t last_seq = pulsarc_producer_last_sequence_id(producer);
    const char *name = pulsarc_producer_name(producer);
    if (!name)
        name = "";
    char *producer_name = xmemdup(name, strlen(name));
    pulsarc_producer_free(producer);
    /* Destroy before reading the counters: it completes anything still pending, so
     * every accepted message has had its callback by now. */
    pulsarc_client_destroy(client);

    uint64_t sent = atomic_load(&stats.sent);
    uint64_t failed = atomic_load(&stats.failed);
    double mb = (double)atomic_load(&stats.sent_bytes) / (1024.0 * 1024.0);
    printf("sent=%" PRIu64 " failed=%" PRIu64 " elapsed=%.3fs rate=%.1f msg/s "
           "throughput=%.3f MB/s\n",
           sent, failed, elapsed, elapsed > 0 ? (double)sent / elapsed : 0.0,
           elapsed > 0 ? mb / elapsed : 0.0);
    printf("last-sequence-id=%" PRId64 " producer-name=%s\n", last_seq, producer_name);
    fflush(stdout);
    free(producer_name);

    bool all_sent = completed && failed == 0 && sent == run->attempted;
    return all_sent ? EXIT_ALL_SENT : EXIT_SOME_FAILED;
}

int main(int argc, char **argv)
{
    struct args a;
    parse_args(argc, argv, &a);
    g_verbose = a.verbose;

    open_wake_pipe();
    /* With -n > 1 stdin must be read whole to be repeated; otherwise it is streamed. */
    bool stream_stdin = a.use_stdin && a.num_produce == 1;
    if (a.use_stdin && !stream_stdin)
        read_stdin_lines(&a);
    if (a.use_size) {
        add_payload(&a, synthetic_payload((size_t)a.size), (size_t)a.size, NULL);
        a.payloads[a.n_payloads - 1].raw = true;
    }

    /* Configuration problems are reported (exit 2) before anything connects. */
    pulsarc_client_config_t *client_conf = make_client_config(&a);
    pulsarc_producer_config_t *producer_conf = make_producer_config(&a);
    struct run run = {
        .msg = make_message(&a),
        .keyed_msg = a.key_separator ? make_message(&a) : NULL,
        .key_separator = a.key_separator,
        .rate = a.rate,
        .sequence_id_start = a.sequence_id_start,
        .schema_in = a.schema_in,
        .kv_key = schema_input_is_key_value(a.schema_in) ? a.key : NULL,
    };

    install_signal_handlers();
    int status = produce(&a, &run, client_conf, producer_conf, stream_stdin);

    pulsarc_message_free(run.msg);
    pulsarc_message_free(run.keyed_msg);
    free_args(&a);
    return status;
}
