/* A connection's listeners by producer id (net/listener_index.c): every listener added
 * and not removed is found, and nothing else, through growth and removals that leave
 * holes in the probe runs. */
#include <criterion/criterion.h>

#include "net/connection.h"
#include "net/listener_index.h"
#include "../support/test_rng.h"

TestSuite(listener_index, .timeout = 20);

enum { N = 3000 };

static pc_conn_listener_t listeners[N];
static bool added[N];

/* Each producer id's listener is found when added, and only then. */
static void check_all(const pc_listener_index_t *x)
{
    size_t n = 0;
    for (int i = 0; i < N; i++) {
        pc_conn_listener_t *l = pc_listener_index_find(x, listeners[i].producer_id);
        cr_assert_eq(l, added[i] ? &listeners[i] : NULL, "producer %llu",
                     (unsigned long long)listeners[i].producer_id);
        n += added[i];
    }
    cr_assert_eq(x->n, n);
    cr_assert_leq(2 * x->n, x->cap, "more than half full");
}

Test(listener_index, finds_what_was_added_and_not_removed)
{
    pc_listener_index_t x = { 0 };
    cr_assert_null(pc_listener_index_find(&x, 1));
    /* Ids as a client hands them out (a counter), with a few far apart. */
    for (int i = 0; i < N; i++)
        listeners[i].producer_id = i % 100 == 99 ? rnd() : (uint64_t)i + 1;
    for (int i = 0; i < N / 2; i++) {
        cr_assert_eq(pc_listener_index_add(&x, listeners[i].producer_id, &listeners[i]), 0);
        added[i] = true;
    }
    check_all(&x);
    /* Random adds and removes: removals shift later entries of a run back. */
    for (int round = 0; round < 20000; round++) {
        int i = (int)(rnd() % N);
        if (added[i]) {
            pc_listener_index_remove(&x, listeners[i].producer_id);
            added[i] = false;
        } else {
            cr_assert_eq(pc_listener_index_add(&x, listeners[i].producer_id, &listeners[i]), 0);
            added[i] = true;
        }
        if (round % 1000 == 0)
            check_all(&x);
    }
    check_all(&x);
    /* Removing one that is not there changes nothing. */
    for (int i = 0; i < N; i++)
        if (!added[i])
            pc_listener_index_remove(&x, listeners[i].producer_id);
    check_all(&x);
    pc_listener_index_clear(&x);
    cr_assert_null(pc_listener_index_find(&x, listeners[0].producer_id));
    cr_assert_eq(x.n, 0);
}
