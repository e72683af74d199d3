/* A scriptable Pulsar broker for fault tests (test layer 2).
 *
 * It speaks just enough of the binary protocol for a producer client, using the
 * project's own frame code and protobuf-c types, and misbehaves on demand. It is never
 * proof of interoperability: only the real broker is.
 *
 * Each instance runs its own thread with a poll() loop (independent of the client's libuv
 * loop, so a stuck client cannot stall it) and listens on 127.0.0.1 at an ephemeral port.
 * Several instances may run in one process, e.g. for lookup redirects.
 *
 * Every function is safe from any thread and may be called mid-test. Setters take effect
 * for the next command the broker handles; functions that act on connections (cut, send
 * raw bytes, ping, close a producer, down/up) return only after the broker thread has
 * done the work, so a test can rely on their effect when they return.
 *
 * Default behaviour:
 *   CONNECT              -> CONNECTED(server_version "mock", the client's protocol_version,
 *                           max_message_size 5 MiB); its auth method and data are recorded
 *   AUTH_RESPONSE        -> recorded, not answered (the mock accepts any credentials)
 *   PARTITIONED_METADATA -> partitions 0
 *   LOOKUP               -> Connect to pulsar://127.0.0.1:<own port>, authoritative; the
 *                           last one's fields are kept (mock_broker_last_lookup)
 *   PRODUCER             -> PRODUCER_SUCCESS(given name, or "mock-<k>"; last_sequence_id -1;
 *                           schema_version when the topic has a schema; no topic_epoch),
 *                           after the schema registry below accepted the producer's schema
 *                           (or its absence)
 *   GET_OR_CREATE_SCHEMA -> the registry's version, or an error code and message
 *   GET_SCHEMA           -> the topic's latest schema and version, or TopicNotFound
 *                           "Topic not found or no-schema" as the real broker answers
 * Schema registry (per topic; partitions share it), as the real broker with auto-update
 * on: an identical schema gets its existing version; another type is IncompatibleSchema
 * ("Incompatible schema: exists schema type X, new schema type Y"); a new definition of
 * the same type becomes the next version (0, 1, ...; sent as 8 big-endian bytes).
 *   SEND                 -> SEND_RECEIPT(message id ledger 1, entry 0, 1, 2, ...); a bad
 *                           checksum gets SEND_ERROR(ChecksumError) as the real broker does
 *   CLOSE_PRODUCER       -> SUCCESS
 *   PING -> PONG; a PONG from the client is counted.
 * Like the real broker, it closes the connection on a frame above max_message_size +
 * PC_FRAME_OVERHEAD_ALLOWANCE, on a frame that does not parse and on a SEND for a
 * producer id not registered on that connection (all counted as MOCK_PROTOCOL_ERRORS).
 * Transaction commands are answered as a broker with transactionCoordinatorEnabled=true
 * answers them once mock_broker_set_txn_coordinators gave it coordinators (see there).
 * Other commands are counted (MOCK_UNKNOWN_COMMANDS) and ignored.
 *
 * Set MOCK_BROKER_DEBUG=1 in the environment to log every frame in and out to stderr. */
#ifndef PC_TEST_MOCK_BROKER_H
#define PC_TEST_MOCK_BROKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "PulsarApi.pb-c.h"

typedef struct mock_broker mock_broker_t;

/* ---- lifecycle ---------------------------------------------------------------------- */

/* Bind, listen and start the broker thread. NULL on failure (reason on stderr). */
mock_broker_t *mock_broker_start(void);
/* Close every connection, stop the thread, free everything. NULL is a no-op. */
void mock_broker_stop(mock_broker_t *mb);
uint16_t mock_broker_port(const mock_broker_t *mb);
/* "pulsar://127.0.0.1:<port>", valid until mock_broker_stop. */
const char *mock_broker_url(const mock_broker_t *mb);

/* ---- default behaviour knobs -------------------------------------------------------- */

/* Sent in CONNECTED; also bounds accepted frames (plus PC_FRAME_OVERHEAD_ALLOWANCE) on
 * connections accepted afterwards. */
