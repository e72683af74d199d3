/*
 * config_hint — what a tool can add when the library refuses a setting, from the
 * library's own lists of keys and enumerated values (pulsarc_*_config_key_name and
 * _key_value): the values an enumerated key takes, the key a misspelt one most likely
 * meant, and whether a key belongs to the other configuration (the client's or the
 * producer's). Nothing here knows a key by name, so the hints cannot drift from what
 * the library accepts.
 */
#ifndef PULSARC_TOOLS_CONFIG_HINT_H
#define PULSARC_TOOLS_CONFIG_HINT_H

#include <stdbool.h>
#include <stddef.h>

enum conf_kind { CONF_CLIENT, CONF_PRODUCER };

/* "client" or "producer". */
const char *conf_kind_name(enum conf_kind kind);

/* Whether key is a key of kind's configuration. */
bool conf_has_key(enum conf_kind kind, const char *key);

/* The values of kind's enumerated key, as "none, lz4, zlib" in out; false (out "") when
 * key is not an enumerated key of kind. */
bool conf_key_values(enum conf_kind kind, const char *key, char *out, size_t size);

/* The key of either configuration that key most likely misspells: the nearest by edit
 * distance, case ignored, when at most about a third of its letters differ; NULL
 * otherwise. *kind says whose key it is. */
const char *conf_nearest_key(const char *key, enum conf_kind *kind);

#endif
