/* The broker's side of in-memory connections: see fake_broker.h. */
#include "fake_broker.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "broker_commands.h"
#include "fuzz_check.h"
#include "lockstep.h"
#include "net/connection.h"
#include "virtual_clock.h"

/* Client frames are judged by what the client may write, not by our own limits: anything
 * it sends must parse, so the reader for them accepts large frames. */
#define CLIENT_FRAME_LIMIT (64u * 1024 * 1024)
/* Rounds of "client turn, broker answers" at one instant before the two are declared to
 * answer each other for ever (each round needs the other side to have written). */
#define SETTLE_LIMIT 10000
/* Turns the client gets to read a full socket before the broker gives up writing to it. */
#define FULL_SOCKET_TURNS 3

#define FB_CHECK(cond, ...) FUZZ_CHECK("fake broker", cond, __VA_ARGS__)

/* ---- connections handed over by the seam (in the client's loop, during a turn) ----- */

static int hand_over(void *ctx, const pc_host_port_t *physical)
{
    fake_broker_t *fb = ctx;
    int sv[2];
    fb->connect_attempts++;
    if (fb->refuse == FB_FAIL || fb->n_conns == FB_MAX_CONNS ||
        socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
        return -1;
    fb_conn_t *c = &fb->conns[fb->n_conns++];
    pc_frame_reader_init(&c->in, CLIENT_FRAME_LIMIT);
    c->fd = sv[1];
    if (fb->refuse == FB_HANG_UP) {
        close(sv[1]);
        c->fd = -1;
    }
    return sv[0];
}

const pc_transport_t *fb_seam(fake_broker_t *fb)
{
    return &fb->seam;
}

int fb_conn_count(const fake_broker_t *fb)
{
    return fb->n_conns;
}

void fb_set_refuse(fake_broker_t *fb, fb_refuse_t mode)
{
    fb->refuse = mode;
}

fake_broker_t *fb_new(const fb_settings_t *settings)
{
    fake_broker_t *fb = calloc(1, sizeof *fb);
    if (!fb)
        return NULL;
    fb->settings = *settings;
    for (int i = 0; i < BS_AUTO_COUNT; i++)
        fb->autos[i] = i != BS_AUTO_RECEIPT;
    pc_buf_init(&fb->reply);
    fb->seam = (pc_transport_t){ .open_socket = hand_over, .ctx = fb };
    return fb;
}

void fb_free(fake_broker_t *fb)
{
    for (int i = 0; i < fb->n_conns; i++) {
        fb_hang_up(fb, i);
        pc_frame_reader_free(&fb->conns[i].in);
    }
    pc_buf_free(&fb->reply);
    free(fb);
}

int fb_open_conn(const fake_broker_t *fb, unsigned k)
{
    unsigned open = 0;
    for (int i = 0; i < fb->n_conns; i++)
        open += fb->conns[i].fd >= 0;
    if (open == 0)
        return -1;
    k %= open;
    for (int i = 0; i < fb->n_conns; i++)
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

void fb_write(fake_broker_t *fb, int i, const void *data, size_t len)
{
    if (fb->conns[i].fd < 0)
        return;
    const fb_transport_t *t = fb->settings.transport;
    if (t)
        t->write(fb->settings.transport_ctx, fb, i, data, len);
    else
        fb_write_wire(fb, i, data, len);
}

void fb_write_wire(fake_broker_t *fb, int i, const void *data, size_t len)
{
    fb_conn_t *c = &fb->conns[i];
    const uint8_t *p = data;
    int full_turns = 0;
    while (len > 0 && c->fd >= 0) {
        /* Never blocking: the client reads only during its turns. A closed peer makes
         * this fail (EPIPE, without a signal) rather than wait. */
        ssize_t n = send(c->fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            p += n;
            len -= (size_t)n;
            full_turns = 0;
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else if (n < 0 && errno == EAGAIN && full_turns++ < FULL_SOCKET_TURNS) {
            ls_turn();
        } else {
            return; /* the client is gone (reading will notice) or stopped reading */
        }
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
        Pulsar__Proto__MessageMetadata *m = pulsar__proto__message_metadata__unpack(NULL,
                                                                                    f->metadata_len,
                                                                                    f->metadata);
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

/* Write the reply an encoder (tests/support/broker_commands.h) put in fb->reply. */
static void answer(fake_broker_t *fb, int i, int encoded)
{
    FB_CHECK(encoded == 0, "out of memory encoding a reply");
    fb_write(fb, i, fb->reply.data, fb->reply.len);
    fb->reply.len = 0;
}

static void answer_lookup(fake_broker_t *fb, int i, uint64_t request_id)
{
    const fb_settings_t *st = &fb->settings;
    if (fb->settings.lookup_redirects > 0) {
        fb->settings.lookup_redirects--;
        answer(fb, i,
               bc_lookup_redirect(&fb->reply, request_id, FB_REDIRECT_URL,
                                  st->tls ? FB_REDIRECT_URL_TLS : NULL, true));
    } else if (st->proxy_through) {
        /* Reached through the service URL (a connection of its own, which names the
         * broker in CONNECT): the broker must differ from the service URL's. */
        answer(fb, i,
               bc_lookup_connect(&fb->reply, request_id, FB_REDIRECT_URL,
                                 st->tls ? FB_REDIRECT_URL_TLS : NULL, true));
    } else {
        answer(fb, i,
               bc_lookup_connect(&fb->reply, request_id, FB_BROKER_URL,
                                 st->tls ? FB_BROKER_URL_TLS : NULL, false));
    }
}

static void answer_producer(fake_broker_t *fb, int i, const Pulsar__Proto__CommandProducer *p)
{
    if (fb->settings.producer_errors > 0) {
        fb->settings.producer_errors--;
        answer(fb, i,
               bc_error(&fb->reply, p->request_id, PULSAR__PROTO__SERVER_ERROR__ServiceNotReady,
                        "Topic is temporarily unavailable"));
        return;
    }
    char name[64];
    snprintf(name, sizeof name, "standalone-0-%llu", (unsigned long long)p->producer_id);
    ProtobufCBinaryData version = fb_version(0, fb->settings.producer_version_len);
    answer(fb, i,
           bc_producer_success(&fb->reply, p->request_id,
                               p->producer_name ? p->producer_name : name,
                               fb->settings.last_sequence_id, version.len > 0 ? &version : NULL,
                               true, -1));
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
    const Pulsar__Proto__Schema *schema = fb->settings.topic_schema;
    if (schema)
        answer(fb, i, bc_get_schema(&fb->reply, request_id, schema, fb_version(1, 8)));
    else
        answer(fb, i,
               bc_get_schema_error(&fb->reply, request_id,
                                   PULSAR__PROTO__SERVER_ERROR__TopicNotFound,
                                   "Topic not found or no-schema"));
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
            answer(fb, i,
                   bc_connected(&fb->reply, "Pulsar Server3.2.0", 21,
                                fb->settings.max_message_size));
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
            answer(fb, i,
                   bc_partitions(&fb->reply, cmd->partitionmetadata->request_id,
                                 fb->settings.partitions));
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
            const Pulsar__Proto__CommandSend *in = cmd->send;
            answer(fb, i,
                   bc_receipt(&fb->reply, in->producer_id, in->sequence_id,
                              in->has_highest_sequence_id ? in->highest_sequence_id
                                                          : in->sequence_id,
                              7, fb->next_entry++));
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
            answer(fb, i,
                   bc_schema_version(&fb->reply, cmd->getorcreateschema->request_id,
                                     fb_version(2 + fb->next_schema_version++, 8)));
        break;
    case PULSAR__PROTO__BASE_COMMAND__TYPE__CLOSE_PRODUCER:
        FB_CHECK(cmd->close_producer, "CLOSE_PRODUCER without its body");
        record_request(fb, i, cmd->close_producer->request_id, cmd->type);
        if (autos[BS_AUTO_CLOSE])
            answer(fb, i, bc_success(&fb->reply, cmd->close_producer->request_id));
        break;
    case PULSAR__PROTO__BASE_COMMAND__TYPE__PING:
        if (autos[BS_AUTO_PONG])
            answer(fb, i, bc_pong(&fb->reply));
        break;
    default:
        break;
    }
    pulsar__proto__base_command__free_unpacked(cmd, NULL);
}

/* Read what the client wrote on connection i, up to what is there now. Returns whether
 * there was anything (bytes or the client's close). */
static bool read_conn(fake_broker_t *fb, int i)
{
    static uint8_t buf[64 * 1024];
    fb_conn_t *c = &fb->conns[i];
    bool got = false;
    while (c->fd >= 0) {
        ssize_t n = recv(c->fd, buf, sizeof buf, MSG_DONTWAIT);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN)
            return got;
        got = true;
        if (n <= 0) {
            /* The client closed (a partial frame left in the reader is a write it
             * cancelled). */
            fb_hang_up(fb, i);
            return got;
        }
        if (fb->settings.transport)
            fb->settings.transport->read(fb->settings.transport_ctx, fb, i, buf, (size_t)n);
        else
            fb_deliver(fb, i, buf, (size_t)n);
    }
    return got;
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

/* ---- serving ------------------------------------------------------------------------ */

void fb_settle(fake_broker_t *fb)
{
    /* A turn leaves the client idle; reading and answering may give it more to do (the
     * broker wrote, or the client's full socket drained): then it gets another turn. When
     * the client wrote nothing, the broker did nothing either, and the client is still
     * idle. */
    for (int round = 0;; round++) {
        FB_CHECK(round < SETTLE_LIMIT, "the client and the broker never stop answering each other");
        ls_turn();
        bool got = false;
        for (int i = 0; i < fb->n_conns; i++)
            got |= read_conn(fb, i);
        if (!got || !ls_pending())
            return;
    }
}

bool fb_serve(fake_broker_t *fb, uint64_t deadline_ms, bool (*done)(fake_broker_t *, void *),
              void *ctx)
{
    for (;;) {
        fb_settle(fb);
        if (done && done(fb, ctx))
            return true;
        uint64_t now = vc_now();
        if (now >= deadline_ms)
            return false;
        /* The client's next timer fires in the next turn (after a settle, it is later). */
        uint64_t next = ls_next_timer();
        vc_set(next > now && next < deadline_ms ? next : deadline_ms);
    }
}