void mock_broker_set_max_message_size(mock_broker_t *mb, int32_t bytes);
/* Partition count answered to PARTITIONED_METADATA (0 = not partitioned). */
void mock_broker_set_partitions(mock_broker_t *mb, uint32_t partitions);
/* The URL a LOOKUP Connect answer points at; NULL restores the broker's own URL. Use it
 * to send a client from one mock instance to another. */
void mock_broker_set_lookup_url(mock_broker_t *mb, const char *url);

/* On: Connect answers to LOOKUP say proxy_through_service_url, as a Pulsar proxy's do
 * (the client then connects to this broker again, naming the broker in CONNECT's
 * proxy_to_broker_url; see mock_connect_info_t). */
void mock_broker_set_lookup_proxied(mock_broker_t *mb, bool on);

/* PRODUCER_SUCCESS.last_sequence_id. MOCK_LAST_SEQ_TRACKED makes the mock behave like a
 * deduplicating broker: it answers the highest sequence id it accepted (receipted or not,
 * but not SEND_ERRORed) from a producer of that name, or -1 if none. */
#define MOCK_LAST_SEQ_TRACKED INT64_MIN
void mock_broker_set_last_sequence_id(mock_broker_t *mb, int64_t last_sequence_id);
/* On: drop duplicates the way a deduplicating broker does. A SEND whose sequence_id is at
 * or below the highest id accepted from a producer of that name is not stored — the whole
 * entry, even when its highest_sequence_id is above — and gets a SEND_RECEIPT whose
 * message id is ledger -1, entry -1. (The real broker answers "unknown" with a SEND_ERROR
 * for ids pushed but not yet persisted; the mock persists at once, so it never does.)
 * Combine with MOCK_LAST_SEQ_TRACKED for a full deduplicating broker. */
void mock_broker_set_deduplication(mock_broker_t *mb, bool on);

/* ---- connection faults ------------------------------------------------------------- */

/* Accept each new connection and close it at once (the client sees EOF before CONNECTED). */
void mock_broker_set_refuse(mock_broker_t *mb, bool on);
/* Down: close every connection and stop listening, so connects get ECONNREFUSED.
 * Up again: listen on the same port. Returns 0, or -1 if the port could not be re-bound. */
int mock_broker_set_down(mock_broker_t *mb, bool down);
/* Count CONNECTs but never answer them (the client's connection timeout must fire). The
 * refusals of mock_broker_fail_connect come first. */
void mock_broker_set_ignore_connect(mock_broker_t *mb, bool on);
/* The next `times` CONNECTs are refused as the real broker refuses bad credentials:
 * ERROR(server_error, message) with request_id -1, then the connection closes (times < 0:
 * always; 0: off). E.g. PULSAR__PROTO__SERVER_ERROR__AuthenticationError. */
void mock_broker_fail_connect(mock_broker_t *mb, int server_error, const char *message, int times);
/* Off: client PINGs are counted but get no PONG (keep-alive must detect a dead peer). */
void mock_broker_set_answer_pings(mock_broker_t *mb, bool on);
/* Close every open connection now, dropping any unsent output. */
void mock_broker_cut_now(mock_broker_t *mb);
/* Once n more bytes have arrived from the client (counted from this call, over all
 * connections), handle the complete frames among those n bytes, send their replies and
 * close the connection that received the n-th; anything after it is never looked at, so
 * this can cut in the middle of a client frame. n = 0 cuts when the next data arrives,
 * unhandled. One shot. */
void mock_broker_cut_after_bytes(mock_broker_t *mb, size_t n);
/* The next frame the broker writes (any kind) goes out only half, then that connection
 * closes: the client's decoder sees a truncated frame followed by EOF. One shot. */
void mock_broker_cut_next_reply(mock_broker_t *mb);
/* Write raw bytes to every open connection. Returns the number of connections. */
int mock_broker_send_raw(mock_broker_t *mb, const void *data, size_t len);
/* Write a frame header claiming an absurd size (0x7ffffff0 bytes) plus a few bytes to
 * every open connection; the client must drop the connection. Returns the number of
 * connections. */
