/* The client-against-mock-broker tests' helpers: see client_harness.h. Compiled into each
 * mock binary: with PC_TEST_OWN_LOOP (pulsarc-mock-tests-own-loop) h_client makes every
 * client on a loop the harness runs, without it on a thread of the client's own. */
#include "client_harness.h"

#include <poll.h>
#include <uv.h>

#include "client/client.h"
#include "common/buf.h"
#include "common/task.h"
#include "skip_clock.h"
#include "wire/frame.h"

#ifdef PC_TEST_OWN_LOOP
#include "pulsarc/pulsarc_uv.h"
#endif

/* ---- time ------------------------------------------------------------------------- */

uint64_t h_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* A pause between two looks at a condition nothing signals (h_wait_until). */
static void h_nap_ms(unsigned ms)
{
    struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L };
    while (nanosleep(&ts, &ts) != 0) {
    }
}

unsigned h_time_scale(void)
{
    unsigned v = PC_TEST_TIME_SCALE;
    const char *e = getenv("PULSARC_TEST_TIME_SCALE");
    if (e && *e) {
        char *end = NULL;
        long n = strtol(e, &end, 10);
        if (end && *end == '\0' && n >= 1 && n <= 100)
            v = (unsigned)n;
    }
    return v < 1 ? 1 : v;
}

uint64_t h_scaled_ms(uint64_t ms)
{
    return ms * h_time_scale();
}

int h_deadline_ms(int timeout_ms)
{
    uint64_t ms = timeout_ms < H_WAIT_MIN_MS ? H_WAIT_MIN_MS : (uint64_t)timeout_ms;
    ms = h_scaled_ms(ms);
    return ms > INT32_MAX ? INT32_MAX : (int)ms;
}

uint64_t h_upper_ms(uint64_t nominal_ms)
{
    return nominal_ms + h_scaled_ms(H_SLACK_MS);
}

const char *h_ms_str(uint64_t ms)
{
    static _Thread_local char bufs[8][24];
    static _Thread_local unsigned next;
    char *b = bufs[next++ % 8];
    snprintf(b, sizeof bufs[0], "%llu", (unsigned long long)ms);
    return b;
}

bool h_wait_until(h_cond_fn cond, void *arg, int timeout_ms)
{
    uint64_t deadline = h_now_ms() + (uint64_t)h_deadline_ms(timeout_ms);
    while (!cond(arg)) {
        if (h_now_ms() >= deadline)
            return cond(arg);
        h_nap_ms(2);
    }
    return true;
}

typedef struct h_atomic_ne {
    _Atomic int *v;
    int initial;
} h_atomic_ne_t;

static bool h_atomic_ne_cond(void *arg)
{
    h_atomic_ne_t *a = arg;
    return atomic_load(a->v) != a->initial;
}

bool h_wait_changed(_Atomic int *v, int initial, int timeout_ms)
{
    h_atomic_ne_t a = { v, initial };
    return h_wait_until(h_atomic_ne_cond, &a, timeout_ms);
}

/* ---- time passing: quiet, then skip ------------------------------------------------- */

/* A look at the client's loop from its own thread (a task posted to it). */
typedef struct h_loop_probe {
    pc_task_t task; /* first: the task is the probe */
    pulsarc_client_t *client;
    pthread_mutex_t mu;
    pthread_cond_t cond;
    bool done;
    bool busy; /* the loop has work now, or a request in flight */
} h_loop_probe_t;

static bool h_fd_readable(int fd)
{
    struct pollfd p = { .fd = fd, .events = POLLIN };
    return poll(&p, 1, 0) > 0;
}

static void h_loop_probe_run(pc_task_t *task)
{
    h_loop_probe_t *p = (h_loop_probe_t *)task;
    uv_loop_t *loop = &p->client->loop;
    /* A timer due (or callbacks pending, handles closing), a descriptor ready (its
     * backend descriptor polls readable then), or a request in flight: a name lookup on
     * libuv's threads, a connect, a write the kernel has not taken. */
    bool busy = uv_backend_timeout(loop) == 0 || h_fd_readable(uv_backend_fd(loop)) ||
                loop->active_reqs.count > 0;
    pthread_mutex_lock(&p->mu);
    p->busy = busy;
    p->done = true;
    pthread_cond_broadcast(&p->cond);
    pthread_mutex_unlock(&p->mu);
}

