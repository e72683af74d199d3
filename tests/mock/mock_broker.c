/* The scriptable mock broker: see mock_broker.h for what it does.
 *
 * Threading: one mutex guards all state. The broker thread holds it except while it
 * sleeps in poll(); test threads take it in every public call. Only the broker thread
 * touches sockets (reads, writes, closes), so a test thread never closes an fd the thread
 * is polling: it marks connections dead or queues bytes, wakes the thread through a
 * pipe, and (for calls whose effect the test relies on) waits until the thread has run
 * one full iteration after the request. */
#include "mock_broker.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "broker_commands.h"
#include "mock_broker_txns.h"
#include "common/buf.h"
#include "pulsarc/pulsarc.h"
#include "wire/frame.h"

typedef struct reg_producer {
    uint64_t id;
    char *name;
    char *topic;            /* as the PRODUCER named it */
    uint64_t request_id;    /* queued producers: the PRODUCER request to answer */
    int64_t schema_version; /* ... and its schema version (-1: none) */
} reg_producer_t;

typedef struct conn {
    int fd;
    int id;                  /* 1-based accept order, for held and delayed replies */
    bool dead;               /* close at the end of this loop iteration */
    bool close_when_flushed; /* half a reply queued by cut_next_reply: stop reading, close
                                once it is written */
    bool got_connect;
    bool connected;        /* the mock answered CONNECT with CONNECTED */
    int auth_round;        /* the auth server's next round (mock_broker_set_auth_server) */
    int protocol_version;  /* CONNECT's, for a CONNECTED the auth server lets go */
    uint64_t pings, pongs; /* PINGs the mock wrote (or parked) and PONGs that came back */
    pc_frame_reader_t reader;
    pc_buf_t out; /* bytes not yet accepted by the kernel */
    reg_producer_t *producers;
    size_t n_producers, cap_producers;
    reg_producer_t *queued; /* answered "not ready", waiting for mock_broker_grant_queued */
    size_t n_queued, cap_queued;
    uint8_t *stash; /* REORDER mode: a receipt waiting for its pair */
    size_t stash_len;
} conn_t;

/* A reply parked for later: held receipts and delayed receipts, and a barrier's PING
 * queued behind delayed receipts (mock_broker_barrier). */
typedef struct parked {
    int conn_id;
    uint64_t due_ms;
    uint8_t *data;
    size_t len;
    bool ping; /* a barrier's PING, not a receipt */
} parked_t;

typedef struct parked_queue {
    parked_t *v;
    size_t len, cap;
} parked_queue_t;

/* Highest accepted sequence id per producer name: dedup emulation and duplicate flags. */
typedef struct seq_track {
    char *name;
    uint64_t highest;
} seq_track_t;

/* One registered schema version of a topic (the mock's schema registry). */
typedef struct reg_schema {
    char *topic; /* the base topic: partitions share their topic's schemas */
    int type;
    uint8_t *data;
    size_t len;
    int64_t version;
} reg_schema_t;

struct mock_broker {
    pthread_mutex_t mu;
    pthread_cond_t cond; /* broadcast after every loop iteration and state change */
    pthread_t thread;
    bool thread_started;
    int wake_rd, wake_wr;
    int listen_fd;
    int hold_fd; /* while down: the port, bound but not listening (apply_down_state) */
    uint16_t port;
    char url[64];
    bool debug;

    bool stopping;
    uint64_t req_seq, done_seq; /* see sync_with_thread */
    uint64_t io_events;         /* connections accepted or closed, reads and writes: see
                           mock_broker_sync */

    conn_t **conns;
    size_t n_conns, cap_conns;
    int next_conn_id;

    /* knobs */
    int32_t max_message_size;
    uint32_t partitions;
    char *lookup_url;
    bool lookup_proxied;
    int64_t last_seq;
    bool dedup;
    bool refuse;
    bool want_down, is_down;
    bool up_failed;
    bool ignore_connect;
    int connect_fail_times;
    int connect_fail_error;
    char *connect_fail_msg;
    bool answer_pings;
    bool cut_after_armed;
    size_t cut_after_left;
    bool cut_next_reply;
    int redirect_times;
    char *redirect_url;
    int lookup_fail_times;
    int lookup_unanswered_times;
    int lookup_fail_error;
    char *lookup_fail_msg;
    int producer_fail_times;
    int producer_fail_error;
    char *producer_fail_msg;
    mock_receipt_mode_t receipt_mode;
    unsigned receipt_delay_ms;
    uint64_t last_due_ms;
    int send_fail_times;
    int send_fail_error;
    bool schema_enforced;
    bool schema_refuse_new;
    bool schema_ignore;
    int64_t topic_epoch;       /* PRODUCER_SUCCESS.topic_epoch; -1: none */
    bool queue_producers;      /* answer PRODUCER "not ready" and queue it */
    uint32_t txn_coordinators; /* 0: transactions off */
    int txn_fail_times[MOCK_TXN_COMMAND_COUNT];
    int txn_fail_error[MOCK_TXN_COMMAND_COUNT];
    char *txn_fail_msg[MOCK_TXN_COMMAND_COUNT];
    int txn_drop_times[MOCK_TXN_COMMAND_COUNT];
    int txn_ignore_times[MOCK_TXN_COMMAND_COUNT];

    /* state and records */
    parked_queue_t held, delayed;
    uint64_t counters[MOCK_COUNTER_COUNT];
    uint64_t next_entry;
    uint64_t next_producer_name;
    bool has_connect;
    mock_connect_info_t last_connect;
    mock_auth_server_cb auth_server;
    void *auth_server_ctx;
    bool has_auth_response;
    mock_auth_response_t last_auth_response;
    bool has_producer;
    mock_producer_info_t last_producer;
    bool has_lookup;
    mock_lookup_info_t last_lookup;
    mock_send_t *sends; /* metadata left NULL here; unpacked on copy-out */
    size_t n_sends, cap_sends;
    seq_track_t *tracks;
    size_t n_tracks, cap_tracks;
    reg_schema_t *schemas;
    size_t n_schemas, cap_schemas;
    mtxn_table_t txns;
    uint8_t rbuf[64 * 1024]; /* receive buffer; only the broker thread touches it */
    pc_buf_t reply;          /* scratch (under mu): a command being framed (send_reply) */
};

/* ---- small helpers ------------------------------------------------------------------ */

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* timeout_ms from now on the clock of mb->cond (ignored when timeout_ms < 0). */
static struct timespec deadline_in(int timeout_ms)
{
    struct timespec deadline;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    if (timeout_ms >= 0) {
        deadline.tv_sec += timeout_ms / 1000;
        deadline.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
        if (deadline.tv_nsec >= 1000000000L) {
            deadline.tv_sec++;
            deadline.tv_nsec -= 1000000000L;
        }
    }
    return deadline;
}

static void mb_log(const mock_broker_t *mb, const char *fmt, ...)
{
    if (!mb->debug)
        return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "[mock :%u] ", (unsigned)mb->port);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static const char *type_name(int type)
{
    const ProtobufCEnumValue *v =
        protobuf_c_enum_descriptor_get_value(&pulsar__proto__base_command__type__descriptor, type);
    return v ? v->name : "?";
}

