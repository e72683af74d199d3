/* Asking for a block of memory before it is read: a record handed from one thread to
 * another, or walked to long after it was written, has often left the caches. */
#ifndef PC_PREFETCH_H
#define PC_PREFETCH_H

/* Bytes pc_prefetch_block asks for: eight cache lines. */
#define PC_PREFETCH_BLOCK 512

/* Ask for the PC_PREFETCH_BLOCK bytes from p on, line by line, unrolled. A hint: it
 * changes no memory and reads nothing. Always inlined: GCC finds a function of prefetches
 * alone free of effects, and drops the calls to it that it has not inlined first. */
static inline __attribute__((always_inline)) void pc_prefetch_block(const void *p)
{
    const char *at = p;
#pragma GCC unroll 8
    for (int line = 0; line < PC_PREFETCH_BLOCK / 64; line++)
        __builtin_prefetch(at + line * 64);
}

#endif
