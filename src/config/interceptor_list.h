/* The interceptors a producer configuration collects (pulsarc_producer_config_add_
 * interceptor), in the order added, and the copy each producer takes of them; their hooks
 * run in publish/interceptors.c. @locality any thread (the configuration's owner). */
#ifndef PC_INTERCEPTOR_LIST_H
#define PC_INTERCEPTOR_LIST_H

#include <stddef.h>

#include "pulsarc/pulsarc.h"

typedef struct pc_interceptor {
    pulsarc_interceptor_t ops;
    void *ctx;
} pc_interceptor_t;

typedef struct pc_interceptors {
    pc_interceptor_t *list; /* in the order added */
    size_t n;
} pc_interceptors_t;

/* Append one (ops_size: the caller's sizeof(pulsarc_interceptor_t)). */
pulsarc_result pc_interceptors_add(pc_interceptors_t *c, const pulsarc_interceptor_t *ops,
                                   size_t ops_size, void *ctx);
/* dst becomes a copy of src (dst's own list is not freed). Returns 0 or -1 (then dst is
 * empty). */
int pc_interceptors_copy(pc_interceptors_t *dst, const pc_interceptors_t *src);
void pc_interceptors_clear(pc_interceptors_t *c);

#endif
