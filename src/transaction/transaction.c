/* Transactions: begin, commit, abort, state, free; the partitions a transaction has
 * registered with its coordinator, the sends waiting for a registration, and the count of
 * sends without a result that a commit or abort waits for. @locality any thread for the
 * public calls; the rest on the loop thread. */
#include "transaction/transaction.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/client.h"
#include "common/error.h"
#include "txn/coordinator.h"

/* A topic partition of the transaction: registered (ADD_PARTITION_TO_TXN answered), or
 * being registered with the sends that wait for it, in order. */
typedef struct txn_partition {
    struct txn_partition *next;
    bool registered;
    pc_transaction_waiter_t *waiting, *waiting_tail; /* the sends that wait, in order */
    pulsarc_txn_t *txn;
    char name[];
} txn_partition;

typedef struct txn_end {
    pc_task_t task;
    struct pulsarc_txn *txn;
    bool commit;
    pulsarc_txn_done_cb cb;
    void *ctx;
} txn_end;

struct pulsarc_txn {
    pulsarc_client_t *client;
    atomic_int refs;   /* the application's, each accepted send's, the loop's work */
    _Atomic int state; /* pulsarc_txn_state */
    pc_txn_ids_t id;   /* written before the application has the handle */
    /* Loop thread. */
    uint64_t pending;      /* sends handed over without a result yet */
    pulsarc_result failed; /* the first send that failed, or PULSARC_OK */
    char failed_detail[256];
    txn_partition *partitions;
    txn_end *end; /* a commit or abort waiting for pending to reach 0 */
    bool ending;  /* the commit's or abort's task has run: sends that reach
                                  the loop after it are refused (those posted before it by
                                  the same thread ran before it) */
};

static void txn_release(pulsarc_txn_t *txn)
{
    if (atomic_fetch_sub(&txn->refs, 1) != 1)
        return;
    for (txn_partition *p = txn->partitions, *next; p; p = next) {
        next = p->next;
        free(p);
    }
    free(txn);
}

void pc_transaction_hold(pulsarc_txn_t *txn)
{
    atomic_fetch_add(&txn->refs, 1);
}

pc_txn_ids_t pc_transaction_ids(const pulsarc_txn_t *txn)
{
    return txn->id;
}

pulsarc_result pc_transaction_check_send(pulsarc_txn_t *txn, const pulsarc_client_t *client)
{
    if (txn->client != client)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT, "the transaction belongs to another client");
    if (atomic_load(&txn->state) != PULSARC_TXN_OPEN)
        return pc_fail(PULSARC_ERR_TXN_STATE, "the transaction is no longer open");
    return PULSARC_OK;
}

/* ---- the coordinator client, made at the first begin ------------------------------ */

typedef struct tc_holder {
    pc_shutdown_hook_t hook;
    pulsarc_client_t *client;
} tc_holder;

static void close_coordinator(pc_shutdown_hook_t *hook)
{
    tc_holder *h = (tc_holder *)hook;
    pc_tc_close(h->client->tc);
    h->client->tc = NULL;
    free(h);
}

static pc_tc_t *coordinator(pulsarc_client_t *c)
{
    if (c->tc)
        return c->tc;
    tc_holder *h = calloc(1, sizeof *h);
    if (!h)
        return NULL;
    if (!(c->tc = pc_tc_new(&c->rt))) {
        free(h);
        return NULL;
    }
    h->client = c;
    h->hook.run = close_coordinator;
    pc_client_on_shutdown(c, &h->hook);
    return c->tc;
}

/* ---- begin ---------------------------------------------------------------------- */

typedef struct txn_begin {
    pc_task_t task;
    pulsarc_txn_t *txn;
    uint64_t timeout_ms;
    pulsarc_txn_begin_cb cb;
    void *ctx;
} txn_begin;

static void on_begun(pulsarc_result res, pc_txn_ids_t id, void *ctx)
{
    txn_begin *b = ctx;
    pulsarc_txn_t *txn = b->txn;
    if (res == PULSARC_OK) {
        txn->id = id;
    } else {
        txn_release(txn);
        txn = NULL;
    }
    b->cb(res, txn, b->ctx);
    free(b);
}

