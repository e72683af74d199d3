/* pulsarc-perf's command line (see perf_options.h). pulsar-perf spells its flags with one
 * dash and several letters (-time, -bm, -mk), so the parser is getopt_long_only: a
 * single-dash word is a long option when one has that exact name, and a single letter is
 * a short one. pulsar-perf's "-r=100" form is taken too. */
#include "perf_options.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cli_common/security_flags.h"

enum {
    OPT_CONF = 256,
    OPT_CLIENT_CONF,
    OPT_BATCHING,
    OPT_NO_BATCHING,
    OPT_ZERO_COPY,
    OPT_PAYLOAD_FILE,
    OPT_PARTITIONS,
    OPT_CONF_FILE,
    OPT_SECURITY,
    OPT_ENCRYPT,
    OPT_LATENCY_EVERY,
    OPT_PAYLOADS,
    OPT_TOPIC,
    OPT_ADMIN_URL,
    OPT_STATS_INTERVAL,
    OPT_HISTOGRAM_FILE,
    OPT_SPOOL_DIR,
    OPT_SPOOL_FSYNC,
    OPT_TIME,
    OPT_DELAY_RANGE,
    OPT_BATCH_MAX_MESSAGES,
    OPT_BATCH_MAX_BYTES,
    OPT_DISABLE_BATCHING,
    OPT_CHUNKING,
    OPT_KEY_MODE,
    OPT_ACCESS_MODE,
    OPT_PRODUCER_NAME,
    OPT_MEMORY_LIMIT,
    OPT_SEND_TIMEOUT,
    OPT_SEPARATOR,
    OPT_SET_EVENT_TIME,
    OPT_EXIT_ON_FAILURE,
    OPT_LISTENER,
    OPT_TRUST_CERT_FILE,
    OPT_PROXY_URL,
    OPT_PROXY_PROTOCOL,
    OPT_TXN,
    OPT_TXN_MESSAGES,
    OPT_TXN_TIMEOUT,
    OPT_TXN_ABORT,
    OPT_IGNORED,     /* pulsar-perf flags that change nothing here (they take a value) */
    OPT_IGNORED_FLAG /* the same without a value */
};

