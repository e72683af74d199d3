#include "txn/coordinator.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/error.h"
#include "net/backoff.h"
#include "net/connection.h"
#include "net/lookup.h"
#include "net/pool.h"

#define ASSIGN_TOPIC "persistent://pulsar/system/transaction_coordinator_assign"

typedef enum { OP_NEW, OP_ADD_PARTITION, OP_END } op_kind;

typedef struct tc_op {
    struct tc_op *next;
    op_kind kind;
    uint64_t deadline_ms; /* retries stop here */
    uint64_t ttl_ms;      /* OP_NEW */
    pc_txn_ids_t id;      /* OP_ADD_PARTITION, OP_END */
    char *partition;      /* OP_ADD_PARTITION */
    bool commit;          /* OP_END */
    pc_tc_begun_cb begun;
    pc_tc_done_cb done;
    void *ctx;
    struct coord *co; /* where it was sent */
} tc_op;

typedef enum { CO_IDLE, CO_CONNECTING, CO_READY } co_state;

typedef struct coord {
    pc_tc_t *tc;
    uint64_t id;
    co_state state;
    pc_conn_t *conn;             /* CO_CONNECTING after the lookup, CO_READY */
    pc_conn_listener_t listener; /* hears of the connection's end */
    bool listening;
    tc_op *waiting, *waiting_tail; /* for CO_READY, in order */
} coord;

struct pc_tc {
    pc_runtime_t *rt;
    bool discovering;
    coord *coords; /* NULL until discovered */
    uint64_t n_coords;
    uint64_t next_coord;                     /* NEW_TXN round-robin */
    tc_op *undiscovered, *undiscovered_tail; /* waiting for the discovery */
    uv_timer_t retry_timer;
    pc_backoff_t backoff;
    int inflight; /* lookups, readiness waits and requests not answered yet */
    bool closed;
    bool timer_closed;
};

static void connect_coord(coord *co);

/* ---- ops ---------------------------------------------------------------------- */

static void finish(tc_op *op, pulsarc_result res, pc_txn_ids_t id)
{
    if (op->kind == OP_NEW)
        op->begun(res, id, op->ctx);
    else
        op->done(res, op->ctx);
    free(op->partition);
    free(op);
}

static void fail_list(tc_op **head, tc_op **tail, pulsarc_result res, const char *detail, bool all)
{
    uint64_t now = pc_mono_ms();
    for (tc_op **pp = head; *pp;) {
        tc_op *op = *pp;
        if (all || op->deadline_ms <= now) {
            *pp = op->next;
            pc_set_detail(detail);
            finish(op, res, (pc_txn_ids_t){ 0 });
        } else {
            *tail = op;
            pp = &op->next;
        }
    }
    if (!*head)
        *tail = NULL;
}

static void append(tc_op **head, tc_op **tail, tc_op *op)
{
    op->next = NULL;
    if (*tail)
        (*tail)->next = op;
    else
        *head = op;
    *tail = op;
}

static void maybe_free(pc_tc_t *tc)
{
    if (tc->closed && tc->timer_closed && tc->inflight == 0) {
        free(tc->coords);
        free(tc);
    }
}

/* ---- sending a request to a ready coordinator -------------------------------- */

static bool retryable(pulsarc_result res)
{
    return res == PULSARC_ERR_CONNECTION_CLOSED || res == PULSARC_ERR_CONNECT_FAILED ||
           res == PULSARC_ERR_BROKER_TXN_COORDINATOR_NOT_FOUND ||
           res == PULSARC_ERR_BROKER_SERVICE_NOT_READY;
}

static void schedule_retry(pc_tc_t *tc);

/* The coordinator is not where we talk to it any more: forget the connection. */
static void drop_connection(coord *co)
{
    if (co->listening)
        pc_conn_remove_listener(co->conn, &co->listener);
    co->listening = false;
    co->conn = NULL;
    co->state = CO_IDLE;
}

