/*
 * pulsarc-perf — producer throughput and latency, with pulsar-perf produce's flags.
 *
 *   pulsarc-perf [produce] [-u URL] [-t N] [-n N] [-m N] [-time S] [-r MSG_PER_S] [-s BYTES]
 *                [-o MAX_PENDING] [-z CODEC] [-b MS] [-bm N] [-bb N] [-db] [-ch] [-d S]
 *                [-dr MIN,MAX] [-k NAME -v FILE] [-mk MODE] [-am MODE] [-pn NAME]
 *                [-np N] [-txn [-nmt N] [-abort] [-tto S]] ... [pulsarc-perf's own
 *                --conf k=v, --zero-copy, ...] [TOPIC...]
 *
 * (perf_options.c has every flag.) One thread sends with pulsarc_producer_send_async
 * (blockIfQueueFull=true, so -o and the client's memory limit are the only windows), to
 * each producer in turn: N topics (named as pulsar-perf names them: TOPIC-0 .. TOPIC-(N-1)
 * when one TOPIC is given with -t N), -n producers on each, created beforehand by a few
 * threads at once; with -np the topics are first created as partitioned topics through the
 * admin REST API. With -txn every message is sent in a transaction (one at a time, across
 * every producer), committed or aborted after -nmt messages. The callback, on the
 * client's loop thread, records send->callback latency in a log-linear histogram. A
 * reporter thread prints a line every --stats-interval seconds; the end of the run prints
 * totals, latency percentiles, CPU and memory, and one machine-readable RESULT line. See
 * bench/README.md.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <pulsarc/pulsarc.h>

#include "cli_common/client_conf.h"
#include "cli_common/security_flags.h"
#include "perf_admin.h"
#include "perf_histogram.h"
#include "perf_options.h"
#include "perf_producers.h"

/* The send timestamp travels to the callback in its ctx pointer: no per-message memory. */
_Static_assert(sizeof(uintptr_t) >= sizeof(uint64_t),
               "pulsarc-perf keeps a 64-bit timestamp in the callback's ctx pointer");

#define MAX_ERROR_REPORTS 5
#define MIB (1024.0 * 1024.0)
/* Producers are created by up to this many threads at once (creation blocks on round
 * trips to the broker: lookup, partition metadata, registration). */
#define CREATE_THREADS 8

/* ---- shared state -------------------------------------------------------------------- */

typedef struct stats {
    atomic_uint_fast64_t sent;   /* accepted by send_async (sender thread) */
    atomic_uint_fast64_t acked;  /* callbacks with success (loop thread) */
    atomic_uint_fast64_t failed; /* callbacks with an error (loop thread) */
    size_t msg_size;
    perf_histogram_t hist; /* loop thread only */
} stats_t;

static stats_t g_stats;
static volatile sig_atomic_t g_stop;
static bool g_exit_on_failure; /* -ef: the first failed message stops the run */

static void on_signal(int sig)
{
    (void)sig;
    g_stop = 1;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void sleep_until_ns(uint64_t t)
{
    struct timespec ts = { .tv_sec = (time_t)(t / 1000000000u),
                           .tv_nsec = (long)(t % 1000000000u) };
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR && !g_stop)
        ;
}

