/* A growable byte buffer. Knows nothing of the protocol. */
#ifndef PC_BUF_H
#define PC_BUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct pc_buf {
    uint8_t *data;
    size_t len;
    size_t cap;
    bool fixed; /* data is the owner's storage (pc_buf_init_fixed): never realloc'ed or
                   freed; growing past it moves the bytes to the heap */
} pc_buf_t;

void pc_buf_init(pc_buf_t *b);
/* Start in the owner's cap bytes at space (e.g. inside the struct that holds the buffer),
 * so that a small buffer costs no allocation. */
void pc_buf_init_fixed(pc_buf_t *b, uint8_t *space, size_t cap);
void pc_buf_free(pc_buf_t *b);
/* Make room for `extra` more bytes. Returns 0, or -1 when out of memory. */
int pc_buf_reserve(pc_buf_t *b, size_t extra);
int pc_buf_append(pc_buf_t *b, const void *data, size_t len);
int pc_buf_put_u32be(pc_buf_t *b, uint32_t v);
/* Drop the first n bytes, moving the rest to the front. */
void pc_buf_consume(pc_buf_t *b, size_t n);
/* Hand the memory to the caller (who frees it with free()); the buffer becomes empty. */
uint8_t *pc_buf_detach(pc_buf_t *b, size_t *len);

static inline void pc_write_u32be(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static inline uint32_t pc_read_u32be(const uint8_t *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | (uint32_t)p[3];
}

static inline uint16_t pc_read_u16be(const uint8_t *p)
{
    return (uint16_t)(((uint16_t)p[0] << 8) | p[1]);
}

#endif
