#include "accept/block_pool.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/* A block while it is kept. */
struct pc_block {
    pc_block_t *next;
};

void pc_block_pool_init(pc_block_pool_t *p)
{
    atomic_init(&p->returned, NULL);
    atomic_init(&p->n_returned, 0);
    uv_mutex_init(&p->mu);
    p->stash = NULL;
    p->loop_stash = NULL;
    p->loop_thread = NULL;
    atomic_init(&p->large, NULL);
}

void pc_block_pool_set_loop_thread(pc_block_pool_t *p, const uv_thread_t *loop_thread)
{
    p->loop_thread = loop_thread;
}

static void free_chain(pc_block_t *b)
{
    while (b) {
        pc_block_t *next = b->next;
        free(b);
        b = next;
    }
}

void pc_block_pool_destroy(pc_block_pool_t *p)
{
    free_chain(atomic_exchange(&p->returned, NULL));
    free_chain(p->stash);
    p->stash = NULL;
    free_chain(p->loop_stash);
    p->loop_stash = NULL;
    pc_block_pool_trim(p);
    uv_mutex_destroy(&p->mu);
}

static bool on_loop(const pc_block_pool_t *p)
{
    if (!p->loop_thread)
        return false;
    uv_thread_t self = uv_thread_self();
    return uv_thread_equal(&self, p->loop_thread);
}

/* A block from *stash, which takes the given-back stack whole when it is empty. */
static pc_block_t *take(pc_block_pool_t *p, pc_block_t **stash)
{
    pc_block_t *b = *stash;
    if (!b && (b = atomic_exchange(&p->returned, NULL))) {
        /* The chain is ours now: count it off in one step (amortised over its blocks). */
        size_t n = 0;
        for (pc_block_t *x = b; x; x = x->next)
            n++;
        atomic_fetch_sub(&p->n_returned, n);
    }
    if (b)
        *stash = b->next;
    return b;
}

void *pc_block_pool_get(pc_block_pool_t *p, size_t size, bool *pooled)
{
    *pooled = p && size <= PC_BLOCK_POOL_SIZE;
    if (!*pooled)
        return malloc(size);
    pc_block_t *b;
    if (on_loop(p)) {
        b = take(p, &p->loop_stash); /* the loop thread's own: no lock */
    } else {
        uv_mutex_lock(&p->mu);
        b = take(p, &p->stash);
        uv_mutex_unlock(&p->mu);
    }
    return b ? (void *)b : malloc(PC_BLOCK_POOL_SIZE);
}

void pc_block_pool_put(pc_block_pool_t *p, void *block)
{
    pc_block_t *b = block;
    if (atomic_fetch_add(&p->n_returned, 1) >= PC_BLOCK_POOL_MAX) {
        atomic_fetch_sub(&p->n_returned, 1);
        free(b);
        return;
    }
    /* Push only; blocks leave by exchanging the whole stack, so no ABA. */
    pc_block_t *top = atomic_load(&p->returned);
    do
        b->next = top;
    while (!atomic_compare_exchange_weak(&p->returned, &top, b));
}

/* What precedes a large block: its capacity. */
typedef union large_head {
    size_t cap;
    max_align_t align;
} large_head_t;

/* Put h in the large-block slot and return what was there. */
static large_head_t *swap_large(pc_block_pool_t *p, large_head_t *h)
{
    return atomic_exchange(&p->large, h);
}

void *pc_block_pool_get_large(pc_block_pool_t *p, size_t size)
{
    if (size > SIZE_MAX - sizeof(large_head_t))
        return NULL;
    large_head_t *h = swap_large(p, NULL);
    if (h && h->cap < size) {
        free(h);
        h = NULL;
    }
    if (!h) {
        h = malloc(sizeof *h + size);
        if (!h)
            return NULL;
        h->cap = size;
    }
    return h + 1;
}

void pc_block_pool_put_large(pc_block_pool_t *p, void *block)
{
    free(swap_large(p, (large_head_t *)block - 1));
}

void pc_block_pool_trim(pc_block_pool_t *p)
{
    free(swap_large(p, NULL));
}