void perf_options_usage(FILE *f, const char *prog)
{
    fprintf(f,
            "usage: %s [produce] [options] [TOPIC...]\n"
            "pulsar-perf produce's flags, with its meanings and defaults:\n"
            "  TOPIC...                  the topics (default persistent://public/default/\n"
            "                            pulsarc-perf-<pid>); also --topic TOPIC\n"
            "  -t, --num-topic N         number of topics (default 1); with one TOPIC and N > 1\n"
            "                            they are TOPIC-0 .. TOPIC-(N-1) (also --topics N)\n"
            "  -n, --num-producers N     producers per topic (default 1; also --producers)\n"
            "  -m, --num-messages N      messages in total; 0: no limit (default 0; also\n"
            "                            --messages)\n"
            "  -time, --test-duration S  seconds to send; 0: no limit (default 0; also\n"
            "                            --duration). Without -m and -time: until Ctrl-C\n"
            "  -r, --rate N              messages per second over all topics (default 100;\n"
            "                            0: as fast as possible)\n"
            "  -s, --size BYTES          payload size (default 1024)\n"
            "  -o, --max-outstanding N   maxPendingMessages per producer; 0: no limit, the\n"
            "                            client's memory limit holds (default 0; also\n"
            "                            --max-pending)\n"
            "  -p, --max-outstanding-across-partitions N   (default 0: none)\n"
            "  -d, --delay S             deliver each message S seconds after it is sent\n"
            "  -dr, --delay-range MIN,MAX  a random delay in [MIN, MAX) seconds each\n"
            "  -b, --batch-time-window MS  batching delay (default 1)\n"
            "  -bm, --batch-max-messages N (default 1000)\n"
            "  -bb, --batch-max-bytes N  (default 4194304)\n"
            "  -db, --disable-batching   (also --no-batching; --batching turns it on)\n"
            "  -z, --compression CODEC   NONE, LZ4, ZLIB, ZSTD or SNAPPY (default NONE)\n"
            "  -ch, --chunking           chunk messages above the broker's limit (batching off)\n"
            "  -k, --encryption-key-name NAME  with -v: encrypt for NAME\n"
            "  -v, --encryption-key-value-file FILE  its RSA public key (PEM)\n"
            "  -mk, --message-key-generation-mode MODE  autoIncrement or random keys\n"
            "  -am, --access-mode MODE   Shared, Exclusive, ExclusiveWithFencing or\n"
            "                            WaitForExclusive (default Shared)\n"
            "  -pn, --producer-name NAME producer k is named NAME-k\n"

            "  -set, --set-event-time    give each message the time as its event time\n"
            "  -ef, --exit-on-failure    stop at the first failed message\n"
            "  -txn, --txn-enable        send every message in a transaction, one across all\n"
            "                            producers, ended after each -nmt messages\n"
            "  -nmt, --numMessage-perTransaction N  messages per transaction (default 50)\n"
            "  -abort                    end each transaction by aborting it, not committing\n"
            "  -tto, --txn-timeout S     the broker aborts a transaction not ended within S\n"
            "                            seconds (default 10)\n"
            "  -u, --service-url URL     (default pulsar://127.0.0.1:6650)\n"
            "  -au, --admin-url URL      for -np (default: webServiceUrl of --conf-file, an\n"
            "                            http(s) -u, else http://localhost:8080)\n"
            "  -np, --partitions N       first create each topic with N partitions (admin\n"
            "                            REST API; one that exists with N is used as it is)\n"
            "  -ml, --memory-limit SIZE  the client's memoryLimitBytes (e.g. 64M)\n"
            "  -c, --max-connections N   connections per broker\n"
            "  --send-timeout S          seconds; 0: none (default 0)\n"
            "  --separator SEP           between a topic and its number (default -)\n"
            "  --listener-name NAME, --proxy-url URL, --proxy-protocol SNI\n"
            "  --auth-plugin, --auth-params, --trust-cert-file, --tls-allow-insecure,\n"
            "  --tls-enable-hostname-verification   as pulsar-perf's\n"
            "  -threads, -ioThreads, -lt, -i, -bw, -mlr, --warmup-time: accepted; one thread\n"
            "                            sends here, and they change nothing\n"
            "  -f, -e, -fp, -fc: refused, with the reason\n"
            "pulsarc-perf's own:\n"
            "      --conf key=value      producer setting, repeatable (e.g. compressionType=lz4)\n"
            "      --client-conf k=v     client setting, repeatable (e.g. memoryLimitBytes=0)\n"
            "      --batching            same as --conf batchingEnabled=true\n"
            "      --zero-copy           hand the payload over borrowed instead of copied\n"
            "      --payload-file FILE   send this file's bytes as every payload (overrides -s)\n"
            "      --payloads N          send N distinct buffers in turn, so payloads larger\n"
            "                            than the caches come from memory (default 1)\n"
            "      --stats-interval S    print the rates every S seconds (default 1; 0: never)\n"
            "      --histogram-file F    write the latency percentile distribution to F\n"
            "                            (HdrHistogram's text layout, milliseconds)\n"
            "      --encrypt NAME=FILE   encrypt for key NAME with the RSA public key in PEM\n"
            "                            FILE (repeatable)\n"
            "      --latency-every N     time every Nth message (default 8; 1 below -r 100000)\n"
            "      --spool-dir DIR       same as --conf spoolDir=DIR (needs -pn or\n"
            "                            --conf producerName=)\n"
            "      --spool-fsync POLICY  same as --conf spoolFsync=POLICY (always|interval|never)\n"
            "      --conf-file FILE      Pulsar's client.conf: service URL, TLS and auth\n"
            "                            settings (the flags override it)\n",
            prog);
    for (size_t i = 0; i < n_security_flags; i++) {
        char left[64];
        snprintf(left, sizeof left, "--%s%s%s", security_flags[i].name,
                 security_flags[i].arg ? " " : "",
                 security_flags[i].arg ? security_flags[i].arg : "");
        fprintf(f, "      %-22s%s%s\n", left,
                strlen(left) > 21 ? "\n                            " : "", security_flags[i].help);
    }
    fprintf(f, "  -h, --help\n");
}

static int conf_add_n(conf_list_t *l, const char *key, size_t key_len, const char *value)
{
    if (l->n == PERF_MAX_CONF || key_len == 0 || key_len >= sizeof l->v[0].key)
        return -1;
    memcpy(l->v[l->n].key, key, key_len);
    l->v[l->n].key[key_len] = '\0';
    l->v[l->n].value = value;
    l->n++;
    return 0;
}

int perf_conf_add(conf_list_t *l, const char *key, const char *value)
{
    return conf_add_n(l, key, strlen(key), value);
}

/* "key=value" from the command line; value points into argv. */
static int conf_add_pair(conf_list_t *l, const char *pair)
{
    const char *eq = strchr(pair, '=');
    return eq ? conf_add_n(l, pair, (size_t)(eq - pair), eq + 1) : -1;
}

static int parse_double(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !(v >= 0) || isinf(v))
        return -1;
    *out = v;
    return 0;
}

static int parse_u64(const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *end || s[0] == '-')
        return -1;
    *out = v;
    return 0;
}

/* A signed integer, as pulsar-perf's int options take one (they treat <= 0 as "none"). */
static int parse_i64(const char *s, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end)
        return -1;
    *out = v;
    return 0;
}

/* "64M", "1G", "512K", "1000": bytes, as pulsar-perf's -ml. */
static int parse_size(const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || s[0] == '-')
        return -1;
    uint64_t mult = 1;
    if (*end) {
        switch (*end) {
        case 'k':
        case 'K':
            mult = 1024;
            break;
        case 'm':
        case 'M':
            mult = 1024 * 1024;
            break;
        case 'g':
        case 'G':
            mult = 1024 * 1024 * 1024;
            break;
        case 't':
        case 'T':
            mult = 1024ull * 1024 * 1024 * 1024;
            break;
        default:
            return -1;
        }
        if (end[1] && strcasecmp(end + 1, "b") != 0)
            return -1;
    }
    if (v > UINT64_MAX / mult)
        return -1;
    *out = v * mult;
    return 0;
}

