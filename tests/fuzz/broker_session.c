/* The broker session program shared by the session fuzz targets: see broker_session.h.
 *
 * The setup bytes configure the client, the producer and the broker's automatic answers;
 * the broker (fake_broker.c, over socketpairs: no network; it takes turns with the
 * client's loop, lockstep.h) then answers the client's CONNECT, lookups and PRODUCER so
 * that the producer registers, and the setup's messages are sent and left waiting for
 * receipts. Then the program plays the broker: framed
 * commands built from the input (receipts for the SENDs it saw, errors and answers for
 * the requests it saw, CLOSE_PRODUCER, redirects, ...), raw bytes, hang-ups, refused
 * reconnects, waits that let timers fire, and the application's own sends, flushes and
 * closes in between.
 *
 * Checked: no crash and no leak (ASan, LSan, UBSan); every frame the client writes parses;
 * an AUTO_PRODUCE producer registers exactly the topic's schema;
 * every accepted message and every accepted flush or close is called back exactly once
 * (a second call aborts when it happens; a missing one, or a call for something not
 * accepted, once the client is destroyed); a success comes with a message id.
 *
 * Time is virtual (virtual_clock.h): it passes only where the program waits, jumping from
 * one of the client's timers to the next, and each input starts at the same instant. The
 * client's timeouts and backoff are short, so that they fire within an input, and the
 * program's waits share BS_PROGRAM_BUDGET_MS. */
#include "broker_session.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/test_seams.h"
#include "common/clock.h"
#include "fuzz_check.h"
#include "lockstep.h"
#include "net/tls.h"
#include "virtual_clock.h"

#define TOPIC "persistent://public/default/fuzz"
#define BLOCK_LIMIT_MS 3000 /* creation ends by itself well before (operationTimeoutMs) */
#define SEND_SETTLE_MS 50   /* for the setup's messages to reach the broker */
#define EVENT_LIMIT_MS 24   /* a reconnect (backoff at most 16 ms) shows by then */
#define MAX_PAYLOAD 3000

#define CHECK(cond, ...) FUZZ_CHECK("broker session", cond, __VA_ARGS__)

#define next_byte bs_next_byte
#define MAX_MESSAGES BS_MAX_MESSAGES
#define MAX_DONES BS_MAX_DONES

/* ---- callbacks: exactly one per accepted message, flush and close ------------------- */

static void called(outcome_t *o, pulsarc_result res)
{
    int n = ++o->calls;
    CHECK(n == 1, "%s called back %d times", o->what, n);
    o->res = res;
    (*o->callbacks)++;
}

static void on_sent(pulsarc_producer_t *p, pulsarc_result res, const pulsarc_message_id_t *id,
                    void *ctx)
{
    called(ctx, res);
    CHECK(res != PULSARC_OK || id, "a message succeeded without a message id");
}

static void on_done(pulsarc_producer_t *p, pulsarc_result res, void *ctx)
{
    called(ctx, res);
}

/* Format every log line (formatting is code under test too) and print nothing. */
static void discard_log(pulsarc_log_level level, const char *file, int line, const char *message,
                        void *ctx)
{
}

static uint8_t payload[MAX_PAYLOAD];

/* ---- schemas and payloads that match them ------------------------------------------- */

static const char avro_def[] = "{\"type\":\"record\",\"name\":\"Blob\",\"namespace\":\"fuzz\","
                               "\"fields\":[{\"name\":\"b\",\"type\":\"bytes\"}]}";
static const char json_def[] = "{\"type\":\"record\",\"name\":\"Doc\",\"fields\":"
                               "[{\"name\":\"s\",\"type\":\"string\"}]}";

/* Made once (bs_init) and kept for the process. */
static pulsarc_schema_t *avro_schema, *string_schema, *auto_schema;
static pulsarc_schema_t *own_schemas[2]; /* messages' own: JSON, INT64 */
static const bs_payload_kind_t own_kinds[2] = { BS_PAYLOAD_JSON, BS_PAYLOAD_INT64 };
static bs_schema_spec_t topic_avro, topic_kv; /* automatic GET_SCHEMA answers */

/* One payload per kind for each payload size a session may use (setup byte 2), made
 * once: the loops that fill them are instrumented code, not worth running per input. */
#define PAYLOAD_SIZES 4
static const size_t payload_sizes[PAYLOAD_SIZES] = { 8, 100, 700, MAX_PAYLOAD };
static uint8_t payload_table[PAYLOAD_SIZES][BS_PAYLOAD_KINDS][MAX_PAYLOAD + 16];
static size_t payload_len_table[PAYLOAD_SIZES][BS_PAYLOAD_KINDS];

