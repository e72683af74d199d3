/* The schema a topic has in the broker's registry (GET_SCHEMA), for AUTO_PRODUCE
 * producers: look the topic up, ask its broker, turn the answer into a schema after
 * checking it. @locality loop thread. */
#ifndef PC_TOPIC_SCHEMA_H
#define PC_TOPIC_SCHEMA_H

#include "net/runtime.h"
#include "pulsarc/pulsarc.h"

/* schema: the topic's latest schema (the callee's reference, to be released with
 * pulsarc_schema_free), or NULL when the topic has none. On failure res says why and
 * the detail is set. */
typedef void (*pc_topic_schema_cb)(pulsarc_result res, pulsarc_schema_t *schema, void *ctx);

/* cb runs exactly once, on the loop thread. */
void pc_topic_schema_fetch(pc_runtime_t *rt, const char *topic, pc_topic_schema_cb cb, void *ctx);

#endif