/* strdup is POSIX, not C11; keep the file building in strict C11 mode regardless. */
static char *dupstr(const char *s)
{
    if (!s)
        return NULL;
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

static uint8_t *dupmem(const void *p, size_t n)
{
    /* Always allocate at least one byte so an empty payload is distinguishable from a
     * failed copy. */
    uint8_t *d = malloc(n ? n : 1);
    if (d && n)
        memcpy(d, p, n);
    return d;
}

static void copy_str(char *dst, size_t cap, const char *src)
{
    snprintf(dst, cap, "%s", src ? src : "");
}

/* Binary field to a NUL-terminated string, truncated to fit. */
static void copy_bytes(char *dst, size_t cap, const uint8_t *src, size_t len)
{
    size_t n = src ? (len < cap - 1 ? len : cap - 1) : 0;
    if (n)
        memcpy(dst, src, n);
    dst[n] = '\0';
}

/* Grow a dynamic array to hold one more element. */
static int grow(void **v, size_t *cap, size_t len, size_t elem)
{
    if (len < *cap)
        return 0;
    size_t ncap = *cap ? *cap * 2 : 8;
    void *nv = realloc(*v, ncap * elem);
    if (!nv)
        return -1;
    *v = nv;
    *cap = ncap;
    return 0;
}

static void wake(mock_broker_t *mb)
{
    char c = 1;
    /* A full pipe already guarantees a wake-up, so EAGAIN is fine to ignore. */
    ssize_t r = write(mb->wake_wr, &c, 1);
    (void)r;
}

/* Called with mu held: returns once the broker thread has finished one whole loop
 * iteration begun after this call, i.e. has acted on whatever the caller changed. */
static void sync_with_thread(mock_broker_t *mb)
{
    uint64_t mine = ++mb->req_seq;
    wake(mb);
    while (mb->done_seq < mine && !mb->stopping)
        pthread_cond_wait(&mb->cond, &mb->mu);
}

static int parked_push(parked_queue_t *q, int conn_id, uint64_t due, uint8_t *data, size_t len)
{
    if (grow((void **)&q->v, &q->cap, q->len, sizeof *q->v) != 0)
        return -1;
    q->v[q->len++] = (parked_t){ .conn_id = conn_id, .due_ms = due, .data = data, .len = len };
    return 0;
}

static void parked_pop_front(parked_queue_t *q)
{
    memmove(q->v, q->v + 1, (q->len - 1) * sizeof *q->v);
    q->len--;
}

static void parked_free(parked_queue_t *q)
{
    for (size_t i = 0; i < q->len; i++)
        free(q->v[i].data);
    free(q->v);
    q->v = NULL;
    q->len = q->cap = 0;
}

static conn_t *find_conn(mock_broker_t *mb, int id)
{
    for (size_t i = 0; i < mb->n_conns; i++)
        if (mb->conns[i]->id == id)
            return mb->conns[i];
    return NULL;
}

static bool conn_writable(const conn_t *c)
{
    return c && !c->dead && !c->close_when_flushed;
}

static seq_track_t *find_track(mock_broker_t *mb, const char *name)
{
    if (!name)
        return NULL;
    for (size_t i = 0; i < mb->n_tracks; i++)
        if (strcmp(mb->tracks[i].name, name) == 0)
            return &mb->tracks[i];
    return NULL;
}

static const reg_producer_t *producer_of(const conn_t *c, uint64_t id)
{
    for (size_t i = 0; i < c->n_producers; i++)
        if (c->producers[i].id == id)
            return &c->producers[i];
    return NULL;
}

static const char *producer_name_of(const conn_t *c, uint64_t id)
{
    const reg_producer_t *r = producer_of(c, id);
    return r ? r->name : NULL;
}

static void reg_producer_free(reg_producer_t *r)
{
    free(r->name);
    free(r->topic);
}

static void forget_producer(conn_t *c, uint64_t id)
{
    for (size_t i = 0; i < c->n_producers; i++) {
        if (c->producers[i].id == id) {
            reg_producer_free(&c->producers[i]);
            c->producers[i] = c->producers[--c->n_producers];
            return;
        }
    }
}

/* A queued producer closed before it was granted the topic is dropped, as the broker
 * fails its future (ServerCnx.handleCloseProducer). */
static void forget_queued(conn_t *c, uint64_t id)
{
    for (size_t i = 0; i < c->n_queued; i++) {
        if (c->queued[i].id == id) {
            reg_producer_free(&c->queued[i]);
            c->queued[i] = c->queued[--c->n_queued];
            return;
        }
    }
}

/* ---- output ------------------------------------------------------------------------- */

/* Queue bytes for a connection. Honours a pending cut_next_reply: only the first half
 * goes out and the connection closes once it is written. */
static void conn_write(mock_broker_t *mb, conn_t *c, const uint8_t *data, size_t len, bool raw)
{
    if (!conn_writable(c))
        return;
    if (!raw && mb->cut_next_reply) {
        mb->cut_next_reply = false;
        len /= 2;
        c->close_when_flushed = true;
        mb_log(mb, "conn %d: cutting this reply after %zu bytes", c->id, len);
    }
    if (pc_buf_append(&c->out, data, len) != 0)
        c->dead = true;
}

static void conn_flush(mock_broker_t *mb, conn_t *c)
{
    while (c->out.len > 0 && !c->dead) {
        ssize_t n = send(c->fd, c->out.data, c->out.len, MSG_NOSIGNAL);
        if (n > 0) {
            mb->io_events++;
            pc_buf_consume(&c->out, (size_t)n);
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            break;
        } else {
            mb_log(mb, "conn %d: write failed: %s", c->id, strerror(errno));
            c->dead = true;
        }
    }
    if (c->out.len == 0 && c->close_when_flushed)
        c->dead = true;
}

/* Queue on c the command an encoder of tests/support/broker_commands.h (its result is
 * `encoded`) framed into mb->reply; `what` names it for the debug log. */
static void send_reply(mock_broker_t *mb, conn_t *c, const char *what, int encoded)
{
    if (encoded != 0) {
        c->dead = true;
    } else {
        mb_log(mb, "conn %d: -> %s", c->id, what);
        conn_write(mb, c, mb->reply.data, mb->reply.len, false);
    }
    mb->reply.len = 0;
}

/* A receipt leaves now (counted only if the connection can still take it). Frees data. */
static bool write_receipt(mock_broker_t *mb, conn_t *c, uint8_t *data, size_t len)
{
    bool ok = conn_writable(c);
    if (ok) {
        mb_log(mb, "conn %d: -> SEND_RECEIPT", c->id);
        conn_write(mb, c, data, len, false);
        mb->counters[MOCK_RECEIPTS]++;
    }
    free(data);
    return ok;
}

/* Past the receipt mode: apply the delay, never letting a receipt overtake one parked
 * earlier (so a delay change mid-test cannot reorder). Takes ownership of data. */
static void deliver_receipt(mock_broker_t *mb, conn_t *c, uint8_t *data, size_t len)
{
    if (mb->receipt_delay_ms == 0 && mb->delayed.len == 0) {
        write_receipt(mb, c, data, len);
        return;
    }
    uint64_t due = now_ms() + mb->receipt_delay_ms;
    if (due < mb->last_due_ms)
        due = mb->last_due_ms;
    mb->last_due_ms = due;
    if (parked_push(&mb->delayed, c->id, due, data, len) != 0)
        free(data);
}

/* Route a fresh receipt through the receipt mode. Takes ownership of data. */
static void route_receipt(mock_broker_t *mb, conn_t *c, uint8_t *data, size_t len)
{
    switch (mb->receipt_mode) {
    case MOCK_RECEIPTS_SUPPRESS:
        free(data);
        return;
    case MOCK_RECEIPTS_HOLD:
        if (parked_push(&mb->held, c->id, 0, data, len) != 0)
            free(data);
        return;
    case MOCK_RECEIPTS_REORDER:
        if (!c->stash) {
            c->stash = data;
            c->stash_len = len;
            return;
        }
        deliver_receipt(mb, c, data, len);
        deliver_receipt(mb, c, c->stash, c->stash_len);
        c->stash = NULL;
        return;
    case MOCK_RECEIPTS_NORMAL:
    default:
        if (c->stash) { /* left over from REORDER mode: it came first */
            deliver_receipt(mb, c, c->stash, c->stash_len);
            c->stash = NULL;
        }
        deliver_receipt(mb, c, data, len);
        return;
    }
}

static void flush_stashes(mock_broker_t *mb)
{
    for (size_t i = 0; i < mb->n_conns; i++) {
        conn_t *c = mb->conns[i];
        if (c->stash) {
            deliver_receipt(mb, c, c->stash, c->stash_len);
            c->stash = NULL;
        }
    }
}

static void emit_due_receipts(mock_broker_t *mb)
{
    uint64_t now = now_ms();
    while (mb->delayed.len > 0 && mb->delayed.v[0].due_ms <= now) {
        parked_t p = mb->delayed.v[0];
        parked_pop_front(&mb->delayed);
        conn_t *c = find_conn(mb, p.conn_id);
        if (!p.ping) {
            write_receipt(mb, c, p.data, p.len);
        } else {
            if (conn_writable(c))
                conn_write(mb, c, p.data, p.len, true);
            free(p.data);
        }
    }
}

/* ---- command handlers --------------------------------------------------------------- */

static void send_error_cmd(mock_broker_t *mb, conn_t *c, uint64_t request_id, int error,
                           const char *message);

/* As the broker refuses bad credentials: an ERROR not tied to a request, then close. */
static void refuse_connect(mock_broker_t *mb, conn_t *c)
{
    if (mb->connect_fail_times > 0)
        mb->connect_fail_times--;
    mb_log(mb, "conn %d: refusing CONNECT", c->id);
    send_error_cmd(mb, c, BC_BROKER_REQUEST_ID, mb->connect_fail_error,
                   mb->connect_fail_msg ? mb->connect_fail_msg : "mock authentication failure");
    c->close_when_flushed = true;
    if (c->out.len == 0)
        c->dead = true;
}

static void send_connected(mock_broker_t *mb, conn_t *c)
{
    send_reply(mb, c, "CONNECTED",
               bc_connected(&mb->reply, "mock", c->protocol_version, mb->max_message_size));
    c->connected = true;
}

/* One round of the auth server (mock_broker_set_auth_server). */
static void auth_server_round(mock_broker_t *mb, conn_t *c, const uint8_t *data, size_t len)
{
    static uint8_t out[MOCK_AUTH_MAX];
    size_t out_len = 0;
    mock_auth_verdict_t v = mb->auth_server(mb->auth_server_ctx, c->id, c->auth_round++, data, len,
                                            out, &out_len);
    if (v == MOCK_AUTH_CHALLENGE) {
        send_reply(mb, c, "AUTH_CHALLENGE",
                   bc_auth_challenge_bytes(&mb->reply, "mock", "sasl", out, out_len));
    } else if (v == MOCK_AUTH_DONE) {
        send_connected(mb, c);
    } else {
        send_error_cmd(mb, c, BC_BROKER_REQUEST_ID,
                       PULSAR__PROTO__SERVER_ERROR__AuthenticationError, "Failed to authenticate");
        c->close_when_flushed = true;
        if (c->out.len == 0)
            c->dead = true;
    }
}

static void handle_connect(mock_broker_t *mb, conn_t *c, const Pulsar__Proto__CommandConnect *in)
{
    mb->counters[MOCK_CONNECTS]++;
    mb->has_connect = true;
    copy_str(mb->last_connect.client_version, sizeof mb->last_connect.client_version,
             in->client_version);
    mb->last_connect.protocol_version = in->has_protocol_version ? in->protocol_version : -1;
    mb->last_connect.has_auth_method_name = in->auth_method_name != NULL;
    copy_str(mb->last_connect.auth_method_name, sizeof mb->last_connect.auth_method_name,
             in->auth_method_name);
    mb->last_connect.has_proxy_to_broker_url = in->proxy_to_broker_url != NULL;
    copy_str(mb->last_connect.proxy_to_broker_url, sizeof mb->last_connect.proxy_to_broker_url,
             in->proxy_to_broker_url);
    mb->last_connect.has_auth_data = in->has_auth_data;
    mb->last_connect.auth_data_len = in->has_auth_data ? in->auth_data.len : 0;
    copy_bytes(mb->last_connect.auth_data, sizeof mb->last_connect.auth_data,
               in->has_auth_data ? in->auth_data.data : NULL, mb->last_connect.auth_data_len);
    c->got_connect = true;
    /* Refusals first: with both set, the first CONNECTs are refused, the later ignored. */
    if (mb->connect_fail_times != 0) {
        refuse_connect(mb, c);
        return;
    }
    if (mb->ignore_connect) {
        mb_log(mb, "conn %d: ignoring CONNECT", c->id);
        return;
    }

    c->protocol_version = in->has_protocol_version ? in->protocol_version : 0;
    if (mb->auth_server) {
        c->auth_round = 0;
        auth_server_round(mb, c, in->has_auth_data ? in->auth_data.data : NULL,
                          in->has_auth_data ? in->auth_data.len : 0);
        return;
    }
    send_connected(mb, c);
}

static void handle_auth_response(mock_broker_t *mb, conn_t *c,
                                 const Pulsar__Proto__CommandAuthResponse *in)
{
    mb->counters[MOCK_AUTH_RESPONSES]++;
    mb->has_auth_response = true;
    mock_auth_response_t *r = &mb->last_auth_response;
    const Pulsar__Proto__AuthData *d = in->response;
    copy_str(r->auth_method_name, sizeof r->auth_method_name, d ? d->auth_method_name : NULL);
    r->auth_data_len = d && d->has_auth_data ? d->auth_data.len : 0;
    copy_bytes(r->auth_data, sizeof r->auth_data, r->auth_data_len ? d->auth_data.data : NULL,
               r->auth_data_len);
    if (mb->auth_server && !c->connected)
        auth_server_round(mb, c, r->auth_data_len ? d->auth_data.data : NULL, r->auth_data_len);
}

#define MOCK_TXN_ASSIGN_TOPIC "persistent://pulsar/system/transaction_coordinator_assign"

static void handle_partitioned_metadata(mock_broker_t *mb, conn_t *c,
                                        const Pulsar__Proto__CommandPartitionedTopicMetadata *in)
{
    mb->counters[MOCK_PARTITION_METADATA]++;
    bool assign = in->topic && strcmp(in->topic, MOCK_TXN_ASSIGN_TOPIC) == 0;
    send_reply(mb, c, "PARTITIONED_METADATA_RESPONSE",
               bc_partitions(&mb->reply, in->request_id,
                             assign ? mb->txn_coordinators : mb->partitions));
}

static void handle_lookup(mock_broker_t *mb, conn_t *c, const Pulsar__Proto__CommandLookupTopic *in)
{
    mb->counters[MOCK_LOOKUPS]++;
    int encoded;
    mb->has_lookup = true;
    copy_str(mb->last_lookup.topic, sizeof mb->last_lookup.topic, in->topic);
    mb->last_lookup.authoritative = in->has_authoritative && in->authoritative;
    mb->last_lookup.has_listener_name = in->advertised_listener_name != NULL;
    copy_str(mb->last_lookup.listener_name, sizeof mb->last_lookup.listener_name,
             in->advertised_listener_name);
    if (mb->lookup_unanswered_times != 0) {
        if (mb->lookup_unanswered_times > 0)
            mb->lookup_unanswered_times--;
        return;
    }
    if (mb->lookup_fail_times != 0) {
        if (mb->lookup_fail_times > 0)
            mb->lookup_fail_times--;
        encoded = bc_lookup_failed(&mb->reply, in->request_id, mb->lookup_fail_error,
                                   mb->lookup_fail_msg ? mb->lookup_fail_msg
                                                       : "mock lookup failure");
    } else if (mb->redirect_times != 0 && mb->redirect_url) {
        if (mb->redirect_times > 0)
            mb->redirect_times--;
        encoded = bc_lookup_redirect(&mb->reply, in->request_id, mb->redirect_url, NULL, false);
    } else {
        encoded = bc_lookup_connect(&mb->reply, in->request_id,
                                    mb->lookup_url ? mb->lookup_url : mb->url, NULL,
                                    mb->lookup_proxied);
    }
    send_reply(mb, c, "LOOKUP_RESPONSE", encoded);
}

static void send_error_cmd(mock_broker_t *mb, conn_t *c, uint64_t request_id, int error,
                           const char *message)
{
    send_reply(mb, c, "ERROR", bc_error(&mb->reply, request_id, error, message));
}

/* ---- schema registry ---------------------------------------------------------------- */

/* The topic a partition belongs to: schemas are registered per topic. */
static size_t base_topic_len(const char *topic)
{
    const char *p = strstr(topic, "-partition-");
    return p ? (size_t)(p - topic) : strlen(topic);
}

static bool same_topic(const reg_schema_t *r, const char *topic)
{
    size_t n = base_topic_len(topic);
    return strlen(r->topic) == n && !strncmp(r->topic, topic, n);
}

static const reg_schema_t *latest_schema(const mock_broker_t *mb, const char *topic)
{
    const reg_schema_t *last = NULL;
    for (size_t i = 0; i < mb->n_schemas; i++)
        if (same_topic(&mb->schemas[i], topic))
            last = &mb->schemas[i];
    return last;
}

/* The registry's answer to a schema a producer brings (or to none, schema NULL), as the
 * real broker decides with auto-update on: an existing identical version is reused; a
 * different type is incompatible; a new definition of the same type becomes the next
 * version unless the mock refuses new versions; no schema is refused only when the topic
 * has one and validation is enforced. Returns 0 and the version (-1: none), or the
 * ServerError with message. */
static int register_schema(mock_broker_t *mb, const char *topic, const Pulsar__Proto__Schema *in,
                           int64_t *version, char *msg, size_t msg_len)
{
    const reg_schema_t *last = latest_schema(mb, topic);
    *version = -1;
    if (!in || in->type == PULSAR__PROTO__SCHEMA__TYPE__None) {
        if (last && mb->schema_enforced) {
            snprintf(msg, msg_len,
                     "org.apache.pulsar.broker.service.schema.exceptions."
                     "IncompatibleSchemaException: Producers cannot connect or send message "
                     "without a schema to topics with a schema");
            return PULSAR__PROTO__SERVER_ERROR__IncompatibleSchema;
        }
        return 0;
    }
    for (size_t i = 0; i < mb->n_schemas; i++) {
        const reg_schema_t *r = &mb->schemas[i];
        if (same_topic(r, topic) && r->type == (int)in->type && r->len == in->schema_data.len &&
            (!r->len || !memcmp(r->data, in->schema_data.data, r->len))) {
            *version = r->version;
            return 0;
        }
    }
    if (last && last->type != (int)in->type) {
        /* Java's SchemaType names, which the protocol's numbers share. */
        snprintf(msg, msg_len,
                 "org.apache.pulsar.broker.service.schema.exceptions."
                 "IncompatibleSchemaException: Incompatible schema: exists schema type %s, "
                 "new schema type %s",
                 pulsarc_schema_type_name((pulsarc_schema_type)last->type),
                 pulsarc_schema_type_name((pulsarc_schema_type)in->type));
        return PULSAR__PROTO__SERVER_ERROR__IncompatibleSchema;
    }
    if (last && mb->schema_refuse_new) {
        snprintf(msg, msg_len,
                 "org.apache.pulsar.broker.service.schema.exceptions."
                 "IncompatibleSchemaException: mock refuses new schema versions");
        return PULSAR__PROTO__SERVER_ERROR__IncompatibleSchema;
    }
    if (grow((void **)&mb->schemas, &mb->cap_schemas, mb->n_schemas, sizeof *mb->schemas) != 0)
        return PULSAR__PROTO__SERVER_ERROR__UnknownError;
    reg_schema_t *r = &mb->schemas[mb->n_schemas];
    size_t n = base_topic_len(topic);
    r->topic = malloc(n + 1);
    r->data = malloc(in->schema_data.len + 1);
    if (!r->topic || !r->data) {
        free(r->topic);
        free(r->data);
        return PULSAR__PROTO__SERVER_ERROR__UnknownError;
    }
    memcpy(r->topic, topic, n);
    r->topic[n] = 0;
    if (in->schema_data.len)
        memcpy(r->data, in->schema_data.data, in->schema_data.len);
    r->len = in->schema_data.len;
    r->type = (int)in->type;
    r->version = last ? last->version + 1 : 0;
    *version = r->version;
    mb->n_schemas++;
    return 0;
}

static void handle_get_or_create_schema(mock_broker_t *mb, conn_t *c,
                                        const Pulsar__Proto__CommandGetOrCreateSchema *in)
{
    mb->counters[MOCK_GET_OR_CREATE_SCHEMAS]++;
    if (mb->schema_ignore)
        return;
    char msg[512];
    int64_t version;
    int err = register_schema(mb, in->topic, in->schema, &version, msg, sizeof msg);
    uint8_t vb[BC_VERSION_LEN];
    bc_version_bytes(version, vb);
    send_reply(mb, c, "GET_OR_CREATE_SCHEMA_RESPONSE",
               err ? bc_schema_error(&mb->reply, in->request_id, err, msg)
                   : bc_schema_version(&mb->reply, in->request_id,
                                       (ProtobufCBinaryData){ sizeof vb, vb }));
}

static void handle_get_schema(mock_broker_t *mb, conn_t *c,
                              const Pulsar__Proto__CommandGetSchema *in)
{
    mb->counters[MOCK_GET_SCHEMAS]++;
    const reg_schema_t *r = latest_schema(mb, in->topic);
    if (!r) {
        send_reply(mb, c, "GET_SCHEMA_RESPONSE",
                   bc_get_schema_error(&mb->reply, in->request_id,
                                       PULSAR__PROTO__SERVER_ERROR__TopicNotFound,
                                       "Topic not found or no-schema"));
        return;
    }
    Pulsar__Proto__Schema schema = PULSAR__PROTO__SCHEMA__INIT;
    schema.name = (char *)"";
    schema.type = (Pulsar__Proto__Schema__Type)r->type;
    schema.schema_data.data = r->data;
    schema.schema_data.len = r->len;
    uint8_t vb[BC_VERSION_LEN];
    bc_version_bytes(r->version, vb);
    send_reply(mb, c, "GET_SCHEMA_RESPONSE",
               bc_get_schema(&mb->reply, in->request_id, &schema,
                             (ProtobufCBinaryData){ sizeof vb, vb }));
}

/* PRODUCER_SUCCESS for a producer of this name; ready false: "queued", as the broker
 * answers a WaitForExclusive producer while another one has the topic. */
static void send_producer_success(mock_broker_t *mb, conn_t *c, uint64_t request_id,
                                  const char *name, int64_t version, bool ready)
{
    int64_t last = mb->last_seq;
    if (last == MOCK_LAST_SEQ_TRACKED) {
        seq_track_t *t = find_track(mb, name);
        last = t ? (int64_t)t->highest : -1;
    }
    uint8_t vb[BC_VERSION_LEN];
    bc_version_bytes(version, vb);
    ProtobufCBinaryData schema_version = { sizeof vb, vb };
    send_reply(mb, c, "PRODUCER_SUCCESS",
               bc_producer_success(&mb->reply, request_id, name, last,
                                   version >= 0 ? &schema_version : NULL, ready,
                                   ready ? mb->topic_epoch : -1));
}

static void record_producer_fields(mock_producer_info_t *lp,
                                   const Pulsar__Proto__CommandProducer *in)
{
    lp->has_access_mode = in->has_producer_access_mode;
    lp->access_mode = in->has_producer_access_mode ? (int)in->producer_access_mode : 0;
    lp->has_topic_epoch = in->has_topic_epoch;
    lp->topic_epoch = in->has_topic_epoch ? in->topic_epoch : 0;
    lp->n_metadata = in->n_metadata;
    for (size_t i = 0; i < in->n_metadata && i < MOCK_MAX_METADATA; i++) {
        copy_str(lp->metadata[i].key, sizeof lp->metadata[i].key, in->metadata[i]->key);
        copy_str(lp->metadata[i].value, sizeof lp->metadata[i].value, in->metadata[i]->value);
    }
    lp->has_initial_subscription = in->initial_subscription_name != NULL;
    copy_str(lp->initial_subscription, sizeof lp->initial_subscription,
             in->initial_subscription_name);
}

static void handle_producer(mock_broker_t *mb, conn_t *c, const Pulsar__Proto__CommandProducer *in)
{
    mb->counters[MOCK_PRODUCERS]++;
    mock_producer_info_t *lp = &mb->last_producer;
    mb->has_producer = true;
    copy_str(lp->topic, sizeof lp->topic, in->topic);
    lp->producer_id = in->producer_id;
    lp->request_id = in->request_id;
    lp->has_producer_name = in->producer_name != NULL;
    copy_str(lp->producer_name, sizeof lp->producer_name, in->producer_name);
    /* The protocol's default for user_provided_producer_name is true. */
    lp->user_provided_producer_name = in->has_user_provided_producer_name
                                          ? in->user_provided_producer_name
                                          : true;
    lp->has_epoch = in->has_epoch;
    lp->epoch = in->has_epoch ? in->epoch : 0;
    lp->has_schema = in->schema != NULL;
    lp->schema_type = in->schema ? (int)in->schema->type : 0;
    copy_str(lp->schema_name, sizeof lp->schema_name, in->schema ? in->schema->name : NULL);
    lp->schema_data_len = in->schema ? in->schema->schema_data.len : 0;
    if (lp->schema_data_len)
        memcpy(lp->schema_data, in->schema->schema_data.data,
               lp->schema_data_len < sizeof lp->schema_data ? lp->schema_data_len
                                                            : sizeof lp->schema_data);
    lp->n_schema_properties = in->schema ? in->schema->n_properties : 0;
    lp->encrypted = in->has_encrypted && in->encrypted;
    record_producer_fields(lp, in);

    if (mb->producer_fail_times != 0) {
        if (mb->producer_fail_times > 0)
            mb->producer_fail_times--;
        send_error_cmd(mb, c, in->request_id, mb->producer_fail_error,
                       mb->producer_fail_msg ? mb->producer_fail_msg : "mock producer failure");
        return;
    }
    /* As ServerCnx.handleProducer: the schema is added (or found) first; a refusal is an
     * ERROR with the exception's text. */
    char schema_msg[512];
    int64_t version;
    int schema_err = register_schema(mb, in->topic, in->schema, &version, schema_msg,
                                     sizeof schema_msg);
    if (schema_err) {
        send_error_cmd(mb, c, in->request_id, schema_err, schema_msg);
        return;
    }

    char assigned[32];
    const char *name = in->producer_name;
    if (!name || !*name) {
        snprintf(assigned, sizeof assigned, "mock-%llu",
                 (unsigned long long)mb->next_producer_name++);
        name = assigned;
    }
    reg_producer_t r = { .id = in->producer_id,
                         .name = dupstr(name),
                         .topic = dupstr(in->topic),
                         .request_id = in->request_id,
                         .schema_version = version };
    if (mb->queue_producers) {
        if (!r.name || !r.topic ||
            grow((void **)&c->queued, &c->cap_queued, c->n_queued, sizeof *c->queued) != 0) {
            reg_producer_free(&r);
            c->dead = true;
            return;
        }
        mb->counters[MOCK_QUEUED_PRODUCERS]++;
        c->queued[c->n_queued++] = r;
        send_producer_success(mb, c, in->request_id, r.name, version, false);
        return;
    }
    if (!r.name || !r.topic ||
        grow((void **)&c->producers, &c->cap_producers, c->n_producers, sizeof *c->producers) !=
            0) {
        reg_producer_free(&r);
        c->dead = true;
        return;
    }
    forget_producer(c, in->producer_id); /* re-creating the same id replaces it */
    c->producers[c->n_producers++] = r;
    const char *copy = r.name;
    send_producer_success(mb, c, in->request_id, copy, version, true);
}

static void send_send_error(mock_broker_t *mb, conn_t *c, const Pulsar__Proto__CommandSend *in,
                            int error, const char *message)
{
    /* As the broker names the entry: by its highest id (Producer.publishMessage checks a
     * batch under highestSequenceId; a failed write answers max(highest, lowest)). */
    uint64_t id = in->sequence_id;
    if (in->has_highest_sequence_id && in->highest_sequence_id > id)
        id = in->highest_sequence_id;
    send_reply(mb, c, "SEND_ERROR", bc_send_error(&mb->reply, in->producer_id, id, error, message));
    mb->counters[MOCK_SEND_ERRORS]++;
}

static void send_receipt(mock_broker_t *mb, conn_t *c, const Pulsar__Proto__CommandSend *in,
                         uint64_t ledger, uint64_t entry, uint64_t highest)
{
    /* A receipt may be parked (held, delayed, reordered): it gets a block of its own. */
    pc_buf_t b;
    pc_buf_init(&b);
    if (bc_receipt(&b, in->producer_id, in->sequence_id, highest, ledger, entry) != 0) {
        pc_buf_free(&b);
        c->dead = true;
        return;
    }
    size_t len = 0;
    uint8_t *data = pc_buf_detach(&b, &len);
    /* The broker acknowledges a duplicate at once (PersistentTopic.publishMessage,
     * MessageDupStatus.Dup), ahead of entries it is still storing: held, delayed or
     * reordered receipts do not hold it back (a suppressed broker answers nothing). */
    if (ledger == UINT64_MAX && mb->receipt_mode != MOCK_RECEIPTS_SUPPRESS) {
        write_receipt(mb, c, data, len);
        return;
    }
    route_receipt(mb, c, data, len);
}

static void handle_send(mock_broker_t *mb, conn_t *c, const Pulsar__Proto__CommandSend *in,
                        const pc_frame_t *f)
{
    if (grow((void **)&mb->sends, &mb->cap_sends, mb->n_sends, sizeof *mb->sends) != 0) {
        c->dead = true;
        return;
    }
    const char *name = producer_name_of(c, in->producer_id);
    mock_send_t *s = &mb->sends[mb->n_sends];
    memset(s, 0, sizeof *s);
    s->connection = c->id;
    s->producer_id = in->producer_id;
    s->producer_name = dupstr(name);
    s->sequence_id = in->sequence_id;
    s->has_highest_sequence_id = in->has_highest_sequence_id;
    s->highest_sequence_id = in->highest_sequence_id;
    s->num_messages = in->has_num_messages ? in->num_messages : 1;
    s->is_chunk = in->has_is_chunk && in->is_chunk;
    s->has_payload = f->has_payload;
    s->checksum_ok = f->has_payload && f->checksum_ok;
    if (f->has_payload) {
        s->metadata_raw = dupmem(f->metadata, f->metadata_len);
        s->metadata_raw_len = f->metadata_len;
        s->payload = dupmem(f->payload, f->payload_len);
        s->payload_len = f->payload_len;
    }
    seq_track_t *t = find_track(mb, name);
    s->duplicate = t && in->sequence_id <= t->highest;
    const reg_producer_t *producer = producer_of(c, in->producer_id);
    mtxn_t *txn = NULL;
    s->has_txn = in->has_txnid_most_bits && in->has_txnid_least_bits;
    if (s->has_txn) {
        s->txn_most = in->txnid_most_bits;
        s->txn_least = in->txnid_least_bits;
        mtxn_expire(&mb->txns, now_ms(), false);
        txn = mtxn_find(&mb->txns, s->txn_most, s->txn_least);
        s->txn_registered = txn && producer && mtxn_has_partition(txn, producer->topic);
    }
    mb->n_sends++;
    mb->counters[MOCK_SENDS]++;

    if (!name) {
        /* The real broker closes the connection when a SEND names a producer it does not
         * know: a client that does this has a bug the test should see. */
        mb_log(mb, "conn %d: SEND for unknown producer %llu: closing", c->id,
               (unsigned long long)in->producer_id);
        mb->counters[MOCK_PROTOCOL_ERRORS]++;
        c->dead = true;
        return;
    }
    if (f->has_payload && !f->checksum_ok) {
        send_send_error(mb, c, in, PULSAR__PROTO__SERVER_ERROR__ChecksumError,
                        "Checksum failed on the broker");
        return;
    }
    if (mb->send_fail_times != 0) {
        if (mb->send_fail_times > 0)
            mb->send_fail_times--;
        send_send_error(mb, c, in, mb->send_fail_error, "mock send failure");
        return;
    }
    if (s->txn_registered && mtxn_below_low_water_mark(&mb->txns, txn)) {
        /* The partition got the transaction's end marker with a low water mark at or past
         * it: the transaction buffer refuses it. */
        char msg[160];
        snprintf(msg, sizeof msg,
                 "Transaction [(%llu,%llu)] has been ended. Please use a new transaction to "
                 "send message.",
                 (unsigned long long)s->txn_most, (unsigned long long)s->txn_least);
        send_send_error(mb, c, in, PULSAR__PROTO__SERVER_ERROR__NotAllowedError, msg);
        return;
    }

    if (mb->dedup && s->duplicate) {
        /* As the broker does: the whole entry is dropped when its first id is at or below
         * the highest stored, and the receipt carries no position (ledger and entry -1). */
        send_receipt(mb, c, in, UINT64_MAX, UINT64_MAX,
                     in->has_highest_sequence_id ? in->highest_sequence_id : in->sequence_id);
        return;
    }
    s->persisted = true;
    uint64_t top = in->sequence_id;
    if (in->has_highest_sequence_id && in->highest_sequence_id > top)
        top = in->highest_sequence_id;
    if (t) {
        if (top > t->highest)
            t->highest = top;
    } else if (grow((void **)&mb->tracks, &mb->cap_tracks, mb->n_tracks, sizeof *mb->tracks) == 0) {
        char *tn = dupstr(name);
        if (tn)
            mb->tracks[mb->n_tracks++] = (seq_track_t){ .name = tn, .highest = top };
    }

    send_receipt(mb, c, in, 1, mb->next_entry++, top);
}

static void handle_close_producer(mock_broker_t *mb, conn_t *c,
                                  const Pulsar__Proto__CommandCloseProducer *in)
{
    mb->counters[MOCK_CLOSE_PRODUCERS]++;
    forget_producer(c, in->producer_id);
    forget_queued(c, in->producer_id);
    send_reply(mb, c, "SUCCESS", bc_success(&mb->reply, in->request_id));
}

/* ---- the transaction coordinator ---------------------------------------------------- */

static const int txn_command_type[MOCK_TXN_COMMAND_COUNT] = {
    [MOCK_TXN_TC_CONNECT] = PULSAR__PROTO__BASE_COMMAND__TYPE__TC_CLIENT_CONNECT_REQUEST,
    [MOCK_TXN_NEW] = PULSAR__PROTO__BASE_COMMAND__TYPE__NEW_TXN,
    [MOCK_TXN_ADD_PARTITION] = PULSAR__PROTO__BASE_COMMAND__TYPE__ADD_PARTITION_TO_TXN,
    [MOCK_TXN_END] = PULSAR__PROTO__BASE_COMMAND__TYPE__END_TXN,
};

static const mock_counter_t txn_command_counter[MOCK_TXN_COMMAND_COUNT] = {
    [MOCK_TXN_TC_CONNECT] = MOCK_TC_CONNECTS,
    [MOCK_TXN_NEW] = MOCK_NEW_TXNS,
    [MOCK_TXN_ADD_PARTITION] = MOCK_ADD_PARTITIONS,
    [MOCK_TXN_END] = MOCK_END_TXNS,
};

static void txn_reply(mock_broker_t *mb, conn_t *c, mock_txn_command_t k, uint64_t request_id,
                      uint64_t most, uint64_t least, int error, const char *message)
{
    send_reply(mb, c, error >= 0 ? "transaction response (error)" : "transaction response",
               bc_txn_response(&mb->reply, txn_command_type[k], request_id, most, least, error,
                               message));
}

/* Counting, the faults and the enabled check every transaction command goes through
 * first. True when the command is for its handler to answer. */
static bool txn_admit(mock_broker_t *mb, conn_t *c, mock_txn_command_t k, uint64_t request_id,
                      uint64_t most, uint64_t least)
{
    mb->counters[txn_command_counter[k]]++;
    if (mb->txn_drop_times[k] != 0) {
        if (mb->txn_drop_times[k] > 0)
            mb->txn_drop_times[k]--;
        mb_log(mb, "conn %d: dropping the connection on a transaction command", c->id);
        c->dead = true;
        return false;
    }
    if (mb->txn_ignore_times[k] != 0) {
        if (mb->txn_ignore_times[k] > 0)
            mb->txn_ignore_times[k]--;
        mb_log(mb, "conn %d: ignoring a transaction command", c->id);
        return false;
    }
    if (mb->txn_coordinators == 0) {
        send_error_cmd(mb, c, request_id, PULSAR__PROTO__SERVER_ERROR__NotAllowedError,
                       "Transactions are not enabled.");
        return false;
    }
    if (mb->txn_fail_times[k] != 0) {
        if (mb->txn_fail_times[k] > 0)
            mb->txn_fail_times[k]--;
        txn_reply(mb, c, k, request_id, most, least, mb->txn_fail_error[k],
                  mb->txn_fail_msg[k] ? mb->txn_fail_msg[k] : "mock transaction failure");
        return false;
    }
    mtxn_expire(&mb->txns, now_ms(), false);
    return true;
}

static void coordinator_not_found(mock_broker_t *mb, conn_t *c, mock_txn_command_t k,
                                  uint64_t request_id, uint64_t tc_id)
{
    char msg[96];
    snprintf(msg, sizeof msg, "Transaction coordinator with id %llu not found",
             (unsigned long long)tc_id);
    txn_reply(mb, c, k, request_id, tc_id, 0,
              PULSAR__PROTO__SERVER_ERROR__TransactionCoordinatorNotFound, msg);
}

/* The open transaction (most, least), or NULL after answering TransactionNotFound as the
 * coordinator does for one it never had or already ended and forgot. */
static mtxn_t *open_txn(mock_broker_t *mb, conn_t *c, mock_txn_command_t k, uint64_t request_id,
                        uint64_t most, uint64_t least)
{
    mtxn_t *x = mtxn_find(&mb->txns, most, least);
    if (x && x->state == MOCK_TXN_OPEN)
        return x;
    char msg[96];
    snprintf(msg, sizeof msg, "The transaction with this txdID `(%llu,%llu)`not found ",
             (unsigned long long)most, (unsigned long long)least);
    txn_reply(mb, c, k, request_id, most, least, PULSAR__PROTO__SERVER_ERROR__TransactionNotFound,
              msg);
    return NULL;
}

static void handle_tc_connect(mock_broker_t *mb, conn_t *c,
                              const Pulsar__Proto__CommandTcClientConnectRequest *in)
{
    if (!txn_admit(mb, c, MOCK_TXN_TC_CONNECT, in->request_id, 0, 0))
        return;
    if (in->tc_id >= mb->txn_coordinators)
        coordinator_not_found(mb, c, MOCK_TXN_TC_CONNECT, in->request_id, in->tc_id);
    else
        txn_reply(mb, c, MOCK_TXN_TC_CONNECT, in->request_id, 0, 0, -1, NULL);
}

static void handle_new_txn(mock_broker_t *mb, conn_t *c, const Pulsar__Proto__CommandNewTxn *in)
{
    uint64_t tc_id = in->has_tc_id ? in->tc_id : 0;
    if (!txn_admit(mb, c, MOCK_TXN_NEW, in->request_id, tc_id, 0))
        return;
    if (tc_id >= mb->txn_coordinators) {
        coordinator_not_found(mb, c, MOCK_TXN_NEW, in->request_id, tc_id);
        return;
    }
    /* The broker's default when the client sends none (transactionTimeout, 60 s). */
    uint64_t ttl = in->has_txn_ttl_millis ? in->txn_ttl_millis : 60000;
    mtxn_t *x = mtxn_begin(&mb->txns, tc_id, ttl, now_ms());
    if (!x) {
        c->dead = true;
        return;
    }
    txn_reply(mb, c, MOCK_TXN_NEW, in->request_id, x->most, x->least, -1, NULL);
}

static void handle_add_partition(mock_broker_t *mb, conn_t *c,
                                 const Pulsar__Proto__CommandAddPartitionToTxn *in)
{
    uint64_t most = in->txnid_most_bits, least = in->txnid_least_bits;
    if (!txn_admit(mb, c, MOCK_TXN_ADD_PARTITION, in->request_id, most, least))
        return;
    mtxn_t *x = open_txn(mb, c, MOCK_TXN_ADD_PARTITION, in->request_id, most, least);
    if (!x)
        return;
    for (size_t i = 0; i < in->n_partitions; i++) {
        if (mtxn_add_partition(x, in->partitions[i]) != 0) {
            c->dead = true;
            return;
        }
    }
    txn_reply(mb, c, MOCK_TXN_ADD_PARTITION, in->request_id, most, least, -1, NULL);
}

static void handle_end_txn(mock_broker_t *mb, conn_t *c, const Pulsar__Proto__CommandEndTxn *in)
{
    uint64_t most = in->txnid_most_bits, least = in->txnid_least_bits;
    if (!txn_admit(mb, c, MOCK_TXN_END, in->request_id, most, least))
        return;
    mtxn_t *x = open_txn(mb, c, MOCK_TXN_END, in->request_id, most, least);
    if (!x)
        return;
    x->state = in->has_txn_action && in->txn_action == PULSAR__PROTO__TXN_ACTION__ABORT
                   ? MOCK_TXN_ABORTED
                   : MOCK_TXN_COMMITTED;
    txn_reply(mb, c, MOCK_TXN_END, in->request_id, most, least, -1, NULL);
}

/* A command type whose body is missing is as malformed as bytes that do not parse. */
#define REQUIRE_BODY(field) \
    do {                    \
        if (!cmd->field)    \
            goto malformed; \
    } while (0)

static void handle_frame(mock_broker_t *mb, conn_t *c, const pc_frame_t *f)
{
    Pulsar__Proto__BaseCommand *cmd = pc_frame_unpack_command(f);
    if (!cmd) {
        mb_log(mb, "conn %d: command does not parse", c->id);
        mb->counters[MOCK_PROTOCOL_ERRORS]++;
        c->dead = true;
        return;
    }
    mb_log(mb, "conn %d: <- %s", c->id, type_name(cmd->type));
    switch (cmd->type) {
    case PULSAR__PROTO__BASE_COMMAND__TYPE__CONNECT:
        REQUIRE_BODY(connect);
        handle_connect(mb, c, cmd->connect);
        break;
    case PULSAR__PROTO__BASE_COMMAND__TYPE__PARTITIONED_METADATA:
        REQUIRE_BODY(partitionmetadata);
        handle_partitioned_metadata(mb, c, cmd->partitionmetadata);
        break;
    case PULSAR__PROTO__BASE_COMMAND__TYPE__LOOKUP:
        REQUIRE_BODY(lookuptopic);
        handle_lookup(mb, c, cmd->lookuptopic);
        break;
    case PULSAR__PROTO__BASE_COMMAND__TYPE__PRODUCER:
        REQUIRE_BODY(producer);
        handle_producer(mb, c, cmd->producer);
        break;
    case PULSAR__PROTO__BASE_COMMAND__TYPE__SEND:
        REQUIRE_BODY(send);
        handle_send(mb, c, cmd->send, f);
        break;
    case PULSAR__PROTO__BASE_COMMAND__TYPE__GET_OR_CREATE_SCHEMA:
        REQUIRE_BODY(getorcreateschema);
        if (!cmd->getorcreateschema->schema)
            goto malformed; /* a required field */
        handle_get_or_create_schema(mb, c, cmd->getorcreateschema);
        break;
    case PULSAR__PROTO__BASE_COMMAND__TYPE__GET_SCHEMA:
        REQUIRE_BODY(getschema);
        handle_get_schema(mb, c, cmd->getschema);
        break;
    case PULSAR__PROTO__BASE_COMMAND__TYPE__CLOSE_PRODUCER:
        REQUIRE_BODY(close_producer);
        handle_close_producer(mb, c, cmd->close_producer);
        break;
    case PULSAR__PROTO__BASE_COMMAND__TYPE__TC_CLIENT_CONNECT_REQUEST:
        REQUIRE_BODY(tcclientconnectrequest);
        handle_tc_connect(mb, c, cmd->tcclientconnectrequest);
        break;
    case PULSAR__PROTO__BASE_COMMAND__TYPE__NEW_TXN:
        REQUIRE_BODY(newtxn);
        handle_new_txn(mb, c, cmd->newtxn);
        break;
    case PULSAR__PROTO__BASE_COMMAND__TYPE__ADD_PARTITION_TO_TXN:
        REQUIRE_BODY(addpartitiontotxn);
        handle_add_partition(mb, c, cmd->addpartitiontotxn);
        break;
    case PULSAR__PROTO__BASE_COMMAND__TYPE__END_TXN:
        REQUIRE_BODY(endtxn);
        handle_end_txn(mb, c, cmd->endtxn);
        break;
    case PULSAR__PROTO__BASE_COMMAND__TYPE__PING:
        mb->counters[MOCK_PINGS]++;
        if (mb->answer_pings)
            send_reply(mb, c, "PONG", bc_pong(&mb->reply));
        break;
    case PULSAR__PROTO__BASE_COMMAND__TYPE__PONG:
        mb->counters[MOCK_PONGS]++;
        c->pongs++;
        break;
    case PULSAR__PROTO__BASE_COMMAND__TYPE__AUTH_RESPONSE:
        REQUIRE_BODY(authresponse);
        handle_auth_response(mb, c, cmd->authresponse);
        break;
    default:
        mb->counters[MOCK_UNKNOWN_COMMANDS]++;
        break;
    }
    pulsar__proto__base_command__free_unpacked(cmd, NULL);
    return;

malformed:
    mb_log(mb, "conn %d: %s without its body", c->id, type_name(cmd->type));
    mb->counters[MOCK_PROTOCOL_ERRORS]++;
    c->dead = true;
    pulsar__proto__base_command__free_unpacked(cmd, NULL);
}

/* ---- input -------------------------------------------------------------------------- */

static void process_frames(mock_broker_t *mb, conn_t *c)
{
    while (!c->dead && !c->close_when_flushed) {
        pc_frame_t f;
        pc_frame_status_t st = pc_frame_reader_next(&c->reader, &f);
        if (st == PC_FRAME_NEED_MORE)
            return;
        if (st != PC_FRAME_OK) {
            mb_log(mb, "conn %d: bad frame (status %d): closing", c->id, (int)st);
            mb->counters[MOCK_PROTOCOL_ERRORS]++;
            c->dead = true;
            return;
        }
        handle_frame(mb, c, &f);
    }
}

static void conn_read(mock_broker_t *mb, conn_t *c)
{
    uint8_t *tmp = mb->rbuf;
    while (!c->dead && !c->close_when_flushed) {
        ssize_t n = recv(c->fd, tmp, sizeof mb->rbuf, 0);
        if (n >= 0)
            mb->io_events++;
        if (n == 0) {
            mb_log(mb, "conn %d: client closed", c->id);
            c->dead = true;
            return;
        }
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK) {
                mb_log(mb, "conn %d: read failed: %s", c->id, strerror(errno));
                c->dead = true;
            }
            return;
        }
        size_t use = (size_t)n;
        bool cut = false;
        if (mb->cut_after_armed) {
            if (mb->cut_after_left <= use) {
                use = mb->cut_after_left;
                cut = true;
                mb->cut_after_armed = false;
            } else {
                mb->cut_after_left -= use;
            }
        }
        if (use > 0) {
            if (pc_frame_reader_feed(&c->reader, tmp, use) != 0) {
                c->dead = true;
                return;
            }
            process_frames(mb, c);
        }
        if (cut) {
            /* Replies to the frames handled above still go out: the point is to cut at
             * a byte position in the client's stream, not to hide those answers. */
            mb_log(mb, "conn %d: cutting after the armed byte count", c->id);
            c->close_when_flushed = true;
            return;
        }
    }
}

