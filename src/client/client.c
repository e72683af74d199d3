/* The client: creation (either mode), the hand-over to the loop thread, the close and
 * destroy, the service URL. How the loop runs is client_loop.c's.
 * @locality any thread, except where a function says loop thread. */
#include "client/client.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth/auth.h"
#include "common/error.h"
#include "common/timer.h"
#include "net/http.h"
#include "net/pool.h"
#include "pulsarc/pulsarc_uv.h" /* pulsarc_client_new_on_loop: declared exported there */

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
        if (first && !atomic_load(&c->tasks_closed)) {
            uv_async_send(&c->wakeup);
            pc_client_loop_hold(c);
        }
        return;
    }
    if (pc_task_queue_push(&c->tasks, task) && !atomic_load(&c->tasks_closed))
        uv_async_send(&c->wakeup);
}

void pc_client_post_in_order(pulsarc_client_t *c, pc_task_t *task)
{
    if (pc_task_queue_push(&c->tasks, task) && !atomic_load(&c->tasks_closed))
        uv_async_send(&c->wakeup);
}

pulsarc_result pc_client_may_block(const pulsarc_client_t *c, const char *call)
{
    if (!pc_client_on_loop(c))
        return PULSARC_OK;
    return pc_fail(PULSARC_ERR_WOULD_BLOCK,
                   "%s would wait for the loop it was called on (from "
                   "a callback, or on the application's loop): use the _async call",
                   call);
}

pulsarc_result pc_client_check_open(const pulsarc_client_t *c)
{
    if (atomic_load(&c->phase) != PC_CLIENT_OPEN)
        return pc_fail(PULSARC_ERR_ALREADY_CLOSED, "the client is closing");
    return PULSARC_OK;
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
        .lookup_timeout_ms = (uint64_t)(conf->lookup_timeout_ms ? conf->lookup_timeout_ms
                                                                : conf->operation_timeout_ms),
        .connection_timeout_ms = (uint64_t)conf->connection_timeout_ms,
        .keepalive_interval_ms = (uint64_t)conf->keepalive_interval_s * 1000u,
        .max_idle_ms = conf->connection_max_idle_s > 0
                           ? (uint64_t)conf->connection_max_idle_s * 1000u
                           : 0,
        .max_lookup_redirects = (int)conf->max_lookup_redirects,
        .http_auth_any_redirect = conf->http_lookup_auth_allow_redirect,
        .initial_backoff_ms = (uint64_t)conf->initial_backoff_ms,
        .max_backoff_ms = (uint64_t)conf->max_backoff_ms,
    };
    c->rt.next_host = 0; /* service, tls, auth, http: the provider installs them */
    c->rt.next_request_id = 1;
    c->rt.next_producer_id = 1;
    pc_freelist_init(&c->rt.op_blocks, PC_RUNTIME_OP_BLOCKS_MAX);
    c->rt.stopping = false;
    c->rt.clock = conf->clock;
    c->rt.transport = conf->transport;
}

/* Where the provider's checks and switches take their timing from. */
static void service_settings(const pulsarc_client_t *c, pc_service_settings_t *out)
{
    const pulsarc_client_config_t *conf = &c->conf;
    *out = (pc_service_settings_t){
        .check_interval_ms = (uint64_t)conf->failover_check_interval_ms,
        .failover_delay_ms = (uint64_t)conf->failover_delay_ms,
        .switch_back_delay_ms = (uint64_t)conf->switch_back_delay_ms,
        .probe_timeout_ms = (uint64_t)conf->connection_timeout_ms,
        .ask = conf->service_url_provider,
        .ask_ctx = conf->service_url_provider_ctx,
        .own_tls = c->clusters.own_tls,
    };
}

/* The configuration phase: the copy of conf, the service URL and the connection settings,
 * the clusters with their credentials and TLS, the logger. Nothing runs yet; on failure
 * the caller frees the configuration (and the clusters, built or not). */
