/* The interceptors a configuration collects (interceptor_list.h). */
#include "config/interceptor_list.h"

#include <stdlib.h>
#include <string.h>

#include "common/error.h"

pulsarc_result pc_interceptors_add(pc_interceptors_t *c, const pulsarc_interceptor_t *ops,
                                   size_t ops_size, void *ctx)
{
    if (!ops || ops_size == 0 || ops_size > sizeof *ops)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT,
                       "interceptor: ops must be given, with ops_size sizeof *ops (%zu at most)",
                       sizeof *ops);
    pc_interceptor_t *list = realloc(c->list, (c->n + 1) * sizeof *list);
    if (!list)
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    c->list = list;
    /* Members a program built against an older, shorter table does not have stay NULL. */
    memset(&list[c->n].ops, 0, sizeof list[c->n].ops);
    memcpy(&list[c->n].ops, ops, ops_size);
    list[c->n].ctx = ctx;
    c->n++;
    return PULSARC_OK;
}

int pc_interceptors_copy(pc_interceptors_t *dst, const pc_interceptors_t *src)
{
    dst->list = NULL;
    dst->n = 0;
    if (!src->n)
        return 0;
    if (!(dst->list = malloc(src->n * sizeof *dst->list)))
        return -1;
    memcpy(dst->list, src->list, src->n * sizeof *dst->list);
    dst->n = src->n;
    return 0;
}

void pc_interceptors_clear(pc_interceptors_t *c)
{
    free(c->list);
    c->list = NULL;
    c->n = 0;
}