static double cpu_seconds(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static double peak_rss_mib(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_maxrss / 1024.0; /* Linux reports kilobytes */
}

/* Runs on the client's loop thread, once per accepted message. ctx is the time just
 * before send_async for a timed message, 0 for the others (see latency_stride). */
static void on_sent(pulsarc_producer_t *producer, pulsarc_result res,
                    const pulsarc_message_id_t *id, void *ctx)
{
    (void)producer;
    (void)id;
    uint64_t sent_at = (uint64_t)(uintptr_t)ctx;
    if (res != PULSARC_OK) {
        if (g_exit_on_failure)
            g_stop = 1;
        uint64_t n = atomic_fetch_add_explicit(&g_stats.failed, 1, memory_order_relaxed);
        if (n < MAX_ERROR_REPORTS)
            fprintf(stderr, "send failed: %s: %s\n", pulsarc_result_name(res),
                    pulsarc_last_error_detail());
        else if (n == MAX_ERROR_REPORTS)
            fprintf(stderr, "(further send failures are only counted)\n");
        return;
    }
    if (sent_at) {
        uint64_t now = now_ns();
        perf_hist_record(&g_stats.hist, now > sent_at ? (now - sent_at) / 1000u : 0);
    }
    /* This thread is the only writer: a plain increment, no locked instruction. */
    atomic_store_explicit(&g_stats.acked,
                          atomic_load_explicit(&g_stats.acked, memory_order_relaxed) + 1,
                          memory_order_relaxed);
}

/* Borrowed payloads are shared, read-only buffers that live until exit: nothing to free. */
static void no_free(void *payload, size_t len, void *ctx)
{
    (void)payload;
    (void)len;
    (void)ctx;
}

/* ---- periodic reporter --------------------------------------------------------------- */

typedef struct reporter {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cond;
    bool done;
    const producer_set_t *producers;
    uint64_t start_ns;
    uint64_t interval_ns;
} reporter_t;

static void report_interval(reporter_t *r, uint64_t *prev_sent, uint64_t *prev_acked,
                            uint64_t *prev_bytes, uint64_t *prev_ns)
{
    uint64_t now = now_ns();
    uint64_t sent = atomic_load(&g_stats.sent), acked = atomic_load(&g_stats.acked);
    uint64_t bytes = acked * g_stats.msg_size, failed = atomic_load(&g_stats.failed);
    double dt = (double)(now - *prev_ns) / 1e9;
    printf("[%5.1fs] sent %9.0f msg/s  acked %9.0f msg/s  %8.2f MiB/s  pending %6" PRIu64
           "  failed %" PRIu64 "\n",
           (double)(now - r->start_ns) / 1e9, (double)(sent - *prev_sent) / dt,
           (double)(acked - *prev_acked) / dt, (double)(bytes - *prev_bytes) / dt / MIB,
           perf_pending(r->producers), failed);
    fflush(stdout);
    *prev_sent = sent;
    *prev_acked = acked;
    *prev_bytes = bytes;
    *prev_ns = now;
}

static void *reporter_main(void *arg)
{
    reporter_t *r = arg;
    uint64_t prev_sent = 0, prev_acked = 0, prev_bytes = 0, prev_ns = r->start_ns;
    uint64_t next = r->start_ns + r->interval_ns;
    pthread_mutex_lock(&r->mu);
    while (!r->done) {
        struct timespec ts = { .tv_sec = (time_t)(next / 1000000000u),
                               .tv_nsec = (long)(next % 1000000000u) };
        int rc = pthread_cond_timedwait(&r->cond, &r->mu, &ts);
        if (rc == ETIMEDOUT && !r->done) {
            pthread_mutex_unlock(&r->mu);
            report_interval(r, &prev_sent, &prev_acked, &prev_bytes, &prev_ns);
            next += r->interval_ns;
            pthread_mutex_lock(&r->mu);
        }
    }
    pthread_mutex_unlock(&r->mu);
    return NULL;
}

static int reporter_start(reporter_t *r, const producer_set_t *producers, uint64_t start_ns,
                          double interval_s)
{
    memset(r, 0, sizeof *r);
    r->producers = producers;
    r->start_ns = start_ns;
    r->interval_ns = (uint64_t)(interval_s * 1e9);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC); /* timestamps come from now_ns() */
    pthread_cond_init(&r->cond, &ca);
    pthread_condattr_destroy(&ca);
    pthread_mutex_init(&r->mu, NULL);
    return pthread_create(&r->thread, NULL, reporter_main, r) == 0 ? 0 : -1;
}

static void reporter_stop(reporter_t *r)
{
    pthread_mutex_lock(&r->mu);
    r->done = true;
    pthread_cond_signal(&r->cond);
    pthread_mutex_unlock(&r->mu);
    pthread_join(r->thread, NULL);
    pthread_cond_destroy(&r->cond);
    pthread_mutex_destroy(&r->mu);
}

/* ---- setup --------------------------------------------------------------------------- */

static void print_error(const char *what, pulsarc_result res)
{
    const char *detail = pulsarc_last_error_detail(); /* before any other pulsarc call */
    fprintf(stderr, "%s: %s (%s)%s%s\n", what, pulsarc_strerror(res), pulsarc_result_name(res),
            *detail ? ": " : "", detail);
}

/* Defaults first, then the user's settings in command-line order, so later ones win. */
/* A small generator for -mk random and -dr (xorshift64*). */
static uint64_t next_random(uint64_t *x)
{
    *x ^= *x >> 12;
    *x ^= *x << 25;
    *x ^= *x >> 27;
    return *x * 0x2545f4914f6cdd1du;
}

/* What pulsar-perf sets on each message beyond its payload, a key (-mk), a random delay
 * (-dr), the event time (-set): an interceptor's before_send, on the sending thread, so
 * that the send loop stays the same whether they are asked for or not (the library's
 * send path, inlined into it, is what bench/instructions counts). n counts the messages. */
typedef struct extras {
    const options_t *o;
    uint64_t n, rng;
} extras_t;

static pulsarc_result per_message(pulsarc_producer_t *producer, pulsarc_message_t *msg, void *ctx)
{
    (void)producer;
    extras_t *x = ctx;
    const options_t *o = x->o;
    pulsarc_result res = PULSARC_OK;
    uint64_t n = x->n++; /* one sending thread */
    if (o->key_mode != PERF_KEYS_NONE) {
        char key[24];
        if (o->key_mode == PERF_KEYS_AUTO_INCREMENT)
            snprintf(key, sizeof key, "%" PRIu64, n);
        else /* pulsar-perf's: a random int, as text */
            snprintf(key, sizeof key, "%" PRId32, (int32_t)(uint32_t)next_random(&x->rng));
        res = pulsarc_message_set_key(msg, key);
    }
    if (res == PULSARC_OK && o->delay_range) {
        uint64_t span = o->delay_max_s - o->delay_min_s;
        uint64_t s = o->delay_min_s + next_random(&x->rng) % span;
        res = pulsarc_message_set_deliver_after(msg, s * 1000);
    }
    if (res == PULSARC_OK && o->event_time) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        res = pulsarc_message_set_event_time(msg, (uint64_t)ts.tv_sec * 1000u +
                                                      (uint64_t)ts.tv_nsec / 1000000u);
    }
    return res;
}

