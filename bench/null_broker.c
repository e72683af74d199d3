/*
 * pulsarc-null-broker — a Pulsar broker that stores nothing, for benchmarking the client
 * alone.
 *
 *   pulsarc-null-broker [-p PORT] [-b ADDR] [--partitions N] [--max-message-size BYTES]
 *                       [--verify-checksum] [--tls-cert FILE --tls-key FILE] [-i SECONDS] [-v]
 *
 * It speaks just enough of the binary protocol for a producer: CONNECT, PARTITIONED_METADATA,
 * LOOKUP (always "connect to me"), PRODUCER, CLOSE_PRODUCER, PING, and SEND, which it
 * acknowledges at once. It prints its counters on SIGINT/SIGTERM and exits 0; on SIGUSR1
 * it prints one NULLBROKER line and goes on (bench/compare samples it that way); on SIGUSR2
 * it closes every connection and goes on listening, as if it had restarted (with TLS, it
 * keeps its ticket keys, so clients may resume their sessions).
 *
 * With --tls-cert and --tls-key the port speaks TLS only (OpenSSL over the socket,
 * read-ahead on, so a record costs no extra recv), and LOOKUP names it as
 * brokerServiceUrlTls: a TLS client is measured alone, as a plain one is.
 *
 * Why it looks the way it does: the broker must cost far less than the client it measures,
 * so it is one thread on level-triggered epoll, parses frames in place in its receive
 * buffer (no copy into a frame reader, no checksum unless asked), decodes commands with a
 * bump allocator (no malloc per frame) and answers everything one read produced with one
 * write.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <signal.h>
#include <stdalign.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "broker_commands.h"
#include "common/buf.h"
#include "wire/crc32c.h"
#include "wire/frame.h"

/* Smallest receive buffer; it grows to hold the largest frame seen, never beyond
 * max_message_size + PC_FRAME_OVERHEAD_ALLOWANCE. */
#define IN_MIN_CAP (256 * 1024)
/* magic (2) + checksum (4) + metadata size (4), as in frame.h */
#define PAYLOAD_HEAD_FIXED 10
/* Mismatching frames described on stderr; later ones are only counted. */
#define MAX_MISMATCH_REPORTS 10

typedef struct options {
    const char *bind_addr;
    uint16_t port;
    const char *advertised_url; /* LOOKUP answer; NULL = pulsar://bind_addr:port */
    int32_t max_message_size;
    uint32_t partitions;
    bool verify_checksum;
    unsigned interval_s;  /* print counters this often; 0 = only at exit */
    bool verbose;         /* log every non-SEND command */
    const char *tls_cert; /* PEM certificate chain: the port speaks TLS */
    const char *tls_key;  /* its private key, PEM */
} options_t;

typedef struct counters {
    uint64_t connections, disconnects;
    uint64_t reads, bytes_in, writes, bytes_out;
    uint64_t frames;
    uint64_t sends, messages, payload_bytes; /* SEND commands, messages in them, bytes */
    uint64_t connects, partition_lookups, lookups, producers, close_producers, pings;
    uint64_t checksums_checked, checksum_mismatches;
    uint64_t unknown_commands, protocol_errors;
    uint64_t tls_handshakes, tls_resumed, tls_failures; /* finished, of which resumed; refused */
} counters_t;

/* protobuf-c allocator over a fixed block, reset after every frame: commands are small,
 * so decoding never touches malloc. Larger commands spill to malloc and are freed. */
typedef struct arena {
    alignas(max_align_t) uint8_t block[64 * 1024];
    size_t used;
    bool spilled;
} arena_t;

typedef struct conn {
    int fd;
    uint64_t id;
    uint8_t *in; /* received bytes; in[0] is the start of a frame */
    size_t in_len, in_cap;
    pc_buf_t out;     /* replies not yet accepted by the kernel */
    size_t out_pos;   /* bytes of out already written */
    bool out_blocked; /* waiting for EPOLLOUT; reading is paused meanwhile */
    bool dead;
    SSL *ssl;                 /* NULL: clear text */
    bool tls_ready;           /* the handshake finished */
    struct conn *prev, *next; /* every open connection, for SIGUSR2 */
} conn_t;

typedef struct broker {
    options_t opt;
    int epfd, lfd;
    int sigfd; /* SIGINT/SIGTERM/SIGUSR1/SIGUSR2 arrive here as events, not as handlers */
    bool stop;
    SSL_CTX *tls; /* NULL: clear text */
    conn_t *conns;
    bool drop; /* SIGUSR2 came: close every connection */
    char self_url[96];
    size_t max_frame;
    uint64_t next_conn_id;
    uint64_t next_entry;
    uint64_t next_producer_name;
    char tls_last[96];      /* protocol:cipher of the latest TLS handshake */
    double first_connect_s; /* mono_s() of the first CONNECT answered */
    double last_producer_s; /* and of the latest PRODUCER: the producers' creation time */
    counters_t n;
    arena_t arena;
    ProtobufCAllocator alloc;
} broker_t;

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- bump allocator ----------------------------------------------------------------- */

