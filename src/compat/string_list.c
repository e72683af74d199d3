/* pulsar_string_list_t: strings in the order appended. */
#include <stdlib.h>

#include "compat/compat.h"

pulsar_string_list_t *pulsar_string_list_create(void)
{
    return calloc(1, sizeof(pulsar_string_list_t));
}

void pulsar_string_list_free(pulsar_string_list_t *list)
{
    if (!list)
        return;
    for (size_t i = 0; i < list->n; i++)
        free(list->items[i]);
    free(list->items);
    free(list);
}

int pulsar_string_list_size(pulsar_string_list_t *list)
{
    return list ? (int)list->n : 0;
}

void pulsar_string_list_append(pulsar_string_list_t *list, const char *item)
{
    if (!list || !item)
        return;
    if (list->n == list->cap) {
        size_t cap = list->cap ? 2 * list->cap : 4;
        char **items = realloc(list->items, cap * sizeof *items);
        if (!items)
            return;
        list->items = items;
        list->cap = cap;
    }
    char *c = pc_compat_strdup(item);
    if (c)
        list->items[list->n++] = c;
}

const char *pulsar_string_list_get(pulsar_string_list_t *list, int index)
{
    return list && index >= 0 && (size_t)index < list->n ? list->items[index] : NULL;
}
