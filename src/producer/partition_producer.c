/* The partition producer's lifecycle: create, close (flush first, bounded by
 * operationTimeoutMs), abort, free; the accessors. @locality loop thread. */
#include "producer/pp_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "common/clock.h"
#include "common/error.h"
#include "common/log.h"
#include "wire/frame.h"

const char *pc_pp_name(const pc_pp_t *pp)
{
    return pp->name ? pp->name : "";
}
int64_t pc_pp_last_sequence_id(const pc_pp_t *pp)
{
    return atomic_load(&pp->last_sequence_id);
}
uint32_t pc_pp_max_message_size(const pc_pp_t *pp)
{
    return pp->max_message_size;
}
int64_t pc_pp_schema_version(const pc_pp_t *pp)
{
    return atomic_load(&pp->schema_version);
}
const pc_pp_counters_t *pc_pp_counters(const pc_pp_t *pp)
{
    return &pp->counters;
}

pulsarc_result pc_pp_last_attempt(const pc_pp_t *pp, const char **detail)
{
    *detail = pp->attempt_detail;
    if (pp->sequence_known)
        return PULSARC_OK;
    /* Still waiting in the broker's queue for exclusive access: that is why. */
    if (pp->registering && pp->conn && pc_conn_request_queued(pp->conn, pp->registration_rid)) {
        *detail = PC_CONN_QUEUED_DETAIL;
        return PULSARC_ERR_TIMEOUT;
    }
    return pp->attempt_res;
}

pc_plan_rules_t pc_pp_plan_rules(const pc_pp_settings_t *set)
{
    return (pc_plan_rules_t){
        .batching = set->batching_enabled,
        .compressed = set->compression != PC_CODEC_NONE,
        .encrypted = set->encryption.key_names != NULL,
        .batching_max_bytes = set->batching_max_bytes,
    };
}

void pc_pp_set_state(pc_pp_t *pp, pp_state s)
{
    pp->state = s;
    bool down = s != PP_IDLE && s != PP_READY;
    if (!pp->down || down == pp->counted)
        return;
    pp->counted = down;
    atomic_fetch_add(pp->down, down ? 1 : -1);
}

void pc_pp_leave_count(pc_pp_t *pp)
{
    if (pp->counted)
        atomic_fetch_sub(pp->down, 1);
    pp->counted = false;
    pp->down = NULL;
    pp->disconnected_at = NULL;
}

static void maybe_free(pc_pp_t *pp)
{
    if (!pp->freed || pp->live_handles > 0 || pp->inflight > 0)
        return;
    pc_batcher_free(&pp->batcher);
    pc_compressor_clear(&pp->compressor);
    pc_pp_schema_free_all(pp);
    pc_encryptor_free(pp->enc);
    free(pp->taken);
    free(pp->topic);
    free(pp->name);
    free(pp->moved_to);
    free(pp);
}

/* Every asynchronous call made with pp as context holds it alive until it calls back. */
bool pc_pp_callback_returned(pc_pp_t *pp)
{
    pp->inflight--;
    if (pp->freed) {
        maybe_free(pp);
        return false;
    }
    return true;
}

static void on_timer_closed(uv_handle_t *h)
{
    pc_pp_t *pp = h->data;
    pp->live_handles--;
    maybe_free(pp);
}

/* The producer is closed: whatever is still pending fails, then the closer hears. */
void pc_pp_finish_close(pc_pp_t *pp, pulsarc_result res)
{
    uv_timer_stop(&pp->close_timer);
    uv_timer_stop(&pp->reconnect_timer);
    /* A close may come while a registration is in flight: the connection must not keep
     * our listener, and the answers to that attempt are stale from now on. */
    pc_pp_abandon_registration(pp);
    if (pp->conn && pc_conn_state(pp->conn) != PC_CONN_CLOSED)
        pc_conn_remove_listener(pp->conn, &pp->listener);
    pp->conn = NULL;
    pp->attempt++;
    pc_pp_set_state(pp, PP_CLOSED);
    /* Messages already written may have been stored; the rest were never sent. */
    pc_pp_fail_all_in_doubt(pp, PULSARC_ERR_ALREADY_CLOSED, "producer closed");
    pc_pp_done_fn cb = pp->close_cb;
    pp->close_cb = NULL;
    if (cb)
        cb(pp, res, pp->close_ctx);
}

