/* The chaos run's workload driver (issue 29): scripts/chaos runs one such producer
 * process per workload, publishing numbered messages while it injects faults, and its
 * verifier (tests/chaos/chaos.py) reads from the event log what each message's fate
 * must be, then holds what the official client reads back to it.
 *
 *   chaos_producer WORKLOAD URL LOG [options]
 *     WORKLOAD  keyed | chunked | encrypted | txn | spool | own-loop | failover
 *     URL       the service URL (failover: the primary cluster's)
 *     LOG       the event log, appended to (the spool workload's incarnations share one)
 *     --topic T            the topic; the txn workload takes two (--topic A --topic B)
 *     --name NAME          producerName (required for spool)
 *     --from N             the first counter (default 0)
 *     --count N            stop after N messages (default: at SIGTERM or SIGINT)
 *     --rate R             messages per second, 0 for no limit (default 20; chunked 0.2)
 *     --seed N             seeds the keys, sizes, transaction sizes, topics and
 *                          commit-or-abort choices (default 1)
 *     --secondary URL      failover: the secondary cluster (required)
 *     --spool DIR          spool: the spoolDir (required)
 *     --conf k=v, --client-conf k=v, --encrypt NAME=FILE
 *                          as drv_setting (tests/interop/driver.h), applied after the
 *                          workload's own settings, so they override them
 *
 * Every workload: blockIfQueueFull=true, sendTimeoutMs=0 (a message waits for the broker
 * as long as it takes: a failed callback is a real error), keepAliveIntervalSeconds=5 (a
 * stopped broker is noticed within a run), the producer's own sequence ids. Then:
 *   keyed      batching, lz4, keys key-0 .. key-15, routed by the key's hash (the
 *              default for a message with a key); the topic has partitions (the run
 *              makes it)
 *   chunked    chunkingEnabled, batching off, zstd, payloads of 6 to 20 MiB, and
 *              chunkMaxMessageSize=256: the payload compresses several thousand to one
 *              (6 MiB to under 1 kB), so with the broker's 5 MB chunks no message would
 *              ever be split
 *   encrypted  batching, encrypted for the key(s) of --encrypt (at least one)
 *   txn        enableTransaction; transactions of 1 to 20 messages over the two topics,
 *              70 % committed, the others aborted, each after its sends' callbacks
 *   spool      spoolDir, spoolFsync=interval, producerName; creating the producer resends
 *              what the spool holds (without callbacks; the last flush covers them)
 *   own-loop   the client on this program's libuv loop, sending from a timer
 *              (chaos_own_loop.c)
 *   failover   failoverSecondaryUrls, failoverDelayMs=3000, switchBackDelayMs=10000,
 *              failoverCheckIntervalMs=1000
 *
 * The payload of counter c: "<workload>-<c, 9 digits>", then filler whose byte at offset
 * k of the payload is (c * 31 + k) & 0xff; 100 bytes long but in the chunked workload.
 *
 * The event log, one write(2) per line, in the order things happen:
 *   start <pid> <workload> <from> | created | sending <c> [txn=<t> topic=<0|1>] |
 *   accepted <c> | refused <c> <RESULT> | ok <c> <ledger>:<entry>:<partition>:<batch> |
 *   failed <c> <RESULT> | txn-begin <t> | txn-commit <t> ok|<RESULT> |
 *   txn-abort <t> ok|<RESULT> | flush ok|<RESULT> | end <accepted> <ok> <failed>
 * where RESULT is pulsarc_result_name(). Errors also go to stderr, in driver.h's shapes.
 *
 * SIGTERM or SIGINT: the sending stops (a transaction in progress is finished as
 * planned first), then flush, close, "flush" and "end". Exit status 0 after such a stop
 * with the flush ok and no send failed or refused; 1 for a failed run (also when the
 * producer could not be created, or a log line could not be written); 2 for a usage
 * error. A producer creation that fails for a reason that may pass (the broker or the
 * network, a fault of the run) is tried again every second until it works or a signal
 * comes; so is a transaction's begin. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chaos_producer.h"
#include "driver.h"

enum {
    KEYS = 16,
    CHUNKED_MIN = 6 << 20,
    CHUNKED_MAX = 20 << 20,
    SMALL_PAYLOAD = 100,
    TXN_MAX_MESSAGES = 20,
    TXN_COMMIT_PERCENT = 70,
    TXN_TIMEOUT_MS = 60000, /* 20 messages at the rate and their receipts take seconds: a
                               longer outage times the transaction out (its commit fails) */
    MAX_SETTINGS = 64,
};