/* ---- connections and the listener --------------------------------------------------- */

/* A TCP socket bound to 127.0.0.1:port (0: any free port), listening if `listening`. */
static int bind_loopback(uint16_t port, bool listening, uint16_t *bound)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    int one = 1;
    /* Lets set_down(false) re-bind the port while old connections sit in TIME_WAIT, and
     * while the down broker's hold_fd still has it. */
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    sa.sin_port = htons(port);
    socklen_t sl = sizeof sa;
    if (bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 || (listening && listen(fd, 64) != 0) ||
        getsockname(fd, (struct sockaddr *)&sa, &sl) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    if (bound)
        *bound = ntohs(sa.sin_port);
    return fd;
}

static void conn_free(conn_t *c)
{
    if (c->fd >= 0) {
        /* Closing with unread input makes the kernel send RST, which can destroy output
         * the client has not read yet (a truncated reply the test wants to see), so
         * discard what is pending first: the client gets a clean EOF after our bytes. */
        uint8_t sink[4096];
        while (recv(c->fd, sink, sizeof sink, MSG_DONTWAIT) > 0) {
        }
        close(c->fd);
    }
    pc_frame_reader_free(&c->reader);
    pc_buf_free(&c->out);
    for (size_t i = 0; i < c->n_producers; i++)
        reg_producer_free(&c->producers[i]);
    free(c->producers);
    for (size_t i = 0; i < c->n_queued; i++)
        reg_producer_free(&c->queued[i]);
    free(c->queued);
    free(c->stash);
    free(c);
}

