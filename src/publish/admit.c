/* Undoing an admission (publish/admit.h). @locality any thread. */
#include "common/error.h"
#include "publish/admit.h"

void pc_producer_unadmit(pulsarc_producer_t *p, pc_send_t *s, pulsarc_message_t *b)
{
    pc_admission_release(&p->client->admission, &p->permits, 1, s->msg.charged);
    /* A borrowed payload goes back to the builder: a send takes it over only when
     * accepted. */
    if (s->msg.free_cb) {
        b->payload = s->msg.payload;
        b->payload_len = s->msg.payload_len;
        b->free_cb = s->msg.free_cb;
        b->free_ctx = s->msg.free_ctx;
        s->msg.free_cb = NULL;
    }
    pc_msg_free(&s->msg);
}
