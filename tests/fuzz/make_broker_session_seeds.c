/* Writes the seed corpus of fuzz_broker_session: one file per broker behaviour worth
 * starting from, in the input format of broker_session_format.h.
 *
 * The sessions follow what a Pulsar standalone broker does (and what the fault tests make
 * it do): receipts in order with real-looking message ids, receipts for batches, a broker
 * that unloads the topic, fails a write, redirects a lookup, refuses a producer for a
 * while, migrates the topic, asks for authentication, or simply drops the connection.
 * Schema sessions: producers with an AVRO or STRING schema and the versions a broker
 * gives them, messages with schemas of their own (GET_OR_CREATE_SCHEMA answered, refused,
 * left unanswered), and AUTO_PRODUCE producers fed the schemas a registry holds.
 * The raw-frame seeds carry the exact bytes such a broker writes, built with the
 * library's own frame encoder.
 *
 * Usage: make_broker_session_seeds DIR   (the checked-in corpus is
 * tests/fuzz/corpus/fuzz_broker_session; rerun it when the input format changes). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker_session_format.h"
#include "common/buf.h"
#include "wire/frame.h"

typedef struct seed {
    uint8_t b[4096];
    size_t n;
} seed_t;

static void put(seed_t *s, int n, ...)
{
    va_list ap;
    va_start(ap, n);
    for (int i = 0; i < n; i++) {
        if (s->n == sizeof s->b) {
            fprintf(stderr, "seed too long\n");
            exit(1);
        }
        s->b[s->n++] = (uint8_t)va_arg(ap, int);
    }
    va_end(ap);
}

static void start_schema(seed_t *s, int b0, int b1, int b2, int b3)
{
    s->n = 0;
    put(s, BS_SETUP_BYTES, b0, b1, b2, b3);
}

/* A producer without a schema (setup byte 3 is 0). */
static void start(seed_t *s, int b0, int b1, int b2)
{
    start_schema(s, b0, b1, b2, 0);
}

static const char *dir;

static void save(const seed_t *s, const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(s->b, 1, s->n, f) != s->n || fclose(f) != 0) {
        fprintf(stderr, "%s: %s\n", path, strerror(errno));
        exit(1);
    }
}

/* ---- operations --------------------------------------------------------------------- */

/* Sequence references: the oldest SEND not receipted yet, and the one after it. */
#define OLDEST 0x00
#define OLDEST_PLUS_ONE 0xa0
#define LATEST_REQUEST 0x00
#define BROKER_REQUEST 0xff

static void receipt(seed_t *s, int producer, int ledger, int entry)
{
    put(s, 6, BS_OP_CMD, BS_CMD_RECEIPT, producer, OLDEST, 3, ledger);
    put(s, 1, entry);
}

static void wait_events(seed_t *s, int n)
{
    while (n-- > 0)
        put(s, 1, BS_OP_WAIT_EVENT);
}

static void toggle(seed_t *s, bs_auto_t which)
{
    put(s, 2, BS_OP_AUTO, which);
}

/* Receipts from now on (for SENDs still to come, such as resends after a reconnect). */
static void settle(seed_t *s)
{
    toggle(s, BS_AUTO_RECEIPT);
    wait_events(s, 2);
    put(s, 1, BS_OP_SYNC);
}

/* Connections 0 and 1 go to the two service URL hosts (partition metadata, then the
 * lookup); 2 is the broker the producer registered with. */
static void hang_up_producer_conn(seed_t *s)
{
    put(s, 3, BS_OP_USE_CONN, 2, BS_OP_HANGUP);
}

/* A frame exactly as a broker writes it, as one RAW operation. */
static void raw(seed_t *s, const Pulsar__Proto__BaseCommand *cmd)
{
    pc_buf_t b;
    pc_buf_init(&b);
    if (pc_frame_encode_command(&b, cmd) != 0 || b.len > 255) {
        fprintf(stderr, "cannot encode a frame\n");
        exit(1);
    }
    put(s, 2, BS_OP_RAW, (int)b.len);
    for (size_t i = 0; i < b.len; i++)
        put(s, 1, b.data[i]);
    pc_buf_free(&b);
}