/* Whether c's loop had work when a task posted to it now ran. The task wakes the loop
 * (asleep in its poll, with a timeout computed before a skip), whose next turns then run
 * what the skip made due. */
static bool h_loop_busy(pulsarc_client_t *c)
{
    h_loop_probe_t p = { .task.run = h_loop_probe_run,
                         .client = c,
                         .mu = PTHREAD_MUTEX_INITIALIZER,
                         .cond = PTHREAD_COND_INITIALIZER };
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += h_deadline_ms(3000) / 1000;
    pc_client_post(c, &p.task);
    pthread_mutex_lock(&p.mu);
    while (!p.done && pthread_cond_timedwait(&p.cond, &p.mu, &deadline) == 0) {
    }
    bool done = p.done, busy = p.busy;
    pthread_mutex_unlock(&p.mu);
    /* A probe left behind would be run later from this stack frame: abort, not return. */
    if (!done) {
        fprintf(stderr, "client_harness: the client's loop did not run a task in %d ms\n",
                h_deadline_ms(3000));
        abort();
    }
    return busy;
}

void h_quiet_on(pulsarc_client_t *c, mock_broker_t *const *brokers, size_t n)
{
    uint64_t deadline = h_now_ms() + (uint64_t)h_deadline_ms(3000);
    for (unsigned rounds = 1;; rounds++) {
        bool busy = c && h_loop_busy(c);
        for (size_t i = 0; i < n; i++)
            if (brokers[i] && mock_broker_sync(brokers[i]))
                busy = true;
        if (!busy)
            return;
        cr_assert_lt(h_now_ms(), deadline, "the client and the mock never went quiet (%u rounds)",
                     rounds);
    }
}

void h_quiet(void)
{
    h_quiet_on(client, &mb, 1);
}

/* Skip up to ms in steps, each followed by quiet, until cond(arg) holds (NULL: never). */
static bool h_pass_time(unsigned ms, h_cond_fn cond, void *arg, pulsarc_client_t *c,
                        mock_broker_t *const *brokers, size_t n)
{
    /* What is in motion lands first, as it would while real time passes: the skip must
     * not overtake an answer on its way (a receipt becoming a send timeout). */
    h_quiet_on(c, brokers, n);
    for (;;) {
        if (cond && cond(arg))
            return true;
        if (ms == 0)
            return false;
        unsigned step = ms < H_TIME_STEP_MS ? ms : H_TIME_STEP_MS;
        skip_clock_forward(step);
        ms -= step;
        h_quiet_on(c, brokers, n);
    }
}

void h_let_time_pass_on(unsigned ms, pulsarc_client_t *c, mock_broker_t *const *brokers, size_t n)
{
    h_pass_time(ms, NULL, NULL, c, brokers, n);
}

void h_let_time_pass(unsigned ms)
{
    h_pass_time(ms, NULL, NULL, client, &mb, 1);
}

bool h_let_time_pass_until(h_cond_fn cond, void *arg, unsigned max_ms)
{
    return h_pass_time(max_ms, cond, arg, client, &mb, 1);
}

typedef struct h_count_at_least {
    mock_broker_t *broker;
    mock_counter_t counter;
    uint64_t at_least;
} h_count_at_least_t;

static bool h_count_cond(void *arg)
{
    h_count_at_least_t *a = arg;
    return mock_broker_count(a->broker, a->counter) >= a->at_least;
}

bool h_let_time_pass_until_count(mock_broker_t *b, mock_counter_t c, uint64_t at_least,
                                 unsigned max_ms)
{
    h_count_at_least_t a = { b, c, at_least };
    return h_pass_time(max_ms, h_count_cond, &a, client, &mb, 1);
}

static bool h_calls_cond(void *n)
{
    return h_total() >= *(const int *)n;
}

bool h_let_time_pass_until_calls(int n, unsigned max_ms)
{
    return h_pass_time(max_ms, h_calls_cond, &n, client, &mb, 1);
}

