/* The broker's side of in-memory connections: see fake_broker.h. */
#include "fake_broker.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/clock.h"
#include "net/connection.h"

/* Client frames are judged by what the client may write, not by our own limits: anything
 * it sends must parse, so the reader for them accepts large frames. */
#define CLIENT_FRAME_LIMIT (64u * 1024 * 1024)
#define CLIENT_READER_INITIAL_LIMIT \
    (PC_FRAME_DEFAULT_MAX_MESSAGE_SIZE + PC_FRAME_OVERHEAD_ALLOWANCE)

#define FB_CHECK(cond, ...)                                        \
    do {                                                           \
        if (!(cond)) {                                             \
            fprintf(stderr, "fake broker: " __VA_ARGS__);          \
            fputc('\n', stderr);                                   \
            abort();                                               \
        }                                                          \
    } while (0)

/* ---- connections handed over by the seam (client's loop thread) ------------------- */

static int hand_over(void *ctx, const pc_host_port_t *physical)
{
    fake_broker_t *fb = ctx;
    int client_end = -1;
    int sv[2];
    pthread_mutex_lock(&fb->mu);
    fb->connect_attempts++;
    if (fb->refuse != FB_FAIL && fb->n_conns < FB_MAX_CONNS &&
        socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0) {
        fb_conn_t *c = &fb->conns[fb->n_conns];
        memset(c, 0, sizeof *c);
        pc_frame_reader_init(&c->in, CLIENT_FRAME_LIMIT);
        pc_frame_reader_init(&c->out, CLIENT_READER_INITIAL_LIMIT);
        c->fd = sv[1];
        if (fb->refuse == FB_HANG_UP) {
            close(sv[1]);
            c->fd = -1;
        }
        fb->n_conns++;
        client_end = sv[0];
    }
    pthread_mutex_unlock(&fb->mu);
    /* So that a serve() sleeping in poll() starts watching the new connection. */
    fb_wake(fb);
    return client_end;
}

const pc_transport_t *fb_seam(fake_broker_t *fb)
{
    return &fb->seam;
}

void fb_wake(fake_broker_t *fb)
{
    /* A full pipe already holds a wake-up. */
    ssize_t w = write(fb->wake[1], "w", 1);
    (void)w;
}

int fb_conn_count(fake_broker_t *fb)
{
    pthread_mutex_lock(&fb->mu);
    int n = fb->n_conns;
    pthread_mutex_unlock(&fb->mu);
    return n;
}

void fb_set_refuse(fake_broker_t *fb, fb_refuse_t mode)
{
    pthread_mutex_lock(&fb->mu);
    fb->refuse = mode;
    pthread_mutex_unlock(&fb->mu);
}

fake_broker_t *fb_new(const fb_settings_t *settings)
{
    fake_broker_t *fb = calloc(1, sizeof *fb);
    if (!fb)
        return NULL;
    if (pipe2(fb->wake, O_NONBLOCK | O_CLOEXEC) != 0) {
        free(fb);
        return NULL;
    }
    pthread_mutex_init(&fb->mu, NULL);
    fb->settings = *settings;
    for (int i = 0; i < BS_AUTO_COUNT; i++)
        fb->autos[i] = i != BS_AUTO_RECEIPT;
    fb->seam = (pc_transport_t){ .open_socket = hand_over, .ctx = fb };
    return fb;
}

void fb_free(fake_broker_t *fb)
{
    for (int i = 0; i < fb->n_conns; i++) {
        fb_conn_t *c = &fb->conns[i];
        fb_hang_up(fb, i);
        pc_frame_reader_free(&c->in);
        pc_frame_reader_free(&c->out);
    }
    close(fb->wake[0]);
    close(fb->wake[1]);
    pthread_mutex_destroy(&fb->mu);
    free(fb);
}

int fb_open_conn(fake_broker_t *fb, unsigned k)
{
    int n = fb_conn_count(fb);
    unsigned open = 0;
    for (int i = 0; i < n; i++)
        open += fb->conns[i].fd >= 0;
    if (open == 0)
        return -1;
    k %= open;
    for (int i = 0; i < n; i++)
        if (fb->conns[i].fd >= 0 && k-- == 0)
            return i;
    return -1;
}

void fb_hang_up(fake_broker_t *fb, int i)
{
    fb_conn_t *c = &fb->conns[i];
    if (c->fd < 0)
        return;
    /* Before the close: a layer may want to say goodbye on the socket. */
    if (fb->settings.transport)
        fb->settings.transport->closed(fb->settings.transport_ctx, fb, i);
    close(c->fd);
    c->fd = -1;
}