static extras_t g_extras;

/* Producer `index`'s name with -pn (NAME, the separator, the index), else none. */
static int build_producer_conf_for(const options_t *o, size_t index,
                                   pulsarc_producer_config_t **out);

static int build_producer_conf(const options_t *o, pulsarc_producer_config_t **out)
{
    return build_producer_conf_for(o, 0, out);
}

/* perf_create_producers' per-producer configuration, with -pn. */
static pulsarc_producer_config_t *producer_conf_at(size_t index, void *ctx)
{
    pulsarc_producer_config_t *conf = NULL;
    return build_producer_conf_for(ctx, index, &conf) == 0 ? conf : NULL;
}

static int build_producer_conf_for(const options_t *o, size_t index,
                                   pulsarc_producer_config_t **out)
{
    pulsarc_producer_config_t *conf = pulsarc_producer_config_new();
    if (!conf)
        return -1;
    /* pulsar-perf produce's defaults (its producer's: -o 0, -p 0, -b 1 ms, -bm 1000,
     * -bb 4 MiB, --send-timeout 0, blocking when full), then the flags in order. */
    static const conf_kv_t defaults[] = {
        { "maxPendingMessages", "0" },     { "maxPendingMessagesAcrossPartitions", "0" },
        { "blockIfQueueFull", "true" },    { "batchingMaxPublishDelayMs", "1" },
        { "batchingMaxMessages", "1000" }, { "batchingMaxBytes", "4194304" },
        { "sendTimeoutMs", "0" },
    };
    for (size_t i = 0; i < sizeof defaults / sizeof defaults[0]; i++) {
        pulsarc_result res = pulsarc_producer_config_set(conf, defaults[i].key, defaults[i].value);
        if (res != PULSARC_OK) {
            print_error(defaults[i].key, res);
            pulsarc_producer_config_free(conf);
            return -1;
        }
    }
    for (int i = 0; i < o->encrypt.n; i++) {
        const conf_kv_t *kv = &o->encrypt.v[i];
        pulsarc_result res = pulsarc_producer_config_add_encryption_key_file(conf, kv->key,
                                                                             kv->value);
        if (res != PULSARC_OK) {
            char what[320];
            snprintf(what, sizeof what, "--encrypt %s=%s", kv->key, kv->value);
            print_error(what, res);
            pulsarc_producer_config_free(conf);
            return -1;
        }
    }
    for (int i = 0; i < o->producer_conf.n; i++) {
        const conf_kv_t *kv = &o->producer_conf.v[i];
        pulsarc_result res = pulsarc_producer_config_set(conf, kv->key, kv->value);
        if (res != PULSARC_OK) {
            char what[128]; /* not the value: a misspelt key may hold a secret */
            snprintf(what, sizeof what, "producer setting %s", kv->key);
            print_error(what, res);
            pulsarc_producer_config_free(conf);
            return -1;
        }
    }
    if (o->key_mode != PERF_KEYS_NONE || o->delay_range || o->event_time) {
        static const pulsarc_interceptor_t extras = { .before_send = per_message };
        g_extras.o = o;
        g_extras.rng = 0x9e3779b97f4a7c15u;
        pulsarc_result res = pulsarc_producer_config_add_interceptor(conf, &extras, sizeof extras,
                                                                     &g_extras);
        if (res != PULSARC_OK) {
            print_error("-mk, -dr, -set", res);
            pulsarc_producer_config_free(conf);
            return -1;
        }
    }
    if (o->producer_name) {
        char name[300];
        snprintf(name, sizeof name, "%s%s%zu", o->producer_name, o->separator, index);
        pulsarc_result res = pulsarc_producer_config_set(conf, "producerName", name);
        if (res != PULSARC_OK) {
            print_error("-pn", res);
            pulsarc_producer_config_free(conf);
            return -1;
        }
    }
    *out = conf;
    return 0;
}

static int build_client_conf(const options_t *o, pulsarc_client_config_t **out)
{
    pulsarc_client_config_t *conf = pulsarc_client_config_new();
    if (!conf)
        return -1;
    if (o->txn && pulsarc_client_config_set(conf, "enableTransaction", "true") != PULSARC_OK) {
        pulsarc_client_config_free(conf);
        return -1;
    }
    /* The file first, then the TLS and auth flags, then --client-conf: later wins. */
    conf_list_t file = { .n = 0 };
    for (size_t i = 0; i < o->file.n_settings; i++)
        perf_conf_add(&file, o->file.settings[i].key, o->file.settings[i].value);
    const conf_list_t *lists[] = { &file, &o->security, &o->client_conf };
    for (size_t l = 0; l < sizeof lists / sizeof lists[0]; l++) {
        for (int i = 0; i < lists[l]->n; i++) {
            const conf_kv_t *kv = &lists[l]->v[i];
            pulsarc_result res = pulsarc_client_config_set(conf, kv->key, kv->value);
            if (res != PULSARC_OK) {
                /* Not the value: a secret (authParams, or a misspelt key holding one)
                 * is never printed; the library's detail quotes a value it could not
                 * use when that is safe. */
                char what[128];
                snprintf(what, sizeof what, "client setting %s", kv->key);
                print_error(what, res);
                pulsarc_client_config_free(conf);
                return -1;
            }
        }
    }
    *out = conf;
    return 0;
}