bool h_let_time_pass_until_changed(_Atomic int *v, int initial, unsigned max_ms)
{
    h_atomic_ne_t a = { v, initial };
    return h_pass_time(max_ms, h_atomic_ne_cond, &a, client, &mb, 1);
}

typedef struct h_call {
    void (*fn)(void *arg);
    void *arg;
    atomic_bool returned;
} h_call_t;

static void *h_call_main(void *arg)
{
    h_call_t *call = arg;
    call->fn(call->arg);
    atomic_store(&call->returned, true);
    return NULL;
}

static bool h_call_returned(void *arg)
{
    return atomic_load(&((h_call_t *)arg)->returned);
}

bool h_call_while_time_passes(void (*fn)(void *arg), void *arg, unsigned max_ms)
{
    /* Static: a call that never returns keeps using it after the test has failed. */
    static h_call_t call;
    call = (h_call_t){ .fn = fn, .arg = arg };
    pthread_t thread;
    cr_assert_eq(pthread_create(&thread, NULL, h_call_main, &call), 0);
    if (!h_pass_time(max_ms, h_call_returned, &call, client, &mb, 1)) {
        pthread_detach(thread);
        return false;
    }
    pthread_join(thread, NULL);
    return true;
}

static void create_blocking(void *arg)
{
    h_create_call_t *cc = arg;
    cc->result = pulsarc_client_create_producer(client, H_TOPIC, NULL, &cc->producer);
    snprintf(cc->detail, sizeof cc->detail, "%s", pulsarc_last_error_detail());
}

bool h_create_while_time_passes(h_create_call_t *cc, unsigned max_ms)
{
    return h_call_while_time_passes(create_blocking, cc, max_ms);
}

/* ---- log capture ------------------------------------------------------------------ */

static pthread_mutex_t h_log_mu = PTHREAD_MUTEX_INITIALIZER;
static char h_log_buf[256 * 1024];
static size_t h_log_len;

void h_logger(pulsarc_log_level level, const char *file, int line, const char *message, void *ctx)
{
    static const char *const names[] = { "DEBUG", "INFO", "WARN", "ERROR", "OFF" };
    char tmp[1024];
    int n = snprintf(tmp, sizeof tmp, "%s %s:%d %s\n", names[level <= 4 ? level : 4],
                     file ? file : "?", line, message ? message : "");
    if (n < 0)
        return;
    if ((size_t)n >= sizeof tmp)
        n = sizeof tmp - 1;
    pthread_mutex_lock(&h_log_mu);
    if (h_log_len + (size_t)n < sizeof h_log_buf) {
        memcpy(h_log_buf + h_log_len, tmp, (size_t)n);
        h_log_len += (size_t)n;
        h_log_buf[h_log_len] = '\0';
    }
    pthread_mutex_unlock(&h_log_mu);
    if (getenv("PULSARC_TEST_LOG"))
        fputs(tmp, stderr);
}

bool h_log_contains(const char *needle)
{
    pthread_mutex_lock(&h_log_mu);
    bool found = strstr(h_log_buf, needle) != NULL;
    pthread_mutex_unlock(&h_log_mu);
    return found;
}

int h_log_count(const char *needle)
{
    int n = 0;
    size_t len = strlen(needle);
    pthread_mutex_lock(&h_log_mu);
    for (const char *p = h_log_buf; len && (p = strstr(p, needle)) != NULL; p += len)
        n++;
    pthread_mutex_unlock(&h_log_mu);
    return n;
}

static bool h_log_cond(void *needle)
{
    return h_log_contains(needle);
}

bool h_wait_log(const char *needle, int timeout_ms)
{
    return h_wait_until(h_log_cond, (void *)needle, timeout_ms);
}

typedef struct h_log_count_arg {
    const char *needle;
    int at_least;
} h_log_count_arg_t;

static bool h_log_count_cond(void *arg)
{
    h_log_count_arg_t *a = arg;
    return h_log_count(a->needle) >= a->at_least;
}