int mock_broker_send_garbage(mock_broker_t *mb);
/* Send a PING to every connection that has sent CONNECT; the client's PONGs are counted
 * as MOCK_PONGS. Returns the number of connections pinged. */
int mock_broker_send_ping(mock_broker_t *mb);
/* A barrier: PINGs every connection the mock answered CONNECT on, behind everything it
 * has queued or delays for it (not behind held or suppressed receipts: those wait for the
 * test), and waits until each has answered with its PONG or closed. The client has then
 * read and acted on every frame the mock wrote to it before the call. Returns the number
 * of connections, or -1 after timeout_ms. */
int mock_broker_barrier(mock_broker_t *mb, int timeout_ms);
/* Returns once the broker thread has accepted every connection waiting and read (and
 * answered, as far as the kernel takes it) every byte that had arrived when it was called,
 * even on connections that have not sent CONNECT, which a barrier does not reach. Returns
 * whether it did any I/O meanwhile (accepted, read, wrote or closed): false means the
 * broker had nothing to do, so on loopback nothing the client wrote is still on its way.
 * For "nothing is in motion any more" (h_quiet in client_harness.h). */
bool mock_broker_sync(mock_broker_t *mb);
/* Send AUTH_CHALLENGE (method "token", auth_data `data`, e.g. "refresh" as the broker
 * sends once a token expired) to every connection that has sent CONNECT. The client's
 * AUTH_RESPONSEs are counted (MOCK_AUTH_RESPONSES) and the last one kept
 * (mock_broker_last_auth_response). Returns the number of connections challenged. */
int mock_broker_send_auth_challenge(mock_broker_t *mb, const char *data);

/* The server side of a multi-step method (SASL): with a handler set, CONNECT is not
 * answered at once; the handler gets CONNECT's auth data (round 0) and each
 * AUTH_RESPONSE's (round 1, 2, ...) of connection conn (1-based), on the broker thread,
 * and says what to do: MOCK_AUTH_CHALLENGE sends AUTH_CHALLENGE (method "sasl") with the
 * *out_len bytes it wrote to out (at most MOCK_AUTH_MAX bytes), MOCK_AUTH_DONE sends
 * CONNECTED, MOCK_AUTH_REFUSE refuses as the broker refuses bad credentials (ERROR
 * AuthenticationError "Failed to authenticate", then close). NULL: back to the default. */
#define MOCK_AUTH_MAX 8192
typedef enum mock_auth_verdict {
    MOCK_AUTH_CHALLENGE,
    MOCK_AUTH_DONE,
    MOCK_AUTH_REFUSE,
} mock_auth_verdict_t;
typedef mock_auth_verdict_t (*mock_auth_server_cb)(void *ctx, int conn, int round,
                                                   const uint8_t *data, size_t len, uint8_t *out,
                                                   size_t *out_len);
void mock_broker_set_auth_server(mock_broker_t *mb, mock_auth_server_cb cb, void *ctx);

/* ---- lookup faults ----------------------------------------------------------------- */

/* The next `times` LOOKUPs get no answer at all (times < 0: none does; 0: off). */
void mock_broker_lookup_unanswered(mock_broker_t *mb, int times);
/* The next `times` LOOKUPs answer Redirect to url (times < 0: always; 0: off). */
void mock_broker_lookup_redirect(mock_broker_t *mb, const char *url, int times);
/* The next `times` LOOKUPs answer Failed with this ServerError (a
 * PULSAR__PROTO__SERVER_ERROR__* value) and message. Checked before redirects. */
void mock_broker_lookup_fail(mock_broker_t *mb, int server_error, const char *message, int times);

/* ---- schema registry -------------------------------------------------------------- */

/* On: a producer without a schema on a topic that has one is refused (IncompatibleSchema),
 * as with schemaValidationEnforced. */
void mock_broker_set_schema_enforced(mock_broker_t *mb, bool on);
/* On: a new definition for a topic that has a schema is refused (IncompatibleSchema), as
 * an incompatible evolution is. */
