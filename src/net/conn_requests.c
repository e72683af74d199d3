/* The connection's requests and incoming commands: pending requests by id and their
 * timeouts, the keep-alive tick, and dispatch of commands to requests and listeners.
 * @locality loop thread. */
#include "net/connection_internal.h"

#include <stdio.h>
#include <stdlib.h>

#include "common/clock.h"
#include "common/error.h"

/* ---- requests ---------------------------------------------------------------- */

void pc_conn_request(pc_conn_t *c, Pulsar__Proto__BaseCommand *cmd, uint64_t request_id,
                     pc_request_cb cb, void *ctx)
{
    if (c->state != PC_CONN_READY) {
        pc_set_detail("connection is not ready");
        cb(c, PULSARC_ERR_CONNECTION_CLOSED, NULL, ctx);
        return;
    }
    request_t *r = malloc(sizeof *r);
    if (!r) {
        pc_set_detail("out of memory");
        cb(c, PULSARC_ERR_NO_MEMORY, NULL, ctx);
        return;
    }
    r->id = request_id;
    r->queued = false;
    bool lookup = cmd->type == PULSAR__PROTO__BASE_COMMAND__TYPE__LOOKUP ||
                  cmd->type == PULSAR__PROTO__BASE_COMMAND__TYPE__PARTITIONED_METADATA;
    r->deadline_ms = pc_mono_ms() + (lookup && c->rt->limits.lookup_timeout_ms
                                         ? c->rt->limits.lookup_timeout_ms
                                         : c->rt->limits.operation_timeout_ms);
    r->cb = cb;
    r->ctx = ctx;
    r->next = NULL;
    *c->requests_tail = r;
    c->requests_tail = &r->next;
    pc_conn_update_ref(c);
    if (pc_conn_send_command(c, cmd) != 0 && c->state != PC_CONN_CLOSED)
        pc_conn_close(c, PULSARC_ERR_CONNECTION_CLOSED, "cannot write a request");
}

/* Unlink the request *pp points to (keeping requests_tail right); returns it. */
static request_t *unlink_request(pc_conn_t *c, request_t **pp)
{
    request_t *r = *pp;
    *pp = r->next;
    if (c->requests_tail == &r->next)
        c->requests_tail = pp;
    return r;
}

static request_t *take_request(pc_conn_t *c, uint64_t id)
{
    for (request_t **pp = &c->requests; *pp; pp = &(*pp)->next)
        if ((*pp)->id == id)
            return unlink_request(c, pp);
    return NULL;
}

static request_t *find_request(const pc_conn_t *c, uint64_t id)
{
    for (request_t *r = c->requests; r; r = r->next)
        if (r->id == id)
            return r;
    return NULL;
}

bool pc_conn_request_queued(const pc_conn_t *c, uint64_t request_id)
{
    const request_t *r = find_request(c, request_id);
    return r && r->queued;
}

/* PRODUCER_SUCCESS(producer_ready=false): a WaitForExclusive producer waits in the
 * broker's queue until the topic's holder leaves; the real answer follows. */
static void note_queued(pc_conn_t *c, uint64_t request_id)
{
    request_t *r = find_request(c, request_id);
    if (r)
        r->queued = true;
    PC_INFO(c->rt->log,
            "request %llu: the broker queued the producer until it may have the "
            "topic to itself",
            (unsigned long long)request_id);
}

static void complete_request(pc_conn_t *c, uint64_t id, pulsarc_result res,
                             const Pulsar__Proto__BaseCommand *resp, const char *detail)
{
    request_t *r = take_request(c, id);
    if (!r) {
        PC_DEBUG(c->rt->log, "answer for unknown request %llu ignored", (unsigned long long)id);
        return;
    }
    pc_set_detail(detail);
    r->cb(c, res, resp, r->ctx);
    free(r);
    pc_conn_update_ref(c);
}

/* ---- incoming commands -------------------------------------------------------- */

static void complete_txn_answer(pc_conn_t *c, const Pulsar__Proto__BaseCommand *cmd,
                                uint64_t request_id, bool has_error,
                                Pulsar__Proto__ServerError error, const char *message)
{
    complete_request(c, request_id, has_error ? pc_result_from_server_error(error) : PULSARC_OK,
                     cmd, has_error ? message : NULL);
}

