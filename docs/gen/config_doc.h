/* The configuration reference, docs/configuration.md, generated from the configuration
 * tables (src/config/config.c): the page's prose is written by hand, and each of its key
 * tables sits between two marker lines and is rendered from a table's rows, with the
 * descriptions the rows carry. pulsarc-config-doc (config_doc_main.c) rewrites the page;
 * tests/unit/test_config_docs.c fails when the committed page differs from what it would
 * write. */
#ifndef PC_CONFIG_DOC_H
#define PC_CONFIG_DOC_H

#include <stddef.h>

#include "config/config.h"

/* The markers around a generated table (each on a line of its own). */
#define PC_CONFIG_DOC_CLIENT "<!-- config-doc: client keys -->"
#define PC_CONFIG_DOC_PRODUCER "<!-- config-doc: producer keys -->"
#define PC_CONFIG_DOC_END "<!-- config-doc: end -->"

/* A row's line in the page: "| `key` | default | values | description |". */
void pc_config_doc_line(const pc_config_key_t *k, char *out, size_t len);

/* page with every generated table rendered anew from the tables, in memory from malloc
 * (the caller frees it); NULL when a marker is missing or out of order, or memory ran
 * out, with the reason in err. */
char *pc_config_doc_update(const char *page, char *err, size_t errlen);

#endif
