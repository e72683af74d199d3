/* Admission: whether an accepted send may take a permit of its producer (maxPendingMessages)
 * and its bytes of the client's memory (memoryLimitBytes), and the wait for room
 * (blockIfQueueFull). No lock on the send path in the common case: the counters are
 * atomics, reserved together by compare-and-swap. The mutex and the condition variable
 * serve only senders that find no room and wait; a release signals only when somebody
 * waits, and a single message's release on the loop thread waits for the end of the loop
 * turn's I/O (a uv_check handle), so many receipts in one read wake a waiting sender
 * once.
 * Thread-safe, except where a function says otherwise. */
#ifndef PC_ADMISSION_H
#define PC_ADMISSION_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "pulsarc/pulsarc.h"

typedef struct pc_permits pc_permits_t;

/* pc_admission_t.interest counts two kinds of interest in released room in one word, so
 * that a release checks one atomic whatever is watching: the threads inside the slow path
 * of pc_admit (the low 32 bits), and PC_ADMISSION_WATCHER for each producer with a room
 * callback that a send on the loop thread found full (pulsarc_room_cb). */
#define PC_ADMISSION_WATCHER ((int_fast64_t)1 << 32)
#define PC_ADMISSION_WAITERS ((int_fast64_t)0xffffffff)

/* The client's, shared by its producers. */
typedef struct pc_admission {
    atomic_int_fast64_t memory_used;
    int64_t memory_limit;         /* memoryLimitBytes; 0: none */
    atomic_int_fast64_t interest; /* waiting threads + watching producers, see above */
    uv_mutex_t mu;
    uv_cond_t cond;   /* signalled when memory or permits are released */
    uv_check_t check; /* after each loop turn's I/O: wake waiting senders once */
    bool freed;       /* loop thread: released this turn while senders waited or watched */
    bool deferring;   /* loop thread: the check handle still runs */
    const uv_thread_t *loop_thread;
    pc_permits_t *watching; /* loop thread: the producers waiting to hear of room */
} pc_admission_t;

/* One producer's. */
struct pc_permits {
    _Atomic int_fast64_t pending; /* accepted, callback not yet run */
    atomic_bool closed;           /* the producer is closing: every send is refused */
    /* The room callback (pulsarc_room_cb): set before the first send and never changed;
     * NULL: none, and a refusal costs nothing more. */
    void (*room)(void *owner);
    void *room_owner;
    /* Loop thread only: armed by a refusal there, until room comes back. */
    bool watched;
    pc_permits_t *next_watched;
    int64_t watched_max_pending, watched_bytes; /* what the refused send needed */
};

/* The check handle runs on loop, which loop_thread (filled in later is fine) runs. */
void pc_admission_init(pc_admission_t *a, uv_loop_t *loop, const uv_thread_t *loop_thread,
                       int64_t memory_limit);
/* Loop thread, at shutdown: close the check handle; releases wake waiting senders at once
 * from now on. */
void pc_admission_stop_deferring(pc_admission_t *a);
/* Senders that a closing producer woke still use the lock and the counter: wait until the
 * last of them has left. Then pc_admission_destroy. */
void pc_admission_wait_empty(pc_admission_t *a);
void pc_admission_destroy(pc_admission_t *a);

/* maxPendingMessages applies per partition, as in the Java client; pulsarc counts one
 * total against maxPendingMessages x routable partitions (so a busy partition may borrow
 * an idle one's share), capped by maxPendingMessagesAcrossPartitions when that is set.
 * 0: no limit. */
int64_t pc_admission_pending_limit(int64_t per_partition, int64_t across, int routable);

void pc_permits_init(pc_permits_t *pm);
/* Take a permit (of at most max_pending, 0: no limit) and bytes, or neither. A send that
 * finds no room waits when block is set, else fails with QUEUE_FULL or MEMORY_LIMIT; on a
 * closed producer it fails with ALREADY_CLOSED. On the loop thread it never waits and
 * takes no lock, whatever block says. */
pulsarc_result pc_admit(pc_admission_t *a, pc_permits_t *pm, int64_t max_pending, size_t bytes,
                        bool block);
/* Give back messages' permits and their bytes (a batch's at once). */
void pc_admission_release(pc_admission_t *a, pc_permits_t *pm, int64_t messages, size_t bytes);
/* The producer is closing: refuse every later send, and wake the blocked ones to say so. */
void pc_admission_close(pc_admission_t *a, pc_permits_t *pm);
/* Loop thread: forget pm's watch for room (its producer goes away). */
void pc_admission_unwatch(pc_admission_t *a, pc_permits_t *pm);

#endif
