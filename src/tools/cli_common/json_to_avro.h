/*
 * json_to_avro — one JSON document to Avro binary against an Avro schema definition, so
 * the command-line tools can publish AVRO records typed as JSON.
 *
 * The JSON is read as the Avro specification's JSON encoding, with two conveniences:
 * a union value may be given bare (the first branch its JSON type fits is taken) as well
 * as {"branch-type": value}, and a missing record field is null when its type is a union
 * with null. bytes and fixed are JSON strings of code points 0-255.
 *
 * Needs avro-c (libavro-dev) at build time; without it json_to_avro_available() is false
 * and json_to_avro_new fails with a message saying so.
 */
#ifndef PULSARC_TOOLS_JSON_TO_AVRO_H
#define PULSARC_TOOLS_JSON_TO_AVRO_H

#include <stdbool.h>
#include <stddef.h>

struct json_to_avro;

/* Parses the Avro schema definition. Returns 0, or -1 with the reason in err. */
int json_to_avro_new(const char *definition, size_t len, struct json_to_avro **out, char *err,
                     size_t err_len);

/* Converts one JSON document into *out (malloc'ed, *out_len bytes). Returns 0, or -1 with
 * the reason (with the path of the offending field) in err. */
int json_to_avro_convert(struct json_to_avro *conv, const char *json, size_t len, char **out,
                         size_t *out_len, char *err, size_t err_len);

void json_to_avro_free(struct json_to_avro *conv);

bool json_to_avro_available(void);

#endif