static void raw_receipt(seed_t *s, uint64_t producer_id, uint64_t sequence_id, uint64_t ledger,
                        uint64_t entry)
{
    Pulsar__Proto__MessageIdData id = PULSAR__PROTO__MESSAGE_ID_DATA__INIT;
    Pulsar__Proto__CommandSendReceipt r = PULSAR__PROTO__COMMAND_SEND_RECEIPT__INIT;
    Pulsar__Proto__BaseCommand cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    id.ledgerid = ledger;
    id.entryid = entry;
    r.producer_id = producer_id;
    r.sequence_id = sequence_id;
    r.message_id = &id;
    r.has_highest_sequence_id = 1;
    r.highest_sequence_id = sequence_id;
    cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__SEND_RECEIPT;
    cmd.send_receipt = &r;
    raw(s, &cmd);
}

/* ---- the seeds ---------------------------------------------------------------------- */

static void receipts_in_order(void)
{
    seed_t s;
    start(&s, 0x00, 0x04, 0x00); /* no batching, 4 messages */
    for (int i = 0; i < 4; i++)
        receipt(&s, 0, 581, i);
    put(&s, 2, BS_OP_SEND, 0x01);
    receipt(&s, 0, 581, 4);
    receipt(&s, 0, 581, 5);
    save(&s, "receipts_in_order");
}

static void batch_receipts(void)
{
    seed_t s;
    start(&s, 0x01, 0x08, 0x00); /* batching, 8 messages */
    for (int i = 0; i < 3; i++)
        put(&s, 7, BS_OP_CMD, BS_CMD_RECEIPT, 0, 0xc0 /* highest of the batch */, 3, 12, i);
    put(&s, 2, BS_OP_SEND, 0x0b /* 4 keyed messages */);
    settle(&s);
    save(&s, "batch_receipts");
}

static void send_error_then_resend(void)
{
    seed_t s;
    start(&s, 0x00, 0x03, 0x00);
    put(&s, 5, BS_OP_CMD, BS_CMD_SEND_ERROR, 0, OLDEST, 2 /* PersistenceError */);
    settle(&s);
    save(&s, "send_error_then_resend");
}

static void broker_closes_producer(void)
{
    seed_t s;
    start(&s, 0x40, 0x03, 0x00); /* fixed producer name, as deduplication needs */
    put(&s, 4, BS_OP_CMD, BS_CMD_CLOSE_PRODUCER, 0, BROKER_REQUEST);
    settle(&s);
    save(&s, "broker_closes_producer");
}

static void connection_dropped(void)
{
    seed_t s;
    start(&s, 0x01, 0x05, 0x00);
    hang_up_producer_conn(&s);
    settle(&s);
    put(&s, 2, BS_OP_SEND, 0x03);
    put(&s, 1, BS_OP_SYNC);
    save(&s, "connection_dropped");
}

static void lookup_redirect_on_reconnect(void)
{
    seed_t s;
    start(&s, 0x00, 0x02, 0x00);
    toggle(&s, BS_AUTO_LOOKUP);
    hang_up_producer_conn(&s);
    wait_events(&s, 1);
    put(&s, 5, BS_OP_CMD, BS_CMD_LOOKUP, LATEST_REQUEST, 0 /* Redirect */, 1 | 1 << 3);
    wait_events(&s, 2);
    put(&s, 5, BS_OP_CMD, BS_CMD_LOOKUP, LATEST_REQUEST, 1 /* Connect */, 1);
    settle(&s);
    save(&s, "lookup_redirect_on_reconnect");
}

static void lookup_fails_on_reconnect(void)
{
    seed_t s;
    start(&s, 0x00, 0x02, 0x00);
    toggle(&s, BS_AUTO_LOOKUP);
    hang_up_producer_conn(&s);
    wait_events(&s, 1);
    put(&s, 6, BS_OP_CMD, BS_CMD_LOOKUP, LATEST_REQUEST, 2 /* Failed */, 1 << 2,
        6 /* ServiceNotReady */);
    wait_events(&s, 1);
    toggle(&s, BS_AUTO_LOOKUP);
    settle(&s);
    save(&s, "lookup_fails_on_reconnect");
}

static void producer_refused_then_accepted(void)
{
    seed_t s;
    start(&s, 0x00, 0x03, 0x00);
    toggle(&s, BS_AUTO_PRODUCER);
    hang_up_producer_conn(&s);
    wait_events(&s, 3);
    put(&s, 5, BS_OP_CMD, BS_CMD_ERROR, LATEST_REQUEST, 16 /* ProducerBusy */, 1);
    wait_events(&s, 3);
    /* Queued for exclusive access first (producer_ready false), then ready. */
    put(&s, 5, BS_OP_CMD, BS_CMD_PRODUCER_SUCCESS, LATEST_REQUEST, 0x07, 1);
    put(&s, 5, BS_OP_CMD, BS_CMD_PRODUCER_SUCCESS, LATEST_REQUEST, 0x03, 1);
    settle(&s);
    save(&s, "producer_refused_then_accepted");
}

