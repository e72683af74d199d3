/* Schema descriptions (the public pulsarc_schema_t): what a producer registers with the
 * broker's schema registry, laid out as the Java client lays it out, and the checks a
 * payload must pass to be sent with it.
 *   schema.c           constructors, properties, accessors, reference counting, hashing
 *   schema_kv.c        KeyValue schemas and the KeyValue payload layouts
 *   schema_encode.c    Java-compatible value encoders
 *   schema_validate.c  payload checks (UTF-8, JSON, widths, KeyValue)
 *   schema_avro.c      Avro payload checks (avro-c, when the build found it)
 *   avro_names.c       named types declared twice, refused before avro-c sees them
 * The protocol's Schema message is filled in producer/ (this layer has no protobuf).
 * A schema is immutable once frozen (given to a configuration or a message), so any
 * thread may read it then; references are counted atomically. */
#ifndef PC_SCHEMA_H
#define PC_SCHEMA_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pulsarc/pulsarc.h"

/* The longest schema version accepted from a broker: 8 bytes today, 64 before 2.4. */
#define PC_SCHEMA_VERSION_MAX 64

typedef struct pc_schema_prop {
    char *key;
    char *value;
} pc_schema_prop_t;

struct pc_avro_check;

struct pulsarc_schema {
    atomic_int refs;
    atomic_bool frozen;
    pulsarc_schema_type type;
    char *name;
    uint8_t *data; /* schema_data, NUL-terminated for convenience */
    size_t len;
    pc_schema_prop_t *props;
    size_t n_props, cap_props;
    /* KEY_VALUE: the parts (owned references) and the layout. */
    pulsarc_key_value_encoding kv_encoding;
    pulsarc_schema_t *kv_key, *kv_value;
    /* AVRO/JSON with avro-c: the parsed definition for payload checks (NULL otherwise). */
    struct pc_avro_check *avro;
};

typedef pulsarc_schema_t pc_schema_t;

/* Take another reference, freezing the schema (NULL passes through). */
pc_schema_t *pc_schema_ref(const pc_schema_t *s);
/* Drop a reference (NULL is fine). */
void pc_schema_unref(pc_schema_t *s);

/* Same type, name, definition and properties (in any order). */
bool pc_schema_equal(const pc_schema_t *a, const pc_schema_t *b);
/* A hash of what pc_schema_equal compares (property order does not matter). */
uint64_t pc_schema_hash(const pc_schema_t *s);

/* A schema of any type with an empty property list; data is copied. No checks. */
pc_schema_t *pc_schema_alloc(pulsarc_schema_type type, const char *name, const void *data,
                             size_t len);
/* Add a property without the frozen check (building). Returns 0 or -1. */
int pc_schema_put_property(pc_schema_t *s, const char *key, const char *value);
/* The Java client's name for a type without definition ("String", "INT32", ...). */
const char *pc_schema_default_name(pulsarc_schema_type type);
/* The width in bytes of a fixed-width type's values; 0 for the others. */
size_t pc_schema_fixed_width(pulsarc_schema_type type);
/* Whether a schema of this type is sent to the broker (all but BYTES and AUTO_PRODUCE). */
bool pc_schema_is_registered(const pc_schema_t *s);

/* schema_kv.c */
/* The Java properties map serialisation (Gson, sorted keys, HTML-safe escapes) of s's
 * properties, as KeyValue schemas carry their parts' properties. malloc'ed; NULL when out
 * of memory. */
char *pc_schema_props_json(const pc_schema_t *s);
/* Parse a KEY_VALUE schema as the registry holds it (schema_data and properties) into
 * its parts. PULSARC_OK, or PULSARC_ERR_PROTOCOL with a detail when it is malformed. */
pulsarc_result pc_schema_kv_split(pc_schema_t *kv);
/* INLINE layout of one key/value pair; a NULL part (length 0) is written as -1. */
pulsarc_result pc_schema_kv_inline(const void *key, size_t key_len, const void *value,
                                   size_t value_len, uint8_t **out, size_t *out_len);

/* schema_validate.c */
/* Check payload against s (see "Payload checks" in pulsarc.h). PULSARC_OK or
 * PULSARC_ERR_INVALID_PAYLOAD with the detail set. */
pulsarc_result pc_schema_check(const pc_schema_t *s, const void *payload, size_t len);
/* Strict UTF-8: no overlong forms, surrogates or code points above U+10FFFF. On failure
 * *bad is the offset of the first bad byte. */
bool pc_utf8_valid(const uint8_t *p, size_t len, size_t *bad);

/* schema_avro.c */
/* Parse an AVRO/JSON definition: PULSARC_OK with *out set (NULL when avro-c is not built
 * in), or PULSARC_ERR_INVALID_ARGUMENT with avro-c's complaint. */
pulsarc_result pc_avro_check_new(const char *definition, size_t len, struct pc_avro_check **out);
void pc_avro_check_free(struct pc_avro_check *c);
/* Whether payload is exactly one datum of the definition. PULSARC_OK or
 * PULSARC_ERR_INVALID_PAYLOAD with the detail set. */
pulsarc_result pc_avro_check_payload(const struct pc_avro_check *c, const void *payload,
                                     size_t len);

#endif
