/* The configuration tables document themselves: docs/configuration.md's key tables are
 * what docs/gen/ renders from the tables (key, default, values, description), the page
 * names no key the tables lack, and the public header points to that page. A key added to
 * config/config.c without its documentation fails here. Also: the version macros and
 * functions agree with CMakeLists.txt. */
#include <criterion/criterion.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "config_doc.h"
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
        cr_assert_eq(k->doc[strlen(k->doc) - 1], '.',
                     "%s: end the description with a "
                     "full stop",
                     k->key);
    }
}

Test(config_docs, docs_configuration_md_is_generated_from_the_tables)
{
    char *doc = read_text(DOC_PATH);
    char err[256];
    char *fresh = pc_config_doc_update(doc, err, sizeof err);
    cr_assert_not_null(fresh, "docs/configuration.md: %s", err);
    if (strcmp(doc, fresh) != 0) {
        /* The first line that differs, as the page has it and as the tables say it. */
        const char *a = doc, *b = fresh;
        const char *line_a = a, *line_b = b;
        for (; *a && *a == *b; a++, b++)
            if (*a == '\n') {
                line_a = a + 1;
                line_b = b + 1;
            }
        cr_assert_fail("docs/configuration.md is not what the configuration tables say; run "
                       "`cmake --build build --target config-doc`. First difference:\n"
                       "page:   %.*s\ntables: %.*s",
                       (int)strcspn(line_a, "\n"), line_a, (int)strcspn(line_b, "\n"), line_b);
    }
    free(fresh);
    pc_config_key_t keys[MAX_KEYS];
    size_t n = all_keys(keys);
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
    cr_expect_eq(stale.problems, 0,
                 "docs/configuration.md documents keys the tables do not "
                 "have:\n%s",
                 stale.text);
    free(doc);
}

/* The header documents no key (a second list would drift from the page): it points to
 * docs/configuration.md, checked above. */
Test(config_docs, the_header_points_to_the_configuration_page)
{
    char *header = read_text(HEADER_PATH);
    cr_expect(strstr(header, "docs/configuration.md") != NULL,
              "include/pulsarc/pulsarc.h must point to docs/configuration.md");
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
