/* The send pool's large-block slot (client/block_pool.c): the last large block given back
 * is taken again by a send it is big enough for. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "accept/block_pool.h"

Test(block_pool_large, a_given_back_block_is_taken_again_when_big_enough)
{
    pc_block_pool_t p;
    pc_block_pool_init(&p);
    uint8_t *a = pc_block_pool_get_large(&p, PC_BLOCK_LARGE_MIN + 100);
    cr_assert_not_null(a);
    cr_assert_eq((uintptr_t)a % _Alignof(max_align_t), 0);
    a[0] = 1;
    a[PC_BLOCK_LARGE_MIN + 99] = 2; /* the whole size is usable */
    pc_block_pool_put_large(&p, a);
    uint8_t *b = pc_block_pool_get_large(&p, PC_BLOCK_LARGE_MIN);
    cr_assert_eq(b, a, "a smaller request takes the kept block");
    pc_block_pool_put_large(&p, b);
    uint8_t *c = pc_block_pool_get_large(&p, PC_BLOCK_LARGE_MIN + 101);
    cr_assert_not_null(c);
    c[PC_BLOCK_LARGE_MIN + 100] = 3; /* a new block of the larger size (ASan checks) */
    pc_block_pool_put_large(&p, c);
    pc_block_pool_destroy(&p); /* frees the kept block (LeakSanitizer checks) */
}

Test(block_pool_large, one_block_is_kept_and_trim_frees_it)
{
    pc_block_pool_t p;
    pc_block_pool_init(&p);
    void *a = pc_block_pool_get_large(&p, PC_BLOCK_LARGE_MIN);
    void *b = pc_block_pool_get_large(&p, PC_BLOCK_LARGE_MIN);
    cr_assert(a && b && a != b);
    pc_block_pool_put_large(&p, a);
    pc_block_pool_put_large(&p, b); /* replaces (and frees) a */
    cr_assert_eq(pc_block_pool_get_large(&p, PC_BLOCK_LARGE_MIN), b);
    pc_block_pool_put_large(&p, b);
    pc_block_pool_trim(&p);
    void *c = pc_block_pool_get_large(&p, PC_BLOCK_LARGE_MIN);
    cr_assert_not_null(c);
    pc_block_pool_put_large(&p, c);
    pc_block_pool_trim(&p);
    pc_block_pool_trim(&p); /* nothing kept: nothing to do */
    pc_block_pool_destroy(&p);
}