/* ---- writing ------------------------------------------------------------------------ */

/* Follow the bytes as the client's frame reader will: so a sync knows whether the client
 * can still answer a PING (the stream is at a frame boundary and not broken), and how many
 * PINGs it will answer. The first CONNECTED sets the client's frame limit. */
static void track_output(fb_conn_t *c, const uint8_t *data, size_t len)
{
    if (pc_frame_reader_feed(&c->out, data, len) != 0)
        return;
    pc_frame_t f;
    while (pc_frame_reader_next(&c->out, &f) == PC_FRAME_OK) {
        Pulsar__Proto__BaseCommand *cmd = pc_frame_unpack_command(&f);
        if (!cmd)
            continue;
        if (cmd->type == PULSAR__PROTO__BASE_COMMAND__TYPE__CONNECTED && cmd->connected &&
            !c->out_connected) {
            c->out_connected = true;
            if (cmd->connected->has_max_message_size && cmd->connected->max_message_size > 0)
                pc_frame_reader_set_max(&c->out, (size_t)cmd->connected->max_message_size +
                                                     PC_FRAME_OVERHEAD_ALLOWANCE);
        }
        if (cmd->type == PULSAR__PROTO__BASE_COMMAND__TYPE__PING)
            c->pings_out++;
        pulsar__proto__base_command__free_unpacked(cmd, NULL);
    }
}

static bool at_frame_boundary(const fb_conn_t *c)
{
    return !c->broken && c->out.error == 0 && c->out.buf.len == c->out.pos;
}

void fb_write(fake_broker_t *fb, int i, const void *data, size_t len)
{
    fb_conn_t *c = &fb->conns[i];
    if (c->fd < 0)
        return;
    track_output(c, data, len);
    const fb_transport_t *t = fb->settings.transport;
    if (!t)
        fb_write_wire(fb, i, data, len);
    else if (!t->write(fb->settings.transport_ctx, fb, i, data, len))
        c->broken = true;
}

void fb_set_broken(fake_broker_t *fb, int i)
{
    fb->conns[i].broken = true;
}