static void warn_conf_file_key(void *path, int line, const char *key, const char *why)
{
    fprintf(stderr, "warning: %s:%d: %s: %s\n", (const char *)path, line, key, why);
}

/* --conf-file's settings, and its service URL unless -u gave one. */
static int load_conf_file(options_t *o)
{
    char err[512];
    if (o->conf_file && client_conf_load(o->conf_file, &o->file, warn_conf_file_key,
                                         (void *)o->conf_file, err, sizeof err) != 0) {
        fprintf(stderr, "--conf-file %s: %s\n", o->conf_file, err);
        return -1;
    }
    if (o->conf_file && !o->service_url) {
        o->service_url = client_conf_service_url(&o->file, err, sizeof err);
        if (!o->service_url && o->file.web_service_url) {
            fprintf(stderr, "--conf-file %s: %s\n", o->conf_file, err);
            return -1;
        }
    }
    if (!o->service_url)
        o->service_url = "pulsar://127.0.0.1:6650";
    return 0;
}

/* Random bytes (xorshift64*, fixed seed so compressed runs are repeatable), made once. */
static uint8_t *random_payload(size_t len)
{
    uint8_t *p = malloc(len ? len : 1);
    if (!p)
        return NULL;
    uint64_t x = 0x9e3779b97f4a7c15u;
    for (size_t i = 0; i < len; i++) {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        p[i] = (uint8_t)((x * 0x2545f4914f6cdd1du) >> 56);
    }
    return p;
}

static uint8_t *read_payload_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "%s: %s\n", path, strerror(errno));
        return NULL;
    }
    uint8_t *buf = NULL;
    size_t cap = 0, n = 0;
    for (;;) {
        if (n == cap) {
            cap = cap ? cap * 2 : 64 * 1024;
            uint8_t *nb = realloc(buf, cap);
            if (!nb) {
                free(buf);
                fclose(f);
                return NULL;
            }
            buf = nb;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0)
            break;
    }
    bool err = ferror(f);
    fclose(f);
    if (err) {
        fprintf(stderr, "%s: read error\n", path);
        free(buf);
        return NULL;
    }
    *len = n;
    return buf;
}

/* ---- the run ------------------------------------------------------------------------- */

typedef struct run_result {
    size_t producers;
    double create_s;   /* creating every producer */
    uint64_t rejected; /* send_async refused (message never accepted) */
    double elapsed_s;  /* first send to last callback */
    double cpu_s;
} run_result_t;

/* Which messages are timed: every Nth. Two clock reads and a histogram update per message
 * are 15-20 % of the process's CPU at full speed with 100-byte batched messages (each read
 * ~25 ns on this VM), and this process's CPU is what is measured, so by default every 8th
 * message is timed: still hundreds of thousands of samples per second, each one the real
 * time from just before its send_async to the start of its callback. In a batch of 1000
 * the timed messages are spread evenly over its positions. Below 100 k msg/s (-r) every
 * message is timed: there the reads cost nothing and a run has fewer messages. */
static uint64_t latency_stride(const options_t *o)
{
    if (o->latency_every)
        return o->latency_every;
    return o->rate > 0 && o->rate < 100000 ? 1 : 8;
}

/* What both send loops share: when each message goes (-r's schedule), when the run stops
 * (-m, -time, a signal), which messages are timed, each message's payload and producer.
 * Inlined into each loop (always: GCC once left pacer_next out of line, +26 a message,
 * when main grew), where its fields stay in registers, so the plain loop runs the
 * instructions it ran when it was the only one: pacer_next answers with a bool and
 * pacer_message with the producer (one call answering the producer or NULL cost it a
 * test and a branch per message, bench/instructions found). */
typedef struct pacer {
    const options_t *o;
    const producer_set_t *ps;
    pulsarc_message_t *msg;
    const uint8_t *payload;
    size_t len;
    uint64_t start, end, stride;
    uint64_t sent; /* messages accepted so far */
    uint64_t until_timed;
    uint64_t now; /* the last clock read */
    size_t next;  /* the producer of the next message */
    /* The ctx for the next message's callback: the time just before its send when it is
     * timed, 0 otherwise. */
    uint64_t sent_at;
} pacer_t;

static inline pacer_t pacer_start(const options_t *o, const producer_set_t *ps,
                                  pulsarc_message_t *msg, const uint8_t *payload, size_t len,
                                  uint64_t start)
{
    return (pacer_t){
        .o = o,
        .ps = ps,
        .msg = msg,
        .payload = payload,
        .len = len,
        .start = start,
        .end = o->duration_s > 0 ? start + (uint64_t)(o->duration_s * 1e9) : UINT64_MAX,
        .stride = latency_stride(o),
        .now = start,
    };
}

