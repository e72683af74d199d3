#include "perf_producers.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "perf_admin.h"

int perf_create_partitioned_topics(const char *admin_url, char *const *topics, uint32_t n,
                                   int partitions)
{
    uint32_t created = 0, existed = 0;
    for (uint32_t i = 0; i < n; i++) {
        const char *topic = topics[i];
        char err[1024];
        perf_admin_outcome_t r = perf_admin_create_partitioned(admin_url, topic, partitions, err,
                                                               sizeof err);
        if (r == PERF_ADMIN_FAILED) {
            fprintf(stderr, "creating %s with %d partitions: %s\n", topic, partitions, err);
            return -1;
        }
        if (r == PERF_ADMIN_CREATED)
            created++;
        else
            existed++;
    }
    printf("  partitioned topics (%d partitions) via %s: %u created, %u already there\n",
           partitions, admin_url, created, existed);
    fflush(stdout);
    return 0;
}

/* ---- creation by several threads ------------------------------------------------------ */

typedef struct creation {
    pulsarc_client_t *client;
    const pulsarc_producer_config_t *conf;
    perf_conf_fn per_producer;
    void *per_producer_ctx;
    char *const *topics;
    uint32_t n_topics, per_topic;
    const volatile sig_atomic_t *stop;
    perf_error_fn err;
    pulsarc_producer_t **v;
    size_t n;
    atomic_size_t next; /* the next producer to create */
    atomic_bool failed;
    pthread_mutex_t err_mu; /* one report at a time */
} creation_t;

static void *create_some(void *arg)
{
    creation_t *c = arg;
    while (!atomic_load(&c->failed) && !*c->stop) {
        size_t i = atomic_fetch_add(&c->next, 1);
        if (i >= c->n)
            break;
        const char *topic = c->topics[i / c->per_topic];
        pulsarc_producer_config_t *own = c->per_producer ? c->per_producer(i, c->per_producer_ctx)
                                                         : NULL;
        pulsarc_result res = PULSARC_ERR_INVALID_CONFIG;
        if (own || !c->per_producer)
            res = pulsarc_client_create_producer(c->client, topic, own ? own : c->conf, &c->v[i]);
        pulsarc_producer_config_free(own);
        if (res != PULSARC_OK) {
            c->v[i] = NULL;
            pthread_mutex_lock(&c->err_mu);
            if (!atomic_exchange(&c->failed, true)) {
                char what[600];
                snprintf(what, sizeof what, "create producer on %s", topic);
                c->err(what, res);
            }
            pthread_mutex_unlock(&c->err_mu);
            break;
        }
    }
    return NULL;
}

int perf_create_producers(pulsarc_client_t *client, const pulsarc_producer_config_t *conf,
                          perf_conf_fn per_producer, void *per_producer_ctx, char *const *topics,
                          uint32_t n, uint32_t per_topic, int threads,
                          const volatile sig_atomic_t *stop, perf_error_fn err, producer_set_t *out)
{
    creation_t c = { .client = client,
                     .conf = conf,
                     .per_producer = per_producer,
                     .per_producer_ctx = per_producer_ctx,
                     .topics = topics,
                     .n_topics = n,
                     .per_topic = per_topic,
                     .stop = stop,
                     .err = err,
                     .n = (size_t)n * per_topic };
    out->v = NULL;
    out->n = 0;
    c.v = calloc(c.n, sizeof *c.v);
    if (!c.v) {
        fprintf(stderr, "out of memory\n");
        return -1;
    }
    atomic_init(&c.next, 0);
    atomic_init(&c.failed, false);
    pthread_mutex_init(&c.err_mu, NULL);
    size_t extra = (size_t)(threads > 1 ? threads - 1 : 0);
    if (extra > c.n - 1)
        extra = c.n - 1;
    pthread_t tids[64];
    if (extra > sizeof tids / sizeof tids[0])
        extra = sizeof tids / sizeof tids[0];
    size_t started = 0;
    while (started < extra && pthread_create(&tids[started], NULL, create_some, &c) == 0)
        started++;
    create_some(&c); /* this thread is one of them */
    for (size_t i = 0; i < started; i++)
        pthread_join(tids[i], NULL);
    pthread_mutex_destroy(&c.err_mu);
    /* Stopped or failed part way: whatever was created goes again. */
    bool complete = !atomic_load(&c.failed) && atomic_load(&c.next) >= c.n;
    for (size_t i = 0; i < c.n && complete; i++)
        complete = c.v[i] != NULL;
    if (!complete) {
        for (size_t i = 0; i < c.n; i++)
            pulsarc_producer_free(c.v[i]);
        free(c.v);
        return -1;
    }
    out->v = c.v;
    out->n = c.n;
    return 0;
}

uint64_t perf_pending(const producer_set_t *ps)
{
    uint64_t n = 0;
    for (size_t i = 0; i < ps->n; i++)
        n += pulsarc_producer_pending_count(ps->v[i]);
    return n;
}

pulsarc_result perf_flush_all(const producer_set_t *ps, perf_error_fn err)
{
    pulsarc_result first = PULSARC_OK;
    for (size_t i = 0; i < ps->n; i++) {
        pulsarc_result res = pulsarc_producer_flush(ps->v[i]);
        if (res != PULSARC_OK && first == PULSARC_OK) {
            err("flush", res);
            first = res;
        }
    }
    return first;
}

/* ---- closing all at once -------------------------------------------------------------- */

typedef struct closing {
    pthread_mutex_t mu;
    pthread_cond_t cond;
    size_t left;
    perf_error_fn err;
} closing_t;

/* On the client's loop thread, once per producer. */
static void on_closed(pulsarc_producer_t *producer, pulsarc_result res, void *ctx)
{
    (void)producer;
    closing_t *c = ctx;
    pthread_mutex_lock(&c->mu);
    if (res != PULSARC_OK)
        c->err("close", res);
    if (--c->left == 0)
        pthread_cond_signal(&c->cond);
    pthread_mutex_unlock(&c->mu);
}

void perf_close_all(producer_set_t *ps, perf_error_fn err)
{
    closing_t c = { .left = ps->n, .err = err };
    pthread_mutex_init(&c.mu, NULL);
    pthread_cond_init(&c.cond, NULL);
    for (size_t i = 0; i < ps->n; i++) {
        pulsarc_result res = pulsarc_producer_close_async(ps->v[i], on_closed, &c);
        if (res != PULSARC_OK) {
            pthread_mutex_lock(&c.mu);
            err("close", res);
            c.left--;
            pthread_mutex_unlock(&c.mu);
        }
    }
    pthread_mutex_lock(&c.mu);
    while (c.left > 0)
        pthread_cond_wait(&c.cond, &c.mu);
    pthread_mutex_unlock(&c.mu);
    pthread_cond_destroy(&c.cond);
    pthread_mutex_destroy(&c.mu);
    for (size_t i = 0; i < ps->n; i++)
        pulsarc_producer_free(ps->v[i]);
    free(ps->v);
    ps->v = NULL;
    ps->n = 0;
}
