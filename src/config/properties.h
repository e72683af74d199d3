/* A list of string properties (key and value, keys unique, in the order first set): a
 * message's properties and a producer's (CommandProducer.metadata). The list is three
 * fields of its owner (items, count, capacity), so that pc_msg_t and the configuration
 * keep their plain layout. */
#ifndef PC_PROPERTIES_H
#define PC_PROPERTIES_H

#include <stddef.h>

#include "producer/message.h"
#include "pulsarc/pulsarc.h"

/* Sets key to value (both copied); a key already there gets the new value.
 * PULSARC_ERR_INVALID_ARGUMENT for a NULL or empty key or a NULL value (detail set),
 * PULSARC_ERR_NO_MEMORY. */
pulsarc_result pc_props_set(pc_property_t **items, size_t *n, size_t *cap, const char *key,
                            const char *value);
/* Value of key, or NULL. */
const char *pc_props_get(const pc_property_t *items, size_t n, const char *key);
/* Replace a shallow copy (items shared with another list) by one of its own. Returns 0, or
 * -1 when out of memory: the list then holds what could be copied, so it clears safely. */
int pc_props_copy(pc_property_t **items, size_t *n, size_t *cap);
/* Free every entry and the array; the list is empty again. */
void pc_props_clear(pc_property_t **items, size_t *n, size_t *cap);

#endif
