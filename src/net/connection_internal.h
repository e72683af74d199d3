/* The connection's state, shared by the files that make it up, each with one job:
 *   connection.c       lifecycle: open (resolve, TCP connect), close, free, accessors,
 *                      the owner hook, ready waiters, listeners
 *   conn_io.c          the transport: reads and frames, the write queue (coalesced
 *                      writevs per loop turn), the TLS path, the start of the handshake
 *   conn_handshake.c   CONNECT/CONNECTED, authentication (prepare, CONNECT's data,
 *                      answers to AUTH_CHALLENGE)
 *   conn_requests.c    pending requests by id and their timeouts, the keep-alive
 *                      tick, dispatch of incoming commands to requests and listeners
 * Nothing outside src/net/ includes this.
 * @locality loop thread. */
#ifndef PC_CONNECTION_INTERNAL_H
#define PC_CONNECTION_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "auth/auth.h"
#include "net/connection.h"
#include "net/listener_index.h"
#include "net/tls.h"

/* The read buffer: small at first, as a producer mostly reads a few receipts at a time;
 * doubled after a read that filled it, so a burst still takes few reads. */
#define READ_BUF_MIN (4 * 1024)
#define READ_BUF_MAX (64 * 1024)
/* TLS: full-size ciphertext blocks a connection keeps for reuse, as many as can be in
 * flight (conn_io.c, "The TLS write path"). */
#define CONN_TLS_SPARES 3

typedef struct request {
    struct request *next;
    uint64_t id;
    uint64_t deadline_ms;
    pc_request_cb cb;
    void *ctx;
    bool queued; /* PRODUCER: the broker queued it for exclusive access */
} request_t;

typedef struct ready_waiter {
    struct ready_waiter *next;
    pc_conn_ready_cb cb;
    void *ctx;
} ready_waiter_t;

/* One caller's part of a write: told when its bytes are written (or dropped). */
typedef struct write_item {
    pc_write_done_cb done;
    void *ctx;
    uint8_t *owned; /* command bytes this write owns */
    size_t n_bufs;  /* its buffers in the queue's bufs, in order */
    size_t bytes;
    bool wipe; /* owned holds credentials (CONNECT, AUTH_RESPONSE): wiped when freed */
} write_item_t;

/* Everything queued during one loop turn, handed to libuv in writevs of up to
 * CONN_WRITE_BYTES each (conn_io.c). */
typedef struct out_queue {
    uv_buf_t *bufs;
    size_t n_bufs, cap_bufs;
    write_item_t *items;
    size_t n_items, cap_items;
} out_queue_t;

struct pc_conn {
    pc_runtime_t *rt;
    pc_conn_closed_cb on_closed; /* the owner's hook, NULL until set */
    void *owner;
    pc_host_port_t logical;
    pc_host_port_t physical;
    const pc_host_port_t *dial; /* where TCP goes: &physical, or rt's SNI proxy */
    pc_conn_state_t state;
    /* The credentials and trust of the cluster this connection was opened for, taken
     * from the runtime at open: a cluster switch (net/service_provider.h) replaces the
     * runtime's, and must never make a connection to the old cluster present the new
     * one's (or cancel a wait on the wrong provider). */
    struct pc_auth *auth;       /* NULL: no authentication */
    struct pc_tls_ctx *tls_ctx; /* NULL: plain TCP */

    uv_tcp_t tcp;
    uv_timer_t timer;
    uv_idle_t flusher; /* runs the coalesced write at the start of the next loop turn */
    bool flush_due;    /* flusher is started (kept here: asking libuv costs a call a write) */
    out_queue_t out;
    out_queue_t spare; /* a finished write's arrays (empty), for the next turn's queue */
    uv_getaddrinfo_t gai;
    uv_connect_t connect_req;
    pc_tls_session_t *tls; /* NULL: plain TCP */
    /* TLS: the plaintext queued and not yet encrypted, in order, and where encryption
     * stands in it: item, buffer, offset in the buffer, the item's end in bufs
     * (conn_io.c, "The TLS write path"). */
    out_queue_t tls_plain;
    size_t tls_item, tls_buf, tls_off, tls_item_end;
    size_t tls_plain_bytes;                   /* of tls_plain, not yet encrypted */
    size_t tls_in_flight;                     /* ciphertext handed to libuv and not yet written */
    pc_tls_out_t tls_spares[CONN_TLS_SPARES]; /* full-size blocks kept for the next parts */
    int n_tls_spares;
    int live_handles;  /* handles not yet closed; the struct is freed at zero */
    int busy_requests; /* getaddrinfo/connect/write in flight */

