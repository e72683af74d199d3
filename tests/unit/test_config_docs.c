/* The configuration tables document themselves: docs/configuration.md carries each row's
 * line exactly as the table renders it (key, default, values, description) and nothing
 * else, and the public header's lists name every key with its default. A key added to
 * client/config.c without its documentation fails here; the failure prints the line to
 * paste. Also: the version macros and functions agree with CMakeLists.txt. */
#include <criterion/criterion.h>

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/config.h"
#include "pulsarc/pulsarc.h"

#define DOC_PATH PC_SOURCE_DIR "/docs/configuration.md"
#define HEADER_PATH PC_SOURCE_DIR "/include/pulsarc/pulsarc.h"

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = malloc((size_t)n + 1);
    cr_assert_not_null(text);
    cr_assert_eq(fread(text, 1, (size_t)n, f), (size_t)n);
    text[n] = '\0';
    fclose(f);
    return text;
}

/* Appends to a growing message (the report of every problem at once). */
typedef struct report {
    char text[16384];
    size_t used;
    int problems;
} report_t;

static void note(report_t *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(report_t *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (r->used < sizeof r->text) {
        int w = vsnprintf(r->text + r->used, sizeof r->text - r->used, fmt, ap);
        if (w > 0)
            r->used += (size_t)w;
    }
    va_end(ap);
    r->problems++;
}

/* What a key takes, as the documentation's "values" column says it. */
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

/* The row's line in docs/configuration.md. */
static void doc_line(const pc_config_key_t *k, char *out, size_t len)
{
    char values[256], def[128];
    values_of(k, values, sizeof values);
    if (k->def)
        snprintf(def, sizeof def, "`%s`", k->def);
    else
        snprintf(def, sizeof def, "(unset)");
    snprintf(out, len, "| `%s` | %s | %s | %s |", k->key, def, values, k->doc);
}

/* Every row of both tables, client first, in table order; returns how many. */
#define MAX_KEYS 128
static size_t all_keys(pc_config_key_t keys[MAX_KEYS])
{
    size_t n = 0;
    for (size_t i = 0; n < MAX_KEYS && pc_client_config_key(i, &keys[n]); i++)
        n++;
    for (size_t i = 0; n < MAX_KEYS && pc_producer_config_key(i, &keys[n]); i++)
        n++;
    cr_assert_lt(n, MAX_KEYS, "raise MAX_KEYS");
    return n;
}

/* The start of the line after the one at `at`, or NULL at the end. */
static const char *next_line(const char *at)
{
    const char *nl = strchr(at, '\n');
    return nl ? nl + 1 : NULL;
}

/* Whether text has a line that equals want. */
static bool has_line(const char *text, const char *want)
{
    size_t n = strlen(want);
    for (const char *at = text; at; at = next_line(at))
        if (!strncmp(at, want, n) && (at[n] == '\n' || at[n] == '\0'))
            return true;
    return false;
}

Test(config_docs, every_row_has_a_description)
{
    pc_config_key_t keys[MAX_KEYS];
    size_t n = all_keys(keys);
    cr_assert_gt(n, 30, "the iterator lists both tables");
    for (size_t i = 0; i < n; i++) {
        const pc_config_key_t *k = &keys[i];
        cr_assert(k->doc && strlen(k->doc) > 10, "%s: no description in the table", k->key);
        cr_assert(!strchr(k->doc, '|') && !strchr(k->doc, '\n'),
                  "%s: the description must fit a Markdown table cell", k->key);
        cr_assert_eq(k->doc[strlen(k->doc) - 1], '.', "%s: end the description with a "
                     "full stop", k->key);
    }
}

Test(config_docs, docs_configuration_md_carries_every_row_word_for_word)
{
    char *doc = read_text(DOC_PATH);
    pc_config_key_t keys[MAX_KEYS];
    size_t n = all_keys(keys);
    report_t r = { .used = 0 };
    for (size_t i = 0; i < n; i++) {
        char want[2048];
        doc_line(&keys[i], want, sizeof want);
        if (!has_line(doc, want))
            note(&r, "%s\n", want);
    }
    cr_expect_eq(r.problems, 0,
                 "docs/configuration.md lacks these lines, or has them otherwise (the "
                 "table in src/client/config.c is what they must say):\n%s", r.text);
    /* And it documents nothing the tables do not have. */
    report_t stale = { .used = 0 };
    for (const char *at = doc; at; at = next_line(at)) {
        if (strncmp(at, "| `", 3) != 0)
            continue;
        const char *name = at + 3;
        size_t len = strcspn(name, "`\n");
        bool known = false;
        for (size_t i = 0; i < n && !known; i++)
            known = strlen(keys[i].key) == len && !strncmp(keys[i].key, name, len);
        if (!known)
            note(&stale, "%.*s\n", (int)len, name);
    }
    cr_expect_eq(stale.problems, 0, "docs/configuration.md documents keys the tables do not "
                 "have:\n%s", stale.text);
    free(doc);
}

/* The header lists keys as " *   key   default   what it does": the key first on its
 * line. Returns what follows the key, or NULL when no line lists it. */
static const char *header_line_of(const char *header, const char *key)
{
    size_t n = strlen(key);
    for (const char *at = header; at; at = next_line(at)) {
        if (at[0] != ' ' || at[1] != '*')
            continue;
        const char *p = at + 2;
        while (*p == ' ')
            p++;
        if (!strncmp(p, key, n) && (p[n] == ' ' || p[n] == '\n'))
            return p + n;
    }
    return NULL;
}

Test(config_docs, the_header_lists_every_key_with_its_default)
{
    char *header = read_text(HEADER_PATH);
    pc_config_key_t keys[MAX_KEYS];
    size_t n = all_keys(keys);
    report_t r = { .used = 0 };
    for (size_t i = 0; i < n; i++) {
        const pc_config_key_t *k = &keys[i];
        const char *rest = header_line_of(header, k->key);
        if (!rest) {
            note(&r, "%s: not listed\n", k->key);
            continue;
        }
        while (*rest == ' ')
            rest++;
        /* The default is the next word. */
        size_t len = k->def ? strlen(k->def) : 0;
        if (k->def && (strncmp(rest, k->def, len) != 0 || (rest[len] != ' ' && rest[len] != '\n')))
            note(&r, "%s: listed without its default %s\n", k->key, k->def);
    }
    cr_expect_eq(r.problems, 0, "include/pulsarc/pulsarc.h (its configuration lists):\n%s",
                 r.text);
    free(header);
}

Test(config_docs, version_comes_from_cmakelists)
{
    cr_assert_str_eq(PULSARC_VERSION_STRING, PC_PROJECT_VERSION);
    cr_assert_str_eq(pulsarc_version_string(), PC_PROJECT_VERSION);
    unsigned major, minor, patch;
    cr_assert_eq(sscanf(PC_PROJECT_VERSION, "%u.%u.%u", &major, &minor, &patch), 3);
    cr_assert_eq(PULSARC_VERSION, (int)(major * 10000 + minor * 100 + patch));
    cr_assert_eq(pulsarc_version(), PULSARC_VERSION);
    cr_assert_eq(PULSARC_VERSION_MAJOR, (int)major);
    cr_assert_eq(PULSARC_VERSION_MINOR, (int)minor);
    cr_assert_eq(PULSARC_VERSION_PATCH, (int)patch);
}