bool h_wait_log_count(const char *needle, int at_least, int timeout_ms)
{
    h_log_count_arg_t a = { needle, at_least };
    return h_wait_until(h_log_count_cond, &a, timeout_ms);
}

/* ---- send callbacks ---------------------------------------------------------------- */

h_tracker_t T = { .mu = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };

void h_on_sent(pulsarc_producer_t *p, pulsarc_result res, const pulsarc_message_id_t *id, void *ctx)
{
    h_slot_t *s = ctx;
    pthread_mutex_lock(&T.mu);
    T.calls[s->idx]++;
    T.res[s->idx] = res;
    snprintf(T.detail[s->idx], sizeof T.detail[s->idx], "%s", pulsarc_last_error_detail());
    if (id) {
        T.ledger[s->idx] = pulsarc_message_id_ledger(id);
        T.entry[s->idx] = pulsarc_message_id_entry(id);
        T.partition[s->idx] = pulsarc_message_id_partition(id);
    }
    if (res == PULSARC_OK && !id)
        T.on_null_id_ok = true;
    if (res != PULSARC_OK && id)
        T.id_on_failure = true;
    if (T.n_order < (int)(sizeof T.order / sizeof T.order[0]))
        T.order[T.n_order++] = s->idx;
    T.total++;
    pthread_cond_broadcast(&T.cond);
    pthread_mutex_unlock(&T.mu);
    if (T.hook)
        T.hook(p, s->idx, res);
}

void h_reset_tracker(void)
{
    pthread_mutex_lock(&T.mu);
    memset(T.calls, 0, sizeof T.calls);
    memset(T.res, 0, sizeof T.res);
    memset(T.ledger, 0, sizeof T.ledger);
    memset(T.entry, 0, sizeof T.entry);
    memset(T.detail, 0, sizeof T.detail);
    T.on_null_id_ok = T.id_on_failure = false;
    T.n_order = 0;
    T.total = 0;
    pthread_mutex_unlock(&T.mu);
}

bool h_wait_calls(int n, int timeout_ms)
{
    uint64_t deadline = h_now_ms() + (uint64_t)h_deadline_ms(timeout_ms);
    pthread_mutex_lock(&T.mu);
    while (T.total < n) {
        uint64_t now = h_now_ms();
        if (now >= deadline)
            break;
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        uint64_t wait = deadline - now;
        if (wait > 50)
            wait = 50;
        ts.tv_nsec += (long)wait * 1000000L;
        ts.tv_sec += ts.tv_nsec / 1000000000L;
        ts.tv_nsec %= 1000000000L;
        pthread_cond_timedwait(&T.cond, &T.mu, &ts);
    }
    bool ok = T.total >= n;
    pthread_mutex_unlock(&T.mu);
    return ok;
}

int h_total(void)
{
    pthread_mutex_lock(&T.mu);
    int n = T.total;
    pthread_mutex_unlock(&T.mu);
    return n;
}

void h_assert_each_once(int n, pulsarc_result want)
{
    pthread_mutex_lock(&T.mu);
    for (int i = 0; i < n; i++) {
        int calls = T.calls[i];
        pulsarc_result res = T.res[i];
        if (calls != 1 || res != want) {
            pthread_mutex_unlock(&T.mu);
            cr_assert_fail("message %d: %d callback(s), last result %s (%s); want one %s", i, calls,
                           pulsarc_result_name(res), T.detail[i], pulsarc_result_name(want));
        }
    }
    bool bad_ok = T.on_null_id_ok, bad_fail = T.id_on_failure;
    pthread_mutex_unlock(&T.mu);
    cr_assert_not(bad_ok, "an OK callback came without a message id");
    cr_assert_not(bad_fail, "a failed callback came with a message id");
}

void h_assert_order(int n)
{
    pthread_mutex_lock(&T.mu);
    int n_order = T.n_order;
    int bad = -1;
    for (int i = 0; i < n && i < n_order; i++)
        if (T.order[i] != i) {
            bad = i;
            break;
        }
    int got = bad >= 0 ? T.order[bad] : 0;
    pthread_mutex_unlock(&T.mu);
    cr_assert_eq(n_order, n, "%d callbacks, want %d", n_order, n);
    cr_assert_eq(bad, -1, "callback %d was for message %d", bad, got);
}

