/* Topic names: parse, validate and normalise.
 * "my-topic" -> persistent://public/default/my-topic; "tenant/ns/t" -> persistent://tenant/ns/t;
 * a "-partition-N" suffix names one partition of a partitioned topic. */
#ifndef PC_TOPIC_NAME_H
#define PC_TOPIC_NAME_H

#include <stdbool.h>
#include <stddef.h>

typedef struct pc_topic_name {
    char full[512];  /* domain://tenant/namespace/local */
    char domain[16]; /* "persistent" or "non-persistent" */
    char tenant[128];
    char ns[128];    /* namespace */
    char local[256]; /* local name, with the partition suffix if any */
    int partition;   /* -1 unless the local name ends in -partition-N */
} pc_topic_name_t;

/* Returns 0, or -1 with a human-readable reason in err (if err != NULL). Legacy v1 names
 * (tenant/cluster/namespace/topic), invalid UTF-8 and control characters are refused. */
int pc_topic_name_parse(const char *topic, pc_topic_name_t *out, char *err, size_t errlen);
/* Full name of partition i of base (which must not be a partition itself). Returns 0, or
 * -1 if i < 0, out is too small, or the partition's name would be too long to parse. */
int pc_topic_name_partition(const pc_topic_name_t *base, int i, char *out, size_t outlen);

#endif