static void accept_all(mock_broker_t *mb)
{
    for (;;) {
        int fd = accept4(mb->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR)
                continue;
            return; /* EAGAIN, or a transient error the next poll will retry */
        }
        mb->counters[MOCK_CONNECTIONS]++;
        mb->io_events++;
        int id = ++mb->next_conn_id;
        if (mb->refuse) {
            mb_log(mb, "conn %d: refused", id);
            close(fd);
            continue;
        }
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        conn_t *c = calloc(1, sizeof *c);
        if (!c || grow((void **)&mb->conns, &mb->cap_conns, mb->n_conns, sizeof *mb->conns) != 0) {
            free(c);
            close(fd);
            continue;
        }
        c->fd = fd;
        c->id = id;
        pc_frame_reader_init(&c->reader,
                             (size_t)mb->max_message_size + PC_FRAME_OVERHEAD_ALLOWANCE);
        pc_buf_init(&c->out);
        mb->conns[mb->n_conns++] = c;
        mb->counters[MOCK_OPEN_CONNECTIONS] = mb->n_conns;
        mb_log(mb, "conn %d: accepted", id);
    }
}

static void reap_dead(mock_broker_t *mb)
{
    size_t j = 0;
    for (size_t i = 0; i < mb->n_conns; i++) {
        conn_t *c = mb->conns[i];
        if (c->dead) {
            mb_log(mb, "conn %d: closed", c->id);
            mb->io_events++;
            conn_free(c);
        } else {
            mb->conns[j++] = c;
        }
    }
    mb->n_conns = j;
    mb->counters[MOCK_OPEN_CONNECTIONS] = mb->n_conns;
}

