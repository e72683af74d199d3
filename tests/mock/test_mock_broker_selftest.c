/* Self-test of the mock broker: a raw TCP socket and the project's frame code play the
 * client, so these tests check the mock itself, not the library's client. */
#include <criterion/criterion.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "broker_commands.h"
#include "common/buf.h"
#include "mock_broker.h"
#include "wire/frame.h"

/* Deadlines for what must arrive, scaled for sanitizer builds (tests/CMakeLists.txt). */
#ifndef PC_TEST_TIME_SCALE
#define PC_TEST_TIME_SCALE 1
#endif
#define T_TIMEOUT_MS (3000 * PC_TEST_TIME_SCALE)

typedef enum { RECV_OK, RECV_TIMEOUT, RECV_EOF, RECV_BAD } recv_result_t;

typedef struct client {
    int fd;
    pc_frame_reader_t reader;
    pc_frame_status_t bad_status; /* set when RECV_BAD */
    size_t bytes_received;
} client_t;

static mock_broker_t *mb;

static void setup(void)
{
    mb = mock_broker_start();
    cr_assert_not_null(mb, "mock broker did not start");
}

static void teardown(void)
{
    mock_broker_stop(mb);
    mb = NULL;
}

TestSuite(mock_broker, .init = setup, .fini = teardown, .timeout = 20 * PC_TEST_TIME_SCALE);

/* ---- the raw client ----------------------------------------------------------------- */