void mock_broker_set_schema_refuse_new(mock_broker_t *mb, bool on);
/* On: GET_OR_CREATE_SCHEMA commands are counted but never answered. */
void mock_broker_set_schema_ignore(mock_broker_t *mb, bool on);
/* Forget every registered schema (the topics were deleted and re-created). */
void mock_broker_clear_schemas(mock_broker_t *mb);
/* Register a schema (a PULSAR__PROTO__SCHEMA__TYPE__* value) as an admin would. Returns 0
 * with *version set, or the ServerError of the refusal. */
int mock_broker_register_schema(mock_broker_t *mb, const char *topic, int type, const void *data,
                                size_t len, int64_t *version);

/* ---- producer faults --------------------------------------------------------------- */

/* The next `times` PRODUCER commands are answered ERROR(server_error, message) and the
 * producer is not registered (times < 0: always; 0: off). */
void mock_broker_fail_producer(mock_broker_t *mb, int server_error, const char *message, int times);
/* PRODUCER_SUCCESS carries this topic_epoch (the broker's epoch of a topic an exclusive
 * producer had); < 0 (the default): none. */
void mock_broker_set_topic_epoch(mock_broker_t *mb, int64_t epoch);
/* On: each PRODUCER is answered PRODUCER_SUCCESS(producer_ready=false), as the broker
 * answers a WaitForExclusive producer while another producer has the topic, and the
 * producer waits in a queue (counted as MOCK_QUEUED_PRODUCERS), not registered. A
 * CLOSE_PRODUCER for it drops it from the queue. */
void mock_broker_set_queue_producers(mock_broker_t *mb, bool on);
/* Register every queued producer and send each its PRODUCER_SUCCESS (ready, with the
 * topic epoch), as the broker does when the holder leaves. Returns how many. */
int mock_broker_grant_queued(mock_broker_t *mb);
/* Send CLOSE_PRODUCER (request_id -1, as the broker does when it unloads a topic) on each
 * connection where producer_id is registered, and forget it there. Returns the number of
 * connections it went to (0: no such producer). */
int mock_broker_close_producer(mock_broker_t *mb, uint64_t producer_id);
/* The broker's cluster was migrated (PIP-188): as Pulsar 4.0's Producer.topicMigrated does,
 * send TOPIC_MIGRATED(resource_type, url, url_tls; either may be NULL) and then
 * CLOSE_PRODUCER on each connection where producer_id is registered, and forget it there.
 * resource_type is a PULSAR__PROTO__COMMAND_TOPIC_MIGRATED__RESOURCE_TYPE__* value; for a
 * consumer the producer is neither told nor closed (only the TOPIC_MIGRATED goes out).
 * Returns the number of connections it went to. */
int mock_broker_topic_migrated(mock_broker_t *mb, uint64_t producer_id, int resource_type,
                               const char *url, const char *url_tls);

/* ---- receipt faults ---------------------------------------------------------------- */

typedef enum mock_receipt_mode {
    MOCK_RECEIPTS_NORMAL = 0, /* answer each SEND in order */
    MOCK_RECEIPTS_HOLD,       /* keep receipts until mock_broker_release_receipts */
    MOCK_RECEIPTS_REORDER,    /* answer SENDs in swapped pairs: 2nd, 1st, 4th, 3rd, ... */
    MOCK_RECEIPTS_SUPPRESS,   /* never answer (the SEND is still recorded) */
} mock_receipt_mode_t;

/* Leaving REORDER sends a receipt still waiting for its pair; leaving HOLD does not
 * release held receipts (call mock_broker_release_receipts). */
void mock_broker_set_receipt_mode(mock_broker_t *mb, mock_receipt_mode_t mode);
/* Delay every receipt by ms (0: none). Receipts never overtake one another. */
void mock_broker_set_receipt_delay(mock_broker_t *mb, unsigned ms);
/* Send every held receipt now, in arrival order, to connections still open. Returns how
 * many went out (receipts for closed connections are dropped). */