/* A down broker keeps its port bound without listening: connections are refused as by a
 * dead broker, and nothing else (a broker or client of another test process, as ctest
 * runs the mock entries side by side, or an outgoing connection of this one) can take the
 * port before set_down(false) listens on it again. */
static void apply_down_state(mock_broker_t *mb)
{
    if (mb->want_down && !mb->is_down) {
        close(mb->listen_fd);
        mb->listen_fd = -1;
        mb->hold_fd = bind_loopback(mb->port, false, NULL);
        if (mb->hold_fd < 0)
            mb_log(mb, "cannot hold the port while down: %s", strerror(errno));
        for (size_t i = 0; i < mb->n_conns; i++)
            mb->conns[i]->dead = true;
        mb->is_down = true;
        mb_log(mb, "down");
    } else if (!mb->want_down && mb->is_down) {
        int fd = bind_loopback(mb->port, true, NULL);
        if (fd < 0) {
            mb_log(mb, "cannot listen again: %s", strerror(errno));
            mb->up_failed = true;
            mb->want_down = true;
            return;
        }
        if (mb->hold_fd >= 0)
            close(mb->hold_fd);
        mb->hold_fd = -1;
        mb->listen_fd = fd;
        mb->is_down = false;
        mb_log(mb, "up");
    }
}