static void *arena_alloc(void *data, size_t size)
{
    arena_t *a = data;
    size_t need = (size + alignof(max_align_t) - 1) & ~(alignof(max_align_t) - 1);
    if (need <= sizeof a->block - a->used) {
        void *p = a->block + a->used;
        a->used += need;
        return p;
    }
    a->spilled = true;
    return malloc(size);
}

static void arena_free(void *data, void *ptr)
{
    arena_t *a = data;
    uintptr_t p = (uintptr_t)ptr, lo = (uintptr_t)a->block;
    if (p >= lo && p < lo + sizeof a->block)
        return; /* released wholesale by arena_reset */
    free(ptr);
}

/* Release one decoded command: free_unpacked is only needed when something spilled. */
static void release_command(broker_t *b, Pulsar__Proto__BaseCommand *cmd)
{
    if (cmd && b->arena.spilled)
        pulsar__proto__base_command__free_unpacked(cmd, &b->alloc);
    b->arena.used = 0;
    b->arena.spilled = false;
}

/* ---- output ------------------------------------------------------------------------- */

/* A reply appended to c->out by an encoder of tests/support/broker_commands.h (0 or -1). */
static void queued(conn_t *c, int encoded)
{
    if (encoded != 0)
        c->dead = true;
}

static void set_events(broker_t *b, conn_t *c, uint32_t events)
{
    struct epoll_event ev = { .events = events, .data.ptr = c };
    if (epoll_ctl(b->epfd, EPOLL_CTL_MOD, c->fd, &ev) != 0)
        c->dead = true;
}

/* Hand the kernel (through TLS when the port speaks it) what fits of buf. Returns the bytes
 * taken, 0 when the socket is full, or -1 when the connection is broken. */
static ssize_t conn_send(conn_t *c, const uint8_t *buf, size_t len)
{
    if (!c->ssl) {
        for (;;) {
            ssize_t n = send(c->fd, buf, len, MSG_NOSIGNAL);
            if (n < 0 && errno == EINTR)
                continue;
            if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
                return 0;
            return n;
        }
    }
    ERR_clear_error();
    int n = SSL_write(c->ssl, buf, len > INT_MAX ? INT_MAX : (int)len);
    if (n > 0)
        return n;
    int err = SSL_get_error(c->ssl, n);
    return err == SSL_ERROR_WANT_WRITE || err == SSL_ERROR_WANT_READ ? 0 : -1;
}

/* Write what is queued. While the kernel will not take more, stop reading: the client
 * then blocks on its own socket instead of this broker buffering without bound. */
static void flush_out(broker_t *b, conn_t *c)
{
    while (c->out_pos < c->out.len) {
        ssize_t n = conn_send(c, c->out.data + c->out_pos, c->out.len - c->out_pos);
        if (n == 0) {
            if (!c->out_blocked) {
                c->out_blocked = true;
                set_events(b, c, EPOLLOUT);
            }
            return;
        }
        if (n < 0) {
            c->dead = true;
            return;
        }
        b->n.writes++;
        b->n.bytes_out += (uint64_t)n;
        c->out_pos += (size_t)n;
    }
    c->out.len = 0; /* all written; the memory serves the next answers */
    c->out_pos = 0;
    if (c->out_blocked) {
        c->out_blocked = false;
        set_events(b, c, EPOLLIN);
    }
}

/* ---- command handlers --------------------------------------------------------------- */

static void handle_connect(broker_t *b, conn_t *c, const Pulsar__Proto__CommandConnect *in)
{
    b->n.connects++;
    if (b->first_connect_s == 0)
        b->first_connect_s = mono_s();
    queued(c, bc_connected(&c->out, "pulsarc-null-broker",
                           in->has_protocol_version ? in->protocol_version : 0,
                           b->opt.max_message_size));
}

static void handle_partitioned_metadata(broker_t *b, conn_t *c,
                                        const Pulsar__Proto__CommandPartitionedTopicMetadata *in)
{
    b->n.partition_lookups++;
    queued(c, bc_partitions(&c->out, in->request_id, b->opt.partitions));
}

/* Every topic lives here: the answer is always "connect to me", authoritative. */
static void handle_lookup(broker_t *b, conn_t *c, const Pulsar__Proto__CommandLookupTopic *in)
{
    b->n.lookups++;
    /* A TLS port is named as such; clients then choose brokerServiceUrlTls. */
    queued(c, bc_lookup_connect(&c->out, in->request_id, b->tls ? NULL : b->self_url,
                                b->tls ? b->self_url : NULL, false));
}