static void topic_terminated(void)
{
    seed_t s;
    start(&s, 0x00, 0x03, 0x00);
    toggle(&s, BS_AUTO_PRODUCER);
    put(&s, 5, BS_OP_CMD, BS_CMD_SEND_ERROR, 0, OLDEST, 15 /* TopicTerminatedError */);
    wait_events(&s, 3);
    put(&s, 5, BS_OP_CMD, BS_CMD_ERROR, LATEST_REQUEST, 15, 1);
    put(&s, 2, BS_OP_SEND, 0x00);
    save(&s, "topic_terminated");
}

static void receipt_out_of_order(void)
{
    seed_t s;
    start(&s, 0x00, 0x03, 0x00);
    put(&s, 6, BS_OP_CMD, BS_CMD_RECEIPT, 0, OLDEST_PLUS_ONE, 1, 3);
    put(&s, 1, 0);
    settle(&s);
    save(&s, "receipt_out_of_order");
}

static void send_timeout_late_receipt(void)
{
    seed_t s;
    start(&s, 0x00, 0x13, 0x00); /* 3 messages, sendTimeoutMs 10 */
    put(&s, 2, BS_OP_WAIT, 15);
    receipt(&s, 0, 9, 0);
    put(&s, 2, BS_OP_SEND, 0x00);
    settle(&s);
    save(&s, "send_timeout_late_receipt");
}

static void application_closes(void)
{
    seed_t s;
    start(&s, 0x00, 0x02, 0x40); /* producer_free at the end */
    put(&s, 2, BS_OP_APP, 0);    /* flush */
    put(&s, 2, BS_OP_APP, 1);    /* close */
    settle(&s);
    put(&s, 2, BS_OP_SEND, 0x00);
    save(&s, "application_closes");
}

static void close_refused(void)
{
    seed_t s;
    start(&s, 0x00, 0x01, 0x00);
    toggle(&s, BS_AUTO_CLOSE);
    toggle(&s, BS_AUTO_RECEIPT);
    put(&s, 2, BS_OP_APP, 1);
    wait_events(&s, 1);
    put(&s, 5, BS_OP_CMD, BS_CMD_ERROR, LATEST_REQUEST, 0 /* UnknownError */, 0);
    put(&s, 2, BS_OP_APP, 2);
    save(&s, "close_refused");
}

static void partitioned_topic(void)
{
    seed_t s;
    start(&s, 0x08, 0x06, 0x00); /* 3 partitions, 6 messages */
    for (int p = 0; p < 3; p++)
        receipt(&s, p, 100 + p, 0);
    put(&s, 2, BS_OP_SEND, 0x0b);
    settle(&s);
    save(&s, "partitioned_topic");
}

static void chunked_messages(void)
{
    seed_t s;
    start(&s, 0x02, 0x02, 0x0e); /* chunking, max 1024, 3000-byte payloads */
    for (int i = 0; i < 4; i++)
        receipt(&s, 0, 77, i);
    settle(&s);
    save(&s, "chunked_messages");
}

static void setup_redirect_proxy_retry(void)
{
    seed_t s;
    start(&s, 0x31, 0xc3, 0x81); /* redirect, proxy, retryable PRODUCER error, last id 41 */
    settle(&s);
    save(&s, "setup_redirect_proxy_retry");
}

static void topic_migrated(void)
{
    seed_t s;
    start(&s, 0x00, 0x02, 0x00);
    put(&s, 5, BS_OP_CMD, BS_CMD_TOPIC_MIGRATED, 0, 0 /* Producer */, 1);
    settle(&s);
    save(&s, "topic_migrated");
}

/* Migrated with messages pending (the producer follows, resends them there), then told
 * again with addresses it must not follow (unparsable, an http:// one, absent), and a
 * consumer's migration. */
