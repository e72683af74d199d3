#include "wire/pb_arena.h"

#include <stdalign.h>
#include <stdint.h>
#include <stdlib.h>

/* Each overflow block starts with a header that links it; the caller gets what follows. */
typedef struct overflow_block {
    void *next;
    max_align_t payload[];
} overflow_block;

static void *arena_alloc(void *data, size_t size)
{
    pc_pb_arena_t *a = data;
    size_t rounded = (size + alignof(max_align_t) - 1) & ~(alignof(max_align_t) - 1);
    if (rounded >= size && rounded <= sizeof a->block - a->used) {
        void *p = a->block + a->used;
        a->used += rounded;
        return p;
    }
    if (size > SIZE_MAX - sizeof(overflow_block))
        return NULL;
    overflow_block *b = malloc(sizeof *b + size);
    if (!b)
        return NULL;
    b->next = a->overflow;
    a->overflow = b;
    return b->payload;
}

/* Memory goes back all at once in pc_pb_arena_reset. */
static void arena_free(void *data, void *ptr)
{
    (void)data;
    (void)ptr;
}

void pc_pb_arena_init(pc_pb_arena_t *a)
{
    a->allocator.alloc = arena_alloc;
    a->allocator.free = arena_free;
    a->allocator.allocator_data = a;
    a->used = 0;
    a->overflow = NULL;
}

void pc_pb_arena_reset(pc_pb_arena_t *a)
{
    while (a->overflow) {
        overflow_block *b = a->overflow;
        a->overflow = b->next;
        free(b);
    }
    a->used = 0;
}