static void make_payloads(unsigned size)
{
    uint8_t(*payloads)[MAX_PAYLOAD + 16] = payload_table[size];
    size_t *payload_lens = payload_len_table[size];
    size_t n = payload_sizes[size];
    uint8_t *p;
    memcpy(payloads[BS_PAYLOAD_RAW], payload, n);
    payload_lens[BS_PAYLOAD_RAW] = n;
    /* Avro bytes: zigzag varint length, then the bytes. */
    p = payloads[BS_PAYLOAD_AVRO];
    for (uint64_t v = 2 * (uint64_t)n;; v >>= 7) {
        *p++ = (uint8_t)(v & 0x7f) | (v >= 0x80 ? 0x80 : 0);
        if (v < 0x80)
            break;
    }
    memcpy(p, payload, n);
    payload_lens[BS_PAYLOAD_AVRO] = (size_t)(p - payloads[BS_PAYLOAD_AVRO]) + n;
    for (size_t i = 0; i < n; i++)
        payloads[BS_PAYLOAD_STRING][i] = (uint8_t)('a' + i % 26);
    payload_lens[BS_PAYLOAD_STRING] = n;
    memcpy(payloads[BS_PAYLOAD_KV], "\0\0\0\1k\0\0\0\4\0\0\0\x2a", 13);
    payload_lens[BS_PAYLOAD_KV] = 13;
    p = payloads[BS_PAYLOAD_JSON];
    p[0] = '{';
    memcpy(p + 1, "\"s\":\"", 5);
    memset(p + 6, 'j', n);
    memcpy(p + 6 + n, "\"}", 2);
    payload_lens[BS_PAYLOAD_JSON] = n + 8;
    memcpy(payloads[BS_PAYLOAD_INT64], "\0\0\0\0\0\0\1\2", 8);
    payload_lens[BS_PAYLOAD_INT64] = 8;
    memcpy(payloads[BS_PAYLOAD_BAD], "\xff\xfe", 2);
    payload_lens[BS_PAYLOAD_BAD] = 2;
}

/* Point spec's Schema message at its own buffers, filled by the caller. */
static void spec_link(bs_schema_spec_t *spec, int type, size_t data_len, size_t n_props)
{
    pulsar__proto__schema__init(&spec->schema);
    spec->schema.name = spec->name;
    spec->schema.type = (Pulsar__Proto__Schema__Type)type;
    spec->schema.schema_data.data = spec->data;
    spec->schema.schema_data.len = data_len;
    for (size_t i = 0; i < n_props; i++) {
        pulsar__proto__key_value__init(&spec->kvs[i]);
        spec->kvs[i].key = spec->keys[i];
        spec->kvs[i].value = spec->values[i];
        spec->ptrs[i] = &spec->kvs[i];
    }
    spec->schema.n_properties = n_props;
    spec->schema.properties = spec->ptrs;
}

/* A schema as a registry would hand it out (the library's own layout of it). */
static void spec_from(bs_schema_spec_t *spec, const pulsarc_schema_t *s)
{
    size_t len, n = pulsarc_schema_property_count(s);
    const void *data = pulsarc_schema_data(s, &len);
    CHECK(len <= sizeof spec->data && n <= BS_SCHEMA_PROPS, "a schema too big for a spec");
    memcpy(spec->data, data, len);
    snprintf(spec->name, sizeof spec->name, "%s", pulsarc_schema_name(s));
    for (size_t i = 0; i < n; i++) {
        const char *k, *v;
        CHECK(pulsarc_schema_property_at(s, i, &k, &v) == PULSARC_OK, "no property %zu", i);
        snprintf(spec->keys[i], sizeof spec->keys[i], "%s", k);
        snprintf(spec->values[i], sizeof spec->values[i], "%s", v);
    }
    spec_link(spec, pulsarc_schema_get_type(s), len, n);
}

/* n bytes of the input as a string (NUL-terminated; an inner NUL shortens it). */
static void read_string(input_t *in, char *out, size_t cap)
{
    size_t n = bs_next_byte(in);
    n = n < in->n ? n : in->n;
    size_t k = n < cap - 1 ? n : cap - 1;
    memcpy(out, in->p, k);
    out[k] = 0;
    in->p += n;
    in->n -= n;
}

/* Any Schema message: type byte, definition, up to three properties. */
static void spec_read(bs_schema_spec_t *spec, input_t *in)
{
    int type = bs_next_byte(in);
    size_t len = bs_next_byte(in);
    len = len < in->n ? len : in->n;
    memcpy(spec->data, in->p, len);
    in->p += len;
    in->n -= len;
    size_t n = bs_next_byte(in) % 4;
    for (size_t i = 0; i < n; i++) {
        read_string(in, spec->keys[i], sizeof spec->keys[i]);
        read_string(in, spec->values[i], sizeof spec->values[i]);
    }
    snprintf(spec->name, sizeof spec->name, "fuzz");
    spec_link(spec, type, len, n);
}

static pulsarc_schema_t *make_schema(pulsarc_result (*make)(const char *, pulsarc_schema_t **),
                                     const char *definition)
{
    pulsarc_schema_t *s = NULL;
    CHECK(make(definition, &s) == PULSARC_OK, "cannot make a schema: %s",
          pulsarc_last_error_detail());
    return s;
}

static pulsarc_schema_t *make_primitive(pulsarc_schema_type type)
{
    pulsarc_schema_t *s = NULL;
    CHECK(pulsarc_schema_new_primitive(type, &s) == PULSARC_OK, "cannot make a schema: %s",
          pulsarc_last_error_detail());
    return s;
}