/* pulsar-perf's ProducerAccessMode names, and pulsarc's own spellings. */
static const char *access_mode(const char *v)
{
    static const char *const names[][2] = {
        { "Shared", "shared" },
        { "Exclusive", "exclusive" },
        { "ExclusiveWithFencing", "exclusive_with_fencing" },
        { "WaitForExclusive", "wait_for_exclusive" },
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcasecmp(v, names[i][0]) || !strcasecmp(v, names[i][1]))
            return names[i][1];
    return NULL;
}

/* Saves a number as text that lives as long as the options (a setting's value). */
static const char *keep_number(uint64_t v)
{
    static char slots[16][24];
    static int next;
    char *s = slots[next++ % 16];
    snprintf(s, sizeof slots[0], "%llu", (unsigned long long)v);
    return s;
}

/* The topic names: the arguments, or one base name numbered -0 .. -(N-1) as pulsar-perf
 * numbers it when -t asks for more topics than were named. */
static int resolve_topics(options_t *o, const char *prog)
{
    if (o->n_topic_args == 0) {
        snprintf(o->default_topic, sizeof o->default_topic,
                 "persistent://public/default/pulsarc-perf-%ld", (long)getpid());
        o->topic_args[o->n_topic_args++] = o->default_topic;
    }
    if (!o->topics_given)
        o->topics = (uint32_t)o->n_topic_args;
    bool numbered = o->n_topic_args == 1 && o->topics > 1;
    if (!numbered && o->n_topic_args != o->topics) {
        fprintf(stderr,
                "%s: -t %u: %zu topics were named; name one (to get TOPIC%s0 .. TOPIC%s%u) or "
                "exactly %u\n",
                prog, (unsigned)o->topics, o->n_topic_args, o->separator, o->separator,
                (unsigned)o->topics - 1, (unsigned)o->topics);
        return -1;
    }
    o->topic_names = calloc(o->topics, sizeof *o->topic_names);
    if (!o->topic_names)
        return -1;
    for (uint32_t i = 0; i < o->topics; i++) {
        const char *base = o->topic_args[numbered ? 0 : i];
        size_t len = strlen(base) + strlen(o->separator) + 12;
        if (!(o->topic_names[i] = malloc(len)))
            return -1;
        if (numbered)
            snprintf(o->topic_names[i], len, "%s%s%u", base, o->separator, (unsigned)i);
        else
            snprintf(o->topic_names[i], len, "%s", base);
    }
    return 0;
}

void perf_options_free(options_t *o)
{
    for (uint32_t i = 0; o->topic_names && i < o->topics; i++)
        free(o->topic_names[i]);
    free(o->topic_names);
    o->topic_names = NULL;
    for (size_t i = 0; i < o->n_rewritten; i++)
        free(o->rewritten[i]);
    o->n_rewritten = 0;
    free(o->argv_copy);
    o->argv_copy = NULL;
}

