#include "client/client.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth/auth.h"
#include "common/error.h"
#include "common/timer.h"
#include "net/http.h"
#include "net/pool.h"

void pc_waiter_init(pc_waiter_t *w)
{
    uv_mutex_init(&w->mu);
    uv_cond_init(&w->cond);
    w->done = false;
    w->res = PULSARC_OK;
    w->detail[0] = '\0';
}

void pc_waiter_destroy(pc_waiter_t *w)
{
    uv_cond_destroy(&w->cond);
    uv_mutex_destroy(&w->mu);
}

void pc_waiter_signal(pc_waiter_t *w, pulsarc_result res, const char *detail)
{
    uv_mutex_lock(&w->mu);
    w->res = res;
    snprintf(w->detail, sizeof w->detail, "%s", detail ? detail : "");
    w->done = true;
    uv_cond_signal(&w->cond);
    uv_mutex_unlock(&w->mu);
}

pulsarc_result pc_waiter_wait(pc_waiter_t *w)
{
    uv_mutex_lock(&w->mu);
    while (!w->done)
        uv_cond_wait(&w->cond, &w->mu);
    pulsarc_result r = w->res;
    uv_mutex_unlock(&w->mu);
    if (r != PULSARC_OK)
        pc_set_detail(w->detail);
    return r;
}

/* From other threads a post is one lock-free push, and only the first push since the
 * loop last found the queue empty pays for a wake-up (uv_async_send). The loop's own
 * posts (from callbacks) go to a plain list that the next turn runs, as they always
 * have. */
void pc_client_post(pulsarc_client_t *c, pc_task_t *task)
{
    if (pc_client_on_loop(c)) {
        atomic_store_explicit(&task->next, NULL, memory_order_relaxed);
        bool first = !c->local_head;
        if (c->local_tail)
            atomic_store_explicit(&c->local_tail->next, task, memory_order_relaxed);
        else
            c->local_head = task;
        c->local_tail = task;
        if (first && !atomic_load(&c->tasks_closed))
            uv_async_send(&c->wakeup);
        return;
    }
    if (pc_task_queue_push(&c->tasks, task) && !atomic_load(&c->tasks_closed))
        uv_async_send(&c->wakeup);
}

bool pc_client_on_loop(const pulsarc_client_t *c)
{
    uv_thread_t self = uv_thread_self();
    return uv_thread_equal(&self, &c->thread);
}

static void wake_admission(pulsarc_client_t *c)
{
    uv_mutex_lock(&c->admit_mu);
    uv_cond_broadcast(&c->admit_cond);
    uv_mutex_unlock(&c->admit_mu);
}

void pc_client_admission_released(pulsarc_client_t *c, bool many)
{
    /* Once the client stops, the check handle is closed: wake at once. */
    if (pc_client_on_loop(c) && !c->rt.stopping && !many)
        c->admit_freed = true;
    else
        wake_admission(c);
}

static void on_admit_check(uv_check_t *h)
{
    pulsarc_client_t *c = h->data;
    if (!c->admit_freed)
        return;
    c->admit_freed = false;
    wake_admission(c);
}

/* Each wake-up runs what the loop itself posted before it, then what other threads
 * posted, up to a budget so that I/O is not starved (at full speed the senders' windows
 * bound it anyway). While it drains, the wake-up flag stays set, so senders do not signal
 * again; once the queue looks empty the flag is re-armed and the queue looked at once more,
 * for a task whose sender saw the flag still set. What the loop's tasks post runs on a
 * later turn. Returns true when work is left over. */
#define TASKS_PER_TURN 4096

