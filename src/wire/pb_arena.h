/* A protobuf-c allocator for decoding one command at a time: allocations come from a
 * block inside the arena and cost a pointer bump; what does not fit is malloc'ed and
 * listed. Nothing is freed singly: pc_pb_arena_reset releases everything at once, so a
 * decoded command needs no protobuf_c_message_free_unpacked walk (which visits every
 * field of BaseCommand's descriptor) and, for the common small commands, no malloc.
 * @locality one thread (the arena is not shared). */
#ifndef PC_PB_ARENA_H
#define PC_PB_ARENA_H

#include <stddef.h>

#include <protobuf-c/protobuf-c.h>

/* Room for a decoded SEND_RECEIPT or PONG with plenty to spare. */
#define PC_PB_ARENA_INLINE 4096

typedef struct pc_pb_arena {
    ProtobufCAllocator allocator; /* pass &arena->allocator to an unpack function */
    size_t used;
    void *overflow; /* malloc'ed blocks, linked through their first word */
    _Alignas(max_align_t) unsigned char block[PC_PB_ARENA_INLINE];
} pc_pb_arena_t;

void pc_pb_arena_init(pc_pb_arena_t *a);
/* Free every allocation made since init or the last reset; the arena stays usable. */
void pc_pb_arena_reset(pc_pb_arena_t *a);

#endif
