/*
 * pulsarc-produce's option table. One row per option drives getopt_long's table, the
 * short-option string and --help, so adding a flag is one row here plus one case in
 * handle_option() (args.c), or one row of setting_flags there for a flag that is a plain
 * producer setting. Rows with a NULL name are section headings for --help; rows with a
 * NULL help are accepted spellings that --help does not list.
 *
 * Pulsar's `bin/pulsar-client produce` users should find its flags here with the same
 * meaning, so none of its letters means anything else: -c is chunking, -s the separator
 * of -m values, -v the version (compression is -z, the synthetic size --size, verbose
 * --verbose). Its multi-letter single-dash flags (-db, -dr, -ekn, ...) are rows with a
 * dash_alias; expand_dash_aliases() turns them into the long form before getopt_long.
 * docs/cli.md is the user documentation; keep it in step with the table below.
 */
#include "options.h"

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../cli_common/schema_input.h"
#include "../cli_common/security_flags.h"
#include "util.h"

static const struct cli_option cli_options[] = {
    { NULL, 0, 0, NULL, "Connection:", NULL },
    { "service-url", 'u', required_argument, "URL",
      "broker service URL (default: brokerServiceUrl of\n--conf-file, else "
      "pulsar://localhost:6650)",
      NULL },
    { "url", 'u', required_argument, "URL", NULL, NULL },
    { "conf-file", OPT_CONF_FILE, required_argument, "FILE",
      "Pulsar's client.conf: service URL, TLS and auth settings\n(the flags override it)", NULL },
    { "client-conf", OPT_CLIENT_CONF, required_argument, "KEY=VALUE",
      "client setting, passed to pulsarc_client_config_set\n(repeatable)", NULL },
    { "listener-name", OPT_LISTENER_NAME, required_argument, "NAME",
      "the brokers' advertised listener to look up and connect to\n(client setting listenerName)",
      NULL },

    { NULL, 0, 0, NULL,
      "What to send (-m, -f and --stdin combine, in that order; --size stands alone):", NULL },
    { "messages", 'm', required_argument, "MSG", "one message with this text (repeatable)", NULL },
    { "separator", 's', required_argument, "SEP",
      "split every -m value at each SEP into several messages\n(default: no splitting)", NULL },
    { "files", 'f', required_argument, "FILE", "one message with the bytes of FILE (repeatable)",
      NULL },
    { "stdin", OPT_STDIN, no_argument, NULL,
      "one message per line of standard input, without the\nnewline (empty lines are empty "
      "messages)",
      NULL },
    { "size", OPT_SIZE, required_argument, "BYTES",
      "one synthetic message of BYTES random-ish bytes", NULL },
    { "num-produce", 'n', required_argument, "N", "send the message set N times (default 1)",
      NULL },
    { "rate", 'r', required_argument, "R", "at most R messages per second (default 0 = no limit)",
      NULL },

    { NULL, 0, 0, NULL, "Message metadata:", NULL },
    { "key", 'k', required_argument, "KEY", "message key (routes to a partition)", NULL },
    { "key-separator", OPT_KEY_SEPARATOR, required_argument, "SEP",
      "--stdin lines are KEY<SEP>PAYLOAD: split at the first SEP;\n"
      "lines without SEP have no key",
      NULL },
    { "property", 'p', required_argument, "K=V", "message property (repeatable)", NULL },
    { "properties", 'p', required_argument, "K=V", NULL, NULL },
    { "disable-replication", OPT_DISABLE_REPLICATION, no_argument, NULL,
      "replicate the messages to no other cluster\n(geo-replication; replicate_to __local__)",
      "dr" },
    { "replication-clusters", OPT_REPLICATION_CLUSTERS, required_argument, "C1,C2",
      "replicate the messages only to these clusters", NULL },
    { "null-value", OPT_NULL_VALUE, no_argument, NULL,
      "send each message with a null value, its payload dropped\n"
      "(with a key: a tombstone on a compacted topic)",
      NULL },
    { "deliver-after", OPT_DELIVER_AFTER, required_argument, "MS",
      "deliver each message no earlier than MS after its send\n"
      "(Shared and Key_Shared subscriptions; never batched)",
      NULL },

    { NULL, 0, 0, NULL, "Schema (default: bytes, no schema; see docs/cli.md):", NULL },
    { SCHEMA_FLAG_TYPE, OPT_SCHEMA_FLAG, required_argument, "TYPE",
      "string | json | avro | int32 | ... | auto_produce; -m and\n"
      "--stdin text is converted (numbers; JSON to Avro)",
      NULL },
    { SCHEMA_FLAG_FILE, OPT_SCHEMA_FLAG, required_argument, "FILE",
      "the definition: an Avro schema (JSON) for json and avro", NULL },
    { SCHEMA_FLAG_NAME, OPT_SCHEMA_FLAG, required_argument, "NAME",
      "the schema's name (default: the Java client's)", NULL },
    { SCHEMA_FLAG_KV_ENCODING, OPT_SCHEMA_FLAG, required_argument, "ENC",
      "inline | separated: a KeyValue schema of the key schema\n"
      "and --schema-type; the message key (-k) is its key",
      NULL },
    { SCHEMA_FLAG_KEY_TYPE, OPT_SCHEMA_FLAG, required_argument, "TYPE",
      "the KeyValue key's schema (default string)", NULL },
    { SCHEMA_FLAG_KEY_FILE, OPT_SCHEMA_FLAG, required_argument, "FILE",
      "the KeyValue key's definition", NULL },
    { SCHEMA_FLAG_VALUE_SCHEMA, OPT_SCHEMA_FLAG, required_argument, "TYPE[:DEF]",
      "--schema-type with the definition inline", "vs" },
    { SCHEMA_FLAG_KEY_SCHEMA, OPT_SCHEMA_FLAG, required_argument, "TYPE[:DEF]",
      "--key-schema-type with the definition inline", "ks" },
    { SCHEMA_FLAG_KV_ENCODING_TYPE, OPT_SCHEMA_FLAG, required_argument, "ENC",
      "the same as --kv-encoding", "kvet" },
    { "key-value-key", 'k', required_argument, "KEY", "the same as -k", "kvk" },

    { NULL, 0, 0, NULL, "Producer:", NULL },
    { "producer-name", OPT_PRODUCER_NAME, required_argument, "NAME",
      "fixed producer name (default: assigned by the broker)", NULL },
    { "conf", OPT_CONF, required_argument, "KEY=VALUE",
      "producer setting, passed to pulsarc_producer_config_set\n"
      "(repeatable; applied after the other flags, so it wins)",
      NULL },
    { "access-mode", OPT_ACCESS_MODE, required_argument, "MODE",
      "shared | exclusive | exclusive_with_fencing |\n"
      "wait_for_exclusive (who else may publish; default shared)",
      NULL },
    { "producer-property", OPT_PRODUCER_PROPERTY, required_argument, "K=V",
      "producer property, shown in the broker's topic stats\n(repeatable)", NULL },

    { "compression", 'z', required_argument, "CODEC", "none | lz4 | zlib | zstd | snappy", NULL },
    { "batching", OPT_BATCHING, no_argument, NULL, "batch messages (the default)", NULL },
    { "no-batching", OPT_NO_BATCHING, no_argument, NULL, "one message per frame", NULL },
    { "disable-batching", OPT_NO_BATCHING, no_argument, NULL, "the same (pulsar-client's -db)",
      "db" },
    { "batch-max-messages", OPT_BATCH_MAX_MESSAGES, required_argument, "N",
      "messages per batch (default 1000)", NULL },
    { "batch-max-bytes", OPT_BATCH_MAX_BYTES, required_argument, "BYTES",
      "payload bytes per batch (default 131072)", NULL },
    { "batch-delay-ms", OPT_BATCH_DELAY_MS, required_argument, "MS",
      "send a batch this long after its first message (default 10)", NULL },
    { "key-based-batching", OPT_KEY_BASED_BATCHING, no_argument, NULL,
      "one batch per key (for Key_Shared consumers)", NULL },
    { "routing", OPT_ROUTING, required_argument, "MODE",
      "round_robin | single | sequence_id (partitioned topics; '-' may be used for '_')", NULL },
    { "hashing", OPT_HASHING, required_argument, "SCHEME",
      "java | murmur3 | boost | boost_1_81 | boost_1_80 | boost_1_80_arm64 (key hash)", NULL },
    { "max-pending", OPT_MAX_PENDING, required_argument, "N",
      "messages waiting for a receipt (default 1000)", NULL },
    { "memory-limit", OPT_MEMORY_LIMIT, required_argument, "BYTES",
      "client-wide pending payload bytes (default 64 MiB)", NULL },
    { "chunking", 'c', no_argument, NULL, "split messages above the broker's limit into chunks",
      NULL },
    { "chunk-size", OPT_CHUNK_SIZE, required_argument, "BYTES",
      "chunk size (default: the broker's max message size)", NULL },
    { "send-timeout-ms", OPT_SEND_TIMEOUT, required_argument, "MS",
      "fail a message without a receipt after MS (default 30000;\n0 = never)", NULL },
    { "sequence-id-start", OPT_SEQUENCE_ID_START, required_argument, "N",
      "explicit sequence ids N, N+1, ... (resume deduplication\nwith --producer-name)", NULL },
    { "spool-dir", OPT_SPOOL_DIR, required_argument, "DIR",
      "write each message to a crash-safe spool in DIR before it\n"
      "counts as sent; a rerun with the same DIR and\n"
      "--producer-name first resends what is left (spoolDir)",
      NULL },
    { "spool-fsync", OPT_SPOOL_FSYNC, required_argument, "POLICY",
      "always | interval | never: when the spool reaches the\ndisk (default interval; spoolFsync)",
      NULL },
    { "txn-batch", OPT_TXN_BATCH, required_argument, "N",
      "send in transactions of N messages, each committed once\n"
      "N were sent and the last at the end (turns on\n"
      "enableTransaction; the broker needs\n"
      "transactionCoordinatorEnabled=true)",
      NULL },
    { "txn-abort", OPT_TXN_ABORT, no_argument, NULL,
      "abort each --txn-batch transaction instead (for testing:\nnone of the messages becomes "
      "visible)",
      NULL },

    { NULL, 0, 0, NULL,
      "End-to-end encryption (RSA or EC public keys; the i-th name goes with the i-th key):",
      NULL },
    { "encryption-key-name", OPT_ENC_KEY_NAME, required_argument, "NAME",
      "encrypt for this key name (repeatable; pulsar-client's -ekn)", "ekn" },
    { "encryption-public-key", OPT_ENC_PUBLIC_KEY, required_argument, "FILE",
      "the PEM public key of that name (repeatable)", NULL },
    { "encryption-key-value", OPT_ENC_KEY_VALUE, required_argument, "URI",
      "the same as file:///path (pulsar-client's -ekv)", "ekv" },
    { "crypto-failure-action", OPT_CRYPTO_FAILURE_ACTION, required_argument, "ACTION",
      "fail (default: a message that cannot be encrypted\nfails) | send (send it unencrypted)",
      NULL },

    { NULL, 0, 0, NULL,
      "pulsar-client produce flags for features pulsarc does not have yet (refused):", NULL },
    { "key-value-key-file", OPT_UNSUPPORTED, required_argument, "FILE",
      "a KeyValue key from a file", "kvkf" },

    { NULL, 0, 0, NULL, "Other:", NULL },
    { "keep-going", OPT_KEEP_GOING, no_argument, NULL,
      "after a failed message, count it and send on (default:\n"
      "stop at the first, as pulsar-client does; a failure\n"
      "every later message would share stops the run anyway)",
      NULL },
    { "stats-json", OPT_STATS_JSON, required_argument, "FILE",
      "write the client's final statistics to FILE as JSON\n(docs/statistics.md)", NULL },
    { "metrics-listen", OPT_METRICS_LISTEN, required_argument, "HOST:PORT",
      "serve the client's statistics as Prometheus text on\nhttp://HOST:PORT/metrics while the run "
      "lasts\n"
      "(PORT 0: any free one; the address is printed)",
      NULL },
    { "verbose", OPT_VERBOSE, no_argument, NULL,
      "debug logging, effective settings and one line per\nmessage id (all on stderr)", NULL },
    { "version", 'v', no_argument, NULL, "print the version and exit", NULL },
    { "help", 'h', no_argument, NULL, "show this help and exit", NULL },
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
            table[n++] = (struct cli_option){
                NULL, 0, 0, NULL, "TLS and authentication (override --conf-file):", NULL
            };
            for (size_t j = 0; j < n_security_flags && j < MAX_SECURITY_ROWS; j++) {
                const struct security_flag *f = &security_flags[j];
                table[n++] = (struct cli_option){
                    f->name, OPT_SECURITY, f->arg ? required_argument : no_argument,
                    f->arg,  f->help,      NULL
                };
            }
        }
        table[n++] = *o;
    }
    *count = n;
    return table;
}