static const struct option base_options[] = {
    /* pulsar-perf produce's */
    { "service-url", required_argument, NULL, 'u' },
    { "num-topic", required_argument, NULL, 't' },
    { "num-topics", required_argument, NULL, 't' },
    { "topics", required_argument, NULL, 't' },
    { "num-producers", required_argument, NULL, 'n' },
    { "producers", required_argument, NULL, 'n' },
    { "num-messages", required_argument, NULL, 'm' },
    { "messages", required_argument, NULL, 'm' },
    { "rate", required_argument, NULL, 'r' },
    { "size", required_argument, NULL, 's' },
    { "max-outstanding", required_argument, NULL, 'o' },
    { "max-pending", required_argument, NULL, 'o' },
    { "max-outstanding-across-partitions", required_argument, NULL, 'p' },
    { "time", required_argument, NULL, OPT_TIME },
    { "test-duration", required_argument, NULL, OPT_TIME },
    { "duration", required_argument, NULL, OPT_TIME },
    { "delay", required_argument, NULL, 'd' },
    { "dr", required_argument, NULL, OPT_DELAY_RANGE },
    { "delay-range", required_argument, NULL, OPT_DELAY_RANGE },
    { "batch-time-window", required_argument, NULL, 'b' },
    { "bm", required_argument, NULL, OPT_BATCH_MAX_MESSAGES },
    { "batch-max-messages", required_argument, NULL, OPT_BATCH_MAX_MESSAGES },
    { "bb", required_argument, NULL, OPT_BATCH_MAX_BYTES },
    { "batch-max-bytes", required_argument, NULL, OPT_BATCH_MAX_BYTES },
    { "db", no_argument, NULL, OPT_DISABLE_BATCHING },
    { "disable-batching", no_argument, NULL, OPT_DISABLE_BATCHING },
    { "no-batching", no_argument, NULL, OPT_DISABLE_BATCHING },
    { "compression", required_argument, NULL, 'z' },
    { "ch", no_argument, NULL, OPT_CHUNKING },
    { "chunking", no_argument, NULL, OPT_CHUNKING },
    { "encryption-key-name", required_argument, NULL, 'k' },
    { "encryption-key-value-file", required_argument, NULL, 'v' },
    { "mk", required_argument, NULL, OPT_KEY_MODE },
    { "message-key-generation-mode", required_argument, NULL, OPT_KEY_MODE },
    { "am", required_argument, NULL, OPT_ACCESS_MODE },
    { "access-mode", required_argument, NULL, OPT_ACCESS_MODE },
    { "pn", required_argument, NULL, OPT_PRODUCER_NAME },
    { "producer-name", required_argument, NULL, OPT_PRODUCER_NAME },
    { "au", required_argument, NULL, OPT_ADMIN_URL },
    { "admin-url", required_argument, NULL, OPT_ADMIN_URL },
    { "np", required_argument, NULL, OPT_PARTITIONS },
    { "partitions", required_argument, NULL, OPT_PARTITIONS },
    { "ml", required_argument, NULL, OPT_MEMORY_LIMIT },
    { "memory-limit", required_argument, NULL, OPT_MEMORY_LIMIT },
    { "max-connections", required_argument, NULL, 'c' },
    { "send-timeout", required_argument, NULL, OPT_SEND_TIMEOUT },
    { "separator", required_argument, NULL, OPT_SEPARATOR },
    { "set", no_argument, NULL, OPT_SET_EVENT_TIME },
    { "set-event-time", no_argument, NULL, OPT_SET_EVENT_TIME },
    { "ef", no_argument, NULL, OPT_EXIT_ON_FAILURE },
    { "exit-on-failure", no_argument, NULL, OPT_EXIT_ON_FAILURE },
    { "listener-name", required_argument, NULL, OPT_LISTENER },
    { "trust-cert-file", required_argument, NULL, OPT_TRUST_CERT_FILE },
    { "proxy-url", required_argument, NULL, OPT_PROXY_URL },
    { "proxy-protocol", required_argument, NULL, OPT_PROXY_PROTOCOL },
    { "histogram-file", required_argument, NULL, OPT_HISTOGRAM_FILE },
    { "threads", required_argument, NULL, OPT_IGNORED },
    { "num-test-threads", required_argument, NULL, OPT_IGNORED },
    { "ioThreads", required_argument, NULL, OPT_IGNORED },
    { "lt", required_argument, NULL, OPT_IGNORED },
    { "mlr", required_argument, NULL, OPT_IGNORED },
    { "stats-interval-seconds", required_argument, NULL, 'i' },
    { "warmup-time", required_argument, NULL, OPT_IGNORED },
    { "bw", no_argument, NULL, OPT_IGNORED_FLAG },
    { "busy-wait", no_argument, NULL, OPT_IGNORED_FLAG },
    { "txn", no_argument, NULL, OPT_TXN },
    { "txn-enable", no_argument, NULL, OPT_TXN },
    { "nmt", required_argument, NULL, OPT_TXN_MESSAGES },
    { "numMessage-perTransaction", required_argument, NULL, OPT_TXN_MESSAGES },
    { "tto", required_argument, NULL, OPT_TXN_TIMEOUT },
    { "txn-timeout", required_argument, NULL, OPT_TXN_TIMEOUT },
    { "abort", no_argument, NULL, OPT_TXN_ABORT },
    /* pulsarc-perf's own */
    { "topic", required_argument, NULL, OPT_TOPIC },
    { "conf", required_argument, NULL, OPT_CONF },
    { "client-conf", required_argument, NULL, OPT_CLIENT_CONF },
    { "batching", no_argument, NULL, OPT_BATCHING },
    { "zero-copy", no_argument, NULL, OPT_ZERO_COPY },
    { "payload-file", required_argument, NULL, OPT_PAYLOAD_FILE },
    { "help", no_argument, NULL, 'h' },
    { "conf-file", required_argument, NULL, OPT_CONF_FILE },
    { "encrypt", required_argument, NULL, OPT_ENCRYPT },
    { "latency-every", required_argument, NULL, OPT_LATENCY_EVERY },
    { "payloads", required_argument, NULL, OPT_PAYLOADS },
    { "stats-interval", required_argument, NULL, OPT_STATS_INTERVAL },
    { "spool-dir", required_argument, NULL, OPT_SPOOL_DIR },
    { "spool-fsync", required_argument, NULL, OPT_SPOOL_FSYNC },
};

/* pulsar-perf flags pulsarc-perf does not have, with what to use instead. */
static const struct {
    const char *flag, *why;
} unsupported[] = {
    { "-f", "payloads picked from the lines of a text file; --payload-file FILE sends a "
            "file's bytes as every payload" },
    { "-e", "the delimiter of -f's payload file" },
    { "-fp", "payload formatting needs -f" },
    { "-fc", "payload formatting needs -f" },
};

/* What applying one option came to. */
enum { APPLIED = 0, BAD_VALUE = -1, NOT_MINE = 1 };

