/** @file
 * pulsarc-compat: a map of strings to strings, ordered by key (as libpulsar's). */
#ifndef PULSARC_COMPAT_PULSAR_C_STRING_MAP_H
#define PULSARC_COMPAT_PULSAR_C_STRING_MAP_H

#include <pulsar/defines.h>

#ifdef __cplusplus
extern "C" {
#endif

/** A map, opaque. */
typedef struct _pulsar_string_map pulsar_string_map_t;

/** An empty map (NULL when out of memory). */
PULSAR_PUBLIC pulsar_string_map_t *pulsar_string_map_create(void);
/** Frees the map and its strings (NULL: nothing). */
PULSAR_PUBLIC void pulsar_string_map_free(pulsar_string_map_t *map);
/** The number of keys. */
PULSAR_PUBLIC int pulsar_string_map_size(pulsar_string_map_t *map);
/** Sets key to value (both copied; a key already there gets the new value). */
PULSAR_PUBLIC void pulsar_string_map_put(pulsar_string_map_t *map, const char *key,
                                         const char *value);
/** The value of key, or NULL; valid until the map changes or is freed. */
PULSAR_PUBLIC const char *pulsar_string_map_get(pulsar_string_map_t *map, const char *key);
/** The key at idx (0 .. size-1, in key order), or NULL out of range. */
PULSAR_PUBLIC const char *pulsar_string_map_get_key(pulsar_string_map_t *map, int idx);
/** The value at idx (0 .. size-1, in key order), or NULL out of range. */
PULSAR_PUBLIC const char *pulsar_string_map_get_value(pulsar_string_map_t *map, int idx);

#ifdef __cplusplus
}
#endif

#endif
