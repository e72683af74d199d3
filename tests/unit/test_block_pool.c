/* The recycled memory for accepted sends (accept/block_pool.c). */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "accept/block_pool.h"

TestSuite(block_pool, .timeout = 20);

Test(block_pool, a_given_back_block_is_taken_again)
{
    pc_block_pool_t p;
    pc_block_pool_init(&p);
    void *a = pc_block_pool_get(&p, &p.classes[0], PC_BLOCK_SMALL);
    cr_assert_not_null(a);
    pc_block_pool_put(&p.classes[0], a);
    void *b = pc_block_pool_get(&p, &p.classes[0], PC_BLOCK_SMALL);
    cr_assert_eq(b, a);
    pc_block_pool_put(&p.classes[0], b);
    pc_block_pool_destroy(&p);
}

/* A block of the larger class has all its bytes, and comes back only as one of its
 * class (a small one never as a larger one, nor the other way). */
Test(block_pool, each_size_class_recycles_its_own_blocks)
{
    pc_block_pool_t p;
    pc_block_pool_init(&p);
    uint8_t *a = pc_block_pool_get(&p, &p.classes[1], PC_BLOCK_SMALL + 1);
    cr_assert_not_null(a);
    memset(a, 7, PC_BLOCK_POOL_SIZE); /* ASan: the whole class size is there */
    pc_block_pool_put(&p.classes[1], a);
    void *small = pc_block_pool_get(&p, &p.classes[0], 100);
    cr_assert_neq(small, a, "a small send took the larger class's block");
    void *b = pc_block_pool_get(&p, &p.classes[1], PC_BLOCK_POOL_SIZE);
    cr_assert_eq(b, a);
    pc_block_pool_put(&p.classes[0], small);
    pc_block_pool_put(&p.classes[1], b);
    pc_block_pool_destroy(&p);
}

Test(block_pool, large_blocks_and_no_pool_are_plain_malloc)
{
    pc_block_pool_t p;
    pc_block_pool_init(&p);
    void *big = pc_block_pool_get(&p, NULL, PC_BLOCK_POOL_SIZE + 1);
    cr_assert_not_null(big);
    ((char *)big)[PC_BLOCK_POOL_SIZE] = 1; /* ASan: the size asked for */
    free(big);
    void *none = pc_block_pool_get(NULL, NULL, 16);
    cr_assert_not_null(none);
    free(none);
    pc_block_pool_destroy(&p);
}

Test(block_pool, keeps_at_most_the_maximum)
{
    pc_block_pool_t p;
    pc_block_pool_init(&p);
    enum { KEEP = PC_BLOCK_POOL_MAX / PC_BLOCK_SMALL, N = KEEP + 10 };
    static void *blocks[N];
    for (int i = 0; i < N; i++)
        cr_assert_not_null(blocks[i] = pc_block_pool_get(&p, &p.classes[0], 100));
    for (int i = 0; i < N; i++)
        pc_block_pool_put(&p.classes[0], blocks[i]); /* the last ten are freed */
    cr_assert_eq(atomic_load(&p.classes[0].n_returned), KEEP);
    /* Taking one moves the whole stack to the stash and counts it off. */
    void *b = pc_block_pool_get(&p, &p.classes[0], 100);
    cr_assert_eq(atomic_load(&p.classes[0].n_returned), 0);
    pc_block_pool_put(&p.classes[0], b);
    /* The larger class keeps as many bytes: a quarter as many blocks. */
    enum { KEEP_LARGER = PC_BLOCK_POOL_MAX / PC_BLOCK_POOL_SIZE };
    for (int i = 0; i < KEEP_LARGER + 10; i++)
        cr_assert_not_null(blocks[i] = pc_block_pool_get(&p, &p.classes[1], 1000));
    for (int i = 0; i < KEEP_LARGER + 10; i++)
        pc_block_pool_put(&p.classes[1], blocks[i]);
    cr_assert_eq(atomic_load(&p.classes[1].n_returned), KEEP_LARGER);
    pc_block_pool_destroy(&p);
}

/* ---- the loop thread takes no lock ----------------------------------------------------- */

#include <pthread.h>

static pc_block_pool_t held_pool;
static pthread_barrier_t pool_locked, pool_done;

/* Holds the senders' lock of held_pool from another thread until the test is done. */
static void *hold_pool_lock(void *arg)
{
    (void)arg;
    while (atomic_flag_test_and_set(&held_pool.classes[0].stash_held))
        ;
    pthread_barrier_wait(&pool_locked);
    pthread_barrier_wait(&pool_done);
    atomic_flag_clear(&held_pool.classes[0].stash_held);
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
    void *a = pc_block_pool_get(&held_pool, &held_pool.classes[0], 100);
    pc_block_pool_put(&held_pool.classes[0], a);
    void *big = pc_block_pool_get_large(&held_pool, PC_BLOCK_LARGE_MIN);
    cr_assert_not_null(big);
    pc_block_pool_put_large(&held_pool, big);
    pthread_barrier_init(&pool_locked, NULL, 2);
    pthread_barrier_init(&pool_done, NULL, 2);
    pthread_t holder;
    cr_assert_eq(pthread_create(&holder, NULL, hold_pool_lock, NULL), 0);
    pthread_barrier_wait(&pool_locked);
    void *b = pc_block_pool_get(&held_pool, &held_pool.classes[0], 100);
    void *big2 = pc_block_pool_get_large(&held_pool, PC_BLOCK_LARGE_MIN);
    pthread_barrier_wait(&pool_done);
    pthread_join(holder, NULL);
    cr_assert_eq(b, a, "the loop thread did not get the block given back");
    cr_assert_eq(big2, big, "the loop thread did not get the large block kept");
    pc_block_pool_put(&held_pool.classes[0], b);
    pc_block_pool_put_large(&held_pool, big2);
    pc_block_pool_destroy(&held_pool);
    pthread_barrier_destroy(&pool_locked);
    pthread_barrier_destroy(&pool_done);
}

/* ---- senders on several threads --------------------------------------------------------- */

#define SENDERS 4
#define ROUNDS 2000
#define HELD 64

static pc_block_pool_t shared_pool;

/* Takes HELD blocks at a time, fills each with its own mark, checks no other thread wrote
 * into them while it held them, and gives them back (as the loop thread does, from any
 * thread): a block handed to two senders at once would show another mark. */
static void *sender(void *arg)
{
    uintptr_t mark = (uintptr_t)arg;
    void *held[HELD];
    for (int round = 0; round < ROUNDS; round++) {
        for (int i = 0; i < HELD; i++) {
            held[i] = pc_block_pool_get(&shared_pool, &shared_pool.classes[0], 64);
            cr_assert(held[i]);
            memset(held[i], (int)mark, 64);
        }
        for (int i = 0; i < HELD; i++) {
            const unsigned char *b = held[i];
            for (int k = 0; k < 64; k++)
                cr_assert_eq(b[k], (unsigned char)mark, "a block was handed out twice");
            pc_block_pool_put(&shared_pool.classes[0], held[i]);
        }
    }
    return NULL;
}

Test(block_pool, senders_on_several_threads_never_share_a_block)
{
    pc_block_pool_init(&shared_pool);
    pthread_t th[SENDERS];
    for (uintptr_t i = 0; i < SENDERS; i++)
        cr_assert_eq(pthread_create(&th[i], NULL, sender, (void *)(i + 1)), 0);
    for (int i = 0; i < SENDERS; i++)
        pthread_join(th[i], NULL);
    pc_block_pool_destroy(&shared_pool);
}