static void make_schemas(void)
{
    avro_schema = make_schema(pulsarc_schema_new_avro, avro_def);
    string_schema = make_primitive(PULSARC_SCHEMA_STRING);
    auto_schema = make_primitive(PULSARC_SCHEMA_AUTO_PRODUCE);
    own_schemas[0] = make_schema(pulsarc_schema_new_json, json_def);
    own_schemas[1] = make_primitive(PULSARC_SCHEMA_INT64);
    spec_from(&topic_avro, avro_schema);
    pulsarc_schema_t *kv = NULL, *k = make_primitive(PULSARC_SCHEMA_STRING),
                     *v = make_primitive(PULSARC_SCHEMA_INT32);
    CHECK(pulsarc_schema_new_key_value(k, v, PULSARC_KV_INLINE, &kv) == PULSARC_OK,
          "cannot make a KeyValue schema");
    spec_from(&topic_kv, kv);
    pulsarc_schema_free(k);
    pulsarc_schema_free(v);
    pulsarc_schema_free(kv);
}

static const size_t version_lens[] = { 0, 8, 1, FB_VERSION_MAX };

static outcome_t *new_outcome(session_t *s, outcome_t *v, int *n, int cap, const char *what)
{
    if (*n == cap)
        return NULL;
    outcome_t *o = &v[(*n)++];
    o->accepted = true;
    o->calls = 0;
    o->what = what;
    o->callbacks = &s->callbacks;
    return o;
}

/* own: -1 the producer's schema, else the index of the message's own in own_schemas. */
static void send_message(session_t *s, int64_t sequence_id, const char *key, bool deliver_later,
                         int own, bool bad)
{
    outcome_t *o;
    if (!s->producer || !(o = new_outcome(s, s->msgs, &s->n_msgs, MAX_MESSAGES, "a message")))
        return;
    pulsarc_message_clear(s->msg);
    bs_payload_kind_t kind = bad ? BS_PAYLOAD_BAD : own >= 0 ? own_kinds[own] : s->payload_kind;
    pulsarc_message_set_payload(s->msg, payload_table[s->payload_size][kind],
                                payload_len_table[s->payload_size][kind]);
    if (own >= 0)
        CHECK(pulsarc_message_set_schema(s->msg, own_schemas[own]) == PULSARC_OK,
              "cannot give a message its schema");
    if (sequence_id >= 0)
        pulsarc_message_set_sequence_id(s->msg, sequence_id);
    if (key)
        pulsarc_message_set_key(s->msg, key);
    if (deliver_later)
        pulsarc_message_set_deliver_at(s->msg, pc_wall_ms() + 60000);
    o->accepted = pulsarc_producer_send_async(s->producer, s->msg, on_sent, o) == PULSARC_OK;
}

/* A blocking call (create_producer) waits for the loop: play the broker and give turns
 * until the loop answers (lockstep.h), letting virtual time pass while it waits for a
 * timer. */
typedef struct block {
    session_t *s;
    unsigned wakes;
} block_t;

static bool answered(fake_broker_t *fb, void *ctx)
{
    return ls_wakes() != ((block_t *)ctx)->wakes;
}

static void serve_blocked(void *ctx, unsigned wakes)
{
    block_t b = { ctx, wakes };
    CHECK(fb_serve(b.s->fb, vc_now() + BLOCK_LIMIT_MS, answered, &b),
          "a blocking call was not answered within %d ms", BLOCK_LIMIT_MS);
}

/* Every accepted message reached the broker or was called back (e.g. too big). */
static bool messages_settled(fake_broker_t *fb, void *ctx)
{
    const session_t *s = ctx;
    unsigned accepted = 0, settled = fb->messages_received;
    for (int i = 0; i < s->n_msgs; i++) {
        accepted += s->msgs[i].accepted;
        settled += s->msgs[i].calls > 0;
    }
    return settled >= accepted;
}

static const int32_t max_sizes[] = { 5 * 1024 * 1024, 4096, 1024, 640 };
static const uint32_t partition_counts[] = { 0, 2, 3, 1 };
static const char *const send_timeouts[] = { "0", "10", "30", "100" };

static void client_set(pulsarc_client_config_t *conf, const char *key, const char *value)
{
    CHECK(pulsarc_client_config_set(conf, key, value) == PULSARC_OK, "cannot set %s", key);
}

static void producer_set(pulsarc_producer_config_t *conf, const char *key, const char *value)
{
    CHECK(pulsarc_producer_config_set(conf, key, value) == PULSARC_OK, "cannot set %s", key);
}

/* The same for every input of a target (bs_init): what reaches the broker, and the
 * client's configuration (parsing the test CA each time would cost more than a session). */
static bs_options_t options;
static pulsarc_client_config_t *client_conf;
static bool show_log; /* FUZZ_BROKER_SESSION_LOG */

