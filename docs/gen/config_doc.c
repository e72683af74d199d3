/* Renders the key tables of docs/configuration.md (see config_doc.h). */
#include "config_doc.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What a key takes, as the "values" column says it. */
static void values_of(const pc_config_key_t *k, char *out, size_t len)
{
    switch (k->type) {
    case PC_CONF_INT:
        if (k->max >= INT64_MAX / 2)
            snprintf(out, len, "integer, %" PRId64 " or more", k->min);
        else
            snprintf(out, len, "integer, %" PRId64 " .. %" PRId64, k->min, k->max);
        return;
    case PC_CONF_BOOL:
        snprintf(out, len, "true or false");
        return;
    case PC_CONF_STR:
    case PC_CONF_SECRET:
        snprintf(out, len, "%s, up to %" PRId64 " bytes",
                 k->type == PC_CONF_SECRET ? "text (a secret)" : "text", k->max);
        return;
    case PC_CONF_ENUM: {
        size_t used = 0;
        out[0] = '\0';
        for (size_t i = 0; k->names[i] && used < len; i++) {
            int w = snprintf(out + used, len - used, "%s`%s`", i ? ", " : "", k->names[i]);
            if (w > 0)
                used += (size_t)w;
        }
        return;
    }
    }
    snprintf(out, len, "?");
}

void pc_config_doc_line(const pc_config_key_t *k, char *out, size_t len)
{
    char values[256], def[128];
    values_of(k, values, sizeof values);
    if (k->def)
        snprintf(def, sizeof def, "`%s`", k->def);
    else
        snprintf(def, sizeof def, "(unset)");
    snprintf(out, len, "| `%s` | %s | %s | %s |", k->key, def, values, k->doc);
}

/* A growing string. */
typedef struct text {
    char *s;
    size_t len, cap;
    bool failed;
} text_t;

static void put(text_t *t, const char *s, size_t n)
{
    if (t->failed)
        return;
    if (t->len + n + 1 > t->cap) {
        size_t cap = t->cap ? t->cap : 4096;
        while (cap < t->len + n + 1)
            cap *= 2;
        char *s2 = realloc(t->s, cap);
        if (!s2) {
            t->failed = true;
            return;
        }
        t->s = s2;
        t->cap = cap;
    }
    memcpy(t->s + t->len, s, n);
    t->len += n;
    t->s[t->len] = '\0';
}

static void put_str(text_t *t, const char *s)
{
    put(t, s, strlen(s));
}

/* One table: the heading row, then a line per row of the client's or producer's table. */
static void put_table(text_t *t, bool (*row)(size_t, pc_config_key_t *))
{
    put_str(t, "| key | default | values | description |\n|---|---|---|---|\n");
    pc_config_key_t k;
    for (size_t i = 0; row(i, &k); i++) {
        char line[4096];
        pc_config_doc_line(&k, line, sizeof line);
        put_str(t, line);
        put_str(t, "\n");
    }
}

/* The start of the line that equals marker, at or after from; NULL when none. */
static const char *find_line(const char *from, const char *marker)
{
    size_t n = strlen(marker);
    for (const char *at = from; at && *at;) {
        if (!strncmp(at, marker, n) && (at[n] == '\n' || at[n] == '\0'))
            return at;
        const char *nl = strchr(at, '\n');
        at = nl ? nl + 1 : NULL;
    }
    return NULL;
}

char *pc_config_doc_update(const char *page, char *err, size_t errlen)
{
    static const struct {
        const char *marker;
        bool (*row)(size_t, pc_config_key_t *);
    } tables[] = {
        { PC_CONFIG_DOC_CLIENT, pc_client_config_key },
        { PC_CONFIG_DOC_PRODUCER, pc_producer_config_key },
    };
    text_t out = { 0 };
    const char *at = page;
    for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++) {
        const char *begin = find_line(at, tables[i].marker);
        const char *end = begin ? find_line(begin, PC_CONFIG_DOC_END) : NULL;
        if (!begin || !end) {
            snprintf(err, errlen, "no line \"%s\" followed by a line \"%s\"", tables[i].marker,
                     PC_CONFIG_DOC_END);
            free(out.s);
            return NULL;
        }
        /* Everything up to the marker's line as it is, then the table afresh. */
        put(&out, at, (size_t)(begin - at) + strlen(tables[i].marker) + 1);
        put_table(&out, tables[i].row);
        at = end;
    }
    put_str(&out, at);
    if (out.failed) {
        snprintf(err, errlen, "out of memory");
        free(out.s);
        return NULL;
    }
    return out.s;
}
