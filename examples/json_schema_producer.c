/*
 * json_schema_producer — publish JSON records to a topic with a registered JSON schema,
 * so typed consumers (Java, Python, Go) read them as records.
 *
 *   json_schema_producer [SERVICE_URL [TOPIC]]
 *   (defaults: pulsar://localhost:6650 and persistent://public/default/pulsarc-json-example)
 *
 * It shows:
 *   1. a JSON schema from an Avro record definition (what every official client registers
 *      for JSON), given to the producer configuration;
 *   2. the schema version the broker assigned (every message carries it);
 *   3. sending JSON documents, and a broken one refused before it is sent.
 *
 * A Python consumer reads the messages as records:
 *   class User(Record):
 *       name = String()
 *       age = Integer()
 *   consumer = client.subscribe(topic, "sub", schema=JsonSchema(User))
 *
 * Build: cc json_schema_producer.c $(pkg-config --cflags --libs pulsarc)
 */
#include <stdio.h>
#include <string.h>

#include <pulsarc/pulsarc.h>

/* The record's Avro definition, as the Python client's JsonSchema(User) writes it. */
static const char USER_DEFINITION[] = "{\"type\": \"record\", \"name\": \"User\", \"fields\": ["
                                      "{\"name\": \"name\", \"type\": [\"null\", \"string\"]}, "
                                      "{\"name\": \"age\", \"type\": [\"null\", \"int\"]}]}";

static void print_error(const char *what, pulsarc_result res)
{
    char detail[512]; /* valid only until the next pulsarc call: copy it first */
    snprintf(detail, sizeof detail, "%s", pulsarc_last_error_detail());
    fprintf(stderr, "%s: %s [%s]%s%s\n", what, pulsarc_strerror(res), pulsarc_result_name(res),
            detail[0] ? ": " : "", detail);
}

int main(int argc, char **argv)
{
    const char *service_url = argc > 1 ? argv[1] : "pulsar://localhost:6650";
    const char *topic = argc > 2 ? argv[2] : "persistent://public/default/pulsarc-json-example";

    /* 1. The schema. The configuration keeps its own reference, so it is freed at once. */
    pulsarc_schema_t *schema = NULL;
    pulsarc_result res = pulsarc_schema_new_json(USER_DEFINITION, &schema);
    if (res != PULSARC_OK) {
        print_error("pulsarc_schema_new_json", res);
        return 1;
    }
    pulsarc_producer_config_t *conf = pulsarc_producer_config_new();
    res = conf ? pulsarc_producer_config_set_schema(conf, schema) : PULSARC_ERR_NO_MEMORY;
    pulsarc_schema_free(schema);
    if (res != PULSARC_OK) {
        print_error("pulsarc_producer_config_set_schema", res);
        pulsarc_producer_config_free(conf);
        return 1;
    }

    pulsarc_client_t *client = NULL;
    res = pulsarc_client_new(service_url, NULL, &client);
    if (res != PULSARC_OK) {
        print_error("pulsarc_client_new", res);
        pulsarc_producer_config_free(conf);
        return 1;
    }
    /* 2. Creating the producer registers the schema. A topic whose schema is
     * incompatible with it refuses: PULSARC_ERR_BROKER_INCOMPATIBLE_SCHEMA, with the
     * broker's explanation as the detail. */
    pulsarc_producer_t *producer = NULL;
    res = pulsarc_client_create_producer(client, topic, conf, &producer);
    pulsarc_producer_config_free(conf);
    if (res != PULSARC_OK) {
        print_error("pulsarc_client_create_producer", res);
        pulsarc_client_destroy(client);
        return 1;
    }
    printf("schema version %lld on %s\n", (long long)pulsarc_producer_schema_version(producer),
           topic);

    /* 3. The payload is the JSON document itself. The last one is not JSON: the send
     * refuses it with PULSARC_ERR_INVALID_PAYLOAD and nothing reaches the broker
     * (producer setting schemaValidationEnabled=false turns that check off). */
    const char *documents[] = {
        "{\"name\": \"ann\", \"age\": 31}",
        "{\"name\": \"bob\", \"age\": null}",
        "{\"name\": \"broken",
    };
    pulsarc_message_t *msg = pulsarc_message_new();
    int status = msg ? 0 : 1;
    for (size_t i = 0; msg && i < sizeof documents / sizeof documents[0]; i++) {
        pulsarc_message_set_payload(msg, documents[i], strlen(documents[i]));
        res = pulsarc_producer_send(producer, msg, NULL);
        if (res == PULSARC_OK) {
            printf("sent %s\n", documents[i]);
        } else {
            print_error("pulsarc_producer_send", res);
            if (res != PULSARC_ERR_INVALID_PAYLOAD || i != 2)
                status = 1; /* only the broken document was meant to fail */
        }
    }
    pulsarc_message_free(msg);
    pulsarc_producer_close(producer);
    pulsarc_producer_free(producer);
    pulsarc_client_destroy(client);
    return status;
}