/* ---- client, producer, messages ---------------------------------------------------- */

mock_broker_t *mb;
pulsarc_client_t *client;
pulsarc_producer_t *producer;
void (*h_client_setup)(pulsarc_client_config_t *cc);

void h_start(void)
{
    if (!mb)
        mb = mock_broker_start();
    cr_assert_not_null(mb, "mock broker did not start");
}

void h_setup(void)
{
    h_start();
}

void h_future_hook(void *ctx)
{
    (void)ctx;
}

/* ---- the client's loop: its own thread, or the harness's loop (PC_TEST_OWN_LOOP) ---- */

#ifdef PC_TEST_OWN_LOOP

/* The application's loop, played by the harness: run on h_loop.thread, kept running by
 * h_loop.call, through which the test's thread has functions run on the loop's thread. */
static struct {
    bool running;
    uv_loop_t loop;
    pthread_t thread;
    uv_async_t call;
    pthread_mutex_t mu;
    pthread_cond_t cond;
    void (*fn)(void *arg); /* the call in progress; NULL once done */
    void *arg;
    int close_rc; /* uv_loop_close's, once the loop has stopped */
} h_loop = { .mu = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };

static void h_loop_on_call(uv_async_t *a)
{
    pthread_mutex_lock(&h_loop.mu);
    void (*fn)(void *) = h_loop.fn;
    void *arg = h_loop.arg;
    pthread_mutex_unlock(&h_loop.mu);
    if (fn)
        fn(arg);
    pthread_mutex_lock(&h_loop.mu);
    h_loop.fn = NULL;
    pthread_cond_broadcast(&h_loop.cond);
    pthread_mutex_unlock(&h_loop.mu);
}

static void *h_loop_main(void *arg)
{
    uv_run(&h_loop.loop, UV_RUN_DEFAULT);
    h_loop.close_rc = uv_loop_close(&h_loop.loop);
    return NULL;
}

/* Run fn(arg) on the loop's thread and wait until it has returned. */
static void h_on_loop(void (*fn)(void *), void *arg)
{
    if (!h_loop.running) {
        cr_assert_eq(uv_loop_init(&h_loop.loop), 0);
        cr_assert_eq(uv_async_init(&h_loop.loop, &h_loop.call, h_loop_on_call), 0);
        cr_assert_eq(pthread_create(&h_loop.thread, NULL, h_loop_main, NULL), 0);
        h_loop.running = true;
    }
    pthread_mutex_lock(&h_loop.mu);
    h_loop.fn = fn;
    h_loop.arg = arg;
    uv_async_send(&h_loop.call);
    while (h_loop.fn)
        pthread_cond_wait(&h_loop.cond, &h_loop.mu);
    pthread_mutex_unlock(&h_loop.mu);
}

static void h_loop_close_call(void *arg)
{
    uv_close((uv_handle_t *)&h_loop.call, NULL);
}

/* Close the harness's handle: the loop stops once nothing else is on it, and must then
 * close (a handle of pulsarc's left behind fails the test, or hangs it if it is active). */
static void h_loop_stop(void)
{
    if (!h_loop.running)
        return;
    h_on_loop(h_loop_close_call, NULL);
    pthread_join(h_loop.thread, NULL);
    h_loop.running = false;
    cr_assert_eq(h_loop.close_rc, 0,
                 "uv_loop_close: %s: a handle of pulsarc's was left on the "
                 "application's loop",
                 uv_err_name(h_loop.close_rc));
}

typedef struct h_new_call {
    const char *url;
    const pulsarc_client_config_t *conf;
    pulsarc_client_t *client;
    pulsarc_result res;
    char *detail;
    size_t detail_len;
} h_new_call_t;

static void h_new_on_loop(void *arg)
{
    h_new_call_t *n = arg;
    n->res = pulsarc_client_new_on_loop(&h_loop.loop, n->url, n->conf, &n->client);
    snprintf(n->detail, n->detail_len, "%s", pulsarc_last_error_detail());
}

