/* Registration: look the topic up, connect, register with the broker; after a lost
 * connection, do it again with backoff and resend; stop on a terminal error.
 * @locality loop thread. */
#include "producer/pp_internal.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/clock.h"
#include "common/error.h"
#include "common/log.h"
#include "net/lookup.h"
#include "net/pool.h"
#include "wire/frame.h"

static void connect_now(pc_pp_t *pp);
static void schedule_reconnect(pc_pp_t *pp);

/* Context for the calls of one connection attempt, so that an answer arriving after the
 * attempt was abandoned (the broker closed us mid-registration) is recognised as stale. */
typedef struct attempt_ctx {
    pc_pp_t *pp;
    uint64_t attempt;
} attempt_ctx;

static attempt_ctx *attempt_ctx_new(pc_pp_t *pp)
{
    attempt_ctx *a = malloc(sizeof *a);
    if (a) {
        a->pp = pp;
        a->attempt = pp->attempt;
        pp->inflight++;
    }
    return a;
}

/* Returns the producer if the answer is still wanted, else NULL; frees the context. */
static pc_pp_t *attempt_ctx_take(void *ctx)
{
    attempt_ctx *a = ctx;
    pc_pp_t *pp = a->pp;
    bool current = a->attempt == pp->attempt;
    free(a);
    if (!pc_pp_callback_returned(pp) || !current || pp->state != PP_CONNECTING)
        return NULL;
    return pp;
}

static void on_reconnect_timer(uv_timer_t *t)
{
    connect_now(t->data);
}

static void schedule_reconnect(pc_pp_t *pp)
{
    uint64_t delay = pc_backoff_next(&pp->backoff);
    PC_INFO(pp->rt->log, "%s: reconnecting in %llu ms", pp->topic, (unsigned long long)delay);
    uv_timer_start(&pp->reconnect_timer, on_reconnect_timer, delay, 0);
}

void pc_pp_stop_with(pc_pp_t *pp, pulsarc_result res, const char *detail)
{
    pc_pp_set_state(pp, PP_FAILED);
    pp->fail_res = res;
    snprintf(pp->fail_detail, sizeof pp->fail_detail, "the producer stopped: %s",
             detail && *detail ? detail : pulsarc_strerror(res));
    if (pulsarc_result_is_terminal(res))
        pp->stopped(pp->owner, res, pp->fail_detail);
    PC_ERROR(pp->rt->log, "%s: %s", pp->topic, pp->fail_detail);
    pc_pp_fail_all(pp, res, pp->fail_detail);
}

/* An attempt to (re)register failed. */
static void attempt_failed(pc_pp_t *pp, pulsarc_result res, const char *detail)
{
    if (pp->state != PP_CONNECTING)
        return;
    pp->conn = NULL;
    PC_INFO(pp->rt->log, "%s: attempt to register failed: %s (%s)", pp->topic,
            pulsarc_result_name(res), detail ? detail : "");
    if (!pp->sequence_known) {
        pp->attempt_res = res;
        snprintf(pp->attempt_detail, sizeof pp->attempt_detail, "%s",
                 detail && *detail ? detail : pulsarc_strerror(res));
        /* The first registration retries until operationTimeoutMs. */
        uint64_t now = pc_mono_ms();
        if (pc_result_fails_creation(res) || now + pp->backoff.next_ms >= pp->start_deadline_ms) {
            pc_pp_done_fn cb = pp->start_cb;
            pp->start_cb = NULL;
            if (!cb && pp->set.lazy_start && !pulsarc_result_is_terminal(res)) {
                /* A lazy partition (started by a send, nobody waits on its creation):
                 * its waiting messages fail, but the next send tries to register again,
                 * since the error may well be gone by then. */
                pc_pp_fail_all(pp, res, detail);
                pc_pp_set_state(pp, PP_IDLE);
                pc_backoff_reset(&pp->backoff);
                return;
            }
            pc_pp_stop_with(pp, res, detail);
            pc_set_detail(detail);
            if (cb)
                cb(pp, res, pp->start_ctx);
            return;
        }
        schedule_reconnect(pp);
        return;
    }
    if (pulsarc_result_is_terminal(res)) {
        pc_pp_stop_with(pp, res, detail);
        return;
    }
    schedule_reconnect(pp);
}

static const char *const access_mode_names[] = {
    [PC_ACCESS_SHARED] = "shared",
    [PC_ACCESS_EXCLUSIVE] = "exclusive",
    [PC_ACCESS_EXCLUSIVE_WITH_FENCING] = "exclusive_with_fencing",
    [PC_ACCESS_WAIT_FOR_EXCLUSIVE] = "wait_for_exclusive",
};