static void make_client_conf(void)
{
    client_conf = pulsarc_client_config_new();
    CHECK(client_conf, "out of memory");
    /* Short enough that request, connect and close timeouts fire within an input (the
     * connection checks them every 100 ms). */
    client_set(client_conf, "operationTimeoutMs", "50");
    client_set(client_conf, "connectionTimeoutMs", "50");
    client_set(client_conf, "initialBackoffIntervalMs", "1");
    /* A broker that keeps refusing or hanging up makes the client retry every
     * maxBackoffIntervalMs for the rest of the input: 16 ms keeps that to about a dozen
     * attempts, each running the same code (4 ms made 50). */
    client_set(client_conf, "maxBackoffIntervalMs", "16");
    client_set(client_conf, "maxLookupRedirects", "3");
    /* FUZZ_BROKER_SESSION_LOG=1 shows the client's log, to see what a reproducer does. */
    show_log = getenv("FUZZ_BROKER_SESSION_LOG") != NULL;
    if (!show_log)
        pulsarc_client_config_set_logger(client_conf, discard_log, NULL);
    if (options.trust_pem) {
        CHECK(pulsarc_client_config_set_tls_trust_certs_pem(client_conf, options.trust_pem) ==
                  PULSARC_OK,
              "the test CA does not load");
        /* The context those settings make (the CA parsed, OpenSSL's context set up) costs
         * more than a session: built once, as the configuration would build it, and
         * shared by every input's client. */
        static pc_tls_ctx_t *tls_ctx;
        const pc_tls_settings_t tls = { .trust_pem = options.trust_pem,
                                        .verify_hostname = true,
                                        .session_resumption = true };
        CHECK(pc_tls_ctx_new(&tls, &tls_ctx) == PULSARC_OK, "the test CA does not load");
        pc_client_config_set_tls_ctx(client_conf, tls_ctx);
    }
}

/* Setup bytes: the broker, the client, the producer and its first messages. Returns
 * false when out of resources (the input is skipped). */
static bool setup(session_t *s, input_t *in)
{
    const bs_options_t *opt = &options;
    uint8_t b0 = next_byte(in), b1 = next_byte(in), b2 = next_byte(in), b3 = next_byte(in);
    static const bs_schema_spec_t *const topic_answers[] = { &topic_avro, &topic_kv, NULL, NULL };
    unsigned topic_answer = (b3 >> 4) & 3;
    if (topic_answer == 3)
        spec_read(&s->topic_schema, in);
    fb_settings_t st = {
        .partitions = partition_counts[(b0 >> 2) & 3],
        .lookup_redirects = (b0 >> 4) & 1,
        .proxy_through = (b0 >> 5) & 1,
        .producer_errors = (b1 >> 6) & 1,
        .last_sequence_id = (b1 >> 7) ? 41 : -1,
        .max_message_size = max_sizes[b2 & 3],
        .producer_version_len = version_lens[(b3 >> 2) & 3],
        .auto_produce = (b3 & 3) == 3,
        .topic_schema = topic_answer == 3             ? &s->topic_schema.schema
                        : topic_answers[topic_answer] ? &topic_answers[topic_answer]->schema
                                                      : NULL,
        .tls = opt->trust_pem != NULL,
        .transport = opt->transport,
        .transport_ctx = opt->transport_ctx,
    };
    s->tls = st.tls;
    s->payload_size = (b2 >> 2) & 3;
    static const bs_payload_kind_t topic_kinds[] = { BS_PAYLOAD_AVRO, BS_PAYLOAD_KV, BS_PAYLOAD_RAW,
                                                     BS_PAYLOAD_RAW };
    static const bs_payload_kind_t producer_kinds[] = { BS_PAYLOAD_RAW, BS_PAYLOAD_AVRO,
                                                        BS_PAYLOAD_STRING, BS_PAYLOAD_RAW };
    s->payload_kind = (b3 & 3) == 3 ? topic_kinds[topic_answer] : producer_kinds[b3 & 3];
    s->free_before_destroy = (b2 >> 6) & 1;
    s->current = -1;
    if (!(s->fb = fb_new(&st)) || !(s->msg = pulsarc_message_new()))
        return false;

    /* The shared configuration hands this input's broker the connections. */
    pc_client_config_set_transport(client_conf, fb_seam(s->fb));
    client_set(client_conf, "logLevel", (b3 >> 7) || show_log ? "debug" : "info");
    if (pulsarc_client_new(opt->service_url, client_conf, &s->client) != PULSARC_OK)
        return false;

    pulsarc_producer_config_t *pc = pulsarc_producer_config_new();
    producer_set(pc, "batchingEnabled", (b0 & 1) ? "true" : "false");
    producer_set(pc, "batchingMaxPublishDelayMs", "1");
    producer_set(pc, "chunkingEnabled", (b0 >> 1) & 1 ? "true" : "false");
    if ((b0 >> 6) & 1)
        producer_set(pc, "producerName", "fuzz-producer");
    producer_set(pc, "compressionType", (b0 >> 7) ? "lz4" : "none");
    producer_set(pc, "sendTimeoutMs", send_timeouts[(b1 >> 4) & 3]);
    producer_set(pc, "batcherType", (b2 >> 4) & 1 ? "key_based" : "default");
    producer_set(pc, "maxPendingMessages", (b2 >> 5) & 1 ? "4" : "1000");
    producer_set(pc, "lazyStartPartitionedProducers", (b2 >> 7) ? "true" : "false");
    static pulsarc_schema_t *const *const producer_schemas[] = { NULL, &avro_schema, &string_schema,
                                                                 &auto_schema };
    if (producer_schemas[b3 & 3])
        CHECK(pulsarc_producer_config_set_schema(pc, *producer_schemas[b3 & 3]) == PULSARC_OK,
              "cannot set the schema");
    producer_set(pc, "schemaValidationEnabled", (b3 >> 6) & 1 ? "false" : "true");

    if (pulsarc_client_create_producer(s->client, TOPIC, pc, &s->producer) != PULSARC_OK)
        s->producer = NULL;
    pulsarc_producer_config_free(pc);

    for (unsigned i = 0; i < (b1 & 15u); i++)
        send_message(s, -1, NULL, false, -1, false);
    fb_serve(s->fb, vc_now() + SEND_SETTLE_MS, messages_settled, s);
    return true;
}