static void handle_producer(broker_t *b, conn_t *c, const Pulsar__Proto__CommandProducer *in)
{
    b->n.producers++;
    b->last_producer_s = mono_s();
    char assigned[48];
    const char *name = in->producer_name;
    if (!name || !*name) {
        snprintf(assigned, sizeof assigned, "null-broker-%" PRIu64, b->next_producer_name++);
        name = assigned;
    }
    /* What the real broker answers for a topic without a schema (SchemaVersion.Empty):
     * present but empty. The Java client refuses a PRODUCER_SUCCESS without it. */
    static const ProtobufCBinaryData no_schema = { 0, NULL };
    /* Last sequence id -1: nothing stored, so nothing to deduplicate against. */
    queued(c, bc_producer_success(&c->out, in->request_id, name, -1, &no_schema, true, -1));
}

static void handle_close_producer(broker_t *b, conn_t *c,
                                  const Pulsar__Proto__CommandCloseProducer *in)
{
    b->n.close_producers++;
    queued(c, bc_success(&c->out, in->request_id));
}

static void handle_ping(broker_t *b, conn_t *c)
{
    b->n.pings++;
    queued(c, bc_pong(&c->out));
}

/* The payload section after the command: [magic][crc32c][metadata size][metadata][payload].
 * Returns false when it is malformed. Checks the checksum only when asked to. */
static bool check_payload(broker_t *b, conn_t *c, const Pulsar__Proto__CommandSend *in,
                          const uint8_t *rest, size_t rest_len)
{
    if (rest_len < PAYLOAD_HEAD_FIXED || pc_read_u16be(rest) != PC_FRAME_MAGIC)
        return false;
    uint32_t meta_len = pc_read_u32be(rest + 6);
    if (meta_len > rest_len - PAYLOAD_HEAD_FIXED)
        return false;
    b->n.payload_bytes += rest_len - PAYLOAD_HEAD_FIXED - meta_len;
    if (!b->opt.verify_checksum)
        return true;
    b->n.checksums_checked++;
    uint32_t want = pc_read_u32be(rest + 2);
    uint32_t got = pc_crc32c(0, rest + 6, rest_len - 6);
    if (got != want) {
        /* Acknowledged anyway: the run goes on and the count tells the story. */
        if (b->n.checksum_mismatches++ < MAX_MISMATCH_REPORTS)
            fprintf(stderr,
                    "checksum mismatch: conn %" PRIu64 " producer %" PRIu64 " seq %" PRIu64
                    ": frame says %08x, payload hashes to %08x (%zu bytes after the checksum)\n",
                    c->id, in->producer_id, in->sequence_id, want, got, rest_len - 6);
    }
    return true;
}

static void handle_send(broker_t *b, conn_t *c, const Pulsar__Proto__CommandSend *in,
                        const uint8_t *rest, size_t rest_len)
{
    if (!check_payload(b, c, in, rest, rest_len)) {
        fprintf(stderr, "conn %" PRIu64 ": SEND without a valid payload section: closing\n", c->id);
        b->n.protocol_errors++;
        c->dead = true;
        return;
    }
    b->n.sends++;
    b->n.messages += in->has_num_messages ? in->num_messages : 1;

    uint64_t highest = in->has_highest_sequence_id ? in->highest_sequence_id : in->sequence_id;
    queued(c, bc_receipt(&c->out, in->producer_id, in->sequence_id, highest, 1, b->next_entry++));
}

static const char *type_name(int type)
{
    const ProtobufCEnumValue *v =
        protobuf_c_enum_descriptor_get_value(&pulsar__proto__base_command__type__descriptor, type);
    return v ? v->name : "?";
}

/* Dispatch one command. Returns false when a command arrived without its body. */
static bool dispatch(broker_t *b, conn_t *c, const Pulsar__Proto__BaseCommand *cmd,
                     const uint8_t *rest, size_t rest_len)
{
    switch (cmd->type) {
    case PULSAR__PROTO__BASE_COMMAND__TYPE__SEND:
        if (!cmd->send)
            return false;
        handle_send(b, c, cmd->send, rest, rest_len);
        return true;
    case PULSAR__PROTO__BASE_COMMAND__TYPE__CONNECT:
        if (!cmd->connect)
            return false;
        handle_connect(b, c, cmd->connect);
        return true;
    case PULSAR__PROTO__BASE_COMMAND__TYPE__PARTITIONED_METADATA:
        if (!cmd->partitionmetadata)
            return false;
        handle_partitioned_metadata(b, c, cmd->partitionmetadata);
        return true;
    case PULSAR__PROTO__BASE_COMMAND__TYPE__LOOKUP:
        if (!cmd->lookuptopic)
            return false;
        handle_lookup(b, c, cmd->lookuptopic);
        return true;
    case PULSAR__PROTO__BASE_COMMAND__TYPE__PRODUCER:
        if (!cmd->producer)
            return false;
        handle_producer(b, c, cmd->producer);
        return true;
    case PULSAR__PROTO__BASE_COMMAND__TYPE__CLOSE_PRODUCER:
        if (!cmd->close_producer)
            return false;
        handle_close_producer(b, c, cmd->close_producer);
        return true;
    case PULSAR__PROTO__BASE_COMMAND__TYPE__PING:
        handle_ping(b, c);
        return true;
    case PULSAR__PROTO__BASE_COMMAND__TYPE__PONG:
        return true;
    default:
        b->n.unknown_commands++;
        if (b->opt.verbose)
            fprintf(stderr, "conn %" PRIu64 ": ignoring %s\n", c->id, type_name(cmd->type));
        return true;
    }
}