/* Waits for the next message's turn and sets p->sent_at. False when the run is over. */
static inline __attribute__((always_inline)) bool pacer_next(pacer_t *p)
{
    const options_t *o = p->o;
    if (g_stop || (o->messages != 0 && p->sent >= o->messages))
        return false;
    bool timed = p->until_timed == 0;
    p->until_timed = timed ? p->stride - 1 : p->until_timed - 1;
    /* The duration is checked on every clock read, at least one per 64 messages. */
    bool fresh = timed || p->sent % 64 == 0;
    /* With -r, an absolute schedule: after a stall the loop catches up in a burst, so the
     * average rate holds; sleeping only when ahead keeps syscalls off that path. A message
     * already due by the last read needs no new one. */
    uint64_t due = o->rate > 0 ? p->start + (uint64_t)((double)p->sent * 1e9 / o->rate) : 0;
    if (fresh || due > p->now)
        p->now = now_ns();
    if (due > p->now) {
        sleep_until_ns(due);
        p->now = now_ns();
    }
    if (p->now >= p->end)
        return false;
    p->sent_at = timed ? p->now : 0;
    return true;
}

/* Gives msg the next message's payload; returns its producer. */
static inline __attribute__((always_inline)) pulsarc_producer_t *pacer_message(pacer_t *p)
{
    const options_t *o = p->o;
    const uint8_t *this_payload = p->payload + (p->sent % o->payloads) * p->len;
    if (o->zero_copy)
        pulsarc_message_set_payload_borrowed(p->msg, this_payload, p->len, no_free, NULL);
    else if (o->payloads > 1)
        pulsarc_message_set_payload(p->msg, this_payload, p->len); /* copied by the send */
    pulsarc_producer_t *producer = p->ps->v[p->next];
    p->next = p->next + 1 == p->ps->n ? 0 : p->next + 1;
    return producer;
}

/* After each send: res is what it returned. False when the loop must stop. */
static inline __attribute__((always_inline)) bool pacer_sent(pacer_t *p, pulsarc_result res,
                                                             const char *what, run_result_t *rr)
{
    if (res != PULSARC_OK) {
        /* With blockIfQueueFull a refusal is not back-pressure but a real error (closed,
         * too big, ...): it would repeat for every message. */
        print_error(what, res);
        rr->rejected++;
        return false;
    }
    p->sent++;
    atomic_store_explicit(&g_stats.sent, p->sent, memory_order_relaxed);
    return true;
}

/* Send until the count, the duration or a signal says stop, to each producer in turn (as
 * pulsar-perf does with one thread). Returns messages accepted. */
static uint64_t send_loop(const options_t *o, const producer_set_t *ps, pulsarc_message_t *msg,
                          const uint8_t *payload, size_t len, uint64_t start, run_result_t *rr)
{
    pacer_t p = pacer_start(o, ps, msg, payload, len, start);
    while (pacer_next(&p)) {
        pulsarc_result res = pulsarc_producer_send_async(pacer_message(&p), msg, on_sent,
                                                         (void *)(uintptr_t)p.sent_at);
        if (!pacer_sent(&p, res, "send_async", rr))
            break;
    }
    return p.sent;
}

/* ---- transactions (-txn) ------------------------------------------------------------- */

typedef struct txn_stats {
    uint64_t begin_failed;          /* (sender thread) */
    uint64_t ended;                 /* commits or aborts asked for (sender thread) */
    atomic_uint_fast64_t committed; /* their callbacks (loop thread) */
    atomic_uint_fast64_t aborted;
    atomic_uint_fast64_t failed; /* a commit or abort that did not end as asked */
} txn_stats_t;

static txn_stats_t g_txn;

static void on_txn_ended(pulsarc_txn_t *txn, pulsarc_result res, void *ctx)
{
    (void)txn;
    atomic_uint_fast64_t *done = ctx; /* &g_txn.committed or &g_txn.aborted */
    if (res == PULSARC_OK) {
        atomic_fetch_add(done, 1);
        return;
    }
    if (atomic_fetch_add(&g_txn.failed, 1) < MAX_ERROR_REPORTS)
        fprintf(stderr, "transaction %s failed: %s: %s\n",
                done == &g_txn.committed ? "commit" : "abort", pulsarc_result_name(res),
                pulsarc_last_error_detail());
}

/* Commits txn, or aborts it with -abort, without waiting, and lets it go: the client
 * holds it until the end is confirmed. */
static void txn_end(const options_t *o, pulsarc_txn_t *txn)
{
    g_txn.ended++;
    pulsarc_result res = o->txn_abort
                             ? pulsarc_txn_abort_async(txn, on_txn_ended, &g_txn.aborted)
                             : pulsarc_txn_commit_async(txn, on_txn_ended, &g_txn.committed);
    if (res != PULSARC_OK) { /* on_txn_ended will not run */
        atomic_fetch_add(&g_txn.failed, 1);
        print_error(o->txn_abort ? "abort" : "commit", res);
    }
    pulsarc_txn_free(txn);
}

static pulsarc_txn_t *txn_begin(const options_t *o, pulsarc_client_t *client)
{
    pulsarc_txn_t *txn = NULL;
    pulsarc_result res = pulsarc_txn_begin(client, o->txn_timeout_s * 1000, &txn);
    if (res != PULSARC_OK) {
        print_error("begin a transaction", res);
        g_txn.begin_failed++;
    }
    return txn;
}

/* send_loop with -txn, as pulsar-perf sends: one transaction at a time, across every
 * producer, ended after -nmt messages (without waiting for the end: the next one is begun
 * at once, and a wait would not change what the broker does); the last, shorter one is
 * ended too, so that every message sent ends as the flags say (pulsar-perf leaves it to
 * the timeout). A separate loop, so that the plain one calls only the plain send. */