static pulsarc_result configure(pulsarc_client_t *c, const char *service_url,
                                const pulsarc_client_config_t *conf)
{
    if (!conf)
        pc_client_config_defaults(&c->conf);
    else if (pc_client_config_copy(&c->conf, conf) != 0)
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    pc_service_url_t url;
    char err[256];
    if (pc_service_url_parse(service_url, &url, err, sizeof err) != 0)
        return pc_fail(PULSARC_ERR_INVALID_URL, "service URL \"%s\": %s", service_url, err);
    /* Before authentication, which drops the client's copy of authParams. */
    pulsarc_result res = pc_client_config_net(&c->conf, &url, &c->rt.net);
    if (res == PULSARC_OK)
        res = pc_client_clusters_build(&c->conf, service_url, &c->clusters);
    for (int i = 1; res == PULSARC_OK && i < c->clusters.n && c->rt.net.sni_proxy; i++)
        if (!c->clusters.list[i].service.tls)
            res = pc_fail(PULSARC_ERR_INVALID_CONFIG,
                          "an SNI proxy (proxyServiceUrl) needs "
                          "TLS: failover cluster %.200s is not pulsar+ssl:// or https://",
                          c->clusters.list[i].url);
    if (res != PULSARC_OK)
        return res;
    c->log.cb = c->conf.log_cb ? c->conf.log_cb : pc_log_stderr;
    c->log.ctx = c->conf.log_cb ? c->conf.log_ctx : NULL;
    c->log.level = c->conf.log_level;
    pc_client_clusters_warn(&c->clusters, &c->log);
    return PULSARC_OK;
}

/* The loop's handles and what lives on them: the wake-up, admission, the statistics, the
 * pool, the service provider (which installs the first cluster: its HTTP client for an
 * http(s):// URL, the failover checks). PULSARC_OK or the first failure. */
static pulsarc_result open_loop_parts(pulsarc_client_t *c)
{
    pc_task_queue_init(&c->tasks);
    atomic_init(&c->tasks_closed, false);
    atomic_init(&c->phase, PC_CLIENT_OPEN);
    pc_waiter_init(&c->closed);
    pc_block_pool_init(&c->blocks);
    pc_block_pool_set_loop_thread(&c->blocks, &c->thread);
    uv_async_init(&c->loop, &c->wakeup, on_wakeup);
    c->wakeup.data = c;
    pc_admission_init(&c->admission, &c->loop, &c->thread, c->conf.memory_limit_bytes);
    fill_runtime(c);
    pulsarc_result res = pc_client_clusters_use_http(&c->clusters, &c->conf, &c->rt);
    if (res != PULSARC_OK)
        return res;
    if (pc_client_stats_init(&c->stats, &c->rt, &c->admission,
                             (uint64_t)c->conf.stats_interval_s * 1000u, c->conf.stats_cb,
                             c->conf.stats_ctx) != 0 ||
        !(c->rt.pool = pc_pool_new(&c->rt)))
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    pc_service_settings_t settings;
    service_settings(c, &settings);
    if (!(c->services = pc_service_provider_new(&c->rt, c->clusters.list, c->clusters.n,
                                                &settings)))
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    if (c->clusters.list[0].service.http && !c->rt.http) {
        /* No libcurl (pc_http_new loads it): say which library and why, else memory. */
        char detail[600];
        snprintf(detail, sizeof detail, "%s", pulsarc_last_error_detail());
        pulsarc_result why = pc_http_unavailable();
        return why != PULSARC_OK ? pc_fail(why, "the service URL %s needs HTTP: %s",
                                           c->clusters.list[0].url, detail)
                                 : pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    }
    return PULSARC_OK;
}

/* Undo open_loop_parts (whatever of it was done) and the loop. */
static void close_loop_parts(pulsarc_client_t *c)
{
    pc_service_provider_stop(c->services); /* its timer closes in the uv_run below */
    pc_http_free(c->rt.http);              /* like the providers': closes in the uv_run below */
    pc_pool_free(c->rt.pool);
    pc_client_clusters_detach_http(&c->clusters); /* handles close in the uv_run below */
    pc_client_stats_stop(&c->stats);
    uv_close((uv_handle_t *)&c->wakeup, NULL);
    pc_admission_stop_deferring(&c->admission);
    /* The client's own loop, never the application's: only close callbacks run. */
    uv_run(&c->loop, UV_RUN_DEFAULT);
    pc_admission_destroy(&c->admission);
    uv_loop_close(&c->loop);
    pc_freelist_drain(&c->rt.op_blocks);
    pc_waiter_destroy(&c->closed);
}

/* Both modes: app is the application's loop (pulsarc_client_new_on_loop), or NULL for a
 * thread of the client's own. */