static void topic_migrated_pending_and_refused(void)
{
    seed_t s;
    start(&s, 0x40, 0x05, 0x00);
    put(&s, 5, BS_OP_CMD, BS_CMD_TOPIC_MIGRATED, 0, 0 /* Producer */, 1);
    settle(&s);
    put(&s, 5, BS_OP_CMD, BS_CMD_TOPIC_MIGRATED, 0, 0, 1 | 1 << 1 | 3 << 3);
    settle(&s);
    put(&s, 5, BS_OP_CMD, BS_CMD_TOPIC_MIGRATED, 0, 0, 1 | 3 << 1 | 1 << 3);
    settle(&s);
    put(&s, 5, BS_OP_CMD, BS_CMD_TOPIC_MIGRATED, 0, 0, 1 | 2 << 1 | 2 << 3);
    settle(&s);
    put(&s, 5, BS_OP_CMD, BS_CMD_TOPIC_MIGRATED, 0, 1 /* Consumer */, 1);
    settle(&s);
    save(&s, "topic_migrated_pending_and_refused");
}

static void auth_challenge(void)
{
    seed_t s;
    start(&s, 0x00, 0x02, 0x00);
    put(&s, 2, BS_OP_CMD, BS_CMD_AUTH_CHALLENGE);
    settle(&s);
    save(&s, "auth_challenge");
}

static void broker_pings_and_repeats(void)
{
    seed_t s;
    start(&s, 0x00, 0x02, 0x00);
    put(&s, 2, BS_OP_CMD, BS_CMD_PING);
    put(&s, 2, BS_OP_CMD, BS_CMD_PONG);
    put(&s, 4, BS_OP_CMD, BS_CMD_CONNECTED, 21, 1);
    put(&s, 3, BS_OP_CMD, BS_CMD_SUCCESS, 0x85);
    put(&s, 5, BS_OP_CMD, BS_CMD_PARTITIONS, LATEST_REQUEST, 4, 0);
    put(&s, 3, BS_OP_CMD, BS_CMD_BARE, 6 /* SEND_RECEIPT without its body */);
    receipt(&s, 0, 3, 0);
    save(&s, "broker_pings_and_repeats");
}

static void reconnect_refused(void)
{
    seed_t s;
    start(&s, 0x00, 0x03, 0x00);
    put(&s, 2, BS_OP_REFUSE, 1); /* connects fail */
    hang_up_producer_conn(&s);
    put(&s, 2, BS_OP_WAIT, 4);
    put(&s, 2, BS_OP_REFUSE, 2); /* connects are hung up at once */
    put(&s, 2, BS_OP_WAIT, 4);
    put(&s, 2, BS_OP_REFUSE, 0); /* accepted again */
    settle(&s);
    save(&s, "reconnect_refused");
}

static void raw_broker_frames(void)
{
    seed_t s;
    start(&s, 0x00, 0x03, 0x00); /* producer id 1, sequence ids 0, 1, 2 */
    put(&s, 2, BS_OP_USE_CONN, 2);
    raw_receipt(&s, 1, 0, 581, 0);
    raw_receipt(&s, 1, 1, 581, 1);
    /* The last receipt arrives in two pieces. */
    seed_t r;
    r.n = 0;
    raw_receipt(&r, 1, 2, 581, 2);
    put(&s, 2, BS_OP_RAW, 5);
    for (size_t i = 2; i < 7; i++)
        put(&s, 1, r.b[i]);
    put(&s, 2, BS_OP_RAW, (int)(r.n - 7));
    for (size_t i = 7; i < r.n; i++)
        put(&s, 1, r.b[i]);
    save(&s, "raw_broker_frames");
}

/* ---- schemas ------------------------------------------------------------------------- */

/* Setup byte 3. */
#define SCHEMA_AVRO 0x01
#define SCHEMA_STRING 0x02
#define SCHEMA_AUTO 0x03
#define VERSION_8 (1 << 2)
#define VERSION_1 (2 << 2)
#define VERSION_65 (3 << 2)
#define TOPIC_AVRO (0 << 4)
#define TOPIC_KV (1 << 4)
#define TOPIC_NONE (2 << 4)
#define TOPIC_FROM_INPUT (3 << 4)
#define NO_VALIDATION (1 << 6)
/* SEND flags. */
#define OWN_SCHEMAS 0x20
#define BAD_PAYLOAD 0x40
#define INCOMPATIBLE_SCHEMA 18

static void put_string(seed_t *s, const char *str)
{
    put(s, 1, (int)strlen(str));
    for (const char *c = str; *c; c++)
        put(s, 1, *c);
}

