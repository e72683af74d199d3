#include "producer/op.h"

#include <stdlib.h>

pc_op_t *pc_op_new(void)
{
    pc_op_t *op = calloc(1, sizeof *op);
    if (op) {
        pc_buf_init(&op->head);
        pc_buf_init(&op->compressed);
    }
    return op;
}

static void op_free(pc_op_t *op)
{
    pc_buf_free(&op->head);
    pc_buf_free(&op->compressed);
    free(op);
}

void pc_op_release(pc_op_t *op)
{
    op->done = true;
    op->msg = NULL;
    if (op->writes_in_flight == 0)
        op_free(op);
}

void pc_op_write_finished(pc_op_t *op)
{
    op->writes_in_flight--;
    if (op->done && op->writes_in_flight == 0)
        op_free(op);
}