static void on_answer(pc_conn_t *conn, pulsarc_result res, const Pulsar__Proto__BaseCommand *resp,
                      void *ctx)
{
    tc_op *op = ctx;
    coord *co = op->co;
    pc_tc_t *tc = co->tc;
    tc->inflight--;
    if (tc->closed) {
        pc_set_detail("the client is closing");
        finish(op, PULSARC_ERR_ALREADY_CLOSED, (pc_txn_ids_t){ 0 });
        maybe_free(tc);
        return;
    }
    if (retryable(res) && pc_mono_ms() < op->deadline_ms) {
        PC_INFO(tc->rt->log, "transaction coordinator %" PRIu64 ": %s (%s); trying again", co->id,
                pulsarc_result_name(res), pulsarc_last_error_detail());
        if (co->conn == conn && co->state == CO_READY)
            drop_connection(co);
        append(&co->waiting, &co->waiting_tail, op);
        schedule_retry(tc);
        return;
    }
    pc_txn_ids_t id = { 0 };
    if (res == PULSARC_OK && op->kind == OP_NEW) {
        const Pulsar__Proto__CommandNewTxnResponse *r = resp->newtxnresponse;
        if (!r) {
            res = pc_fail(PULSARC_ERR_PROTOCOL, "NEW_TXN answered with another command");
        } else {
            id = (pc_txn_ids_t){ .most = r->txnid_most_bits,
                                 .least = r->txnid_least_bits,
                                 .set = true };
        }
    } else if (res == PULSARC_OK &&
               !(op->kind == OP_END ? (void *)resp->endtxnresponse
                                    : (void *)resp->addpartitiontotxnresponse)) {
        res = pc_fail(PULSARC_ERR_PROTOCOL, "a transaction request answered with another command");
    }
    finish(op, res, id);
}

static void send_op(coord *co, tc_op *op)
{
    Pulsar__Proto__BaseCommand cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    Pulsar__Proto__CommandNewTxn nt = PULSAR__PROTO__COMMAND_NEW_TXN__INIT;
    Pulsar__Proto__CommandAddPartitionToTxn ap = PULSAR__PROTO__COMMAND_ADD_PARTITION_TO_TXN__INIT;
    Pulsar__Proto__CommandEndTxn et = PULSAR__PROTO__COMMAND_END_TXN__INIT;
    uint64_t rid = pc_conn_new_request_id(co->conn);
    switch (op->kind) {
    case OP_NEW:
        cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__NEW_TXN;
        nt.request_id = rid;
        nt.has_txn_ttl_millis = nt.has_tc_id = 1;
        nt.txn_ttl_millis = op->ttl_ms;
        nt.tc_id = co->id;
        cmd.newtxn = &nt;
        break;
    case OP_ADD_PARTITION:
        cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__ADD_PARTITION_TO_TXN;
        ap.request_id = rid;
        ap.has_txnid_most_bits = ap.has_txnid_least_bits = 1;
        ap.txnid_most_bits = op->id.most;
        ap.txnid_least_bits = op->id.least;
        ap.n_partitions = 1;
        ap.partitions = &op->partition;
        cmd.addpartitiontotxn = &ap;
        break;
    case OP_END:
        cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__END_TXN;
        et.request_id = rid;
        et.has_txnid_most_bits = et.has_txnid_least_bits = et.has_txn_action = 1;
        et.txnid_most_bits = op->id.most;
        et.txnid_least_bits = op->id.least;
        et.txn_action = op->commit ? PULSAR__PROTO__TXN_ACTION__COMMIT
                                   : PULSAR__PROTO__TXN_ACTION__ABORT;
        cmd.endtxn = &et;
        break;
    }
    op->co = co;
    co->tc->inflight++;
    pc_conn_request(co->conn, &cmd, rid, on_answer, op);
}

static void send_waiting(coord *co)
{
    while (co->waiting && co->state == CO_READY) {
        tc_op *op = co->waiting;
        co->waiting = op->next;
        if (!co->waiting)
            co->waiting_tail = NULL;
        send_op(co, op);
    }
}