/* ---- references to what the broker has seen ----------------------------------------
 * Each resolves a reference byte (see broker_session_format.h); one that names something
 * recorded also points *conn at the connection it came from, if that is still open. */

static void aim(const fake_broker_t *fb, int *conn, int recorded)
{
    if (fb->conns[recorded].fd >= 0)
        *conn = recorded;
}

static uint64_t request_ref(const fake_broker_t *fb, uint8_t ref, int *conn)
{
    if (ref == 0xff)
        return UINT64_MAX;
    unsigned kept = fb->n_requests < FB_MAX_REQUESTS ? fb->n_requests : FB_MAX_REQUESTS;
    if ((ref & 0x80) || kept == 0)
        return ref & 0x7f;
    const fb_request_t *r = fb_recent_request(fb, ref % kept);
    aim(fb, conn, r->conn);
    return r->id;
}

static uint64_t producer_ref(const fake_broker_t *fb, uint8_t ref, int *conn)
{
    if ((ref & 0x80) || fb->n_producers == 0)
        return ref & 0x7f;
    const fb_producer_t *p = &fb->producers[ref % fb->n_producers];
    aim(fb, conn, p->conn);
    return p->id;
}

typedef struct seq_choice {
    uint64_t sequence_id;
    bool has_highest;
    uint64_t highest;
} seq_choice_t;

/* Mostly the oldest SENDs not receipted yet: those are what the client waits for. */
static seq_choice_t sequence_ref(fake_broker_t *fb, uint8_t ref, int *conn)
{
    unsigned open = 0;
    for (int i = 0; i < fb->n_sends; i++)
        open += !fb->sends[i].receipted;
    unsigned mode = ref >> 5, k = ref & 31u;
    fb_send_t *send = NULL;
    if (open > 0 && mode != 7) {
        k %= open;
        for (int i = 0; i < fb->n_sends && !send; i++)
            if (!fb->sends[i].receipted && k-- == 0)
                send = &fb->sends[i];
    }
    if (!send)
        return (seq_choice_t){ .sequence_id = ref & 31u };
    aim(fb, conn, send->conn);
    seq_choice_t c = { send->sequence_id, send->has_highest, send->highest_sequence_id };
    if (mode == 4)
        c.sequence_id--;
    else if (mode == 5)
        c.sequence_id++;
    else if (mode == 6)
        c.sequence_id = send->has_highest ? send->highest_sequence_id : send->sequence_id;
    if (mode < 4 || mode == 6)
        send->receipted = true;
    return c;
}

/* ---- broker commands built from the input ------------------------------------------- */