/* One whole frame, without its leading total-size field. */
static void handle_frame(broker_t *b, conn_t *c, const uint8_t *f, uint32_t total)
{
    b->n.frames++;
    uint32_t cmd_len = pc_read_u32be(f);
    if (cmd_len == 0 || cmd_len > total - 4) {
        fprintf(stderr, "conn %" PRIu64 ": command size %u in a frame of %u: closing\n", c->id,
                cmd_len, total);
        b->n.protocol_errors++;
        c->dead = true;
        return;
    }
    Pulsar__Proto__BaseCommand *cmd = pulsar__proto__base_command__unpack(&b->alloc, cmd_len,
                                                                          f + 4);
    if (!cmd) {
        fprintf(stderr, "conn %" PRIu64 ": command does not parse: closing\n", c->id);
        b->n.protocol_errors++;
        c->dead = true;
        release_command(b, NULL);
        return;
    }
    if (b->opt.verbose && cmd->type != PULSAR__PROTO__BASE_COMMAND__TYPE__SEND)
        fprintf(stderr, "conn %" PRIu64 ": <- %s\n", c->id, type_name(cmd->type));
    if (!dispatch(b, c, cmd, f + 4 + cmd_len, total - 4 - cmd_len)) {
        fprintf(stderr, "conn %" PRIu64 ": %s without its body: closing\n", c->id,
                type_name(cmd->type));
        b->n.protocol_errors++;
        c->dead = true;
    }
    release_command(b, cmd);
}

/* ---- input -------------------------------------------------------------------------- */

static int grow_in(conn_t *c, size_t cap)
{
    if (cap <= c->in_cap)
        return 0;
    uint8_t *p = realloc(c->in, cap);
    if (!p)
        return -1;
    c->in = p;
    c->in_cap = cap;
    return 0;
}

/* Handle every complete frame in the buffer, then move the partial tail (at most one
 * frame) to the front and make sure the buffer can hold that frame whole. */
static void parse_frames(broker_t *b, conn_t *c)
{
    size_t pos = 0;
    while (!c->dead && c->in_len - pos >= 4) {
        uint32_t total = pc_read_u32be(c->in + pos);
        if (total < 4 || total > b->max_frame) {
            fprintf(stderr, "conn %" PRIu64 ": frame of %u bytes (limit %zu): closing\n", c->id,
                    total, b->max_frame);
            b->n.protocol_errors++;
            c->dead = true;
            return;
        }
        if (c->in_len - pos - 4 < total)
            break;
        handle_frame(b, c, c->in + pos + 4, total);
        pos += 4 + (size_t)total;
    }
    if (c->dead)
        return;
    if (pos > 0) {
        memmove(c->in, c->in + pos, c->in_len - pos);
        c->in_len -= pos;
    }
    if (c->in_len >= 4 && grow_in(c, 4 + (size_t)pc_read_u32be(c->in)) != 0)
        c->dead = true;
}

/* The TLS handshake, step by step as the client's flights arrive. True once it is done. */
static bool tls_handshake(broker_t *b, conn_t *c)
{
    ERR_clear_error();
    int rc = SSL_do_handshake(c->ssl);
    if (rc == 1) {
        c->tls_ready = true;
        b->n.tls_handshakes++;
        snprintf(b->tls_last, sizeof b->tls_last, "%s:%s", SSL_get_version(c->ssl),
                 SSL_get_cipher_name(c->ssl));
        if (SSL_session_reused(c->ssl))
            b->n.tls_resumed++;
        if (b->opt.verbose)
            fprintf(stderr, "conn %" PRIu64 ": %s %s%s\n", c->id, SSL_get_version(c->ssl),
                    SSL_get_cipher_name(c->ssl), SSL_session_reused(c->ssl) ? " (resumed)" : "");
        return true;
    }
    int err = SSL_get_error(c->ssl, rc);
    if (err == SSL_ERROR_WANT_READ)
        return false;
    if (err == SSL_ERROR_WANT_WRITE) {
        /* Our flight did not fit the socket: go on when it drains (on_event). */
        c->out_blocked = true;
        set_events(b, c, EPOLLOUT);
        return false;
    }
    b->n.tls_failures++;
    if (b->opt.verbose) {
        char why[256];
        ERR_error_string_n(ERR_peek_error(), why, sizeof why);
        fprintf(stderr, "conn %" PRIu64 ": TLS handshake failed: %s\n", c->id, why);
    }
    c->dead = true;
    return false;
}

/* Bytes from the client into buf: what recv gives, or TLS plaintext (one record at most).
 * Returns the bytes, 0 when nothing is there for now, -1 when the connection ended. */
