/* One TCP connection to a broker: handshake, keep-alive, requests with ids and timeouts,
 * and routing of producer-addressed commands to the producers registered on it.
 * @locality loop thread: every function here. */
#ifndef PC_CONNECTION_H
#define PC_CONNECTION_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "PulsarApi.pb-c.h"
#include "net/runtime.h"
#include "net/service_url.h"
#include "pulsarc/pulsarc.h"
#include "wire/frame.h"

#define PC_PROTOCOL_VERSION 21

typedef struct pc_conn pc_conn_t;

/* resp is NULL unless res is OK or a broker error that came with a response. */
typedef void (*pc_request_cb)(pc_conn_t *conn, pulsarc_result res,
                              const Pulsar__Proto__BaseCommand *resp, void *ctx);
typedef void (*pc_conn_ready_cb)(pc_conn_t *conn, pulsarc_result res, void *ctx);
typedef void (*pc_write_done_cb)(void *ctx, int status);
/* The owner's hook: the connection has just closed and must be forgotten (it frees itself
 * once its handles are closed). */
typedef void (*pc_conn_closed_cb)(pc_conn_t *conn, void *ctx);

/* A producer listening on a connection for its receipts and for the connection's end. */
typedef struct pc_conn_listener {
    struct pc_conn_listener *next;
    uint64_t producer_id;
    void *ctx;
    void (*on_receipt)(void *ctx, const Pulsar__Proto__CommandSendReceipt *r);
    void (*on_send_error)(void *ctx, const Pulsar__Proto__CommandSendError *e);
    /* The broker closed the producer (CLOSE_PRODUCER, or a TOPIC_MIGRATED whose new
     * address is missing or malformed); the listener has been removed already. */
    void (*on_broker_close)(void *ctx);
    /* The broker moved the producer's topic to another cluster (TOPIC_MIGRATED, PIP-188):
     * to is that cluster's service URL, checked (pc_migration_url_parse); the listener has
     * been removed already. NULL: handled as on_broker_close. */
    void (*on_migrated)(void *ctx, const pc_service_url_t *to);
    /* The connection is gone; the listener has been removed already. */
    void (*on_disconnect)(void *ctx, pulsarc_result why);
} pc_conn_listener_t;

typedef enum pc_conn_state {
    PC_CONN_CONNECTING,
    PC_CONN_HANDSHAKE,
    PC_CONN_READY,
    PC_CONN_CLOSED,
} pc_conn_state_t;

/* Start connecting to physical; logical is the broker the connection speaks for (they
 * differ when going through a Pulsar proxy, and CONNECT then names logical as
 * proxy_to_broker_url). With an SNI proxy (rt->net.sni_proxy) TCP goes to the proxy
 * instead, and TLS names physical's host (SNI and the certificate check). A connection
 * that fails at once comes back already closed. rt must outlive the connection. With
 * rt->transport's open_socket (a test seam) the connection neither resolves nor
 * connects: it takes the socket that returns. */
pc_conn_t *pc_conn_open(pc_runtime_t *rt, const pc_host_port_t *logical,
                        const pc_host_port_t *physical);
/* Name the connection's owner: on_closed runs once, when the connection closes, before
 * anyone else hears of it. Set it right after pc_conn_open on a connection not closed. */
void pc_conn_set_owner(pc_conn_t *c, pc_conn_closed_cb on_closed, void *ctx);
/* Call cb once when the connection is ready or has failed (at once if already ready). */
void pc_conn_when_ready(pc_conn_t *c, pc_conn_ready_cb cb, void *ctx);

/* Send cmd with its request id already set; cb fires once with the answer, an error or
 * PULSARC_ERR_TIMEOUT after operationTimeoutMs. */
/* Whether the broker answered the PRODUCER request request_id, still pending, with
 * producer_ready=false: it queued the (WaitForExclusive) producer until the topic's
 * exclusive holder leaves. Such a request that times out says so (this detail). */
bool pc_conn_request_queued(const pc_conn_t *c, uint64_t request_id);
#define PC_CONN_QUEUED_DETAIL                                                               \
    "the broker queued the producer (accessMode wait_for_exclusive): another producer has " \
    "the topic to itself and did not leave within operationTimeoutMs"
void pc_conn_request(pc_conn_t *c, Pulsar__Proto__BaseCommand *cmd, uint64_t request_id,
                     pc_request_cb cb, void *ctx);
/* Send a command that expects no answer. Returns 0 or -1. */
int pc_conn_send_command(pc_conn_t *c, const Pulsar__Proto__BaseCommand *cmd);
/* The same for a command that carries credentials (CONNECT, AUTH_RESPONSE): its encoded
 * bytes, and the TLS path's plaintext copy of them, are wiped once written or dropped. */
int pc_conn_send_secret_command(pc_conn_t *c, const Pulsar__Proto__BaseCommand *cmd);
/* Write buffers as they are (they must stay valid until done runs). Returns 0 or -1;
 * done is called exactly once when 0 is returned. */
int pc_conn_write(pc_conn_t *c, const uv_buf_t *bufs, unsigned n, pc_write_done_cb done, void *ctx);

void pc_conn_add_listener(pc_conn_t *c, pc_conn_listener_t *l);
void pc_conn_remove_listener(pc_conn_t *c, pc_conn_listener_t *l);

/* Drop the connection: fail its requests and waiters, tell its listeners. */
void pc_conn_close(pc_conn_t *c, pulsarc_result why, const char *detail);

pc_conn_state_t pc_conn_state(const pc_conn_t *c);
uint32_t pc_conn_max_message_size(const pc_conn_t *c);
const pc_host_port_t *pc_conn_logical(const pc_conn_t *c);
const pc_host_port_t *pc_conn_physical(const pc_conn_t *c);
uint64_t pc_conn_new_request_id(pc_conn_t *c);

#endif