    /* The first bytes the peer sent (ciphertext on a TLS connection), to name a peer that
     * is no broker's binary port: an HTTP server, a TLS port dialled with pulsar://
     * (conn_io.c). framed: a frame arrived, the peer speaks Pulsar. */
    uint8_t head[96];
    size_t head_len;
    bool framed;

    pc_frame_reader_t reader;
    uint8_t *rbuf; /* reads land here (and TLS plaintext); allocated at the first */
    size_t rbuf_len;
    bool rbuf_filled; /* the last read filled rbuf: it grows before the next */
    uint32_t max_message_size;
    int server_protocol;

    uint64_t opened_ms;
    uint64_t last_rx_ms;
    uint64_t last_ping_ms;
    uint64_t unused_since_ms; /* no listener, request, waiter or write since; 0: in use */

    /* Oldest first, the next one linked at *requests_tail: a broker answers mostly in the
     * order it was asked, so an answer's request is near the front. Linked newest first,
     * each of n requests in flight (1000 partitions' lookups and PRODUCERs) took a walk
     * past the n - 1 younger ones: n^2 / 2 steps. */
    request_t *requests;
    request_t **requests_tail;
    ready_waiter_t *waiters;
    pc_conn_listener_t *listeners;
    /* The same listeners by producer id, for the commands addressed to one; when it could
     * not grow (out of memory), the list is walked instead. */
    pc_listener_index_t listener_index;
    bool listener_index_incomplete;

    /* Waiting for the provider's data (pc_auth_prepare) before CONNECT or before an
     * AUTH_RESPONSE; cancelled when the connection closes, so the provider never calls
     * into a freed connection. */
    pc_auth_wait_t auth_wait;
    bool auth_for_challenge;         /* what the wait is for: a challenge's answer, or CONNECT */
    uint64_t auth_started_ms;        /* a challenge's wait is bounded like the handshake */
    pc_auth_session_t *auth_session; /* a SASL context (pc_auth_connect_data), or NULL */
    uint8_t *challenge;              /* the pending challenge's data (copied), or NULL */
    size_t challenge_len;
};

/* connection.c */
/* Free the struct once it is closed and no handle or request can call back. */
void pc_conn_maybe_free(pc_conn_t *c);
/* A connection that serves nobody (ready, and no listener, request or waiter) is no work:
 * its handles stop keeping the loop alive, so that on the application's loop an idle
 * client lets uv_run end (client/client_loop.c) although the pool keeps the connection
 * open; they keep it alive again as soon as somebody uses it. Called after each change
 * of the three lists and of the state. */
void pc_conn_update_ref(pc_conn_t *c);

/* conn_io.c */
/* Tell a queue's items how their write went (status) and empty the queue. */
void pc_conn_finish_items(out_queue_t *q, int status);
/* The socket is connected: start reading, then TLS (if any) and CONNECT. */
void pc_conn_start_handshake(pc_conn_t *c);
/* The connection closed: the plaintext TLS had not yet encrypted is cancelled (its items
 * hear UV_ECANCELED) and the kept ciphertext block freed. */
void pc_conn_tls_drop_plain(pc_conn_t *c);

/* conn_handshake.c */
void pc_conn_send_connect(pc_conn_t *c);
void pc_conn_answer_auth_challenge(pc_conn_t *c, const Pulsar__Proto__CommandAuthChallenge *m);
void pc_conn_on_connected(pc_conn_t *c, const Pulsar__Proto__CommandConnected *m);
/* Closes a connection that is not ready connectionTimeoutMs after it was opened
 * (CONNECT_FAILED, naming the phase that did not finish). Returns whether it did. */
bool pc_conn_handshake_timed_out(pc_conn_t *c, uint64_t now);

/* conn_requests.c */
void pc_conn_dispatch(pc_conn_t *c, const Pulsar__Proto__BaseCommand *cmd);
/* A SEND_RECEIPT, decoded by either path (process_frames). */
void pc_conn_dispatch_receipt(pc_conn_t *c, const Pulsar__Proto__CommandSendReceipt *r);
/* The listener of producer_id on c, or NULL. */
pc_conn_listener_t *pc_conn_find_listener(const pc_conn_t *c, uint64_t producer_id);
void pc_conn_on_tick(uv_timer_t *t);

#endif