/* pulsar-perf's defaults, where they are not pulsarc's. */
static void set_defaults(options_t *o)
{
    o->size = 1024;
    o->rate = 100;
    o->payloads = 1;
    o->topics = 1;
    o->producers = 1;
    o->partitions = -1;
    o->stats_interval_s = 1;
    o->separator = "-";
    o->txn_messages = 50;
    o->txn_timeout_s = 10;
}

/* getopt's table: base_options, then the shared TLS and authentication flags
 * (security_flags.c), which the long name tells apart. */
static void build_long_options(struct option *longs, size_t cap)
{
    size_t nl = sizeof base_options / sizeof base_options[0];
    memcpy(longs, base_options, sizeof base_options);
    for (size_t i = 0; i < n_security_flags && nl + 1 < cap; i++)
        longs[nl++] = (struct option){ security_flags[i].name,
                                       security_flags[i].arg ? required_argument : no_argument,
                                       NULL, OPT_SECURITY };
    longs[nl] = (struct option){ 0 };
}

/* A pulsar-perf flag this tool does not have is named, with what to use instead. */
static int refuse_unsupported(int argc, char **argv, int first, const char *prog)
{
    for (int a = first; a < argc; a++) {
        size_t n = strcspn(argv[a], "=");
        for (size_t u = 0; u < sizeof unsupported / sizeof unsupported[0]; u++)
            if (!strncmp(argv[a], unsupported[u].flag, n) && strlen(unsupported[u].flag) == n) {
                fprintf(stderr, "%s: %s is not supported: %s\n", prog, argv[a], unsupported[u].why);
                return -1;
            }
    }
    return 0;
}

/* The short options that take a value, and getopt's string of all of them. */
#define SHORT_WITH_VALUE "utnmrsopdbzkvci"
#define SHORT_OPTIONS "u:t:n:m:r:s:o:p:d:b:z:k:v:c:i:h"

/* What getopt sees: argv without "produce" (av[0] the program, av[1] the first option),
 * and pulsar-perf's "-m=100" as "-m100": getopt_long_only would take "-m=" for an
 * abbreviated long option (ambiguous among --messages, --mk, ...). */
static char **getopt_argv(options_t *o, int argc, char **argv, int first, int *ac)
{
    *ac = argc - first + 1;
    char **av = o->argv_copy = calloc((size_t)*ac + 1, sizeof *av);
    if (!av)
        return NULL;
    av[0] = argv[0];
    for (int a = 1; a < *ac; a++) {
        char *arg = argv[first - 1 + a];
        av[a] = arg;
        if (arg[0] == '-' && arg[1] && arg[1] != '-' && arg[2] == '=' &&
            strchr(SHORT_WITH_VALUE, arg[1]) && o->n_rewritten < PERF_MAX_REWRITTEN) {
            size_t n = strlen(arg);
            char *w = malloc(n);
            if (!w)
                return NULL;
            w[0] = '-';
            w[1] = arg[1];
            memcpy(w + 2, arg + 3, n - 2); /* the value and its NUL */
            av[a] = o->rewritten[o->n_rewritten++] = w;
        }
    }
    return av;
}

/* The run: topics, producers, how many, how fast, how long. */
static int apply_run_flag(options_t *o, int ch, const char *arg)
{
    uint64_t v;
    int64_t iv;
    switch (ch) {
    case 'u':
        o->service_url = arg;
        return APPLIED;
    case OPT_TOPIC:
        if (o->n_topic_args == sizeof o->topic_args / sizeof o->topic_args[0])
            return BAD_VALUE;
        o->topic_args[o->n_topic_args++] = arg;
        return APPLIED;
    case 't':
        if (parse_u64(arg, &v) != 0 || v == 0 || v > PERF_MAX_PRODUCERS)
            return BAD_VALUE;
        o->topics = (uint32_t)v;
        o->topics_given = true;
        return APPLIED;
    case 'n':
        if (parse_u64(arg, &v) != 0 || v == 0 || v > PERF_MAX_PRODUCERS)
            return BAD_VALUE;
        o->producers = (uint32_t)v;
        return APPLIED;
    case 'm': /* <= 0: no limit, as pulsar-perf */
        if (parse_i64(arg, &iv) != 0)
            return BAD_VALUE;
        o->messages = iv > 0 ? (uint64_t)iv : 0;
        return APPLIED;
    case 'r':
        return parse_double(arg, &o->rate) != 0 ? BAD_VALUE : APPLIED;
    case OPT_TIME: /* <= 0: no limit */
        if (parse_i64(arg, &iv) == 0)
            o->duration_s = iv > 0 ? (double)iv : 0;
        else if (parse_double(arg, &o->duration_s) != 0)
            return BAD_VALUE;
        return APPLIED;
    case OPT_PRODUCER_NAME:
        if (!*arg)
            return BAD_VALUE;
        o->producer_name = arg;
        return APPLIED;
    case OPT_ADMIN_URL:
        o->admin_url = arg;
        return APPLIED;
    case OPT_PARTITIONS:
        if (parse_u64(arg, &v) != 0 || v > 100000)
            return BAD_VALUE;
        o->partitions = (int)v;
        return APPLIED;
    case OPT_SEPARATOR:
        o->separator = arg;
        return APPLIED;
    case OPT_EXIT_ON_FAILURE:
        o->exit_on_failure = true;
        return APPLIED;
    }
    return NOT_MINE;
}

