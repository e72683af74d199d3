/*
 * schema_input — the schema flags of the command-line tools, and the conversion of the
 * text a user types (-m values, --stdin lines, keys) into the bytes that schema wants.
 *
 *   --schema-type TYPE     the value schema: bytes (default: no schema), string, json, avro,
 *                          protobuf, protobuf_native, boolean, int8 .. int64, float, double,
 *                          date, time, timestamp, local_date, local_time, auto_produce
 *   --schema-file FILE     its definition (an Avro schema in JSON for json and avro)
 *   --schema-name NAME     its name (default: the one the Java client gives)
 *   --kv-encoding ENC      inline | separated: a KeyValue schema whose value part is the
 *                          above and whose key part is --key-schema-type/--key-schema-file
 *                          (default string); the message key (-k, --key-separator) is the
 *                          KeyValue key
 *   pulsar-client's -vs/--value-schema and -ks/--key-schema take TYPE or TYPE:DEFINITION
 *   (the definition inline, e.g. "avro:{...}"), -kvet/--key-value-encoding-type is
 *   --kv-encoding.
 *
 * Text conversion (schema_input_message): string, json, bytes, protobuf and auto_produce
 * take the text as it is; the numeric types parse a decimal number, boolean "true" or
 * "false", and write them as the Java client does; avro parses one JSON document and
 * writes it as Avro binary against the definition (needs avro-c at build time: see
 * json_to_avro.h). Files (-f) are never converted: they hold encoded bytes.
 *
 * Uses the public pulsarc API only.
 */
#ifndef PULSARC_TOOLS_SCHEMA_INPUT_H
#define PULSARC_TOOLS_SCHEMA_INPUT_H

#include <stdbool.h>
#include <stddef.h>

#include <pulsarc/pulsarc.h>

/* The flags as given; NULL: not given. */
struct schema_flags {
    const char *type, *file, *name;
    const char *kv_encoding;
    const char *key_type, *key_file;
    const char *definition, *key_definition; /* inline, from -vs/-ks TYPE:DEFINITION */
};

/* The flags' long names, for the option table of a tool: schema_flags_set takes them. */
#define SCHEMA_FLAG_TYPE "schema-type"
#define SCHEMA_FLAG_FILE "schema-file"
#define SCHEMA_FLAG_NAME "schema-name"
#define SCHEMA_FLAG_KV_ENCODING "kv-encoding"
#define SCHEMA_FLAG_KEY_TYPE "key-schema-type"
#define SCHEMA_FLAG_KEY_FILE "key-schema-file"
#define SCHEMA_FLAG_VALUE_SCHEMA "value-schema"                /* pulsar-client's -vs */
#define SCHEMA_FLAG_KEY_SCHEMA "key-schema"                    /* pulsar-client's -ks */
#define SCHEMA_FLAG_KV_ENCODING_TYPE "key-value-encoding-type" /* pulsar-client's -kvet */

/* Records one schema flag (by its long name). Returns false when name is not one. */
bool schema_flags_set(struct schema_flags *flags, const char *name, const char *arg);

struct schema_input;

/* Builds the schema the flags describe. *out is NULL when they describe none (bytes).
 * Returns 0, or -1 with the reason in err. */
int schema_input_new(const struct schema_flags *flags, struct schema_input **out, char *err,
                     size_t err_len);
void schema_input_free(struct schema_input *in);

/* The schema for the producer configuration. */
const pulsarc_schema_t *schema_input_schema(const struct schema_input *in);
/* Whether messages are KeyValue pairs (then send with pulsarc_message_set_key_value). */
bool schema_input_is_key_value(const struct schema_input *in);

/* One message as the schema wants it: the payload converted unless raw (files and
 * --size hold encoded bytes), and for a KeyValue schema the key converted by the key
 * schema. Points at the caller's bytes where nothing was converted. */
struct schema_message {
    const char *data;
    size_t len;
    const char *key; /* NULL: none */
    size_t key_len;
    char *own_data, *own_key; /* what schema_message_free frees */
};

/* Fills out for payload text (len bytes) and key (NUL-terminated, may be NULL). Returns 0,
 * or -1 with the reason in err (out then owns nothing). */
int schema_input_message(const struct schema_input *in, const char *text, size_t len, bool raw,
                         const char *key, struct schema_message *out, char *err, size_t err_len);
void schema_message_free(struct schema_message *msg);

#endif