/* A client for the test: made on the loop's thread, as pulsarc_client_new_on_loop wants. */
static pulsarc_result h_client_new(const char *url, const pulsarc_client_config_t *conf,
                                   pulsarc_client_t **out, char *detail, size_t len)
{
    h_new_call_t n = { .url = url, .conf = conf, .detail = detail, .detail_len = len };
    h_on_loop(h_new_on_loop, &n);
    *out = n.client;
    return n.res;
}

#else

static pulsarc_result h_client_new(const char *url, const pulsarc_client_config_t *conf,
                                   pulsarc_client_t **out, char *detail, size_t len)
{
    pulsarc_result r = pulsarc_client_new(url, conf, out);
    snprintf(detail, len, "%s", pulsarc_last_error_detail());
    return r;
}

static void h_loop_stop(void)
{
}
#endif

void h_teardown(void)
{
    T.hook = NULL;
    if (producer && client)
        pulsarc_producer_free(producer);
    producer = NULL;
    if (client)
        pulsarc_client_destroy(client);
    client = NULL;
    mock_broker_stop(mb);
    mb = NULL;
    h_loop_stop();
}

void h_finish(void)
{
    h_teardown();
}

void h_set_va(pulsarc_client_config_t *cc, pulsarc_producer_config_t *pc, va_list ap)
{
    const char *k;
    while ((k = va_arg(ap, const char *)) != NULL) {
        const char *v = va_arg(ap, const char *);
        pulsarc_result r = cc ? pulsarc_client_config_set(cc, k, v)
                              : pulsarc_producer_config_set(pc, k, v);
        cr_assert_eq(r, PULSARC_OK, "config %s=%s: %s", k, v, pulsarc_last_error_detail());
    }
}

pulsarc_client_t *h_client_url(const char *url, ...)
{
    pulsarc_client_config_t *cc = pulsarc_client_config_new();
    cr_assert_not_null(cc);
    static const char *const defaults[][2] = {
        { "operationTimeoutMs", "3000" },
        { "connectionTimeoutMs", "1000" },
        { "initialBackoffIntervalMs", "20" },
        { "maxBackoffIntervalMs", "200" },
        { "logLevel", "info" },
    };
    for (size_t i = 0; i < sizeof defaults / sizeof defaults[0]; i++)
        cr_assert_eq(pulsarc_client_config_set(cc, defaults[i][0], defaults[i][1]), PULSARC_OK);
    va_list ap;
    va_start(ap, url);
    h_set_va(cc, NULL, ap);
    va_end(ap);
    /* The logger is set last: set_logger(NULL) would turn logging off. */
    pulsarc_client_config_set_logger(cc, h_logger, NULL);
    if (h_client_setup)
        h_client_setup(cc);
    pulsarc_client_t *c = NULL;
    char detail[512];
    pulsarc_result r = h_client_new(url, cc, &c, detail, sizeof detail);
    pulsarc_client_config_free(cc);
    cr_assert_eq(r, PULSARC_OK, "client_new: %s", detail);
    return c;
}

pulsarc_producer_config_t *h_producer_conf(int dummy, ...)
{
    pulsarc_producer_config_t *pc = pulsarc_producer_config_new();
    cr_assert_not_null(pc);
    cr_assert_eq(pulsarc_producer_config_set(pc, "batchingEnabled", "false"), PULSARC_OK);
    va_list ap;
    va_start(ap, dummy);
    h_set_va(NULL, pc, ap);
    va_end(ap);
    return pc;
}

pulsarc_producer_t *h_producer_ok(pulsarc_client_t *c, const char *topic,
                                  pulsarc_producer_config_t *pc)
{
    pulsarc_producer_t *p = NULL;
    pulsarc_result r = pulsarc_client_create_producer(c, topic, pc, &p);
    pulsarc_producer_config_free(pc);
    cr_assert_eq(r, PULSARC_OK, "create_producer: %s (%s)", pulsarc_result_name(r),
                 pulsarc_last_error_detail());
    cr_assert_not_null(p);
    return p;
}