static Pulsar__Proto__ProducerAccessMode access_mode_proto(pc_access_mode m)
{
    switch (m) {
    case PC_ACCESS_EXCLUSIVE:
        return PULSAR__PROTO__PRODUCER_ACCESS_MODE__Exclusive;
    case PC_ACCESS_EXCLUSIVE_WITH_FENCING:
        return PULSAR__PROTO__PRODUCER_ACCESS_MODE__ExclusiveWithFencing;
    case PC_ACCESS_WAIT_FOR_EXCLUSIVE:
        return PULSAR__PROTO__PRODUCER_ACCESS_MODE__WaitForExclusive;
    case PC_ACCESS_SHARED:
        break;
    }
    return PULSAR__PROTO__PRODUCER_ACCESS_MODE__Shared;
}

/* The detail of a refused registration. The broker refuses a producer because of the
 * topic's other producers with ProducerBusy (a shared one beside an exclusive one, or a
 * name in use) or ProducerFenced (an exclusive one beside any other, or one whose topic
 * epoch has moved on): its words, and this producer's access mode, say which. */
static void refusal_detail(const pc_pp_t *pp, pulsarc_result res, char *out, size_t len)
{
    const char *broker = pulsarc_last_error_detail();
    if (res == PULSARC_ERR_BROKER_PRODUCER_BUSY || res == PULSARC_ERR_BROKER_PRODUCER_FENCED)
        snprintf(out, len, "%s (this producer's accessMode is %s)", broker,
                 access_mode_names[pp->set.access_mode]);
    else
        snprintf(out, len, "%s", broker);
}

static void on_registered(pc_conn_t *conn, pulsarc_result res,
                          const Pulsar__Proto__BaseCommand *resp, void *ctx)
{
    pc_pp_t *pp = attempt_ctx_take(ctx);
    if (!pp || pp->conn != conn)
        return;
    pp->registering = false;
    if (res != PULSARC_OK || !resp->producer_success) {
        if (res == PULSARC_OK)
            res = pc_fail(PULSARC_ERR_PROTOCOL, "PRODUCER answered with the wrong command");
        char detail[512];
        refusal_detail(pp, res, detail, sizeof detail);
        /* No answer in time: the broker may still create the producer (a WaitForExclusive
         * one it queued gets the topic once the others leave), so tell it not to. */
        if (res == PULSARC_ERR_TIMEOUT && pc_conn_state(conn) == PC_CONN_READY)
            pc_pp_send_close_producer(pp);
        if (pc_conn_state(conn) != PC_CONN_CLOSED)
            pc_conn_remove_listener(conn, &pp->listener);
        attempt_failed(pp, res, detail);
        return;
    }
    const Pulsar__Proto__CommandProducerSuccess *ok = resp->producer_success;
    if (pc_pp_schema_registered(pp, ok) != PULSARC_OK) {
        char detail[512];
        snprintf(detail, sizeof detail, "%s", pulsarc_last_error_detail());
        pc_conn_remove_listener(conn, &pp->listener);
        attempt_failed(pp, PULSARC_ERR_PROTOCOL, detail);
        return;
    }
    if (!pp->name && ok->producer_name) {
        pp->name = strdup(ok->producer_name);
        if (!pp->name) {
            pc_conn_remove_listener(conn, &pp->listener);
            attempt_failed(pp, PULSARC_ERR_NO_MEMORY, "out of memory");
            return;
        }
        pp->name_len = strlen(pp->name);
    }
    int64_t broker_last = ok->has_last_sequence_id && ok->last_sequence_id >= 0
                              ? ok->last_sequence_id
                              : -1;
    if (!pp->sequence_known) {
        /* Only the first registration fixes the ids: later ones must not rewind them. */
        pp->sequence_known = true;
        int64_t last = pp->set.initial_sequence_id >= 0 ? pp->set.initial_sequence_id : broker_last;
        pc_pp_note_id_used(pp, last);
        atomic_store(&pp->last_sequence_id, last);
    }
    /* The topic's epoch, as the latest registration gave it (the official clients keep
     * what each success says, absent included). */
    pp->has_topic_epoch = ok->has_topic_epoch;
    pp->topic_epoch = ok->topic_epoch;
    /* What the broker holds is a replay for every later message with an id up to it. */
    if (broker_last > pp->pushed)
        pp->pushed = broker_last;
    pp->registration++;
    pp->counters.registrations++;
    pp->max_message_size = pc_conn_max_message_size(conn);
    pc_batcher_set_frame_limit(&pp->batcher, pp->max_message_size);
    pc_pp_set_state(pp, PP_READY);
    /* The backoff starts over once the broker stores something (pc_pp_on_receipt): a frame it
     * refuses, closing the connection each time, must not make us spin. */
    if (!pp->head)
        pc_backoff_reset(&pp->backoff);
    PC_INFO(pp->rt->log,
            "%s: producer %s ready (id %llu, epoch %llu, last sequence id %lld, accessMode %s, "
            "topic epoch %lld)",
            pp->topic, pp->name, (unsigned long long)pp->producer_id, (unsigned long long)pp->epoch,
            (long long)broker_last, access_mode_names[pp->set.access_mode],
            pp->has_topic_epoch ? (long long)pp->topic_epoch : -1LL);
    pp->epoch++;
    if (pp->start_cb || pp->waiting_head) {
        pc_pp_done_fn cb = pp->start_cb;
        pp->start_cb = NULL;
        if (cb)
            cb(pp, PULSARC_OK, pp->start_ctx);
    }
    pc_pp_resend_pending(pp);
    if (pp->state == PP_READY)
        pc_pp_send_waiting(pp);
}