/* A Schema message as spec_read reads it. */
static void put_schema(seed_t *s, int type, const char *definition, int n_props,
                       const char *const *props)
{
    put(s, 1, type);
    put_string(s, definition);
    put(s, 1, n_props);
    for (int i = 0; i < 2 * n_props; i++)
        put_string(s, props[i]);
}

static void schema_producer(void)
{
    seed_t s;
    start_schema(&s, 0x00, 0x03, 0x04, SCHEMA_AVRO | VERSION_8); /* 100-byte values */
    for (int i = 0; i < 3; i++)
        receipt(&s, 0, 900, i);
    put(&s, 2, BS_OP_SEND, 0x01);
    put(&s, 2, BS_OP_SEND, BAD_PAYLOAD); /* refused at send */
    settle(&s);
    save(&s, "schema_avro_producer");
}

static void schema_batched_reconnect(void)
{
    seed_t s;
    start_schema(&s, 0x01, 0x05, 0x00, SCHEMA_STRING | VERSION_1);
    hang_up_producer_conn(&s);
    settle(&s);
    put(&s, 2, BS_OP_SEND, 0x0b);
    put(&s, 1, BS_OP_SYNC);
    save(&s, "schema_string_batched_reconnect");
}

static void schema_version_too_long(void)
{
    seed_t s;
    start_schema(&s, 0x00, 0x02, 0x00, SCHEMA_AVRO | VERSION_65);
    settle(&s);
    save(&s, "schema_version_too_long");
}

static void schema_versions_on_reregistration(void)
{
    seed_t s;
    start_schema(&s, 0x00, 0x02, 0x00, SCHEMA_AVRO | VERSION_8);
    toggle(&s, BS_AUTO_PRODUCER);
    hang_up_producer_conn(&s);
    wait_events(&s, 3);
    /* Not ready yet with an odd 1-byte version, then ready with 65 bytes (too long). */
    put(&s, 5, BS_OP_CMD, BS_CMD_PRODUCER_SUCCESS, LATEST_REQUEST, 0x06 | 2 << 3, 1);
    put(&s, 4, BS_OP_CMD, BS_CMD_PRODUCER_SUCCESS, LATEST_REQUEST, 3 << 3);
    wait_events(&s, 3);
    toggle(&s, BS_AUTO_PRODUCER);
    settle(&s);
    save(&s, "schema_versions_on_reregistration");
}

static void multi_schema_auto(void)
{
    seed_t s;
    start_schema(&s, 0x01, 0x02, 0x00, SCHEMA_AVRO | VERSION_8); /* batching */
    put(&s, 2, BS_OP_SEND, OWN_SCHEMAS | 0x03);                  /* JSON, INT64, JSON, INT64 */
    put(&s, 2, BS_OP_SEND, 0x01);
    put(&s, 2, BS_OP_SEND, OWN_SCHEMAS | BAD_PAYLOAD);
    settle(&s);
    save(&s, "multi_schema_auto");
}

static void multi_schema_answered(void)
{
    seed_t s;
    start_schema(&s, 0x00, 0x01, 0x00, SCHEMA_STRING | VERSION_8);
    toggle(&s, BS_AUTO_SCHEMA);
    put(&s, 2, BS_OP_SEND, OWN_SCHEMAS | 0x01); /* a JSON and an INT64 message */
    wait_events(&s, 2);
    /* The INT64 schema is refused, the JSON one gets a version. */
    put(&s, 5, BS_OP_CMD, BS_CMD_SCHEMA_VERSION, LATEST_REQUEST, 1, INCOMPATIBLE_SCHEMA);
    put(&s, 4, BS_OP_CMD, BS_CMD_SCHEMA_VERSION, 1, 0);
    put(&s, 2, BS_OP_SEND, OWN_SCHEMAS | 0x01);
    wait_events(&s, 2);
    /* A version missing, then an empty one, then one too long. */
    put(&s, 4, BS_OP_CMD, BS_CMD_SCHEMA_VERSION, LATEST_REQUEST, 1 << 1);
    put(&s, 4, BS_OP_CMD, BS_CMD_SCHEMA_VERSION, LATEST_REQUEST, 2 << 1);
    put(&s, 4, BS_OP_CMD, BS_CMD_SCHEMA_VERSION, LATEST_REQUEST, 3 << 1);
    toggle(&s, BS_AUTO_SCHEMA);
    settle(&s);
    save(&s, "multi_schema_answered");
}

