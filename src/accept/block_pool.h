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
 * Blocks up to PC_BLOCK_POOL_SIZE bytes are pooled; at most PC_BLOCK_POOL_MAX wait to be
 * taken, and each stash holds no more than one such batch, so the pool keeps at most
 * 3 x 4096 x 512 bytes (6 MiB), and 4 MiB while only one of the loop thread and the other
 * senders sends.
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

#define PC_BLOCK_POOL_SIZE 512
#define PC_BLOCK_POOL_MAX 4096
/* Blocks at least this large go through the large-block slot (glibc's largest mmap
 * threshold: from here on it maps fresh pages for every block). */
#define PC_BLOCK_LARGE_MIN (32u * 1024 * 1024)

typedef struct pc_block pc_block_t;

typedef struct pc_block_pool {
    _Atomic(pc_block_t *) returned; /* given back, any thread */
    atomic_size_t n_returned;       /* blocks on returned (may lag behind it) */
    /* The loop thread gives back a block per message and a sender takes one per message:
     * on one cache line, each would take the line from the other every time. */
    char apart[64];
    atomic_flag stash_held; /* senders other than the loop thread: the stash (a spin lock) */
    pc_block_t *stash;
    pc_block_t *loop_stash;         /* the loop thread's own */
    const uv_thread_t *loop_thread; /* NULL: none (every sender shares the stash) */
    _Atomic(void *) large;          /* the kept large block, or NULL */
} pc_block_pool_t;

void pc_block_pool_init(pc_block_pool_t *p);
/* The loop thread (set before any send; filled in later is fine): its sends take no lock. */
void pc_block_pool_set_loop_thread(pc_block_pool_t *p, const uv_thread_t *loop_thread);
/* Free every kept block. No thread may use the pool any more. */
void pc_block_pool_destroy(pc_block_pool_t *p);
/* size bytes: a pooled block when p is set and size <= PC_BLOCK_POOL_SIZE (*pooled set
 * true), else malloc'ed. NULL when out of memory. */
void *pc_block_pool_get(pc_block_pool_t *p, size_t size, bool *pooled);
/* Give back a block pc_block_pool_get returned with *pooled true. */
void pc_block_pool_put(pc_block_pool_t *p, void *block);
/* A block of size >= PC_BLOCK_LARGE_MIN bytes: the kept large block when it is big enough,
 * else a new one. NULL when out of memory. */
void *pc_block_pool_get_large(pc_block_pool_t *p, size_t size);
/* Give back a block from pc_block_pool_get_large: it is kept in place of the one kept
 * before, which is freed. */
void pc_block_pool_put_large(pc_block_pool_t *p, void *block);
/* Free the kept large block, if any. */
void pc_block_pool_trim(pc_block_pool_t *p);

#endif