/* The producer's properties as CommandProducer.metadata: one block, pointers then
 * entries, freed by the caller once the command is written. False when out of memory. */
static bool producer_metadata(const pc_pp_t *pp, Pulsar__Proto__CommandProducer *reg,
                              Pulsar__Proto__KeyValue ***out)
{
    size_t n = pp->set.n_properties;
    *out = NULL;
    if (n == 0)
        return true;
    Pulsar__Proto__KeyValue **ptrs = malloc(n * (sizeof *ptrs + sizeof **ptrs));
    if (!ptrs)
        return false;
    Pulsar__Proto__KeyValue *kvs = (Pulsar__Proto__KeyValue *)(ptrs + n);
    for (size_t i = 0; i < n; i++) {
        kvs[i] = (Pulsar__Proto__KeyValue)PULSAR__PROTO__KEY_VALUE__INIT;
        kvs[i].key = pp->set.properties[i].key;
        kvs[i].value = pp->set.properties[i].value;
        ptrs[i] = &kvs[i];
    }
    reg->n_metadata = n;
    reg->metadata = ptrs;
    *out = ptrs;
    return true;
}

/* The broker reads a frame of at most its max message size plus the framing allowance,
 * and resets the connection (every producer on it) on a larger one: a PRODUCER command
 * that large (its properties and schema make it so) is refused here, unsent. Returns
 * false with the detail written. */
static bool registration_fits(const pc_conn_t *conn, const pc_pp_t *pp,
                              const Pulsar__Proto__BaseCommand *cmd, char *detail, size_t len)
{
    size_t frame = 4 + pulsar__proto__base_command__get_packed_size(cmd);
    size_t limit = (size_t)pc_conn_max_message_size(conn) + PC_FRAME_OVERHEAD_ALLOWANCE;
    if (frame <= limit)
        return true;
    snprintf(detail, len,
             "the producer's properties (%zu) and schema make a PRODUCER command of %zu bytes, "
             "above the %zu bytes the broker reads in one frame (its max message size plus "
             "%d): not sent, since the broker would reset the connection",
             pp->set.n_properties, frame, limit, PC_FRAME_OVERHEAD_ALLOWANCE);
    return false;
}

