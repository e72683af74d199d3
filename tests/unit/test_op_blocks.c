/* The loop thread's recycled op blocks (common/freelist.h, producer/op.c): a freed op's
 * block is handed out again, at most the bound is kept, and an op without a cache is
 * malloc'ed and freed as before. */
#include <criterion/criterion.h>

#include "common/freelist.h"
#include "producer/op.h"

Test(op_blocks, a_freed_op_block_is_the_next_op)
{
    pc_freelist_t cache;
    pc_freelist_init(&cache, 4);
    pc_op_t *a = pc_op_new(&cache);
    cr_assert_not_null(a);
    a->sequence_id = 77;
    a->done = true;
    pc_op_release(a);
    cr_assert_eq(cache.n, 1, "the released op's block is kept");
    pc_op_t *b = pc_op_new(&cache);
    cr_assert_eq(b, a, "the kept block is handed out again");
    cr_assert_eq(cache.n, 0);
    cr_assert_eq(b->sequence_id, 0, "a recycled op starts zeroed");
    cr_assert_not(b->done);
    cr_assert_eq(b->chunk_id, -1);
    cr_assert_eq(b->head.data, b->head_space, "its head is back in its own space");
    pc_op_release(b);
    pc_freelist_drain(&cache);
    cr_assert_eq(cache.n, 0);
    cr_assert_null(cache.head);
}

Test(op_blocks, no_more_than_the_bound_is_kept)
{
    pc_freelist_t cache;
    pc_freelist_init(&cache, 2);
    pc_op_t *ops[5];
    for (int i = 0; i < 5; i++)
        cr_assert_not_null(ops[i] = pc_op_new(&cache));
    for (int i = 0; i < 5; i++)
        pc_op_release(ops[i]);
    cr_assert_eq(cache.n, 2, "three of five were freed, two kept");
    pc_freelist_drain(&cache);
}

Test(op_blocks, an_op_with_writes_in_flight_goes_back_after_the_last)
{
    pc_freelist_t cache;
    pc_freelist_init(&cache, 4);
    pc_op_t *op = pc_op_new(&cache);
    op->writes_in_flight = 1;
    pc_op_release(op);
    cr_assert_eq(cache.n, 0, "a write still reads it");
    pc_op_write_finished(op);
    cr_assert_eq(cache.n, 1);
    pc_freelist_drain(&cache);
}

Test(op_blocks, without_a_cache_an_op_is_malloced)
{
    pc_op_t *op = pc_op_new(NULL);
    cr_assert_not_null(op);
    cr_assert_null(op->cache);
    pc_op_release(op); /* freed: ASan's leak check would see it otherwise */
}
