/* Schemas against the mock broker's registry: the producer's schema in PRODUCER, the
 * version on every message and batch, refusals with the broker's text, reconnects,
 * messages with their own schema (GET_OR_CREATE_SCHEMA once per schema, batches split at
 * a change), payload checks before admission. */
#include "client_harness.h"

TestSuite(client_schema, .init = h_setup, .fini = h_teardown, .timeout = H_SUITE_TIMEOUT(30));

#define DEF_V1 "{\"type\":\"record\",\"name\":\"R\",\"fields\":[{\"name\":\"a\",\"type\":\"int\"}]}"
#define DEF_V2                                         \
    "{\"type\":\"record\",\"name\":\"R\",\"fields\":[" \
    "{\"name\":\"a\",\"type\":\"int\"},"               \
    "{\"name\":\"b\",\"type\":[\"null\",\"string\"],\"default\":null}]}"

static pulsarc_schema_t *json_schema(const char *def)
{
    pulsarc_schema_t *s = NULL;
    cr_assert_eq(pulsarc_schema_new_json(def, &s), PULSARC_OK, "%s", pulsarc_last_error_detail());
    return s;
}

static pulsarc_producer_t *schema_producer(const pulsarc_schema_t *s, pulsarc_producer_config_t *pc)
{
    cr_assert_eq(pulsarc_producer_config_set_schema(pc, s), PULSARC_OK);
    return h_producer_ok(client, H_TOPIC, pc);
}

/* Send message idx with a JSON payload {"a":idx} and, when own is set, its own schema. */
static void send_json(pulsarc_producer_t *p, int idx, const pulsarc_schema_t *own)
{
    char buf[32];
    int n = snprintf(buf, sizeof buf, "{\"a\":%d}", idx);
    pulsarc_message_t *m = pulsarc_message_new();
    pulsarc_message_set_payload(m, buf, (size_t)n);
    if (own)
        cr_assert_eq(pulsarc_message_set_schema(m, own), PULSARC_OK);
    T.slots[idx].idx = idx;
    pulsarc_result r = pulsarc_producer_send_async(p, m, h_on_sent, &T.slots[idx]);
    cr_assert_eq(r, PULSARC_OK, "send %d: %s (%s)", idx, pulsarc_result_name(r),
                 pulsarc_last_error_detail());
    pulsarc_message_free(m);
}

/* The version a recorded SEND carries, as a number; -1 when it carries none. */
static int64_t send_version(size_t i)
{
    mock_send_t s = h_get_send(mb, i);
    cr_assert_not_null(s.metadata);
    int64_t v = -1;
    if (s.metadata->has_schema_version) {
        cr_assert_eq(s.metadata->schema_version.len, 8, "SEND %zu: version of %zu bytes", i,
                     s.metadata->schema_version.len);
        v = 0;
        for (int k = 0; k < 8; k++)
            v = v << 8 | s.metadata->schema_version.data[k];
    }
    mock_send_free(&s);
    return v;
}

static int32_t send_count(size_t i)
{
    mock_send_t s = h_get_send(mb, i);
    int32_t n = s.num_messages;
    mock_send_free(&s);
    return n;
}

/* The producer's schema travels in PRODUCER; the broker's version (1: the topic had one
 * before) is on every batch, and the accessor reports it. */
Test(client_schema, registered_version_on_every_batch)
{
    int64_t v;
    cr_assert_eq(mock_broker_register_schema(mb, H_TOPIC, PULSAR__PROTO__SCHEMA__TYPE__Json, DEF_V1,
                                             strlen(DEF_V1), &v),
                 0);
    cr_assert_eq(v, 0);
    client = h_client(NULL);
    pulsarc_schema_t *s = json_schema(DEF_V2);
    producer = schema_producer(s,
                               h_producer_conf(0, "batchingEnabled", "true", "batchingMaxMessages",
                                               "3", "batchingMaxPublishDelayMs", "5000", NULL));
    pulsarc_schema_free(s);
    mock_producer_info_t info;
    cr_assert(mock_broker_last_producer(mb, &info));
    cr_assert(info.has_schema);
    cr_assert_eq(info.schema_type, PULSAR__PROTO__SCHEMA__TYPE__Json);
    cr_assert_str_eq(info.schema_name, "");
    cr_assert_eq(info.schema_data_len, strlen(DEF_V2));
    cr_assert_eq(memcmp(info.schema_data, DEF_V2, strlen(DEF_V2)), 0);
    cr_assert_eq(info.n_schema_properties, 2);
    cr_assert_eq(pulsarc_producer_schema_version(producer), 1);
    for (int i = 0; i < 6; i++)
        send_json(producer, i, NULL);
    cr_assert(h_wait_calls(6, 5000), "only %d of 6 callbacks", h_total());
    h_assert_each_once(6, PULSARC_OK);
    cr_assert_eq(h_count(mb, MOCK_SENDS), 2);
    for (size_t i = 0; i < 2; i++) {
        cr_assert_eq(send_count(i), 3);
        cr_assert_eq(send_version(i), 1, "SEND %zu", i);
    }
    h_finish();
}