void fb_write_wire(fake_broker_t *fb, int i, const void *data, size_t len)
{
    fb_conn_t *c = &fb->conns[i];
    if (c->fd < 0)
        return;
    const uint8_t *p = data;
    while (len > 0) {
        /* Blocking is fine: the client's loop reads whenever it is not closed, and a
         * closed peer makes this fail (EPIPE, without a signal) rather than wait. */
        ssize_t n = send(c->fd, p, len, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return; /* the client is gone: reading will notice */
        p += n;
        len -= (size_t)n;
    }
}

void fb_write_command(fake_broker_t *fb, int i, const Pulsar__Proto__BaseCommand *cmd)
{
    pc_buf_t b;
    pc_buf_init(&b);
    FB_CHECK(pc_frame_encode_command(&b, cmd) == 0, "out of memory encoding a command");
    fb_write(fb, i, b.data, b.len);
    pc_buf_free(&b);
}

/* ---- records ------------------------------------------------------------------------ */

const fb_request_t *fb_recent_request(const fake_broker_t *fb, unsigned n)
{
    unsigned kept = fb->n_requests < FB_MAX_REQUESTS ? fb->n_requests : FB_MAX_REQUESTS;
    if (n >= kept)
        return NULL;
    return &fb->requests[(fb->n_requests - 1 - n) % FB_MAX_REQUESTS];
}

static void record_request(fake_broker_t *fb, int conn, uint64_t id,
                           Pulsar__Proto__BaseCommand__Type type)
{
    fb->requests[fb->n_requests % FB_MAX_REQUESTS] = (fb_request_t){ conn, id, type };
    fb->n_requests++;
}

static void record_producer(fake_broker_t *fb, uint64_t id, int conn)
{
    int i = 0;
    while (i < fb->n_producers && fb->producers[i].id != id)
        i++;
    if (i == FB_MAX_PRODUCERS)
        return;
    fb->producers[i] = (fb_producer_t){ id, conn };
    if (i == fb->n_producers)
        fb->n_producers++;
}

/* A SEND carries num_messages messages, or one chunk of one message (counted at its last
 * chunk). Returns the record, or NULL when the table is full. */
static fb_send_t *record_send(fake_broker_t *fb, int conn, const Pulsar__Proto__CommandSend *s,
                              const pc_frame_t *f)
{
    if (!(s->has_is_chunk && s->is_chunk)) {
        fb->messages_received += s->num_messages > 0 ? (unsigned)s->num_messages : 1;
    } else {
        Pulsar__Proto__MessageMetadata *m =
            pulsar__proto__message_metadata__unpack(NULL, f->metadata_len, f->metadata);
        FB_CHECK(m, "the client wrote chunk metadata that does not parse");
        if (m->chunk_id == m->num_chunks_from_msg - 1)
            fb->messages_received++;
        pulsar__proto__message_metadata__free_unpacked(m, NULL);
    }
    if (fb->n_sends == FB_MAX_SENDS)
        return NULL;
    fb_send_t *r = &fb->sends[fb->n_sends++];
    *r = (fb_send_t){ .conn = conn,
                      .producer_id = s->producer_id,
                      .sequence_id = s->sequence_id,
                      .has_highest = s->has_highest_sequence_id,
                      .highest_sequence_id = s->highest_sequence_id };
    return r;
}

/* ---- automatic answers -------------------------------------------------------------- */

static void answer_connected(fake_broker_t *fb, int i)
{
    Pulsar__Proto__CommandConnected m = PULSAR__PROTO__COMMAND_CONNECTED__INIT;
    Pulsar__Proto__BaseCommand cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    m.server_version = (char *)"Pulsar Server3.2.0";
    m.has_protocol_version = 1;
    m.protocol_version = 21;
    m.has_max_message_size = 1;
    m.max_message_size = fb->settings.max_message_size;
    cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__CONNECTED;
    cmd.connected = &m;
    fb_write_command(fb, i, &cmd);
}

static void answer_lookup(fake_broker_t *fb, int i, uint64_t request_id)
{
    Pulsar__Proto__CommandLookupTopicResponse m = PULSAR__PROTO__COMMAND_LOOKUP_TOPIC_RESPONSE__INIT;
    Pulsar__Proto__BaseCommand cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    m.request_id = request_id;
    m.has_response = 1;
    m.has_authoritative = 1;
    m.authoritative = 1;
    if (fb->settings.lookup_redirects > 0) {
        fb->settings.lookup_redirects--;
        m.response = PULSAR__PROTO__COMMAND_LOOKUP_TOPIC_RESPONSE__LOOKUP_TYPE__Redirect;
        m.brokerserviceurl = (char *)FB_REDIRECT_URL;
        m.brokerserviceurltls = fb->settings.tls ? (char *)FB_REDIRECT_URL_TLS : NULL;
    } else {
        m.response = PULSAR__PROTO__COMMAND_LOOKUP_TOPIC_RESPONSE__LOOKUP_TYPE__Connect;
        m.brokerserviceurl = (char *)FB_BROKER_URL;
        m.brokerserviceurltls = fb->settings.tls ? (char *)FB_BROKER_URL_TLS : NULL;
        m.has_proxy_through_service_url = fb->settings.proxy_through;
        m.proxy_through_service_url = fb->settings.proxy_through;
    }
    cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__LOOKUP_RESPONSE;
    cmd.lookuptopicresponse = &m;
    fb_write_command(fb, i, &cmd);
}

static void answer_partitions(fake_broker_t *fb, int i, uint64_t request_id)
{
    Pulsar__Proto__CommandPartitionedTopicMetadataResponse m =
        PULSAR__PROTO__COMMAND_PARTITIONED_TOPIC_METADATA_RESPONSE__INIT;
    Pulsar__Proto__BaseCommand cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    m.request_id = request_id;
    m.has_partitions = 1;
    m.partitions = fb->settings.partitions;
    m.has_response = 1;
    m.response = PULSAR__PROTO__COMMAND_PARTITIONED_TOPIC_METADATA_RESPONSE__LOOKUP_TYPE__Success;
    cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__PARTITIONED_METADATA_RESPONSE;
    cmd.partitionmetadataresponse = &m;
    fb_write_command(fb, i, &cmd);
}

static void answer_producer(fake_broker_t *fb, int i, const Pulsar__Proto__CommandProducer *p)
{
    Pulsar__Proto__BaseCommand cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    if (fb->settings.producer_errors > 0) {
        fb->settings.producer_errors--;
        Pulsar__Proto__CommandError e = PULSAR__PROTO__COMMAND_ERROR__INIT;
        e.request_id = p->request_id;
        e.error = PULSAR__PROTO__SERVER_ERROR__ServiceNotReady;
        e.message = (char *)"Topic is temporarily unavailable";
        cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__ERROR;
        cmd.error = &e;
        fb_write_command(fb, i, &cmd);
        return;
    }
    char name[64];
    snprintf(name, sizeof name, "standalone-0-%llu", (unsigned long long)p->producer_id);
    Pulsar__Proto__CommandProducerSuccess m = PULSAR__PROTO__COMMAND_PRODUCER_SUCCESS__INIT;
    m.request_id = p->request_id;
    m.producer_name = p->producer_name ? p->producer_name : name;
    m.has_last_sequence_id = 1;
    m.last_sequence_id = fb->settings.last_sequence_id;
    m.has_schema_version = fb->settings.producer_version_len > 0;
    m.schema_version = fb_version(0, fb->settings.producer_version_len);
    cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__PRODUCER_SUCCESS;
    cmd.producer_success = &m;
    fb_write_command(fb, i, &cmd);
}

ProtobufCBinaryData fb_version(uint64_t n, size_t len)
{
    /* Big-endian n in the last 8 bytes, as a broker's versions are; read-only to users. */
    static uint8_t v[FB_VERSION_MAX];
    memset(v, 0, sizeof v);
    for (int i = 0; i < 8; i++)
        v[sizeof v - 1 - i] = (uint8_t)(n >> (8 * i));
    if (len > sizeof v)
        len = sizeof v;
    return (ProtobufCBinaryData){ len, v + sizeof v - len };
}

static void answer_get_schema(fake_broker_t *fb, int i, uint64_t request_id)
{
    Pulsar__Proto__CommandGetSchemaResponse m = PULSAR__PROTO__COMMAND_GET_SCHEMA_RESPONSE__INIT;
    Pulsar__Proto__BaseCommand cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    m.request_id = request_id;
    if (fb->settings.topic_schema) {
        m.schema = (Pulsar__Proto__Schema *)fb->settings.topic_schema;
        m.has_schema_version = 1;
        m.schema_version = fb_version(1, 8);
    } else {
        m.has_error_code = 1;
        m.error_code = PULSAR__PROTO__SERVER_ERROR__TopicNotFound;
        m.error_message = (char *)"Topic not found or no-schema";
    }
    cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__GET_SCHEMA_RESPONSE;
    cmd.getschemaresponse = &m;
    fb_write_command(fb, i, &cmd);
}

static void answer_get_or_create_schema(fake_broker_t *fb, int i, uint64_t request_id)
{
    Pulsar__Proto__CommandGetOrCreateSchemaResponse m =
        PULSAR__PROTO__COMMAND_GET_OR_CREATE_SCHEMA_RESPONSE__INIT;
    Pulsar__Proto__BaseCommand cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    m.request_id = request_id;
    m.has_schema_version = 1;
    m.schema_version = fb_version(2 + fb->next_schema_version++, 8);
    cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__GET_OR_CREATE_SCHEMA_RESPONSE;
    cmd.getorcreateschemaresponse = &m;
    fb_write_command(fb, i, &cmd);
}

static void answer_send(fake_broker_t *fb, int i, const Pulsar__Proto__CommandSend *s)
{
    Pulsar__Proto__MessageIdData id = PULSAR__PROTO__MESSAGE_ID_DATA__INIT;
    Pulsar__Proto__CommandSendReceipt m = PULSAR__PROTO__COMMAND_SEND_RECEIPT__INIT;
    Pulsar__Proto__BaseCommand cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    id.ledgerid = 7;
    id.entryid = fb->next_entry++;
    m.producer_id = s->producer_id;
    m.sequence_id = s->sequence_id;
    m.message_id = &id;
    m.has_highest_sequence_id = s->has_highest_sequence_id;
    m.highest_sequence_id = s->highest_sequence_id;
    cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__SEND_RECEIPT;
    cmd.send_receipt = &m;
    fb_write_command(fb, i, &cmd);
}

static void answer_success(fake_broker_t *fb, int i, uint64_t request_id)
{
    Pulsar__Proto__CommandSuccess m = PULSAR__PROTO__COMMAND_SUCCESS__INIT;
    Pulsar__Proto__BaseCommand cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    m.request_id = request_id;
    cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__SUCCESS;
    cmd.success = &m;
    fb_write_command(fb, i, &cmd);
}

static void answer_simple(fake_broker_t *fb, int i, Pulsar__Proto__BaseCommand__Type type)
{
    Pulsar__Proto__CommandPong pong = PULSAR__PROTO__COMMAND_PONG__INIT;
    Pulsar__Proto__CommandPing ping = PULSAR__PROTO__COMMAND_PING__INIT;
    Pulsar__Proto__BaseCommand cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.type = type;
    if (type == PULSAR__PROTO__BASE_COMMAND__TYPE__PING)
        cmd.ping = &ping;
    else
        cmd.pong = &pong;
    fb_write_command(fb, i, &cmd);
}

/* ---- reading ------------------------------------------------------------------------ */

/* An AUTO_PRODUCE producer registers the schema the topic's GET_SCHEMA answer gave it,
 * or none when the topic has none. */
static void check_auto_produce(const fake_broker_t *fb, const Pulsar__Proto__Schema *got)
{
    const Pulsar__Proto__Schema *want = fb->settings.topic_schema;
    if (!want || want->type == PULSAR__PROTO__SCHEMA__TYPE__None) {
        FB_CHECK(!got, "AUTO_PRODUCE registered a schema the topic does not have");
        return;
    }
    FB_CHECK(got && got->type == want->type && !strcmp(got->name, want->name) &&
                 got->schema_data.len == want->schema_data.len &&
                 (!want->schema_data.len ||
                  !memcmp(got->schema_data.data, want->schema_data.data, want->schema_data.len)),
             "AUTO_PRODUCE registered another schema than the topic's");
}

/* Everything the client writes must be a well-formed command a producer sends. */
static void handle_client_frame(fake_broker_t *fb, int i, const pc_frame_t *f)
{
    Pulsar__Proto__BaseCommand *cmd = pc_frame_unpack_command(f);
    FB_CHECK(cmd, "the client wrote a command that does not parse");
    FB_CHECK(!f->has_payload || f->checksum_ok, "the client wrote a payload with a bad checksum");
    const bool *autos = fb->autos;
    switch (cmd->type) {
    case PULSAR__PROTO__BASE_COMMAND__TYPE__CONNECT:
        FB_CHECK(cmd->connect, "CONNECT without its body");
        if (autos[BS_AUTO_CONNECT])
            answer_connected(fb, i);
        break;
    case PULSAR__PROTO__BASE_COMMAND__TYPE__LOOKUP:
        FB_CHECK(cmd->lookuptopic, "LOOKUP without its body");
        record_request(fb, i, cmd->lookuptopic->request_id, cmd->type);
        if (autos[BS_AUTO_LOOKUP])
            answer_lookup(fb, i, cmd->lookuptopic->request_id);
        break;
    case PULSAR__PROTO__BASE_COMMAND__TYPE__PARTITIONED_METADATA:
        FB_CHECK(cmd->partitionmetadata, "PARTITIONED_METADATA without its body");
        record_request(fb, i, cmd->partitionmetadata->request_id, cmd->type);
        if (autos[BS_AUTO_LOOKUP])
            answer_partitions(fb, i, cmd->partitionmetadata->request_id);
        break;
    case PULSAR__PROTO__BASE_COMMAND__TYPE__PRODUCER:
        FB_CHECK(cmd->producer, "PRODUCER without its body");
        record_request(fb, i, cmd->producer->request_id, cmd->type);
        record_producer(fb, cmd->producer->producer_id, i);
        if (fb->settings.auto_produce)
            check_auto_produce(fb, cmd->producer->schema);
        if (autos[BS_AUTO_PRODUCER])
            answer_producer(fb, i, cmd->producer);
        break;
    case PULSAR__PROTO__BASE_COMMAND__TYPE__SEND: {
        FB_CHECK(cmd->send && f->has_payload, "SEND without its body or payload");
        fb_send_t *r = record_send(fb, i, cmd->send, f);
        if (autos[BS_AUTO_RECEIPT]) {
            answer_send(fb, i, cmd->send);
            if (r)
                r->receipted = true;
        }
        break;
    }
    case PULSAR__PROTO__BASE_COMMAND__TYPE__GET_SCHEMA:
        FB_CHECK(cmd->getschema && cmd->getschema->topic, "GET_SCHEMA without its body");
        record_request(fb, i, cmd->getschema->request_id, cmd->type);
        if (autos[BS_AUTO_SCHEMA])
            answer_get_schema(fb, i, cmd->getschema->request_id);
        break;
    case PULSAR__PROTO__BASE_COMMAND__TYPE__GET_OR_CREATE_SCHEMA:
        FB_CHECK(cmd->getorcreateschema && cmd->getorcreateschema->schema,
                 "GET_OR_CREATE_SCHEMA without its body or schema");
        record_request(fb, i, cmd->getorcreateschema->request_id, cmd->type);
        if (autos[BS_AUTO_SCHEMA])
            answer_get_or_create_schema(fb, i, cmd->getorcreateschema->request_id);
        break;
    case PULSAR__PROTO__BASE_COMMAND__TYPE__CLOSE_PRODUCER:
        FB_CHECK(cmd->close_producer, "CLOSE_PRODUCER without its body");
        record_request(fb, i, cmd->close_producer->request_id, cmd->type);
        if (autos[BS_AUTO_CLOSE])
            answer_success(fb, i, cmd->close_producer->request_id);
        break;
    case PULSAR__PROTO__BASE_COMMAND__TYPE__PING:
        if (autos[BS_AUTO_PONG])
            answer_simple(fb, i, PULSAR__PROTO__BASE_COMMAND__TYPE__PONG);
        break;
    case PULSAR__PROTO__BASE_COMMAND__TYPE__PONG:
        fb->conns[i].pongs++;
        break;
    default:
        break;
    }
    pulsar__proto__base_command__free_unpacked(cmd, NULL);
}

static void read_conn(fake_broker_t *fb, int i)
{
    static uint8_t buf[64 * 1024];
    fb_conn_t *c = &fb->conns[i];
    ssize_t n = recv(c->fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (n <= 0) {
        /* The client closed (a partial frame left in the reader is a write it cancelled). */
        fb_hang_up(fb, i);
        return;
    }
    if (fb->settings.transport)
        fb->settings.transport->read(fb->settings.transport_ctx, fb, i, buf, (size_t)n);
    else
        fb_deliver(fb, i, buf, (size_t)n);
}

void fb_deliver(fake_broker_t *fb, int i, const uint8_t *data, size_t len)
{
    fb_conn_t *c = &fb->conns[i];
    FB_CHECK(pc_frame_reader_feed(&c->in, data, len) == 0, "out of memory reading");
    pc_frame_t f;
    pc_frame_status_t st;
    while ((st = pc_frame_reader_next(&c->in, &f)) == PC_FRAME_OK) {
        fb->frames_received++;
        handle_client_frame(fb, i, &f);
    }
    FB_CHECK(st == PC_FRAME_NEED_MORE, "the client wrote a broken frame (status %d)", (int)st);
}

bool fb_serve(fake_broker_t *fb, uint64_t deadline_ms, bool (*done)(fake_broker_t *, void *),
              void *ctx)
{
    struct pollfd pfd[FB_MAX_CONNS + 1];
    int which[FB_MAX_CONNS + 1];
    for (;;) {
        if (done && done(fb, ctx))
            return true;
        uint64_t now = pc_mono_ms();
        if (now >= deadline_ms)
            return false;
        int n = 0;
        pfd[n++] = (struct pollfd){ .fd = fb->wake[0], .events = POLLIN };
        int conns = fb_conn_count(fb);
        for (int i = 0; i < conns; i++) {
            if (fb->conns[i].fd < 0)
                continue;
            which[n] = i;
            pfd[n++] = (struct pollfd){ .fd = fb->conns[i].fd, .events = POLLIN };
        }
        if (poll(pfd, (nfds_t)n, (int)(deadline_ms - now)) <= 0)
            continue;
        if (pfd[0].revents) {
            char drain[64];
            while (read(fb->wake[0], drain, sizeof drain) > 0) {
            }
        }
        for (int k = 1; k < n; k++)
            if (pfd[k].revents && fb->conns[which[k]].fd >= 0)
                read_conn(fb, which[k]);
    }
}

typedef struct sync_wait {
    int conn;
} sync_wait;

static bool synced(fake_broker_t *fb, void *ctx)
{
    const fb_conn_t *c = &fb->conns[((sync_wait *)ctx)->conn];
    return c->fd < 0 || c->pongs >= c->pings_out;
}

void fb_sync(fake_broker_t *fb, int i, uint64_t deadline_ms)
{
    fb_conn_t *c = &fb->conns[i];
    if (c->fd < 0 || !at_frame_boundary(c))
        return;
    answer_simple(fb, i, PULSAR__PROTO__BASE_COMMAND__TYPE__PING);
    sync_wait w = { i };
    fb_serve(fb, deadline_ms, synced, &w);
}
