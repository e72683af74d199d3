/* What the test drivers share: see driver.h. */
#include "driver.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <uv.h>

int drv_fail(const char *what, pulsarc_result res)
{
    fprintf(stderr, "%s: %s (%s)\n", what, pulsarc_strerror(res), pulsarc_last_error_detail());
    return 1;
}

void drv_message_failed(long index, pulsarc_result res)
{
    fprintf(stderr, "message %ld failed: %s (%s)\n", index, pulsarc_strerror(res),
            pulsarc_last_error_detail());
}

void drv_send_numbered(pulsarc_producer_t *p, pulsarc_message_t *msg, const char *prefix, long i,
                       drv_tally_t *t)
{
    char payload[128];
    int n = snprintf(payload, sizeof payload, "%s%ld", prefix, i);
    pulsarc_message_clear(msg);
    pulsarc_message_set_payload(msg, payload, (size_t)n);
    pulsarc_result res = pulsarc_producer_send(p, msg, NULL);
    if (res == PULSARC_OK) {
        t->sent++;
        return;
    }
    t->failed++;
    if (t->first_error == PULSARC_OK)
        t->first_error = res;
    drv_message_failed(i, res);
}

bool drv_setting(const char *opt, const char *value, pulsarc_client_config_t *cc,
                 pulsarc_producer_config_t *pc)
{
    bool conf = pc && !strcmp(opt, "--conf"), client_conf = cc && !strcmp(opt, "--client-conf"),
         encrypt = pc && !strcmp(opt, "--encrypt");
    if (!conf && !client_conf && !encrypt)
        return false;
    char kv[4096]; /* authParams with paths run long */
    snprintf(kv, sizeof kv, "%s", value);
    char *eq = strchr(kv, '=');
    if (!eq) {
        fprintf(stderr, "bad %s: no KEY=VALUE\n", opt);
        exit(2);
    }
    *eq = '\0';
    pulsarc_result r = conf ? pulsarc_producer_config_set(pc, kv, eq + 1)
                       : client_conf
                           ? pulsarc_client_config_set(cc, kv, eq + 1)
                           : pulsarc_producer_config_add_encryption_key_file(pc, kv, eq + 1);
    if (r != PULSARC_OK) {
        fprintf(stderr, "bad %s %s: %s\n", opt, kv, pulsarc_last_error_detail());
        exit(2);
    }
    return true;
}

pulsarc_client_t *drv_client(const char *url, pulsarc_client_config_t *cc)
{
    pulsarc_client_t *client = NULL;
    pulsarc_result r = pulsarc_client_new(url, cc, &client);
    pulsarc_client_config_free(cc);
    if (r != PULSARC_OK)
        exit(drv_fail("client", r));
    return client;
}

/* An async create, waited for. */
typedef struct creation {
    uv_mutex_t mu;
    uv_cond_t cond;
    bool done;
    pulsarc_result res;
    pulsarc_producer_t *producer;
    char detail[1024]; /* the callback's pulsarc_last_error_detail(), for the caller */
} creation;

static void on_created(pulsarc_client_t *c, pulsarc_result res, pulsarc_producer_t *p, void *ctx)
{
    creation *cr = ctx;
    uv_mutex_lock(&cr->mu);
    cr->res = res;
    cr->producer = p;
    snprintf(cr->detail, sizeof cr->detail, "%s", pulsarc_last_error_detail());
    cr->done = true;
    uv_cond_signal(&cr->cond);
    uv_mutex_unlock(&cr->mu);
}

static pulsarc_result create_async(pulsarc_client_t *client, const char *topic,
                                   const pulsarc_producer_config_t *pc, pulsarc_producer_t **out)
{
    creation cr = { .done = false };
    uv_mutex_init(&cr.mu);
    uv_cond_init(&cr.cond);
    pulsarc_result r = pulsarc_client_create_producer_async(client, topic, pc, on_created, &cr);
    uv_mutex_lock(&cr.mu);
    while (r == PULSARC_OK && !cr.done)
        uv_cond_wait(&cr.cond, &cr.mu);
    uv_mutex_unlock(&cr.mu);
    uv_cond_destroy(&cr.cond);
    uv_mutex_destroy(&cr.mu);
    if (r != PULSARC_OK)
        return r;
    if (cr.res != PULSARC_OK)
        fprintf(stderr, "async create: %s\n", cr.detail);
    *out = cr.producer;
    return cr.res;
}

pulsarc_result drv_create_producer(pulsarc_client_t *client, const char *topic,
                                   pulsarc_producer_config_t *pc, bool async,
                                   pulsarc_producer_t **out)
{
    pulsarc_result r = async ? create_async(client, topic, pc, out)
                             : pulsarc_client_create_producer(client, topic, pc, out);
    pulsarc_producer_config_free(pc);
    return r;
}

pulsarc_producer_t *drv_producer(pulsarc_client_t *client, const char *topic,
                                 pulsarc_producer_config_t *pc)
{
    pulsarc_producer_t *producer = NULL;
    pulsarc_result r = drv_create_producer(client, topic, pc, false, &producer);
    if (r != PULSARC_OK) {
        drv_fail("create producer", r);
        pulsarc_client_destroy(client);
        exit(1);
    }
    return producer;
}

double drv_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void drv_pause_ms(long ms)
{
    struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

void drv_pace(double t0, long i, double rate)
{
    while (rate > 0 && drv_now_s() - t0 < (double)i / rate)
        drv_pause_ms(1);
}