/* The random choices, each a function of the seed and what it is for (the counter, or
 * the transaction's number), so a counter gets the same key or size in any incarnation
 * and whatever happened before it. */
enum { CHOOSE_KEY = 1, CHOOSE_SIZE, CHOOSE_TXN_SIZE, CHOOSE_TXN_END, CHOOSE_TOPIC };

volatile sig_atomic_t chaos_stop;

static int log_fd = -1;
static atomic_bool log_broken;

/* Counted by the sending thread (accepted, refused) and the loop thread (ok, failed);
 * the transaction workload waits on `completed` for its sends' callbacks. */
static pthread_mutex_t count_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t completed = PTHREAD_COND_INITIALIZER;
static long n_accepted, n_refused, n_ok, n_failed;
static pulsarc_result flush_result = PULSARC_OK;

/* ---- the event log --------------------------------------------------------------------- */

void chaos_log(const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line - 1, fmt, ap);
    va_end(ap);
    if (n < 0 || n >= (int)sizeof line - 1) {
        fprintf(stderr, "event log: a line of %d bytes does not fit\n", n);
        atomic_store(&log_broken, true);
        return;
    }
    line[n++] = '\n';
    ssize_t w;
    do
        w = write(log_fd, line, (size_t)n); /* nothing written when EINTR: safe to retry */
    while (w < 0 && errno == EINTR);
    if (w != n && !atomic_exchange(&log_broken, true))
        fprintf(stderr, "event log: write: %s\n", w < 0 ? strerror(errno) : "short write");
}

/* ---- payloads and choices -------------------------------------------------------------- */

/* splitmix64's finaliser. */
static uint64_t scramble(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ULL;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}

static uint64_t choose(const chaos_opts *o, uint64_t what, long i)
{
    return scramble(scramble(scramble(o->seed) ^ what) ^ (uint64_t)i);
}

static bool is(const chaos_opts *o, const char *workload)
{
    return strcmp(o->workload, workload) == 0;
}

size_t chaos_max_payload(const chaos_opts *o)
{
    return is(o, "chunked") ? CHUNKED_MAX : SMALL_PAYLOAD;
}

size_t chaos_payload_size(const chaos_opts *o, long c)
{
    if (!is(o, "chunked"))
        return SMALL_PAYLOAD;
    return CHUNKED_MIN + (size_t)(choose(o, CHOOSE_SIZE, c) % (CHUNKED_MAX - CHUNKED_MIN + 1));
}

void chaos_fill_payload(const chaos_opts *o, long c, unsigned char *buf, size_t size)
{
    char prefix[64];
    int n = snprintf(prefix, sizeof prefix, "%s-%09ld", o->workload, c);
    size_t k = (size_t)n < size ? (size_t)n : size;
    memcpy(buf, prefix, k);
    for (; k < size; k++)
        buf[k] = (unsigned char)(((uint64_t)c * 31 + k) & 0xff);
}

pulsarc_result chaos_build(const chaos_opts *o, pulsarc_message_t *msg, long c, unsigned char *buf)
{
    size_t size = chaos_payload_size(o, c);
    chaos_fill_payload(o, c, buf, size);
    pulsarc_message_clear(msg);
    pulsarc_result r = pulsarc_message_set_payload(msg, buf, size);
    if (r == PULSARC_OK && is(o, "keyed")) {
        char key[16];
        snprintf(key, sizeof key, "key-%d", (int)(choose(o, CHOOSE_KEY, c) % KEYS));
        r = pulsarc_message_set_key(msg, key);
    }
    return r;
}

/* ---- sends and their callbacks ------------------------------------------------------- */

