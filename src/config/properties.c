#include "config/properties.h"

#include <stdlib.h>
#include <string.h>

#include "common/error.h"

pulsarc_result pc_props_set(pc_property_t **items, size_t *n, size_t *cap, const char *key,
                            const char *value)
{
    if (!key || !*key || !value)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT,
                       "a property needs a non-empty name and a value");
    for (size_t i = 0; i < *n; i++) {
        if (!strcmp((*items)[i].key, key)) {
            char *v = strdup(value);
            if (!v)
                return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
            free((*items)[i].value);
            (*items)[i].value = v;
            return PULSARC_OK;
        }
    }
    if (*n == *cap) {
        size_t grown = *cap ? *cap * 2 : 4;
        pc_property_t *p = realloc(*items, grown * sizeof *p);
        if (!p)
            return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
        *items = p;
        *cap = grown;
    }
    char *k = strdup(key), *v = strdup(value);
    if (!k || !v) {
        free(k);
        free(v);
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    }
    (*items)[*n].key = k;
    (*items)[*n].value = v;
    (*n)++;
    return PULSARC_OK;
}

const char *pc_props_get(const pc_property_t *items, size_t n, const char *key)
{
    if (!key)
        return NULL;
    for (size_t i = 0; i < n; i++)
        if (!strcmp(items[i].key, key))
            return items[i].value;
    return NULL;
}

int pc_props_copy(pc_property_t **items, size_t *n, size_t *cap)
{
    const pc_property_t *from = *items;
    size_t count = *n;
    *items = NULL;
    *n = *cap = 0;
    if (count == 0)
        return 0;
    pc_property_t *to = malloc(count * sizeof *to);
    if (!to)
        return -1;
    *items = to;
    *cap = count;
    for (size_t i = 0; i < count; i++) {
        to[i].key = strdup(from[i].key);
        to[i].value = strdup(from[i].value);
        if (!to[i].key || !to[i].value) {
            free(to[i].key);
            free(to[i].value);
            return -1;
        }
        (*n)++;
    }
    return 0;
}

void pc_props_clear(pc_property_t **items, size_t *n, size_t *cap)
{
    for (size_t i = 0; i < *n; i++) {
        free((*items)[i].key);
        free((*items)[i].value);
    }
    free(*items);
    *items = NULL;
    *n = *cap = 0;
}