static void multi_schema_unanswered(void)
{
    seed_t s;
    start_schema(&s, 0x00, 0x01, 0x00, SCHEMA_AVRO | VERSION_8);
    toggle(&s, BS_AUTO_SCHEMA);
    put(&s, 2, BS_OP_SEND, OWN_SCHEMAS | 0x02);
    for (int i = 0; i < 4; i++)
        put(&s, 2, BS_OP_WAIT, 31); /* past operationTimeoutMs (checked every 100 ms) */
    hang_up_producer_conn(&s);
    settle(&s);
    save(&s, "multi_schema_unanswered");
}

static void auto_produce(int topic, const char *name)
{
    seed_t s;
    start_schema(&s, 0x00, 0x02, 0x00, SCHEMA_AUTO | VERSION_8 | topic);
    put(&s, 2, BS_OP_SEND, 0x01);
    put(&s, 2, BS_OP_SEND, BAD_PAYLOAD);
    settle(&s);
    save(&s, name);
}

static void auto_produce_from_input(void)
{
    static const char *const props[] = { "__alwaysAllowNull", "true" };
    seed_t s;
    /* An Avro schema the payloads do not match, checks off: they go out anyway. */
    start_schema(&s, 0x08, 0x02, 0x00, SCHEMA_AUTO | VERSION_8 | TOPIC_FROM_INPUT | NO_VALIDATION);
    put_schema(&s, 4, "{\"type\":\"array\",\"items\":\"long\"}", 1, props);
    settle(&s);
    put(&s, 2, BS_OP_SEND, 0x03);
    save(&s, "auto_produce_avro_from_input_unchecked");
    /* A KeyValue SEPARATED schema whose value is a STRING: raw 100-byte payloads are not
     * UTF-8 and fail the check. */
    static const char *const kv_props[] = { "kv.encoding.type", "SEPARATED", "value.schema.type",
                                            "STRING" };
    start_schema(&s, 0x00, 0x02, 0x04, SCHEMA_AUTO | TOPIC_FROM_INPUT);
    put(&s, 1, 15);
    put(&s, 9, 8, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff);
    put(&s, 1, 2);
    for (int i = 0; i < 4; i++)
        put_string(&s, kv_props[i]);
    put(&s, 2, BS_OP_SEND, 0x00);
    settle(&s);
    save(&s, "auto_produce_kv_from_input");
}

static void stray_schema_answers(void)
{
    seed_t s;
    start_schema(&s, 0x00, 0x01, 0x00, SCHEMA_AVRO | VERSION_8);
    /* Answers to requests never made, one with a schema. */
    put(&s, 4, BS_OP_CMD, BS_CMD_GET_SCHEMA, 0x85, 2);
    put_schema(&s, 2, "{}", 0, NULL);
    put(&s, 4, BS_OP_CMD, BS_CMD_SCHEMA_VERSION, 0x86, 0);
    put(&s, 4, BS_OP_CMD, BS_CMD_GET_SCHEMA, LATEST_REQUEST, 1);
    put(&s, 1, 11);
    settle(&s);
    save(&s, "stray_schema_answers");
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    dir = argv[1];
    receipts_in_order();
    batch_receipts();
    send_error_then_resend();
    broker_closes_producer();
    connection_dropped();
    lookup_redirect_on_reconnect();
    lookup_fails_on_reconnect();
    producer_refused_then_accepted();
    topic_terminated();
    receipt_out_of_order();
    send_timeout_late_receipt();
    application_closes();
    close_refused();
    partitioned_topic();
    chunked_messages();
    setup_redirect_proxy_retry();
    topic_migrated();
    topic_migrated_pending_and_refused();
    auth_challenge();
    broker_pings_and_repeats();
    reconnect_refused();
    raw_broker_frames();
    schema_producer();
    schema_batched_reconnect();
    schema_version_too_long();
    schema_versions_on_reregistration();
    multi_schema_auto();
    multi_schema_answered();
    multi_schema_unanswered();
    auto_produce(TOPIC_AVRO, "auto_produce_avro");
    auto_produce(TOPIC_KV, "auto_produce_kv");
    auto_produce(TOPIC_NONE, "auto_produce_no_schema");
    auto_produce_from_input();
    stray_schema_answers();
    return 0;
}