void chaos_on_sent(pulsarc_producer_t *p, pulsarc_result res, const pulsarc_message_id_t *id,
                   void *ctx)
{
    long c = (long)(intptr_t)ctx;
    char where[128];
    bool ok = res == PULSARC_OK && id &&
              pulsarc_message_id_str(id, where, sizeof where) < sizeof where;
    if (ok) {
        chaos_log("ok %ld %s", c, where);
    } else {
        /* Success without an id would be the library's bug: logged as the failure it is
         * to the verifier ("failed ... OK" names no error). */
        chaos_log("failed %ld %s", c, pulsarc_result_name(res));
        drv_message_failed(c, res);
    }
    pthread_mutex_lock(&count_mu);
    if (ok)
        n_ok++;
    else
        n_failed++;
    pthread_cond_broadcast(&completed);
    pthread_mutex_unlock(&count_mu);
}

void chaos_send_returned(long c, pulsarc_result r)
{
    if (r == PULSARC_OK) {
        chaos_log("accepted %ld", c);
    } else {
        chaos_log("refused %ld %s", c, pulsarc_result_name(r));
        drv_message_failed(c, r);
    }
    pthread_mutex_lock(&count_mu);
    if (r == PULSARC_OK)
        n_accepted++;
    else
        n_refused++;
    pthread_mutex_unlock(&count_mu);
}

long chaos_completed(void)
{
    pthread_mutex_lock(&count_mu);
    long n = n_ok + n_failed;
    pthread_mutex_unlock(&count_mu);
    return n;
}

/* Until every accepted send has had its callback. */
static void wait_for_callbacks(void)
{
    pthread_mutex_lock(&count_mu);
    while (n_ok + n_failed < n_accepted)
        pthread_cond_wait(&completed, &count_mu);
    pthread_mutex_unlock(&count_mu);
}

void chaos_flushed(pulsarc_result r)
{
    if (r != PULSARC_OK)
        drv_fail("flush", r);
    flush_result = r;
    chaos_log("flush %s", r == PULSARC_OK ? "ok" : pulsarc_result_name(r));
}

int chaos_end(bool closed_cleanly)
{
    pthread_mutex_lock(&count_mu);
    long accepted = n_accepted, ok = n_ok, failed = n_failed, refused = n_refused;
    pthread_mutex_unlock(&count_mu);
    chaos_log("end %ld %ld %ld", accepted, ok, failed);
    bool good = flush_result == PULSARC_OK && closed_cleanly && failed == 0 && refused == 0 &&
                !atomic_load(&log_broken);
    return good ? 0 : 1;
}

bool chaos_create_retryable(pulsarc_result r)
{
    switch (r) {
    case PULSARC_ERR_CONNECT_FAILED:
    case PULSARC_ERR_CONNECTION_CLOSED:
    case PULSARC_ERR_TIMEOUT:
    case PULSARC_ERR_TOO_MANY_REDIRECTS:
        return true;
    default:
        return r >= PULSARC_ERR_BROKER_BASE && !pulsarc_result_is_terminal(r);
    }
}

/* ---- signals ------------------------------------------------------------------------- */

static void on_signal(int sig)
{
    (void)sig;
    chaos_stop = 1;
}

static void stop_signals(sigset_t *set)
{
    sigemptyset(set);
    sigaddset(set, SIGTERM);
    sigaddset(set, SIGINT);
}

static void setup_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigset_t set;
    stop_signals(&set);
    if (sigaction(SIGTERM, &sa, NULL) != 0 || sigaction(SIGINT, &sa, NULL) != 0 ||
        pthread_sigmask(SIG_BLOCK, &set, NULL) != 0) {
        perror("signals");
        exit(1);
    }
}

void chaos_unblock_signals(void)
{
    sigset_t set;
    stop_signals(&set);
    if (pthread_sigmask(SIG_UNBLOCK, &set, NULL) != 0) {
        perror("pthread_sigmask");
        exit(1);
    }
}

bool chaos_stop_pending(void)
{
    sigset_t pending;
    return chaos_stop || (sigpending(&pending) == 0 && (sigismember(&pending, SIGTERM) == 1 ||
                                                        sigismember(&pending, SIGINT) == 1));
}

/* ---- options and settings ------------------------------------------------------------ */

typedef struct setting {
    const char *opt, *value;
} setting;

static const char *const WORKLOADS[] = {
    "keyed", "chunked", "encrypted", "txn", "spool", "own-loop", "failover", NULL,
};

static const char *name, *secondary, *spool_dir;
static setting user[MAX_SETTINGS];
static int n_user;
static bool encrypt_given;

