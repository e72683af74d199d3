/* The public producer handle: admission (permits and memory), hand-over to the loop
 * thread, and the partition producers behind the handle. */
#ifndef PC_PRODUCER_H
#define PC_PRODUCER_H

#include "client/client.h"

/* @locality loop thread: fail and stop every producer (client shutdown). */
void pc_producers_shutdown(pulsarc_client_t *c);
/* After the loop thread ended: free the producer handles the user did not free. */
void pc_producers_free_all(pulsarc_client_t *c);

#endif
