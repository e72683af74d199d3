#include <criterion/criterion.h>
#include <pthread.h>
#include <stdlib.h>

#include "common/task_queue.h"

Test(task_queue, empty_then_fifo_from_one_thread)
{
    pc_task_queue_t q;
    pc_task_queue_init(&q);
    cr_assert_null(pc_task_queue_pop(&q));
    pc_task_t t[5];
    cr_assert(pc_task_queue_push(&q, &t[0]), "the first push wakes the consumer");
    for (int i = 1; i < 5; i++)
        cr_assert_not(pc_task_queue_push(&q, &t[i]), "later pushes ride on that wake-up");
    for (int i = 0; i < 5; i++)
        cr_assert_eq(pc_task_queue_pop(&q), &t[i]);
    cr_assert_null(pc_task_queue_pop(&q));
    /* Popped to empty and pushed again (the stub goes round). */
    pc_task_queue_rearm(&q);
    cr_assert(pc_task_queue_push(&q, &t[2]), "after a re-arm the next push wakes again");
    cr_assert_eq(pc_task_queue_pop(&q), &t[2]);
    cr_assert_null(pc_task_queue_pop(&q));
}

enum { PRODUCERS = 4, PER_PRODUCER = 100000 };

typedef struct item {
    pc_task_t task;
    int producer;
    int seq;
} item;

typedef struct shared {
    pc_task_queue_t q;
    item *items;
    pthread_mutex_t mu;
    pthread_cond_t cond;
    int wakeups;
} shared;

typedef struct producer_arg {
    shared *s;
    int id;
} producer_arg;

static void *produce(void *arg)
{
    producer_arg *a = arg;
    for (int i = 0; i < PER_PRODUCER; i++) {
        item *it = &a->s->items[a->id * PER_PRODUCER + i];
        it->producer = a->id;
        it->seq = i;
        if (pc_task_queue_push(&a->s->q, &it->task)) {
            pthread_mutex_lock(&a->s->mu);
            a->s->wakeups++;
            pthread_cond_signal(&a->s->cond);
            pthread_mutex_unlock(&a->s->mu);
        }
    }
    return NULL;
}

/* Several threads push while one consumer drains the way the client's loop does (wait for
 * a wake-up, re-arm when it looks empty, look once more): every task comes out exactly
 * once, each producer's in its order, and no wake-up is lost (a lost one hangs here). */
Test(task_queue, many_producers_one_consumer, .timeout = 60)
{
    shared s;
    pc_task_queue_init(&s.q);
    s.items = calloc(PRODUCERS * PER_PRODUCER, sizeof *s.items);
    cr_assert_not_null(s.items);
    pthread_mutex_init(&s.mu, NULL);
    pthread_cond_init(&s.cond, NULL);
    s.wakeups = 0;
    pthread_t threads[PRODUCERS];
    producer_arg args[PRODUCERS];
    for (int i = 0; i < PRODUCERS; i++) {
        args[i] = (producer_arg){ &s, i };
        pthread_create(&threads[i], NULL, produce, &args[i]);
    }
    int next[PRODUCERS] = { 0 };
    int total = 0;
    while (total < PRODUCERS * PER_PRODUCER) {
        pthread_mutex_lock(&s.mu);
        while (s.wakeups == 0)
            pthread_cond_wait(&s.cond, &s.mu);
        s.wakeups--;
        pthread_mutex_unlock(&s.mu);
        for (;;) {
            pc_task_t *t = pc_task_queue_pop(&s.q);
            if (!t) {
                pc_task_queue_rearm(&s.q);
                if (!(t = pc_task_queue_pop(&s.q)))
                    break;
            }
            item *it = (item *)t;
            cr_assert_eq(it->seq, next[it->producer], "producer %d: got %d, expected %d",
                         it->producer, it->seq, next[it->producer]);
            next[it->producer]++;
            total++;
        }
    }
    for (int i = 0; i < PRODUCERS; i++)
        pthread_join(threads[i], NULL);
    cr_assert_null(pc_task_queue_pop(&s.q));
    for (int i = 0; i < PRODUCERS; i++)
        cr_assert_eq(next[i], PER_PRODUCER);
    pthread_cond_destroy(&s.cond);
    pthread_mutex_destroy(&s.mu);
    free(s.items);
}