static int usage(const char *why)
{
    fprintf(stderr,
            "%s\nusage: chaos_producer keyed|chunked|encrypted|txn|spool|own-loop|failover URL "
            "LOG --topic T [--topic T2] [--name NAME] [--from N] [--count N] [--rate R] "
            "[--seed N] [--secondary URL] [--spool DIR] [--conf k=v] [--client-conf k=v] "
            "[--encrypt NAME=FILE]\n",
            why);
    return 2;
}

static bool number(const char *text, double min, double *out)
{
    char *end;
    errno = 0;
    *out = strtod(text, &end);
    return errno == 0 && end != text && !*end && *out >= min && *out < 1e15;
}

/* Returns 0, or the exit status of a usage error. */
static int parse(int argc, char **argv, chaos_opts *o)
{
    if (argc < 4)
        return usage("WORKLOAD, URL and LOG are needed");
    *o = (chaos_opts){ .url = argv[2], .count = -1, .rate = -1, .seed = 1 };
    for (int i = 0; WORKLOADS[i]; i++)
        if (!strcmp(argv[1], WORKLOADS[i]))
            o->workload = WORKLOADS[i];
    if (!o->workload)
        return usage("unknown WORKLOAD");
    for (int i = 4; i < argc; i += 2) {
        const char *opt = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        double v;
        if (!val)
            return usage("an option without its value");
        if (!strcmp(opt, "--topic")) {
            if (o->n_topics == 2)
                return usage("more than two --topic");
            o->topics[o->n_topics++] = val;
        } else if (!strcmp(opt, "--name")) {
            name = val;
        } else if (!strcmp(opt, "--from") || !strcmp(opt, "--count")) {
            if (!number(val, 0, &v) || v != (double)(long)v)
                return usage("--from and --count take a whole number, 0 or more");
            *(opt[2] == 'f' ? &o->from : &o->count) = (long)v;
        } else if (!strcmp(opt, "--rate")) {
            if (!number(val, 0, &o->rate))
                return usage("--rate takes a number, 0 or more");
        } else if (!strcmp(opt, "--seed")) {
            char *end;
            errno = 0;
            o->seed = strtoull(val, &end, 10);
            if (errno || end == val || *end)
                return usage("--seed takes a whole number");
        } else if (!strcmp(opt, "--secondary")) {
            secondary = val;
        } else if (!strcmp(opt, "--spool")) {
            spool_dir = val;
        } else if (!strcmp(opt, "--conf") || !strcmp(opt, "--client-conf") ||
                   !strcmp(opt, "--encrypt")) {
            if (n_user == MAX_SETTINGS)
                return usage("too many settings");
            user[n_user++] = (setting){ opt, val };
            encrypt_given |= !strcmp(opt, "--encrypt");
        } else {
            return usage("unknown option");
        }
    }
    if (o->n_topics != (is(o, "txn") ? 2 : 1))
        return usage(is(o, "txn") ? "txn takes two --topic" : "one --topic is needed");
    if (is(o, "spool") && (!name || !spool_dir))
        return usage("spool needs --name and --spool");
    if (is(o, "failover") && !secondary)
        return usage("failover needs --secondary");
    if (is(o, "encrypted") && !encrypt_given)
        return usage("encrypted needs --encrypt NAME=FILE");
    if (o->rate < 0)
        o->rate = is(o, "chunked") ? 0.2 : 20;
    return 0;
}

static void client_set(pulsarc_client_config_t *cc, const char *key, const char *value)
{
    if (pulsarc_client_config_set(cc, key, value) != PULSARC_OK) {
        fprintf(stderr, "client setting %s: %s\n", key, pulsarc_last_error_detail());
        exit(2);
    }
}

static void producer_set(pulsarc_producer_config_t *pc, const char *key, const char *value)
{
    if (pulsarc_producer_config_set(pc, key, value) != PULSARC_OK) {
        fprintf(stderr, "producer setting %s: %s\n", key, pulsarc_last_error_detail());
        exit(2);
    }
}