static ssize_t conn_recv(conn_t *c, uint8_t *buf, size_t len)
{
    if (!c->ssl) {
        for (;;) {
            ssize_t n = recv(c->fd, buf, len, 0);
            if (n < 0 && errno == EINTR)
                continue;
            if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
                return 0;
            return n > 0 ? n : -1; /* 0: the peer closed */
        }
    }
    ERR_clear_error();
    int n = SSL_read(c->ssl, buf, len > INT_MAX ? INT_MAX : (int)len);
    if (n > 0)
        return n;
    int err = SSL_get_error(c->ssl, n);
    return err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE ? 0 : -1;
}

/* Read what the socket has (a bounded number of times, so one busy client cannot starve
 * another), answering frames as they complete; then write all answers at once. Over TLS
 * every read is one record at most, and OpenSSL may hold records it has read ahead where
 * epoll cannot see them: it reads until OpenSSL wants more from the socket, writing the
 * answers every 16 records so that receipts keep flowing. */
static void on_readable(broker_t *b, conn_t *c)
{
    if (c->ssl && !c->tls_ready && !tls_handshake(b, c))
        return;
    for (int round = 0; !c->dead; round++) {
        if (round > 0 && round % 16 == 0) {
            if (!c->ssl)
                break;
            flush_out(b, c);
            if (c->out_blocked || c->dead)
                return; /* on_event reads on once the answers are out */
        }
        size_t space = c->in_cap - c->in_len;
        ssize_t n = conn_recv(c, c->in + c->in_len, space);
        if (n == 0)
            break;
        if (n < 0) {
            c->dead = true; /* peer closed, or a real error */
            break;
        }
        b->n.reads++;
        b->n.bytes_in += (uint64_t)n;
        c->in_len += (size_t)n;
        parse_frames(b, c);
        /* A short read means the socket is drained: skip the read that would say EAGAIN
         * (epoll is level-triggered, so nothing is lost). */
        if (!c->ssl && (size_t)n < space)
            break;
    }
    if (!c->dead)
        flush_out(b, c);
}

/* ---- connections -------------------------------------------------------------------- */

static void conn_close(broker_t *b, conn_t *c)
{
    epoll_ctl(b->epfd, EPOLL_CTL_DEL, c->fd, NULL);
    SSL_free(c->ssl);
    close(c->fd);
    if (c->prev)
        c->prev->next = c->next;
    else
        b->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    free(c->in);
    pc_buf_free(&c->out);
    free(c);
    b->n.disconnects++;
}

static void accept_all(broker_t *b)
{
    for (;;) {
        int fd = accept4(b->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
                perror("accept4");
            return;
        }
        /* Receipts are tiny; Nagle plus the client's delayed ACK would add ~40 ms. */
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        conn_t *c = calloc(1, sizeof *c);
        if (!c || grow_in(c, IN_MIN_CAP) != 0) {
            free(c);
            close(fd);
            continue;
        }
        c->fd = fd;
        c->id = ++b->next_conn_id;
        pc_buf_init(&c->out);
        if (b->tls && (!(c->ssl = SSL_new(b->tls)) || SSL_set_fd(c->ssl, fd) != 1)) {
            SSL_free(c->ssl);
            free(c->in);
            free(c);
            close(fd);
            continue;
        }
        if (c->ssl)
            SSL_set_accept_state(c->ssl);
        struct epoll_event ev = { .events = EPOLLIN, .data.ptr = c };
        if (epoll_ctl(b->epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
            perror("epoll_ctl");
            SSL_free(c->ssl);
            free(c->in);
            free(c);
            close(fd);
            continue;
        }
        c->next = b->conns;
        if (b->conns)
            b->conns->prev = c;
        b->conns = c;
        b->n.connections++;
        if (b->opt.verbose)
            fprintf(stderr, "conn %" PRIu64 ": accepted\n", c->id);
    }
}

static int listen_on(broker_t *b)
{
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(b->opt.port) };
    if (inet_pton(AF_INET, b->opt.bind_addr, &sa.sin_addr) != 1) {
        fprintf(stderr, "not an IPv4 address: %s\n", b->opt.bind_addr);
        return -1;
    }
    b->lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (b->lfd < 0) {
        perror("socket");
        return -1;
    }
    int one = 1;
    setsockopt(b->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(b->lfd, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(b->lfd, 128) != 0) {
        fprintf(stderr, "listen on %s:%u: %s\n", b->opt.bind_addr, (unsigned)b->opt.port,
                strerror(errno));
        return -1;
    }
    if (b->opt.advertised_url)
        snprintf(b->self_url, sizeof b->self_url, "%s", b->opt.advertised_url);
    else
        snprintf(b->self_url, sizeof b->self_url, "%s://%s:%u", b->tls ? "pulsar+ssl" : "pulsar",
                 b->opt.bind_addr, (unsigned)b->opt.port);
    return 0;
}

/* The server side of TLS: the certificate chain and key of --tls-cert / --tls-key,
 * TLS 1.2 or newer, OpenSSL's defaults otherwise (session tickets included). Read-ahead
 * takes several records per recv instead of a header and a body each. */
static int tls_setup(broker_t *b)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    if (!ctx || SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1 ||
        SSL_CTX_use_certificate_chain_file(ctx, b->opt.tls_cert) != 1 ||
        SSL_CTX_use_PrivateKey_file(ctx, b->opt.tls_key, SSL_FILETYPE_PEM) != 1 ||
        SSL_CTX_check_private_key(ctx) != 1) {
        char why[256];
        ERR_error_string_n(ERR_peek_last_error(), why, sizeof why);
        fprintf(stderr, "TLS set-up with %s and %s failed: %s\n", b->opt.tls_cert, b->opt.tls_key,
                why);
        SSL_CTX_free(ctx);
        return -1;
    }
    SSL_CTX_set_read_ahead(ctx, 1);
    SSL_CTX_set_default_read_buffer_len(ctx, 64 * 1024);
    /* Replies stay in c->out while the socket is full and may move when it grows. */
    SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    b->tls = ctx;
    return 0;
}