/* ---- the broker thread -------------------------------------------------------------- */

static void *broker_main(void *arg)
{
    mock_broker_t *mb = arg;
    struct pollfd *pfds = NULL;
    size_t pfd_cap = 0;

    pthread_mutex_lock(&mb->mu);
    while (!mb->stopping) {
        /* Slot 0: wake pipe; slot 1: listener (fd -1 while down, which poll ignores);
         * then one slot per connection, in mb->conns order. */
        size_t need = 2 + mb->n_conns;
        if (need > pfd_cap) {
            struct pollfd *np = realloc(pfds, need * sizeof *np);
            if (!np)
                break;
            pfds = np;
            pfd_cap = need;
        }
        pfds[0] = (struct pollfd){ .fd = mb->wake_rd, .events = POLLIN };
        pfds[1] = (struct pollfd){ .fd = mb->listen_fd, .events = POLLIN };
        for (size_t i = 0; i < mb->n_conns; i++) {
            conn_t *c = mb->conns[i];
            short ev = 0;
            if (!c->close_when_flushed)
                ev |= POLLIN;
            if (c->out.len > 0)
                ev |= POLLOUT;
            pfds[2 + i] = (struct pollfd){ .fd = c->fd, .events = ev };
        }
        int timeout = -1;
        if (mb->delayed.len > 0) {
            uint64_t now = now_ms(), due = mb->delayed.v[0].due_ms;
            timeout = due > now ? (int)(due - now) : 0;
        }
        size_t n_polled = mb->n_conns;

        pthread_mutex_unlock(&mb->mu);
        int pr = poll(pfds, need, timeout);
        pthread_mutex_lock(&mb->mu);
        uint64_t seen_req = mb->req_seq;
        if (pr < 0 && errno != EINTR)
            break;

        if (pr > 0 && (pfds[0].revents & POLLIN)) {
            char drain[64];
            while (read(mb->wake_rd, drain, sizeof drain) > 0) {
            }
        }
        apply_down_state(mb);
        if (pr > 0 && mb->listen_fd >= 0 && pfds[1].fd == mb->listen_fd &&
            (pfds[1].revents & POLLIN))
            accept_all(mb);
        /* Connections only leave the array in reap_dead, and new ones are appended, so
         * the first n_polled entries still match their poll slots. */
        for (size_t i = 0; pr > 0 && i < n_polled; i++) {
            conn_t *c = mb->conns[i];
            short re = pfds[2 + i].revents;
            if (re & (POLLIN | POLLHUP | POLLERR))
                conn_read(mb, c);
        }
        emit_due_receipts(mb);
        for (size_t i = 0; i < mb->n_conns; i++)
            conn_flush(mb, mb->conns[i]);
        reap_dead(mb);
        mb->done_seq = seen_req;
        pthread_cond_broadcast(&mb->cond);
    }
    /* Release anyone waiting in sync_with_thread even if the loop broke on an error. */
    mb->stopping = true;
    pthread_cond_broadcast(&mb->cond);
    pthread_mutex_unlock(&mb->mu);
    free(pfds);
    return NULL;
}

/* ---- lifecycle ---------------------------------------------------------------------- */

mock_broker_t *mock_broker_start(void)
{
    mock_broker_t *mb = calloc(1, sizeof *mb);
    if (!mb)
        return NULL;
    mb->listen_fd = mb->hold_fd = mb->wake_rd = mb->wake_wr = -1;
    mb->max_message_size = PC_FRAME_DEFAULT_MAX_MESSAGE_SIZE;
    mb->last_seq = -1;
    mb->topic_epoch = -1;
    mb->answer_pings = true;
    pc_buf_init(&mb->reply);
    const char *dbg = getenv("MOCK_BROKER_DEBUG");
    mb->debug = dbg && *dbg && strcmp(dbg, "0") != 0;

    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    /* Waits use the monotonic clock so wall-clock jumps cannot break timeouts. */
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&mb->cond, &ca);
    pthread_condattr_destroy(&ca);
    pthread_mutex_init(&mb->mu, NULL);

    int p[2];
    if (pipe2(p, O_NONBLOCK | O_CLOEXEC) != 0) {
        fprintf(stderr, "mock_broker: pipe: %s\n", strerror(errno));
        goto fail;
    }
    mb->wake_rd = p[0];
    mb->wake_wr = p[1];
    mb->listen_fd = bind_loopback(0, true, &mb->port);
    if (mb->listen_fd < 0) {
        fprintf(stderr, "mock_broker: listen: %s\n", strerror(errno));
        goto fail;
    }
    snprintf(mb->url, sizeof mb->url, "pulsar://127.0.0.1:%u", (unsigned)mb->port);
    if (pthread_create(&mb->thread, NULL, broker_main, mb) != 0) {
        fprintf(stderr, "mock_broker: cannot start the thread\n");
        goto fail;
    }
    mb->thread_started = true;
    mb_log(mb, "listening at %s", mb->url);
    return mb;

fail:
    mock_broker_stop(mb);
    return NULL;
}

void mock_broker_stop(mock_broker_t *mb)
{
    if (!mb)
        return;
    if (mb->thread_started) {
        pthread_mutex_lock(&mb->mu);
        mb->stopping = true;
        wake(mb);
        pthread_mutex_unlock(&mb->mu);
        pthread_join(mb->thread, NULL);
    }
    for (size_t i = 0; i < mb->n_conns; i++)
        conn_free(mb->conns[i]);
    free(mb->conns);
    if (mb->listen_fd >= 0)
        close(mb->listen_fd);
    if (mb->hold_fd >= 0)
        close(mb->hold_fd);
    if (mb->wake_rd >= 0)
        close(mb->wake_rd);
    if (mb->wake_wr >= 0)
        close(mb->wake_wr);
    parked_free(&mb->held);
    parked_free(&mb->delayed);
    for (size_t i = 0; i < mb->n_sends; i++)
        mock_send_free(&mb->sends[i]);
    free(mb->sends);
    for (size_t i = 0; i < mb->n_tracks; i++)
        free(mb->tracks[i].name);
    free(mb->tracks);
    for (size_t i = 0; i < mb->n_schemas; i++) {
        free(mb->schemas[i].topic);
        free(mb->schemas[i].data);
    }
    free(mb->schemas);
    mtxn_table_free(&mb->txns);
    for (int k = 0; k < MOCK_TXN_COMMAND_COUNT; k++)
        free(mb->txn_fail_msg[k]);
    free(mb->lookup_url);
    free(mb->redirect_url);
    free(mb->lookup_fail_msg);
    free(mb->producer_fail_msg);
    free(mb->connect_fail_msg);
    pc_buf_free(&mb->reply);
    pthread_cond_destroy(&mb->cond);
    pthread_mutex_destroy(&mb->mu);
    free(mb);
}

uint16_t mock_broker_port(const mock_broker_t *mb)
{
    return mb->port; /* fixed for the broker's life, so no lock */
}

