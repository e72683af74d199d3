/* The named types (record, error, enum, fixed) an Avro definition declares, by full name
 * (the Avro specification's rules: a dotted name, else the "namespace" attribute, else
 * the enclosing namespace). avro-c refuses a definition that declares one full name twice
 * but leaks the half-built schema when it does, and a schema definition may come from a
 * broker: such definitions are refused here, before avro-c sees them. */
#ifndef PC_AVRO_NAMES_H
#define PC_AVRO_NAMES_H

#include <stdbool.h>
#include <stddef.h>

/* True when the JSON definition declares a full name twice; the first such name is
 * written to dup (truncated to dup_cap). False for anything else, invalid JSON included
 * (avro-c judges that). */
bool pc_avro_declares_a_name_twice(const char *definition, size_t len, char *dup, size_t dup_cap);

#endif