/* Without batching, each message carries the version itself. */
Test(client_schema, version_on_every_single_message)
{
    client = h_client(NULL);
    pulsarc_schema_t *s = json_schema(DEF_V1);
    producer = schema_producer(s, h_producer_conf(0, NULL));
    pulsarc_schema_free(s);
    for (int i = 0; i < 3; i++)
        send_json(producer, i, NULL);
    cr_assert(h_wait_calls(3, 5000));
    h_assert_each_once(3, PULSARC_OK);
    for (size_t i = 0; i < 3; i++)
        cr_assert_eq(send_version(i), 0, "SEND %zu", i);
    h_finish();
}

/* A producer without a schema sends none and stamps no version. */
Test(client_schema, no_schema_no_version)
{
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    mock_producer_info_t info;
    cr_assert(mock_broker_last_producer(mb, &info));
    cr_assert_not(info.has_schema);
    cr_assert_eq(pulsarc_producer_schema_version(producer), -1);
    h_send_range(producer, 0, 2);
    cr_assert(h_wait_calls(2, 5000));
    cr_assert_eq(send_version(0), -1);
    h_finish();
}

Test(client_schema, incompatible_schema_fails_creation_with_the_broker_text)
{
    int64_t v;
    cr_assert_eq(mock_broker_register_schema(mb, H_TOPIC, PULSAR__PROTO__SCHEMA__TYPE__Json, DEF_V1,
                                             strlen(DEF_V1), &v),
                 0);
    client = h_client(NULL);
    pulsarc_schema_t *s;
    cr_assert_eq(pulsarc_schema_new_avro(DEF_V1, &s), PULSARC_OK);
    pulsarc_producer_config_t *pc = h_producer_conf(0, NULL);
    pulsarc_producer_config_set_schema(pc, s);
    pulsarc_schema_free(s);
    char detail[512];
    pulsarc_result r = h_producer_fails(client, H_TOPIC, pc, detail, sizeof detail, NULL);
    cr_assert_eq(r, PULSARC_ERR_BROKER_INCOMPATIBLE_SCHEMA, "got %s", pulsarc_result_name(r));
    cr_assert(strstr(detail, "Incompatible schema: exists schema type JSON, new schema type AVRO"),
              "detail: %s", detail);
    cr_assert_eq(h_count(mb, MOCK_PRODUCERS), 1, "retried a refused schema");
    h_finish();
}

Test(client_schema, enforced_topic_refuses_a_producer_without_schema)
{
    int64_t v;
    cr_assert_eq(mock_broker_register_schema(mb, H_TOPIC, PULSAR__PROTO__SCHEMA__TYPE__Json, DEF_V1,
                                             strlen(DEF_V1), &v),
                 0);
    mock_broker_set_schema_enforced(mb, true);
    client = h_client(NULL);
    char detail[512];
    pulsarc_result r = h_producer_fails(client, H_TOPIC, h_producer_conf(0, NULL), detail,
                                        sizeof detail, NULL);
    cr_assert_eq(r, PULSARC_ERR_BROKER_INCOMPATIBLE_SCHEMA, "got %s", pulsarc_result_name(r));
    cr_assert(strstr(detail, "without a schema"), "detail: %s", detail);
    h_finish();
}

static bool version_is_one(void *p)
{
    return pulsarc_producer_schema_version(p) == 1;
}

/* A reconnect registers the schema again and takes the version the broker now gives
 * (here the topic was re-created with another schema first, so ours becomes version 1). */
