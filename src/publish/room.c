/* The room callback (pulsarc_room_cb): admission tells a producer whose send on the loop
 * thread found no room when there is some again, and the producer tells the application.
 * A producer without the callback gives admission none, and its refusals cost nothing
 * more. @locality loop thread, but pc_producer_room_init (at creation). */
#include "publish/producer.h"

static void tell(void *owner)
{
    pulsarc_producer_t *p = owner;
    if (p->free_requested || atomic_load(&p->state) != P_OPEN)
        return;
    p->conf.room_cb(p, p->conf.room_ctx);
}

void pc_producer_room_init(pulsarc_producer_t *p)
{
    if (!p->conf.room_cb)
        return;
    p->permits.room = tell;
    p->permits.room_owner = p;
}

void pc_producer_room_forget(pulsarc_producer_t *p)
{
    pc_admission_unwatch(&p->client->admission, &p->permits);
}
