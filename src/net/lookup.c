#include "net/lookup.h"

#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "net/connection.h"
#include "net/lookup_http.h"
#include "net/lookup_listener.h"
#include "net/pool.h"

/* One lookup in flight. It follows redirects, each to the broker named in the answer,
 * until a Connect answer, a failure, or the redirect limit. */
typedef struct lookup {
    pc_runtime_t *rt;
    char *topic;
    bool authoritative;
    int redirects;
    pc_host_port_t service;  /* the service URL host this lookup started from */
    pc_host_port_t target;   /* where the current request goes */
    int hosts_tried;         /* service URL hosts this lookup has started from */
    pc_lookup_reply_t reply; /* who hears the answer (and which kind of lookup) */
    pc_service_url_t *moved; /* the cluster a migrated topic moved to (a copy); NULL: rt's */
} lookup_t;

/* The service URL this lookup starts from: the client's active cluster's, or the one a
 * topic migration named. */
static const pc_service_url_t *service_of(const lookup_t *lk)
{
    return lk->moved ? lk->moved : lk->rt->service;
}

/* The next host to start from: round-robin over the client's service URL, in order over a
 * migration's. */
static pc_host_port_t next_host(lookup_t *lk)
{
    if (!lk->moved)
        return pc_next_service_host(lk->rt);
    return lk->moved->hosts[lk->hosts_tried % lk->moved->n_hosts];
}

static void send_request(lookup_t *lk);

/* A service host that cannot be reached is not the topic's fault: try the next host of
 * the service URL before giving up, once each. */
static bool fail_over(lookup_t *lk, pulsarc_result res)
{
    pc_runtime_t *rt = lk->rt;
    if ((res != PULSARC_ERR_CONNECT_FAILED && res != PULSARC_ERR_CONNECTION_CLOSED) ||
        lk->hosts_tried >= service_of(lk)->n_hosts || rt->stopping)
        return false;
    PC_INFO(rt->log, "lookup of %s via %s:%d failed (%s); trying the next service host", lk->topic,
            lk->service.host, lk->service.port, pulsarc_last_error_detail());
    lk->service = next_host(lk);
    lk->hosts_tried++;
    lk->target = lk->service;
    lk->redirects = 0;
    lk->authoritative = false;
    send_request(lk);
    return true;
}

static void finish(lookup_t *lk, pulsarc_result res, const pc_host_port_t *logical,
                   const pc_host_port_t *physical, int partitions)
{
    if (res != PULSARC_OK && fail_over(lk, res))
        return;
    pc_lookup_answer(&lk->reply, res, logical, physical, partitions);
    free(lk->moved);
    free(lk->topic);
    free(lk);
}

/* The broker an answer names: its TLS address on a TLS client (brokerServiceUrlTls, a
 * pulsar+ssl:// URL), its plain one otherwise. A TLS client never falls back to plain
 * text. Returns 0, or -1 with the detail set. */
static int answer_broker(const lookup_t *lk, const Pulsar__Proto__CommandLookupTopicResponse *m,
                         pc_host_port_t *broker)
{
    bool want_tls = service_of(lk)->tls;
    const char *url = want_tls ? m->brokerserviceurltls : m->brokerserviceurl;
    bool tls = false;
    if (want_tls && (!url || !*url)) {
        pc_fail(PULSARC_ERR_PROTOCOL,
                "the lookup answer for %s gives no TLS address "
                "(brokerServiceUrlTls) though the service URL is pulsar+ssl://: is "
                "brokerServicePortTls set on the broker?",
                lk->topic);
        return -1;
    }
    if (!url || pc_broker_url_parse(url, broker, &tls) != 0 || tls != want_tls) {
        pc_fail(PULSARC_ERR_PROTOCOL, "lookup answered with a bad broker URL \"%s\"%s",
                url ? url : "", want_tls && !tls ? " (expected pulsar+ssl://)" : "");
        return -1;
    }
    return 0;
}