Test(client_schema, reconnect_reregisters_and_refreshes_the_version)
{
    client = h_client(NULL);
    pulsarc_schema_t *s = json_schema(DEF_V2);
    producer = schema_producer(s, h_producer_conf(0, NULL));
    pulsarc_schema_free(s);
    send_json(producer, 0, NULL);
    cr_assert(h_wait_calls(1, 5000));
    cr_assert_eq(send_version(0), 0);
    mock_broker_clear_schemas(mb);
    int64_t v;
    cr_assert_eq(mock_broker_register_schema(mb, H_TOPIC, PULSAR__PROTO__SCHEMA__TYPE__Json, DEF_V1,
                                             strlen(DEF_V1), &v),
                 0);
    mock_broker_cut_now(mb);
    cr_assert(h_wait_count(mb, MOCK_PRODUCERS, 2, 5000));
    mock_producer_info_t info;
    cr_assert(mock_broker_last_producer(mb, &info));
    cr_assert(info.has_schema, "the re-registration had no schema");
    h_client_caught_up(mb); /* the new PRODUCER_SUCCESS was handled */
    send_json(producer, 1, NULL);
    cr_assert(h_wait_calls(2, 5000));
    h_assert_each_once(2, PULSARC_OK);
    cr_assert(h_wait_until(version_is_one, producer, 5000), "version %lld",
              (long long)pulsarc_producer_schema_version(producer));
    cr_assert_eq(send_version(h_count(mb, MOCK_SENDS) - 1), 1);
    h_finish();
}

/* One producer, two schemas: the message's own schema is registered once (one
 * GET_OR_CREATE_SCHEMA for three messages), each message carries its schema's version, and
 * batches close where the schema changes. */
Test(client_schema, multi_schema_registers_once_and_splits_batches)
{
    client = h_client(NULL);
    pulsarc_schema_t *own = json_schema(DEF_V1), *other = json_schema(DEF_V2);
    producer = schema_producer(own, h_producer_conf(0, "batchingEnabled", "true",
                                                    "batchingMaxPublishDelayMs", "5000", NULL));
    send_json(producer, 0, NULL);
    send_json(producer, 1, other);
    send_json(producer, 2, other);
    send_json(producer, 3, own); /* the producer's schema given explicitly */
    send_json(producer, 4, other);
    cr_assert_eq(pulsarc_producer_flush(producer), PULSARC_OK, "%s", pulsarc_last_error_detail());
    cr_assert(h_wait_calls(5, 5000));
    h_assert_each_once(5, PULSARC_OK);
    h_assert_order(5);
    cr_assert_eq(h_count(mb, MOCK_GET_OR_CREATE_SCHEMAS), 1);
    cr_assert_eq(h_count(mb, MOCK_SENDS), 4);
    static const int32_t counts[] = { 1, 2, 1, 1 };
    static const int64_t versions[] = { 0, 1, 0, 1 };
    for (size_t i = 0; i < 4; i++) {
        cr_assert_eq(send_count(i), counts[i], "SEND %zu", i);
        cr_assert_eq(send_version(i), versions[i], "SEND %zu", i);
    }
    h_assert_seq_in_order_per_connection(mb);
    pulsarc_schema_free(own);
    pulsarc_schema_free(other);
    h_finish();
}

/* The registry refuses a message's schema: the messages with it fail with the broker's
 * text; those around them, and later ones, go through. */
Test(client_schema, refused_message_schema_fails_only_its_messages)
{
    client = h_client(NULL);
    pulsarc_schema_t *own = json_schema(DEF_V1), *other = json_schema(DEF_V2);
    producer = schema_producer(own, h_producer_conf(0, NULL));
    mock_broker_set_schema_refuse_new(mb, true);
    send_json(producer, 0, NULL);
    send_json(producer, 1, other);
    send_json(producer, 2, NULL);
    send_json(producer, 3, other);
    cr_assert(h_wait_calls(4, 5000), "only %d of 4 callbacks", h_total());
    cr_assert_eq(T.res[0], PULSARC_OK);
    cr_assert_eq(T.res[2], PULSARC_OK);
    for (int i = 1; i <= 3; i += 2) {
        cr_assert_eq(T.res[i], PULSARC_ERR_BROKER_INCOMPATIBLE_SCHEMA, "message %d: %s", i,
                     pulsarc_result_name(T.res[i]));
        cr_assert(strstr(T.detail[i], "mock refuses new schema versions"), "%s", T.detail[i]);
    }
    cr_assert_eq(h_count(mb, MOCK_SENDS), 2);
    /* Not terminal: the producer goes on. */
    send_json(producer, 4, NULL);
    cr_assert(h_wait_calls(5, 5000));
    cr_assert_eq(T.res[4], PULSARC_OK);
    pulsarc_schema_free(own);
    pulsarc_schema_free(other);
    h_finish();
}