static uint64_t send_txn_loop(const options_t *o, pulsarc_client_t *client,
                              const producer_set_t *ps, pulsarc_message_t *msg,
                              const uint8_t *payload, size_t len, uint64_t start, run_result_t *rr)
{
    pacer_t p = pacer_start(o, ps, msg, payload, len, start);
    pulsarc_txn_t *txn = txn_begin(o, client);
    uint64_t in_txn = 0; /* messages in txn */
    while (txn && pacer_next(&p)) {
        pulsarc_result res = pulsarc_producer_send_txn_async(pacer_message(&p), txn, msg, on_sent,
                                                             (void *)(uintptr_t)p.sent_at);
        if (!pacer_sent(&p, res, "send_txn_async", rr))
            break;
        if (++in_txn == o->txn_messages) {
            txn_end(o, txn);
            txn = txn_begin(o, client);
            in_txn = 0;
        }
    }
    if (txn && in_txn > 0) {
        txn_end(o, txn);
    } else if (txn) { /* begun for messages that did not come: nothing waits for its end */
        pulsarc_txn_abort_async(txn, NULL, NULL);
        pulsarc_txn_free(txn);
    }
    return p.sent;
}

/* Until every commit or abort asked for has its result (each is bounded by the client's
 * operationTimeoutMs). */
static void wait_txn_ends(void)
{
    while (atomic_load(&g_txn.committed) + atomic_load(&g_txn.aborted) +
               atomic_load(&g_txn.failed) <
           g_txn.ended)
        sleep_until_ns(now_ns() + 1000000u);
}

static void print_results(const options_t *o, const run_result_t *rr, uint64_t accepted)
{
    uint64_t acked = atomic_load(&g_stats.acked), failed = atomic_load(&g_stats.failed);
    double secs = rr->elapsed_s > 0 ? rr->elapsed_s : 1e-9;
    double rate = (double)acked / secs;
    double mibps = (double)acked * (double)g_stats.msg_size / secs / MIB;
    double p50 = (double)perf_hist_quantile(&g_stats.hist, 0.50) / 1000.0;
    double p99 = (double)perf_hist_quantile(&g_stats.hist, 0.99) / 1000.0;
    double p999 = (double)perf_hist_quantile(&g_stats.hist, 0.999) / 1000.0;
    double max = (double)g_stats.hist.max_us / 1000.0;
    double cpu_per_m = acked ? rr->cpu_s / ((double)acked / 1e6) : 0;
    double rss = peak_rss_mib();

    printf("\n--- pulsarc-perf results ---\n");
    printf("messages      %" PRIu64 " acked, %" PRIu64 " failed, %" PRIu64 " accepted, %" PRIu64
           " refused\n",
           acked, failed, accepted, rr->rejected);
    printf("elapsed       %.3f s (first send to last callback)\n", rr->elapsed_s);
    printf("throughput    %.0f msg/s, %.2f MiB/s of payload (%zu-byte messages)\n", rate, mibps,
           g_stats.msg_size);
    printf("latency (ms)  p50 %.3f  p99 %.3f  p99.9 %.3f  max %.3f  (send_async -> callback)\n",
           p50, p99, p999, max);
    printf("cpu           %.2f s user+sys, %.2f s per million messages\n", rr->cpu_s, cpu_per_m);
    printf("peak RSS      %.1f MiB\n", rss);
    printf("producers     %zu (%u topic%s x %u), created in %.3f s\n", rr->producers,
           (unsigned)o->topics, o->topics == 1 ? "" : "s", (unsigned)o->producers, rr->create_s);
    uint64_t committed = atomic_load(&g_txn.committed), aborted = atomic_load(&g_txn.aborted);
    uint64_t txn_failed = atomic_load(&g_txn.failed) + g_txn.begin_failed;
    if (o->txn)
        printf("transactions  %" PRIu64 " committed, %" PRIu64 " aborted, %" PRIu64
               " failed (%" PRIu64 " messages each, the last may have fewer)\n",
               committed, aborted, txn_failed, o->txn_messages);
    if (o->histogram_file)
        printf("histogram     %s\n", o->histogram_file);
    printf("RESULT msgs=%" PRIu64 " rate=%.0f mbps=%.2f p50_ms=%.3f p99_ms=%.3f p999_ms=%.3f "
           "max_ms=%.3f cpu_s_per_million=%.2f peak_rss_mb=%.1f failed=%" PRIu64 " size=%zu "
           "producers=%zu create_s=%.3f",
           acked, rate, mibps, p50, p99, p999, max, cpu_per_m, rss, failed + rr->rejected,
           g_stats.msg_size, rr->producers, rr->create_s);
    if (o->txn)
        printf(" txn_committed=%" PRIu64 " txn_aborted=%" PRIu64 " txn_failed=%" PRIu64, committed,
               aborted, txn_failed);
    printf("\n");
    fflush(stdout);
}

/* What the library itself counted (pulsarc_producer_stats / pulsarc_client_stats): its
 * latency histogram times every acknowledged message, from the loop turn that took it
 * over to the one that read its receipt. Ends with a LIBRESULT line for scripts. */