static void run_begin(pc_task_t *t)
{
    txn_begin *b = (txn_begin *)t;
    pulsarc_client_t *c = b->txn->client;
    pc_tc_t *tc = c->rt.stopping ? NULL : coordinator(c);
    if (!tc) {
        pulsarc_result res = c->rt.stopping
                                 ? pc_fail(PULSARC_ERR_ALREADY_CLOSED, "the client is closing")
                                 : pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
        on_begun(res, (pc_txn_ids_t){ 0 }, b);
        return;
    }
    pc_tc_new_txn(tc, b->timeout_ms, on_begun, b);
}

pulsarc_result pulsarc_txn_begin_async(pulsarc_client_t *client, uint64_t timeout_ms,
                                       pulsarc_txn_begin_cb cb, void *ctx)
{
    if (!client || !cb)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT, "client and callback must not be NULL");
    if (timeout_ms < 1 || timeout_ms > INT32_MAX)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT, "timeout_ms must be 1 .. 2^31-1");
    if (!client->conf.enable_transaction)
        return pc_fail(PULSARC_ERR_TXN_DISABLED,
                       "transactions need enableTransaction=true in the client configuration");
    pulsarc_result res = pc_client_check_open(client);
    if (res != PULSARC_OK)
        return res;
    txn_begin *b = calloc(1, sizeof *b);
    pulsarc_txn_t *txn = calloc(1, sizeof *txn);
    if (!b || !txn) {
        free(b);
        free(txn);
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    }
    txn->client = client;
    atomic_init(&txn->refs, 1);
    atomic_init(&txn->state, PULSARC_TXN_OPEN);
    b->txn = txn;
    b->timeout_ms = timeout_ms;
    b->cb = cb;
    b->ctx = ctx;
    b->task.run = run_begin;
    pc_client_post(client, &b->task);
    return PULSARC_OK;
}

typedef struct sync_begin {
    pc_waiter_t waiter;
    pulsarc_txn_t *txn;
} sync_begin;

static void on_sync_begun(pulsarc_result res, pulsarc_txn_t *txn, void *ctx)
{
    sync_begin *s = ctx;
    s->txn = txn;
    pc_waiter_signal(&s->waiter, res, pulsarc_last_error_detail());
}

pulsarc_result pulsarc_txn_begin(pulsarc_client_t *client, uint64_t timeout_ms, pulsarc_txn_t **out)
{
    if (!out)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT, "out must not be NULL");
    *out = NULL;
    if (!client)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT, "client must not be NULL");
    pulsarc_result res = pc_client_may_block(client, "pulsarc_txn_begin");
    if (res != PULSARC_OK)
        return res;
    sync_begin s = { .txn = NULL };
    pc_waiter_init(&s.waiter);
    res = pulsarc_txn_begin_async(client, timeout_ms, on_sync_begun, &s);
    if (res == PULSARC_OK)
        res = pc_waiter_wait(&s.waiter);
    pc_waiter_destroy(&s.waiter);
    *out = s.txn;
    return res;
}

/* ---- sends ---------------------------------------------------------------------- */

void pc_transaction_note_result(pulsarc_txn_t *txn, pulsarc_result res, const char *detail)
{
    if (res == PULSARC_OK || txn->failed != PULSARC_OK)
        return;
    txn->failed = res;
    snprintf(txn->failed_detail, sizeof txn->failed_detail, "%s", detail ? detail : "");
}

static void on_registered(pulsarc_result res, void *ctx)
{
    txn_partition *p = ctx;
    pulsarc_txn_t *txn = p->txn;
    char detail[512];
    snprintf(detail, sizeof detail, "registering %s with the transaction: %s", p->name,
             pulsarc_last_error_detail());
    p->registered = res == PULSARC_OK;
    pc_transaction_waiter_t *w = p->waiting;
    p->waiting = p->waiting_tail = NULL;
    while (w) {
        pc_transaction_waiter_t *next = w->next;
        w->next = NULL;
        if (res != PULSARC_OK)
            pc_set_detail(detail);
        w->resume(w, res);
        w = next;
    }
    if (res != PULSARC_OK) {
        /* Forget it: a later send to the partition tries the registration again. */
        for (txn_partition **pp = &txn->partitions; *pp; pp = &(*pp)->next) {
            if (*pp == p) {
                *pp = p->next;
                break;
            }
        }
        free(p);
    }
    txn_release(txn);
}