/* The workload's settings, then the command line's (drv_setting exits 2 on a bad one). */
static void configure(const chaos_opts *o, pulsarc_client_config_t *cc,
                      pulsarc_producer_config_t *pc)
{
    client_set(cc, "keepAliveIntervalSeconds", "5");
    /* Every reconnect and failed attempt in the stderr file: the evidence of a finding. */
    client_set(cc, "logLevel", "info");
    producer_set(pc, "blockIfQueueFull", "true");
    producer_set(pc, "sendTimeoutMs", "0");
    if (name)
        producer_set(pc, "producerName", name);
    if (is(o, "keyed")) {
        producer_set(pc, "batchingEnabled", "true");
        producer_set(pc, "compressionType", "lz4");
    } else if (is(o, "chunked")) {
        producer_set(pc, "chunkingEnabled", "true");
        producer_set(pc, "batchingEnabled", "false");
        producer_set(pc, "compressionType", "zstd");
        producer_set(pc, "chunkMaxMessageSize", "256");
    } else if (is(o, "encrypted")) {
        producer_set(pc, "batchingEnabled", "true");
    } else if (is(o, "txn")) {
        client_set(cc, "enableTransaction", "true");
    } else if (is(o, "spool")) {
        producer_set(pc, "spoolDir", spool_dir);
        producer_set(pc, "spoolFsync", "interval");
    } else if (is(o, "failover")) {
        client_set(cc, "failoverSecondaryUrls", secondary);
        client_set(cc, "failoverDelayMs", "3000");
        client_set(cc, "switchBackDelayMs", "10000");
        client_set(cc, "failoverCheckIntervalMs", "1000");
    }
    for (int i = 0; i < n_user; i++)
        drv_setting(user[i].opt, user[i].value, cc, pc);
}

/* ---- the workloads on the client's own thread ------------------------------------------- */

static void pause_unless_stopped(long ms)
{
    for (long waited = 0; waited < ms && !chaos_stop_pending(); waited += 20)
        drv_pause_ms(20);
}

/* drv_pace that gives up waiting once a stop is asked for. */
static void pace(double t0, long i, double rate)
{
    double left;
    while (!chaos_stop && rate > 0 && (left = (double)i / rate - (drv_now_s() - t0)) > 0)
        drv_pause_ms(left > 0.02 ? 20 : (long)(left * 1000) + 1);
}

static pulsarc_producer_t *create_producer(pulsarc_client_t *client, const char *topic,
                                           const pulsarc_producer_config_t *pc)
{
    for (;;) {
        pulsarc_producer_t *p = NULL;
        pulsarc_result r = pulsarc_client_create_producer(client, topic, pc, &p);
        if (r == PULSARC_OK)
            return p;
        drv_fail("create producer", r);
        if (!chaos_create_retryable(r))
            return NULL;
        pause_unless_stopped(1000);
        if (chaos_stop_pending())
            return NULL;
    }
}

static void send_loop(const chaos_opts *o, pulsarc_producer_t *p, pulsarc_message_t *msg,
                      unsigned char *buf)
{
    double t0 = drv_now_s();
    for (long i = 0; o->count < 0 || i < o->count; i++) {
        pace(t0, i, o->rate);
        if (chaos_stop)
            return;
        long c = o->from + i;
        pulsarc_result r = chaos_build(o, msg, c, buf);
        if (r != PULSARC_OK) {
            drv_fail("message", r);
            chaos_send_returned(c, r);
            return;
        }
        chaos_log("sending %ld", c);
        chaos_send_returned(c, pulsarc_producer_send_async(p, msg, chaos_on_sent,
                                                           (void *)(intptr_t)c));
    }
}

/* Transactions until a stop: the one in progress when it comes is finished as planned
 * (its remaining messages without pacing), so no transaction is left open. */
