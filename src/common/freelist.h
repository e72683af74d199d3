/* A bounded cache of same-sized blocks for one thread: a block given back is kept (up to
 * max) and handed out again before malloc is asked. For objects made and freed by the
 * thousand on one thread (the loop thread's ops: one per unbatched message), where
 * glibc's per-thread cache holds only seven of a size and the rest go through its arena
 * at about 400 instructions a malloc and free. Not thread-safe: its owner's thread only.
 * @locality one thread. */
#ifndef PC_FREELIST_H
#define PC_FREELIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>

typedef struct pc_freelist {
    void *head; /* kept blocks, each linked through its first pointer */
    size_t n;   /* blocks kept */
    size_t max; /* at most this many kept; 0: none */
} pc_freelist_t;

static inline void pc_freelist_init(pc_freelist_t *f, size_t max)
{
    f->head = NULL;
    f->n = 0;
    f->max = max;
}

/* A kept block, or NULL when none is kept (then the caller mallocs one). */
static inline void *pc_freelist_take(pc_freelist_t *f)
{
    void *b = f->head;
    if (b) {
        f->head = *(void **)b;
        f->n--;
    }
    return b;
}

/* Keep b (of the cache's size) for the next take; false when full (the caller frees it). */
static inline bool pc_freelist_keep(pc_freelist_t *f, void *b)
{
    if (f->n >= f->max)
        return false;
    *(void **)b = f->head;
    f->head = b;
    f->n++;
    return true;
}

/* Free every kept block. */
static inline void pc_freelist_drain(pc_freelist_t *f)
{
    while (f->head) {
        void *next = *(void **)f->head;
        free(f->head);
        f->head = next;
    }
    f->n = 0;
}

#endif
