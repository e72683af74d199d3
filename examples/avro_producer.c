/*
 * avro_producer — publish Avro records to a topic with a registered AVRO schema.
 *
 *   avro_producer [SERVICE_URL [TOPIC]]
 *   (defaults: pulsar://localhost:6650 and persistent://public/default/pulsarc-avro-example)
 *
 * The payload of an AVRO message is the record in Avro binary encoding, without any
 * header. Real programs get those bytes from an Avro library (avro-c's avro_value_write,
 * for instance); this example writes them by hand for a small record, so it needs
 * nothing but pulsarc:
 *
 *   {"type": "record", "name": "Reading", "fields": [
 *       {"name": "sensor", "type": "string"}, {"name": "celsius", "type": "int"}]}
 *
 * is a string (zig-zag varint length, then the UTF-8 bytes) followed by an int (zig-zag
 * varint). When pulsarc was built with avro-c, every send checks the bytes against the
 * definition; pulsarc_schema_avro_validation_available() tells.
 *
 * A Python consumer reads them as records:
 *   class Reading(Record):
 *       sensor = String(required=True)
 *       celsius = Integer(required=True)
 *   consumer = client.subscribe(topic, "sub", schema=AvroSchema(Reading))
 *
 * Build: cc avro_producer.c $(pkg-config --cflags --libs pulsarc)
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <pulsarc/pulsarc.h>

static const char READING_DEFINITION[] =
    "{\"type\": \"record\", \"name\": \"Reading\", \"fields\": ["
    "{\"name\": \"sensor\", \"type\": \"string\"}, {\"name\": \"celsius\", \"type\": \"int\"}]}";

/* Avro's int and long: zig-zag, then 7 bits per byte, low bits first. */
static size_t put_varint(uint8_t *out, int64_t v)
{
    uint64_t z = ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
    size_t n = 0;
    do {
        out[n++] = (uint8_t)((z & 0x7f) | (z > 0x7f ? 0x80 : 0));
        z >>= 7;
    } while (z);
    return n;
}

/* One Reading record; out needs 20 bytes more than the sensor name. */
static size_t encode_reading(uint8_t *out, const char *sensor, int32_t celsius)
{
    size_t len = strlen(sensor);
    size_t n = put_varint(out, (int64_t)len);
    memcpy(out + n, sensor, len);
    n += len;
    return n + put_varint(out + n, celsius);
}

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
    const char *topic = argc > 2 ? argv[2] : "persistent://public/default/pulsarc-avro-example";

    pulsarc_schema_t *schema = NULL;
    pulsarc_result res = pulsarc_schema_new_avro(READING_DEFINITION, &schema);
    if (res != PULSARC_OK) {
        print_error("pulsarc_schema_new_avro", res);
        return 1;
    }
    pulsarc_producer_config_t *conf = pulsarc_producer_config_new();
    res = conf ? pulsarc_producer_config_set_schema(conf, schema) : PULSARC_ERR_NO_MEMORY;
    pulsarc_schema_free(schema); /* the configuration keeps its own reference */
    pulsarc_client_t *client = NULL;
    if (res == PULSARC_OK)
        res = pulsarc_client_new(service_url, NULL, &client);
    pulsarc_producer_t *producer = NULL;
    if (res == PULSARC_OK)
        res = pulsarc_client_create_producer(client, topic, conf, &producer);
    pulsarc_producer_config_free(conf);
    if (res != PULSARC_OK) {
        print_error("creating the producer", res);
        if (client)
            pulsarc_client_destroy(client);
        return 1;
    }
    printf("schema version %lld on %s; payloads %s checked against the definition\n",
           (long long)pulsarc_producer_schema_version(producer), topic,
           pulsarc_schema_avro_validation_available() ? "are" : "are not");

    const struct {
        const char *sensor;
        int32_t celsius;
    } readings[] = { { "kitchen", 21 }, { "cellar", -3 }, { "attic", 34 } };
    int status = 0;
    pulsarc_message_t *msg = pulsarc_message_new();
    if (!msg)
        status = 1;
    for (size_t i = 0; msg && i < sizeof readings / sizeof readings[0]; i++) {
        uint8_t payload[64];
        size_t len = encode_reading(payload, readings[i].sensor, readings[i].celsius);
        pulsarc_message_set_payload(msg, payload, len);
        res = pulsarc_producer_send(producer, msg, NULL);
        if (res != PULSARC_OK) {
            print_error("pulsarc_producer_send", res);
            status = 1;
            break;
        }
        printf("sent %s %d\n", readings[i].sensor, readings[i].celsius);
    }
    pulsarc_message_free(msg);
    pulsarc_producer_close(producer);
    pulsarc_producer_free(producer);
    pulsarc_client_destroy(client);
    return status;
}