size_t mock_broker_release_receipts(mock_broker_t *mb);
/* The same for the oldest at_most held receipts only; the others stay held. */
size_t mock_broker_release_receipts_n(mock_broker_t *mb, size_t at_most);
/* The next `times` SENDs are answered SEND_ERROR(server_error) at once, bypassing the
 * receipt mode and delay (times < 0: always; 0: off). */
void mock_broker_fail_sends(mock_broker_t *mb, int server_error, int times);

/* ---- transactions ------------------------------------------------------------------ */

/* n transaction coordinators: PARTITIONED_METADATA of
 * persistent://pulsar/system/transaction_coordinator_assign answers n (other topics keep
 * mock_broker_set_partitions), and each partition's LOOKUP is a normal one. 0 (the
 * default) is a broker with transactions off: the topic has no partitions and every
 * transaction command gets ERROR(NotAllowed, "Transactions are not enabled."), as
 * ServerCnx.checkTransactionEnableAndSendError answers. With n > 0, as
 * ServerCnx and TransactionMetadataStoreService answer:
 *   TC_CLIENT_CONNECT   -> its response; TransactionCoordinatorNotFound for tc_id >= n
 *   NEW_TXN             -> txnid (most = tc_id, least = 0, 1, 2, ... over the broker), open
 *                          until txn_ttl_millis pass; TransactionCoordinatorNotFound for
 *                          tc_id >= n
 *   ADD_PARTITION_TO_TXN-> registered; TransactionNotFound for a transaction it does not
 *                          know or that has ended (the coordinator forgets an ended one)
 *   END_TXN             -> committed or aborted; TransactionNotFound as above
 *   SEND with txn ids   -> stored like any SEND (a stored message of an ended transaction
 *                          is never delivered), but SEND_ERROR(NotAllowedError,
 *                          "Transaction [(m,l)] has been ended. ...") when the transaction
 *                          had registered the SEND's topic partition and the coordinator's
 *                          low water mark passed it (it and every earlier transaction of
 *                          its coordinator ended), as TopicTransactionBuffer.
 *                          appendBufferToTxn refuses it.
 * A transaction whose ttl passed is aborted when the broker next looks at it (before each
 * transaction command or SEND), as the coordinator's timeout tracker does. */
void mock_broker_set_txn_coordinators(mock_broker_t *mb, uint32_t n);

typedef enum mock_txn_command {
    MOCK_TXN_TC_CONNECT = 0, /* TC_CLIENT_CONNECT_REQUEST */
    MOCK_TXN_NEW,            /* NEW_TXN */
    MOCK_TXN_ADD_PARTITION,  /* ADD_PARTITION_TO_TXN */
    MOCK_TXN_END,            /* END_TXN */
    MOCK_TXN_COMMAND_COUNT
} mock_txn_command_t;

/* The next `times` commands of this kind get their response with this ServerError and
 * message (NULL: "mock transaction failure") and change nothing (times < 0: always; 0:
 * off). E.g. PULSAR__PROTO__SERVER_ERROR__TransactionCoordinatorNotFound for a
 * coordinator that moved. */
void mock_broker_txn_fail(mock_broker_t *mb, mock_txn_command_t cmd, int server_error,
                          const char *message, int times);
/* The next `times` commands of this kind close their connection, unanswered and not
 * acted on (the broker went away mid-request). */
void mock_broker_txn_drop(mock_broker_t *mb, mock_txn_command_t cmd, int times);
/* The next `times` commands of this kind are counted but never answered nor acted on
 * (a coordinator that hangs): the client's operation timeout has to end them. */
void mock_broker_txn_ignore(mock_broker_t *mb, mock_txn_command_t cmd, int times);
/* Abort every open transaction now, as the coordinator's timeout tracker does when their
 * ttl passed (an event a test can rely on, where waiting for the ttl would need a sleep).
 * Returns how many. */
int mock_broker_txn_expire(mock_broker_t *mb);

typedef enum mock_txn_state {
    MOCK_TXN_OPEN = 0,
    MOCK_TXN_COMMITTED,
    MOCK_TXN_ABORTED,
} mock_txn_state_t;