static void on_lookup_answer(pc_conn_t *conn, pulsarc_result res,
                             const Pulsar__Proto__BaseCommand *resp, void *ctx)
{
    lookup_t *lk = ctx;
    if (res != PULSARC_OK) {
        finish(lk, res, NULL, NULL, 0);
        return;
    }
    if (lk->reply.partitions) {
        const Pulsar__Proto__CommandPartitionedTopicMetadataResponse
            *m = resp->partitionmetadataresponse;
        if (!m) {
            pc_set_detail("PARTITIONED_METADATA answered with the wrong command");
            finish(lk, PULSARC_ERR_PROTOCOL, NULL, NULL, 0);
        } else if (
            m->has_response &&
            m->response ==
                PULSAR__PROTO__COMMAND_PARTITIONED_TOPIC_METADATA_RESPONSE__LOOKUP_TYPE__Failed) {
            pc_set_detail(m->message);
            finish(lk,
                   m->has_error ? pc_result_from_server_error(m->error)
                                : PULSARC_ERR_BROKER_UNKNOWN,
                   NULL, NULL, 0);
        } else if (m->partitions > PC_MAX_PARTITIONS) {
            /* Each partition costs a producer: a count no real topic has is an error in
             * the answer, not a reason to allocate millions of them. */
            pc_fail(PULSARC_ERR_PROTOCOL, "partition metadata claims %u partitions (at most %d)",
                    m->partitions, PC_MAX_PARTITIONS);
            finish(lk, PULSARC_ERR_PROTOCOL, NULL, NULL, 0);
        } else {
            finish(lk, PULSARC_OK, NULL, NULL, (int)m->partitions);
        }
        return;
    }
    const Pulsar__Proto__CommandLookupTopicResponse *m = resp->lookuptopicresponse;
    if (!m) {
        pc_set_detail("LOOKUP answered with the wrong command");
        finish(lk, PULSARC_ERR_PROTOCOL, NULL, NULL, 0);
        return;
    }
    if (m->response == PULSAR__PROTO__COMMAND_LOOKUP_TOPIC_RESPONSE__LOOKUP_TYPE__Failed) {
        if (m->message && pc_lookup_no_such_listener(lk->rt, m->message, strlen(m->message))) {
            finish(lk, pc_lookup_listener_missing(lk->rt, &lk->target), NULL, NULL, 0);
            return;
        }
        pc_set_detail(m->message);
        finish(lk,
               m->has_error ? pc_result_from_server_error(m->error) : PULSARC_ERR_BROKER_UNKNOWN,
               NULL, NULL, 0);
        return;
    }
    pc_host_port_t broker;
    if (answer_broker(lk, m, &broker) != 0) {
        finish(lk, PULSARC_ERR_PROTOCOL, NULL, NULL, 0);
        return;
    }
    bool proxied = m->has_proxy_through_service_url && m->proxy_through_service_url;
    bool redirect = m->response ==
                    PULSAR__PROTO__COMMAND_LOOKUP_TOPIC_RESPONSE__LOOKUP_TYPE__Redirect;
    PC_DEBUG(lk->rt->log, "lookup of %s via %s:%d: %s %s:%d%s%s", lk->topic, lk->target.host,
             lk->target.port, redirect ? "redirect to" : "connect to", broker.host, broker.port,
             m->has_authoritative && m->authoritative ? " (authoritative)" : "",
             proxied ? " through the service URL" : "");
    if (redirect) {
        if (++lk->redirects > lk->rt->limits.max_lookup_redirects) {
            pc_fail(PULSARC_ERR_TOO_MANY_REDIRECTS, "lookup of %s redirected more than %d times",
                    lk->topic, lk->rt->limits.max_lookup_redirects);
            finish(lk, PULSARC_ERR_TOO_MANY_REDIRECTS, NULL, NULL, 0);
            return;
        }
        lk->authoritative = m->has_authoritative && m->authoritative;
        /* Through a proxy the next question still goes to the service URL. */
        lk->target = proxied ? lk->service : broker;
        send_request(lk);
        return;
    }
    const pc_host_port_t *physical = proxied ? &lk->service : &broker;
    finish(lk, PULSARC_OK, &broker, physical, 0);
}

