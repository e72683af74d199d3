/*
 * pulsarc-produce's option table (options.c) and what is derived from it: --help,
 * pulsar-client's multi-letter single-dash spellings, and getopt_long over the rows.
 */
#ifndef PULSARC_PRODUCE_OPTIONS_H
#define PULSARC_PRODUCE_OPTIONS_H

#include <stdio.h>

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
    OPT_LISTENER_NAME,
    OPT_CHUNK_SIZE,
    OPT_SEND_TIMEOUT,
    OPT_SEQUENCE_ID_START,
    OPT_KEY_SEPARATOR,
    OPT_SIZE,
    OPT_VERBOSE,
    OPT_KEEP_GOING,
    OPT_STATS_JSON,
    OPT_METRICS_LISTEN,
    OPT_CONF_FILE,
    OPT_SECURITY,    /* a row of security_flags: the long name tells which */
    OPT_SCHEMA_FLAG, /* a row of schema_input.h: the long name tells which */
    OPT_ENC_KEY_NAME,
    OPT_ENC_PUBLIC_KEY,
    OPT_ENC_KEY_VALUE, /* pulsar-client's -ekv: a file:// URI or a path */
    OPT_CRYPTO_FAILURE_ACTION,
    OPT_ACCESS_MODE,
    OPT_PRODUCER_PROPERTY,
    OPT_DISABLE_REPLICATION,
    OPT_REPLICATION_CLUSTERS,
    OPT_DELIVER_AFTER,
    OPT_NULL_VALUE,
    OPT_SPOOL_DIR,
    OPT_SPOOL_FSYNC,
    OPT_TXN_BATCH,
    OPT_TXN_ABORT,
    OPT_UNSUPPORTED, /* a pulsar-client flag for a feature pulsarc lacks: refused */
};

struct cli_option {
    const char *name;       /* long name without "--"; NULL = section heading */
    int id;                 /* the short letter, or a long_only_id */
    int has_arg;            /* no_argument | required_argument */
    const char *arg;        /* argument name shown in --help */
    const char *help;       /* may contain '\n' for continuation lines; NULL: not listed */
    const char *dash_alias; /* pulsar-client's multi-letter single-dash spelling */
};

/* The row of this long name, or NULL. */
const struct cli_option *find_option(const char *name);

void print_help(FILE *out);

/* argv with pulsar-client's -db style flags spelled long (expand_dash_aliases): option
 * values point into it, so it lives as long as they are used, with the strings made for
 * it (getopt_long reorders the array, so those are listed apart). */
struct expanded_argv {
    char **argv;
    char **made;
    int n_made;
};

/* A copy of argv in which pulsar-client's multi-letter single-dash flags ("-db",
 * "-ekn=K") are spelled long ("--disable-batching", "--encryption-key-name=K"), which
 * getopt_long understands. Option values are skipped, so `-m -db` still sends "-db". */
void expand_dash_aliases(int argc, char **argv, struct expanded_argv *out);

void expanded_argv_free(struct expanded_argv *e);

/* getopt_long over the option rows: the next option's id, ':' for a missing argument,
 * '?' for an unknown option, -1 after the last. *long_name is the option's name when it
 * was spelled long, else NULL. getopt prints nothing: the caller reports mistakes. */
int next_option(int argc, char **argv, const char **long_name);

#endif