static void build_and_write(session_t *s, input_t *in)
{
    fake_broker_t *fb = s->fb;
    Pulsar__Proto__BaseCommand cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    Pulsar__Proto__CommandConnected connected = PULSAR__PROTO__COMMAND_CONNECTED__INIT;
    Pulsar__Proto__CommandPing ping = PULSAR__PROTO__COMMAND_PING__INIT;
    Pulsar__Proto__CommandPong pong = PULSAR__PROTO__COMMAND_PONG__INIT;
    Pulsar__Proto__CommandError error = PULSAR__PROTO__COMMAND_ERROR__INIT;
    Pulsar__Proto__CommandSuccess success = PULSAR__PROTO__COMMAND_SUCCESS__INIT;
    Pulsar__Proto__CommandProducerSuccess producer_success =
        PULSAR__PROTO__COMMAND_PRODUCER_SUCCESS__INIT;
    Pulsar__Proto__CommandLookupTopicResponse lookup =
        PULSAR__PROTO__COMMAND_LOOKUP_TOPIC_RESPONSE__INIT;
    Pulsar__Proto__CommandPartitionedTopicMetadataResponse partitions =
        PULSAR__PROTO__COMMAND_PARTITIONED_TOPIC_METADATA_RESPONSE__INIT;
    Pulsar__Proto__CommandSendReceipt receipt = PULSAR__PROTO__COMMAND_SEND_RECEIPT__INIT;
    Pulsar__Proto__MessageIdData id = PULSAR__PROTO__MESSAGE_ID_DATA__INIT;
    Pulsar__Proto__CommandSendError send_error = PULSAR__PROTO__COMMAND_SEND_ERROR__INIT;
    Pulsar__Proto__CommandCloseProducer close = PULSAR__PROTO__COMMAND_CLOSE_PRODUCER__INIT;
    Pulsar__Proto__CommandTopicMigrated migrated = PULSAR__PROTO__COMMAND_TOPIC_MIGRATED__INIT;
    Pulsar__Proto__CommandAuthChallenge challenge = PULSAR__PROTO__COMMAND_AUTH_CHALLENGE__INIT;
    Pulsar__Proto__AuthData auth = PULSAR__PROTO__AUTH_DATA__INIT;
    Pulsar__Proto__CommandGetOrCreateSchemaResponse schema_version =
        PULSAR__PROTO__COMMAND_GET_OR_CREATE_SCHEMA_RESPONSE__INIT;
    Pulsar__Proto__CommandGetSchemaResponse get_schema =
        PULSAR__PROTO__COMMAND_GET_SCHEMA_RESPONSE__INIT;
    static const size_t answer_version_lens[] = { 8, 0, 0, FB_VERSION_MAX };
    static const char *const urls[] = { FB_BROKER_URL, FB_REDIRECT_URL, "broker-1", NULL };
    static const char *const tls_urls[] = { FB_BROKER_URL_TLS, FB_REDIRECT_URL_TLS, "localhost",
                                            NULL };
    uint8_t flags;
    seq_choice_t seq;
    int to = s->current;

    switch (next_byte(in) % BS_CMD_COUNT) {
    case BS_CMD_CONNECTED:
        connected.server_version = (char *)"Pulsar Server3.2.0";
        connected.has_protocol_version = 1;
        connected.protocol_version = next_byte(in);
        connected.has_max_message_size = 1;
        connected.max_message_size = max_sizes[next_byte(in) & 3];
        cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__CONNECTED;
        cmd.connected = &connected;
        break;
    case BS_CMD_PING:
        cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__PING;
        cmd.ping = &ping;
        break;
    case BS_CMD_PONG:
        cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__PONG;
        cmd.pong = &pong;
        break;
    case BS_CMD_ERROR:
        error.request_id = request_ref(fb, next_byte(in), &to);
        error.error = (Pulsar__Proto__ServerError)next_byte(in);
        error.message = next_byte(in) & 1 ? (char *)"fuzz: refused" : NULL;
        cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__ERROR;
        cmd.error = &error;
        break;
    case BS_CMD_SUCCESS:
        success.request_id = request_ref(fb, next_byte(in), &to);
        cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__SUCCESS;
        cmd.success = &success;
        break;
    case BS_CMD_PRODUCER_SUCCESS:
        producer_success.request_id = request_ref(fb, next_byte(in), &to);
        flags = next_byte(in);
        producer_success.producer_name = flags & 1 ? (char *)"standalone-0-9" : NULL;
        producer_success.has_last_sequence_id = (flags >> 1) & 1;
        producer_success.last_sequence_id = producer_success.has_last_sequence_id
                                                ? (int8_t)next_byte(in)
                                                : 0;
        producer_success.has_producer_ready = (flags >> 2) & 1;
        producer_success.producer_ready = 0;
        producer_success.has_schema_version = ((flags >> 3) & 3) != 0;
        producer_success.schema_version = fb_version(1, version_lens[(flags >> 3) & 3]);
        cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__PRODUCER_SUCCESS;
        cmd.producer_success = &producer_success;
        break;
    case BS_CMD_LOOKUP:
        lookup.request_id = request_ref(fb, next_byte(in), &to);
        lookup.has_response = 1;
        lookup.response = (Pulsar__Proto__CommandLookupTopicResponse__LookupType)(next_byte(in) %
                                                                                  4);
        flags = next_byte(in);
        lookup.has_authoritative = 1;
        lookup.authoritative = flags & 1;
        lookup.has_proxy_through_service_url = (flags >> 1) & 1;
        lookup.proxy_through_service_url = (flags >> 1) & 1;
        lookup.has_error = (flags >> 2) & 1;
        lookup.error = lookup.has_error ? (Pulsar__Proto__ServerError)next_byte(in) : 0;
        lookup.brokerserviceurl = (char *)urls[(flags >> 3) & 3];
        lookup.brokerserviceurltls = s->tls ? (char *)tls_urls[(flags >> 3) & 3] : NULL;
        lookup.message = (char *)"fuzz: lookup";
        cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__LOOKUP_RESPONSE;
        cmd.lookuptopicresponse = &lookup;
        break;
    case BS_CMD_PARTITIONS:
        partitions.request_id = request_ref(fb, next_byte(in), &to);
        partitions.has_partitions = 1;
        partitions.partitions = next_byte(in);
        flags = next_byte(in);
        partitions.has_response = 1;
        partitions.response = flags & 1;
        partitions.has_error = (flags >> 1) & 1;
        cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__PARTITIONED_METADATA_RESPONSE;
        cmd.partitionmetadataresponse = &partitions;
        break;
    case BS_CMD_RECEIPT:
        receipt.producer_id = producer_ref(fb, next_byte(in), &to);
        seq = sequence_ref(fb, next_byte(in), &to);
        receipt.sequence_id = seq.sequence_id;
        flags = next_byte(in);
        if (flags & 1) {
            id.ledgerid = next_byte(in);
            id.entryid = next_byte(in);
            receipt.message_id = &id;
        }
        receipt.has_highest_sequence_id = (flags >> 1) & 1;
        receipt.highest_sequence_id = seq.has_highest ? seq.highest : seq.sequence_id;
        cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__SEND_RECEIPT;
        cmd.send_receipt = &receipt;
        break;
    case BS_CMD_SEND_ERROR:
        send_error.producer_id = producer_ref(fb, next_byte(in), &to);
        send_error.sequence_id = sequence_ref(fb, next_byte(in), &to).sequence_id;
        send_error.error = (Pulsar__Proto__ServerError)next_byte(in);
        send_error.message = (char *)"fuzz: not stored";
        cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__SEND_ERROR;
        cmd.send_error = &send_error;
        break;
    case BS_CMD_CLOSE_PRODUCER:
        close.producer_id = producer_ref(fb, next_byte(in), &to);
        close.request_id = request_ref(fb, next_byte(in), &to);
        cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__CLOSE_PRODUCER;
        cmd.close_producer = &close;
        break;
    case BS_CMD_TOPIC_MIGRATED:
        migrated.resource_id = producer_ref(fb, next_byte(in), &to);
        migrated.resource_type = (Pulsar__Proto__CommandTopicMigrated__ResourceType)(next_byte(in) %
                                                                                     3);
        flags = next_byte(in);
        if (flags & 1) {
            /* The second broker's addresses, or ones the client must refuse to follow. */
            static const char *const plain[] = { FB_REDIRECT_URL, "broker-2", NULL,
                                                 "http://broker-2:8080" };
            static const char *const tls[] = { FB_REDIRECT_URL_TLS, "pulsar://localhost:6652", NULL,
                                               "pulsar+ssl://localhost:0" };
            migrated.brokerserviceurl = (char *)plain[(flags >> 1) & 3];
            migrated.brokerserviceurltls = (char *)tls[(flags >> 3) & 3];
        }
        cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__TOPIC_MIGRATED;
        cmd.topicmigrated = &migrated;
        break;
    case BS_CMD_AUTH_CHALLENGE:
        auth.auth_method_name = (char *)"token";
        challenge.challenge = &auth;
        cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__AUTH_CHALLENGE;
        cmd.authchallenge = &challenge;
        break;
    case BS_CMD_SCHEMA_VERSION:
        schema_version.request_id = request_ref(fb, next_byte(in), &to);
        flags = next_byte(in);
        schema_version.has_error_code = flags & 1;
        schema_version.error_code = flags & 1 ? (Pulsar__Proto__ServerError)next_byte(in) : 0;
        schema_version.error_message = flags & 1 ? (char *)"fuzz: schema refused" : NULL;
        schema_version.has_schema_version = ((flags >> 1) & 3) != 1;
        schema_version.schema_version = fb_version(7, answer_version_lens[(flags >> 1) & 3]);
        cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__GET_OR_CREATE_SCHEMA_RESPONSE;
        cmd.getorcreateschemaresponse = &schema_version;
        break;
    case BS_CMD_GET_SCHEMA:
        get_schema.request_id = request_ref(fb, next_byte(in), &to);
        flags = next_byte(in);
        get_schema.has_error_code = flags & 1;
        get_schema.error_code = flags & 1 ? (Pulsar__Proto__ServerError)next_byte(in) : 0;
        if ((flags >> 1) & 1) {
            spec_read(&s->answer_schema, in);
            get_schema.schema = &s->answer_schema.schema;
        }
        cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__GET_SCHEMA_RESPONSE;
        cmd.getschemaresponse = &get_schema;
        break;
    default: /* BS_CMD_BARE */
        cmd.type = (Pulsar__Proto__BaseCommand__Type)next_byte(in);
        break;
    }
    if (to >= 0)
        fb_write_command(fb, to, &cmd);
}