pulsarc_result h_producer_fails(pulsarc_client_t *c, const char *topic,
                                pulsarc_producer_config_t *pc, char *detail, size_t len,
                                uint64_t *elapsed_ms)
{
    pulsarc_producer_t *p = NULL;
    uint64_t t0 = h_now_ms();
    pulsarc_result r = pulsarc_client_create_producer(c, topic, pc, &p);
    if (elapsed_ms)
        *elapsed_ms = h_now_ms() - t0;
    if (detail)
        snprintf(detail, len, "%s", pulsarc_last_error_detail());
    if (pc)
        pulsarc_producer_config_free(pc);
    cr_assert_neq(r, PULSARC_OK, "create_producer succeeded, expected a failure");
    cr_assert_null(p, "a failed create_producer left a handle");
    return r;
}

pulsarc_message_t *h_message(int idx, size_t len)
{
    static _Thread_local char buf[64 * 1024];
    pulsarc_message_t *m = pulsarc_message_new();
    cr_assert_not_null(m);
    int n = snprintf(buf, sizeof buf, "msg-%d", idx);
    size_t total = len ? len : (size_t)n;
    cr_assert_leq(total, sizeof buf);
    for (size_t i = (size_t)n; i < total; i++)
        buf[i] = (char)('a' + (i % 26));
    cr_assert_eq(pulsarc_message_set_payload(m, buf, total), PULSARC_OK);
    return m;
}

pulsarc_result h_send_len(pulsarc_producer_t *p, int idx, size_t len)
{
    cr_assert_lt(idx, H_MAX_MSGS);
    T.slots[idx].idx = idx;
    pulsarc_message_t *m = h_message(idx, len);
    pulsarc_result r = pulsarc_producer_send_async(p, m, h_on_sent, &T.slots[idx]);
    pulsarc_message_free(m);
    return r;
}

pulsarc_result h_send(pulsarc_producer_t *p, int idx)
{
    return h_send_len(p, idx, 0);
}

void h_send_range_len(pulsarc_producer_t *p, int from, int to, size_t len)
{
    for (int i = from; i < to; i++) {
        pulsarc_result r = h_send_len(p, i, len);
        cr_assert_eq(r, PULSARC_OK, "send_async %d: %s (%s)", i, pulsarc_result_name(r),
                     pulsarc_last_error_detail());
    }
}

void h_send_range(pulsarc_producer_t *p, int from, int to)
{
    for (int i = from; i < to; i++) {
        pulsarc_result r = h_send(p, i);
        cr_assert_eq(r, PULSARC_OK, "send_async %d: %s (%s)", i, pulsarc_result_name(r),
                     pulsarc_last_error_detail());
    }
}

void h_pending_unanswered(int n)
{
    mock_broker_set_receipt_mode(mb, MOCK_RECEIPTS_SUPPRESS);
    h_send_range(producer, 0, n);
    cr_assert(mock_broker_wait_sends(mb, (size_t)n, h_deadline_ms(3000)));
    mock_broker_set_receipt_mode(mb, MOCK_RECEIPTS_NORMAL);
}

pulsarc_result h_send_sync(pulsarc_producer_t *p, int idx)
{
    pulsarc_message_t *m = h_message(idx, 0);
    pulsarc_result r = pulsarc_producer_send(p, m, NULL);
    pulsarc_message_free(m);
    return r;
}

/* ---- mock queries ------------------------------------------------------------------ */

uint64_t h_count(mock_broker_t *b, mock_counter_t c)
{
    return mock_broker_count(b, c);
}

bool h_wait_count(mock_broker_t *b, mock_counter_t c, uint64_t at_least, int timeout_ms)
{
    return mock_broker_wait_count(b, c, at_least, h_deadline_ms(timeout_ms));
}

bool h_wait_count_at_most(mock_broker_t *b, mock_counter_t c, uint64_t at_most, int timeout_ms)
{
    return mock_broker_wait_count_at_most(b, c, at_most, h_deadline_ms(timeout_ms));
}

bool h_wait_sends(mock_broker_t *b, size_t n, int timeout_ms)
{
    return mock_broker_wait_sends(b, n, h_deadline_ms(timeout_ms));
}

