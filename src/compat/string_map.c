/* pulsar_string_map_t: keys kept sorted, as libpulsar's std::map keeps them, so that the
 * index getters walk them in the same order. */
#include <stdlib.h>
#include <string.h>

#include "compat/compat.h"

pulsar_string_map_t *pulsar_string_map_create(void)
{
    return calloc(1, sizeof(pulsar_string_map_t));
}

void pulsar_string_map_free(pulsar_string_map_t *map)
{
    if (!map)
        return;
    for (size_t i = 0; i < map->n; i++) {
        free(map->keys[i]);
        free(map->values[i]);
    }
    free(map->keys);
    free(map->values);
    free(map);
}

int pulsar_string_map_size(pulsar_string_map_t *map)
{
    return map ? (int)map->n : 0;
}

/* The index of key, or of where it would go (*found 0). */
static size_t find(const pulsar_string_map_t *map, const char *key, int *found)
{
    size_t lo = 0, hi = map->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(map->keys[mid], key);
        if (c == 0) {
            *found = 1;
            return mid;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = 0;
    return lo;
}

void pulsar_string_map_put(pulsar_string_map_t *map, const char *key, const char *value)
{
    if (!map || !key || !value)
        return;
    int found;
    size_t i = find(map, key, &found);
    char *v = pc_compat_strdup(value);
    if (!v)
        return;
    if (found) {
        free(map->values[i]);
        map->values[i] = v;
        return;
    }
    char *k = pc_compat_strdup(key);
    if (!k) {
        free(k);
        free(v);
        return;
    }
    if (map->n == map->cap) {
        size_t cap = map->cap ? 2 * map->cap : 4;
        char **nk = realloc(map->keys, cap * sizeof *nk);
        char **nv = nk ? realloc(map->values, cap * sizeof *nv) : NULL;
        if (nk)
            map->keys = nk;
        if (!nv) {
            free(k);
            free(v);
            return;
        }
        map->values = nv;
        map->cap = cap;
    }
    memmove(map->keys + i + 1, map->keys + i, (map->n - i) * sizeof *map->keys);
    memmove(map->values + i + 1, map->values + i, (map->n - i) * sizeof *map->values);
    map->keys[i] = k;
    map->values[i] = v;
    map->n++;
}

const char *pulsar_string_map_get(pulsar_string_map_t *map, const char *key)
{
    if (!map || !key)
        return NULL;
    int found;
    size_t i = find(map, key, &found);
    return found ? map->values[i] : NULL;
}

const char *pulsar_string_map_get_key(pulsar_string_map_t *map, int idx)
{
    return map && idx >= 0 && (size_t)idx < map->n ? map->keys[idx] : NULL;
}

const char *pulsar_string_map_get_value(pulsar_string_map_t *map, int idx)
{
    return map && idx >= 0 && (size_t)idx < map->n ? map->values[idx] : NULL;
}

pulsar_string_map_t *pc_compat_map_copy(const pulsar_string_map_t *map)
{
    if (!map)
        return NULL;
    pulsar_string_map_t *c = pulsar_string_map_create();
    for (size_t i = 0; c && i < map->n; i++) {
        pulsar_string_map_put(c, map->keys[i], map->values[i]);
        if (c->n != i + 1) {
            pulsar_string_map_free(c);
            return NULL;
        }
    }
    return c;
}