pc_pp_t *pc_pp_new(pc_runtime_t *rt, const char *topic, int partition, const pc_pp_settings_t *set,
                   const pc_pp_hooks_t *hooks)
{
    pc_pp_t *pp = calloc(1, sizeof *pp);
    if (!pp)
        return NULL;
    pp->set = *set;
    pp->compressor.level = set->compression_level;
    pp->set.producer_name = NULL;        /* pp->name is the copy that lives */
    pp->set.encryption.key_names = NULL; /* pp->enc keeps its own copy */
    pp->user_named = set->producer_name != NULL;
    bool enc_oom = false;
    if (!(pp->topic = strdup(topic)) ||
        (set->producer_name && !(pp->name = strdup(set->producer_name))) ||
        (!(pp->enc = pc_encryptor_new(&set->encryption, rt->log, topic, &enc_oom)) && enc_oom)) {
        free(pp->topic);
        free(pp->name);
        free(pp);
        return NULL;
    }
    pp->name_len = pp->name ? strlen(pp->name) : 0;
    pp->rt = rt;
    pp->partition = partition;
    pp->complete = hooks->complete;
    pp->released = hooks->released;
    pp->stopped = hooks->stopped;
    pp->owner = hooks->owner;
    pp->down = hooks->down;
    pp->disconnected_at = hooks->disconnected_at;
    pp->records = hooks->records;
    pp->state = PP_IDLE;
    pp->producer_id = rt->next_producer_id++;
    pp->max_message_size = PC_FRAME_DEFAULT_MAX_MESSAGE_SIZE;
    pp->pushed = -1;
    /* A random start, so that a restarted process never repeats an earlier one's uuids
     * (the clock will do if no random bytes can be had). Asked of the kernel: uniqueness
     * is all it is for, and OpenSSL's generator costs some 6 million instructions to set
     * up, in a process that may never encrypt. */
    if (getrandom(&pp->chunk_attempts, sizeof pp->chunk_attempts, GRND_NONBLOCK) !=
        (ssize_t)sizeof pp->chunk_attempts)
        pp->chunk_attempts = pc_wall_ms() << 20;
    atomic_init(&pp->last_sequence_id, -1);
    atomic_init(&pp->schema_version, -1);
    pp->listener.producer_id = pp->producer_id;
    pp->listener.ctx = pp;
    pp->listener.on_receipt = pc_pp_on_receipt;
    pp->listener.on_send_error = pc_pp_on_send_error;
    pp->listener.on_broker_close = pc_pp_on_broker_close;
    pp->listener.on_migrated = pc_pp_on_migrated;
    pp->listener.on_disconnect = pc_pp_on_disconnect;
    pp->cluster_listener.on_switch = pc_pp_on_cluster_switch;
    pc_backoff_init(&pp->backoff, rt->limits.initial_backoff_ms, rt->limits.max_backoff_ms);
    if (pc_batcher_init(&pp->batcher, pp->set.batcher == PC_BATCHER_KEY_BASED,
                        pp->set.batching_max_messages, pp->set.batching_max_bytes) != 0 ||
        !(pp->taken = calloc(4, sizeof *pp->taken))) {
        pc_batcher_free(&pp->batcher);
        pc_encryptor_free(pp->enc);
        free(pp->topic);
        free(pp->name);
        free(pp);
        return NULL;
    }
    pc_batcher_set_frame_limit(&pp->batcher, pp->max_message_size);
    pp->batcher.taken = pp->records.taken;
    pp->set.schema = pc_schema_ref(set->schema);
    uv_timer_init(rt->loop, &pp->reconnect_timer);
    uv_timer_init(rt->loop, &pp->timeout_timer);
    uv_timer_init(rt->loop, &pp->batch_timer);
    uv_timer_init(rt->loop, &pp->close_timer);
    pp->reconnect_timer.data = pp;
    pc_cluster_listen(rt, &pp->cluster_listener);
    pp->timeout_timer.data = pp;
    pp->batch_timer.data = pp;
    pp->close_timer.data = pp;
    pp->cap_taken = 4;
    pp->live_handles = 4;
    if (pp->set.send_timeout_ms > 0) {
        /* Check often enough that a message fails close to its deadline. */
        uint64_t every = pp->set.send_timeout_ms / 10;
        every = every < 10 ? 10 : every > 1000 ? 1000 : every;
        uv_timer_start(&pp->timeout_timer, pc_pp_on_timeout_tick, every, every);
    }
    return pp;
}

static void on_closed_by_broker_answer(pc_conn_t *conn, pulsarc_result res,
                                       const Pulsar__Proto__BaseCommand *resp, void *ctx)
{
    pc_pp_t *pp = ctx;
    if (!pc_pp_callback_returned(pp) || pp->state != PP_CLOSING)
        return;
    if (pp->conn && pc_conn_state(pp->conn) != PC_CONN_CLOSED)
        pc_conn_remove_listener(pp->conn, &pp->listener);
    /* A dropped connection closes the producer on the broker just as well. */
    pc_pp_finish_close(pp, res == PULSARC_ERR_CONNECTION_CLOSED ? PULSARC_OK : res);
}

