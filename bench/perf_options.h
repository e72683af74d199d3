/*
 * pulsarc-perf's command line: pulsar-perf produce's flags with their meanings and
 * defaults (topics as arguments, -t topics, -n producers per topic, -m messages, -r rate,
 * -s size, -o max pending, -time, -d / -dr delays, -b / -bm / -bb / -db batching, -z, -ch,
 * -k / -v encryption, -mk keys, -am, -pn, -txn / -nmt / -abort / -tto transactions, ...;
 * an optional leading "produce"), and pulsarc-perf's own long options (--conf,
 * --zero-copy, ...). Every refusal names the argument that is wrong; the pulsar-perf
 * flags it lacks (-f and its -e, -fp, -fc) are refused with the reason.
 */
#ifndef PULSARC_PERF_OPTIONS_H
#define PULSARC_PERF_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cli_common/client_conf.h"

#define PERF_MAX_CONF 64
#define PERF_MAX_REWRITTEN 64
/* Topics x producers per topic; each producer is a handle, its partitions, connections'
 * listeners: enough for any machine this runs on. */
#define PERF_MAX_PRODUCERS 100000

typedef struct conf_kv {
    char key[64];
    const char *value;
} conf_kv_t;

typedef struct conf_list {
    conf_kv_t v[PERF_MAX_CONF];
    int n;
} conf_list_t;

/* How message keys are made (-mk): none, the message's number, a random number. */
typedef enum perf_key_mode {
    PERF_KEYS_NONE = 0,
    PERF_KEYS_AUTO_INCREMENT,
    PERF_KEYS_RANDOM
} perf_key_mode;

typedef struct options {
    const char *service_url;
    char **topic_names; /* the topics, resolved: one name each (perf_options_free) */
    uint32_t topics;    /* -t: how many */
    uint32_t producers; /* -n: per topic */
    size_t size;        /* -s */
    double rate;        /* -r: messages per second over all producers; 0 = unlimited */
    double duration_s;  /* -time: 0 = no limit */
    uint64_t messages;  /* -m: in total; 0 = no limit */
    const char *payload_file;
    bool zero_copy;
    uint64_t payloads;      /* distinct payload buffers sent in turn */
    uint64_t latency_every; /* time every Nth message; 0 = not given */
    int partitions;         /* -np: create partitioned topics; -1 = not given */
    const char *admin_url;  /* -au */
    double stats_interval_s;
    const char *histogram_file;
    uint64_t delay_s;                  /* -d: deliver each message this much later */
    bool delay_range;                  /* -dr: a random delay in [min, max) seconds */
    uint64_t delay_min_s, delay_max_s; /* (max > min) */
    perf_key_mode key_mode;            /* -mk */
    bool event_time;                   /* -set */
    bool exit_on_failure;              /* -ef */
    bool txn;                          /* -txn: every message in a transaction */
    uint64_t txn_messages;             /* -nmt: messages per transaction (>= 1) */
    uint64_t txn_timeout_s;            /* -tto: the broker aborts a transaction older */
    bool txn_abort;                    /* -abort: end each transaction by aborting it */
    const char *producer_name;         /* -pn: producer k is named NAME<separator>k */
    const char *separator;             /* between a topic and its number, and in names */
    conf_list_t producer_conf;         /* applied in command-line order, after the defaults */
    conf_list_t encrypt;               /* key name -> PEM public key file */
    conf_list_t client_conf;
    conf_list_t security;    /* --auth-plugin, --tls-*: client settings */
    const char *conf_file;   /* Pulsar's client.conf */
    struct client_conf file; /* what it gave */
    char default_topic[64];
    const char *topic_args[256]; /* the topics named on the command line */
    size_t n_topic_args;
    bool topics_given;                   /* -t */
    const char *enc_name, *enc_file;     /* -k, -v: point into argv */
    char **argv_copy;                    /* what getopt reads */
    char *rewritten[PERF_MAX_REWRITTEN]; /* "-m=100" given as "-m100" */
    size_t n_rewritten;
} options_t;

/* Parses the command line into o (zeroed by the caller) with pulsar-perf produce's
 * defaults. Returns 0, 1 when --help was printed, or -1 after saying what is wrong. */
int perf_options_parse(int argc, char **argv, options_t *o);
/* The usage text. */
void perf_options_usage(FILE *f, const char *prog);
/* Frees what parsing allocated. */
void perf_options_free(options_t *o);
/* Adds key=value to a list; -1 when full or the key does not fit. */
int perf_conf_add(conf_list_t *l, const char *key, const char *value);

#endif