/* Each message: its size, delivery delay, key, event time, encryption. */
static int apply_message_flag(options_t *o, int ch, const char *arg)
{
    uint64_t v;
    switch (ch) {
    case 's':
        if (parse_u64(arg, &v) != 0 || v > SIZE_MAX / 2)
            return BAD_VALUE;
        o->size = (size_t)v;
        return APPLIED;
    case 'd':
        return parse_u64(arg, &o->delay_s) != 0 || o->delay_s > 100ull * 365 * 86400 ? BAD_VALUE
                                                                                     : APPLIED;
    case OPT_DELAY_RANGE: {
        char lo[32];
        const char *comma = strchr(arg, ',');
        if (!comma || (size_t)(comma - arg) >= sizeof lo)
            return BAD_VALUE;
        snprintf(lo, sizeof lo, "%.*s", (int)(comma - arg), arg);
        if (parse_u64(lo, &o->delay_min_s) != 0 || parse_u64(comma + 1, &o->delay_max_s) != 0 ||
            o->delay_max_s <= o->delay_min_s || o->delay_max_s > 100ull * 365 * 86400)
            return BAD_VALUE;
        o->delay_range = true;
        return APPLIED;
    }
    case OPT_KEY_MODE:
        if (!strcasecmp(arg, "autoIncrement"))
            o->key_mode = PERF_KEYS_AUTO_INCREMENT;
        else if (!strcasecmp(arg, "random"))
            o->key_mode = PERF_KEYS_RANDOM;
        else
            return BAD_VALUE;
        return APPLIED;
    case OPT_SET_EVENT_TIME:
        o->event_time = true;
        return APPLIED;
    case 'k':
        o->enc_name = arg;
        return APPLIED;
    case 'v':
        o->enc_file = arg;
        return APPLIED;
    }
    return NOT_MINE;
}

/* Transactions: -txn, and how many messages each holds, its timeout, commit or abort. */
static int apply_txn_flag(options_t *o, int ch, const char *arg)
{
    uint64_t v;
    switch (ch) {
    case OPT_TXN:
        o->txn = true;
        return APPLIED;
    case OPT_TXN_MESSAGES:
        if (parse_u64(arg, &v) != 0 || v == 0)
            return BAD_VALUE;
        o->txn_messages = v;
        return APPLIED;
    case OPT_TXN_TIMEOUT: /* pulsarc_txn_begin takes 1 .. 2^31 milliseconds */
        if (parse_u64(arg, &v) != 0 || v == 0 || v > (1ull << 31) / 1000)
            return BAD_VALUE;
        o->txn_timeout_s = v;
        return APPLIED;
    case OPT_TXN_ABORT:
        o->txn_abort = true;
        return APPLIED;
    }
    return NOT_MINE;
}

/* Batching and chunking, as producer settings. */
static int apply_batching_flag(options_t *o, int ch, const char *arg)
{
    int64_t iv;
    switch (ch) {
    case 'b': {
        char *end;
        errno = 0;
        double ms = strtod(arg, &end);
        if (errno || end == arg || *end || isnan(ms) || ms > 3600000)
            return BAD_VALUE;
        /* <= 0: no delay, a batch goes as soon as it is made */
        const char *delay = ms <= 0 ? "0" : keep_number((uint64_t)llround(ms));
        return perf_conf_add(&o->producer_conf, "batchingMaxPublishDelayMs", delay) != 0 ? BAD_VALUE
                                                                                         : APPLIED;
    }
    case OPT_BATCH_MAX_MESSAGES:
    case OPT_BATCH_MAX_BYTES: {
        bool bytes = ch == OPT_BATCH_MAX_BYTES;
        if (parse_i64(arg, &iv) != 0 || iv > (bytes ? 64 * 1024 * 1024 : 1000000))
            return BAD_VALUE;
        if (iv > 0 &&
            perf_conf_add(&o->producer_conf, bytes ? "batchingMaxBytes" : "batchingMaxMessages",
                          keep_number((uint64_t)iv)) != 0)
            return BAD_VALUE;
        return APPLIED;
    }
    case OPT_DISABLE_BATCHING:
    case OPT_BATCHING:
        return perf_conf_add(&o->producer_conf, "batchingEnabled",
                             ch == OPT_BATCHING ? "true" : "false") != 0
                   ? BAD_VALUE
                   : APPLIED;
    case OPT_CHUNKING: /* as pulsar-perf: chunking instead of batching */
        return perf_conf_add(&o->producer_conf, "chunkingEnabled", "true") != 0 ||
                       perf_conf_add(&o->producer_conf, "batchingEnabled", "false") != 0
                   ? BAD_VALUE
                   : APPLIED;
    }
    return NOT_MINE;
}