static void close_after_flush(pc_pp_t *pp, pulsarc_result res, void *ctx)
{
    if (pp->state == PP_CLOSED || pp->state == PP_CLOSING)
        return;
    uv_timer_stop(&pp->reconnect_timer);
    if (pp->state != PP_READY) {
        /* Not registered anywhere: nothing to tell the broker. */
        pc_pp_finish_close(pp, PULSARC_OK);
        return;
    }
    pc_pp_set_state(pp, PP_CLOSING);
    Pulsar__Proto__CommandCloseProducer close = PULSAR__PROTO__COMMAND_CLOSE_PRODUCER__INIT;
    Pulsar__Proto__BaseCommand cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    uint64_t rid = pc_conn_new_request_id(pp->conn);
    close.producer_id = pp->producer_id;
    close.request_id = rid;
    cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__CLOSE_PRODUCER;
    cmd.close_producer = &close;
    pp->inflight++;
    pc_conn_request(pp->conn, &cmd, rid, on_closed_by_broker_answer, pp);
}

/* The close took longer than operationTimeoutMs (no receipts, a dead broker): stop
 * waiting. Messages still pending fail; a frame already written may have been stored. */
static void on_close_deadline(uv_timer_t *t)
{
    pc_pp_t *pp = t->data;
    if (pp->state == PP_CLOSED)
        return;
    PC_WARN(pp->rt->log, "%s: close did not finish within operationTimeoutMs", pp->topic);
    if (pp->conn && pc_conn_state(pp->conn) == PC_CONN_READY && pp->state == PP_READY) {
        pc_pp_send_close_producer(pp);
    }
    if (pp->conn && pc_conn_state(pp->conn) != PC_CONN_CLOSED)
        pc_conn_remove_listener(pp->conn, &pp->listener);
    uv_timer_stop(&pp->reconnect_timer);
    pc_pp_finish_close(pp, PULSARC_ERR_TIMEOUT);
}

void pc_pp_close(pc_pp_t *pp, pc_pp_done_fn cb, void *ctx)
{
    if (pp->state == PP_CLOSED || pp->state == PP_FAILED || pp->state == PP_IDLE) {
        pc_pp_set_state(pp, PP_CLOSED);
        cb(pp, PULSARC_OK, ctx);
        return;
    }
    pp->close_cb = cb;
    pp->close_ctx = ctx;
    uv_timer_start(&pp->close_timer, on_close_deadline, pp->rt->limits.operation_timeout_ms, 0);
    pc_pp_flush(pp, close_after_flush, NULL);
}

void pc_pp_abort(pc_pp_t *pp, pulsarc_result why, const char *detail)
{
    pc_pp_abandon_registration(pp);
    if (pp->conn && pc_conn_state(pp->conn) != PC_CONN_CLOSED)
        pc_conn_remove_listener(pp->conn, &pp->listener);
    pp->conn = NULL;
    uv_timer_stop(&pp->reconnect_timer);
    uv_timer_stop(&pp->timeout_timer);
    uv_timer_stop(&pp->batch_timer);
    uv_timer_stop(&pp->close_timer);
    pp_state before = pp->state;
    pc_pp_set_state(pp, PP_CLOSED);
    /* Messages already written may have been stored (a client destroyed while receipts
     * were on their way); the rest were never sent. */
    pc_pp_fail_all_in_doubt(pp, why, detail);
    if (pp->start_cb && before == PP_CONNECTING) {
        pc_pp_done_fn cb = pp->start_cb;
        pp->start_cb = NULL;
        pc_set_detail(detail);
        cb(pp, why, pp->start_ctx);
    }
    if (pp->close_cb) {
        pc_pp_done_fn cb = pp->close_cb;
        pp->close_cb = NULL;
        cb(pp, PULSARC_OK, pp->close_ctx);
    }
    /* Flush waiters whose ops all failed above have run; none can be left. */
}

void pc_pp_free(pc_pp_t *pp)
{
    if (!pp)
        return;
    if (pp->state != PP_CLOSED)
        pc_pp_abort(pp, PULSARC_ERR_ALREADY_CLOSED, "producer freed");
    pp->freed = true;
    pc_pp_leave_count(pp); /* gone: no longer one of the owner's producers */
    pc_cluster_unlisten(pp->rt, &pp->cluster_listener);
    uv_close((uv_handle_t *)&pp->reconnect_timer, on_timer_closed);
    uv_close((uv_handle_t *)&pp->timeout_timer, on_timer_closed);
    uv_close((uv_handle_t *)&pp->batch_timer, on_timer_closed);
    uv_close((uv_handle_t *)&pp->close_timer, on_timer_closed);
    maybe_free(pp);
}