/* SIGUSR2: every connection goes, as when a broker restarts; the listener stays. */
static void drop_all(broker_t *b)
{
    unsigned n = 0;
    while (b->conns) {
        conn_close(b, b->conns);
        n++;
    }
    printf("null-broker: closed %u connections (SIGUSR2)\n", n);
    fflush(stdout);
}

/* ---- reporting ---------------------------------------------------------------------- */

/* The broker's own CPU time: a benchmark is only about the client while this stays small. */
static double cpu_seconds(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static void print_interval(const broker_t *b, const counters_t *prev, double dt)
{
    double msgs = (double)(b->n.messages - prev->messages) / dt;
    double mib = (double)(b->n.payload_bytes - prev->payload_bytes) / dt / (1024.0 * 1024.0);
    double reads = (double)(b->n.reads - prev->reads) / dt;
    double writes = (double)(b->n.writes - prev->writes) / dt;
    printf("null-broker: %.0f msg/s  %.1f MiB/s  %.0f reads/s  %.0f writes/s  cpu %.2f s\n", msgs,
           mib, reads, writes, cpu_seconds());
    fflush(stdout);
}

/* One line for scripts, with the monotonic time so two samples give rates. */
static void print_summary(const broker_t *b)
{
    const counters_t *n = &b->n;
    printf("NULLBROKER connections=%" PRIu64 " sends=%" PRIu64 " msgs=%" PRIu64
           " payload_bytes=%" PRIu64 " checksum_mismatches=%" PRIu64 " protocol_errors=%" PRIu64
           " producers=%" PRIu64 " first_connect_mono_s=%.6f last_producer_mono_s=%.6f"
           " tls_handshakes=%" PRIu64 " tls_resumed=%" PRIu64 " tls_last=%s cpu_s=%.2f"
           " mono_s=%.6f\n",
           n->connections, n->sends, n->messages, n->payload_bytes, n->checksum_mismatches,
           n->protocol_errors, n->producers, b->first_connect_s, b->last_producer_s,
           n->tls_handshakes, n->tls_resumed, b->tls_last[0] ? b->tls_last : "-", cpu_seconds(),
           mono_s());
    fflush(stdout);
}

static void print_counters(const broker_t *b, double elapsed)
{
    const counters_t *n = &b->n;
    double cpu = cpu_seconds();
    printf("null-broker counters after %.1f s (cpu %.2f s user+sys):\n", elapsed, cpu);
    printf("  connections       %" PRIu64 " (closed %" PRIu64 ")\n", n->connections,
           n->disconnects);
    printf("  CONNECT           %" PRIu64 "\n", n->connects);
    printf("  PARTITIONED_META  %" PRIu64 "\n", n->partition_lookups);
    printf("  LOOKUP            %" PRIu64 "\n", n->lookups);
    printf("  PRODUCER          %" PRIu64 "\n", n->producers);
    printf("  CLOSE_PRODUCER    %" PRIu64 "\n", n->close_producers);
    printf("  PING              %" PRIu64 "\n", n->pings);
    printf("  SEND frames       %" PRIu64 "\n", n->sends);
    printf("  messages          %" PRIu64 "\n", n->messages);
    printf("  payload bytes     %" PRIu64 "\n", n->payload_bytes);
    printf("  frames            %" PRIu64 "\n", n->frames);
    printf("  reads / bytes in  %" PRIu64 " / %" PRIu64 "\n", n->reads, n->bytes_in);
    printf("  writes / bytes out %" PRIu64 " / %" PRIu64 "\n", n->writes, n->bytes_out);
    if (b->opt.verify_checksum)
        printf("  checksums checked %" PRIu64 ", mismatches %" PRIu64 "\n", n->checksums_checked,
               n->checksum_mismatches);
    else
        printf("  checksums         not checked (--verify-checksum)\n");
    if (b->tls)
        printf("  TLS handshakes    %" PRIu64 " (resumed %" PRIu64 ", failed %" PRIu64 ")\n",
               n->tls_handshakes, n->tls_resumed, n->tls_failures);
    printf("  unknown commands  %" PRIu64 "\n", n->unknown_commands);
    printf("  protocol errors   %" PRIu64 "\n", n->protocol_errors);
    print_summary(b);
}

/* ---- main loop ---------------------------------------------------------------------- */

/* epoll data of the two fds that are not connections. */
static char listen_tag, signal_tag;

static void on_event(broker_t *b, const struct epoll_event *ev)
{
    if (ev->data.ptr == &listen_tag) {
        accept_all(b);
        return;
    }
    if (ev->data.ptr == &signal_tag) {
        struct signalfd_siginfo si;
        if (read(b->sigfd, &si, sizeof si) == (ssize_t)sizeof si) {
            if (si.ssi_signo == SIGUSR1)
                print_summary(b);
            else if (si.ssi_signo == SIGUSR2)
                b->drop = true; /* after this batch of events, which may name them */
            else
                b->stop = true;
        }
        return;
    }
    conn_t *c = ev->data.ptr;
    if (ev->events & EPOLLOUT) {
        if (c->ssl && !c->tls_ready) {
            c->out_blocked = false;
            set_events(b, c, EPOLLIN);
            on_readable(b, c); /* the handshake goes on */
        } else {
            flush_out(b, c);
            /* Records OpenSSL read ahead while reading was paused wake no epoll. */
            if (!c->dead && !c->out_blocked && c->ssl && SSL_has_pending(c->ssl))
                on_readable(b, c);
        }
    } else if (ev->events & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
        on_readable(b, c);
    }
    if (c->dead) {
        if (b->opt.verbose)
            fprintf(stderr, "conn %" PRIu64 ": closed\n", c->id);
        conn_close(b, c);
    }
}

static int run(broker_t *b)
{
    struct epoll_event evs[64];
    double start = mono_s(), last = start;
    counters_t prev = b->n;
    while (!b->stop) {
        int timeout = -1;
        if (b->opt.interval_s) {
            double due = last + b->opt.interval_s - mono_s();
            timeout = due > 0 ? (int)(due * 1000) + 1 : 0;
        }
        int n = epoll_wait(b->epfd, evs, 64, timeout);
        if (n < 0 && errno != EINTR) {
            perror("epoll_wait");
            return 1;
        }
        /* Dead connections are freed inside on_event; one event per fd per wait, so no
         * later entry in evs can point at a freed connection. */
        for (int i = 0; i < n; i++)
            on_event(b, &evs[i]);
        if (b->drop) {
            drop_all(b);
            b->drop = false;
        }
        double now = mono_s();
        if (b->opt.interval_s && now - last >= b->opt.interval_s) {
            print_interval(b, &prev, now - last);
            prev = b->n;
            last = now;
        }
    }
    print_counters(b, mono_s() - start);
    return 0;
}

static void usage(FILE *f, const char *prog)
{
    fprintf(f,
            "usage: %s [options]\n"
            "  -p, --port PORT             listen port (default 6660)\n"
            "  -b, --bind ADDR             IPv4 address to listen on (default 127.0.0.1)\n"
            "      --advertised-url URL    LOOKUP answer (default pulsar://ADDR:PORT); point it\n"
            "                              at a proxy in front of this broker to keep the proxy\n"
            "                              in the path\n"
            "      --partitions N          partitions reported for every topic (default 0)\n"
            "      --max-message-size B    max_message_size sent in CONNECTED (default 5242880)\n"
            "      --verify-checksum       check every payload frame's CRC32C, count mismatches\n"
            "      --tls-cert FILE         serve TLS with this PEM certificate chain ...\n"
            "      --tls-key FILE          ... and this PEM private key (both or neither)\n"
            "  -i, --interval SECONDS      print rates this often (default 0 = only at exit)\n"
            "  -v, --verbose               log connections and every command except SEND\n"
            "  -h, --help\n",
            prog);
}

static int parse_uint(const char *s, unsigned long long max, unsigned long long *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *end || v > max || s[0] == '-')
        return -1;
    *out = v;
    return 0;
}