const struct cli_option *find_option(const char *name)
{
    size_t n;
    const struct cli_option *opts = all_options(&n);
    for (size_t i = 0; i < n; i++)
        if (opts[i].name && strcmp(opts[i].name, name) == 0)
            return &opts[i];
    return NULL;
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

void print_help(FILE *out)
{
    fprintf(out, "Usage: " PROG " [OPTIONS] TOPIC\n"
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
    fprintf(out, "\n"
                 "Defaults that differ from the library's:\n"
                 "  blockIfQueueFull=true   a fast loop waits for room instead of failing with\n"
                 "                          QUEUE_FULL; --conf blockIfQueueFull=false restores\n"
                 "                          the library default (rejected sends count as failed)\n"
                 "\n"
                 "Exit status: 0 every message was persisted; 1 a message failed, could not be\n"
                 "sent or the run was interrupted; 2 usage or configuration error (also a TLS\n"
                 "setting the library refuses when the client starts).\n");
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

void expand_dash_aliases(int argc, char **argv, struct expanded_argv *e)
{
    char **out = xrealloc(NULL, ((size_t)argc + 1) * sizeof *out);
    *e = (struct expanded_argv){ out, xrealloc(NULL, ((size_t)argc + 1) * sizeof *e->made), 0 };
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
            out[i] = e->made[e->n_made++] = xrealloc(NULL, size);
            snprintf(out[i], size, "--%s%s%s", o->name, value ? "=" : "", value ? value : "");
            value_next = o->has_arg == required_argument && !value;
        }
    }
    out[argc] = NULL;
}

void expanded_argv_free(struct expanded_argv *e)
{
    for (int i = 0; i < e->n_made; i++)
        free(e->made[i]);
    free(e->made);
    free(e->argv);
}

/* getopt_long's tables from the option rows. short_opts has room for 2 * n + 2. */
static void build_getopt_tables(struct option *long_opts, char *short_opts)
{
    size_t n, nl = 0, ns = 0;
    const struct cli_option *opts = all_options(&n);
    /* Leading ':' makes getopt report a missing argument as ':' (not '?'), so the two
     * mistakes get different messages; we print them ourselves (opterr = 0). */
    short_opts[ns++] = ':';
    short_opts[ns] = '\0'; /* strchr below reads it before the first option row */
    for (size_t i = 0; i < n; i++) {
        const struct cli_option *o = &opts[i];
        if (!o->name)
            continue;
        long_opts[nl++] = (struct option){ o->name, o->has_arg, NULL, o->id };
        if (o->id < 256 && !strchr(short_opts, o->id)) {
            short_opts[ns++] = (char)o->id;
            if (o->has_arg == required_argument)
                short_opts[ns++] = ':';
        }
        short_opts[ns] = '\0';
    }
    long_opts[nl] = (struct option){ NULL, 0, NULL, 0 };
}

int next_option(int argc, char **argv, const char **long_name)
{
    static struct option long_opts[N_CLI_OPTIONS + MAX_SECURITY_ROWS + 2];
    static char short_opts[2 * (N_CLI_OPTIONS + MAX_SECURITY_ROWS) + 4];
    if (!short_opts[0]) { /* first call */
        build_getopt_tables(long_opts, short_opts);
        opterr = 0;
    }
    int idx = -1;
    int c = getopt_long(argc, argv, short_opts, long_opts, &idx);
    *long_name = idx >= 0 ? long_opts[idx].name : NULL;
    return c;
}
