/* Admission on the loop thread: a send there never waits and takes no lock, whatever
 * blockIfQueueFull says (the loop is what makes room; on the application's own loop a lock
 * would also be one the application's sends could wait on). */
#include <criterion/criterion.h>

#include <pthread.h>
#include <uv.h>

#include "accept/admission.h"

static pc_admission_t adm;
static uv_loop_t loop;
static uv_thread_t loop_thread;
static pthread_barrier_t locked, done;

static void setup(int64_t memory_limit)
{
    cr_assert_eq(uv_loop_init(&loop), 0);
    loop_thread = uv_thread_self(); /* this test's thread plays the loop thread */
    pc_admission_init(&adm, &loop, &loop_thread, memory_limit);
    pthread_barrier_init(&locked, NULL, 2);
    pthread_barrier_init(&done, NULL, 2);
}

static void teardown(void)
{
    pc_admission_stop_deferring(&adm);
    uv_run(&loop, UV_RUN_DEFAULT);
    cr_assert_eq(uv_loop_close(&loop), 0);
    pc_admission_destroy(&adm);
    pthread_barrier_destroy(&locked);
    pthread_barrier_destroy(&done);
}

/* Holds admission's lock from another thread until the test is done. */
static void *hold_the_lock(void *arg)
{
    uv_mutex_lock(&adm.mu);
    pthread_barrier_wait(&locked);
    pthread_barrier_wait(&done);
    uv_mutex_unlock(&adm.mu);
    return NULL;
}

/* A refused send that took the lock would hang here until the suite's timeout. */
static void refused_while_locked(pc_permits_t *pm, int64_t max_pending, size_t bytes,
                                 pulsarc_result want)
{
    pthread_t holder;
    cr_assert_eq(pthread_create(&holder, NULL, hold_the_lock, NULL), 0);
    pthread_barrier_wait(&locked);
    pulsarc_result got = pc_admit(&adm, pm, max_pending, bytes, true);
    pthread_barrier_wait(&done);
    pthread_join(holder, NULL);
    cr_assert_eq(got, want, "got %s, want %s", pulsarc_result_name(got), pulsarc_result_name(want));
}

TestSuite(admission, .timeout = 20);

Test(admission, a_full_queue_on_the_loop_thread_is_refused_without_the_lock)
{
    setup(0);
    pc_permits_t pm;
    pc_permits_init(&pm);
    cr_assert_eq(pc_admit(&adm, &pm, 1, 10, true), PULSARC_OK);
    refused_while_locked(&pm, 1, 10, PULSARC_ERR_QUEUE_FULL);
    cr_assert_eq(atomic_load(&pm.pending), 1, "the refused send kept a permit");
    pc_admission_release(&adm, &pm, 1, 10);
    teardown();
}

Test(admission, the_memory_limit_on_the_loop_thread_is_refused_without_the_lock)
{
    setup(100);
    pc_permits_t pm;
    pc_permits_init(&pm);
    cr_assert_eq(pc_admit(&adm, &pm, 0, 80, true), PULSARC_OK);
    refused_while_locked(&pm, 0, 80, PULSARC_ERR_MEMORY_LIMIT);
    cr_assert_eq(atomic_load(&adm.memory_used), 80, "the refused send kept its bytes");
    pc_admission_release(&adm, &pm, 1, 80);
    teardown();
}