/* Wait for partition, registering it (the first send to it asks the coordinator). */
static pc_transaction_admit_t wait_for(pulsarc_txn_t *txn, const char *partition,
                                       pc_transaction_waiter_t *w, pulsarc_result *res)
{
    txn_partition *p = txn->partitions;
    while (p && strcmp(p->name, partition) != 0)
        p = p->next;
    if (p && p->registered)
        return PC_TRANSACTION_GO;
    w->next = NULL;
    if (p) {
        p->waiting_tail->next = w;
        p->waiting_tail = w;
        return PC_TRANSACTION_WAIT;
    }
    size_t len = strlen(partition);
    if (!(p = calloc(1, sizeof *p + len + 1))) {
        *res = pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
        return PC_TRANSACTION_REFUSED;
    }
    memcpy(p->name, partition, len + 1);
    p->txn = txn;
    p->next = txn->partitions;
    txn->partitions = p;
    p->waiting = p->waiting_tail = w;
    pc_transaction_hold(txn); /* until the registration answers */
    pc_tc_t *tc = txn->client->tc;
    if (tc) {
        pc_tc_add_partition(tc, txn->id, partition, on_registered, p);
    } else {
        pc_set_detail("the client is closing");
        on_registered(PULSARC_ERR_ALREADY_CLOSED, p);
    }
    return PC_TRANSACTION_WAIT;
}

void pc_transaction_send_begins(pulsarc_txn_t *txn)
{
    txn->pending++;
}

pc_transaction_admit_t pc_transaction_admit(pulsarc_txn_t *txn, const char *partition,
                                            pc_transaction_waiter_t *w, pulsarc_result *res)
{
    if (txn->ending) {
        *res = pc_fail(PULSARC_ERR_TXN_STATE,
                       "the transaction's commit or abort began before this send reached it");
        return PC_TRANSACTION_REFUSED;
    }
    return wait_for(txn, partition, w, res);
}

/* ---- commit and abort ----------------------------------------------------------- */

static void end_done(pulsarc_txn_t *txn, txn_end *e, pulsarc_result res, int state)
{
    atomic_store(&txn->state, state);
    if (e->cb)
        e->cb(txn, res, e->ctx);
    free(e);
    txn_release(txn);
}

typedef struct end_call {
    pulsarc_txn_t *txn;
    txn_end *end;
    bool failed_commit; /* an abort in place of a commit whose sends failed */
} end_call;

static void on_ended(pulsarc_result res, void *ctx)
{
    end_call *call = ctx;
    pulsarc_txn_t *txn = call->txn;
    txn_end *e = call->end;
    bool failed_commit = call->failed_commit;
    free(call);
    if (res != PULSARC_OK) {
        end_done(txn, e, res, PULSARC_TXN_ERROR);
    } else if (failed_commit) {
        pc_fail(PULSARC_ERR_TXN_OPERATION_FAILED,
                "a send in the transaction failed (%s: %s); the transaction was aborted",
                pulsarc_result_name(txn->failed), txn->failed_detail);
        end_done(txn, e, PULSARC_ERR_TXN_OPERATION_FAILED, PULSARC_TXN_ABORTED);
    } else {
        end_done(txn, e, PULSARC_OK, e->commit ? PULSARC_TXN_COMMITTED : PULSARC_TXN_ABORTED);
    }
}

/* Every send has its result: ask the coordinator. */
static void end_now(pulsarc_txn_t *txn)
{
    txn_end *e = txn->end;
    txn->end = NULL;
    end_call *call = calloc(1, sizeof *call);
    pc_tc_t *tc = txn->client->tc;
    if (!call || !tc) {
        free(call);
        pulsarc_result res = tc ? pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory")
                                : pc_fail(PULSARC_ERR_ALREADY_CLOSED, "the client is closing");
        end_done(txn, e, res, PULSARC_TXN_ERROR);
        return;
    }
    call->txn = txn;
    call->end = e;
    call->failed_commit = e->commit && txn->failed != PULSARC_OK;
    if (call->failed_commit)
        atomic_store(&txn->state, PULSARC_TXN_ABORTING);
    pc_tc_end_txn(tc, txn->id, e->commit && !call->failed_commit, on_ended, call);
}