const char *mock_broker_url(const mock_broker_t *mb)
{
    return mb->url;
}

/* ---- setters ------------------------------------------------------------------------ */

#define LOCKED(mb, stmt)                 \
    do {                                 \
        pthread_mutex_lock(&(mb)->mu);   \
        stmt;                            \
        pthread_mutex_unlock(&(mb)->mu); \
    } while (0)

static void replace_str(char **slot, const char *s)
{
    free(*slot);
    *slot = dupstr(s);
}

void mock_broker_set_max_message_size(mock_broker_t *mb, int32_t bytes)
{
    LOCKED(mb, mb->max_message_size = bytes);
}

void mock_broker_set_partitions(mock_broker_t *mb, uint32_t partitions)
{
    LOCKED(mb, mb->partitions = partitions);
}

void mock_broker_set_lookup_proxied(mock_broker_t *mb, bool on)
{
    LOCKED(mb, mb->lookup_proxied = on);
}

void mock_broker_set_lookup_url(mock_broker_t *mb, const char *url)
{
    LOCKED(mb, replace_str(&mb->lookup_url, url));
}

void mock_broker_set_last_sequence_id(mock_broker_t *mb, int64_t last_sequence_id)
{
    LOCKED(mb, mb->last_seq = last_sequence_id);
}

void mock_broker_set_deduplication(mock_broker_t *mb, bool on)
{
    LOCKED(mb, mb->dedup = on);
}

void mock_broker_set_refuse(mock_broker_t *mb, bool on)
{
    LOCKED(mb, mb->refuse = on);
}

int mock_broker_set_down(mock_broker_t *mb, bool down)
{
    pthread_mutex_lock(&mb->mu);
    mb->want_down = down;
    mb->up_failed = false;
    sync_with_thread(mb);
    int rc = (mb->is_down == down && !mb->up_failed) ? 0 : -1;
    pthread_mutex_unlock(&mb->mu);
    return rc;
}

void mock_broker_fail_connect(mock_broker_t *mb, int server_error, const char *message, int times)
{
    LOCKED(mb, (mb->connect_fail_error = server_error, replace_str(&mb->connect_fail_msg, message),
                mb->connect_fail_times = times));
}

void mock_broker_set_ignore_connect(mock_broker_t *mb, bool on)
{
    LOCKED(mb, mb->ignore_connect = on);
}

void mock_broker_set_answer_pings(mock_broker_t *mb, bool on)
{
    LOCKED(mb, mb->answer_pings = on);
}

void mock_broker_cut_now(mock_broker_t *mb)
{
    pthread_mutex_lock(&mb->mu);
    for (size_t i = 0; i < mb->n_conns; i++)
        mb->conns[i]->dead = true;
    sync_with_thread(mb);
    pthread_mutex_unlock(&mb->mu);
}

void mock_broker_cut_after_bytes(mock_broker_t *mb, size_t n)
{
    LOCKED(mb, (mb->cut_after_armed = true, mb->cut_after_left = n));
}

void mock_broker_cut_next_reply(mock_broker_t *mb)
{
    LOCKED(mb, mb->cut_next_reply = true);
}

static int send_raw_locked(mock_broker_t *mb, const void *data, size_t len)
{
    int n = 0;
    for (size_t i = 0; i < mb->n_conns; i++) {
        conn_t *c = mb->conns[i];
        if (conn_writable(c)) {
            conn_write(mb, c, data, len, true);
            n++;
        }
    }
    sync_with_thread(mb);
    return n;
}

int mock_broker_send_raw(mock_broker_t *mb, const void *data, size_t len)
{
    pthread_mutex_lock(&mb->mu);
    int n = send_raw_locked(mb, data, len);
    pthread_mutex_unlock(&mb->mu);
    return n;
}

int mock_broker_send_garbage(mock_broker_t *mb)
{
    /* Total and command sizes far above any frame limit, then some filler: a client must
     * reject this from the header alone instead of trying to buffer 2 GiB. */
    static const uint8_t garbage[] = { 0x7f, 0xff, 0xff, 0xf0, 0x7f, 0xff, 0xff, 0xe0,
                                       'g',  'a',  'r',  'b',  'a',  'g',  'e',  '!' };
    pthread_mutex_lock(&mb->mu);
    mb_log(mb, "sending garbage");
    int n = send_raw_locked(mb, garbage, sizeof garbage);
    pthread_mutex_unlock(&mb->mu);
    return n;
}

int mock_broker_send_ping(mock_broker_t *mb)
{
    pthread_mutex_lock(&mb->mu);
    int n = 0;
    for (size_t i = 0; i < mb->n_conns; i++) {
        conn_t *c = mb->conns[i];
        if (conn_writable(c) && c->got_connect) {
            c->pings++;
            send_reply(mb, c, "PING", bc_ping(&mb->reply));
            n++;
        }
    }
    sync_with_thread(mb);
    pthread_mutex_unlock(&mb->mu);
    return n;
}

/* The barrier's PING for c: behind the receipts the mock delays, if it delays any (they
 * keep their order, so the PING goes out after every one parked before it), and not
 * subject to cut_next_reply (meant for a reply). Under mu. */
static void barrier_ping(mock_broker_t *mb, conn_t *c)
{
    pc_buf_t b;
    pc_buf_init(&b);
    if (bc_ping(&b) != 0) {
        c->dead = true;
        return;
    }
    c->pings++;
    if (mb->delayed.len == 0) {
        conn_write(mb, c, b.data, b.len, true);
        pc_buf_free(&b);
        return;
    }
    size_t len = 0;
    uint8_t *data = pc_buf_detach(&b, &len);
    uint64_t due = now_ms() > mb->last_due_ms ? now_ms() : mb->last_due_ms;
    if (parked_push(&mb->delayed, c->id, due, data, len) != 0) {
        free(data);
        c->dead = true;
        return;
    }
    mb->delayed.v[mb->delayed.len - 1].ping = true;
}

typedef struct barrier_wait {
    int conn_id;
    uint64_t pongs; /* the PONG count that answers the barrier's PING */
} barrier_wait_t;

int mock_broker_barrier(mock_broker_t *mb, int timeout_ms)
{
    struct timespec deadline = deadline_in(timeout_ms);
    pthread_mutex_lock(&mb->mu);
    barrier_wait_t *w = calloc(mb->n_conns ? mb->n_conns : 1, sizeof *w);
    if (!w) {
        pthread_mutex_unlock(&mb->mu);
        return -1;
    }
    int n = 0;
    for (size_t i = 0; i < mb->n_conns; i++) {
        conn_t *c = mb->conns[i];
        if (conn_writable(c) && c->connected) {
            barrier_ping(mb, c);
            /* The client answers PINGs in order, one PONG each. */
            w[n++] = (barrier_wait_t){ c->id, c->pings };
        }
    }
    wake(mb);
    bool done = false;
    while (!done && !mb->stopping) {
        done = true;
        for (int k = 0; k < n; k++) {
            const conn_t *c = find_conn(mb, w[k].conn_id);
            if (c && !c->dead && c->pongs < w[k].pongs)
                done = false; /* still open, and its PONG has not come */
        }
        if (!done && pthread_cond_timedwait(&mb->cond, &mb->mu, &deadline) == ETIMEDOUT)
            break;
    }
    pthread_mutex_unlock(&mb->mu);
    free(w);
    return done ? n : -1;
}

bool mock_broker_sync(mock_broker_t *mb)
{
    pthread_mutex_lock(&mb->mu);
    uint64_t before = mb->io_events;
    /* The first iteration accepts what waits and reads what has arrived; the second reads
     * the connections the first accepted. */
    sync_with_thread(mb);
    sync_with_thread(mb);
    bool busy = mb->io_events != before;
    pthread_mutex_unlock(&mb->mu);
    return busy;
}

int mock_broker_send_auth_challenge(mock_broker_t *mb, const char *data)
{
    pthread_mutex_lock(&mb->mu);
    int n = 0;
    for (size_t i = 0; i < mb->n_conns; i++) {
        conn_t *c = mb->conns[i];
        if (conn_writable(c) && c->got_connect) {
            send_reply(mb, c, "AUTH_CHALLENGE", bc_auth_challenge(&mb->reply, "mock", data));
            n++;
        }
    }
    sync_with_thread(mb);
    pthread_mutex_unlock(&mb->mu);
    return n;
}

void mock_broker_set_auth_server(mock_broker_t *mb, mock_auth_server_cb cb, void *ctx)
{
    LOCKED(mb, (mb->auth_server = cb, mb->auth_server_ctx = ctx));
}

void mock_broker_lookup_redirect(mock_broker_t *mb, const char *url, int times)
{
    LOCKED(mb, (replace_str(&mb->redirect_url, url), mb->redirect_times = times));
}

void mock_broker_lookup_unanswered(mock_broker_t *mb, int times)
{
    LOCKED(mb, mb->lookup_unanswered_times = times);
}

void mock_broker_lookup_fail(mock_broker_t *mb, int server_error, const char *message, int times)
{
    LOCKED(mb, (mb->lookup_fail_error = server_error, replace_str(&mb->lookup_fail_msg, message),
                mb->lookup_fail_times = times));
}

void mock_broker_set_schema_enforced(mock_broker_t *mb, bool on)
{
    LOCKED(mb, mb->schema_enforced = on);
}

void mock_broker_clear_schemas(mock_broker_t *mb)
{
    pthread_mutex_lock(&mb->mu);
    for (size_t i = 0; i < mb->n_schemas; i++) {
        free(mb->schemas[i].topic);
        free(mb->schemas[i].data);
    }
    mb->n_schemas = 0;
    pthread_mutex_unlock(&mb->mu);
}

void mock_broker_set_schema_ignore(mock_broker_t *mb, bool on)
{
    LOCKED(mb, mb->schema_ignore = on);
}

void mock_broker_set_schema_refuse_new(mock_broker_t *mb, bool on)
{
    LOCKED(mb, mb->schema_refuse_new = on);
}

int mock_broker_register_schema(mock_broker_t *mb, const char *topic, int type, const void *data,
                                size_t len, int64_t *version)
{
    Pulsar__Proto__Schema schema = PULSAR__PROTO__SCHEMA__INIT;
    schema.name = (char *)"";
    schema.type = (Pulsar__Proto__Schema__Type)type;
    schema.schema_data.data = (uint8_t *)data;
    schema.schema_data.len = len;
    char msg[512];
    pthread_mutex_lock(&mb->mu);
    int err = register_schema(mb, topic, &schema, version, msg, sizeof msg);
    pthread_mutex_unlock(&mb->mu);
    return err;
}

void mock_broker_fail_producer(mock_broker_t *mb, int server_error, const char *message, int times)
{
    LOCKED(mb, (mb->producer_fail_error = server_error,
                replace_str(&mb->producer_fail_msg, message), mb->producer_fail_times = times));
}

void mock_broker_set_topic_epoch(mock_broker_t *mb, int64_t epoch)
{
    LOCKED(mb, mb->topic_epoch = epoch);
}

void mock_broker_set_queue_producers(mock_broker_t *mb, bool on)
{
    LOCKED(mb, mb->queue_producers = on);
}