static bool run_tasks(pulsarc_client_t *c)
{
    pc_task_t *t = c->local_head;
    c->local_head = c->local_tail = NULL;
    while (t) {
        pc_task_t *next = atomic_load_explicit(&t->next, memory_order_relaxed);
        t->run(t);
        t = next;
    }
    for (int n = 0; n < TASKS_PER_TURN; n++) {
        t = pc_task_queue_pop(&c->tasks);
        if (!t) {
            pc_task_queue_rearm(&c->tasks);
            t = pc_task_queue_pop(&c->tasks);
            if (!t)
                return c->local_head != NULL;
        }
        t->run(t);
    }
    return true;
}

/* Wake-ups coalesce, so take everything there is each time. Once destroy has begun, the
 * queue closes only when it has run dry: what callbacks post during the shutdown (a
 * flush, a free) still runs here, on the loop thread. */
static void on_wakeup(uv_async_t *h)
{
    pulsarc_client_t *c = h->data;
    bool more = run_tasks(c);
    if (more) {
        uv_async_send(&c->wakeup);
        return;
    }
    if (!c->rt.stopping)
        return;
    /* Empty as far as the loop can see; a push half done now finds the handle closing
     * (libuv waits for a uv_async_send in progress) and its task is run by destroy. */
    atomic_store(&c->tasks_closed, true);
    uv_close((uv_handle_t *)&c->wakeup, NULL);
}

static void loop_main(void *arg)
{
    pulsarc_client_t *c = arg;
    /* libuv writes with write()/writev(): a broker that resets the connection would
     * raise SIGPIPE and kill the application. Blocked on this thread, the write fails
     * with EPIPE instead and the connection is dropped like any other. */
    sigset_t pipe_set;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_set, NULL);
    uv_run(&c->loop, UV_RUN_DEFAULT);
}

/* The runtime context below client/ sees: the client's loop, logger and service URL, and
 * the limits from the configuration in the units net/ counts in. The connection settings
 * (rt.net) come before, the pool after. */
static void fill_runtime(pulsarc_client_t *c)
{
    const pulsarc_client_config_t *conf = &c->conf;
    c->rt.loop = &c->loop;
    c->rt.log = &c->log;
    c->rt.limits = (pc_limits_t){
        .operation_timeout_ms = (uint64_t)conf->operation_timeout_ms,
        .connection_timeout_ms = (uint64_t)conf->connection_timeout_ms,
        .keepalive_interval_ms = (uint64_t)conf->keepalive_interval_s * 1000u,
        .max_lookup_redirects = (int)conf->max_lookup_redirects,
        .http_auth_any_redirect = conf->http_lookup_auth_allow_redirect,
        .initial_backoff_ms = (uint64_t)conf->initial_backoff_ms,
        .max_backoff_ms = (uint64_t)conf->max_backoff_ms,
    };
    c->rt.service = &c->url;
    c->rt.next_host = 0;
    c->rt.next_request_id = 1;
    c->rt.next_producer_id = 1;
    c->rt.stopping = false;
    c->rt.clock = conf->clock;
    c->rt.transport = conf->transport;
}

/* An http(s):// service URL looks topics up over the admin REST API, with the same trust
 * and client certificate as the binary connections. NULL (detail set) on failure. */
static struct pc_http *lookup_http_new(pulsarc_client_t *c)
{
    const pulsarc_client_config_t *conf = &c->conf;
    pc_http_tls_t tls = {
        .trust_certs_file = conf->tls_trust_certs_file,
        .trust_certs_pem = conf->tls_trust_certs_pem,
        .cert_file = conf->tls_cert_file,
        .key_file = conf->tls_key_file,
        .cert_pem = conf->tls_cert_pem,
        .key_pem = conf->tls_key_pem,
        .protocols = conf->tls_protocols,
        .ciphers = conf->tls_ciphers,
        .allow_insecure = conf->tls_allow_insecure,
        .verify_hostname = conf->tls_hostname_verification,
    };
    return pc_http_new(&c->loop, &c->log, &tls);
}