/* A payload that fails the schema is refused at send: nothing pending, nothing sent. */
Test(client_schema, invalid_payload_refused_before_admission)
{
    client = h_client(NULL);
    pulsarc_schema_t *s;
    pulsarc_schema_new_primitive(PULSARC_SCHEMA_STRING, &s);
    producer = schema_producer(s, h_producer_conf(0, NULL));
    pulsarc_message_t *m = pulsarc_message_new();
    pulsarc_message_set_payload(m, "\xc0\x80", 2);
    cr_assert_eq(pulsarc_producer_send_async(producer, m, h_on_sent, &T.slots[0]),
                 PULSARC_ERR_INVALID_PAYLOAD);
    cr_assert(strstr(pulsarc_last_error_detail(), "UTF-8"));
    cr_assert_eq(pulsarc_producer_pending_count(producer), 0);
    cr_assert_eq(pulsarc_client_memory_used(client), 0);
    /* A message's own schema is the one checked. */
    pulsarc_schema_t *i32;
    pulsarc_schema_new_primitive(PULSARC_SCHEMA_INT32, &i32);
    pulsarc_message_set_payload(m, "abc", 3);
    pulsarc_message_set_schema(m, i32);
    cr_assert_eq(pulsarc_producer_send_async(producer, m, h_on_sent, &T.slots[0]),
                 PULSARC_ERR_INVALID_PAYLOAD);
    pulsarc_message_free(m);
    h_expect_no_more_callbacks();
    cr_assert_eq(h_total(), 0);
    cr_assert_eq(h_count(mb, MOCK_SENDS), 0);
    pulsarc_schema_free(i32);
    pulsarc_schema_free(s);
    h_finish();
}

Test(client_schema, validation_can_be_turned_off)
{
    client = h_client(NULL);
    pulsarc_schema_t *s;
    pulsarc_schema_new_primitive(PULSARC_SCHEMA_INT64, &s);
    producer = schema_producer(s, h_producer_conf(0, "schemaValidationEnabled", "false", NULL));
    pulsarc_schema_free(s);
    cr_assert_eq(h_send(producer, 0), PULSARC_OK);
    cr_assert(h_wait_calls(1, 5000));
    cr_assert_eq(T.res[0], PULSARC_OK);
    h_finish();
}

/* KeyValue SEPARATED: the key travels base64-encoded with the flag, in single messages
 * and in batch entries. */
Test(client_schema, key_value_separated_key_flag_on_the_wire)
{
    client = h_client(NULL);
    pulsarc_schema_t *k, *v, *kv;
    pulsarc_schema_new_primitive(PULSARC_SCHEMA_STRING, &k);
    pulsarc_schema_new_primitive(PULSARC_SCHEMA_INT64, &v);
    pulsarc_schema_new_key_value(k, v, PULSARC_KV_SEPARATED, &kv);
    producer = schema_producer(kv, h_producer_conf(0, NULL));
    pulsarc_message_t *m = pulsarc_message_new();
    uint8_t value[8];
    pulsarc_schema_encode_int64(7, value);
    cr_assert_eq(pulsarc_message_set_key_value(m, kv, "key", 3, value, 8), PULSARC_OK);
    cr_assert_eq(pulsarc_producer_send(producer, m, NULL), PULSARC_OK, "%s",
                 pulsarc_last_error_detail());
    /* A null value is no payload to check: an empty INT64 would not pass. */
    cr_assert_eq(pulsarc_message_set_key_value(m, kv, "key", 3, NULL, 0), PULSARC_OK);
    cr_assert_eq(pulsarc_producer_send(producer, m, NULL), PULSARC_OK, "%s",
                 pulsarc_last_error_detail());
    pulsarc_message_free(m);
    mock_send_t snd = h_get_send(mb, 0);
    cr_assert_str_eq(snd.metadata->partition_key, "a2V5");
    cr_assert(snd.metadata->has_partition_key_b64_encoded &&
              snd.metadata->partition_key_b64_encoded);
    cr_assert_not(snd.metadata->has_null_value && snd.metadata->null_value);
    cr_assert_eq(snd.payload_len, 8);
    cr_assert_eq(memcmp(snd.payload, value, 8), 0);
    mock_send_free(&snd);
    snd = h_get_send(mb, 1);
    cr_assert(snd.metadata->has_null_value && snd.metadata->null_value);
    cr_assert_eq(snd.payload_len, 0);
    mock_send_free(&snd);
    mock_producer_info_t info;
    mock_broker_last_producer(mb, &info);
    cr_assert_eq(info.schema_type, PULSAR__PROTO__SCHEMA__TYPE__KeyValue);
    cr_assert_str_eq(info.schema_name, "KeyValue");
    cr_assert_eq(info.n_schema_properties, 7);
    pulsarc_schema_free(k);
    pulsarc_schema_free(v);
    pulsarc_schema_free(kv);
    h_finish();
}