void h_release_held_expect_freed(mock_broker_t *b, pulsarc_client_t *c, int n)
{
    cr_assert(h_wait_count(b, MOCK_HELD_RECEIPTS, (uint64_t)n, 3000), "receipts never held");
    mock_broker_release_receipts(b);
    cr_assert(h_wait_calls(n, 3000), "only %d of %d callbacks", h_total(), n);
    h_assert_each_once(n, PULSARC_OK);
    cr_assert_eq(pulsarc_client_memory_used(c), 0, "memory still charged after the receipts");
}

int h_broker_send_cmd(mock_broker_t *b, const Pulsar__Proto__BaseCommand *cmd)
{
    pc_buf_t buf;
    pc_buf_init(&buf);
    cr_assert_eq(pc_frame_encode_command(&buf, cmd), 0);
    int n = mock_broker_send_raw(b, buf.data, buf.len);
    pc_buf_free(&buf);
    return n;
}

int h_barrier(mock_broker_t *b)
{
    int n = mock_broker_barrier(b, h_deadline_ms(3000));
    cr_assert_geq(n, 0, "the client did not answer the barrier PING");
    return n;
}

void h_client_caught_up(mock_broker_t *b)
{
    cr_assert_gt(h_barrier(b), 0, "no connection to ping");
}

void h_settle(mock_broker_t *b)
{
    h_barrier(b);
    h_barrier(b);
}

void h_expect_no_more_callbacks(void)
{
    int before = h_total();
    h_settle(mb);
    int after = h_total();
    cr_assert_eq(after, before, "%d more callback(s) after the ones awaited", after - before);
}

void h_fence_for_ever(mock_broker_t *b)
{
    mock_producer_info_t info;
    cr_assert(mock_broker_last_producer(b, &info), "no producer registered");
    mock_broker_fail_producer(b, PULSAR__PROTO__SERVER_ERROR__ServiceNotReady,
                              "org.apache.pulsar.broker.service.BrokerServiceException$"
                              "TopicFencedException: Topic is fenced",
                              -1);
    cr_assert_eq(mock_broker_close_producer(b, info.producer_id), 1);
}

mock_send_t h_get_send(mock_broker_t *b, size_t i)
{
    mock_send_t s;
    cr_assert(mock_broker_get_send(b, i, &s), "no recorded SEND %zu", i);
    return s;
}

int h_send_index(const mock_send_t *s)
{
    if (!s->payload || s->payload_len < 5 || memcmp(s->payload, "msg-", 4) != 0)
        return -1;
    int v = 0;
    size_t i = 4;
    if (i >= s->payload_len || s->payload[i] < '0' || s->payload[i] > '9')
        return -1;
    for (; i < s->payload_len && s->payload[i] >= '0' && s->payload[i] <= '9'; i++)
        v = v * 10 + (s->payload[i] - '0');
    return v;
}

int h_assert_seq_in_order_per_connection(mock_broker_t *b)
{
    size_t n = (size_t)mock_broker_count(b, MOCK_SENDS);
    int conns[256];
    uint64_t pids[256];
    uint64_t last[256];
    int n_conns = 0;
    for (size_t i = 0; i < n; i++) {
        mock_send_t s = h_get_send(b, i);
        int k = 0;
        while (k < n_conns && (conns[k] != s.connection || pids[k] != s.producer_id))
            k++;
        if (k == n_conns) {
            cr_assert_lt(n_conns, 256);
            conns[n_conns] = s.connection;
            pids[n_conns] = s.producer_id;
            last[n_conns] = s.sequence_id;
            n_conns++;
        } else {
            uint64_t prev = last[k];
            int conn = s.connection;
            uint64_t seq = s.sequence_id;
            /* The chunks of one message share its sequence id. */
            if (seq < prev || (seq == prev && !s.is_chunk)) {
                mock_send_free(&s);
                cr_assert_fail("connection %d, producer %llu: sequence id %llu after %llu "
                               "(SEND #%zu)",
                               conn, (unsigned long long)pids[k], (unsigned long long)seq,
                               (unsigned long long)prev, i);
            }
            last[k] = seq;
        }
        mock_send_free(&s);
    }
    return n_conns;
}