/* ---- the program -------------------------------------------------------------------- */

uint64_t bs_within_budget(const session_t *s, uint64_t ms)
{
    uint64_t t = vc_now() + ms;
    return t < s->budget_end ? t : s->budget_end;
}

void bs_settle(session_t *s)
{
    fb_settle(s->fb);
}

/* What the client did so far: a frame, a connection or a callback. */
static unsigned activity(session_t *s)
{
    return s->fb->frames_received + (unsigned)fb_conn_count(s->fb) + (unsigned)s->callbacks;
}

typedef struct progress {
    session_t *s;
    unsigned seen;
} progress_t;

static bool something_new(fake_broker_t *fb, void *ctx)
{
    const progress_t *p = ctx;
    return activity(p->s) != p->seen;
}

static void app_action(session_t *s, uint8_t what)
{
    outcome_t *o;
    switch (what % 3) {
    case 0:
        if (s->producer && (o = new_outcome(s, s->dones, &s->n_dones, MAX_DONES, "a flush")))
            o->accepted = pulsarc_producer_flush_async(s->producer, on_done, o) == PULSARC_OK;
        break;
    case 1:
        if (s->producer && (o = new_outcome(s, s->dones, &s->n_dones, MAX_DONES, "a close")))
            o->accepted = pulsarc_producer_close_async(s->producer, on_done, o) == PULSARC_OK;
        break;
    default:
        pulsarc_producer_free(s->producer);
        s->producer = NULL;
        break;
    }
}

int bs_current(session_t *s)
{
    if (s->current < 0 || s->fb->conns[s->current].fd < 0)
        s->current = fb_open_conn(s->fb, 0);
    return s->current;
}