static void on_conn_ready(pc_conn_t *conn, pulsarc_result res, void *ctx)
{
    lookup_t *lk = ctx;
    if (res != PULSARC_OK) {
        finish(lk, res, NULL, NULL, 0);
        return;
    }
    Pulsar__Proto__BaseCommand cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    Pulsar__Proto__CommandLookupTopic lookup = PULSAR__PROTO__COMMAND_LOOKUP_TOPIC__INIT;
    Pulsar__Proto__CommandPartitionedTopicMetadata meta =
        PULSAR__PROTO__COMMAND_PARTITIONED_TOPIC_METADATA__INIT;
    uint64_t rid = pc_conn_new_request_id(conn);
    if (lk->reply.partitions) {
        meta.topic = lk->topic;
        meta.request_id = rid;
        cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__PARTITIONED_METADATA;
        cmd.partitionmetadata = &meta;
    } else {
        lookup.topic = lk->topic;
        lookup.request_id = rid;
        lookup.has_authoritative = 1;
        lookup.authoritative = lk->authoritative;
        /* The broker answers with that listener's addresses (advertisedListeners). */
        lookup.advertised_listener_name = (char *)lk->rt->net.listener_name;
        cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__LOOKUP;
        cmd.lookuptopic = &lookup;
    }
    pc_conn_request(conn, &cmd, rid, on_lookup_answer, lk);
}

static void send_request(lookup_t *lk)
{
    pc_conn_t *conn = pc_pool_get_any(lk->rt->pool, &lk->target, &lk->target);
    if (!conn) {
        pc_set_detail("out of memory");
        finish(lk, PULSARC_ERR_NO_MEMORY, NULL, NULL, 0);
        return;
    }
    pc_conn_when_ready(conn, on_conn_ready, lk);
}

static void start(pc_runtime_t *rt, const pc_service_url_t *moved, const char *topic,
                  const pc_lookup_reply_t *reply)
{
    lookup_t *lk = calloc(1, sizeof *lk);
    char *t = strdup(topic);
    pc_service_url_t *m = moved ? malloc(sizeof *m) : NULL;
    if (!lk || !t || (moved && !m)) {
        free(lk);
        free(t);
        free(m);
        pc_set_detail("out of memory");
        pc_lookup_answer(reply, PULSARC_ERR_NO_MEMORY, NULL, NULL, 0);
        return;
    }
    if (m)
        *m = *moved;
    lk->rt = rt;
    lk->topic = t;
    lk->reply = *reply;
    lk->moved = m;
    lk->service = next_host(lk);
    lk->hosts_tried = 1;
    lk->target = lk->service;
    send_request(lk);
}

void pc_lookup_topic(pc_runtime_t *rt, const char *topic, pc_lookup_cb cb, void *ctx)
{
    if (rt->service->http)
        pc_http_lookup_topic(rt, topic, cb, ctx);
    else
        start(rt, NULL, topic, &(pc_lookup_reply_t){ .lookup_cb = cb, .ctx = ctx });
}

void pc_lookup_topic_at(pc_runtime_t *rt, const pc_service_url_t *moved, const char *topic,
                        pc_lookup_cb cb, void *ctx)
{
    if (!moved) {
        pc_lookup_topic(rt, topic, cb, ctx);
        return;
    }
    start(rt, moved, topic, &(pc_lookup_reply_t){ .lookup_cb = cb, .ctx = ctx });
}

void pc_lookup_partitions(pc_runtime_t *rt, const char *topic, pc_partitions_cb cb, void *ctx)
{
    if (rt->service->http)
        pc_http_lookup_partitions(rt, topic, cb, ctx);
    else
        start(rt, NULL, topic,
              &(pc_lookup_reply_t){ .partitions = true, .partitions_cb = cb, .ctx = ctx });
}