static void send_simple(pc_conn_t *c, Pulsar__Proto__BaseCommand__Type type)
{
    Pulsar__Proto__BaseCommand cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    Pulsar__Proto__CommandPing ping = PULSAR__PROTO__COMMAND_PING__INIT;
    Pulsar__Proto__CommandPong pong = PULSAR__PROTO__COMMAND_PONG__INIT;
    cmd.type = type;
    if (type == PULSAR__PROTO__BASE_COMMAND__TYPE__PING)
        cmd.ping = &ping;
    else
        cmd.pong = &pong;
    pc_conn_send_command(c, &cmd);
}

void pc_conn_dispatch_receipt(pc_conn_t *c, const Pulsar__Proto__CommandSendReceipt *r)
{
    pc_conn_listener_t *l = pc_conn_find_listener(c, r->producer_id);
    if (l)
        l->on_receipt(l->ctx, r);
}

/* Answers to requests (found by request id). False: not one. */
static bool dispatch_answer(pc_conn_t *c, const Pulsar__Proto__BaseCommand *cmd)
{
    switch (cmd->type) {
    case PULSAR__PROTO__BASE_COMMAND__TYPE__ERROR:
        if (!cmd->error)
            break;
        if (c->state == PC_CONN_HANDSHAKE) {
            pc_conn_close(c, pc_result_from_server_error(cmd->error->error), cmd->error->message);
            break;
        }
        complete_request(c, cmd->error->request_id, pc_result_from_server_error(cmd->error->error),
                         cmd, cmd->error->message);
        break;
    case PULSAR__PROTO__BASE_COMMAND__TYPE__SUCCESS:
        if (cmd->success)
            complete_request(c, cmd->success->request_id, PULSARC_OK, cmd, NULL);
        break;
    case PULSAR__PROTO__BASE_COMMAND__TYPE__PRODUCER_SUCCESS:
        /* producer_ready=false means "queued for exclusive access"; the real answer follows,
         * within the request's operationTimeoutMs. */
        if (cmd->producer_success &&
            !(cmd->producer_success->has_producer_ready && !cmd->producer_success->producer_ready))
            complete_request(c, cmd->producer_success->request_id, PULSARC_OK, cmd, NULL);
        else if (cmd->producer_success)
            note_queued(c, cmd->producer_success->request_id);
        break;
    case PULSAR__PROTO__BASE_COMMAND__TYPE__LOOKUP_RESPONSE:
        if (cmd->lookuptopicresponse)
            complete_request(c, cmd->lookuptopicresponse->request_id, PULSARC_OK, cmd, NULL);
        break;
    case PULSAR__PROTO__BASE_COMMAND__TYPE__PARTITIONED_METADATA_RESPONSE:
        if (cmd->partitionmetadataresponse)
            complete_request(c, cmd->partitionmetadataresponse->request_id, PULSARC_OK, cmd, NULL);
        break;
    default:
        return false;
    }
    return true;
}

/* A schema answer's own error code, or OK. The requester validates the schema and
 * version (broker input) before use. */
static void complete_schema_answer(pc_conn_t *c, const Pulsar__Proto__BaseCommand *cmd,
                                   uint64_t request_id, bool has_error,
                                   Pulsar__Proto__ServerError error, const char *message)
{
    complete_request(c, request_id, has_error ? pc_result_from_server_error(error) : PULSARC_OK,
                     cmd, has_error ? message : NULL);
}

/* Schema and transaction coordinator answers: each carries an optional error and message;
 * the requester (producer/, src/txn/) checks the rest. False: not one. */