#define MOCK_TXN_MAX_PARTITIONS 8
/* Transaction number `index` (0-based, in the order NEW_TXN began them). */
typedef struct mock_txn_info {
    uint64_t most, least;
    mock_txn_state_t state;
    bool timed_out;      /* aborted by its ttl or mock_broker_txn_expire */
    size_t n_partitions; /* registered, in order; names of the first ones copied */
    char partitions[MOCK_TXN_MAX_PARTITIONS][256];
} mock_txn_info_t;
bool mock_broker_get_txn(mock_broker_t *mb, size_t index, mock_txn_info_t *out);

/* ---- queries ----------------------------------------------------------------------- */

typedef enum mock_counter {
    MOCK_CONNECTIONS = 0,       /* connections accepted (refused ones included) */
    MOCK_OPEN_CONNECTIONS,      /* connections open now */
    MOCK_CONNECTS,              /* CONNECT commands */
    MOCK_PARTITION_METADATA,    /* PARTITIONED_METADATA commands */
    MOCK_LOOKUPS,               /* LOOKUP commands */
    MOCK_PRODUCERS,             /* PRODUCER commands (failed ones included) */
    MOCK_CLOSE_PRODUCERS,       /* CLOSE_PRODUCER commands from the client */
    MOCK_SENDS,                 /* SEND commands recorded */
    MOCK_RECEIPTS,              /* SEND_RECEIPTs written */
    MOCK_SEND_ERRORS,           /* SEND_ERRORs written */
    MOCK_HELD_RECEIPTS,         /* receipts held now (a gauge) */
    MOCK_PINGS,                 /* PINGs from the client */
    MOCK_PONGS,                 /* PONGs from the client */
    MOCK_PROTOCOL_ERRORS,       /* connections closed for a bad or oversized frame, or a
                               SEND for an unknown producer */
    MOCK_UNKNOWN_COMMANDS,      /* commands the mock does not handle */
    MOCK_AUTH_RESPONSES,        /* AUTH_RESPONSE commands from the client */
    MOCK_GET_OR_CREATE_SCHEMAS, /* GET_OR_CREATE_SCHEMA commands */
    MOCK_GET_SCHEMAS,           /* GET_SCHEMA commands */
    MOCK_QUEUED_PRODUCERS,      /* PRODUCER commands answered "not ready" (queued) */
    MOCK_TC_CONNECTS,           /* TC_CLIENT_CONNECT_REQUEST commands */
    MOCK_NEW_TXNS,              /* NEW_TXN commands (failed and dropped ones included) */
    MOCK_ADD_PARTITIONS,        /* ADD_PARTITION_TO_TXN commands (likewise) */
    MOCK_END_TXNS,              /* END_TXN commands (likewise) */
    MOCK_COUNTER_COUNT
} mock_counter_t;

uint64_t mock_broker_count(mock_broker_t *mb, mock_counter_t c);
/* Wait until counter c is at least `at_least`. Returns true on success, false on
 * timeout (timeout_ms < 0: wait forever). */
bool mock_broker_wait_count(mock_broker_t *mb, mock_counter_t c, uint64_t at_least, int timeout_ms);
/* Wait until counter c is at most `at_most` (for gauges such as MOCK_OPEN_CONNECTIONS). */
bool mock_broker_wait_count_at_most(mock_broker_t *mb, mock_counter_t c, uint64_t at_most,
                                    int timeout_ms);
/* Shorthand for mock_broker_wait_count(mb, MOCK_SENDS, n, timeout_ms). */
bool mock_broker_wait_sends(mock_broker_t *mb, size_t n, int timeout_ms);

/* The fields of the last CONNECT. Returns false when none arrived yet. */
typedef struct mock_connect_info {
    char client_version[128];
    int32_t protocol_version; /* -1 when the field was absent */
    bool has_auth_method_name;
    char auth_method_name[64];
    bool has_auth_data;
    char auth_data[4096]; /* NUL-terminated copy (truncated if longer) */
    size_t auth_data_len; /* the length on the wire */
    bool has_proxy_to_broker_url;
    char proxy_to_broker_url[300];
} mock_connect_info_t;
bool mock_broker_last_connect(mock_broker_t *mb, mock_connect_info_t *out);