/* ---- connecting to a coordinator ---------------------------------------------- */

/* The lookup, connect or TC_CLIENT_CONNECT failed: what has waited long enough fails with
 * its reason, the rest waits for the next attempt. */
static void coord_failed(coord *co, pulsarc_result res)
{
    char detail[512];
    snprintf(detail, sizeof detail, "transaction coordinator %" PRIu64 ": %s", co->id,
             pulsarc_last_error_detail());
    PC_INFO(co->tc->rt->log, "%s (%s)", detail, pulsarc_result_name(res));
    drop_connection(co);
    fail_list(&co->waiting, &co->waiting_tail, res, detail, !retryable(res));
    if (co->waiting)
        schedule_retry(co->tc);
}

/* A step of connecting (lookup, connect) answered: true when the next one may follow;
 * false when the client is closing or the step failed (then handled here). */
static bool step_succeeded(coord *co, pulsarc_result res)
{
    pc_tc_t *tc = co->tc;
    tc->inflight--;
    if (tc->closed) {
        maybe_free(tc);
        return false;
    }
    if (res != PULSARC_OK) {
        coord_failed(co, res);
        return false;
    }
    return true;
}

static void on_coord_disconnect(void *ctx, pulsarc_result why)
{
    coord *co = ctx;
    (void)why;
    co->listening = false; /* the connection removed the listener already */
    co->conn = NULL;
    co->state = CO_IDLE;
    if (co->waiting)
        schedule_retry(co->tc);
}

static void ignore_receipt(void *ctx, const Pulsar__Proto__CommandSendReceipt *r)
{
    (void)ctx;
    (void)r;
}

static void ignore_send_error(void *ctx, const Pulsar__Proto__CommandSendError *e)
{
    (void)ctx;
    (void)e;
}

static void ignore_close(void *ctx)
{
    (void)ctx;
}

static void on_tc_connected(pc_conn_t *conn, pulsarc_result res,
                            const Pulsar__Proto__BaseCommand *resp, void *ctx)
{
    coord *co = ctx;
    pc_tc_t *tc = co->tc;
    (void)resp;
    tc->inflight--;
    if (tc->closed) {
        maybe_free(tc);
        return;
    }
    if (co->conn != conn)
        return; /* the connection went away meanwhile; a new attempt is under way */
    if (res != PULSARC_OK) {
        coord_failed(co, res);
        return;
    }
    co->state = CO_READY;
    pc_backoff_reset(&tc->backoff);
    send_waiting(co);
}

static void on_conn_ready(pc_conn_t *conn, pulsarc_result res, void *ctx)
{
    coord *co = ctx;
    pc_tc_t *tc = co->tc;
    if (!step_succeeded(co, res))
        return;
    /* A listener only to hear of the connection's end: its producer id is one no
     * producer has, so no producer command reaches it. */
    co->conn = conn;
    co->listener = (pc_conn_listener_t){ .producer_id = tc->rt->next_producer_id++,
                                         .ctx = co,
                                         .on_receipt = ignore_receipt,
                                         .on_send_error = ignore_send_error,
                                         .on_broker_close = ignore_close,
                                         .on_disconnect = on_coord_disconnect };
    pc_conn_add_listener(conn, &co->listener);
    co->listening = true;
    Pulsar__Proto__BaseCommand cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    Pulsar__Proto__CommandTcClientConnectRequest req =
        PULSAR__PROTO__COMMAND_TC_CLIENT_CONNECT_REQUEST__INIT;
    cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__TC_CLIENT_CONNECT_REQUEST;
    req.request_id = pc_conn_new_request_id(conn);
    req.tc_id = co->id;
    cmd.tcclientconnectrequest = &req;
    tc->inflight++;
    pc_conn_request(conn, &cmd, req.request_id, on_tc_connected, co);
}

