/* The recycled memory for accepted sends (client/send_pool.c). */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "client/send_pool.h"

Test(send_pool, a_given_back_block_is_taken_again)
{
    pc_send_pool_t p;
    pc_send_pool_init(&p);
    bool pooled;
    void *a = pc_send_pool_get(&p, 200, &pooled);
    cr_assert_not_null(a);
    cr_assert(pooled);
    pc_send_pool_put(&p, a);
    void *b = pc_send_pool_get(&p, PC_SEND_BLOCK_SIZE, &pooled);
    cr_assert(pooled);
    cr_assert_eq(b, a);
    pc_send_pool_put(&p, b);
    pc_send_pool_destroy(&p);
}

Test(send_pool, large_blocks_and_no_pool_are_plain_malloc)
{
    pc_send_pool_t p;
    pc_send_pool_init(&p);
    bool pooled = true;
    void *big = pc_send_pool_get(&p, PC_SEND_BLOCK_SIZE + 1, &pooled);
    cr_assert_not_null(big);
    cr_assert_not(pooled);
    free(big);
    pooled = true;
    void *none = pc_send_pool_get(NULL, 16, &pooled);
    cr_assert_not_null(none);
    cr_assert_not(pooled);
    free(none);
    pc_send_pool_destroy(&p);
}

Test(send_pool, keeps_at_most_the_maximum)
{
    pc_send_pool_t p;
    pc_send_pool_init(&p);
    enum { N = PC_SEND_POOL_MAX + 10 };
    static void *blocks[N];
    bool pooled;
    for (int i = 0; i < N; i++)
        cr_assert_not_null(blocks[i] = pc_send_pool_get(&p, 100, &pooled));
    for (int i = 0; i < N; i++)
        pc_send_pool_put(&p, blocks[i]); /* the last ten are freed */
    cr_assert_eq(atomic_load(&p.n_returned), PC_SEND_POOL_MAX);
    /* Taking one moves the whole stack to the stash and counts it off. */
    void *b = pc_send_pool_get(&p, 100, &pooled);
    cr_assert_eq(atomic_load(&p.n_returned), 0);
    pc_send_pool_put(&p, b);
    pc_send_pool_destroy(&p);
}
