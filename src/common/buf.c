#include "common/buf.h"

#include <stdlib.h>
#include <string.h>

void pc_buf_init(pc_buf_t *b)
{
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
    b->fixed = false;
}

void pc_buf_init_fixed(pc_buf_t *b, uint8_t *space, size_t cap)
{
    b->data = space;
    b->len = 0;
    b->cap = cap;
    b->fixed = true;
}

void pc_buf_free(pc_buf_t *b)
{
    if (!b->fixed && b->data) /* most buffers freed on the send path were never used */
        free(b->data);
    pc_buf_init(b);
}

int pc_buf_reserve(pc_buf_t *b, size_t extra)
{
    if (extra > SIZE_MAX - b->len)
        return -1;
    size_t need = b->len + extra;
    if (need <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < need)
        cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    uint8_t *p = b->fixed ? malloc(cap) : realloc(b->data, cap);
    if (!p)
        return -1;
    if (b->fixed && b->len)
        memcpy(p, b->data, b->len);
    b->data = p;
    b->cap = cap;
    b->fixed = false;
    return 0;
}

int pc_buf_append(pc_buf_t *b, const void *data, size_t len)
{
    if (len == 0)
        return 0;
    if (pc_buf_reserve(b, len) != 0)
        return -1;
    memcpy(b->data + b->len, data, len);
    b->len += len;
    return 0;
}

int pc_buf_put_u32be(pc_buf_t *b, uint32_t v)
{
    uint8_t t[4];
    pc_write_u32be(t, v);
    return pc_buf_append(b, t, 4);
}

void pc_buf_consume(pc_buf_t *b, size_t n)
{
    if (n >= b->len) {
        b->len = 0;
        return;
    }
    memmove(b->data, b->data + n, b->len - n);
    b->len -= n;
}

uint8_t *pc_buf_detach(pc_buf_t *b, size_t *len)
{
    if (b->fixed && pc_buf_reserve(b, b->cap - b->len + 1) != 0) /* onto the heap first */
        return NULL;
    uint8_t *p = b->data;
    if (len)
        *len = b->len;
    pc_buf_init(b);
    return p;
}