static void on_coord_lookup(pulsarc_result res, const pc_host_port_t *logical,
                            const pc_host_port_t *physical, void *ctx)
{
    coord *co = ctx;
    pc_tc_t *tc = co->tc;
    if (!step_succeeded(co, res))
        return;
    pc_conn_t *conn = pc_pool_get_any(tc->rt->pool, logical, physical);
    if (!conn) {
        pc_set_detail("out of memory");
        coord_failed(co, PULSARC_ERR_NO_MEMORY);
        return;
    }
    tc->inflight++;
    pc_conn_when_ready(conn, on_conn_ready, co);
}

static void connect_coord(coord *co)
{
    char topic[sizeof ASSIGN_TOPIC + 32];
    snprintf(topic, sizeof topic, ASSIGN_TOPIC "-partition-%" PRIu64, co->id);
    co->state = CO_CONNECTING;
    co->tc->inflight++;
    pc_lookup_topic(co->tc->rt, topic, on_coord_lookup, co);
}

static void to_coord(coord *co, tc_op *op)
{
    append(&co->waiting, &co->waiting_tail, op);
    if (co->state == CO_READY)
        send_waiting(co);
    else if (co->state == CO_IDLE)
        connect_coord(co);
}

/* ---- the retry timer ---------------------------------------------------------- */

static void on_retry(uv_timer_t *t)
{
    pc_tc_t *tc = t->data;
    for (uint64_t i = 0; i < tc->n_coords; i++) {
        coord *co = &tc->coords[i];
        fail_list(&co->waiting, &co->waiting_tail, PULSARC_ERR_TIMEOUT,
                  "no transaction coordinator answered within operationTimeoutMs", false);
        if (co->waiting && co->state == CO_IDLE)
            connect_coord(co);
    }
}

static void schedule_retry(pc_tc_t *tc)
{
    if (!uv_is_active((uv_handle_t *)&tc->retry_timer))
        uv_timer_start(&tc->retry_timer, on_retry, pc_backoff_next(&tc->backoff), 0);
}

/* ---- discovery ---------------------------------------------------------------- */

static void route(pc_tc_t *tc, tc_op *op)
{
    uint64_t which = op->kind == OP_NEW ? tc->next_coord++ % tc->n_coords : op->id.most;
    if (which >= tc->n_coords) {
        pc_set_detail("the transaction's id names no known coordinator");
        finish(op, PULSARC_ERR_BROKER_TXN_NOT_FOUND, (pc_txn_ids_t){ 0 });
        return;
    }
    to_coord(&tc->coords[which], op);
}

static void on_partitions(pulsarc_result res, int partitions, void *ctx)
{
    pc_tc_t *tc = ctx;
    tc->inflight--;
    tc->discovering = false;
    if (tc->closed) {
        maybe_free(tc);
        return;
    }
    if (res == PULSARC_OK && partitions <= 0) {
        res = pc_fail(PULSARC_ERR_BROKER_TXN_COORDINATOR_NOT_FOUND,
                      "the cluster has no transaction coordinator (" ASSIGN_TOPIC " does not "
                      "exist: is transactionCoordinatorEnabled=true on the brokers?)");
    } else if (res == PULSARC_OK) {
        tc->coords = calloc((size_t)partitions, sizeof *tc->coords);
        if (!tc->coords)
            res = pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    }
    if (res != PULSARC_OK) {
        /* The next request starts a new discovery. */
        char detail[512];
        snprintf(detail, sizeof detail, "%s", pulsarc_last_error_detail());
        fail_list(&tc->undiscovered, &tc->undiscovered_tail, res, detail, true);
        return;
    }
    tc->n_coords = (uint64_t)partitions;
    for (uint64_t i = 0; i < tc->n_coords; i++)
        tc->coords[i] = (coord){ .tc = tc, .id = i, .state = CO_IDLE };
    PC_INFO(tc->rt->log, "%" PRIu64 " transaction coordinator(s)", tc->n_coords);
    while (tc->undiscovered) {
        tc_op *op = tc->undiscovered;
        tc->undiscovered = op->next;
        route(tc, op);
    }
    tc->undiscovered_tail = NULL;
}

