/* Recycled memory for accepted sends (pc_send_t blocks) of a client.
 *
 * A send is allocated on the sending thread and freed on the loop thread once its
 * callback has run: a thousand per batch. Freed one by one into glibc's main arena, they
 * merge into its top, which is trimmed back to the kernel and faulted in again (zeroed)
 * by the next thousand sends: 40-odd page faults per batch. Here small blocks go round
 * instead: any thread gives a block back with one compare-and-swap push onto a lock-free
 * stack; a sender takes the whole stack at once (one exchange, so no ABA) into a stash
 * it shares with other senders under a spin lock held for a pointer's pop or push, and
 * takes blocks from there. The loop
 * thread, when it sends (from callbacks, or everything on the application's own loop),
 * has a stash of its own and takes no lock at all.
 * Blocks come in two sizes (classes): 512 bytes, which hold a small message's record with
 * its copied payload, key and properties, and 2 KiB, for a record with a copied payload
 * of up to about 1,700 bytes and nothing else (malloc'ed on the sending thread and freed
 * on the loop thread, a block of that size cost some 450 instructions in glibc's arena,
 * and cache misses besides). Each class is a pool of its own; the sender picks the class,
 * whose size it charges to memoryLimitBytes (publish/send.h). At most PC_BLOCK_POOL_MAX
 * bytes of a class wait to be taken, and each stash holds no more than one such batch,
 * so the pool keeps at most 3 x 2 MiB a class (12 MiB), 8 MiB while only one of the loop
 * thread and the other senders sends, and only what a class's sizes of messages have
 * used.
 *
 * Large blocks are another matter: glibc maps every block above 32 MiB afresh and unmaps
 * it when freed, so copying a 100 MiB payload first faults in and zeroes 25,600 pages,
 * which costs more than the copy itself, and the loop thread unmaps them again. A
 * message that large travels alone (it is above memoryLimitBytes, or nearly), so the pool
 * keeps the last such block given back, and the next large send takes it if it is big
 * enough: one block, kept beside memoryLimitBytes, freed when a producer of the client
 * closes (pc_block_pool_trim) or with the pool.
 * Thread-safe. */
#ifndef PC_BLOCK_POOL_H
#define PC_BLOCK_POOL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <uv.h>

#define PC_BLOCK_CLASSES 2
#define PC_BLOCK_SMALL 512
#define PC_BLOCK_POOL_SIZE 2048              /* the largest class */
#define PC_BLOCK_POOL_MAX (2u * 1024 * 1024) /* bytes of a class kept on its stack */
/* Blocks at least this large go through the large-block slot (glibc's largest mmap
 * threshold: from here on it maps fresh pages for every block). */
#define PC_BLOCK_LARGE_MIN (32u * 1024 * 1024)

typedef struct pc_block pc_block_t;

/* One size of block: its own given-back stack and stashes. */
typedef struct pc_block_class {
    _Atomic(pc_block_t *) returned; /* given back, any thread */
    atomic_size_t n_returned;       /* blocks on returned (may lag behind it) */
    /* The loop thread gives back a block per message and a sender takes one per message:
     * on one cache line, each would take the line from the other every time. */
    char apart[64];
    atomic_flag stash_held; /* senders other than the loop thread: the stash (a spin lock) */
    pc_block_t *stash;
    pc_block_t *loop_stash; /* the loop thread's own */
    size_t size;            /* of its blocks */
    size_t keep;            /* blocks kept on returned at most */
    char after[64];         /* apart from the next class's stack */
} pc_block_class_t;

typedef struct pc_block_pool {
    pc_block_class_t classes[PC_BLOCK_CLASSES];
    const uv_thread_t *loop_thread; /* NULL: none (every sender shares the stashes) */
    _Atomic(void *) large;          /* the kept large block, or NULL */
} pc_block_pool_t;

void pc_block_pool_init(pc_block_pool_t *p);
/* The loop thread (set before any send; filled in later is fine): its sends take no lock. */
void pc_block_pool_set_loop_thread(pc_block_pool_t *p, const uv_thread_t *loop_thread);
/* Free every kept block. No thread may use the pool any more. */
void pc_block_pool_destroy(pc_block_pool_t *p);
/* A block of class k (&p->classes[0]: PC_BLOCK_SMALL bytes, [1]: PC_BLOCK_POOL_SIZE),
 * recycled when one was given back; with k NULL, malloc(size). The caller picks the class
 * (whose size it charges). NULL when out of memory. */
void *pc_block_pool_get(pc_block_pool_t *p, pc_block_class_t *k, size_t size);
/* Give back a block pc_block_pool_get returned for class k, to k. */
void pc_block_pool_put(pc_block_class_t *k, void *block);
/* A block of size >= PC_BLOCK_LARGE_MIN bytes: the kept large block when it is big enough,
 * else a new one. NULL when out of memory. */
void *pc_block_pool_get_large(pc_block_pool_t *p, size_t size);
/* Give back a block from pc_block_pool_get_large: it is kept in place of the one kept
 * before, which is freed. */
void pc_block_pool_put_large(pc_block_pool_t *p, void *block);
/* Free the kept large block, if any. */
void pc_block_pool_trim(pc_block_pool_t *p);

#endif
