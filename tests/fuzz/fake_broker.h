/* The broker's side of in-memory connections, for fuzzing a client (test support).
 *
 * Every connection a client given fb_seam opens is one end of a socketpair (through
 * the runtime's transport seam, client/test_seams.h); the broker keeps the other end. It
 * runs on the caller's thread, taking turns with the client's loop (lockstep.h): serving
 * (fb_settle, fb_serve) gives the loop turns and reads what the client wrote between them,
 * checks that every frame parses, records requests, producers and SENDs, and answers the
 * kinds of command whose automatic answer is on. Everything else the caller writes
 * itself, as commands or raw bytes. Time is virtual (virtual_clock.h): fb_serve moves it
 * from one of the client's timers to the next.
 *
 * One thread: the creating one, which also runs the client's loop (the seam's connection
 * hand-over runs during a turn). */
#ifndef PC_FUZZ_FAKE_BROKER_H
#define PC_FUZZ_FAKE_BROKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "PulsarApi.pb-c.h"
#include "broker_session_format.h"
#include "net/runtime.h"
#include "wire/frame.h"

#define FB_MAX_CONNS 32
#define FB_MAX_REQUESTS 64
#define FB_MAX_PRODUCERS 32
#define FB_MAX_SENDS 512

/* The logical brokers lookups name; all of them are this one fake broker. The first is
 * also the service URL the targets give the client, so that lookups and the producer
 * share one connection, as with a standalone broker; only a redirect, a proxied answer or
 * a topic migration makes the client connect to the second. */
#define FB_BROKER_URL "pulsar://broker-1:6650"
#define FB_REDIRECT_URL "pulsar://broker-2:6650"
/* Their TLS addresses (brokerServiceUrlTls), given when the settings say tls. Both on
 * localhost, so one test certificate for "localhost" covers every broker. */
#define FB_BROKER_URL_TLS "pulsar+ssl://localhost:6651"
#define FB_REDIRECT_URL_TLS "pulsar+ssl://localhost:6652"

typedef struct fake_broker fake_broker_t;

/* A layer between the broker's frames and the socket (TLS, say); NULL in the settings
 * means plain bytes. All three run on the broker's thread. */
typedef struct fb_transport {
    /* Carry plaintext the broker writes to connection i onto the wire (fb_write_wire), or
     * drop it when the layer cannot carry it now (no session yet). */
    void (*write)(void *ctx, fake_broker_t *fb, int i, const uint8_t *data, size_t len);
    /* Bytes the client wrote arrived on connection i: pass the plaintext to fb_deliver. */
    void (*read)(void *ctx, fake_broker_t *fb, int i, const uint8_t *wire, size_t len);
    /* Connection i is closing (its socket still open): drop the layer's state for it. */
    void (*closed)(void *ctx, fake_broker_t *fb, int i);
} fb_transport_t;

/* How the broker's automatic answers look. */
typedef struct fb_settings {
    uint32_t partitions;         /* PARTITIONED_METADATA answer */
    int lookup_redirects;        /* LOOKUPs answered Redirect before the first Connect */
    bool proxy_through;          /* Connect answers name the second broker and say
                                  proxy_through_service_url */
    int producer_errors;         /* PRODUCERs answered ERROR(ServiceNotReady) first */
    int64_t last_sequence_id;    /* in PRODUCER_SUCCESS */
    int32_t max_message_size;    /* in CONNECTED */
    size_t producer_version_len; /* schema_version in PRODUCER_SUCCESS (0: absent) */
    const Pulsar__Proto__Schema *topic_schema; /* GET_SCHEMA answer; NULL: "no schema" */
    bool auto_produce;                         /* PRODUCERs must register topic_schema (checked) */
    bool tls;                                  /* lookup answers give TLS addresses too */
    const fb_transport_t *transport;           /* NULL: plain */
    void *transport_ctx;
} fb_settings_t;

typedef enum fb_refuse {
    FB_ACCEPT,  /* new connections work */
    FB_FAIL,    /* the connect fails */
    FB_HANG_UP, /* connected, but the broker closes its end at once */
} fb_refuse_t;

typedef struct fb_conn {
    int fd;               /* the broker's end; -1 once closed */
    pc_frame_reader_t in; /* frames from the client */
} fb_conn_t;