pulsarc_result pulsarc_client_new(const char *service_url, const pulsarc_client_config_t *conf,
                                  pulsarc_client_t **out)
{
    if (!service_url || !out)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT, "service_url and out must not be NULL");
    *out = NULL;
    pulsarc_client_t *c = calloc(1, sizeof *c);
    if (!c)
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    char err[256];
    if (pc_service_url_parse(service_url, &c->url, err, sizeof err) != 0) {
        free(c);
        return pc_fail(PULSARC_ERR_INVALID_URL, "service URL \"%s\": %s", service_url, err);
    }
    if (!conf)
        pc_client_config_defaults(&c->conf);
    else if (pc_client_config_copy(&c->conf, conf) != 0) {
        pc_client_config_clear(&c->conf);
        free(c);
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    }
    /* Before authentication, which drops the client's copy of authParams: a failure here
     * leaves nothing to undo. */
    pulsarc_result net_rc = pc_client_config_net(&c->conf, &c->url, &c->rt.net);
    if (net_rc != PULSARC_OK) {
        pc_client_config_clear(&c->conf);
        free(c);
        return net_rc;
    }
    pulsarc_result auth_rc = pc_client_config_auth(&c->conf, &c->rt.auth);
    if (auth_rc != PULSARC_OK) {
        pc_client_config_clear(&c->conf);
        free(c);
        return auth_rc;
    }
    /* After authentication, which may name the client certificate (the tls plugin). */
    pulsarc_result tls_rc = pc_client_tls_new(&c->conf, &c->url, &c->rt.tls);
    if (tls_rc != PULSARC_OK) {
        pc_auth_free(c->rt.auth);
        pc_client_config_clear(&c->conf);
        free(c);
        return tls_rc;
    }
    c->log.cb = c->conf.log_cb ? c->conf.log_cb : pc_log_stderr;
    c->log.ctx = c->conf.log_cb ? c->conf.log_ctx : NULL;
    c->log.level = c->conf.log_level;
    pc_auth_warn_cleartext(c->rt.auth, c->url.tls, &c->log);
    atomic_init(&c->memory_used, 0);
    atomic_init(&c->admit_waiters, 0);

    if (uv_loop_init(&c->loop) != 0) {
        pc_auth_free(c->rt.auth);
        pc_client_tls_free(c->rt.tls);
        pc_client_config_clear(&c->conf);
        free(c);
        return pc_fail(PULSARC_ERR_NO_MEMORY, "cannot create the event loop");
    }
    pc_task_queue_init(&c->tasks);
    atomic_init(&c->tasks_closed, false);
    uv_mutex_init(&c->admit_mu);
    uv_cond_init(&c->admit_cond);
    pc_send_pool_init(&c->send_pool);
    uv_async_init(&c->loop, &c->wakeup, on_wakeup);
    c->wakeup.data = c;
    uv_check_init(&c->loop, &c->admit_check);
    c->admit_check.data = c;
    uv_check_start(&c->admit_check, on_admit_check);
    uv_unref((uv_handle_t *)&c->admit_check);
    fill_runtime(c);
    pulsarc_result http_rc = pc_client_auth_http(&c->conf, &c->rt, c->rt.auth);
    c->rt.pool = http_rc == PULSARC_OK ? pc_pool_new(&c->rt) : NULL;
    if (c->rt.pool && c->url.http && !(c->rt.http = lookup_http_new(c)))
        http_rc = PULSARC_ERR_NO_MEMORY;
    if (!c->rt.pool || http_rc != PULSARC_OK || uv_thread_create(&c->thread, loop_main, c) != 0) {
        pc_http_free(c->rt.http); /* like the provider's: closes in the uv_run below */
        pc_pool_free(c->rt.pool);
        pc_auth_use_http(c->rt.auth, NULL); /* its handles close in the uv_run below */
        pc_auth_free(c->rt.auth);
        pc_client_tls_free(c->rt.tls);
        uv_close((uv_handle_t *)&c->wakeup, NULL);
        uv_close((uv_handle_t *)&c->admit_check, NULL);
        uv_run(&c->loop, UV_RUN_DEFAULT);
        uv_loop_close(&c->loop);
        pc_client_config_clear(&c->conf);
        free(c);
        if (http_rc != PULSARC_OK)
            return http_rc;
        return pc_fail(PULSARC_ERR_NO_MEMORY, "cannot start the client thread");
    }
    *out = c;
    return PULSARC_OK;
}