static bool dispatch_service_answer(pc_conn_t *c, const Pulsar__Proto__BaseCommand *cmd)
{
    switch (cmd->type) {
    case PULSAR__PROTO__BASE_COMMAND__TYPE__GET_SCHEMA_RESPONSE:
        if (cmd->getschemaresponse) {
            const Pulsar__Proto__CommandGetSchemaResponse *r = cmd->getschemaresponse;
            complete_schema_answer(c, cmd, r->request_id, r->has_error_code, r->error_code,
                                   r->error_message);
        }
        break;
    case PULSAR__PROTO__BASE_COMMAND__TYPE__GET_OR_CREATE_SCHEMA_RESPONSE:
        if (cmd->getorcreateschemaresponse) {
            const Pulsar__Proto__CommandGetOrCreateSchemaResponse
                *r = cmd->getorcreateschemaresponse;
            complete_schema_answer(c, cmd, r->request_id, r->has_error_code, r->error_code,
                                   r->error_message);
        }
        break;
    case PULSAR__PROTO__BASE_COMMAND__TYPE__TC_CLIENT_CONNECT_RESPONSE:
        if (cmd->tcclientconnectresponse)
            complete_txn_answer(c, cmd, cmd->tcclientconnectresponse->request_id,
                                cmd->tcclientconnectresponse->has_error,
                                cmd->tcclientconnectresponse->error,
                                cmd->tcclientconnectresponse->message);
        break;
    case PULSAR__PROTO__BASE_COMMAND__TYPE__NEW_TXN_RESPONSE:
        if (cmd->newtxnresponse)
            complete_txn_answer(c, cmd, cmd->newtxnresponse->request_id,
                                cmd->newtxnresponse->has_error, cmd->newtxnresponse->error,
                                cmd->newtxnresponse->message);
        break;
    case PULSAR__PROTO__BASE_COMMAND__TYPE__ADD_PARTITION_TO_TXN_RESPONSE:
        if (cmd->addpartitiontotxnresponse)
            complete_txn_answer(c, cmd, cmd->addpartitiontotxnresponse->request_id,
                                cmd->addpartitiontotxnresponse->has_error,
                                cmd->addpartitiontotxnresponse->error,
                                cmd->addpartitiontotxnresponse->message);
        break;
    case PULSAR__PROTO__BASE_COMMAND__TYPE__END_TXN_RESPONSE:
        if (cmd->endtxnresponse)
            complete_txn_answer(c, cmd, cmd->endtxnresponse->request_id,
                                cmd->endtxnresponse->has_error, cmd->endtxnresponse->error,
                                cmd->endtxnresponse->message);
        break;
    default:
        return false;
    }
    return true;
}

/* TOPIC_MIGRATED (PIP-188): the broker's cluster has moved the producer's topic to another
 * cluster and names that cluster's service URL, the TLS one for a TLS connection (as the
 * C++ and Go clients choose). The producer leaves this connection and registers there. A
 * URL missing or not a service URL like the client's is network input not to follow: the
 * producer is closed as by CLOSE_PRODUCER (it looks the topic up here again), with a
 * warning. A consumer's migration is nobody's here. */
static void topic_migrated(pc_conn_t *c, const Pulsar__Proto__CommandTopicMigrated *m)
{
    if (m->resource_type != PULSAR__PROTO__COMMAND_TOPIC_MIGRATED__RESOURCE_TYPE__Producer) {
        PC_DEBUG(c->rt->log, "TOPIC_MIGRATED for consumer %llu ignored",
                 (unsigned long long)m->resource_id);
        return;
    }
    pc_conn_listener_t *l = pc_conn_find_listener(c, m->resource_id);
    if (!l) {
        PC_DEBUG(c->rt->log, "TOPIC_MIGRATED for unknown producer %llu ignored",
                 (unsigned long long)m->resource_id);
        return;
    }
    bool tls = c->tls_ctx != NULL;
    pc_service_url_t *to = malloc(sizeof *to);
    char why[640];
    int bad = to ? pc_migration_url_parse(m->brokerserviceurl, m->brokerserviceurltls, tls, to, why,
                                          sizeof why)
                 : (snprintf(why, sizeof why, "out of memory"), -1);
    pc_conn_remove_listener(c, l);
    if (bad || !l->on_migrated) {
        PC_WARN(c->rt->log,
                "producer %llu: the broker says its topic moved to another cluster, but %s: "
                "handled as CLOSE_PRODUCER (the topic is looked up on this cluster again)",
                (unsigned long long)m->resource_id, bad ? why : "nothing here follows it");
        l->on_broker_close(l->ctx);
    } else {
        l->on_migrated(l->ctx, to);
    }
    free(to);
}

/* Commands for a producer (found by producer id). False: not one. */
static bool dispatch_producer(pc_conn_t *c, const Pulsar__Proto__BaseCommand *cmd)
{
    pc_conn_listener_t *l;
    switch (cmd->type) {
    case PULSAR__PROTO__BASE_COMMAND__TYPE__SEND_RECEIPT:
        if (cmd->send_receipt)
            pc_conn_dispatch_receipt(c, cmd->send_receipt);
        break;
    case PULSAR__PROTO__BASE_COMMAND__TYPE__SEND_ERROR:
        if (cmd->send_error && (l = pc_conn_find_listener(c, cmd->send_error->producer_id)))
            l->on_send_error(l->ctx, cmd->send_error);
        break;
    case PULSAR__PROTO__BASE_COMMAND__TYPE__CLOSE_PRODUCER:
        if (cmd->close_producer &&
            (l = pc_conn_find_listener(c, cmd->close_producer->producer_id))) {
            pc_conn_remove_listener(c, l);
            l->on_broker_close(l->ctx);
        }
        break;
    case PULSAR__PROTO__BASE_COMMAND__TYPE__TOPIC_MIGRATED:
        if (cmd->topicmigrated)
            topic_migrated(c, cmd->topicmigrated);
        break;
    default:
        return false;
    }
    return true;
}