static int tcp_connect(uint16_t port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    cr_assert_geq(fd, 0);
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    sa.sin_port = htons(port);
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

static void cl_open(client_t *cl, mock_broker_t *b)
{
    memset(cl, 0, sizeof *cl);
    cl->fd = tcp_connect(mock_broker_port(b));
    cr_assert_geq(cl->fd, 0, "connect: %s", strerror(errno));
    pc_frame_reader_init(&cl->reader, 64u * 1024 * 1024);
}

static void cl_close(client_t *cl)
{
    if (cl->fd >= 0)
        close(cl->fd);
    cl->fd = -1;
    pc_frame_reader_free(&cl->reader);
}

static void write_all(int fd, const uint8_t *p, size_t len)
{
    while (len > 0) {
        ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
        cr_assert_gt(n, 0, "send: %s", strerror(errno));
        p += n;
        len -= (size_t)n;
    }
}

static void cl_send_cmd(client_t *cl, const Pulsar__Proto__BaseCommand *cmd)
{
    pc_buf_t b;
    pc_buf_init(&b);
    cr_assert_eq(pc_frame_encode_command(&b, cmd), 0);
    write_all(cl->fd, b.data, b.len);
    pc_buf_free(&b);
}

static uint64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* The next frame's command (free with pulsar__proto__base_command__free_unpacked), or
 * NULL with *why saying whether time ran out, the peer closed or the bytes were bad. */
static Pulsar__Proto__BaseCommand *cl_recv(client_t *cl, int timeout_ms, recv_result_t *why)
{
    uint64_t deadline = mono_ms() + (uint64_t)timeout_ms;
    for (;;) {
        pc_frame_t f;
        pc_frame_status_t st = pc_frame_reader_next(&cl->reader, &f);
        if (st == PC_FRAME_OK) {
            Pulsar__Proto__BaseCommand *cmd = pc_frame_unpack_command(&f);
            cr_assert_not_null(cmd, "mock sent a command that does not parse");
            *why = RECV_OK;
            return cmd;
        }
        if (st != PC_FRAME_NEED_MORE) {
            cl->bad_status = st;
            *why = RECV_BAD;
            return NULL;
        }
        uint64_t now = mono_ms();
        if (now >= deadline) {
            *why = RECV_TIMEOUT;
            return NULL;
        }
        struct pollfd p = { .fd = cl->fd, .events = POLLIN };
        int pr = poll(&p, 1, (int)(deadline - now));
        if (pr == 0) {
            *why = RECV_TIMEOUT;
            return NULL;
        }
        uint8_t buf[4096];
        ssize_t n = recv(cl->fd, buf, sizeof buf, 0);
        if (n <= 0) {
            *why = RECV_EOF; /* EOF or reset: either way the mock closed */
            return NULL;
        }
        cl->bytes_received += (size_t)n;
        cr_assert_eq(pc_frame_reader_feed(&cl->reader, buf, (size_t)n), 0);
    }
}

/* Receive one command and insist on its type. */
static Pulsar__Proto__BaseCommand *cl_expect(client_t *cl, Pulsar__Proto__BaseCommand__Type type)
{
    recv_result_t why;
    Pulsar__Proto__BaseCommand *cmd = cl_recv(cl, T_TIMEOUT_MS, &why);
    cr_assert_not_null(cmd, "expected command %d, got nothing (why %d)", (int)type, (int)why);
    cr_assert_eq(cmd->type, type, "expected command %d, got %d", (int)type, (int)cmd->type);
    return cmd;
}

/* Assert nothing arrives for ms, and the connection stays open. */
static void cl_expect_silence(client_t *cl, int ms)
{
    recv_result_t why;
    Pulsar__Proto__BaseCommand *cmd = cl_recv(cl, ms, &why);
    if (cmd) {
        int t = cmd->type;
        pulsar__proto__base_command__free_unpacked(cmd, NULL);
        cr_assert_fail("expected silence, got command %d", t);
    }
    cr_assert_eq(why, RECV_TIMEOUT, "expected silence, got why=%d", (int)why);
}

/* Assert the mock closes the connection (possibly after some frames, which are skipped). */
static void cl_expect_eof(client_t *cl)
{
    recv_result_t why;
    Pulsar__Proto__BaseCommand *cmd;
    while ((cmd = cl_recv(cl, T_TIMEOUT_MS, &why)) != NULL)
        pulsar__proto__base_command__free_unpacked(cmd, NULL);
    cr_assert_eq(why, RECV_EOF, "expected the mock to close, got why=%d", (int)why);
}

static void cl_handshake(client_t *cl, const char *version, int32_t proto)
{
    Pulsar__Proto__CommandConnect c = PULSAR__PROTO__COMMAND_CONNECT__INIT;
    c.client_version = (char *)version;
    c.has_protocol_version = true;
    c.protocol_version = proto;
    Pulsar__Proto__BaseCommand cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__CONNECT;
    cmd.connect = &c;
    cl_send_cmd(cl, &cmd);
}

static void cl_connect(client_t *cl, mock_broker_t *b)
{
    cl_open(cl, b);
    cl_handshake(cl, "selftest", 21);
    Pulsar__Proto__BaseCommand *r = cl_expect(cl, PULSAR__PROTO__BASE_COMMAND__TYPE__CONNECTED);
    pulsar__proto__base_command__free_unpacked(r, NULL);
}

static void cl_send_producer(client_t *cl, uint64_t producer_id, uint64_t request_id,
                             const char *name)
{
    Pulsar__Proto__CommandProducer p = PULSAR__PROTO__COMMAND_PRODUCER__INIT;
    p.topic = (char *)"persistent://public/default/selftest";
    p.producer_id = producer_id;
    p.request_id = request_id;
    p.producer_name = (char *)name;
    p.has_epoch = true;
    p.epoch = 3;
    if (name) {
        p.has_user_provided_producer_name = true;
        p.user_provided_producer_name = false;
    }
    Pulsar__Proto__BaseCommand cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__PRODUCER;
    cmd.producer = &p;
    cl_send_cmd(cl, &cmd);
}

/* Create a producer and return PRODUCER_SUCCESS (caller frees). */
static Pulsar__Proto__BaseCommand *cl_producer(client_t *cl, uint64_t producer_id, const char *name)
{
    cl_send_producer(cl, producer_id, 100 + producer_id, name);
    Pulsar__Proto__BaseCommand *r = cl_expect(cl,
                                              PULSAR__PROTO__BASE_COMMAND__TYPE__PRODUCER_SUCCESS);
    cr_assert_eq(r->producer_success->request_id, 100 + producer_id);
    return r;
}

static void cl_send_msg(client_t *cl, uint64_t producer_id, const char *producer_name, uint64_t seq,
                        const void *payload, size_t len, bool corrupt)
{
    Pulsar__Proto__CommandSend s = PULSAR__PROTO__COMMAND_SEND__INIT;
    s.producer_id = producer_id;
    s.sequence_id = seq;
    s.has_num_messages = true;
    s.num_messages = 1;
    Pulsar__Proto__BaseCommand cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__SEND;
    cmd.send = &s;
    Pulsar__Proto__KeyValue kv = PULSAR__PROTO__KEY_VALUE__INIT;
    kv.key = (char *)"k";
    kv.value = (char *)"v";
    Pulsar__Proto__KeyValue *props[] = { &kv };
    Pulsar__Proto__MessageMetadata m = PULSAR__PROTO__MESSAGE_METADATA__INIT;
    m.producer_name = (char *)producer_name;
    m.sequence_id = seq;
    m.publish_time = 1700000000000ull;
    m.partition_key = (char *)"key-1";
    m.n_properties = 1;
    m.properties = props;

    pc_buf_t b;
    pc_buf_init(&b);
    cr_assert_eq(pc_frame_encode_payload_head(&b, &cmd, &m, payload, len), 0);
    cr_assert_eq(pc_buf_append(&b, payload, len), 0);
    if (corrupt)
        b.data[b.len - 1] ^= 0x5a; /* one payload bit flip: the checksum must catch it */
    write_all(cl->fd, b.data, b.len);
    pc_buf_free(&b);
}

static void expect_receipt(client_t *cl, uint64_t producer_id, uint64_t seq, uint64_t entry)
{
    Pulsar__Proto__BaseCommand *r = cl_expect(cl, PULSAR__PROTO__BASE_COMMAND__TYPE__SEND_RECEIPT);
    cr_assert_eq(r->send_receipt->producer_id, producer_id);
    cr_assert_eq(r->send_receipt->sequence_id, seq);
    cr_assert_not_null(r->send_receipt->message_id);
    cr_assert_eq(r->send_receipt->message_id->ledgerid, 1);
    cr_assert_eq(r->send_receipt->message_id->entryid, entry);
    pulsar__proto__base_command__free_unpacked(r, NULL);
}

/* ---- handshake and default answers ------------------------------------------------- */

Test(mock_broker, connect_gets_connected)
{
    client_t cl;
    cl_open(&cl, mb);
    cl_handshake(&cl, "pulsarc-selftest-1.2", 19);
    Pulsar__Proto__BaseCommand *r = cl_expect(&cl, PULSAR__PROTO__BASE_COMMAND__TYPE__CONNECTED);
    cr_assert_str_eq(r->connected->server_version, "mock");
    cr_assert(r->connected->has_protocol_version);
    cr_assert_eq(r->connected->protocol_version, 19);
    cr_assert(r->connected->has_max_message_size);
    cr_assert_eq(r->connected->max_message_size, 5 * 1024 * 1024);
    pulsar__proto__base_command__free_unpacked(r, NULL);

    mock_connect_info_t info;
    cr_assert(mock_broker_last_connect(mb, &info));
    cr_assert_str_eq(info.client_version, "pulsarc-selftest-1.2");
    cr_assert_eq(info.protocol_version, 19);
    cr_assert_eq(mock_broker_count(mb, MOCK_CONNECTIONS), 1);
    cr_assert_eq(mock_broker_count(mb, MOCK_OPEN_CONNECTIONS), 1);
    cr_assert_eq(mock_broker_count(mb, MOCK_CONNECTS), 1);

    cl_close(&cl);
    cr_assert(mock_broker_wait_count_at_most(mb, MOCK_OPEN_CONNECTIONS, 0, T_TIMEOUT_MS));
}

Test(mock_broker, max_message_size_is_configurable)
{
    mock_broker_set_max_message_size(mb, 1000);
    client_t cl;
    cl_open(&cl, mb);
    cl_handshake(&cl, "selftest", 21);
    Pulsar__Proto__BaseCommand *r = cl_expect(&cl, PULSAR__PROTO__BASE_COMMAND__TYPE__CONNECTED);
    cr_assert_eq(r->connected->max_message_size, 1000);
    pulsar__proto__base_command__free_unpacked(r, NULL);

    /* A frame above the limit (plus the overhead allowance) closes the connection. */
    static uint8_t big[12 * 1024];
    Pulsar__Proto__BaseCommand *p = cl_producer(&cl, 1, NULL);
    pulsar__proto__base_command__free_unpacked(p, NULL);
    cl_send_msg(&cl, 1, "x", 0, big, sizeof big, false);
    cl_expect_eof(&cl);
    cr_assert_eq(mock_broker_count(mb, MOCK_PROTOCOL_ERRORS), 1);
    cr_assert_eq(mock_broker_count(mb, MOCK_SENDS), 0);
    cl_close(&cl);
}

Test(mock_broker, partitioned_metadata_and_lookup)
{
    mock_broker_set_partitions(mb, 3);
    client_t cl;
    cl_connect(&cl, mb);

    Pulsar__Proto__CommandPartitionedTopicMetadata pm =
        PULSAR__PROTO__COMMAND_PARTITIONED_TOPIC_METADATA__INIT;
    pm.topic = (char *)"persistent://public/default/t";
    pm.request_id = 7;
    Pulsar__Proto__BaseCommand cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__PARTITIONED_METADATA;
    cmd.partitionmetadata = &pm;
    cl_send_cmd(&cl, &cmd);
    Pulsar__Proto__BaseCommand
        *r = cl_expect(&cl, PULSAR__PROTO__BASE_COMMAND__TYPE__PARTITIONED_METADATA_RESPONSE);
    cr_assert_eq(r->partitionmetadataresponse->request_id, 7);
    cr_assert_eq(r->partitionmetadataresponse->partitions, 3);
    cr_assert_eq(r->partitionmetadataresponse->response,
                 PULSAR__PROTO__COMMAND_PARTITIONED_TOPIC_METADATA_RESPONSE__LOOKUP_TYPE__Success);
    pulsar__proto__base_command__free_unpacked(r, NULL);

    Pulsar__Proto__CommandLookupTopic lk = PULSAR__PROTO__COMMAND_LOOKUP_TOPIC__INIT;
    lk.topic = (char *)"persistent://public/default/t";
    Pulsar__Proto__BaseCommand lcmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    lcmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__LOOKUP;
    lcmd.lookuptopic = &lk;

    /* Scripted: one failure, then one redirect, then the default Connect. */
    mock_broker_lookup_fail(mb, PULSAR__PROTO__SERVER_ERROR__ServiceNotReady, "warming up", 1);
    mock_broker_lookup_redirect(mb, "pulsar://elsewhere:6650", 1);
    static const Pulsar__Proto__CommandLookupTopicResponse__LookupType want[] = {
        PULSAR__PROTO__COMMAND_LOOKUP_TOPIC_RESPONSE__LOOKUP_TYPE__Failed,
        PULSAR__PROTO__COMMAND_LOOKUP_TOPIC_RESPONSE__LOOKUP_TYPE__Redirect,
        PULSAR__PROTO__COMMAND_LOOKUP_TOPIC_RESPONSE__LOOKUP_TYPE__Connect,
        PULSAR__PROTO__COMMAND_LOOKUP_TOPIC_RESPONSE__LOOKUP_TYPE__Connect,
    };
    for (int i = 0; i < 4; i++) {
        lk.request_id = 20 + (uint64_t)i;
        cl_send_cmd(&cl, &lcmd);
        r = cl_expect(&cl, PULSAR__PROTO__BASE_COMMAND__TYPE__LOOKUP_RESPONSE);
        Pulsar__Proto__CommandLookupTopicResponse *lr = r->lookuptopicresponse;
        cr_assert_eq(lr->request_id, 20 + (uint64_t)i);
        cr_assert(lr->has_response);
        cr_assert_eq(lr->response, want[i], "lookup %d: response %d", i, (int)lr->response);
        if (i == 0) {
            cr_assert_eq(lr->error, PULSAR__PROTO__SERVER_ERROR__ServiceNotReady);
            cr_assert_str_eq(lr->message, "warming up");
        } else if (i == 1) {
            cr_assert_str_eq(lr->brokerserviceurl, "pulsar://elsewhere:6650");
        } else {
            cr_assert_str_eq(lr->brokerserviceurl, mock_broker_url(mb));
            cr_assert(lr->authoritative);
        }
        pulsar__proto__base_command__free_unpacked(r, NULL);
    }
    cr_assert_eq(mock_broker_count(mb, MOCK_LOOKUPS), 4);
    cr_assert_eq(mock_broker_count(mb, MOCK_PARTITION_METADATA), 1);

    /* A second instance: its own port, and the first can point lookups at it. */
    mock_broker_t *other = mock_broker_start();
    cr_assert_not_null(other);
    cr_assert_neq(mock_broker_port(other), mock_broker_port(mb));
    mock_broker_set_lookup_url(mb, mock_broker_url(other));
    lk.request_id = 30;
    cl_send_cmd(&cl, &lcmd);
    r = cl_expect(&cl, PULSAR__PROTO__BASE_COMMAND__TYPE__LOOKUP_RESPONSE);
    cr_assert_str_eq(r->lookuptopicresponse->brokerserviceurl, mock_broker_url(other));
    pulsar__proto__base_command__free_unpacked(r, NULL);
    mock_broker_stop(other);
    cl_close(&cl);
}

Test(mock_broker, producer_gets_success)
{
    client_t cl;
    cl_connect(&cl, mb);

    Pulsar__Proto__BaseCommand *r = cl_producer(&cl, 1, NULL);
    cr_assert_str_eq(r->producer_success->producer_name, "mock-0");
    cr_assert(r->producer_success->has_last_sequence_id);
    cr_assert_eq(r->producer_success->last_sequence_id, -1);
    pulsar__proto__base_command__free_unpacked(r, NULL);

    r = cl_producer(&cl, 2, "named");
    cr_assert_str_eq(r->producer_success->producer_name, "named");
    pulsar__proto__base_command__free_unpacked(r, NULL);

    mock_producer_info_t info;
    cr_assert(mock_broker_last_producer(mb, &info));
    cr_assert_str_eq(info.topic, "persistent://public/default/selftest");
    cr_assert_eq(info.producer_id, 2);
    cr_assert_str_eq(info.producer_name, "named");
    cr_assert_not(info.user_provided_producer_name);
    cr_assert(info.has_epoch);
    cr_assert_eq(info.epoch, 3);

    mock_broker_set_last_sequence_id(mb, 41);
    r = cl_producer(&cl, 3, NULL);
    cr_assert_eq(r->producer_success->last_sequence_id, 41);
    pulsar__proto__base_command__free_unpacked(r, NULL);
    cr_assert_eq(mock_broker_count(mb, MOCK_PRODUCERS), 3);
    cl_close(&cl);
}

Test(mock_broker, producer_errors_then_succeeds)
{
    mock_broker_fail_producer(mb, PULSAR__PROTO__SERVER_ERROR__ProducerBusy, "busy", 2);
    client_t cl;
    cl_connect(&cl, mb);
    for (int i = 0; i < 2; i++) {
        cl_send_producer(&cl, 1, 50 + (uint64_t)i, "p");
        Pulsar__Proto__BaseCommand *r = cl_expect(&cl, PULSAR__PROTO__BASE_COMMAND__TYPE__ERROR);
        cr_assert_eq(r->error->request_id, 50 + (uint64_t)i);
        cr_assert_eq(r->error->error, PULSAR__PROTO__SERVER_ERROR__ProducerBusy);
        cr_assert_str_eq(r->error->message, "busy");
        pulsar__proto__base_command__free_unpacked(r, NULL);
    }
    Pulsar__Proto__BaseCommand *r = cl_producer(&cl, 1, "p");
    pulsar__proto__base_command__free_unpacked(r, NULL);
    cr_assert_eq(mock_broker_count(mb, MOCK_PRODUCERS), 3);
    cl_close(&cl);
}

/* ---- sends and receipts ------------------------------------------------------------- */

Test(mock_broker, send_gets_receipt_and_is_recorded)
{
    client_t cl;
    cl_connect(&cl, mb);
    Pulsar__Proto__BaseCommand *r = cl_producer(&cl, 4, NULL);
    pulsar__proto__base_command__free_unpacked(r, NULL);

    cl_send_msg(&cl, 4, "mock-0", 9, "hello", 5, false);
    expect_receipt(&cl, 4, 9, 0);
    cl_send_msg(&cl, 4, "mock-0", 10, "", 0, false);
    expect_receipt(&cl, 4, 10, 1);
    cr_assert(mock_broker_wait_sends(mb, 2, T_TIMEOUT_MS));
    cr_assert_eq(mock_broker_count(mb, MOCK_RECEIPTS), 2);

    mock_send_t s;
    cr_assert(mock_broker_get_send(mb, 0, &s));
    cr_assert_eq(s.connection, 1);
    cr_assert_eq(s.producer_id, 4);
    cr_assert_str_eq(s.producer_name, "mock-0");
    cr_assert_eq(s.sequence_id, 9);
    cr_assert_eq(s.num_messages, 1);
    cr_assert(s.has_payload);
    cr_assert(s.checksum_ok);
    cr_assert(s.persisted);
    cr_assert_not(s.duplicate);
    cr_assert_eq(s.payload_len, 5);
    cr_assert_arr_eq(s.payload, "hello", 5);
    cr_assert_not_null(s.metadata);
    cr_assert_str_eq(s.metadata->producer_name, "mock-0");
    cr_assert_eq(s.metadata->sequence_id, 9);
    cr_assert_eq(s.metadata->publish_time, 1700000000000ull);
    cr_assert_str_eq(s.metadata->partition_key, "key-1");
    cr_assert_eq(s.metadata->n_properties, 1);
    cr_assert_str_eq(s.metadata->properties[0]->key, "k");
    cr_assert_str_eq(s.metadata->properties[0]->value, "v");
    cr_assert_eq(s.metadata_raw_len, pulsar__proto__message_metadata__get_packed_size(s.metadata));
    mock_send_free(&s);

    cr_assert(mock_broker_get_send(mb, 1, &s));
    cr_assert_eq(s.sequence_id, 10);
    cr_assert_eq(s.payload_len, 0);
    mock_send_free(&s);
    cr_assert_not(mock_broker_get_send(mb, 2, &s));
    cl_close(&cl);
}

Test(mock_broker, bad_checksum_gets_send_error)
{
    client_t cl;
    cl_connect(&cl, mb);
    Pulsar__Proto__BaseCommand *r = cl_producer(&cl, 1, "c");
    pulsar__proto__base_command__free_unpacked(r, NULL);
    cl_send_msg(&cl, 1, "c", 0, "payload", 7, true);
    r = cl_expect(&cl, PULSAR__PROTO__BASE_COMMAND__TYPE__SEND_ERROR);
    cr_assert_eq(r->send_error->sequence_id, 0);
    cr_assert_eq(r->send_error->error, PULSAR__PROTO__SERVER_ERROR__ChecksumError);
    pulsar__proto__base_command__free_unpacked(r, NULL);

    mock_send_t s;
    cr_assert(mock_broker_get_send(mb, 0, &s));
    cr_assert(s.has_payload);
    cr_assert_not(s.checksum_ok);
    cr_assert_not(s.persisted);
    mock_send_free(&s);
    cl_close(&cl);
}

Test(mock_broker, scripted_send_errors)
{
    mock_broker_fail_sends(mb, PULSAR__PROTO__SERVER_ERROR__PersistenceError, 1);
    client_t cl;
    cl_connect(&cl, mb);
    Pulsar__Proto__BaseCommand *r = cl_producer(&cl, 1, "e");
    pulsar__proto__base_command__free_unpacked(r, NULL);
    cl_send_msg(&cl, 1, "e", 0, "a", 1, false);
    r = cl_expect(&cl, PULSAR__PROTO__BASE_COMMAND__TYPE__SEND_ERROR);
    cr_assert_eq(r->send_error->producer_id, 1);
    cr_assert_eq(r->send_error->error, PULSAR__PROTO__SERVER_ERROR__PersistenceError);
    pulsar__proto__base_command__free_unpacked(r, NULL);
    cl_send_msg(&cl, 1, "e", 1, "b", 1, false);
    expect_receipt(&cl, 1, 1, 0);
    cr_assert_eq(mock_broker_count(mb, MOCK_SEND_ERRORS), 1);
    cl_close(&cl);
}

Test(mock_broker, hold_and_release_receipts)
{
    mock_broker_set_receipt_mode(mb, MOCK_RECEIPTS_HOLD);
    client_t cl;
    cl_connect(&cl, mb);
    Pulsar__Proto__BaseCommand *r = cl_producer(&cl, 1, "h");
    pulsar__proto__base_command__free_unpacked(r, NULL);
    for (uint64_t i = 0; i < 3; i++)
        cl_send_msg(&cl, 1, "h", i, "x", 1, false);
    cr_assert(mock_broker_wait_sends(mb, 3, T_TIMEOUT_MS));
    cl_expect_silence(&cl, 200);
    cr_assert_eq(mock_broker_count(mb, MOCK_HELD_RECEIPTS), 3);

    cr_assert_eq(mock_broker_release_receipts(mb), 3);
    cr_assert_eq(mock_broker_count(mb, MOCK_HELD_RECEIPTS), 0);
    for (uint64_t i = 0; i < 3; i++)
        expect_receipt(&cl, 1, i, i);
    cl_close(&cl);
}

Test(mock_broker, reorder_receipts)
{
    mock_broker_set_receipt_mode(mb, MOCK_RECEIPTS_REORDER);
    client_t cl;
    cl_connect(&cl, mb);
    Pulsar__Proto__BaseCommand *r = cl_producer(&cl, 1, "o");
    pulsar__proto__base_command__free_unpacked(r, NULL);
    cl_send_msg(&cl, 1, "o", 0, "x", 1, false);
    cl_expect_silence(&cl, 150); /* the first waits for its pair */
    cl_send_msg(&cl, 1, "o", 1, "y", 1, false);
    expect_receipt(&cl, 1, 1, 1);
    expect_receipt(&cl, 1, 0, 0);
    /* Leaving reorder mode releases an unpaired receipt. */
    cl_send_msg(&cl, 1, "o", 2, "z", 1, false);
    cl_expect_silence(&cl, 150);
    mock_broker_set_receipt_mode(mb, MOCK_RECEIPTS_NORMAL);
    expect_receipt(&cl, 1, 2, 2);
    cl_close(&cl);
}

Test(mock_broker, suppress_and_delay_receipts)
{
    client_t cl;
    cl_connect(&cl, mb);
    Pulsar__Proto__BaseCommand *r = cl_producer(&cl, 1, "d");
    pulsar__proto__base_command__free_unpacked(r, NULL);

    mock_broker_set_receipt_mode(mb, MOCK_RECEIPTS_SUPPRESS);
    cl_send_msg(&cl, 1, "d", 0, "x", 1, false);
    cr_assert(mock_broker_wait_sends(mb, 1, T_TIMEOUT_MS));
    cl_expect_silence(&cl, 200);

    mock_broker_set_receipt_mode(mb, MOCK_RECEIPTS_NORMAL);
    mock_broker_set_receipt_delay(mb, 400);
    uint64_t t0 = mono_ms();
    cl_send_msg(&cl, 1, "d", 1, "y", 1, false);
    expect_receipt(&cl, 1, 1, 1);
    cr_assert_geq(mono_ms() - t0, 350, "receipt came after %llu ms",
                  (unsigned long long)(mono_ms() - t0));
    cl_close(&cl);
}

Test(mock_broker, tracked_last_sequence_id_and_duplicates)
{
    mock_broker_set_last_sequence_id(mb, MOCK_LAST_SEQ_TRACKED);
    client_t cl;
    cl_connect(&cl, mb);
    Pulsar__Proto__BaseCommand *r = cl_producer(&cl, 1, "t");
    cr_assert_eq(r->producer_success->last_sequence_id, -1);
    pulsar__proto__base_command__free_unpacked(r, NULL);
    for (uint64_t i = 0; i < 3; i++) {
        cl_send_msg(&cl, 1, "t", i, "x", 1, false);
        expect_receipt(&cl, 1, i, i);
    }
    cl_close(&cl);

    /* Reconnect as the same producer: the mock remembers what it accepted. */
    cl_connect(&cl, mb);
    r = cl_producer(&cl, 1, "t");
    cr_assert_eq(r->producer_success->last_sequence_id, 2);
    pulsar__proto__base_command__free_unpacked(r, NULL);
    cl_send_msg(&cl, 1, "t", 2, "x", 1, false);
    expect_receipt(&cl, 1, 2, 3);
    mock_send_t s;
    cr_assert(mock_broker_get_send(mb, 3, &s));
    cr_assert_eq(s.connection, 2);
    cr_assert(s.duplicate);
    mock_send_free(&s);
    cr_assert(mock_broker_get_send(mb, 2, &s));
    cr_assert_not(s.duplicate);
    mock_send_free(&s);
    cl_close(&cl);
}

/* ---- broker-initiated commands ------------------------------------------------------ */

Test(mock_broker, close_producer_from_broker)
{
    client_t cl;
    cl_connect(&cl, mb);
    cr_assert_eq(mock_broker_close_producer(mb, 5), 0);
    Pulsar__Proto__BaseCommand *r = cl_producer(&cl, 5, "cp");
    pulsar__proto__base_command__free_unpacked(r, NULL);
    cr_assert_eq(mock_broker_close_producer(mb, 5), 1);
    r = cl_expect(&cl, PULSAR__PROTO__BASE_COMMAND__TYPE__CLOSE_PRODUCER);
    cr_assert_eq(r->close_producer->producer_id, 5);
    pulsar__proto__base_command__free_unpacked(r, NULL);

    /* The producer is gone: a SEND on it is a protocol error, as on the real broker. */
    cl_send_msg(&cl, 5, "cp", 0, "x", 1, false);
    cl_expect_eof(&cl);
    cr_assert_eq(mock_broker_count(mb, MOCK_PROTOCOL_ERRORS), 1);
    cl_close(&cl);
}

Test(mock_broker, client_close_producer_gets_success)
{
    client_t cl;
    cl_connect(&cl, mb);
    Pulsar__Proto__BaseCommand *r = cl_producer(&cl, 2, NULL);
    pulsar__proto__base_command__free_unpacked(r, NULL);
    Pulsar__Proto__CommandCloseProducer cp = PULSAR__PROTO__COMMAND_CLOSE_PRODUCER__INIT;
    cp.producer_id = 2;
    cp.request_id = 77;
    Pulsar__Proto__BaseCommand cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__CLOSE_PRODUCER;
    cmd.close_producer = &cp;
    cl_send_cmd(&cl, &cmd);
    r = cl_expect(&cl, PULSAR__PROTO__BASE_COMMAND__TYPE__SUCCESS);
    cr_assert_eq(r->success->request_id, 77);
    pulsar__proto__base_command__free_unpacked(r, NULL);
    cr_assert_eq(mock_broker_count(mb, MOCK_CLOSE_PRODUCERS), 1);
    cl_close(&cl);
}

Test(mock_broker, ping_pong_both_ways)
{
    client_t cl;
    cl_connect(&cl, mb);
    Pulsar__Proto__CommandPing ping = PULSAR__PROTO__COMMAND_PING__INIT;
    Pulsar__Proto__BaseCommand cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__PING;
    cmd.ping = &ping;
    cl_send_cmd(&cl, &cmd);
    Pulsar__Proto__BaseCommand *r = cl_expect(&cl, PULSAR__PROTO__BASE_COMMAND__TYPE__PONG);
    pulsar__proto__base_command__free_unpacked(r, NULL);

    mock_broker_set_answer_pings(mb, false);
    cl_send_cmd(&cl, &cmd);
    cl_expect_silence(&cl, 200);
    cr_assert_eq(mock_broker_count(mb, MOCK_PINGS), 2);

    /* Broker -> client ping; our PONG must be counted. */
    cr_assert_eq(mock_broker_send_ping(mb), 1);
    r = cl_expect(&cl, PULSAR__PROTO__BASE_COMMAND__TYPE__PING);
    pulsar__proto__base_command__free_unpacked(r, NULL);
    cr_assert_eq(mock_broker_count(mb, MOCK_PONGS), 0);
    Pulsar__Proto__CommandPong pong = PULSAR__PROTO__COMMAND_PONG__INIT;
    Pulsar__Proto__BaseCommand pcmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    pcmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__PONG;
    pcmd.pong = &pong;
    cl_send_cmd(&cl, &pcmd);
    cr_assert(mock_broker_wait_count(mb, MOCK_PONGS, 1, T_TIMEOUT_MS));
    cl_close(&cl);
}

/* ---- connection faults -------------------------------------------------------------- */

Test(mock_broker, garbage_frame_is_rejected_by_the_decoder)
{
    client_t cl;
    cl_connect(&cl, mb);
    cr_assert_eq(mock_broker_send_garbage(mb), 1);
    recv_result_t why;
    Pulsar__Proto__BaseCommand *r = cl_recv(&cl, T_TIMEOUT_MS, &why);
    cr_assert_null(r);
    cr_assert_eq(why, RECV_BAD);
    cr_assert_eq(cl.bad_status, PC_FRAME_TOO_BIG);
    cl_close(&cl);
}

Test(mock_broker, raw_bytes_arrive_verbatim)
{
    client_t cl;
    cl_connect(&cl, mb);
    size_t before = cl.bytes_received;
    static const uint8_t raw[] = { 0, 0, 0, 1, 0xff }; /* total 1 < 4: malformed */
    cr_assert_eq(mock_broker_send_raw(mb, raw, sizeof raw), 1);
    recv_result_t why;
    cr_assert_null(cl_recv(&cl, T_TIMEOUT_MS, &why));
    cr_assert_eq(why, RECV_BAD);
    cr_assert_eq(cl.bad_status, PC_FRAME_MALFORMED);
    cr_assert_eq(cl.bytes_received - before, sizeof raw);
    cl_close(&cl);
}

Test(mock_broker, refuse_closes_at_once)
{
    mock_broker_set_refuse(mb, true);
    client_t cl;
    cl_open(&cl, mb);
    cl_handshake(&cl, "selftest", 21);
    cl_expect_eof(&cl);
    cr_assert_eq(cl.bytes_received, 0);
    cr_assert_eq(mock_broker_count(mb, MOCK_CONNECTIONS), 1);
    cr_assert_eq(mock_broker_count(mb, MOCK_CONNECTS), 0);
    cl_close(&cl);

    mock_broker_set_refuse(mb, false);
    cl_connect(&cl, mb);
    cr_assert_eq(mock_broker_count(mb, MOCK_CONNECTIONS), 2);
    cl_close(&cl);
}

Test(mock_broker, ignore_connect)
{
    mock_broker_set_ignore_connect(mb, true);
    client_t cl;
    cl_open(&cl, mb);
    cl_handshake(&cl, "selftest", 21);
    cl_expect_silence(&cl, 300);
    cr_assert_eq(mock_broker_count(mb, MOCK_CONNECTS), 1);
    cl_close(&cl);
}

Test(mock_broker, down_then_up)
{
    client_t cl;
    cl_connect(&cl, mb);
    cr_assert_eq(mock_broker_set_down(mb, true), 0);
    cl_expect_eof(&cl);
    cl_close(&cl);
    cr_assert_eq(tcp_connect(mock_broker_port(mb)), -1);
    cr_assert_eq(errno, ECONNREFUSED);
    cr_assert_eq(mock_broker_set_down(mb, false), 0);
    cl_connect(&cl, mb);
    cl_close(&cl);
}

/* While down the port stays the broker's: another socket cannot bind it (a test running
 * in parallel, or an outgoing connection, taking it would make set_down(false) fail or
 * send this broker's clients elsewhere), and it still refuses connections. */
Test(mock_broker, down_keeps_its_port)
{
    cr_assert_eq(mock_broker_set_down(mb, true), 0);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    cr_assert_geq(fd, 0);
    struct sockaddr_in sa = { .sin_family = AF_INET,
                              .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
                              .sin_port = htons(mock_broker_port(mb)) };
    cr_assert_neq(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0,
                  "the down broker's port was free");
    cr_assert_eq(errno, EADDRINUSE);
    close(fd);
    cr_assert_eq(tcp_connect(mock_broker_port(mb)), -1);
    cr_assert_eq(errno, ECONNREFUSED);
    cr_assert_eq(mock_broker_set_down(mb, false), 0);
    client_t cl;
    cl_connect(&cl, mb);
    cl_close(&cl);
}

Test(mock_broker, cut_now)
{
    client_t cl;
    cl_connect(&cl, mb);
    mock_broker_cut_now(mb);
    cr_assert_eq(mock_broker_count(mb, MOCK_OPEN_CONNECTIONS), 0);
    cl_expect_eof(&cl);
    cl_close(&cl);
}

Test(mock_broker, cut_after_bytes_mid_frame)
{
    /* Measure a CONNECT frame, then let the mock see it plus 3 bytes of a PING. */
    Pulsar__Proto__CommandConnect c = PULSAR__PROTO__COMMAND_CONNECT__INIT;
    c.client_version = (char *)"selftest";
    c.has_protocol_version = true;
    c.protocol_version = 21;
    Pulsar__Proto__BaseCommand cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__CONNECT;
    cmd.connect = &c;
    Pulsar__Proto__CommandPing ping = PULSAR__PROTO__COMMAND_PING__INIT;
    Pulsar__Proto__BaseCommand pcmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    pcmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__PING;
    pcmd.ping = &ping;
    pc_buf_t b;
    pc_buf_init(&b);
    cr_assert_eq(pc_frame_encode_command(&b, &cmd), 0);
    size_t connect_len = b.len;
    cr_assert_eq(pc_frame_encode_command(&b, &pcmd), 0);

    mock_broker_cut_after_bytes(mb, connect_len + 3);
    client_t cl;
    cl_open(&cl, mb);
    write_all(cl.fd, b.data, b.len);
    pc_buf_free(&b);

    /* CONNECTED comes back (the CONNECT was whole), the PING is never answered. */
    Pulsar__Proto__BaseCommand *r = cl_expect(&cl, PULSAR__PROTO__BASE_COMMAND__TYPE__CONNECTED);
    pulsar__proto__base_command__free_unpacked(r, NULL);
    recv_result_t why;
    cr_assert_null(cl_recv(&cl, T_TIMEOUT_MS, &why));
    cr_assert_eq(why, RECV_EOF);
    cr_assert_eq(mock_broker_count(mb, MOCK_PINGS), 0);
    cl_close(&cl);

    /* One shot: the next connection is left alone. */
    cl_connect(&cl, mb);
    cl_close(&cl);
}

Test(mock_broker, cut_next_reply_leaves_a_truncated_frame)
{
    mock_broker_cut_next_reply(mb);
    client_t cl;
    cl_open(&cl, mb);
    cl_handshake(&cl, "selftest", 21);
    recv_result_t why;
    cr_assert_null(cl_recv(&cl, T_TIMEOUT_MS, &why));
    cr_assert_eq(why, RECV_EOF);
    /* Half a CONNECTED frame arrived, not a whole one. */
    cr_assert_gt(cl.bytes_received, 0);
    cr_assert_eq(cl.reader.buf.len - cl.reader.pos, cl.bytes_received);
    cl_close(&cl);
}

/* ---- the barrier (mock_broker_barrier) ---------------------------------------------- */

typedef struct barrier_run {
    mock_broker_t *b;
    atomic_int result;
    atomic_bool returned;
} barrier_run_t;

static void *run_barrier(void *arg)
{
    barrier_run_t *r = arg;
    atomic_store(&r->result, mock_broker_barrier(r->b, T_TIMEOUT_MS));
    atomic_store(&r->returned, true);
    return NULL;
}

static void start_barrier(pthread_t *t, barrier_run_t *r)
{
    r->b = mb;
    atomic_init(&r->result, -2);
    atomic_init(&r->returned, false);
    cr_assert_eq(pthread_create(t, NULL, run_barrier, r), 0);
}

/* A PING or PONG from the raw client (the frames are the same both ways). */
static void cl_send_encoded(client_t *cl, int (*encode)(pc_buf_t *))
{
    pc_buf_t b;
    pc_buf_init(&b);
    cr_assert_eq(encode(&b), 0);
    write_all(cl->fd, b.data, b.len);
    pc_buf_free(&b);
}

Test(mock_broker, barrier_pings_behind_delayed_receipts_and_waits_for_the_pong)
{
    client_t cl;
    cl_connect(&cl, mb);
    Pulsar__Proto__BaseCommand *r = cl_producer(&cl, 1, "b");
    pulsar__proto__base_command__free_unpacked(r, NULL);
    mock_broker_set_receipt_delay(mb, 300);
    cl_send_msg(&cl, 1, "b", 7, "x", 1, false);
    cr_assert(mock_broker_wait_sends(mb, 1, T_TIMEOUT_MS));

    pthread_t t;
    barrier_run_t run;
    start_barrier(&t, &run);
    /* The receipt the mock delays comes first, then the barrier's PING. */
    r = cl_expect(&cl, PULSAR__PROTO__BASE_COMMAND__TYPE__SEND_RECEIPT);
    cr_assert_eq(r->send_receipt->sequence_id, 7);
    pulsar__proto__base_command__free_unpacked(r, NULL);
    r = cl_expect(&cl, PULSAR__PROTO__BASE_COMMAND__TYPE__PING);
    pulsar__proto__base_command__free_unpacked(r, NULL);
    cr_assert_not(atomic_load(&run.returned), "the barrier returned before its PONG");
    cl_send_encoded(&cl, bc_pong);
    pthread_join(t, NULL);
    cr_assert_eq(atomic_load(&run.result), 1, "barrier: %d", atomic_load(&run.result));

    /* A connection that closes instead of answering lets the barrier go too. */
    start_barrier(&t, &run);
    r = cl_expect(&cl, PULSAR__PROTO__BASE_COMMAND__TYPE__PING);
    pulsar__proto__base_command__free_unpacked(r, NULL);
    cl_close(&cl);
    pthread_join(t, NULL);
    cr_assert_eq(atomic_load(&run.result), 1, "barrier: %d", atomic_load(&run.result));
}

Test(mock_broker, barrier_skips_a_connection_still_waiting_for_connected)
{
    mock_broker_set_ignore_connect(mb, true);
    client_t cl;
    cl_open(&cl, mb);
    cl_handshake(&cl, "selftest", 21);
    cr_assert(mock_broker_wait_count(mb, MOCK_CONNECTS, 1, T_TIMEOUT_MS));
    /* Nothing to wait for: a client in its handshake need not answer a PING. */
    cr_assert_eq(mock_broker_barrier(mb, T_TIMEOUT_MS), 0);
    /* And none was written: the first frame back answers ours. */
    cl_send_encoded(&cl, bc_ping);
    Pulsar__Proto__BaseCommand *r = cl_expect(&cl, PULSAR__PROTO__BASE_COMMAND__TYPE__PONG);
    pulsar__proto__base_command__free_unpacked(r, NULL);
    cl_close(&cl);
}
