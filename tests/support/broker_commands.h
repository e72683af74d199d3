/* What a broker writes to a producer, framed: the encoder the test brokers share
 * (tests/mock/mock_broker.c, tests/fuzz/fake_broker.c and bench/null_broker.c compile it
 * in). Each function appends one frame to out, built with the library's own frame
 * encoder, and returns 0, or -1 when out of memory (out is then unchanged). Each broker
 * decides what to answer; this only says how it looks on the wire, once.
 *
 * Server errors are the protocol's ServerError values (PULSAR__PROTO__SERVER_ERROR__*).
 * No state: any thread, as long as out is its own. */
#ifndef PC_TEST_BROKER_COMMANDS_H
#define PC_TEST_BROKER_COMMANDS_H

#include <stdbool.h>
#include <stdint.h>

#include "PulsarApi.pb-c.h"
#include "common/buf.h"

/* The request id a broker puts on what it starts itself (Java's -1L on the wire). */
#define BC_BROKER_REQUEST_ID UINT64_MAX

/* A schema version as a broker writes it: 8 bytes, big-endian (LongSchemaVersion). */
#define BC_VERSION_LEN 8
void bc_version_bytes(int64_t version, uint8_t out[BC_VERSION_LEN]);

/* ---- the connection ---------------------------------------------------------------- */

int bc_connected(pc_buf_t *out, const char *server_version, int32_t protocol_version,
                 int32_t max_message_size);
int bc_ping(pc_buf_t *out);
int bc_pong(pc_buf_t *out);
/* The broker asks for fresh credentials (method "token"). */
int bc_auth_challenge(pc_buf_t *out, const char *server_version, const char *data);
/* AUTH_CHALLENGE with binary data of a method (a SASL token). */
int bc_auth_challenge_bytes(pc_buf_t *out, const char *server_version, const char *method,
                            const uint8_t *data, size_t len);
int bc_error(pc_buf_t *out, uint64_t request_id, int server_error, const char *message);
int bc_success(pc_buf_t *out, uint64_t request_id);

/* ---- lookups ----------------------------------------------------------------------- */

int bc_partitions(pc_buf_t *out, uint64_t request_id, uint32_t partitions);
/* The topic is served at url (url_tls for TLS clients; NULL: none given). */
int bc_lookup_connect(pc_buf_t *out, uint64_t request_id, const char *url, const char *url_tls,
                      bool proxy_through_service_url);
/* Ask again at url. */
int bc_lookup_redirect(pc_buf_t *out, uint64_t request_id, const char *url, const char *url_tls,
                       bool authoritative);
int bc_lookup_failed(pc_buf_t *out, uint64_t request_id, int server_error, const char *message);

/* ---- producers --------------------------------------------------------------------- */

/* schema_version NULL leaves it out; an empty one ({0, NULL}) is what a broker sends for a
 * topic without a schema. ready false is the broker's "queued" answer to a
 * WaitForExclusive producer while another holds the topic; topic_epoch < 0 leaves it out. */
int bc_producer_success(pc_buf_t *out, uint64_t request_id, const char *producer_name,
                        int64_t last_sequence_id, const ProtobufCBinaryData *schema_version,
                        bool ready, int64_t topic_epoch);
/* The broker closes the producer (request_id: BC_BROKER_REQUEST_ID when unasked). */
int bc_close_producer(pc_buf_t *out, uint64_t producer_id, uint64_t request_id);
/* The topic moved to another cluster (PIP-188): resource_type a
 * PULSAR__PROTO__COMMAND_TOPIC_MIGRATED__RESOURCE_TYPE__* value; either URL may be NULL. */
int bc_topic_migrated(pc_buf_t *out, uint64_t resource_id, int resource_type, const char *url,
                      const char *url_tls);
/* A receipt with its message id, as a broker always writes it: with the highest sequence
 * id it stored (the sequence id itself for a single message). */
int bc_receipt(pc_buf_t *out, uint64_t producer_id, uint64_t sequence_id,
               uint64_t highest_sequence_id, uint64_t ledger, uint64_t entry);
int bc_send_error(pc_buf_t *out, uint64_t producer_id, uint64_t sequence_id, int server_error,
                  const char *message);

/* ---- schemas ----------------------------------------------------------------------- */

/* GET_SCHEMA: the topic's schema and its version, or an error. */
int bc_get_schema(pc_buf_t *out, uint64_t request_id, const Pulsar__Proto__Schema *schema,
                  ProtobufCBinaryData version);
int bc_get_schema_error(pc_buf_t *out, uint64_t request_id, int server_error, const char *message);
/* GET_OR_CREATE_SCHEMA: the version of the producer's schema, or an error. */
int bc_schema_version(pc_buf_t *out, uint64_t request_id, ProtobufCBinaryData version);
int bc_schema_error(pc_buf_t *out, uint64_t request_id, int server_error, const char *message);

/* ---- the transaction coordinator --------------------------------------------------- */

/* The coordinator's answer to the request of `type` (PULSAR__PROTO__BASE_COMMAND__TYPE__
 * TC_CLIENT_CONNECT_REQUEST, NEW_TXN, ADD_PARTITION_TO_TXN or END_TXN): its *_RESPONSE
 * with the transaction's ids (ignored for TC_CLIENT_CONNECT), and server_error and
 * message when server_error >= 0. -1 for another type. */
int bc_txn_response(pc_buf_t *out, int type, uint64_t request_id, uint64_t most, uint64_t least,
                    int server_error, const char *message);

#endif