static void on_conn_ready(pc_conn_t *conn, pulsarc_result res, void *ctx)
{
    pc_pp_t *pp = attempt_ctx_take(ctx);
    if (!pp || pp->conn != conn)
        return;
    if (res != PULSARC_OK) {
        char detail[512];
        snprintf(detail, sizeof detail, "%s", pulsarc_last_error_detail());
        attempt_failed(pp, res, detail);
        return;
    }
    pc_conn_add_listener(conn, &pp->listener);
    Pulsar__Proto__CommandProducer reg = PULSAR__PROTO__COMMAND_PRODUCER__INIT;
    Pulsar__Proto__BaseCommand cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    uint64_t rid = pc_conn_new_request_id(conn);
    reg.topic = pp->topic;
    reg.producer_id = pp->producer_id;
    reg.request_id = rid;
    reg.producer_name = pp->name;
    reg.has_epoch = 1;
    reg.epoch = pp->epoch;
    reg.has_user_provided_producer_name = 1;
    reg.user_provided_producer_name = pp->user_named;
    if (pp->enc) {
        reg.has_encrypted = 1;
        reg.encrypted = 1;
    }
    reg.has_producer_access_mode = 1;
    reg.producer_access_mode = access_mode_proto(pp->set.access_mode);
    if (pp->has_topic_epoch) {
        reg.has_topic_epoch = 1;
        reg.topic_epoch = pp->topic_epoch;
    }
    reg.initial_subscription_name = (char *)pp->set.initial_subscription;
    cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__PRODUCER;
    cmd.producer = &reg;
    void *schema_mem = NULL;
    Pulsar__Proto__KeyValue **metadata = NULL;
    attempt_ctx *a = attempt_ctx_new(pp);
    if (!a || !producer_metadata(pp, &reg, &metadata) ||
        pc_pp_schema_fill_producer(pp, &reg, &schema_mem) != 0) {
        if (a) {
            pp->inflight--;
            free(a);
        }
        free(metadata);
        pc_conn_remove_listener(conn, &pp->listener);
        attempt_failed(pp, PULSARC_ERR_NO_MEMORY, "out of memory");
        return;
    }
    char detail[512];
    if (!registration_fits(conn, pp, &cmd, detail, sizeof detail)) {
        pp->inflight--;
        free(a);
        pc_pp_schema_proto_free(schema_mem);
        free(metadata);
        pc_conn_remove_listener(conn, &pp->listener);
        if (pp->sequence_known) {
            pp->conn = NULL; /* a registration again: it cannot pass on this broker */
            pc_pp_stop_with(pp, PULSARC_ERR_MESSAGE_TOO_BIG, detail);
        } else {
            attempt_failed(pp, PULSARC_ERR_MESSAGE_TOO_BIG, detail);
        }
        return;
    }
    pp->registering = true;
    pp->registration_rid = rid;
    pc_conn_request(conn, &cmd, rid, on_registered, a);
    pc_pp_schema_proto_free(schema_mem);
    free(metadata);
}

static void on_lookup(pulsarc_result res, const pc_host_port_t *logical,
                      const pc_host_port_t *physical, void *ctx)
{
    pc_pp_t *pp = attempt_ctx_take(ctx);
    if (!pp)
        return;
    if (res != PULSARC_OK) {
        char detail[512];
        snprintf(detail, sizeof detail, "lookup of %s: %s", pp->topic, pulsarc_last_error_detail());
        attempt_failed(pp, res, detail);
        return;
    }
    pc_conn_t *conn = pc_pool_get(pp->rt->pool, logical, physical);
    if (!conn) {
        attempt_failed(pp, PULSARC_ERR_NO_MEMORY, "out of memory");
        return;
    }
    attempt_ctx *a = attempt_ctx_new(pp);
    if (!a) {
        attempt_failed(pp, PULSARC_ERR_NO_MEMORY, "out of memory");
        return;
    }
    pp->conn = conn;
    pc_conn_when_ready(conn, on_conn_ready, a);
}

static void connect_now(pc_pp_t *pp)
{
    if (pp->state != PP_CONNECTING)
        return;
    pp->attempt++;
    attempt_ctx *a = attempt_ctx_new(pp);
    if (!a) {
        schedule_reconnect(pp);
        return;
    }
    pc_lookup_topic_at(pp->rt, pp->moved_to, pp->topic, on_lookup, a);
}

/* The connection went away (or the broker closed us): queue everything and retry. */
static void connection_lost(pc_pp_t *pp, pulsarc_result why, const char *detail)
{
    if (pp->state == PP_CONNECTING) {
        if (!pp->conn)
            return; /* between attempts: the next one is scheduled already */
        /* The broker closed us while registering (the topic is moving): its answer to the
         * PRODUCER command may never come, so give up on this attempt and start anew. */
        PC_INFO(pp->rt->log, "%s: closed during registration; retrying", pp->topic);
        pp->registering = false;
        pp->attempt++;
        pp->conn = NULL;
        schedule_reconnect(pp);
        return;
    }
    if (pp->state == PP_CLOSING) {
        /* Closing anyway: the broker forgets the producer with the connection. */
        pc_pp_finish_close(pp, PULSARC_OK);
        return;
    }
    if (pp->state != PP_READY)
        return;
    PC_WARN(pp->rt->log, "%s: connection lost (%s%s%s); %zu message(s) will be resent", pp->topic,
            pulsarc_strerror(why), detail && *detail ? ": " : "", detail ? detail : "",
            (size_t)(pp->head ? pp->next_op_index - pp->head->index : 0));
    pp->conn = NULL;
    pc_pp_set_state(pp, PP_CONNECTING);
    pp->counters.disconnects++;
    if (pp->disconnected_at)
        atomic_store(pp->disconnected_at, pc_wall_ms());
    schedule_reconnect(pp);
}

