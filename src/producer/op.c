#include "producer/op.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "common/zero_record.h"

pc_op_t *pc_op_new(pc_freelist_t *cache)
{
    pc_op_t *op = cache ? pc_freelist_take(cache) : NULL;
    if (!op)
        op = malloc(sizeof *op);
    if (op) {
        pc_zero_record(op, offsetof(pc_op_t, head_space)); /* the head's space needs no zeros */
        op->cache = cache;
        pc_buf_init_fixed(&op->head, op->head_space, sizeof op->head_space);
        pc_buf_init(&op->owned);
        op->chunk_id = -1;
        op->num_messages = 1;
    }
    return op;
}

void pc_op_clear_head(pc_op_t *op)
{
    pc_buf_free(&op->head);
    pc_buf_init_fixed(&op->head, op->head_space, sizeof op->head_space);
}

static void op_free(pc_op_t *op)
{
    while (op->msgs) {
        pc_msg_t *m = op->msgs;
        op->msgs = m->next;
        pc_msg_free(m);
    }
    if (op->order) /* batches spread over many producers' messages only (records.h) */
        free(op->order);
    pc_buf_free(&op->head);
    pc_buf_free(&op->owned);
    pc_shared_payload_unref(op->shared);
    if (!op->cache || !pc_freelist_keep(op->cache, op))
        free(op);
}

void pc_op_release(pc_op_t *op)
{
    op->done = true;
    if (op->writes_in_flight == 0)
        op_free(op);
}

void pc_op_write_finished(pc_op_t *op)
{
    op->writes_in_flight--;
    if (op->done && op->writes_in_flight == 0)
        op_free(op);
}

pc_shared_payload_t *pc_shared_payload_new(void)
{
    pc_shared_payload_t *s = calloc(1, sizeof *s);
    if (s) {
        s->refs = 1;
        pc_buf_init(&s->buf);
    }
    return s;
}

void pc_shared_payload_unref(pc_shared_payload_t *s)
{
    if (s && --s->refs == 0) {
        pc_msg_free(s->msg);
        pc_buf_free(&s->buf);
        free(s);
    }
}