int mock_broker_grant_queued(mock_broker_t *mb)
{
    pthread_mutex_lock(&mb->mu);
    int n = 0;
    for (size_t i = 0; i < mb->n_conns; i++) {
        conn_t *c = mb->conns[i];
        while (c->n_queued > 0) {
            reg_producer_t q = c->queued[--c->n_queued];
            if (!conn_writable(c) || grow((void **)&c->producers, &c->cap_producers, c->n_producers,
                                          sizeof *c->producers) != 0) {
                reg_producer_free(&q);
                continue;
            }
            forget_producer(c, q.id);
            c->producers[c->n_producers++] = (reg_producer_t){ .id = q.id,
                                                               .name = q.name,
                                                               .topic = q.topic };
            send_producer_success(mb, c, q.request_id, q.name, q.schema_version, true);
            n++;
        }
    }
    sync_with_thread(mb);
    pthread_mutex_unlock(&mb->mu);
    return n;
}

/* What a broker sends a producer it moves on: TOPIC_MIGRATED first when migrated (then
 * for a consumer's resource type nothing more), CLOSE_PRODUCER otherwise or after it. */
static int tell_producer(mock_broker_t *mb, uint64_t producer_id, bool migrated, int resource_type,
                         const char *url, const char *url_tls)
{
    bool close = !migrated ||
                 resource_type == PULSAR__PROTO__COMMAND_TOPIC_MIGRATED__RESOURCE_TYPE__Producer;
    pthread_mutex_lock(&mb->mu);
    int n = 0;
    for (size_t i = 0; i < mb->n_conns; i++) {
        conn_t *c = mb->conns[i];
        if (!conn_writable(c) || !producer_name_of(c, producer_id))
            continue;
        if (migrated)
            send_reply(mb, c, "TOPIC_MIGRATED",
                       bc_topic_migrated(&mb->reply, producer_id, resource_type, url, url_tls));
        if (close) {
            forget_producer(c, producer_id);
            send_reply(mb, c, "CLOSE_PRODUCER",
                       bc_close_producer(&mb->reply, producer_id, BC_BROKER_REQUEST_ID));
        }
        n++;
    }
    sync_with_thread(mb);
    pthread_mutex_unlock(&mb->mu);
    return n;
}

int mock_broker_close_producer(mock_broker_t *mb, uint64_t producer_id)
{
    return tell_producer(mb, producer_id, false, 0, NULL, NULL);
}

int mock_broker_topic_migrated(mock_broker_t *mb, uint64_t producer_id, int resource_type,
                               const char *url, const char *url_tls)
{
    return tell_producer(mb, producer_id, true, resource_type, url, url_tls);
}

void mock_broker_set_receipt_mode(mock_broker_t *mb, mock_receipt_mode_t mode)
{
    pthread_mutex_lock(&mb->mu);
    mb->receipt_mode = mode;
    if (mode != MOCK_RECEIPTS_REORDER)
        flush_stashes(mb);
    sync_with_thread(mb);
    pthread_mutex_unlock(&mb->mu);
}

void mock_broker_set_receipt_delay(mock_broker_t *mb, unsigned ms)
{
    LOCKED(mb, mb->receipt_delay_ms = ms);
}

size_t mock_broker_release_receipts_n(mock_broker_t *mb, size_t at_most)
{
    pthread_mutex_lock(&mb->mu);
    size_t n = 0, taken = mb->held.len < at_most ? mb->held.len : at_most;
    /* Released receipts go out at once, in arrival order, bypassing the delay: a test
     * that holds receipts wants to choose the moment they arrive. */
    for (size_t i = 0; i < taken; i++) {
        parked_t *p = &mb->held.v[i];
        if (write_receipt(mb, find_conn(mb, p->conn_id), p->data, p->len))
            n++;
        p->data = NULL;
    }
    memmove(mb->held.v, mb->held.v + taken, (mb->held.len - taken) * sizeof *mb->held.v);
    mb->held.len -= taken;
    sync_with_thread(mb);
    pthread_mutex_unlock(&mb->mu);
    return n;
}

size_t mock_broker_release_receipts(mock_broker_t *mb)
{
    return mock_broker_release_receipts_n(mb, SIZE_MAX);
}

void mock_broker_fail_sends(mock_broker_t *mb, int server_error, int times)
{
    LOCKED(mb, (mb->send_fail_error = server_error, mb->send_fail_times = times));
}

/* ---- queries ------------------------------------------------------------------------ */

void mock_broker_set_txn_coordinators(mock_broker_t *mb, uint32_t n)
{
    LOCKED(mb, mb->txn_coordinators = n);
}

void mock_broker_txn_fail(mock_broker_t *mb, mock_txn_command_t cmd, int server_error,
                          const char *message, int times)
{
    pthread_mutex_lock(&mb->mu);
    mb->txn_fail_error[cmd] = server_error;
    mb->txn_fail_times[cmd] = times;
    replace_str(&mb->txn_fail_msg[cmd], message);
    pthread_mutex_unlock(&mb->mu);
}

void mock_broker_txn_drop(mock_broker_t *mb, mock_txn_command_t cmd, int times)
{
    LOCKED(mb, mb->txn_drop_times[cmd] = times);
}

void mock_broker_txn_ignore(mock_broker_t *mb, mock_txn_command_t cmd, int times)
{
    LOCKED(mb, mb->txn_ignore_times[cmd] = times);
}

int mock_broker_txn_expire(mock_broker_t *mb)
{
    pthread_mutex_lock(&mb->mu);
    int n = mtxn_expire(&mb->txns, now_ms(), true);
    pthread_mutex_unlock(&mb->mu);
    return n;
}

bool mock_broker_get_txn(mock_broker_t *mb, size_t index, mock_txn_info_t *out)
{
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&mb->mu);
    bool ok = index < mb->txns.len;
    if (ok) {
        const mtxn_t *x = &mb->txns.v[index];
        out->most = x->most;
        out->least = x->least;
        out->state = x->state;
        out->timed_out = x->timed_out;
        out->n_partitions = x->n_partitions;
        for (size_t i = 0; i < x->n_partitions && i < MOCK_TXN_MAX_PARTITIONS; i++)
            copy_str(out->partitions[i], sizeof out->partitions[i], x->partitions[i]);
    }
    pthread_mutex_unlock(&mb->mu);
    return ok;
}

static uint64_t counter_locked(mock_broker_t *mb, mock_counter_t c)
{
    if (c == MOCK_HELD_RECEIPTS)
        return mb->held.len;
    if ((int)c < 0 || c >= MOCK_COUNTER_COUNT)
        return 0;
    return mb->counters[c];
}

uint64_t mock_broker_count(mock_broker_t *mb, mock_counter_t c)
{
    pthread_mutex_lock(&mb->mu);
    uint64_t v = counter_locked(mb, c);
    pthread_mutex_unlock(&mb->mu);
    return v;
}

static bool wait_counter(mock_broker_t *mb, mock_counter_t c, uint64_t bound, bool at_least,
                         int timeout_ms)
{
    struct timespec deadline = deadline_in(timeout_ms);
    pthread_mutex_lock(&mb->mu);
    bool ok;
    for (;;) {
        uint64_t v = counter_locked(mb, c);
        ok = at_least ? v >= bound : v <= bound;
        if (ok || mb->stopping)
            break;
        int rc = timeout_ms < 0 ? pthread_cond_wait(&mb->cond, &mb->mu)
                                : pthread_cond_timedwait(&mb->cond, &mb->mu, &deadline);
        if (rc == ETIMEDOUT) {
            v = counter_locked(mb, c);
            ok = at_least ? v >= bound : v <= bound;
            break;
        }
    }
    pthread_mutex_unlock(&mb->mu);
    return ok;
}

bool mock_broker_wait_count(mock_broker_t *mb, mock_counter_t c, uint64_t at_least, int timeout_ms)
{
    return wait_counter(mb, c, at_least, true, timeout_ms);
}

bool mock_broker_wait_count_at_most(mock_broker_t *mb, mock_counter_t c, uint64_t at_most,
                                    int timeout_ms)
{
    return wait_counter(mb, c, at_most, false, timeout_ms);
}

bool mock_broker_wait_sends(mock_broker_t *mb, size_t n, int timeout_ms)
{
    return wait_counter(mb, MOCK_SENDS, n, true, timeout_ms);
}

bool mock_broker_last_connect(mock_broker_t *mb, mock_connect_info_t *out)
{
    pthread_mutex_lock(&mb->mu);
    bool has = mb->has_connect;
    if (has)
        *out = mb->last_connect;
    else
        memset(out, 0, sizeof *out);
    pthread_mutex_unlock(&mb->mu);
    return has;
}

bool mock_broker_last_lookup(mock_broker_t *mb, mock_lookup_info_t *out)
{
    pthread_mutex_lock(&mb->mu);
    bool has = mb->has_lookup;
    if (has)
        *out = mb->last_lookup;
    else
        memset(out, 0, sizeof *out);
    pthread_mutex_unlock(&mb->mu);
    return has;
}

bool mock_broker_last_auth_response(mock_broker_t *mb, mock_auth_response_t *out)
{
    pthread_mutex_lock(&mb->mu);
    bool has = mb->has_auth_response;
    if (has)
        *out = mb->last_auth_response;
    else
        memset(out, 0, sizeof *out);
    pthread_mutex_unlock(&mb->mu);
    return has;
}

bool mock_broker_last_producer(mock_broker_t *mb, mock_producer_info_t *out)
{
    pthread_mutex_lock(&mb->mu);
    bool has = mb->has_producer;
    if (has)
        *out = mb->last_producer;
    else
        memset(out, 0, sizeof *out);
    pthread_mutex_unlock(&mb->mu);
    return has;
}

bool mock_broker_get_send(mock_broker_t *mb, size_t index, mock_send_t *out)
{
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&mb->mu);
    if (index >= mb->n_sends) {
        pthread_mutex_unlock(&mb->mu);
        return false;
    }
    const mock_send_t *s = &mb->sends[index];
    *out = *s;
    out->producer_name = NULL;
    out->metadata_raw = NULL;
    out->payload = NULL;
    out->metadata = NULL;
    bool ok = true;
    if (s->producer_name && !(out->producer_name = dupstr(s->producer_name)))
        ok = false;
    if (s->metadata_raw && !(out->metadata_raw = dupmem(s->metadata_raw, s->metadata_raw_len)))
        ok = false;
    if (s->payload && !(out->payload = dupmem(s->payload, s->payload_len)))
        ok = false;
    pthread_mutex_unlock(&mb->mu);
    if (ok && out->metadata_raw)
        out->metadata = pulsar__proto__message_metadata__unpack(NULL, out->metadata_raw_len,
                                                                out->metadata_raw);
    if (!ok) {
        mock_send_free(out);
        return false;
    }
    return true;
}

void mock_send_free(mock_send_t *s)
{
    if (!s)
        return;
    free(s->producer_name);
    free(s->metadata_raw);
    free(s->payload);
    if (s->metadata)
        pulsar__proto__message_metadata__free_unpacked(s->metadata, NULL);
    memset(s, 0, sizeof *s);
}