void pc_pp_abandon_registration(pc_pp_t *pp)
{
    if (!pp->registering)
        return;
    pp->registering = false;
    if (pp->conn && pc_conn_state(pp->conn) == PC_CONN_READY)
        pc_pp_send_close_producer(pp);
}

void pc_pp_on_broker_close(void *ctx)
{
    pc_pp_t *pp = ctx;
    PC_INFO(pp->rt->log, "%s: broker closed the producer; reconnecting", pp->topic);
    connection_lost(pp, PULSARC_ERR_CONNECTION_CLOSED, "closed by the broker");
}

/* The service URL as text for the log: scheme, hosts and ports (what was parsed, so
 * nothing else the broker wrote). */
static void url_text(const pc_service_url_t *u, char *out, size_t len)
{
    size_t n = (size_t)snprintf(out, len, "%s://", u->tls ? "pulsar+ssl" : "pulsar");
    for (int i = 0; i < u->n_hosts && n < len; i++) {
        bool v6 = strchr(u->hosts[i].host, ':') != NULL;
        n += (size_t)snprintf(out + n, len - n, "%s%s%s%s:%d", i ? "," : "", v6 ? "[" : "",
                              u->hosts[i].host, v6 ? "]" : "", u->hosts[i].port);
    }
}

void pc_pp_on_migrated(void *ctx, const pc_service_url_t *to)
{
    pc_pp_t *pp = ctx;
    pc_service_url_t *copy = malloc(sizeof *copy);
    if (!copy) {
        PC_WARN(pp->rt->log,
                "%s: the topic moved to another cluster, but out of memory: "
                "looked up on this cluster again",
                pp->topic);
        pc_pp_on_broker_close(pp);
        return;
    }
    *copy = *to;
    free(pp->moved_to);
    pp->moved_to = copy;
    pp->counters.migrations++;
    char where[1024];
    url_text(copy, where, sizeof where);
    PC_INFO(pp->rt->log,
            "%s: the topic moved to another cluster (TOPIC_MIGRATED): producer %s registers "
            "there, through %s, with its pending messages and sequence ids",
            pp->topic, pp->name ? pp->name : "(unnamed)", where);
    /* A new cluster: the backoff grown against the old one does not apply. */
    pc_backoff_reset(&pp->backoff);
    connection_lost(pp, PULSARC_ERR_CONNECTION_CLOSED, "the topic moved to another cluster");
}

void pc_pp_on_disconnect(void *ctx, pulsarc_result why)
{
    pc_pp_t *pp = ctx;
    connection_lost(pp, why, pulsarc_last_error_detail());
}

void pc_pp_on_cluster_switch(pc_cluster_listener_t *l)
{
    pc_pp_t *pp = (pc_pp_t *)((char *)l - offsetof(pc_pp_t, cluster_listener));
    /* The cluster a migration named was reached with the old cluster's credentials; the
     * client's new cluster has its own, and its own answer for the topic. */
    if (pp->moved_to) {
        PC_INFO(pp->rt->log,
                "%s: the client switched clusters: lookups leave the cluster the "
                "topic had moved to",
                pp->topic);
        free(pp->moved_to);
        pp->moved_to = NULL;
    }
    /* The backoff grew against a cluster the client has left: the new one gets a fresh
     * start, and a producer waiting out that backoff (its connection closed by the
     * switch, or lost before it) looks the topic up there at once. */
    pc_backoff_reset(&pp->backoff);
    if (pp->state == PP_CONNECTING && !pp->conn &&
        uv_is_active((uv_handle_t *)&pp->reconnect_timer))
        uv_timer_start(&pp->reconnect_timer, on_reconnect_timer, 0, 0);
}

void pc_pp_start(pc_pp_t *pp, pc_pp_done_fn cb, void *ctx)
{
    pp->start_cb = cb;
    pp->start_ctx = ctx;
    pp->start_deadline_ms = pc_mono_ms() + pp->rt->limits.operation_timeout_ms;
    pc_pp_set_state(pp, PP_CONNECTING);
    connect_now(pp);
}
