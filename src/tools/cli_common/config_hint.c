/* Hints for refused settings from the library's key and value lists (config_hint.h). */
#include "config_hint.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include <pulsarc/pulsarc.h>

/* Longer keys are not compared: no key of the library is near that long. */
#define KEY_MAX 64

static const char *key_name(enum conf_kind kind, size_t i)
{
    return kind == CONF_CLIENT ? pulsarc_client_config_key_name(i)
                               : pulsarc_producer_config_key_name(i);
}

static const char *key_value(enum conf_kind kind, const char *key, size_t i)
{
    return kind == CONF_CLIENT ? pulsarc_client_config_key_value(key, i)
                               : pulsarc_producer_config_key_value(key, i);
}

const char *conf_kind_name(enum conf_kind kind)
{
    return kind == CONF_CLIENT ? "client" : "producer";
}

bool conf_has_key(enum conf_kind kind, const char *key)
{
    const char *k;
    for (size_t i = 0; (k = key_name(kind, i)); i++)
        if (strcmp(k, key) == 0)
            return true;
    return false;
}

bool conf_key_values(enum conf_kind kind, const char *key, char *out, size_t size)
{
    size_t used = 0;
    const char *v;
    out[0] = '\0';
    for (size_t i = 0; (v = key_value(kind, key, i)) && used < size; i++) {
        int n = snprintf(out + used, size - used, "%s%s", i ? ", " : "", v);
        used += n > 0 ? (size_t)n : 0;
    }
    return out[0] != '\0';
}

/* Levenshtein distance between a and b (both at most KEY_MAX long), case ignored. */
static size_t edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b), row[KEY_MAX + 1];
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diagonal = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t above = row[j];
            size_t change = diagonal +
                            (tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]));
            size_t best = above + 1 < row[j - 1] + 1 ? above + 1 : row[j - 1] + 1;
            row[j] = change < best ? change : best;
            diagonal = above;
        }
    }
    return row[lb];
}

const char *conf_nearest_key(const char *key, enum conf_kind *kind)
{
    size_t len = strlen(key);
    if (len > KEY_MAX)
        return NULL;
    const char *best = NULL;
    size_t limit = len / 3 > 0 ? len / 3 : 1; /* a third of its letters, at least one */
    size_t best_distance = limit + 1;
    const enum conf_kind kinds[] = { CONF_PRODUCER, CONF_CLIENT };
    for (size_t t = 0; t < 2; t++) {
        const char *k;
        for (size_t i = 0; (k = key_name(kinds[t], i)); i++) {
            size_t d = strlen(k) <= KEY_MAX ? edit_distance(key, k) : KEY_MAX;
            if (d < best_distance) {
                best = k;
                best_distance = d;
                *kind = kinds[t];
            }
        }
    }
    return best;
}
