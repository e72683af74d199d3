/* The public producer handle: admission (permits and memory), hand-over to the loop
 * thread, and the partition producers behind the handle. */
#ifndef PC_PRODUCER_H
#define PC_PRODUCER_H

#include "client/client.h"

/* @locality loop thread: fail and stop every producer (client shutdown). The handles the
 * user has not freed stay valid, detached from the client, until pulsarc_producer_free. */
void pc_producers_shutdown(pulsarc_client_t *c);

#endif
