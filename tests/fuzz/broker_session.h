/* A client with messages in flight, played against the fake broker by a program read
 * from fuzz input (format: broker_session_format.h). Shared by the fuzz targets that
 * play a broker session: fuzz_broker_session (plain sockets) and fuzz_tls_session (the
 * same session under TLS, plus damage to the TLS layer itself).
 *
 * The client's loop runs in lockstep with the program (lockstep.h) on a virtual clock, so
 * an input always does the same thing, and its waits cost no real time.
 *
 * A target calls bs_start, then bs_run_op for each operation while bs_running, then
 * bs_finish, which destroys the client and checks the callbacks (abort on a violation).
 *
 * FUZZ_BROKER_SESSION_LOG=1 in the environment prints the client's log (debug level) and
 * how each message ended to stderr, to follow what a reproducer does. */
#ifndef PC_FUZZ_BROKER_SESSION_H
#define PC_FUZZ_BROKER_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "broker_session_format.h"
#include "fake_broker.h"
#include "pulsarc/pulsarc.h"

#define BS_PROGRAM_BUDGET_MS 200 /* virtual time the program may let pass */
#define BS_MAX_MESSAGES 128
#define BS_MAX_DONES 16

typedef struct input {
    const uint8_t *p;
    size_t n;
} input_t;

/* The next input byte; past the end every argument reads as 0. */
static inline uint8_t bs_next_byte(input_t *in)
{
    if (in->n == 0)
        return 0;
    in->n--;
    return *in->p++;
}

typedef struct outcome {
    bool accepted;
    int calls;
    pulsarc_result res; /* of the first call, for the log */
    const char *what;
    int *callbacks; /* the session's count of every callback */
} outcome_t;

/* A Schema message for a GET_SCHEMA answer, with room for what it points at: read from
 * the input (setup byte 3, BS_CMD_GET_SCHEMA: up to 3 properties) or copied from one of
 * the library's schemas (a KeyValue one has 7). */
#define BS_SCHEMA_PROPS 8
typedef struct bs_schema_spec {
    Pulsar__Proto__Schema schema;
    Pulsar__Proto__KeyValue kvs[BS_SCHEMA_PROPS];
    Pulsar__Proto__KeyValue *ptrs[BS_SCHEMA_PROPS];
    char name[32];
    uint8_t data[256];
    char keys[BS_SCHEMA_PROPS][256];
    char values[BS_SCHEMA_PROPS][256];
} bs_schema_spec_t;

/* What a session's payloads look like, so that they pass the schema they go with. */
typedef enum bs_payload_kind {
    BS_PAYLOAD_RAW,
    BS_PAYLOAD_AVRO, /* a record of one bytes field */
    BS_PAYLOAD_STRING,
    BS_PAYLOAD_KV, /* INLINE: STRING key, INT32 value */
    BS_PAYLOAD_JSON,
    BS_PAYLOAD_INT64,
    BS_PAYLOAD_BAD, /* passes no check but BYTES's */
    BS_PAYLOAD_KINDS
} bs_payload_kind_t;

typedef struct session {
    fake_broker_t *fb;
    pulsarc_client_t *client;
    pulsarc_producer_t *producer; /* NULL when creation failed or after producer_free */
    pulsarc_message_t *msg;
    unsigned payload_size;          /* setup byte 2's choice of payload size (0-3) */
    bs_payload_kind_t payload_kind; /* of messages without a schema of their own */
    bs_schema_spec_t topic_schema;  /* the GET_SCHEMA answer read from the input */
    bs_schema_spec_t answer_schema; /* scratch for BS_CMD_GET_SCHEMA */
    bool tls;                       /* the broker answers with TLS addresses */
    bool free_before_destroy;       /* else after: a handle outlives its client */
    uint64_t budget_end;            /* virtual ms when the program must stop serving */
    int current;                    /* connection the program writes to, -1: none */

    outcome_t msgs[BS_MAX_MESSAGES];
    int n_msgs;
    outcome_t dones[BS_MAX_DONES];
    int n_dones;
    int callbacks;
} session_t;

/* What differs between targets: how the client reaches the broker. */
typedef struct bs_options {
    const char *service_url;
    const char *trust_pem;           /* CA the client trusts (TLS), or NULL */
    const fb_transport_t *transport; /* the broker's layer under the frames, or NULL */
    void *transport_ctx;
} bs_options_t;

/* Once per process (LLVMFuzzerInitialize), with what stays the same for every input. */
void bs_init(const bs_options_t *opt);
/* Read the setup bytes, create the broker, the client and the producer and send the
 * setup's messages. False when out of resources (still call bs_finish). */
bool bs_start(session_t *s, input_t *in);
/* Whether the program goes on: input left and serving budget left. */
bool bs_running(const session_t *s, const input_t *in);
/* The connection operations write to (the first open one when the current closed). */
int bs_current(session_t *s);
/* Run operation op (< BS_OP_COUNT) with its arguments from in. */
void bs_run_op(session_t *s, bs_op_t op, input_t *in);
/* A deadline ms from now, capped by the program's budget. */
uint64_t bs_within_budget(const session_t *s, uint64_t ms);
/* Let the client handle everything written and called so far (fb_settle). */
void bs_settle(session_t *s);
/* Let the client answer everything written, destroy it, free the broker and check that
 * every accepted message, flush and close was called back exactly once. */
void bs_finish(session_t *s);

#endif