void bs_run_op(session_t *s, bs_op_t op, input_t *in)
{
    fake_broker_t *fb = s->fb;
    bs_current(s);
    uint8_t arg;
    switch (op) {
    case BS_OP_RAW: {
        size_t len = next_byte(in);
        len = len < in->n ? len : in->n;
        if (s->current >= 0)
            fb_write(fb, s->current, in->p, len);
        in->p += len;
        in->n -= len;
        break;
    }
    case BS_OP_CMD:
        build_and_write(s, in);
        break;
    case BS_OP_SEND:
        arg = next_byte(in);
        for (int i = 0; i <= (arg & 3); i++) {
            char key[8];
            snprintf(key, sizeof key, "k%d", i % 3);
            send_message(s, (arg >> 2) & 1 ? next_byte(in) : -1, (arg >> 3) & 1 ? key : NULL,
                         (arg >> 4) & 1, (arg >> 5) & 1 ? i % 2 : -1, (arg >> 6) & 1);
        }
        break;
    case BS_OP_USE_CONN:
        s->current = fb_open_conn(fb, next_byte(in));
        break;
    case BS_OP_AUTO:
        arg = next_byte(in) % BS_AUTO_COUNT;
        fb->autos[arg] = !fb->autos[arg];
        break;
    case BS_OP_SYNC:
        bs_settle(s);
        break;
    case BS_OP_WAIT:
        fb_serve(fb, bs_within_budget(s, next_byte(in) % 32u + 1), NULL, NULL);
        break;
    case BS_OP_WAIT_EVENT: {
        progress_t p = { s, activity(s) };
        fb_serve(fb, bs_within_budget(s, EVENT_LIMIT_MS), something_new, &p);
        break;
    }
    case BS_OP_HANGUP:
        if (s->current >= 0)
            fb_hang_up(fb, s->current);
        break;
    case BS_OP_APP:
        app_action(s, next_byte(in));
        break;
    default: /* BS_OP_REFUSE */
        fb_set_refuse(fb, (fb_refuse_t)(next_byte(in) % 3));
        break;
    }
    /* The client handles what an operation wrote or called before the next one. */
    if (op == BS_OP_RAW || op == BS_OP_CMD || op == BS_OP_SEND || op == BS_OP_HANGUP ||
        op == BS_OP_APP)
        bs_settle(s);
}

static void check_outcomes(const outcome_t *v, int n, bool log)
{
    for (int i = 0; i < n; i++) {
        int calls = v[i].calls;
        if (log)
            fprintf(stderr, "%s #%d: %s, %s\n", v[i].what, i,
                    v[i].accepted ? "accepted" : "not accepted",
                    calls ? pulsarc_strerror(v[i].res) : "no callback");
        CHECK(calls == (v[i].accepted ? 1 : 0), "%s (#%d, %s) was called back %d times", v[i].what,
              i, v[i].accepted ? "accepted" : "not accepted", calls);
    }
}

/* AddressSanitizer's defaults for the session targets (ASAN_OPTIONS still wins). A
 * session allocates and frees a few hundred KiB; with the default 256 MiB quarantine
 * nearly every allocation lands on pages the kernel must map and zero first, a large
 * share of a session's time. 16 MiB still holds what many sessions freed, so a use after
 * free within an input is caught as before. Each of a session's thousands of allocations
 * also records its stack: 12 frames (of 30) reach from the library's allocation to the
 * session operation that caused it, and a reproducer can be rerun with more. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
    return "quarantine_size_mb=16:malloc_context_size=12";
}

void bs_init(const bs_options_t *opt)
{
    options = *opt;
    make_client_conf();
    ls_init();
    for (size_t i = 0; i < sizeof payload; i++)
        payload[i] = (uint8_t)(i * 7);
    for (unsigned i = 0; i < PAYLOAD_SIZES; i++)
        make_payloads(i);
    make_schemas();
}

bool bs_start(session_t *s, input_t *in)
{
    memset(s, 0, sizeof *s);
    /* No client exists between inputs: each starts at the same instant, with the same
     * random numbers (the client's rand(): first partition, backoff jitter). */
    vc_set(VC_START_MS);
    srand(1);
    ls_on_block(serve_blocked, s);
    if (!setup(s, in))
        return false;
    s->budget_end = vc_now() + BS_PROGRAM_BUDGET_MS;
    return true;
}

bool bs_running(const session_t *s, const input_t *in)
{
    return in->n > 0 && vc_now() < s->budget_end;
}

void bs_finish(session_t *s)
{
    if (s->client) {
        bs_settle(s);
        if (s->free_before_destroy) {
            pulsarc_producer_free(s->producer);
            s->producer = NULL;
            bs_settle(s);
        }
        /* Nobody plays the broker during the destroy: the loop runs on alone. */
        CHECK(pulsarc_client_destroy(s->client) == PULSARC_OK, "destroy failed");
    }
    /* A handle outlives its client until freed. */
    pulsarc_producer_free(s->producer);
    /* The client's loop has ended: every callback that will ever come has come. */
    check_outcomes(s->msgs, s->n_msgs, show_log);
    check_outcomes(s->dones, s->n_dones, show_log);
    pulsarc_message_free(s->msg);
    if (s->fb)
        fb_free(s->fb);
}