/* The producers' other settings. */
static int apply_producer_flag(options_t *o, int ch, const char *arg)
{
    uint64_t v;
    const char *key = NULL, *value = arg;
    switch (ch) {
    case 'o':
    case 'p':
        if (parse_u64(arg, &v) != 0 || v > INT32_MAX)
            return BAD_VALUE;
        key = ch == 'o' ? "maxPendingMessages" : "maxPendingMessagesAcrossPartitions";
        value = keep_number(v);
        break;
    case OPT_SEND_TIMEOUT:
        if (parse_u64(arg, &v) != 0 || v > UINT64_MAX / 1000)
            return BAD_VALUE;
        key = "sendTimeoutMs";
        value = keep_number(v * 1000);
        break;
    case 'z':
        key = "compressionType";
        break;
    case OPT_ACCESS_MODE:
        key = "accessMode";
        if (!(value = access_mode(arg)))
            return BAD_VALUE;
        break;
    case OPT_SPOOL_DIR:
        key = "spoolDir";
        break;
    case OPT_SPOOL_FSYNC:
        key = "spoolFsync";
        break;
    case OPT_CONF:
        return conf_add_pair(&o->producer_conf, arg) != 0 ? BAD_VALUE : APPLIED;
    case OPT_ENCRYPT:
        return conf_add_pair(&o->encrypt, arg) != 0 ? BAD_VALUE : APPLIED;
    default:
        return NOT_MINE;
    }
    return perf_conf_add(&o->producer_conf, key, value) != 0 ? BAD_VALUE : APPLIED;
}

/* The client's settings; security holds what goes with the service URL (TLS, auth). */
static int apply_client_flag(options_t *o, int ch, const char *long_name, const char *arg)
{
    uint64_t v;
    const char *key = NULL;
    switch (ch) {
    case OPT_MEMORY_LIMIT:
        if (parse_size(arg, &v) != 0)
            return BAD_VALUE;
        key = "memoryLimitBytes";
        break;
    case 'c':
        if (parse_u64(arg, &v) != 0 || v == 0 || v > 1024)
            return BAD_VALUE;
        key = "connectionsPerBroker";
        break;
    case 'i':
        if (parse_u64(arg, &v) != 0 || v > 86400)
            return BAD_VALUE;
        key = "statsIntervalSeconds";
        break;
    case OPT_CLIENT_CONF:
        return conf_add_pair(&o->client_conf, arg) != 0 ? BAD_VALUE : APPLIED;
    case OPT_LISTENER:
    case OPT_TRUST_CERT_FILE:
    case OPT_PROXY_URL:
    case OPT_PROXY_PROTOCOL:
        key = ch == OPT_LISTENER          ? "listenerName"
              : ch == OPT_TRUST_CERT_FILE ? "tlsTrustCertsFilePath"
              : ch == OPT_PROXY_URL       ? "proxyServiceUrl"
                                          : "proxyProtocol";
        return perf_conf_add(&o->security, key, arg) != 0 ? BAD_VALUE : APPLIED;
    case OPT_SECURITY: {
        const struct security_flag *f = security_flag_find(long_name);
        return perf_conf_add(&o->security, f->key, f->fixed ? f->fixed : arg) != 0 ? BAD_VALUE
                                                                                   : APPLIED;
    }
    default:
        return NOT_MINE;
    }
    return perf_conf_add(&o->client_conf, key, keep_number(v)) != 0 ? BAD_VALUE : APPLIED;
}

/* pulsarc-perf's own: payloads, timing, output, the flags that change nothing here. */
static int apply_tool_flag(options_t *o, int ch, const char *arg)
{
    switch (ch) {
    case OPT_ZERO_COPY:
        o->zero_copy = true;
        return APPLIED;
    case OPT_LATENCY_EVERY:
        return parse_u64(arg, &o->latency_every) != 0 || o->latency_every == 0 ? BAD_VALUE
                                                                               : APPLIED;
    case OPT_PAYLOAD_FILE:
        o->payload_file = arg;
        return APPLIED;
    case OPT_PAYLOADS:
        return parse_u64(arg, &o->payloads) != 0 || o->payloads == 0 || o->payloads > 4096
                   ? BAD_VALUE
                   : APPLIED;
    case OPT_STATS_INTERVAL:
        return parse_double(arg, &o->stats_interval_s) != 0 ? BAD_VALUE : APPLIED;
    case OPT_CONF_FILE:
        o->conf_file = arg;
        return APPLIED;
    case OPT_HISTOGRAM_FILE:
        o->histogram_file = arg;
        return APPLIED;
    case OPT_IGNORED:
    case OPT_IGNORED_FLAG:
        return APPLIED;
    }
    return NOT_MINE;
}

static int apply_option(options_t *o, int ch, const char *long_name, const char *arg)
{
    int rc = apply_run_flag(o, ch, arg);
    if (rc == NOT_MINE)
        rc = apply_message_flag(o, ch, arg);
    if (rc == NOT_MINE)
        rc = apply_txn_flag(o, ch, arg);
    if (rc == NOT_MINE)
        rc = apply_batching_flag(o, ch, arg);
    if (rc == NOT_MINE)
        rc = apply_producer_flag(o, ch, arg);
    if (rc == NOT_MINE)
        rc = apply_client_flag(o, ch, long_name, arg);
    if (rc == NOT_MINE)
        rc = apply_tool_flag(o, ch, arg);
    return rc;
}

