#include "producer/message.h"

#include "producer/sealed.h"
#include "schema/schema.h"

void pc_msg_free(pc_msg_t *m)
{
    if (!m)
        return;
    if (m->free_cb)
        m->free_cb((void *)m->payload, m->payload_len, m->free_ctx);
    pc_schema_unref(m->schema);
    pc_sealed_free(m->sealed);
    m->release(m);
}
