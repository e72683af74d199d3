#include "accept/block_pool.h"

#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/* A block while it is kept. */
struct pc_block {
    pc_block_t *next;
};

void pc_block_pool_init(pc_block_pool_t *p)
{
    for (int i = 0; i < PC_BLOCK_CLASSES; i++) {
        pc_block_class_t *k = &p->classes[i];
        atomic_init(&k->returned, NULL);
        atomic_init(&k->n_returned, 0);
        atomic_flag_clear(&k->stash_held);
        k->stash = NULL;
        k->loop_stash = NULL;
        k->size = i == 0 ? PC_BLOCK_SMALL : PC_BLOCK_POOL_SIZE;
        k->keep = PC_BLOCK_POOL_MAX / k->size;
    }
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
    for (int i = 0; i < PC_BLOCK_CLASSES; i++) {
        pc_block_class_t *k = &p->classes[i];
        free_chain(atomic_exchange(&k->returned, NULL));
        free_chain(k->stash);
        k->stash = NULL;
        free_chain(k->loop_stash);
        k->loop_stash = NULL;
    }
    pc_block_pool_trim(p);
}

static bool on_loop(const pc_block_pool_t *p)
{
    /* uv_thread_t is pthread_t here: asked directly, it costs no call into libuv. */
    return p->loop_thread && pthread_equal(pthread_self(), *p->loop_thread);
}

/* The senders' stash is held for a pointer's pop or push at a time, so a spin lock
 * (one atomic exchange, no system call, no call at all) guards it; a holder preempted
 * while holding it is waited for by yielding. */
static void stash_lock(pc_block_class_t *k)
{
    for (unsigned spins = 0;
         atomic_flag_test_and_set_explicit(&k->stash_held, memory_order_acquire); spins++) {
        if (spins >= 64)
            sched_yield();
    }
}

static void stash_unlock(pc_block_class_t *k)
{
    atomic_flag_clear_explicit(&k->stash_held, memory_order_release);
}

/* The given-back stack, taken whole (one exchange, so no ABA) and counted off; *tail is
 * its last block. NULL when nothing was given back. */
static pc_block_t *take_returned(pc_block_class_t *k, pc_block_t **tail)
{
    pc_block_t *b = atomic_exchange(&k->returned, NULL);
    if (!b)
        return NULL;
    size_t n = 1;
    pc_block_t *x = b;
    for (; x->next; x = x->next)
        n++;
    *tail = x;
    atomic_fetch_sub(&k->n_returned, n); /* amortised over its blocks */
    return b;
}

/* A block for the loop thread, from its own stash: no lock. */
static pc_block_t *take_on_loop(pc_block_class_t *k)
{
    pc_block_t *b = k->loop_stash, *tail;
    if (!b)
        b = take_returned(k, &tail);
    if (b)
        k->loop_stash = b->next;
    return b;
}

/* A block for any other sender: from the shared stash, which takes the given-back stack
 * when it is empty (counted outside the lock). */
static pc_block_t *take_shared(pc_block_class_t *k)
{
    stash_lock(k);
    pc_block_t *b = k->stash;
    if (b)
        k->stash = b->next;
    stash_unlock(k);
    if (b)
        return b;
    pc_block_t *tail;
    if (!(b = take_returned(k, &tail)) || !b->next)
        return b;
    stash_lock(k); /* the rest joins the stash */
    tail->next = k->stash;
    k->stash = b->next;
    stash_unlock(k);
    return b;
}

void *pc_block_pool_get(pc_block_pool_t *p, pc_block_class_t *k, size_t size)
{
    if (!k)
        return malloc(size);
    pc_block_t *b = on_loop(p) ? take_on_loop(k) : take_shared(k);
    return b ? (void *)b : malloc(k->size);
}

void pc_block_pool_put(pc_block_class_t *k, void *block)
{
    pc_block_t *b = block;
    if (atomic_fetch_add(&k->n_returned, 1) >= k->keep) {
        atomic_fetch_sub(&k->n_returned, 1);
        free(b);
        return;
    }
    /* Push only; blocks leave by exchanging the whole stack, so no ABA. */
    pc_block_t *top = atomic_load(&k->returned);
    do
        b->next = top;
    while (!atomic_compare_exchange_weak(&k->returned, &top, b));
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