void pc_conn_dispatch(pc_conn_t *c, const Pulsar__Proto__BaseCommand *cmd)
{
    switch (cmd->type) {
    case PULSAR__PROTO__BASE_COMMAND__TYPE__CONNECTED:
        if (cmd->connected)
            pc_conn_on_connected(c, cmd->connected);
        return;
    case PULSAR__PROTO__BASE_COMMAND__TYPE__PING:
        send_simple(c, PULSAR__PROTO__BASE_COMMAND__TYPE__PONG);
        return;
    case PULSAR__PROTO__BASE_COMMAND__TYPE__PONG:
        return;
    case PULSAR__PROTO__BASE_COMMAND__TYPE__AUTH_CHALLENGE:
        if (cmd->authchallenge)
            pc_conn_answer_auth_challenge(c, cmd->authchallenge);
        return;
    default:
        break;
    }
    if (!dispatch_producer(c, cmd) && !dispatch_answer(c, cmd) && !dispatch_service_answer(c, cmd))
        PC_DEBUG(c->rt->log, "ignoring command type %d", (int)cmd->type);
}

/* ---- timer: connect timeout, request timeouts, keep-alive ------------------- */

/* connectionMaxIdleSeconds: a connection nobody has used for that long is closed (the
 * pool forgets it and opens a new one when a producer or lookup needs the broker again).
 * Returns whether it closed. */
static bool closed_for_idling(pc_conn_t *c, uint64_t now)
{
    bool unused = !c->listeners && !c->requests && !c->waiters && c->out.n_items == 0 &&
                  !c->auth_wait.pending;
    if (!unused) {
        c->unused_since_ms = 0;
        return false;
    }
    if (!c->unused_since_ms)
        c->unused_since_ms = now;
    uint64_t limit = c->rt->limits.max_idle_ms;
    if (!limit || now - c->unused_since_ms < limit)
        return false;
    pc_conn_close(c, PULSARC_ERR_CONNECTION_CLOSED,
                  "unused for connectionMaxIdleSeconds: closed by the client");
    return true;
}

void pc_conn_on_tick(uv_timer_t *t)
{
    pc_conn_t *c = t->data;
    uint64_t now = pc_mono_ms();
    const pc_limits_t *limits = &c->rt->limits;
    if (c->state != PC_CONN_READY) {
        pc_conn_handshake_timed_out(c, now);
        return;
    }
    if (c->auth_wait.pending && now - c->auth_started_ms >= limits->connection_timeout_ms) {
        pc_conn_close(c, PULSARC_ERR_AUTH_PROVIDER,
                      "the authentication provider did not answer a challenge in time");
        return;
    }
    for (request_t **pp = &c->requests; *pp;) {
        request_t *r = *pp;
        if (r->deadline_ms <= now) {
            unlink_request(c, pp);
            pc_set_detail(r->queued ? PC_CONN_QUEUED_DETAIL
                                    : "no answer from the broker within operationTimeoutMs");
            r->cb(c, PULSARC_ERR_TIMEOUT, NULL, r->ctx);
            free(r);
            if (c->state == PC_CONN_CLOSED)
                return;
        } else {
            pp = &r->next;
        }
    }
    pc_conn_update_ref(c);
    if (closed_for_idling(c, now))
        return;
    uint64_t ka = limits->keepalive_interval_ms;
    if (now - c->last_rx_ms >= 2 * ka) {
        pc_conn_close(c, PULSARC_ERR_CONNECTION_CLOSED, "broker did not answer keep-alive pings");
    } else if (now - c->last_rx_ms >= ka && now - c->last_ping_ms >= ka) {
        c->last_ping_ms = now;
        send_simple(c, PULSAR__PROTO__BASE_COMMAND__TYPE__PING);
    }
}