/* AUTO_PRODUCE: the topic's schema is fetched at creation (GET_SCHEMA), registered as the
 * producer's, and raw payloads are checked against it. */
Test(client_schema, auto_produce_takes_the_topic_schema)
{
    int64_t v;
    cr_assert_eq(mock_broker_register_schema(mb, H_TOPIC, PULSAR__PROTO__SCHEMA__TYPE__Json, DEF_V1,
                                             strlen(DEF_V1), &v),
                 0);
    client = h_client(NULL);
    pulsarc_schema_t *s;
    cr_assert_eq(pulsarc_schema_new_primitive(PULSARC_SCHEMA_AUTO_PRODUCE, &s), PULSARC_OK);
    producer = schema_producer(s, h_producer_conf(0, NULL));
    pulsarc_schema_free(s);
    cr_assert_eq(h_count(mb, MOCK_GET_SCHEMAS), 1);
    mock_producer_info_t info;
    cr_assert(mock_broker_last_producer(mb, &info));
    cr_assert(info.has_schema);
    cr_assert_eq(info.schema_type, PULSAR__PROTO__SCHEMA__TYPE__Json);
    cr_assert_eq(info.schema_data_len, strlen(DEF_V1));
    cr_assert_eq(pulsarc_producer_schema_version(producer), 0);
    pulsarc_message_t *m = pulsarc_message_new();
    pulsarc_message_set_payload(m, "not json", 8);
    cr_assert_eq(pulsarc_producer_send_async(producer, m, h_on_sent, &T.slots[0]),
                 PULSARC_ERR_INVALID_PAYLOAD);
    pulsarc_message_free(m);
    send_json(producer, 1, NULL);
    cr_assert(h_wait_calls(1, 5000));
    cr_assert_eq(T.res[1], PULSARC_OK);
    cr_assert_eq(h_count(mb, MOCK_SENDS), 1);
    cr_assert_eq(send_version(0), 0);
    h_finish();
}

/* A topic without a schema ("Topic not found or no-schema"): bytes go as they are. */
Test(client_schema, auto_produce_on_a_topic_without_schema_sends_bytes)
{
    client = h_client(NULL);
    pulsarc_schema_t *s;
    pulsarc_schema_new_primitive(PULSARC_SCHEMA_AUTO_PRODUCE, &s);
    producer = schema_producer(s, h_producer_conf(0, NULL));
    pulsarc_schema_free(s);
    cr_assert_eq(h_count(mb, MOCK_GET_SCHEMAS), 1);
    mock_producer_info_t info;
    cr_assert(mock_broker_last_producer(mb, &info));
    cr_assert_not(info.has_schema);
    cr_assert_eq(h_send(producer, 0), PULSARC_OK);
    cr_assert(h_wait_calls(1, 5000));
    cr_assert_eq(T.res[0], PULSARC_OK);
    cr_assert_eq(send_version(0), -1);
    h_finish();
}

/* While a message's schema has no version yet, it and every message after it wait, in
 * order (nothing is sent); a connection lost meanwhile means asking again once the
 * producer is registered on the new one. */
Test(client_schema, messages_wait_in_order_for_their_schema_version)
{
    client = h_client(NULL);
    pulsarc_schema_t *own = json_schema(DEF_V1), *other = json_schema(DEF_V2);
    producer = schema_producer(own, h_producer_conf(0, NULL));
    mock_broker_set_schema_ignore(mb, true);
    send_json(producer, 0, other);
    send_json(producer, 1, NULL);
    cr_assert(h_wait_count(mb, MOCK_GET_OR_CREATE_SCHEMAS, 1, 5000));
    h_settle(mb); /* message 1 would have been sent if it did not wait */
    cr_assert_eq(h_count(mb, MOCK_SENDS), 0);
    cr_assert_eq(h_total(), 0);
    mock_broker_set_schema_ignore(mb, false);
    mock_broker_cut_now(mb);
    cr_assert(h_wait_calls(2, 5000), "only %d of 2 callbacks", h_total());
    h_assert_each_once(2, PULSARC_OK);
    h_assert_order(2);
    cr_assert_eq(h_count(mb, MOCK_GET_OR_CREATE_SCHEMAS), 2, "asked again after the reconnect");
    cr_assert_eq(h_count(mb, MOCK_SENDS), 2);
    cr_assert_eq(send_version(0), 1);
    cr_assert_eq(send_version(1), 0);
    pulsarc_schema_free(own);
    pulsarc_schema_free(other);
    h_finish();
}