static pulsarc_result client_new(uv_loop_t *app, const char *service_url,
                                 const pulsarc_client_config_t *conf, pulsarc_client_t **out)
{
    if (!service_url || !out)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT, "service_url and out must not be NULL");
    *out = NULL;
    pulsarc_client_t *c = calloc(1, sizeof *c);
    if (!c)
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    c->loop_dry = pc_client_closed;
    pulsarc_result res = configure(c, service_url, conf);
    if (res == PULSARC_OK && uv_loop_init(&c->loop) != 0)
        res = pc_fail(PULSARC_ERR_NO_MEMORY, "cannot create the event loop");
    else if (res == PULSARC_OK) {
        res = open_loop_parts(c);
        /* The loop starts last: until then nothing but this thread knows the client. */
        if (res == PULSARC_OK)
            res = pc_client_loop_start(c, app);
        if (res != PULSARC_OK) {
            char detail[512]; /* what failed: the clean-up may set details of its own */
            snprintf(detail, sizeof detail, "%s", pulsarc_last_error_detail());
            close_loop_parts(c);
            res = pc_fail(res, "%s", detail);
        }
    }
    if (res != PULSARC_OK) {
        pc_client_clusters_free(&c->clusters);
        pc_client_config_clear(&c->conf);
        free(c);
        return res;
    }
    *out = c;
    return PULSARC_OK;
}

pulsarc_result pulsarc_client_new(const char *service_url, const pulsarc_client_config_t *conf,
                                  pulsarc_client_t **out)
{
    return client_new(NULL, service_url, conf, out);
}

pulsarc_result pulsarc_client_new_on_loop(uv_loop_t *loop, const char *service_url,
                                          const pulsarc_client_config_t *conf,
                                          pulsarc_client_t **out)
{
    if (out)
        *out = NULL;
    if (!loop)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT, "loop must not be NULL");
    return client_new(loop, service_url, conf, out);
}

/* Fail and close every producer and close the pool; the task queue closes once it is
 * empty (on_wakeup), then the loop runs dry and the close is done (pc_client_closed). */
static void run_shutdown(pc_task_t *t)
{
    pulsarc_client_t *c = (pulsarc_client_t *)((char *)t - offsetof(pulsarc_client_t, close_task));
    c->rt.stopping = true;
    /* No switch from now on: the checks stop before anything else closes. */
    pc_service_provider_stop(c->services);
    c->services = NULL;
    pc_client_stats_stop(&c->stats);
    /* Releases wake waiting senders at once from now on. */
    pc_admission_stop_deferring(&c->admission);
    pc_shutdown_hook_t *h = c->shutdown_hooks;
    c->shutdown_hooks = NULL;
    while (h) {
        pc_shutdown_hook_t *next = h->next; /* a hook may free what holds it */
        h->run(h);
        h = next;
    }
    pc_pool_close_all(c->rt.pool);
    /* Lookups still waiting on HTTP fail now; its handles close as the loop runs dry. */
    pc_http_free(c->rt.http);
    c->rt.http = NULL;
    /* With the connections gone, nobody waits for a token: the providers' HTTP clients
     * close their handles while the loop still runs. */
    pc_client_clusters_detach_http(&c->clusters);
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

/* The first of close_async and destroy starts the close; false for the others. */
static bool begin_close(pulsarc_client_t *c, pulsarc_client_done_cb cb, void *ctx)
{
    int open = PC_CLIENT_OPEN;
    if (!atomic_compare_exchange_strong(&c->phase, &open, PC_CLIENT_CLOSING))
        return false;
    c->close_cb = cb; /* the loop thread reads them after the task, so after this */
    c->close_ctx = ctx;
    c->close_task.run = run_shutdown;
    pc_client_post(c, &c->close_task);
    return true;
}

pulsarc_result pulsarc_client_close_async(pulsarc_client_t *c, pulsarc_client_done_cb cb, void *ctx)
{
    if (!c)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT, "client must not be NULL");
    if (!begin_close(c, cb, ctx))
        return pc_fail(PULSARC_ERR_ALREADY_CLOSED, "the client is closing or closed already");
    return PULSARC_OK;
}