typedef struct shutdown_task {
    pc_task_t task;
    pulsarc_client_t *client;
} shutdown_task;

/* Fail and close every producer and close the pool; the task queue closes once it is
 * empty (on_wakeup), then the loop runs dry. */
static void run_shutdown(pc_task_t *t)
{
    pulsarc_client_t *c = ((shutdown_task *)t)->client;
    c->rt.stopping = true;
    pc_shutdown_hook_t *h = c->shutdown_hooks;
    c->shutdown_hooks = NULL;
    while (h) {
        pc_shutdown_hook_t *next = h->next; /* a hook may free what holds it */
        h->run(h);
        h = next;
    }
    /* Releases wake waiting senders at once from now on (pc_client_admission_released). */
    uv_close((uv_handle_t *)&c->admit_check, NULL);
    if (c->admit_freed)
        wake_admission(c);
    c->admit_freed = false;
    pc_pool_close_all(c->rt.pool);
    /* Lookups still waiting on HTTP fail now; its handles close as the loop runs dry. */
    pc_http_free(c->rt.http);
    c->rt.http = NULL;
    /* With the connections gone, nobody waits for a token: the provider's HTTP client
     * closes its handles while the loop still runs. */
    pc_auth_use_http(c->rt.auth, NULL);
}

void pc_client_on_shutdown(pulsarc_client_t *c, pc_shutdown_hook_t *hook)
{
    hook->next = c->shutdown_hooks;
    c->shutdown_hooks = hook;
}

void pc_client_forget_shutdown(pulsarc_client_t *c, pc_shutdown_hook_t *hook)
{
    for (pc_shutdown_hook_t **at = &c->shutdown_hooks; *at; at = &(*at)->next) {
        if (*at == hook) {
            *at = hook->next;
            return;
        }
    }
}

/* Senders that the shutdown woke from admission still use its lock and counter: the
 * client may go only once the last of them has left (admit signals as it leaves). */
static void wait_admission_empty(pulsarc_client_t *c)
{
    uv_mutex_lock(&c->admit_mu);
    while (atomic_load(&c->admit_waiters) > 0)
        uv_cond_wait(&c->admit_cond, &c->admit_mu);
    uv_mutex_unlock(&c->admit_mu);
}

pulsarc_result pulsarc_client_destroy(pulsarc_client_t *c)
{
    if (!c)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT, "client must not be NULL");
    if (pc_client_on_loop(c))
        return pc_fail(PULSARC_ERR_WOULD_BLOCK, "pulsarc_client_destroy called from a callback");
    shutdown_task st = { .client = c };
    st.task.run = run_shutdown;
    pc_client_post(c, &st.task);
    uv_thread_join(&c->thread);
    /* Only a call that broke the rule that nothing may start during destroy can have left
     * a task after the queue closed; running it releases what it holds. */
    while (run_tasks(c))
        ;
    wait_admission_empty(c);
    pc_pool_free(c->rt.pool);
    pc_auth_free(c->rt.auth);
    pc_client_tls_free(c->rt.tls);
    uv_loop_close(&c->loop);
    uv_cond_destroy(&c->admit_cond);
    uv_mutex_destroy(&c->admit_mu);
    pc_send_pool_destroy(&c->send_pool); /* every send is released (admission is empty) */
    pc_client_config_clear(&c->conf);
    free(c);
    return PULSARC_OK;
}

uint64_t pulsarc_client_memory_used(const pulsarc_client_t *c)
{
    return c ? (uint64_t)atomic_load(&c->memory_used) : 0;
}