/* A bad value, named as typed (typed: the option without its value). A setting is not
 * repeated: it may be a secret typed with another separator (--client-conf
 * authParams:token:...). */
static void report_bad_value(const char *prog, int ch, const char *typed, const char *arg)
{
    if (ch == OPT_CONF || ch == OPT_CLIENT_CONF || ch == OPT_ENCRYPT)
        fprintf(stderr, "%s: %s expects KEY=VALUE\n", prog, typed);
    else if (ch == OPT_SECURITY)
        fprintf(stderr, "%s: %s: too many settings\n", prog, typed);
    else
        fprintf(stderr, "%s: %s: bad value \"%s\"%s\n", prog, typed, arg,
                ch == OPT_KEY_MODE       ? " (autoIncrement or random)"
                : ch == OPT_ACCESS_MODE  ? " (Shared, Exclusive, ExclusiveWithFencing or "
                                           "WaitForExclusive)"
                : ch == OPT_DELAY_RANGE  ? " (MIN,MAX seconds, MIN < MAX)"
                : ch == OPT_TXN_MESSAGES ? " (1 or more)"
                : ch == OPT_TXN_TIMEOUT  ? " (1 to 2147483 seconds)"
                                         : "");
}

/* After the options: the topics given as arguments, and what only all options together
 * can tell. */
static int check_options(options_t *o, const char *prog, char **av, int from, int ac)
{
    for (int a = from; a < ac; a++) {
        if (o->n_topic_args == sizeof o->topic_args / sizeof o->topic_args[0]) {
            fprintf(stderr, "%s: too many topics\n", prog);
            return -1;
        }
        o->topic_args[o->n_topic_args++] = av[a];
    }
    if (!o->enc_name != !o->enc_file) {
        fprintf(stderr, "%s: %s needs %s too (the key name and its public key file)\n", prog,
                o->enc_name ? "-k" : "-v", o->enc_name ? "-v" : "-k");
        return -1;
    }
    if (o->enc_name && perf_conf_add(&o->encrypt, o->enc_name, o->enc_file) != 0) {
        fprintf(stderr, "%s: -k: key name too long\n", prog);
        return -1;
    }
    if (o->payloads > 1 && o->payload_file) {
        fprintf(stderr, "%s: --payloads and --payload-file do not go together\n", prog);
        return -1;
    }
    if (resolve_topics(o, prog) != 0)
        return -1;
    if ((uint64_t)o->topics * o->producers > PERF_MAX_PRODUCERS) {
        fprintf(stderr, "%s: -t x -n is above %d producers\n", prog, PERF_MAX_PRODUCERS);
        return -1;
    }
    return 0;
}

int perf_options_parse(int argc, char **argv, options_t *o)
{
    const char *prog = argv[0];
    set_defaults(o);
    static struct option longs[sizeof base_options / sizeof base_options[0] + 32];
    build_long_options(longs, sizeof longs / sizeof longs[0]);
    /* "produce", pulsar-perf's subcommand, may come first. */
    int first = argc > 1 && !strcmp(argv[1], "produce") ? 2 : 1;
    if (refuse_unsupported(argc, argv, first, prog) != 0)
        return -1;
    int ac;
    char **av = getopt_argv(o, argc, argv, first, &ac);
    if (!av)
        return -1;
    opterr = 0;
    optind = 1;
    int ch, idx;
    while ((idx = -1, ch = getopt_long_only(ac, av, SHORT_OPTIONS, longs, &idx)) != -1) {
        if (ch == 'h') {
            perf_options_usage(stdout, prog);
            return 1;
        }
        /* The option as typed, for messages: the word before a separate value. */
        const char *opt = optarg && optind >= 2 && optarg == av[optind - 1] ? av[optind - 2]
                                                                            : av[optind - 1];
        int rc = ch == '?' ? NOT_MINE
                           : apply_option(o, ch, idx >= 0 ? longs[idx].name : "", optarg);
        if (rc == BAD_VALUE) {
            /* A value attached (-m100, --conf=K=V) is not part of the option's name. */
            size_t n = strcspn(opt, "=");
            if (optarg && optarg > opt && optarg < opt + n)
                n = (size_t)(optarg - opt);
            char typed[64];
            snprintf(typed, sizeof typed, "%.*s", (int)n, opt);
            report_bad_value(prog, ch, typed, optarg);
            return -1;
        }
        if (rc == NOT_MINE) { /* unknown, or a value missing */
            const char *arg = av[optind - 1];
            if (optopt >= 256 || (optopt > 0 && strchr(SHORT_WITH_VALUE, optopt)))
                fprintf(stderr, "%s: %s needs a value (%s --help lists the options)\n", prog, arg,
                        prog);
            else
                fprintf(stderr, "%s: unknown option %s (%s --help lists the options)\n", prog, arg,
                        prog);
            return -1;
        }
    }
    return check_options(o, prog, av, optind, ac);
}
