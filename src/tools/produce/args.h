/*
 * pulsarc-produce's parsed command line (args.c): what to send, how often, and the
 * settings for the client, the producer and the messages.
 */
#ifndef PULSARC_PRODUCE_ARGS_H
#define PULSARC_PRODUCE_ARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../cli_common/client_conf.h"
#include "../cli_common/schema_input.h"
#include "options.h"
#include "payload.h"

/* KEY=VALUE split at the first '='; key is malloc'ed, value points into argv. */
struct kv {
    char *key;
    const char *value;
};

struct kv_list {
    struct kv *items;
    size_t count, cap;
};

/* A flag that is one library setting (-z, --batch-max-bytes, --spool-dir, the TLS and
 * authentication flags): the setting, and the flag as the user typed it, so that an
 * error names the flag and the value typed rather than the key. */
struct flag_setting {
    const char *key;
    char *value;       /* malloc'ed */
    const char *typed; /* the argument as typed; NULL: a flag without one */
    const char *what;  /* the setting in words ("compression"); NULL: not enumerated */
    char flag[40];     /* "-z" or "--compression" */
};

struct flag_setting_list {
    struct flag_setting *items;
    size_t count, cap;
};

struct args {
    struct expanded_argv expanded; /* argv as getopt_long saw it: option values point into it */
    const char *topic;
    const char *service_url; /* NULL until -u or --conf-file gives one */
    const char *key;
    const char *key_separator; /* NULL: --stdin lines are whole payloads */
    const char *producer_name;
    const char *separator; /* --separator: splits -m values; NULL: no splitting */
    const char *conf_file;
    struct client_conf file;  /* what --conf-file gave */
    struct payload *payloads; /* from -m and -f, in command-line order */
    size_t n_payloads, cap_payloads;
    bool use_stdin;
    bool use_size;
    uint64_t size;
    uint64_t num_produce;
    double rate;
    struct kv_list properties;
    struct kv_list producer_properties; /* --producer-property */
    bool disable_replication;           /* -dr */
    const char *replication_clusters;   /* --replication-clusters C1,C2; NULL: not given */
    uint64_t deliver_after_ms;          /* --deliver-after; 0: at once */
    bool null_value;                    /* --null-value: tombstones */
    struct kv_list conf;
    struct kv_list client_conf;
    struct flag_setting_list flag_settings; /* dedicated flags that are producer settings */
    struct flag_setting_list security;      /* TLS and authentication flags: client settings */
    struct schema_flags schema;
    struct schema_input *schema_in; /* NULL: no schema (bytes) */
    struct kv_list enc_names;       /* --encryption-key-name, in order (key only) */
    struct kv_list enc_keys;        /* --encryption-public-key files, in order (key only) */
    const char *memory_limit;
    const char *listener_name; /* --listener-name; NULL: the brokers' internal listener */
    int64_t sequence_id_start; /* -1: automatic ids */
    bool verbose;
    bool keep_going;            /* --keep-going: failed messages do not stop the run */
    const char *stats_json;     /* --stats-json FILE; NULL: none */
    const char *metrics_listen; /* --metrics-listen HOST:PORT; NULL: none */
    uint64_t txn_batch;         /* --txn-batch N; 0: no transactions */
    bool txn_abort;             /* --txn-abort */
};

/* Parses the command line into a; a usage error ends the process (EXIT_USAGE), --help
 * and --version end it too. Everything but the set's --stdin lines and --size message
 * is in a on return. */
void parse_args(int argc, char **argv, struct args *a);

void free_args(struct args *a);

/* Appends a message to the set. Takes ownership of data and key (which may be NULL). */
void add_payload(struct args *a, char *data, size_t len, char *key);

#endif
