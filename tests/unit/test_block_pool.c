/* The recycled memory for accepted sends (accept/block_pool.c). */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "accept/block_pool.h"

TestSuite(block_pool, .timeout = 20);

Test(block_pool, a_given_back_block_is_taken_again)
{
    pc_block_pool_t p;
    pc_block_pool_init(&p);
    bool pooled;
    void *a = pc_block_pool_get(&p, 200, &pooled);
    cr_assert_not_null(a);
    cr_assert(pooled);
    pc_block_pool_put(&p, a);
    void *b = pc_block_pool_get(&p, PC_BLOCK_POOL_SIZE, &pooled);
    cr_assert(pooled);
    cr_assert_eq(b, a);
    pc_block_pool_put(&p, b);
    pc_block_pool_destroy(&p);
}

Test(block_pool, large_blocks_and_no_pool_are_plain_malloc)
{
    pc_block_pool_t p;
    pc_block_pool_init(&p);
    bool pooled = true;
    void *big = pc_block_pool_get(&p, PC_BLOCK_POOL_SIZE + 1, &pooled);
    cr_assert_not_null(big);
    cr_assert_not(pooled);
    free(big);
    pooled = true;
    void *none = pc_block_pool_get(NULL, 16, &pooled);
    cr_assert_not_null(none);
    cr_assert_not(pooled);
    free(none);
    pc_block_pool_destroy(&p);
}

Test(block_pool, keeps_at_most_the_maximum)
{
    pc_block_pool_t p;
    pc_block_pool_init(&p);
    enum { N = PC_BLOCK_POOL_MAX + 10 };
    static void *blocks[N];
    bool pooled;
    for (int i = 0; i < N; i++)
        cr_assert_not_null(blocks[i] = pc_block_pool_get(&p, 100, &pooled));
    for (int i = 0; i < N; i++)
        pc_block_pool_put(&p, blocks[i]); /* the last ten are freed */
    cr_assert_eq(atomic_load(&p.n_returned), PC_BLOCK_POOL_MAX);
    /* Taking one moves the whole stack to the stash and counts it off. */
    void *b = pc_block_pool_get(&p, 100, &pooled);
    cr_assert_eq(atomic_load(&p.n_returned), 0);
    pc_block_pool_put(&p, b);
    pc_block_pool_destroy(&p);
}

/* ---- the loop thread takes no lock ----------------------------------------------------- */

#include <pthread.h>

static pc_block_pool_t held_pool;
static pthread_barrier_t pool_locked, pool_done;

/* Holds the senders' lock of held_pool from another thread until the test is done. */
static void *hold_pool_lock(void *arg)
{
    uv_mutex_lock(&held_pool.mu);
    pthread_barrier_wait(&pool_locked);
    pthread_barrier_wait(&pool_done);
    uv_mutex_unlock(&held_pool.mu);
    return NULL;
}

/* A send on the loop thread (a callback's, or any on the application's own loop) takes
 * its block without the lock other senders share: with that lock held elsewhere it still
 * gets a recycled block, and a large one. Taking the lock would hang until the timeout. */
Test(block_pool, the_loop_thread_takes_blocks_without_the_lock)
{
    uv_thread_t loop_thread = uv_thread_self();
    pc_block_pool_init(&held_pool);
    pc_block_pool_set_loop_thread(&held_pool, &loop_thread);
    bool pooled;
    void *a = pc_block_pool_get(&held_pool, 100, &pooled);
    pc_block_pool_put(&held_pool, a);
    void *big = pc_block_pool_get_large(&held_pool, PC_BLOCK_LARGE_MIN);
    cr_assert_not_null(big);
    pc_block_pool_put_large(&held_pool, big);
    pthread_barrier_init(&pool_locked, NULL, 2);
    pthread_barrier_init(&pool_done, NULL, 2);
    pthread_t holder;
    cr_assert_eq(pthread_create(&holder, NULL, hold_pool_lock, NULL), 0);
    pthread_barrier_wait(&pool_locked);
    void *b = pc_block_pool_get(&held_pool, 100, &pooled);
    void *big2 = pc_block_pool_get_large(&held_pool, PC_BLOCK_LARGE_MIN);
    pthread_barrier_wait(&pool_done);
    pthread_join(holder, NULL);
    cr_assert(pooled);
    cr_assert_eq(b, a, "the loop thread did not get the block given back");
    cr_assert_eq(big2, big, "the loop thread did not get the large block kept");
    pc_block_pool_put(&held_pool, b);
    pc_block_pool_put_large(&held_pool, big2);
    pc_block_pool_destroy(&held_pool);
    pthread_barrier_destroy(&pool_locked);
    pthread_barrier_destroy(&pool_done);
}