/* The last AUTH_RESPONSE's method and data (NUL-terminated copies). False when none. */
typedef struct mock_auth_response {
    char auth_method_name[64];
    char auth_data[4096];
    size_t auth_data_len;
} mock_auth_response_t;
bool mock_broker_last_auth_response(mock_broker_t *mb, mock_auth_response_t *out);

/* The fields of the last LOOKUP command. Returns false when none arrived yet. */
typedef struct mock_lookup_info {
    char topic[256];
    bool authoritative;
    bool has_listener_name;
    char listener_name[128]; /* advertised_listener_name, as the client sent it */
} mock_lookup_info_t;
bool mock_broker_last_lookup(mock_broker_t *mb, mock_lookup_info_t *out);

#define MOCK_MAX_METADATA 8
/* The fields of the last PRODUCER command. Returns false when none arrived yet. */
typedef struct mock_producer_info {
    char topic[256];
    uint64_t producer_id;
    uint64_t request_id;
    bool has_producer_name;
    char producer_name[128]; /* as the client sent it */
    bool user_provided_producer_name;
    bool has_epoch;
    uint64_t epoch;
    bool has_schema;
    int schema_type; /* PULSAR__PROTO__SCHEMA__TYPE__* */
    char schema_name[128];
    uint8_t schema_data[4096]; /* truncated copy */
    size_t schema_data_len;    /* the length on the wire */
    size_t n_schema_properties;
    bool encrypted; /* CommandProducer.encrypted */
    bool has_access_mode;
    int access_mode; /* PULSAR__PROTO__PRODUCER_ACCESS_MODE__* */
    bool has_topic_epoch;
    uint64_t topic_epoch;
    size_t n_metadata; /* CommandProducer.metadata: the producer's properties */
    struct {
        char key[64], value[64]; /* truncated copies of the first MOCK_MAX_METADATA */
    } metadata[MOCK_MAX_METADATA];
    bool has_initial_subscription;
    char initial_subscription[128];
} mock_producer_info_t;
bool mock_broker_last_producer(mock_broker_t *mb, mock_producer_info_t *out);

/* One recorded SEND. A copy owned by the caller: free with mock_send_free. */
typedef struct mock_send {
    int connection; /* 1-based accept order (refused ones count too) */
    uint64_t producer_id;
    char *producer_name; /* registered by PRODUCER on that connection; NULL if not */
    uint64_t sequence_id;
    bool has_highest_sequence_id;
    uint64_t highest_sequence_id;
    int32_t num_messages; /* 1 when the field was absent, as in the protocol */
    bool is_chunk;
    bool has_payload; /* the frame carried magic + checksum + metadata */
    bool checksum_ok;
    bool persisted; /* stored: not SEND_ERRORed, not dropped as a duplicate */
    bool duplicate; /* sequence_id <= the highest accepted earlier from a
                                    producer of the same name */
    bool has_txn;   /* CommandSend carried txnid_most/least_bits */
    uint64_t txn_most, txn_least;
    bool txn_registered;   /* ... and the transaction had registered the producer's
                                    topic partition (ADD_PARTITION_TO_TXN) before it */
    uint8_t *metadata_raw; /* serialised MessageMetadata as received */
    size_t metadata_raw_len;
    Pulsar__Proto__MessageMetadata *metadata; /* unpacked; NULL if it did not parse */
    uint8_t *payload; /* the bytes after the metadata (maybe compressed/batch) */
    size_t payload_len;
} mock_send_t;

/* Copy out recorded SEND number `index` (0-based, arrival order). False if out of range
 * or out of memory; *out is then zeroed. */
bool mock_broker_get_send(mock_broker_t *mb, size_t index, mock_send_t *out);
void mock_send_free(mock_send_t *s);

#endif