static void submit(pc_tc_t *tc, tc_op *op)
{
    if (tc->closed) {
        pc_set_detail("the client is closing");
        finish(op, PULSARC_ERR_ALREADY_CLOSED, (pc_txn_ids_t){ 0 });
        return;
    }
    op->deadline_ms = pc_mono_ms() + tc->rt->limits.operation_timeout_ms;
    if (tc->coords) {
        route(tc, op);
        return;
    }
    append(&tc->undiscovered, &tc->undiscovered_tail, op);
    if (!tc->discovering) {
        tc->discovering = true;
        tc->inflight++;
        pc_lookup_partitions(tc->rt, ASSIGN_TOPIC, on_partitions, tc);
    }
}

static tc_op *new_op(op_kind kind, void *ctx)
{
    tc_op *op = calloc(1, sizeof *op);
    if (op) {
        op->kind = kind;
        op->ctx = ctx;
    }
    return op;
}

/* ---- the interface ------------------------------------------------------------ */

pc_tc_t *pc_tc_new(pc_runtime_t *rt)
{
    pc_tc_t *tc = calloc(1, sizeof *tc);
    if (!tc)
        return NULL;
    tc->rt = rt;
    uv_timer_init(rt->loop, &tc->retry_timer);
    tc->retry_timer.data = tc;
    pc_backoff_init(&tc->backoff, rt->limits.initial_backoff_ms, rt->limits.max_backoff_ms);
    return tc;
}

void pc_tc_new_txn(pc_tc_t *tc, uint64_t ttl_ms, pc_tc_begun_cb cb, void *ctx)
{
    tc_op *op = new_op(OP_NEW, ctx);
    if (!op) {
        pc_set_detail("out of memory");
        cb(PULSARC_ERR_NO_MEMORY, (pc_txn_ids_t){ 0 }, ctx);
        return;
    }
    op->ttl_ms = ttl_ms;
    op->begun = cb;
    submit(tc, op);
}

void pc_tc_add_partition(pc_tc_t *tc, pc_txn_ids_t id, const char *partition, pc_tc_done_cb cb,
                         void *ctx)
{
    tc_op *op = new_op(OP_ADD_PARTITION, ctx);
    if (op && !(op->partition = strdup(partition))) {
        free(op);
        op = NULL;
    }
    if (!op) {
        pc_set_detail("out of memory");
        cb(PULSARC_ERR_NO_MEMORY, ctx);
        return;
    }
    op->id = id;
    op->done = cb;
    submit(tc, op);
}

void pc_tc_end_txn(pc_tc_t *tc, pc_txn_ids_t id, bool commit, pc_tc_done_cb cb, void *ctx)
{
    tc_op *op = new_op(OP_END, ctx);
    if (!op) {
        pc_set_detail("out of memory");
        cb(PULSARC_ERR_NO_MEMORY, ctx);
        return;
    }
    op->id = id;
    op->commit = commit;
    op->done = cb;
    submit(tc, op);
}

static void on_timer_closed(uv_handle_t *h)
{
    pc_tc_t *tc = h->data;
    tc->timer_closed = true;
    maybe_free(tc);
}

void pc_tc_close(pc_tc_t *tc)
{
    if (!tc || tc->closed)
        return;
    tc->closed = true;
    const char *why = "the client is closing";
    fail_list(&tc->undiscovered, &tc->undiscovered_tail, PULSARC_ERR_ALREADY_CLOSED, why, true);
    for (uint64_t i = 0; i < tc->n_coords; i++) {
        coord *co = &tc->coords[i];
        fail_list(&co->waiting, &co->waiting_tail, PULSARC_ERR_ALREADY_CLOSED, why, true);
        if (co->listening)
            pc_conn_remove_listener(co->conn, &co->listener);
        co->listening = false;
    }
    uv_close((uv_handle_t *)&tc->retry_timer, on_timer_closed);
}