static void txn_loop(const chaos_opts *o, pulsarc_client_t *client, pulsarc_producer_t *ps[2],
                     pulsarc_message_t *msg, unsigned char *buf)
{
    double t0 = drv_now_s();
    long i = 0; /* messages so far */
    for (long t = 0; !chaos_stop && (o->count < 0 || i < o->count);) {
        pulsarc_txn_t *txn = NULL;
        pulsarc_result r = pulsarc_txn_begin(client, TXN_TIMEOUT_MS, &txn);
        if (r != PULSARC_OK) {
            drv_fail("txn begin", r);
            pause_unless_stopped(1000);
            continue;
        }
        chaos_log("txn-begin %ld", t);
        long n = 1 + (long)(choose(o, CHOOSE_TXN_SIZE, t) % TXN_MAX_MESSAGES);
        if (o->count >= 0 && n > o->count - i)
            n = o->count - i;
        bool commit = choose(o, CHOOSE_TXN_END, t) % 100 < TXN_COMMIT_PERCENT;
        for (long k = 0; k < n; k++, i++) {
            pace(t0, i, o->rate);
            long c = o->from + i;
            int topic = (int)(choose(o, CHOOSE_TOPIC, c) & 1);
            r = chaos_build(o, msg, c, buf);
            if (r != PULSARC_OK) {
                drv_fail("message", r);
                chaos_send_returned(c, r);
                continue;
            }
            chaos_log("sending %ld txn=%ld topic=%d", c, t, topic);
            chaos_send_returned(c,
                                pulsarc_producer_send_txn_async(ps[topic], txn, msg, chaos_on_sent,
                                                                (void *)(intptr_t)c));
        }
        wait_for_callbacks();
        r = commit ? pulsarc_txn_commit(txn) : pulsarc_txn_abort(txn);
        if (r != PULSARC_OK)
            drv_fail(commit ? "txn commit" : "txn abort", r);
        chaos_log("txn-%s %ld %s", commit ? "commit" : "abort", t,
                  r == PULSARC_OK ? "ok" : pulsarc_result_name(r));
        pulsarc_txn_free(txn);
        t++;
    }
}

static int run_on_client_thread(const chaos_opts *o, pulsarc_client_config_t *cc,
                                pulsarc_producer_config_t *pc)
{
    pulsarc_client_t *client = drv_client(o->url, cc);
    pulsarc_producer_t *ps[2] = { NULL, NULL };
    for (int t = 0; t < o->n_topics; t++) {
        ps[t] = create_producer(client, o->topics[t], pc);
        if (!ps[t]) {
            for (int k = 0; k < t; k++)
                pulsarc_producer_free(ps[k]);
            pulsarc_client_destroy(client);
            pulsarc_producer_config_free(pc);
            return 1;
        }
    }
    pulsarc_producer_config_free(pc);
    chaos_log("created");
    chaos_unblock_signals();

    pulsarc_message_t *msg = pulsarc_message_new();
    unsigned char *buf = malloc(chaos_max_payload(o));
    if (!msg || !buf)
        exit(drv_fail("message", PULSARC_ERR_NO_MEMORY));
    if (is(o, "txn"))
        txn_loop(o, client, ps, msg, buf);
    else
        send_loop(o, ps[0], msg, buf);
    pulsarc_message_free(msg);
    free(buf);

    pulsarc_result flushed = PULSARC_OK;
    for (int t = 0; t < o->n_topics; t++) {
        pulsarc_result r = pulsarc_producer_flush(ps[t]);
        if (flushed == PULSARC_OK)
            flushed = r;
    }
    chaos_flushed(flushed);
    bool clean = true;
    for (int t = 0; t < o->n_topics; t++) {
        pulsarc_result r = pulsarc_producer_close(ps[t]);
        if (r != PULSARC_OK) {
            drv_fail("close", r);
            clean = false;
        }
        pulsarc_producer_free(ps[t]);
    }
    pulsarc_result r = pulsarc_client_destroy(client);
    if (r != PULSARC_OK) {
        drv_fail("client destroy", r);
        clean = false;
    }
    return chaos_end(clean);
}

int main(int argc, char **argv)
{
    chaos_opts o;
    int bad = parse(argc, argv, &o);
    if (bad)
        return bad;
    /* Every setting is checked before the log has a line: a bad one is a usage error. */
    pulsarc_client_config_t *cc = pulsarc_client_config_new();
    pulsarc_producer_config_t *pc = pulsarc_producer_config_new();
    if (!cc || !pc)
        return drv_fail("configuration", PULSARC_ERR_NO_MEMORY);
    configure(&o, cc, pc);
    log_fd = open(argv[3], O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (log_fd < 0) {
        fprintf(stderr, "%s: %s\n", argv[3], strerror(errno));
        return 2;
    }
    setup_signals();
    chaos_log("start %ld %s %ld", (long)getpid(), o.workload, o.from);
    int status = is(&o, "own-loop") ? chaos_run_own_loop(&o, cc, pc)
                                    : run_on_client_thread(&o, cc, pc);
    close(log_fd);
    return status;
}