/* Everything the client still holds, once its loop is done. */
static void client_free(pulsarc_client_t *c)
{
    /* Only a call that broke the rule that nothing may start during destroy can have left
     * a task after the queue closed; running it releases what it holds. */
    while (run_tasks(c))
        ;
    /* Senders that the shutdown woke still use admission's lock and counter. */
    pc_admission_wait_empty(&c->admission);
    pc_pool_free(c->rt.pool);
    pc_client_clusters_free(&c->clusters);
    uv_loop_close(&c->loop);
    pc_admission_destroy(&c->admission);
    pc_block_pool_destroy(&c->blocks);   /* every send is released (admission is empty) */
    pc_freelist_drain(&c->rt.op_blocks); /* every op is freed: no write is left */
    pc_waiter_destroy(&c->closed);
    pc_client_config_clear(&c->conf);
    free(c);
}

bool pc_client_closed(pulsarc_client_t *c)
{
    atomic_store(&c->phase, PC_CLIENT_CLOSED);
    if (c->close_cb) {
        c->in_close_cb = true;
        c->close_cb(c, PULSARC_OK, c->close_ctx);
        c->in_close_cb = false;
    }
    if (c->free_after_close_cb) {
        client_free(c);
        return true;
    }
    /* The last touch: a destroy waiting on another thread frees the client now. */
    pc_waiter_signal(&c->closed, PULSARC_OK, NULL);
    return false;
}

pulsarc_result pulsarc_client_destroy(pulsarc_client_t *c)
{
    if (!c)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT, "client must not be NULL");
    if (pc_client_on_loop(c)) {
        /* The close is done: nothing is left to wait for. In its callback, the client goes
         * once the callback has returned. */
        if (c->in_close_cb) {
            c->free_after_close_cb = true;
            return PULSARC_OK;
        }
        if (atomic_load(&c->phase) == PC_CLIENT_CLOSED) {
            client_free(c);
            return PULSARC_OK;
        }
        return pc_fail(PULSARC_ERR_WOULD_BLOCK,
                       "pulsarc_client_destroy would wait for the loop "
                       "it was called on: close the client with pulsarc_client_close_async and "
                       "destroy it in (or after) its callback");
    }
    begin_close(c, NULL, NULL);
    pc_waiter_wait(&c->closed);
    pc_client_loop_join(c);
    client_free(c);
    return PULSARC_OK;
}

uint64_t pulsarc_client_memory_used(const pulsarc_client_t *c)
{
    return c ? (uint64_t)atomic_load(&c->admission.memory_used) : 0;
}

/* ---- the service URL, changed by the application ---------------------------------- */

typedef struct url_task {
    pc_task_t task;
    pulsarc_client_t *client;
    struct pc_tls_ctx *tls; /* the client's own, for a pulsar+ssl:// URL; NULL otherwise */
    char url[];
} url_task;

static void run_update_url(pc_task_t *t)
{
    url_task *u = (url_task *)t;
    pulsarc_client_t *c = u->client;
    /* Destroy has begun (this may even run after the loop has stopped): nothing to do. */
    if (!c->rt.stopping && c->services &&
        pc_service_provider_use_url(c->services, u->url, u->tls) != PULSARC_OK)
        PC_WARN(&c->log, "the service URL %s is not used: %s", u->url, pulsarc_last_error_detail());
    free(u);
}

pulsarc_result pulsarc_client_update_service_url(pulsarc_client_t *c, const char *url)
{
    if (!c || !url)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT, "client and service URL must not be NULL");
    if (c->clusters.n > 1 || c->conf.service_url_provider)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT,
                       "this client switches clusters by itself "
                       "(failover clusters or a service URL provider)");
    pc_service_url_t parsed;
    char err[256];
    if (pc_service_url_parse(url, &parsed, err, sizeof err) != 0)
        return pc_fail(PULSARC_ERR_INVALID_URL, "service URL \"%.200s\": %s", url, err);
    if (c->rt.net.sni_proxy && !parsed.tls)
        return pc_fail(PULSARC_ERR_INVALID_URL,
                       "service URL \"%.200s\": the SNI proxy "
                       "(proxyServiceUrl) needs pulsar+ssl:// or https://",
                       url);
    struct pc_tls_ctx *tls = NULL;
    if (parsed.tls) {
        pulsarc_result r = pc_client_clusters_own_tls(&c->clusters, &c->conf, &tls);
        if (r != PULSARC_OK)
            return r;
    }
    size_t len = strlen(url);
    url_task *u = malloc(sizeof *u + len + 1);
    if (!u)
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    memcpy(u->url, url, len + 1);
    u->client = c;
    u->tls = tls;
    u->task.run = run_update_url;
    pc_client_post(c, &u->task);
    return PULSARC_OK;
}