static int parse_args(int argc, char **argv, options_t *o)
{
    enum {
        OPT_PARTITIONS = 256,
        OPT_MAX_SIZE,
        OPT_VERIFY,
        OPT_ADVERTISED,
        OPT_TLS_CERT,
        OPT_TLS_KEY
    };
    static const struct option longs[] = {
        { "port", required_argument, NULL, 'p' },
        { "bind", required_argument, NULL, 'b' },
        { "advertised-url", required_argument, NULL, OPT_ADVERTISED },
        { "partitions", required_argument, NULL, OPT_PARTITIONS },
        { "max-message-size", required_argument, NULL, OPT_MAX_SIZE },
        { "verify-checksum", no_argument, NULL, OPT_VERIFY },
        { "tls-cert", required_argument, NULL, OPT_TLS_CERT },
        { "tls-key", required_argument, NULL, OPT_TLS_KEY },
        { "interval", required_argument, NULL, 'i' },
        { "verbose", no_argument, NULL, 'v' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    int ch;
    unsigned long long v;
    int idx = -1;
    while ((idx = -1, ch = getopt_long(argc, argv, "p:b:i:vh", longs, &idx)) != -1) {
        switch (ch) {
        case 'p':
            if (parse_uint(optarg, 65535, &v) != 0)
                goto bad;
            o->port = (uint16_t)v;
            break;
        case 'b':
            o->bind_addr = optarg;
            break;
        case OPT_ADVERTISED:
            if (strlen(optarg) >= sizeof((broker_t *)0)->self_url)
                goto bad;
            o->advertised_url = optarg;
            break;
        case OPT_PARTITIONS:
            if (parse_uint(optarg, 100000, &v) != 0)
                goto bad;
            o->partitions = (uint32_t)v;
            break;
        case OPT_MAX_SIZE:
            if (parse_uint(optarg, INT32_MAX - PC_FRAME_OVERHEAD_ALLOWANCE, &v) != 0 || v == 0)
                goto bad;
            o->max_message_size = (int32_t)v;
            break;
        case OPT_VERIFY:
            o->verify_checksum = true;
            break;
        case OPT_TLS_CERT:
            o->tls_cert = optarg;
            break;
        case OPT_TLS_KEY:
            o->tls_key = optarg;
            break;
        case 'i':
            if (parse_uint(optarg, 3600, &v) != 0)
                goto bad;
            o->interval_s = (unsigned)v;
            break;
        case 'v':
            o->verbose = true;
            break;
        case 'h':
            usage(stdout, argv[0]);
            exit(0);
        default:
            usage(stderr, argv[0]);
            return -1;
        }
    }
    if (optind != argc) {
        usage(stderr, argv[0]);
        return -1;
    }
    if (!o->tls_cert != !o->tls_key) {
        fprintf(stderr, "%s: --tls-cert and --tls-key go together\n", argv[0]);
        return -1;
    }
    return 0;
bad:
    /* getopt_long sets idx only for long options. */
    if (idx >= 0)
        fprintf(stderr, "%s: bad value for --%s: \"%s\"\n", argv[0], longs[idx].name, optarg);
    else
        fprintf(stderr, "%s: bad value for -%c: \"%s\"\n", argv[0], ch, optarg);
    return -1;
}

int main(int argc, char **argv)
{
    static broker_t b; /* static: the arena is too large for a comfortable stack frame */
    b.opt = (options_t){
        .bind_addr = "127.0.0.1",
        .port = 6660,
        .max_message_size = PC_FRAME_DEFAULT_MAX_MESSAGE_SIZE,
    };
    if (parse_args(argc, argv, &b.opt) != 0)
        return 2;
    /* The same allowance the real broker and the client's reader give over the limit. */
    b.max_frame = (size_t)b.opt.max_message_size + PC_FRAME_OVERHEAD_ALLOWANCE;
    b.alloc = (ProtobufCAllocator){ .alloc = arena_alloc,
                                    .free = arena_free,
                                    .allocator_data = &b.arena };

    /* A signal becomes an ordinary event: no handler, no race with going to sleep, and
     * it works under valgrind, which delays signals during epoll_pwait. */
    sigset_t stop_signals; /* and SIGUSR1, which only prints, and SIGUSR2 */
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGINT);
    sigaddset(&stop_signals, SIGTERM);
    sigaddset(&stop_signals, SIGUSR1);
    sigaddset(&stop_signals, SIGUSR2);
    sigprocmask(SIG_BLOCK, &stop_signals, NULL);
    signal(SIGPIPE, SIG_IGN);

    if (b.opt.tls_cert && tls_setup(&b) != 0)
        return 1;
    if (listen_on(&b) != 0)
        return 1;
    b.epfd = epoll_create1(EPOLL_CLOEXEC);
    b.sigfd = signalfd(-1, &stop_signals, SFD_NONBLOCK | SFD_CLOEXEC);
    struct epoll_event lev = { .events = EPOLLIN, .data.ptr = &listen_tag };
    struct epoll_event sev = { .events = EPOLLIN, .data.ptr = &signal_tag };
    if (b.epfd < 0 || b.sigfd < 0 || epoll_ctl(b.epfd, EPOLL_CTL_ADD, b.lfd, &lev) != 0 ||
        epoll_ctl(b.epfd, EPOLL_CTL_ADD, b.sigfd, &sev) != 0) {
        perror("epoll/signalfd");
        return 1;
    }
    printf("pulsarc-null-broker listening on %s:%u, advertising %s (partitions %u, "
           "max_message_size %d%s%s)\n",
           b.opt.bind_addr, (unsigned)b.opt.port, b.self_url, b.opt.partitions,
           b.opt.max_message_size, b.opt.verify_checksum ? ", verifying checksums" : "",
           b.tls ? ", TLS" : "");
    fflush(stdout);
    int rc = run(&b);
    while (b.conns)
        conn_close(&b, b.conns);
    SSL_CTX_free(b.tls);
    close(b.lfd);
    close(b.sigfd);
    close(b.epfd);
    return rc;
}
