/* A unit of work handed from one thread to another through an intrusive queue (the
 * client's hand-over to its loop thread). Embed it in a larger struct. */
#ifndef PC_TASK_H
#define PC_TASK_H

#include <stdatomic.h>

typedef struct pc_task {
    _Atomic(struct pc_task *) next; /* the queue's link (task_queue.h) */
    void (*run)(struct pc_task *task);
} pc_task_t;

#endif