static void print_stats_snapshot(FILE *f, const pulsarc_stats_t *s)
{
#define STAT(what) pulsarc_stats_get(s, PULSARC_STAT_##what)
    uint64_t batches = STAT(BATCHES), entry_bytes = STAT(ENTRY_BYTES);
    double mean_batch = batches ? (double)STAT(BATCHED_MSGS) / (double)batches : 0;
    double ratio = entry_bytes ? (double)STAT(ENTRY_RAW_BYTES) / (double)entry_bytes : 0;
    double p50 = (double)pulsarc_stats_latency_us(s, 50) / 1000.0;
    double p99 = (double)pulsarc_stats_latency_us(s, 99) / 1000.0;
    double p999 = (double)pulsarc_stats_latency_us(s, 99.9) / 1000.0;
    double max = (double)pulsarc_stats_latency_us(s, 100) / 1000.0;
    fprintf(f,
            "library       %" PRIu64 " acked, %" PRIu64 " failed, %" PRIu64 " refused; %" PRIu64
            " entries, %" PRIu64 " batches of %.1f messages (max %" PRIu64 "), compression "
            "%.2f, %" PRIu64 " reconnects\n",
            STAT(MSGS_ACKED), STAT(MSGS_FAILED), STAT(MSGS_REFUSED), STAT(ENTRIES), batches,
            mean_batch, STAT(BATCH_MAX_MSGS), ratio, STAT(RECONNECTS));
    fprintf(f,
            "lib latency   p50 %.3f  p99 %.3f  p99.9 %.3f  max %.3f ms  (hand-over turn -> "
            "receipt turn, %" PRIu64 " messages)\n",
            p50, p99, p999, max, STAT(LATENCY_COUNT));
    fprintf(f,
            "LIBRESULT acked=%" PRIu64 " failed=%" PRIu64 " refused=%" PRIu64 " batches=%" PRIu64
            " mean_batch=%.1f p50_ms=%.3f p99_ms=%.3f p999_ms=%.3f max_ms=%.3f\n",
            STAT(MSGS_ACKED), STAT(MSGS_FAILED), STAT(MSGS_REFUSED), batches, mean_batch, p50, p99,
            p999, max);
    fflush(f);
#undef STAT
}

static void print_header(const options_t *o, const pulsarc_producer_config_t *pconf, size_t len)
{
    char conf[2048];
    size_t n = pulsarc_producer_config_dump(pconf, conf, sizeof conf);
    if (n >= sizeof conf)
        n = sizeof conf - 1;
    for (size_t i = 0; i < n; i++) /* one line: "k=v k=v ..." */
        if (conf[i] == '\n')
            conf[i] = ' ';
    printf("pulsarc-perf %s -> %s topic %s", PULSARC_VERSION_STRING, o->service_url,
           o->topic_names[0]);
    if (o->topics > 1)
        printf(" .. %s", o->topic_names[o->topics - 1]);
    if (o->producers > 1)
        printf(", %u producers each", (unsigned)o->producers);
    if (o->partitions > 0)
        printf(", %d partitions", o->partitions);
    printf("\n");
    printf("  %zu-byte %s payload (%s), rate %s, ", len, o->payload_file ? "file" : "random",
           o->zero_copy ? "zero-copy" : "copied", o->rate > 0 ? "limited" : "unlimited");
    if (o->rate > 0)
        printf("%.0f msg/s, ", o->rate);
    if (o->messages)
        printf("%" PRIu64 " messages", o->messages);
    if (o->messages && o->duration_s > 0)
        printf(" or ");
    if (o->duration_s > 0)
        printf("%.1f s", o->duration_s);
    if (o->txn)
        printf(", in transactions of %" PRIu64 " messages, %s, %" PRIu64 " s timeout",
               o->txn_messages, o->txn_abort ? "aborted" : "committed", o->txn_timeout_s);
    printf("\n  producer: %s\n", conf);
    fflush(stdout);
}

/* The admin API for --partitions: --admin-url, else the webServiceUrl of --conf-file, else
 * the service URL when it is an HTTP one, else pulsar-perf's default. */
static const char *admin_url(const options_t *o)
{
    if (o->admin_url)
        return o->admin_url;
    if (o->file.web_service_url)
        return o->file.web_service_url;
    if (!strncmp(o->service_url, "http://", 7) || !strncmp(o->service_url, "https://", 8))
        return o->service_url;
    return "http://localhost:8080";
}