typedef struct fb_request {
    int conn;
    uint64_t id;
    Pulsar__Proto__BaseCommand__Type type;
} fb_request_t;

typedef struct fb_producer {
    uint64_t id;
    int conn; /* where it registered last */
} fb_producer_t;

typedef struct fb_send {
    int conn;
    uint64_t producer_id;
    uint64_t sequence_id;
    bool has_highest;
    uint64_t highest_sequence_id;
    bool receipted; /* a receipt for it was written (automatic or by the caller) */
} fb_send_t;

/* Read-only for users, apart from the knob marked so. */
struct fake_broker {
    fb_settings_t settings;
    bool autos[BS_AUTO_COUNT]; /* knob: which automatic answers are on */

    fb_refuse_t refuse; /* what happens to new connections (fb_set_refuse) */
    fb_conn_t conns[FB_MAX_CONNS];
    int n_conns;               /* connections handed over so far (closed ones included) */
    unsigned connect_attempts; /* including failed ones */

    fb_request_t requests[FB_MAX_REQUESTS]; /* the most recent, as a ring */
    unsigned n_requests;                    /* requests seen in total */
    unsigned frames_received;               /* frames from the client, all connections */
    fb_producer_t producers[FB_MAX_PRODUCERS];
    int n_producers;
    fb_send_t sends[FB_MAX_SENDS];
    int n_sends;
    unsigned messages_received;   /* messages whose SENDs (all chunks) arrived */
    uint64_t next_entry;          /* entry id of the next automatic receipt */
    uint64_t next_schema_version; /* of the next automatic GET_OR_CREATE_SCHEMA answer */
    pc_buf_t reply;               /* scratch: an automatic answer being framed */
    pc_transport_t seam;          /* what fb_seam hands out */
};

/* Create the broker; NULL when out of resources. */
fake_broker_t *fb_new(const fb_settings_t *settings);
/* The seam that hands the broker a client's connections: give it to the client's
 * configuration (pc_client_config_set_transport) before creating the client. */
const pc_transport_t *fb_seam(fake_broker_t *fb);
/* Close the broker's ends. Call after the client is destroyed. */
void fb_free(fake_broker_t *fb);

/* Let the client run and the broker answer until neither has anything left to do at this
 * instant (the clock does not move). */
void fb_settle(fake_broker_t *fb);
/* Settle, then move the clock to the client's next timer and settle again, until done(fb,
 * ctx) returns true (checked after each settling; done may be NULL) or the clock reaches
 * deadline_ms (virtual). Returns whether done became true. */
bool fb_serve(fake_broker_t *fb, uint64_t deadline_ms, bool (*done)(fake_broker_t *, void *),
              void *ctx);

/* Decide what happens to connections the client opens from now on. */
void fb_set_refuse(fake_broker_t *fb, fb_refuse_t mode);

/* Connections handed over so far, closed ones included (their indices stay valid). */
int fb_conn_count(const fake_broker_t *fb);
/* Open connections, in order of arrival: the index of the k-th (k modulo their number),
 * or -1 when none is open. */
int fb_open_conn(const fake_broker_t *fb, unsigned k);
/* Write to connection i (ignored when it is closed). */
void fb_write(fake_broker_t *fb, int i, const void *data, size_t len);
void fb_write_command(fake_broker_t *fb, int i, const Pulsar__Proto__BaseCommand *cmd);
/* For transports: bytes straight onto connection i's socket, below any layer (when the
 * socket is full, the client gets turns to read it; if it has stopped reading, the rest
 * is dropped); and the plaintext a layer recovered from what the client wrote. */
void fb_write_wire(fake_broker_t *fb, int i, const void *data, size_t len);
void fb_deliver(fake_broker_t *fb, int i, const uint8_t *data, size_t len);
/* The broker closes connection i. */
void fb_hang_up(fake_broker_t *fb, int i);

/* A schema version of len bytes (at most FB_VERSION_MAX), for answers. */
#define FB_VERSION_MAX 65
ProtobufCBinaryData fb_version(uint64_t n, size_t len);

/* The n-th most recent request (n < number kept), or NULL. */
const fb_request_t *fb_recent_request(const fake_broker_t *fb, unsigned n);

#endif
