/** @file
 * pulsarc-compat: a list of strings. */
#ifndef PULSARC_COMPAT_PULSAR_C_STRING_LIST_H
#define PULSARC_COMPAT_PULSAR_C_STRING_LIST_H

#include <pulsar/defines.h>

#ifdef __cplusplus
extern "C" {
#endif

/** A list, opaque. */
typedef struct _pulsar_string_list pulsar_string_list_t;

/** An empty list (NULL when out of memory). */
PULSAR_PUBLIC pulsar_string_list_t *pulsar_string_list_create(void);
/** Frees the list and its strings (NULL: nothing). */
PULSAR_PUBLIC void pulsar_string_list_free(pulsar_string_list_t *list);
/** The number of strings. */
PULSAR_PUBLIC int pulsar_string_list_size(pulsar_string_list_t *list);
/** Appends a copy of item. */
PULSAR_PUBLIC void pulsar_string_list_append(pulsar_string_list_t *list, const char *item);
/** The string at index, or NULL out of range; valid until the list is freed. */
PULSAR_PUBLIC const char *pulsar_string_list_get(pulsar_string_list_t *list, int index);

#ifdef __cplusplus
}
#endif

#endif