static int run(const options_t *o, pulsarc_client_t *client, const pulsarc_producer_config_t *pconf,
               const uint8_t *payload, size_t len)
{
    producer_set_t ps;
    uint64_t t0 = now_ns();
    if (perf_create_producers(client, pconf, o->producer_name ? producer_conf_at : NULL, (void *)o,
                              o->topic_names, o->topics, o->producers, CREATE_THREADS, &g_stop,
                              print_error, &ps) != 0)
        return 1;
    run_result_t rr = { .create_s = (double)(now_ns() - t0) / 1e9 };
    printf("  %zu producer%s on %u topic%s created in %.3f s\n", ps.n, ps.n == 1 ? "" : "s",
           (unsigned)o->topics, o->topics == 1 ? "" : "s", rr.create_s);
    fflush(stdout);
    pulsarc_message_t *msg = pulsarc_message_new();
    /* -d: every send of the builder is delivered that much later than it is made. */
    if (msg && o->delay_s > 0 &&
        pulsarc_message_set_deliver_after(msg, o->delay_s * 1000) != PULSARC_OK) {
        print_error("-d", PULSARC_ERR_INVALID_ARGUMENT);
        pulsarc_message_free(msg);
        msg = NULL;
    }
    if (!msg || (!o->zero_copy && pulsarc_message_set_payload(msg, payload, len) != PULSARC_OK)) {
        fprintf(stderr, "out of memory\n");
        perf_close_all(&ps, print_error);
        pulsarc_message_free(msg);
        return 1;
    }
    g_stats.msg_size = len;

    double cpu0 = cpu_seconds();
    uint64_t start = now_ns();
    reporter_t rep;
    bool reporting = o->stats_interval_s > 0 &&
                     reporter_start(&rep, &ps, start, o->stats_interval_s) == 0;
    /* Chosen once: the plain loop has no transaction in it (see send_txn_loop). */
    uint64_t accepted = o->txn ? send_txn_loop(o, client, &ps, msg, payload, len, start, &rr)
                               : send_loop(o, &ps, msg, payload, len, start, &rr);
    /* Every accepted message is counted only once its callback ran, and with -txn only
     * once its transaction ended. */
    perf_flush_all(&ps, print_error);
    wait_txn_ends();
    rr.elapsed_s = (double)(now_ns() - start) / 1e9;
    rr.cpu_s = cpu_seconds() - cpu0;
    if (reporting)
        reporter_stop(&rep);
    /* The library's own count, over every producer, before they close. */
    pulsarc_stats_t *lib_stats = NULL;
    if (pulsarc_client_stats(client, &lib_stats) != PULSARC_OK)
        print_error("statistics", PULSARC_ERR_NO_MEMORY);
    rr.producers = ps.n;
    perf_close_all(&ps, print_error);
    pulsarc_message_free(msg);

    print_results(o, &rr, accepted);
    if (lib_stats)
        print_stats_snapshot(stdout, lib_stats);
    pulsarc_stats_free(lib_stats);
    uint64_t acked = atomic_load(&g_stats.acked);
    return acked == accepted && rr.rejected == 0 && atomic_load(&g_stats.failed) == 0 &&
                   g_txn.begin_failed == 0 && atomic_load(&g_txn.failed) == 0
               ? 0
               : 1;
}

int main(int argc, char **argv)
{
    /* The service URL comes from load_conf_file when not given. */
    static options_t o;
    int parsed = perf_options_parse(argc, argv, &o);
    if (parsed != 0 || load_conf_file(&o) != 0) {
        perf_options_free(&o);
        return parsed == 1 ? 0 : 2;
    }
    g_exit_on_failure = o.exit_on_failure;

    pulsarc_producer_config_t *pconf = NULL;
    pulsarc_client_config_t *cconf = NULL;
    if (build_producer_conf(&o, &pconf) != 0 || build_client_conf(&o, &cconf) != 0) {
        pulsarc_producer_config_free(pconf);
        return 2;
    }
    size_t len = o.size;
    uint8_t *payload = o.payload_file ? read_payload_file(o.payload_file, &len)
                                      : random_payload(len * o.payloads);
    if (!payload) {
        pulsarc_producer_config_free(pconf);
        pulsarc_client_config_free(cconf);
        return 2;
    }

    /* Opened now, so that a path that cannot be written fails before the run. */
    FILE *histogram = o.histogram_file ? fopen(o.histogram_file, "w") : NULL;
    if (o.histogram_file && !histogram) {
        fprintf(stderr, "%s: %s\n", o.histogram_file, strerror(errno));
        pulsarc_producer_config_free(pconf);
        pulsarc_client_config_free(cconf);
        free(payload);
        return 2;
    }

    struct sigaction sa = { .sa_handler = on_signal }; /* no SA_RESTART: stop promptly */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);

    print_header(&o, pconf, len);
    int rc = 1;
    char why[600];
    if (o.partitions > 0 && perf_admin_init(why, sizeof why) != 0) {
        fprintf(stderr, "--partitions: %s\n", why);
    } else if (o.partitions > 0 && perf_create_partitioned_topics(admin_url(&o), o.topic_names,
                                                                  o.topics, o.partitions) != 0) {
        rc = 2;
    } else {
        pulsarc_client_t *client = NULL;
        pulsarc_result res = pulsarc_client_new(o.service_url, cconf, &client);
        if (res == PULSARC_OK) {
            rc = run(&o, client, pconf, payload, len);
            pulsarc_client_destroy(client);
        } else {
            print_error("create client", res);
        }
    }
    if (histogram) {
        bool written = perf_hist_write_percentiles(&g_stats.hist, histogram) == 0;
        if (fclose(histogram) != 0 || !written) {
            fprintf(stderr, "%s: write failed\n", o.histogram_file);
            rc = rc ? rc : 1;
        }
    }
    pulsarc_producer_config_free(pconf);
    pulsarc_client_config_free(cconf);
    free(payload);
    client_conf_free(&o.file);
    perf_options_free(&o);
    return rc;
}