void pc_transaction_send_done(pulsarc_txn_t *txn)
{
    if (--txn->pending == 0 && txn->end)
        end_now(txn);
    txn_release(txn);
}

static void run_end(pc_task_t *t)
{
    txn_end *e = (txn_end *)t;
    pulsarc_txn_t *txn = e->txn;
    txn->end = e;
    txn->ending = true;
    if (txn->pending == 0)
        end_now(txn);
}

static pulsarc_result end_async(pulsarc_txn_t *txn, bool commit, pulsarc_txn_done_cb cb, void *ctx)
{
    if (!txn)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT, "txn must not be NULL");
    pulsarc_result res = pc_client_check_open(txn->client);
    if (res != PULSARC_OK)
        return res;
    int open = PULSARC_TXN_OPEN;
    if (!atomic_compare_exchange_strong(&txn->state, &open,
                                        commit ? PULSARC_TXN_COMMITTING : PULSARC_TXN_ABORTING))
        return pc_fail(PULSARC_ERR_TXN_STATE, "the transaction is not open: its commit or "
                                              "abort was called already");
    txn_end *e = calloc(1, sizeof *e);
    if (!e) {
        atomic_store(&txn->state, PULSARC_TXN_OPEN);
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    }
    e->txn = txn;
    e->commit = commit;
    e->cb = cb;
    e->ctx = ctx;
    e->task.run = run_end;
    pc_transaction_hold(txn); /* until the end is done */
    pc_client_post(txn->client, &e->task);
    return PULSARC_OK;
}

pulsarc_result pulsarc_txn_commit_async(pulsarc_txn_t *txn, pulsarc_txn_done_cb cb, void *ctx)
{
    return end_async(txn, true, cb, ctx);
}

pulsarc_result pulsarc_txn_abort_async(pulsarc_txn_t *txn, pulsarc_txn_done_cb cb, void *ctx)
{
    return end_async(txn, false, cb, ctx);
}

static void on_sync_ended(pulsarc_txn_t *txn, pulsarc_result res, void *ctx)
{
    (void)txn;
    pc_waiter_signal(ctx, res, pulsarc_last_error_detail());
}

static pulsarc_result end_sync(pulsarc_txn_t *txn, bool commit)
{
    if (!txn)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT, "txn must not be NULL");
    pulsarc_result res = pc_client_may_block(txn->client,
                                             commit ? "pulsarc_txn_commit" : "pulsarc_txn_abort");
    if (res != PULSARC_OK)
        return res;
    pc_waiter_t w;
    pc_waiter_init(&w);
    res = end_async(txn, commit, on_sync_ended, &w);
    if (res == PULSARC_OK)
        res = pc_waiter_wait(&w);
    pc_waiter_destroy(&w);
    return res;
}

pulsarc_result pulsarc_txn_commit(pulsarc_txn_t *txn)
{
    return end_sync(txn, true);
}

pulsarc_result pulsarc_txn_abort(pulsarc_txn_t *txn)
{
    return end_sync(txn, false);
}

pulsarc_txn_state pulsarc_txn_get_state(const pulsarc_txn_t *txn)
{
    return txn ? (pulsarc_txn_state)atomic_load(&((pulsarc_txn_t *)txn)->state) : PULSARC_TXN_ERROR;
}

void pulsarc_txn_id(const pulsarc_txn_t *txn, uint64_t *most_bits, uint64_t *least_bits)
{
    if (most_bits)
        *most_bits = txn ? txn->id.most : 0;
    if (least_bits)
        *least_bits = txn ? txn->id.least : 0;
}

void pulsarc_txn_free(pulsarc_txn_t *txn)
{
    if (txn)
        txn_release(txn);
}
